/* test_reservation.c - EASY backfill in the controller's state machine (reservation.c): the
 * running jobs' ends as jobs start and end, the reserved start a pending job shows, the jobs the
 * reservation holds back waiting "priority", and the wide job starting as reserved. */
#include "check_main.h"
#include "state.h"
#include <stdlib.h>
#include <string.h>

#define MiB ((int64_t)1 << 20)
#define SEC 1000000

static ctl_state st;
static char err[PROTO_ERRLEN];

static int no_persist(void *u, const job *j) {
        (void)u, (void)j;
        return 0;
}
static void no_launch(void *u, ctl_node *n, const job *j) { (void)u, (void)n, (void)j; }
static void no_cancel(void *u, ctl_node *n, const job *j, int g) { (void)u, (void)n, (void)j, (void)g; }
static void no_end(void *u, const job *j) { (void)u, (void)j; }
static const ctl_actions actions = { no_persist, no_launch, no_cancel, no_end, NULL, NULL, NULL };

static void setup(void) {
        ctl_config cfg = { .policy = SCHED_FIRST_FIT,
                           .order = SCHED_BACKFILL,
                           .max_pending = 100,
                           .agent_timeout_usec = 5 * SEC,
                           .node_lost_timeout_usec = 5 * SEC };
        ctl_init(&st, &cfg, &actions, NULL);
}

static void teardown(void) { ctl_free(&st); }

/* A job of group (or none) of mcpu milli-cores and that time limit, submitted at now. */
static job *submit_in(const char *group, int64_t mcpu, int64_t limit, int64_t now) {
        job_spec spec = { .argv = calloc(2, sizeof(char *)),
                          .cwd = strdup("/tmp"),
                          .name = strdup("j"),
                          .req = { .mcpu = mcpu, .mem = MiB },
                          .time_limit_usec = limit,
                          .group = group ? strdup(group) : NULL };
        spec.argv[0] = strdup("/bin/true");
        uint64_t id = 0;
        ck_assert_int_eq(ctl_submit(&st, 1000, 1000, "u", &spec, now, &id, err), 0);
        job_spec_free(&spec);
        return ctl_find_job(&st, id);
}

static job *submit(int64_t mcpu, int64_t limit, int64_t now) { return submit_in(NULL, mcpu, limit, now); }

static void pass_at(int64_t now) {
        ctl_wait_tick(&st, now);
        ck_assert_int_ge(ctl_schedule(&st), 0);
}

static void finish(ctl_node *n, job *j, int64_t now) {
        job_result res = { 0 };
        ck_assert_int_eq(ctl_job_finished(&st, n, j->id, JOB_COMPLETED, &res, now), 0);
}

START_TEST(the_wide_job_starts_as_reserved) {
        ctl_node *n = NULL;
        ck_assert_int_eq(ctl_node_up(&st, "a", (res_t){ .mcpu = 2000, .mem = 1024 * MiB }, "v1", "/x", NULL, 0,
                                     (void *)1, (ctl_time){ 0 }, &n, err),
                         0);
        int64_t t0 = 1000 * (int64_t)SEC;
        job *first = submit(1000, 100 * SEC, t0);
        pass_at(t0);
        ck_assert_int_eq(first->state, JOB_RUNNING);
        ck_assert_int_eq(ctl_job_started(&st, n, first->id, t0 + SEC), 0); /* the agent's stamp */
        job *wide = submit(2000, 10 * SEC, t0 + 2 * SEC), *narrow = submit(1000, 200 * SEC, t0 + 2 * SEC);
        pass_at(t0 + 2 * SEC);
        ck_assert_int_eq(narrow->state, JOB_PENDING); /* it fits, but would delay the wide job */
        ck_assert_int_eq(narrow->wait, JOB_WAIT_PRIORITY);
        ck_assert_int_eq(wide->wait, JOB_WAIT_RESOURCES);
        ck_assert_int_eq(wide->reserved_start_usec, t0 + 101 * SEC); /* first's start + its limit */
        job *shorter = submit(1000, 50 * SEC, t0 + 2 * SEC);
        pass_at(t0 + 2 * SEC);
        ck_assert_int_eq(shorter->state, JOB_RUNNING);      /* ends by t0 + 52 s, before the reserved start */
        ck_assert_int_eq(narrow->wait, JOB_WAIT_RESOURCES); /* no room left now */
        ck_assert_uint_eq(st.nrun, 2);
        finish(n, shorter, t0 + 30 * SEC); /* a CPU free again: still only beside nothing */
        pass_at(t0 + 30 * SEC);
        ck_assert_int_eq(narrow->state, JOB_PENDING);
        ck_assert_int_eq(wide->reserved_start_usec, t0 + 101 * SEC);
        finish(n, first, t0 + 60 * SEC); /* ended early: the reservation comes forward */
        pass_at(t0 + 60 * SEC);
        ck_assert_int_eq(wide->state, JOB_RUNNING);
        ck_assert_int_eq(narrow->state, JOB_PENDING);
        ck_assert_int_eq(narrow->reserved_start_usec, t0 + 70 * SEC); /* the wide job's end, from now */
        ck_assert_int_eq(wide->reserved_start_usec, 0);
        ck_assert_uint_eq(st.nrun, 1);
        ck_assert_ptr_eq(st.run_jobs[0], wide);
}
END_TEST

