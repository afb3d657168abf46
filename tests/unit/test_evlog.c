/* test_evlog.c - the core reports its transitions through its hooks, and the daemon's lines
 * (evlog.c) are the ones users and tests grep. A recording ctl_actions keeps, in order, each
 * report as "E|line" (an event: stored, sent to subscribers) or "L|line" (the log's alone). */
#include "check_main.h"
#include "ctl_noop.h"
#include "evlog.h"
#include "log.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

#define MiB ((int64_t)1 << 20)

static ctl_state st;
static char err[PROTO_ERRLEN];
static char lines[8192];
static int warnings;

static void record(const ctl_event *e, char kind) {
        char line[1024];
        int prio = evlog_format(&st, e, line, sizeof(line));
        ck_assert_msg(prio >= 0, "no line for %s", e->what);
        warnings += prio == LOG_WARNING;
        size_t len = strlen(lines);
        snprintf(lines + len, sizeof(lines) - len, "%c|%s\n", kind, line);
}

static void on_event(void *u, const ctl_event *e) {
        (void)u;
        record(e, 'E');
}

static void on_log(void *u, const ctl_event *e) {
        (void)u;
        record(e, 'L');
}

static ctl_actions actions; /* ctl_noop_actions with the two hooks recorded */

static void setup(void) {
        lines[0] = '\0';
        warnings = 0;
        actions = ctl_noop_actions;
        actions.event = on_event;
        actions.log = on_log;
        ctl_config cfg = { .policy = SCHED_FIRST_FIT,
                           .order = SCHED_STRICT_FIFO,
                           .max_pending = 100,
                           .kill_grace_ms = 100,
                           .agent_timeout_usec = 5000000,
                           .node_lost_timeout_usec = 5000000 };
        ctl_init(&st, &cfg, &actions, NULL);
}

static void teardown(void) { ctl_free(&st); }

static uint64_t submit(const char *name, bool requeue) {
        job_spec spec = { .argv = calloc(2, sizeof(char *)),
                          .cwd = strdup("/tmp"),
                          .name = strdup(name),
                          .req = { .mcpu = 500, .mem = MiB },
                          .requeue = requeue };
        spec.argv[0] = strdup("/bin/true");
        uint64_t id = 0;
        ck_assert_int_eq(ctl_submit(&st, 1000, 1000, "u", &spec, 1000, &id, err), 0);
        job_spec_free(&spec);
        return id;
}

static ctl_node *node_up(void) {
        ctl_node *n = NULL;
        ck_assert_int_eq(ctl_node_up(&st, "a", (res_t){ .mcpu = 1000, .mem = 64 * MiB }, "v1", "/x", NULL, 0, (void *)1,
                                     (ctl_time){ .real_usec = 1000, .mono_usec = 1000 }, &n, err),
                         0);
        return n;
}

/* Node a up, and a job submitted and placed there; *n is the node. Returns the job's id. */
static uint64_t placed(const char *name, bool requeue, ctl_node **n) {
        *n = node_up();
        uint64_t id = submit(name, requeue);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        return id;
}

/* Check that the lines recorded since *from are exactly want, and move *from past them. */
static void expect(size_t *from, const char *want) {
        ck_assert_str_eq(lines + *from, want);
        *from = strlen(lines);
}

START_TEST(a_jobs_life_is_one_event_and_one_line_a_step) {
        size_t at = 0;
        ctl_node *n = node_up();
        expect(&at, "E|node=a state=up mcpu=1000 mem=67108864 cgroup=v1:/x reason=running 0, not confirmed 0, "
                    "strays to stop 0\n");
        uint64_t id = submit("j", false);
        ck_assert_uint_eq(id, 1);
        expect(&at, "E|job=1 user=u state=pending reason=submitted name=j\n");
        ck_assert_int_eq(ctl_schedule(&st), 1);
        expect(&at, "E|job=1 node=a state=running reason=placed policy=first-fit attempt=1\n");
        ck_assert_int_eq(ctl_job_started(&st, n, id, 1500), 0);
        expect(&at, "E|job=1 node=a started\n");
        job_result res = { 0 };
        ck_assert_int_eq(ctl_job_finished(&st, n, id, JOB_COMPLETED, &res, 2000), 0);
        expect(&at, "E|job=1 node=a state=completed\n");
        ck_assert_int_eq(warnings, 0);
}
END_TEST