/* A running job without a limit: the reserved start is unknown, jobs with limits still go. */
START_TEST(a_job_without_a_limit_holds_the_node) {
        ctl_node *n = NULL;
        ck_assert_int_eq(ctl_node_up(&st, "a", (res_t){ .mcpu = 2000, .mem = 1024 * MiB }, "v1", "/x", NULL, 0,
                                     (void *)1, (ctl_time){ 0 }, &n, err),
                         0);
        int64_t t0 = 1000 * (int64_t)SEC;
        job *forever = submit(1000, 0, t0);
        pass_at(t0);
        job *wide = submit(2000, 10 * SEC, t0), *unlimited = submit(1000, 0, t0), *limited = submit(1000, SEC, t0);
        pass_at(t0 + SEC);
        ck_assert_int_eq(forever->state, JOB_RUNNING);
        ck_assert_int_eq(wide->reserved_start_usec, JOB_RESERVED_UNKNOWN);
        ck_assert_int_eq(unlimited->state, JOB_PENDING);
        ck_assert_int_eq(limited->state, JOB_RUNNING);
}
END_TEST

/* With departments the reservation goes to the first job of the fair order, not of submission:
 * b runs nothing, so its wide job comes before a's, submitted earlier. */
START_TEST(the_reservation_follows_the_fair_order) {
        dept v[] = { { .path = "a", .weight = 1, .cap = 1, .leaf = true },
                     { .path = "b", .weight = 1, .cap = 1, .leaf = true } };
        depts d = { .v = v, .n = 2 };
        st.cfg.depts = &d;
        ck_assert_int_eq(ctl_set_depts(&st, FAIR_DEFAULT), 0);
        ctl_node *n = NULL;
        ck_assert_int_eq(ctl_node_up(&st, "a", (res_t){ .mcpu = 2000, .mem = 1024 * MiB }, "v1", "/x", NULL, 0,
                                     (void *)1, (ctl_time){ 0 }, &n, err),
                         0);
        int64_t t0 = 1000 * (int64_t)SEC;
        job *running = submit_in("a", 1000, 100 * SEC, t0);
        pass_at(t0);
        ck_assert_int_eq(running->state, JOB_RUNNING);
        job *wide_a = submit_in("a", 2000, 10 * SEC, t0), *wide_b = submit_in("b", 2000, 10 * SEC, t0);
        pass_at(t0);
        ck_assert_int_eq(wide_a->reserved_start_usec, 0);
        ck_assert_int_eq(wide_b->reserved_start_usec, t0 + 100 * SEC);
        ctl_free(&st); /* before d goes out of scope */
        setup();
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("reservation");
        TCase *tc = tcase_create("core");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, the_wide_job_starts_as_reserved);
        tcase_add_test(tc, a_job_without_a_limit_holds_the_node);
        tcase_add_test(tc, the_reservation_follows_the_fair_order);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(suite)