START_TEST(a_lost_node_requeues_its_job_with_a_warning) {
        ctl_node *n;
        uint64_t id = placed("rq", true, &n);
        size_t at = strlen(lines);
        ctl_node_down(&st, n, "timed out", 3000);
        ck_assert_ptr_nonnull(strstr(lines + at, "E|node=a state=down reason=agent a timed out\n"));
        char want[128];
        snprintf(want, sizeof(want), "E|job=%llu node=a state=pending reason=attempt 1 requeued: agent a timed out\n",
                 (unsigned long long)id);
        ck_assert_ptr_nonnull(strstr(lines + at, want));
        ck_assert_int_eq(warnings, 1); /* the node's; the job's line is news, not trouble */
}
END_TEST

START_TEST(cancels_holds_and_drains_are_logged_the_log_only_ones_apart) {
        ctl_node *n;
        uint64_t run = placed("r", false, &n);
        ck_assert_int_eq(ctl_node_drain(&st, "a", "maint", &n), 0);
        size_t at = strlen(lines);
        uint64_t wait = submit("w", false);
        ck_assert_int_eq(ctl_hold(&st, wait, 1000, true, err), 0);
        ck_assert_int_eq(ctl_hold(&st, wait, 0, false, err), 0);
        ck_assert_int_eq(ctl_cancel(&st, run, 1000, 2500, err), 0);
        ck_assert_int_eq(ctl_cancel(&st, wait, 1000, 2600, err), 0);
        ck_assert_int_eq(ctl_node_resume(&st, n), 0);
        expect(&at, "E|job=2 user=u state=pending reason=submitted name=w\n"
                    "E|job=2 held uid=1000\n"
                    "E|job=2 released uid=0\n"
                    "L|job=1 node=a cancel requested uid=1000\n"
                    "E|job=2 node=- state=cancelled\n"
                    "L|node=a resumed\n");
        ck_assert_ptr_nonnull(strstr(lines, "L|node=a drained reason=maint running=1\n"));
        ck_assert_uint_eq(run, 1);
}
END_TEST

static char logged[4096];

static void log_keep(int priority, const char *ident, const char *text) {
        (void)priority, (void)ident;
        size_t len = strlen(logged);
        snprintf(logged + len, sizeof(logged) - len, "%s|", text);
}

/* A job's name is the user's text: its control bytes reach the log escaped, never raw, so that
 * a newline cannot forge a line nor an escape sequence rewrite the reader's terminal. */
START_TEST(a_jobs_name_is_logged_with_its_control_bytes_escaped) {
        uint64_t id = submit("\033[2Jred\nstate=forged\x9b", false);
        logged[0] = '\0';
        log_open("test_evlog", log_keep, LOG_INFO);
        evlog_write(&st, &(ctl_event){ .job_id = id, .what = "submitted", .job = ctl_find_job(&st, id) });
        log_open("test_evlog", NULL, LOG_INFO);
        ck_assert_msg(strstr(logged, "reason=submitted name=\\x1b[2Jred\\nstate=forged\\x9b|") != NULL, "logged: %s",
                      logged);
        ck_assert_ptr_null(strpbrk(logged, "\033\n\x9b"));
}
END_TEST

/* A kind the daemon knows no line for writes none, rather than a line that would mislead. */
START_TEST(an_unknown_kind_has_no_line) {
        char line[64] = "x";
        ck_assert_int_eq(evlog_format(&st, &(ctl_event){ .job_id = 3, .what = "gone-fishing" }, line, sizeof(line)),
                         -ENOENT);
        ck_assert_str_eq(line, "");
}
END_TEST

static Suite *evlog_suite(void) {
        Suite *s = suite_create("evlog");
        TCase *tc = tcase_create("core");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, a_jobs_life_is_one_event_and_one_line_a_step);
        tcase_add_test(tc, a_lost_node_requeues_its_job_with_a_warning);
        tcase_add_test(tc, cancels_holds_and_drains_are_logged_the_log_only_ones_apart);
        tcase_add_test(tc, a_jobs_name_is_logged_with_its_control_bytes_escaped);
        tcase_add_test(tc, an_unknown_kind_has_no_line);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(evlog_suite)
