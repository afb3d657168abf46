/* test_state.c - the controller's state machine, driven with plain structs and recorded actions. */
#include "check_main.h"
#include "rng.h"
#include "state.h"
#include "arrays.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define MiB ((int64_t)1 << 20)

typedef struct recorder {
        int persisted, launched, cancelled, ended, dropped;
        void *dropped_link;
        uint64_t launch_ids[64];
        char launch_nodes[64][16];
        uint64_t ended_ids[64];
        int fail_persist;
        int fail_persist_at;    /* fail the persist() call that would be this many-th (from 1) */
        int persisted_with_env; /* persist() calls of a job holding its environment */
        int events;
        char event_log[2048];          /* "what:job:node " for each event, in order */
        int persisted_after_job_event; /* persist() calls that came right after a job's event */
        bool job_event_unpersisted;
} recorder;

static int rec_persist(void *u, const job *j) {
        recorder *r = u;
        r->persisted++;
        r->persisted_with_env += j->spec.env != NULL;
        r->persisted_after_job_event += r->job_event_unpersisted;
        r->job_event_unpersisted = false;
        return r->fail_persist || r->persisted == r->fail_persist_at ? -EIO : 0;
}

#define RECORDED(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* Every launch is counted; the first RECORDED(launch_ids) are kept. */
static void rec_launch(void *u, ctl_node *n, const job *j) {
        recorder *r = u;
        if (r->launched < RECORDED(r->launch_ids)) {
                r->launch_ids[r->launched] = j->id;
                snprintf(r->launch_nodes[r->launched], 16, "%s", n->name);
        }
        r->launched++;
}

static void rec_cancel(void *u, ctl_node *n, const job *j, int grace_ms) {
        (void)n, (void)j, (void)grace_ms;
        ((recorder *)u)->cancelled++;
}

static void rec_ended(void *u, const job *j) {
        recorder *r = u;
        if (r->ended < RECORDED(r->ended_ids))
                r->ended_ids[r->ended] = j->id;
        r->ended++;
}

static void rec_drop(void *u, ctl_node *n, void *link) {
        recorder *r = u;
        (void)n;
        r->dropped++;
        r->dropped_link = link;
}

static void rec_event(void *u, const ctl_event *e) {
        recorder *r = u;
        size_t len = strlen(r->event_log);
        ck_assert(!r->job_event_unpersisted); /* a job's event is stored with its job before the next */
        r->job_event_unpersisted = e->job_id != 0;
        r->events++;
        snprintf(r->event_log + len, sizeof(r->event_log) - len, "%s:%llu:%s ", e->what, (unsigned long long)e->job_id,
                 e->node ? e->node : "-");
}

static void check_indexes(void);

static const ctl_actions actions = { rec_persist, rec_launch, rec_cancel, rec_ended, rec_drop, rec_event, NULL };
static ctl_state st;
static recorder rec;
static char err[PROTO_ERRLEN];

/* The same instant on both clocks. */
static ctl_time at(int64_t usec) { return (ctl_time){ .real_usec = usec, .mono_usec = usec }; }

static void setup(void) {
        memset(&rec, 0, sizeof(rec));
        ctl_config cfg = { .policy = SCHED_FIRST_FIT,
                           .order = SCHED_STRICT_FIFO,
                           .max_pending = 100,
                           .kill_grace_ms = 100,
                           .agent_timeout_usec = 5000000,
                           .node_lost_timeout_usec = 5000000 };
        ctl_init(&st, &cfg, &actions, &rec);
}

static void teardown(void) { ctl_free(&st); }

static uint64_t submit_as(uid_t uid, int64_t mcpu, int64_t mem) {
        job_spec spec = { .argv = calloc(2, sizeof(char *)),
                          .cwd = strdup("/tmp"),
                          .name = strdup("j"),
                          .req = { .mcpu = mcpu, .mem = mem } };
        spec.argv[0] = strdup("/bin/true");
        uint64_t id = 0;
        int r = ctl_submit(&st, uid, uid, "u", &spec, 1000, &id, err);
        job_spec_free(&spec);
        return r < 0 ? 0 : id;
}

static ctl_node *node(const char *name, int64_t mcpu, int64_t mem, const uint64_t *running, size_t n) {
        ctl_node *out = NULL;
        ck_assert_int_eq(ctl_node_up(&st, name, (res_t){ .mcpu = mcpu, .mem = mem }, "v1", "/x", running, n, (void *)1,
                                     at(1000), &out, err),
                         0);
        return out;
}

/* Submit spec as uid, /bin/true in /tmp named "rq" (its other fields the caller's, strings
 * allocated); its id. */
static uint64_t submit_spec_as(uid_t uid, job_spec spec) {
        spec.argv = calloc(2, sizeof(char *));
        spec.argv[0] = strdup("/bin/true");
        spec.cwd = strdup("/tmp");
        spec.name = strdup("rq");
        uint64_t id = 0;
        ck_assert_int_eq(ctl_submit(&st, uid, uid, "u", &spec, 1000, &id, err), 0);
        job_spec_free(&spec);
        return id;
}

/* The same as root. */
static uint64_t submit_spec(job_spec spec) { return submit_spec_as(0, spec); }

/* A job of group (NULL: none) asking mcpu, which its node's loss requeues when requeue is set;
 * its id. */
static uint64_t submit_to(const char *group, int64_t mcpu, bool requeue) {
        return submit_spec((job_spec){
                .group = group ? strdup(group) : NULL, .req = { .mcpu = mcpu, .mem = MiB }, .requeue = requeue });
}

static uint64_t submit_requeue(int64_t mcpu) { return submit_to(NULL, mcpu, true); }

static void finish_ok(ctl_node *n, uint64_t id) {
        job_result res = { 0 };
        ck_assert_int_eq(ctl_job_finished(&st, n, id, JOB_COMPLETED, &res, 2000), 0);
}

START_TEST(jobs_start_in_submission_order_as_capacity_frees) {
        ctl_node *n = node("a", 1000, 1024 * MiB, NULL, 0);
        uint64_t ids[4];
        for (int i = 0; i < 4; i++)
                ids[i] = submit_as(1000, 500, 64 * MiB);
        ck_assert_int_eq(ctl_schedule(&st), 2);
        ck_assert_uint_eq(rec.launch_ids[0], ids[0]);
        ck_assert_uint_eq(rec.launch_ids[1], ids[1]);
        ck_assert_int_eq(ctl_find_job(&st, ids[2])->state, JOB_PENDING);
        ck_assert_uint_eq(st.npending, 2);

        finish_ok(n, ids[1]);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[2], ids[2]);
        ck_assert_int_eq(n->used.mcpu, 1000);
        ck_assert_uint_eq(rec.ended_ids[0], ids[1]);
        ck_assert_uint_eq(st.npending, 1);
}
END_TEST

/* Max-Jobs keeps the heuristic that places most of the pass's whole list: First-Fit and
 * Best-Fit-cores both place the first 16 small jobs, but only Best-Fit leaves the large node
 * empty for the 17th. A pass that offered 16 jobs at a time would keep First-Fit's (the first
 * of a tie) and start 16. */
START_TEST(max_jobs_chooses_over_the_whole_queue) {
        st.cfg.policy = SCHED_MAX_JOBS;
        node("large", 32000, 32768 * MiB, NULL, 0);
        node("small", 16000, 16384 * MiB, NULL, 0);
        for (int i = 0; i < 16; i++)
                ck_assert_uint_ne(submit_as(1000, 1000, 64 * MiB), 0);
        uint64_t large = submit_as(1000, 32000, 64 * MiB);
        ck_assert_int_eq(ctl_schedule(&st), 17);
        ck_assert_int_eq(ctl_find_job(&st, large)->state, JOB_RUNNING);
        ck_assert_str_eq(ctl_find_job(&st, large)->node, "large");
}
END_TEST

/* EASY stops reading the queue where nothing as small as the least pending request fits: an
 * update that makes a job behind the reserved one smaller than every other lets the next pass
 * read it and start it on the node the reservation leaves free. */
START_TEST(easy_reads_as_far_as_a_request_made_smaller) {
        st.cfg.order = SCHED_BACKFILL;
        node("n1", 1000, 1024 * MiB, NULL, 0);
        node("n2", 200, 1024 * MiB, NULL, 0);
        uint64_t a = submit_as(1000, 900, 64 * MiB);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        uint64_t wide = submit_as(1000, 1000, 64 * MiB), c = submit_as(1000, 500, 64 * MiB);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_uint_eq(st.reserved_id, wide);
        ctl_update_req u = { .mcpu = 100, .mem = -1, .nice = INT_MIN, .time_limit_usec = INT64_MIN, .gpus = -1 };
        ck_assert_int_eq(ctl_update(&st, c, 1000, &u, err), 0);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_str_eq(ctl_find_job(&st, c)->node, "n2");
        ck_assert_int_eq(ctl_find_job(&st, a)->state, JOB_RUNNING);
}
END_TEST

START_TEST(impossible_requests_are_refused_once_a_node_is_known) {
        ck_assert_uint_ne(submit_as(0, 100000000, MiB), 0); /* no node yet: accepted, waits */
        node("a", 2000, 1024 * MiB, NULL, 0);
        ck_assert_uint_eq(submit_as(0, 100000000, MiB), 0);
        ck_assert_ptr_nonnull(strstr(err, "no node has 100000 CPUs (largest: 2)"));
        ck_assert_uint_eq(submit_as(0, 1000, 4096 * MiB), 0);
        ck_assert_ptr_nonnull(strstr(err, "memory"));
        ck_assert_uint_eq(st.njobs, 1);
}
END_TEST

START_TEST(a_failed_write_refuses_the_submission) {
        rec.fail_persist = 1;
        ck_assert_uint_eq(submit_as(0, 100, MiB), 0);
        ck_assert_ptr_nonnull(strstr(err, "could not record"));
        ck_assert_uint_eq(st.njobs, 0);
        ck_assert_uint_eq(st.npending, 0);
}
END_TEST

/* Strings that outlive the jobs, as the simulator's: static arrays, so that a job that freed one
 * would abort the test in free(). */
static char borrowed_user[] = "sim", borrowed_cwd[] = "/", borrowed_out[] = "/dev/null", borrowed_type[] = "batch";
static char *borrowed_argv[] = { NULL };

/* The spec of a job asking for mcpu whose strings are the static ones above (stdout_path
 * included unless !with_out). */
static job_spec borrowed_spec(int64_t mcpu, bool with_out) {
        return (job_spec){ .argv = borrowed_argv,
                           .cwd = borrowed_cwd,
                           .stdout_path = with_out ? borrowed_out : NULL,
                           .job_type = borrowed_type,
                           .req = { .mcpu = mcpu, .mem = MiB },
                           .expected_usec = 7 };
}

START_TEST(a_borrowing_submission_keeps_the_callers_strings_and_the_normal_path_owns_its_copies) {
        st.cfg.default_time_usec = 60000000;
        job_spec spec = borrowed_spec(100, true);
        uint64_t id = 0, own = 0;
        ck_assert_int_eq(ctl_submit_borrowing(&st, 0, 0, borrowed_user, &spec, 1000, &id, err), 0);
        const job *j = ctl_find_job(&st, id);
        ck_assert(j->borrows_spec && j->borrows_stdout);
        ck_assert_ptr_eq(j->user, borrowed_user); /* not copies */
        ck_assert_ptr_eq(j->spec.cwd, borrowed_cwd);
        ck_assert_ptr_eq(j->spec.argv, borrowed_argv);
        ck_assert_ptr_eq(j->spec.stdout_path, borrowed_out);
        ck_assert_ptr_eq(j->spec.job_type, borrowed_type);
        ck_assert_int_eq(j->spec.req.mcpu, 100); /* its numbers its own */
        ck_assert_int_eq(j->spec.expected_usec, 7);
        ck_assert_int_eq(j->spec.time_limit_usec, 60000000);
        ck_assert_int_eq(spec.time_limit_usec, 0); /* the caller's spec left as it was */
        ck_assert_ptr_eq(spec.cwd, borrowed_cwd);
        /* without an output path, the job makes its own, and frees it */
        job_spec no_out = borrowed_spec(100, false);
        uint64_t second = 0;
        ck_assert_int_eq(ctl_submit_borrowing(&st, 0, 0, borrowed_user, &no_out, 1000, &second, err), 0);
        ck_assert(ctl_find_job(&st, second)->borrows_spec && !ctl_find_job(&st, second)->borrows_stdout);
        ck_assert_str_eq(ctl_find_job(&st, second)->spec.stdout_path, "/colony-2.out");
        /* the normal path takes the spec's strings and copies the user */
        own = submit_as(0, 100, MiB);
        const job *o = ctl_find_job(&st, own);
        ck_assert(!o->borrows_spec && !o->borrows_stdout);
        ck_assert_ptr_ne(o->user, borrowed_user);
        ck_assert_str_eq(o->user, "u");
        /* refused, or its write failed: nothing of the caller's freed */
        ctl_node *n = node("a", 1000, 1024 * MiB, NULL, 0);
        job_spec huge = borrowed_spec(100000, true);
        uint64_t none = 0;
        ck_assert_int_eq(ctl_submit_borrowing(&st, 0, 0, borrowed_user, &huge, 1000, &none, err), -E2BIG);
        rec.fail_persist = 1;
        ck_assert_int_eq(ctl_submit_borrowing(&st, 0, 0, borrowed_user, &spec, 1000, &none, err), -EIO);
        rec.fail_persist = 0;
        ck_assert_uint_eq(st.njobs, 3);
        /* run and forget them, as the simulator does: the borrowed strings stay, the rest is freed */
        ck_assert_int_eq(ctl_schedule(&st), 3);
        finish_ok(n, id);
        finish_ok(n, second);
        finish_ok(n, own);
        ctl_forget_ended(&st);
        ck_assert_ptr_null(ctl_find_job(&st, id));
        ck_assert_str_eq(borrowed_user, "sim");
        ck_assert_str_eq(borrowed_cwd, "/");
        ck_assert_ptr_null(borrowed_argv[0]);
}
END_TEST

/* Submit an array of count jobs of spec with environment HOME=/home/u. Returns its first id, 0
 * when refused. */
static uint64_t submit_array_with(size_t count, int64_t mcpu, int nice, uint32_t throttle) {
        job_spec spec = { .argv = calloc(3, sizeof(char *)),
                          .env = calloc(2, sizeof(char *)),
                          .cwd = strdup("/tmp"),
                          .name = strdup("arr"),
                          .req = { .mcpu = mcpu, .mem = MiB },
                          .nice = nice,
                          .array_throttle = throttle };
        spec.argv[0] = strdup("/bin/echo");
        spec.argv[1] = strdup("x");
        spec.env[0] = strdup("HOME=/home/u");
        uint64_t first = 0;
        int r = ctl_submit_array(&st, 1000, 1000, "u", &spec, count, NULL, 1000, &first, err);
        job_spec_free(&spec);
        return r < 0 ? 0 : first;
}

static uint64_t submit_array(size_t count, int64_t mcpu) { return submit_array_with(count, mcpu, 0, 0); }

/* Cancel the first slice of the array of first (ARRAY_WINDOW tasks, from its owner), then run a
 * pass during which its record cannot store its next tasks (a failed write): that pass reads
 * the queue without any of the array's tasks. */
static void cancel_slice_and_pass_without_it(uint64_t first) {
        for (uint64_t id = first; id < first + ARRAY_WINDOW; id++)
                ck_assert_int_eq(ctl_cancel(&st, id, 1000, 1500, err), 0);
        rec.fail_persist = 1;
        ck_assert_int_eq(ctl_schedule(&st), 0);
        rec.fail_persist = 0;
}

/* EASY on n1 (1 CPU) and n2 (0.2), a job of 0.9 CPU running on n1 and a job of 1 CPU reserved
 * behind it: what is smaller than 0.2 CPU may start on n2. */
static void easy_with_a_wide_job_reserved(void) {
        st.cfg.order = SCHED_BACKFILL;
        st.cfg.max_pending = 1000;
        node("n1", 1000, 1024 * MiB, NULL, 0);
        node("n2", 200, 1024 * MiB, NULL, 0);
        (void)submit_as(1000, 900, 64 * MiB);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        uint64_t wide = submit_as(1000, 1000, 64 * MiB);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_uint_eq(st.reserved_id, wide);
}

/* The same for an array's tasks, its first slice made at once and the rest from its record
 * (arrec.c) as the pass takes them: they join the queue smaller than the reserved job, and the
 * pass reads them. */
START_TEST(easy_reads_the_tasks_of_an_arrays_record) {
        easy_with_a_wide_job_reserved();
        uint64_t first = submit_array(ARRAY_WINDOW + 44, 100);
        ck_assert_uint_ne(first, 0);
        ck_assert_uint_gt(st.narecs, 0); /* its tasks are made from its record */
        ck_assert_int_eq(ctl_schedule(&st), 2);
        ck_assert_str_eq(ctl_find_job(&st, first)->node, "n2");
}
END_TEST

/* The record makes tasks after a pass found the least request again without them: their
 * request lowers it as they join the queue (arec_queue), or the next pass would stop at the
 * reserved job, as if nothing behind it could fit. */
START_TEST(easy_reads_tasks_an_arrays_record_makes_after_the_floor_rose) {
        easy_with_a_wide_job_reserved();
        uint64_t first = submit_array(ARRAY_WINDOW + 44, 100);
        ck_assert_uint_ne(first, 0);
        cancel_slice_and_pass_without_it(first);
        ck_assert_int_eq(st.pending_floor.mcpu, 1000); /* found again from wide alone */
        ck_assert_int_eq(ctl_schedule(&st), 2);
        ck_assert_str_eq(ctl_find_job(&st, first + ARRAY_WINDOW)->node, "n2");
}
END_TEST

/* On n1 (1 CPU) taken by a job: an array of ARRAY_WINDOW + 44 tasks (mcpu, nice, throttle) and a
 * plain job of its user behind it, the array's first slice cancelled and a pass made without any
 * of its tasks, which forgets nice values and throttles; then the job on n1 ends, and the next
 * pass's tasks are made from the record. Returns the plain job's id. */
static uint64_t array_back_after_a_pass_without_it(int64_t mcpu, int nice, uint32_t throttle) {
        st.cfg.max_pending = 1000;
        ctl_node *n = node("n1", 1000, 1024 * MiB, NULL, 0);
        uint64_t big = submit_as(1000, 1000, 64 * MiB);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        uint64_t first = submit_array_with(ARRAY_WINDOW + 44, mcpu, nice, throttle);
        ck_assert_uint_ne(first, 0);
        uint64_t plain = submit_as(1000, 1000, 64 * MiB);
        cancel_slice_and_pass_without_it(first);
        ck_assert(!st.npending_nice && !st.throttle_seen);
        finish_ok(n, big);
        return plain;
}

/* The same for a nice value: the tasks a record makes with one make passes order their user's
 * jobs by it again (st->npending_nice), so that the user's job of nice 0 goes first. */
START_TEST(tasks_an_arrays_record_makes_with_a_nice_value_order_their_users_jobs) {
        uint64_t plain = array_back_after_a_pass_without_it(1000, 10, 0);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert(st.npending_nice);
        ck_assert_uint_eq(rec.launch_ids[rec.launched - 1], plain);
}
END_TEST

/* The jobs of a_nice_order_... tests: enough that a pass reading them all shows. */
#define NICE_CASE_JOBS 20000

/* A nice order's test in order (strict FIFO, EASY, reserve) on node "a" of mcpu. */
static ctl_node *nice_case(int order, int64_t mcpu) {
        st.cfg.order = (sched_order)order;
        st.cfg.max_pending = 2 * NICE_CASE_JOBS;
        return node("a", mcpu, 1024 * MiB, NULL, 0);
}

/* NICE_CASE_JOBS jobs of one CPU, of users 1000 and 1001 in turn, into ids. */
static void submit_in_turns(uint64_t *ids) {
        for (size_t i = 0; i < NICE_CASE_JOBS; i++)
                ids[i] = submit_as(1000 + (uid_t)(i % 2), 1000, MiB);
}

/* A nice value reorders its user's jobs without a pass reading the queue whole (st->nice): in
 * each order that reads it a job at a time, a pass after an end that makes room for one job
 * looks at a few of 20,000 pending jobs, and gives the user's first place to the user's first
 * job in nice order, a reload of the departments in between. A job's new nice value moves it. */
START_TEST(a_nice_order_is_read_only_as_far_as_a_pass_places) {
        static uint64_t ids[NICE_CASE_JOBS];
        ctl_node *n = nice_case(_i, 1000);
        uint64_t first = submit_as(1000, 1000, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        uint64_t other = submit_as(1001, 1000, MiB);
        uint64_t late = submit_array_with(1, 1000, 10, 0); /* user 1000's first place, nice 10 */
        submit_in_turns(ids);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert(st.npending_nice);
        ck_assert_int_eq(ctl_set_depts(&st, FAIR_HDRF), 0); /* a reload keeps the index */
        finish_ok(n, first);
        st.pass_visits = 0;
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[rec.launched - 1], other);
        ck_assert_uint_lt(st.pass_visits, 16);
        finish_ok(n, other);
        st.pass_visits = 0;
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[rec.launched - 1], ids[0]); /* in late's place */
        ck_assert_uint_lt(st.pass_visits, 16);
        ctl_update_req u = { .mcpu = -1, .mem = -1, .nice = 0, .time_limit_usec = INT64_MIN, .gpus = -1 };
        ck_assert_int_eq(ctl_update(&st, late, 0, &u, err), 0);
        finish_ok(n, ids[0]);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[rec.launched - 1], late); /* its id first among nice 0 */
        ck_assert_int_eq(ctl_find_job(&st, ids[1])->state, JOB_PENDING);
        finish_ok(n, late);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[rec.launched - 1], ids[1]);
}
END_TEST

/* Strict FIFO read in a nice order marks the job it stops at as waiting for resources, as a
 * pass over the whole list does (ctl_wait_blocker): the nice job's place goes to its user's
 * job of nice 0, which does not fit beside the running one. */
START_TEST(strict_fifo_in_a_nice_order_marks_its_blocker) {
        st.cfg.order = SCHED_STRICT_FIFO;
        node("a", 1000, 1024 * MiB, NULL, 0);
        uint64_t running = submit_as(2000, 500, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        uint64_t nice = submit_array_with(1, 250, 10, 0); /* user 1000 */
        uint64_t wide = submit_as(1000, 1000, MiB);
        uint64_t small = submit_as(1001, 250, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_int_eq(ctl_find_job(&st, running)->state, JOB_RUNNING);
        ck_assert_int_eq(ctl_find_job(&st, wide)->wait, JOB_WAIT_RESOURCES);
        ck_assert_int_eq(ctl_find_job(&st, nice)->state, JOB_PENDING);
        ck_assert_int_eq(ctl_find_job(&st, small)->state, JOB_PENDING);
}
END_TEST

/* Beside a throttled array, a nice order is still read a job at a time, and each place goes to
 * a job the throttle leaves: with 20,000 jobs pending, a nice job of user 1000 first, then that
 * user's array of 5 tasks of nice 0, one at a time, two CPUs free give the nice job's place to
 * the array's first task and the task's own place to the user's next job that is no task of it,
 * and so on while the task runs; a pass after each end looks at a few jobs. */
START_TEST(a_nice_order_beside_a_throttled_array_is_read_only_as_far_as_a_pass_places) {
        static uint64_t ids[NICE_CASE_JOBS];
        ctl_node *n = nice_case(_i, 2000);
        uint64_t first[2] = { submit_as(1001, 1000, MiB), submit_as(1001, 1000, MiB) };
        ck_assert_int_eq(ctl_schedule(&st), 2);
        uint64_t late = submit_array_with(1, 1000, 10, 0);
        uint64_t arr = submit_array_with(5, 1000, 0, 1);
        submit_in_turns(ids);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert(st.npending_nice && st.throttle_seen);
        finish_ok(n, first[0]);
        finish_ok(n, first[1]);
        st.pass_visits = 0;
        ck_assert_int_eq(ctl_schedule(&st), 2);
        ck_assert_uint_eq(rec.launch_ids[rec.launched - 2], arr);    /* in late's place */
        ck_assert_uint_eq(rec.launch_ids[rec.launched - 1], ids[0]); /* in arr's: arr + 1 waits */
        ck_assert_int_eq(ctl_find_job(&st, arr + 1)->wait, JOB_WAIT_THROTTLE);
        ck_assert_uint_lt(st.pass_visits, 32);
        finish_ok(n, ids[0]);
        st.pass_visits = 0;
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[rec.launched - 1], ids[2]); /* in late's place: the tasks left wait */
        ck_assert_uint_lt(st.pass_visits, 32);
        finish_ok(n, arr);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[rec.launched - 1], arr + 1);
        ck_assert_int_eq(ctl_find_job(&st, late)->state, JOB_PENDING);
}
END_TEST

/* first's end, then ids[0]'s, on node n: ids[0] takes the place of the user's nice job (the
 * queue's first), then ids[1] the next, that pass looking at fewer than 16 jobs. */
static void two_ends_read_a_few(ctl_node *n, uint64_t first, const uint64_t *ids) {
        finish_ok(n, first);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[rec.launched - 1], ids[0]);
        finish_ok(n, ids[0]);
        st.pass_visits = 0;
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[rec.launched - 1], ids[1]);
        ck_assert_uint_lt(st.pass_visits, 16);
}

/* A user's held jobs ahead of the rest, in a nice order: the reading that passes over them
 * once keeps them as its bucket's head, and later passes start after them (a few visits of
 * 5,000) until a release, after which the released job takes the user's first place. */
START_TEST(a_users_held_jobs_are_not_read_again_in_a_nice_order) {
        enum { HELD = 5000, N = 20 };
        uint64_t held[HELD], ids[N];
        st.cfg.order = (sched_order)_i;
        st.cfg.max_pending = 2 * HELD;
        ctl_node *n = node("a", 1000, 1024 * MiB, NULL, 0);
        uint64_t first = submit_as(1000, 1000, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        for (size_t i = 0; i < HELD; i++) {
                held[i] = submit_as(1000, 1000, MiB);
                ck_assert_int_eq(ctl_hold(&st, held[i], 0, true, err), 0);
        }
        uint64_t late = submit_array_with(1, 1000, 10, 0);
        for (size_t i = 0; i < N; i++)
                ids[i] = submit_as(1000, 1000, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        two_ends_read_a_few(n, first, ids);
        ck_assert_int_eq(ctl_hold(&st, held[0], 0, false, err), 0);
        finish_ok(n, ids[1]);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[rec.launched - 1], held[0]);
        ck_assert_int_eq(ctl_find_job(&st, late)->state, JOB_PENDING);
}
END_TEST

/* So are a user's jobs waiting for their begin time at the front of the user's nice order: a
 * pass after an end looks at a few of 5,000 of them, and their earliest begin time is the
 * controller's next all the same (st->next_begin_usec), unread; once it has come, the next
 * places go to the first of them whose times have come. */
START_TEST(a_users_jobs_waiting_for_their_begin_time_are_not_read_again_in_a_nice_order) {
        enum { LATER = 5000, N = 20 };
        uint64_t later[LATER], ids[N];
        int64_t begin = at(1000).real_usec + 3600000000;
        st.cfg.order = (sched_order)_i;
        st.cfg.max_pending = 2 * LATER;
        ctl_node *n = node("a", 1000, 1024 * MiB, NULL, 0);
        uint64_t first = submit_as(1000, 1000, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        uint64_t late = submit_array_with(1, 1000, 10, 0); /* the queue's first: not blocked */
        for (size_t i = 0; i < LATER; i++)
                later[i] = submit_spec_as(
                        1000, (job_spec){ .req = { .mcpu = 1000, .mem = MiB }, .begin_usec = begin + (int64_t)i });
        for (size_t i = 0; i < N; i++)
                ids[i] = submit_as(1000, 1000, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        two_ends_read_a_few(n, first, ids);
        ck_assert_int_eq(st.next_begin_usec, begin); /* theirs, not read by that pass */
        finish_ok(n, ids[1]);
        ctl_wait_tick(&st, begin + 1); /* the first two begin times have come */
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[rec.launched - 1], later[0]);
        finish_ok(n, later[0]);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[rec.launched - 1], later[1]);
        ck_assert_int_eq(ctl_find_job(&st, late)->state, JOB_PENDING);
}
END_TEST

/* A job requeued behind its owner's head in a nice order (its node lost while the user's held
 * jobs, after it by id, made the head) joins that head: the next pass gives it the user's first
 * place, before the user's later job. */
START_TEST(a_job_requeued_into_a_nice_orders_head_is_read) {
        (void)node("a", 1000, 1024 * MiB, NULL, 0);
        uint64_t rq = submit_requeue(1000);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ctl_node *b = node("b", 1000, 1024 * MiB, NULL, 0);
        uint64_t filler = submit_requeue(1000);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_find_job(&st, filler)->state, JOB_RUNNING);
        for (int i = 0; i < 30; i++)
                (void)submit_spec((job_spec){ .req = { .mcpu = 1000, .mem = MiB }, .hold = true });
        uint64_t nice = submit_spec((job_spec){ .req = { .mcpu = 1000, .mem = MiB }, .nice = 10 });
        uint64_t later = submit_requeue(1000);
        ck_assert_int_eq(ctl_schedule(&st), 0); /* the head: rq's stale entry and the 30 held */
        (void)ctl_node_heard(&st, b, at(1000 + 6000000));
        ctl_check_silence(&st, at(1000 + 6000000)); /* a times out: rq is pending again */
        ck_assert_int_eq(ctl_find_job(&st, rq)->state, JOB_PENDING);
        finish_ok(b, filler);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[rec.launched - 1], rq);
        ck_assert_int_eq(ctl_find_job(&st, later)->state, JOB_PENDING);
        ck_assert_int_eq(ctl_find_job(&st, nice)->state, JOB_PENDING);
}
END_TEST

/* And for a throttle: the tasks a record makes are held to their array's throttle (2). */
START_TEST(tasks_an_arrays_record_makes_keep_its_throttle) {
        (void)array_back_after_a_pass_without_it(100, 0, 2);
        ck_assert_int_eq(ctl_schedule(&st), 2); /* room for 10 tasks; the plain job fits no more */
        ck_assert(st.throttle_seen);
}
END_TEST

START_TEST(an_array_is_numbered_in_order_and_shares_its_first_jobs_strings) {
        uint64_t plain = submit_as(0, 100, MiB), first = submit_array(4, 100);
        ck_assert_uint_eq(first, plain + 1);
        ck_assert_uint_eq(st.npending, 5);
        ck_assert_int_eq(rec.persisted, 5);
        ck_assert_int_eq(rec.persisted_with_env, 1); /* the array's first only */
        ck_assert_int_eq(rec.persisted_after_job_event, 5);
        const job *owner = ctl_find_job(&st, first);
        for (uint32_t i = 0; i < 4; i++) {
                const job *j = ctl_find_job(&st, first + i);
                ck_assert_ptr_eq(st.pending[1 + i], j);
                ck_assert_uint_eq(j->array_first, first);
                ck_assert_uint_eq(j->array_index, i);
                ck_assert_int_eq(j->spec.req.mcpu, 100);
                ck_assert_ptr_null(j->spec.env); /* dropped once stored */
                ck_assert_ptr_eq(j->spec.argv, owner->spec.argv);
                ck_assert_ptr_eq(j->user, owner->user);
                char out[64];
                snprintf(out, sizeof(out), "/tmp/colony-%llu_%u.out", (unsigned long long)first, i);
                ck_assert_str_eq(j->spec.stdout_path, out); /* its own, Slurm's %A_%a */
        }
        ck_assert_uint_eq(ctl_find_job(&st, plain)->array_first, 0);
        ck_assert_ptr_nonnull(strstr(rec.event_log, "submitted:5:-"));
        ctl_node *n = node("a", 1000, 1024 * MiB, NULL, 0);
        ck_assert_int_eq(ctl_schedule(&st), 5);
        finish_ok(n, first); /* the owner ends first: the others keep its strings (checked by ctl_free) */
        ck_assert_str_eq(ctl_find_job(&st, first + 3)->spec.argv[1], "x");
}
END_TEST

START_TEST(an_array_past_max_pending_or_a_failed_write_stores_none_of_it) {
        st.cfg.max_pending = 5;
        ck_assert_uint_ne(submit_as(0, 100, MiB), 0);
        ck_assert_uint_eq(submit_array(5, 100), 0);
        ck_assert_ptr_nonnull(strstr(err, "queue full: 1 jobs pending, and an array of 5 would pass max_pending (5)"));
        ck_assert_int_eq(rec.persisted, 1);
        ck_assert_uint_eq(st.njobs, 1);
        ck_assert_uint_ne(submit_array(4, 100), 0); /* exactly up to the cap */
        ck_assert_uint_eq(st.npending, 5);

        st.cfg.max_pending = 100;
        uint64_t next = st.next_id;
        rec.fail_persist_at = rec.persisted + 3; /* the third of the array */
        ck_assert_uint_eq(submit_array(10, 100), 0);
        ck_assert_ptr_nonnull(strstr(err, "could not record"));
        ck_assert_uint_eq(st.njobs, 5);
        ck_assert_uint_eq(st.npending, 5);
        ck_assert_ptr_null(ctl_find_job(&st, next));
        uint64_t after = submit_array(2, 100); /* the failed array's ids are not given again */
        ck_assert_uint_eq(after, next + 10);
}
END_TEST

START_TEST(queue_cap) {
        st.cfg.max_pending = 2;
        ck_assert_uint_ne(submit_as(0, 100, MiB), 0);
        ck_assert_uint_ne(submit_as(0, 100, MiB), 0);
        ck_assert_uint_eq(submit_as(0, 100, MiB), 0);
        ck_assert_ptr_nonnull(strstr(err, "queue full"));
}
END_TEST

START_TEST(only_owner_or_root_may_cancel) {
        node("a", 1000, 1024 * MiB, NULL, 0);
        uint64_t mine = submit_as(1000, 1000, MiB), queued = submit_as(1000, 1000, MiB);
        ctl_schedule(&st);
        ck_assert_int_eq(ctl_cancel(&st, mine, 2000, 1500, err), -EPERM);
        ck_assert_int_eq(ctl_cancel(&st, 999, 0, 1500, err), -ENOENT);
        ck_assert_int_eq(ctl_cancel(&st, mine, 1000, 1500, err), 0); /* running: the agent is asked */
        ck_assert_int_eq(rec.cancelled, 1);
        ck_assert_int_eq(ctl_find_job(&st, mine)->state, JOB_RUNNING);
        ck_assert_int_eq(ctl_cancel(&st, queued, 0, 1500, err), 0); /* pending: ends at once */
        ck_assert_int_eq(ctl_find_job(&st, queued)->state, JOB_CANCELLED);
        ck_assert_uint_eq(st.npending - st.nstale, 0); /* the queue drops it at the next pass */
        ctl_tidy(&st);
        ck_assert_uint_eq(st.npending, 0);
        ck_assert_int_eq(ctl_cancel(&st, queued, 0, 1600, err), -EALREADY);
}
END_TEST

START_TEST(a_lost_node_loses_its_jobs_and_frees_nothing_twice) {
        ctl_node *a = node("a", 1000, 1024 * MiB, NULL, 0);
        node("b", 1000, 1024 * MiB, NULL, 0);
        uint64_t j1 = submit_as(0, 1000, MiB), j2 = submit_as(0, 1000, MiB), j3 = submit_as(0, 1000, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 2);
        ctl_node_down(&st, a, "disconnected", 3000);
        ck_assert_int_eq(ctl_find_job(&st, j1)->state, JOB_LOST);
        ck_assert_str_eq(ctl_find_job(&st, j1)->result.error, "agent a disconnected");
        ck_assert_int_eq(ctl_find_job(&st, j2)->state, JOB_RUNNING);
        ck_assert_int_eq(a->used.mcpu, 0);
        ck_assert_int_eq(ctl_schedule(&st), 0); /* j3 must not go to the down node */
        ck_assert_int_eq(ctl_find_job(&st, j3)->state, JOB_PENDING);
        job_result res = { 0 };
        ck_assert_int_eq(ctl_job_finished(&st, a, j1, JOB_COMPLETED, &res, 4000), -ENOENT);
}
END_TEST

/* The controller restarted: it knows the node and its jobs, and the agent must say hello. */
static ctl_node *reconnect(const uint64_t *listed, size_t n) {
        ctl_node *a = ctl_find_node(&st, "a");
        a->up = false;
        a->link = NULL;
        ctl_node *again = node("a", 2000, 1024 * MiB, listed, n);
        ck_assert_ptr_eq(again, a);
        return a;
}

START_TEST(reconnect_keeps_listed_jobs_and_loses_the_rest_after_the_window) {
        node("a", 2000, 1024 * MiB, NULL, 0);
        uint64_t j1 = submit_as(0, 1000, MiB), j2 = submit_as(0, 1000, MiB);
        ctl_schedule(&st);
        ctl_node *a = reconnect(&j2, 1);
        ck_assert_int_eq(ctl_find_job(&st, j1)->state, JOB_RUNNING); /* its report may follow the hello */
        ctl_check_silence(&st, at(1000 + 4000000));
        ck_assert_int_eq(ctl_find_job(&st, j1)->state, JOB_RUNNING);
        (void)ctl_node_heard(&st, a, at(1000 + 5000000));
        ctl_check_silence(&st, at(1000 + 5000001));
        ck_assert_int_eq(ctl_find_job(&st, j1)->state, JOB_LOST);
        ck_assert_str_eq(ctl_find_job(&st, j1)->result.error, "agent a came back without it");
        ck_assert_int_eq(ctl_find_job(&st, j2)->state, JOB_RUNNING);
        ck_assert_int_eq(a->used.mcpu, 1000);
        ctl_node *dup = NULL;
        ck_assert_int_eq(
                ctl_node_up(&st, "a", (res_t){ .mcpu = 1, .mem = 1 }, "v1", "/", NULL, 0, NULL, at(1), &dup, err),
                -EEXIST);
}
END_TEST

START_TEST(a_job_that_ended_while_apart_is_reported_after_the_hello) {
        node("a", 2000, 1024 * MiB, NULL, 0);
        uint64_t j1 = submit_as(0, 1000, MiB);
        ctl_schedule(&st);
        ctl_node *a = reconnect(NULL, 0);
        finish_ok(a, j1);
        ck_assert_int_eq(ctl_find_job(&st, j1)->state, JOB_COMPLETED);
        ctl_check_silence(&st, at(1000 + 5000001));
        ck_assert_int_eq(ctl_find_job(&st, j1)->state, JOB_COMPLETED);
        ck_assert_int_eq(a->used.mcpu, 0);
}
END_TEST

START_TEST(silent_nodes_time_out) {
        ctl_node *a = node("a", 1000, 1024 * MiB, NULL, 0);
        uint64_t j = submit_as(0, 1000, MiB);
        ctl_schedule(&st);
        ctl_check_silence(&st, at(1000 + 4000000));
        ck_assert(a->up);
        ck_assert_int_eq(rec.dropped, 0);
        ctl_check_silence(&st, at(1000 + 6000000));
        ck_assert(!a->up);
        ck_assert_int_eq(ctl_find_job(&st, j)->state, JOB_LOST);
        /* its link is closed, so a waking agent must say hello again */
        ck_assert_int_eq(rec.dropped, 1);
        ck_assert_ptr_eq(rec.dropped_link, (void *)1);
        ck_assert_ptr_null(a->link);
        ctl_check_silence(&st, at(1000 + 12000000));
        ck_assert_int_eq(rec.dropped, 1);
}
END_TEST

START_TEST(a_wall_clock_jump_does_not_mark_nodes_down) {
        ctl_node *a = node("a", 1000, 1024 * MiB, NULL, 0);
        ctl_check_silence(&st, (ctl_time){ .real_usec = 1000 + 3600000000LL, .mono_usec = 1000 + 1000000 });
        ck_assert(a->up);
        ctl_check_silence(&st, (ctl_time){ .real_usec = 1000, .mono_usec = 1000 + 6000000 });
        ck_assert(!a->up);
}
END_TEST

START_TEST(restored_running_jobs_wait_for_their_node) {
        job *j = calloc(1, sizeof(*j));
        *j = (job){
                .id = 41, .state = JOB_RUNNING, .node = strdup("gone"), .spec = { .req = { .mcpu = 500, .mem = MiB } }
        };
        ck_assert_int_eq(ctl_restore(&st, j, at(1000)), 0);
        ck_assert_uint_eq(st.next_id, 42);
        ctl_node *gone = ctl_find_node(&st, "gone");
        ck_assert(!gone->up);
        ck_assert_int_eq(gone->used.mcpu, 500);
        ctl_check_silence(&st, at(1000 + 6000000));
        ck_assert_int_eq(j->state, JOB_LOST);
        ck_assert_int_eq(gone->used.mcpu, 0);
}
END_TEST

/* The agent was SIGKILLed: its jobs outlive it, and a restarted agent re-adopts them. */
START_TEST(a_disconnected_agents_jobs_wait_for_it_to_come_back) {
        ctl_node *a = node("a", 2000, 1024 * MiB, NULL, 0);
        uint64_t adopted = submit_as(0, 500, MiB), ended = submit_as(0, 500, MiB), gone = submit_as(0, 500, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 3);
        ctl_node_disconnected(&st, a);
        ck_assert(!a->up);
        ck_assert_int_eq(ctl_find_job(&st, adopted)->state, JOB_RUNNING);
        ck_assert_int_eq(a->used.mcpu, 1500); /* still charged: nothing else may land there */
        ctl_check_silence(&st, at(1000 + 4000000));
        ck_assert_int_eq(ctl_find_job(&st, adopted)->state, JOB_RUNNING);
        uint64_t listed[] = { adopted, gone };
        ck_assert_ptr_eq(node("a", 2000, 1024 * MiB, listed, 2), a);
        job_result res = { .exit_code = 3 };
        ck_assert_int_eq(ctl_job_finished(&st, a, ended, JOB_FAILED, &res, 4500000), 0);
        ck_assert_int_eq(ctl_find_job(&st, ended)->result.exit_code, 3);
        (void)ctl_node_heard(&st, a, at(1000 + 9000000));
        ctl_check_silence(&st, at(1000 + 9000000));
        ck_assert_int_eq(ctl_find_job(&st, adopted)->state, JOB_RUNNING);
        ck_assert_int_eq(ctl_find_job(&st, gone)->state, JOB_RUNNING);
        finish_ok(a, adopted);
        ck_assert_int_eq(ctl_find_job(&st, adopted)->state, JOB_COMPLETED);
        ck_assert_int_eq(a->used.mcpu, 500);
}
END_TEST

START_TEST(a_disconnected_agent_that_stays_away_loses_its_jobs) {
        ctl_node *a = node("a", 1000, 1024 * MiB, NULL, 0);
        uint64_t j = submit_as(0, 1000, MiB);
        ctl_schedule(&st);
        ctl_node_disconnected(&st, a);
        ctl_check_silence(&st, at(1000 + 5000001));
        ck_assert_int_eq(ctl_find_job(&st, j)->state, JOB_LOST);
        ck_assert_str_eq(ctl_find_job(&st, j)->result.error, "agent a timed out");
        ck_assert_int_eq(a->used.mcpu, 0);
        job_result res = { 0 };
        ck_assert_int_eq(ctl_job_finished(&st, a, j, JOB_COMPLETED, &res, 6000000), -ENOENT); /* too late */
}
END_TEST

static int64_t ticked; /* the second of the last tick_to */

/* Two timeouts apart: not-responding after 5 s of silence, lost after 60 s. */
static void slow_is_not_dead_setup(void) {
        ctl_free(&st);
        ctl_config cfg = { .policy = SCHED_FIRST_FIT,
                           .order = SCHED_STRICT_FIFO,
                           .max_pending = 100,
                           .kill_grace_ms = 100,
                           .agent_timeout_usec = 5000000,
                           .node_lost_timeout_usec = 60000000 };
        ctl_init(&st, &cfg, &actions, &rec);
        ticked = 0;
}

/* The controller's ticks, once a second, after the last one up to second s (from 1000 usec, when
 * node() says hello). */
static void tick_to(int64_t s) {
        for (; ticked < s; ticked++)
                ctl_check_silence(&st, at(1000 + (ticked + 1) * 1000000));
}

START_TEST(a_silent_node_is_not_responding_its_jobs_run_on_and_it_gets_no_new_ones) {
        slow_is_not_dead_setup();
        ctl_node *a = node("a", 2000, 1024 * MiB, NULL, 0);
        uint64_t j1 = submit_as(0, 1000, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        tick_to(5);
        ck_assert_str_eq(ctl_node_state_name(a), "up");
        tick_to(6);
        ck_assert_str_eq(ctl_node_state_name(a), "not-responding");
        ck_assert(a->up && a->silent);
        ck_assert_int_eq(rec.dropped, 0); /* its link stays: its next message brings it back */
        ck_assert_ptr_nonnull(strstr(rec.event_log, "node-not-responding:0:a "));
        ck_assert_int_eq(ctl_find_job(&st, j1)->state, JOB_RUNNING);
        uint64_t j2 = submit_as(0, 500, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 0); /* room there, but it is not placed on a silent node */
        tick_to(59);
        ck_assert_int_eq(ctl_find_job(&st, j1)->state, JOB_RUNNING);
        ck_assert_int_eq(ctl_find_job(&st, j2)->state, JOB_PENDING);
        ck_assert(ctl_node_heard(&st, a, at(1000 + 59500000)));
        ck_assert_str_eq(ctl_node_state_name(a), "up");
        ck_assert(!ctl_node_heard(&st, a, at(1000 + 59600000)));
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_str_eq(rec.launch_nodes[1], "a");
        ck_assert_uint_eq(rec.launch_ids[1], j2);
        finish_ok(a, j1);
        ck_assert_int_eq(ctl_find_job(&st, j1)->state, JOB_COMPLETED);
}
END_TEST

START_TEST(a_not_responding_node_takes_a_new_hello_and_keeps_the_jobs_it_lists) {
        slow_is_not_dead_setup();
        ctl_node *a = node("a", 2000, 1024 * MiB, NULL, 0), *again = NULL;
        const res_t cap = { .mcpu = 2000, .mem = 1024 * MiB };
        uint64_t j1 = submit_as(0, 1000, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        /* While it answers, a second agent of that name is refused. */
        ck_assert_int_eq(ctl_node_up(&st, "a", cap, "v1", "/x", &j1, 1, (void *)2, at(2000000), &again, err), -EEXIST);
        tick_to(6);
        ck_assert_str_eq(ctl_node_state_name(a), "not-responding");
        /* Silent: its link may be dead unseen, so a hello that proved the secret replaces it. */
        ck_assert_int_eq(ctl_node_up(&st, "a", cap, "v1", "/x", &j1, 1, (void *)2, at(1000 + 6500000), &again, err), 0);
        ck_assert_ptr_eq(again, a);
        ck_assert_int_eq(rec.dropped, 1);
        ck_assert_ptr_eq(a->link, (void *)2);
        ck_assert_str_eq(ctl_node_state_name(a), "up");
        tick_to(10);
        ck_assert_str_eq(ctl_node_state_name(a), "up");
        ck_assert_int_eq(ctl_find_job(&st, j1)->state, JOB_RUNNING);
        finish_ok(a, j1);
        ck_assert_int_eq(ctl_find_job(&st, j1)->state, JOB_COMPLETED);
}
END_TEST

START_TEST(a_node_silent_past_the_lost_timeout_loses_or_requeues_its_jobs) {
        slow_is_not_dead_setup();
        ctl_node *a = node("a", 2000, 1024 * MiB, NULL, 0), *b = node("b", 1000, 1024 * MiB, NULL, 0);
        uint64_t j1 = submit_as(0, 1000, MiB), rq = submit_requeue(1000), jb = submit_as(0, 1000, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 3);
        ck_assert_str_eq(ctl_find_job(&st, jb)->node, "b");
        ctl_node_disconnected(&st, b); /* a closed link waits as long as a silent one */
        tick_to(60);
        ck_assert(a->silent);
        ck_assert_int_eq(ctl_find_job(&st, j1)->state, JOB_RUNNING);
        ck_assert_int_eq(ctl_find_job(&st, jb)->state, JOB_RUNNING);
        tick_to(61);
        ck_assert_str_eq(ctl_node_state_name(a), "down");
        ck_assert_int_eq(rec.dropped, 1);
        ck_assert_int_eq(ctl_find_job(&st, j1)->state, JOB_LOST);
        ck_assert_str_eq(ctl_find_job(&st, j1)->result.error, "agent a timed out");
        ck_assert_int_eq(ctl_find_job(&st, rq)->state, JOB_PENDING);
        ck_assert_uint_eq(ctl_find_job(&st, rq)->attempt, 2);
        ck_assert_int_eq(ctl_find_job(&st, jb)->state, JOB_LOST);
        ck_assert_int_eq(a->used.mcpu, 0);
        ck_assert_int_eq(b->used.mcpu, 0);
}
END_TEST

/* One turn of the loop took 89.5 s (a huge submission, a slow disk): the agents' messages
 * waited unread in their sockets, so that time is nobody's silence, whether the tick runs
 * before them after it or not. */
START_TEST(a_stall_of_the_controllers_own_loop_never_counts_as_an_agents_silence) {
        slow_is_not_dead_setup();
        ctl_node *a = node("a", 2000, 1024 * MiB, NULL, 0), *b = node("b", 2000, 1024 * MiB, NULL, 0);
        uint64_t j1 = submit_as(0, 1000, MiB), j2 = submit_as(0, 2000, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 2);
        tick_to(2);
        (void)ctl_node_heard(&st, a, at(1000 + 2500000));
        (void)ctl_node_heard(&st, b, at(1000 + 2500000));
        /* the stalled turn was a's own message, heard at 91 s; the clock jumps to 92 s */
        (void)ctl_node_heard(&st, a, at(1000 + 91000000));
        ctl_credit_stall(&st, 89500000, at(1000 + 92000000));
        ticked = 92;
        ctl_check_silence(&st, at(1000 + 92000000)); /* the tick that was due runs first */
        ck_assert_str_eq(ctl_node_state_name(a), "up");
        ck_assert_str_eq(ctl_node_state_name(b), "up");
        ck_assert_int_eq(ctl_find_job(&st, j1)->state, JOB_RUNNING);
        ck_assert_int_eq(ctl_find_job(&st, j2)->state, JOB_RUNNING);
        ck_assert_int_eq(rec.dropped, 0);
        /* the credit moves no last-heard time past now (a's would be 180.5 s): silence from
         * here still counts */
        tick_to(97);
        ck_assert_str_eq(ctl_node_state_name(a), "up");
        tick_to(98);
        ck_assert_str_eq(ctl_node_state_name(a), "not-responding");
        ck_assert_str_eq(ctl_node_state_name(b), "not-responding");
}
END_TEST

/* The view of the nodes a pass places on is what the nodes are, and its index answers as a scan of
 * them would, after any sequence of submissions, passes, ends, cancels and nodes coming and going. */
static void check_view(uint64_t *seed) {
        sched_machine fresh[8];
        ck_assert_uint_eq(st.view.n, st.nnodes);
        for (size_t i = 0; i < st.nnodes; i++) {
                ctl_node *n = st.nodes[i];
                fresh[i] = (sched_machine){ .index = (uint32_t)i,
                                            .capacity = n->capacity,
                                            .free = res_sub(res_sub(n->capacity, n->used), n->stray_held),
                                            .up = n->up && !n->silent };
                ck_assert(res_equal(st.view.machines[i].free, fresh[i].free));
                ck_assert_int_eq(st.view.machines[i].up, fresh[i].up);
        }
        for (int h = 0; h < SCHED_MAX_JOBS; h++) {
                sched_job one = { .id = 1,
                                  .req = { .mcpu = 250 * (int64_t)(1 + sched_rng_next(seed) % 8), .mem = MiB } };
                sched_machine copy[8];
                sched_assignment a;
                memcpy(copy, fresh, sizeof(fresh));
                long placed = sched_place((sched_heuristic)h, copy, st.nnodes, &one, 1, SCHED_BACKFILL, &a);
                ck_assert_int_eq(sched_index_choose(&st.view, (sched_heuristic)h, one.req),
                                 placed ? (long)a.machine : -1);
        }
}

/* The nth job in the given state, or NULL. */
static job *nth_in(job_state state, uint64_t n) {
        size_t count = 0;
        for (size_t i = 0; i < st.njobs; i++)
                count += st.jobs[i]->state == state;
        for (size_t i = 0; count && i < st.njobs; i++)
                if (st.jobs[i]->state == state && n-- % count == 0)
                        return st.jobs[i];
        return NULL;
}

static void no_launch(void *u, ctl_node *n, const job *j) { (void)u, (void)n, (void)j; }

static void no_end(void *u, const job *j) { (void)u, (void)j; }

START_TEST(the_view_follows_the_nodes_through_any_sequence) {
        static const ctl_actions quiet = { rec_persist, no_launch, rec_cancel, no_end, rec_drop, NULL, NULL };
        static const char *names[] = { "h", "c", "f", "a", "g", "b", "e", "d" }; /* not in name order */
        st.act = &quiet;
        st.cfg.max_pending = 100000;
        uint64_t seed = 5;
        for (int step = 0; step < 4000; step++) {
                uint64_t r = sched_rng_next(&seed), what = r % 10;
                ctl_node *n = st.nnodes ? st.nodes[(r >> 8) % st.nnodes] : NULL;
                job *j;
                if (st.nnodes < 8 || (what == 0 && n && !n->up)) {
                        ctl_node *out;
                        const char *name = st.nnodes < 8 ? names[st.nnodes] : n->name;
                        ck_assert_int_eq(ctl_node_up(&st, name,
                                                     (res_t){ .mcpu = 1000 * (int64_t)(1 + r % 4), .mem = 1024 * MiB },
                                                     "v2", "/x", NULL, 0, (void *)1, at(step), &out, err),
                                         0);
                } else if (what == 0 && n) {
                        ctl_node_disconnected(&st, n);
                } else if (what == 1 && n && n->up) {
                        ctl_node_down(&st, n, "timed out", step);
                } else if (what <= 4) {
                        submit_as(0, 250 * (int64_t)(1 + (r >> 16) % 8), MiB);
                } else if (what <= 6 && (j = nth_in(JOB_RUNNING, r >> 20))) {
                        job_result res = { 0 };
                        ck_assert_int_eq(
                                ctl_job_finished(&st, ctl_find_node(&st, j->node), j->id, JOB_COMPLETED, &res, step),
                                0);
                } else if (what == 7 && (j = nth_in(JOB_PENDING, r >> 20))) {
                        ck_assert_int_eq(ctl_cancel(&st, j->id, 0, step, err), 0);
                } else {
                        st.cfg.policy = (sched_heuristic)((r >> 24) % _SCHED_HEURISTIC_MAX);
                        st.cfg.order = (sched_order)((r >> 28) % 3);
                        ck_assert_int_ge(ctl_schedule(&st), 0);
                }
                check_view(&seed);
        }
        for (size_t i = 0; i < 8; i++)
                ck_assert_ptr_eq(ctl_find_node(&st, names[i]), st.nodes[i]);
        ck_assert_ptr_null(ctl_find_node(&st, "i"));
}
END_TEST

START_TEST(a_pass_after_one_that_placed_nothing_sees_what_changed) {
        node("a", 1000, 1024 * MiB, NULL, 0);
        ctl_node *b = node("b", 2000, 1024 * MiB, NULL, 0);
        submit_as(0, 2000, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 1); /* b is full */
        uint64_t big = submit_as(0, 2000, MiB), small = submit_as(0, 500, MiB), tiny = submit_as(0, 250, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 0); /* strict FIFO: the big job holds the queue */
        ck_assert_int_eq(ctl_schedule(&st), 0);
        st.cfg.order = SCHED_BACKFILL; /* a new configuration is a change */
        ck_assert_int_eq(ctl_schedule(&st), 2);
        ck_assert_uint_eq(rec.launch_ids[1], small);
        ck_assert_uint_eq(rec.launch_ids[2], tiny);
        st.cfg.order = SCHED_STRICT_FIFO;
        submit_as(0, 250, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_int_eq(ctl_cancel(&st, big, 0, 1500, err), 0); /* the head is gone */
        ck_assert_int_eq(ctl_schedule(&st), 1);
        uint64_t again = submit_as(0, 2000, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ctl_node_disconnected(&st, b); /* back with twice the cores, its job still running */
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_ptr_eq(node("b", 4000, 1024 * MiB, &rec.launch_ids[0], 1), b);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[rec.launched - 1], again);
        ck_assert_str_eq(rec.launch_nodes[rec.launched - 1], "b");
}
END_TEST

/* Where each job was launched, in order ("id@node "), for comparing two state machines. */
typedef struct launch_log {
        char text[1 << 16];
        size_t len;
} launch_log;

static void log_launch(void *u, ctl_node *n, const job *j) {
        launch_log *l = u;
        int w = snprintf(l->text + l->len, sizeof(l->text) - l->len, "%llu@%s ", (unsigned long long)j->id, n->name);
        ck_assert(w > 0 && (size_t)w < sizeof(l->text) - l->len);
        l->len += (size_t)w;
}

static int no_persist(void *u, const job *j) {
        (void)u, (void)j;
        return 0;
}

/* The same step on both states of a comparison. A submission of group (NULL: none) whose CPUs
 * and memory r's bits choose, now and then held or after a running job: ctl_submit takes the
 * spec, or refuses one no node holds, on both. */
static void both_submit(ctl_state *const both[2], const char *group, uint64_t r, int step) {
        uint64_t id[2] = { 0, 0 };
        int ok[2];
        const job *before = (r >> 40) % 8 == 0 ? nth_in(JOB_RUNNING, r >> 24) : NULL;
        char dep[48];
        snprintf(dep, sizeof(dep), "afterany:%llu", before ? (unsigned long long)before->id : 0ULL);
        for (int k = 0; k < 2; k++) {
                job_spec spec = { .argv = calloc(2, sizeof(char *)),
                                  .cwd = strdup("/tmp"),
                                  .name = strdup("j"),
                                  .group = group ? strdup(group) : NULL,
                                  .req = { .mcpu = 250 * (int64_t)(1 + (r >> 8) % 12),
                                           .mem = 64 * MiB * (int64_t)(1 + (r >> 16) % 24) },
                                  .nice = (r >> 52) % 16 == 0   ? 10
                                          : (r >> 52) % 16 == 1 ? 5
                                                                : 0, /* now and then */
                                  .hold = (r >> 44) % 8 == 0,
                                  .dependency = before ? strdup(dep) : NULL,
                                  /* now and then a begin time, a few hundred steps ahead */
                                  .begin_usec = (r >> 28) % 8 == 0 ? step + 1 + (int64_t)(r >> 31) % 256 : 0 };
                spec.argv[0] = strdup("/bin/true");
                uid_t uid = (uid_t)(1000 + (r >> 48) % 3); /* three users, for the running limits */
                if ((r >> 56) % 16 == 0) {                 /* now and then an array of 2 to 5 tasks, 1 or 2 at a time */
                        spec.array_throttle = 1 + (uint32_t)(r >> 60) % 2;
                        ok[k] = ctl_submit_array(both[k], uid, uid, "u", &spec, 2 + (r >> 61) % 4, NULL, step, &id[k],
                                                 err);
                        job_spec_free(&spec);
                } else if ((ok[k] = ctl_submit(both[k], uid, uid, "u", &spec, step, &id[k], err)) < 0)
                        job_spec_free(&spec);
        }
        ck_assert_int_eq(ok[0], ok[1]);
        ck_assert_uint_eq(id[0], id[1]);
}

/* Nodes n0 to n3 on both, n<m> of mcpu x (m + 1) milli-cores and mem x (4 - m) bytes: the
 * more cores, the less memory. */
static void both_nodes(ctl_state *const both[2], int64_t mcpu, int64_t mem) {
        for (int k = 0; k < 2; k++)
                for (int m = 0; m < 4; m++) {
                        char name[8];
                        ctl_node *out;
                        snprintf(name, sizeof(name), "n%d", m);
                        ck_assert_int_eq(ctl_node_up(both[k], name,
                                                     (res_t){ .mcpu = mcpu * (m + 1), .mem = mem * (4 - m) }, "v2",
                                                     "/x", NULL, 0, (void *)1, at(1), &out, err),
                                         0);
                }
}

/* Running job id ends on both. */
static void both_finish(ctl_state *const both[2], uint64_t id, int step) {
        for (int k = 0; k < 2; k++) {
                job_result res = { 0 };
                job *same = ctl_find_job(both[k], id);
                ck_assert_int_eq(
                        ctl_job_finished(both[k], ctl_find_node(both[k], same->node), id, JOB_COMPLETED, &res, step),
                        0);
        }
}

/* Pending job id is cancelled on both. */
static void both_cancel(ctl_state *const both[2], uint64_t id, int step) {
        for (int k = 0; k < 2; k++)
                ck_assert_int_eq(ctl_cancel(both[k], id, 0, step, err), 0);
}

/* Pending job id takes nice value nice on both. */
static void both_update_nice(ctl_state *const both[2], uint64_t id, int nice) {
        ctl_update_req u = { .mcpu = -1, .mem = -1, .nice = nice, .time_limit_usec = INT64_MIN, .gpus = -1 };
        for (int k = 0; k < 2; k++)
                ck_assert_int_eq(ctl_update(both[k], id, 0, &u, err), 0);
}

/* Pending job id asks mcpu milli-cores on both. */
static void both_update_cpus(ctl_state *const both[2], uint64_t id, int64_t mcpu) {
        ctl_update_req u = { .mcpu = mcpu, .mem = -1, .nice = INT_MIN, .time_limit_usec = INT64_MIN, .gpus = -1 };
        for (int k = 0; k < 2; k++)
                ck_assert_int_eq(ctl_update(both[k], id, 0, &u, err), 0);
}

/* A pass that skips what the last one settled, or the blocked head, or one that stops reading
 * the queue where nothing more fits (EASY, NetBatch's reservations, any order while a nice value
 * reorders a user's jobs), places exactly what a full pass would, whatever the heuristic and
 * order, with running limits per user or without, through submissions (some held, some after a
 * running job, some nice, some with a begin time), ends, cancels, holds, releases, updates of
 * requests and of nice values, the clock's ticks and passes in any sequence: the same steps are played on st and on a
 * reference made to read every job each time. */
START_TEST(a_settled_pass_places_what_a_full_pass_would) {
        static const ctl_actions logged = { no_persist, log_launch, rec_cancel, no_end, rec_drop, NULL, NULL };
        static launch_log got, want;
        ctl_state ref;
        ctl_state *both[2] = { &st, &ref };
        ctl_config cfg = st.cfg;
        cfg.policy = (sched_heuristic)(_i % _SCHED_HEURISTIC_MAX);
        cfg.order = (sched_order)(_i / _SCHED_HEURISTIC_MAX % 3);
        cfg.max_pending = 100000;
        if (_i >= 3 * _SCHED_HEURISTIC_MAX) { /* EASY reads them a job at a time, as the list's filter */
                cfg.max_running_per_user = 3;
                cfg.max_mcpu_per_user = 4000;
        }
        ctl_free(&st);
        ctl_init(&st, &cfg, &logged, &got);
        ctl_init(&ref, &cfg, &logged, &want);
        got.len = want.len = 0;
        uint64_t seed = 11 + (uint64_t)_i;
        both_nodes(both, 1000, 512 * MiB);
        for (int step = 0; step < 3000; step++) {
                uint64_t r = sched_rng_next(&seed), what = r % 11;
                job *j = nth_in(JOB_RUNNING, r >> 20);
                for (int k = 0; k < 2; k++) /* the clock, as the controller's timer ticks it */
                        ctl_wait_tick(both[k], step);
                if (what == 10 && (j = nth_in(JOB_PENDING, r >> 20))) { /* held or released */
                        uint64_t id = j->id;
                        bool hold = !j->spec.hold;
                        for (int k = 0; k < 2; k++)
                                ck_assert_int_eq(ctl_hold(both[k], id, 0, hold, err), 0);
                } else if (what <= 4)
                        both_submit(both, NULL, r, step);
                else if (what <= 6 && j)
                        both_finish(both, j->id, step);
                else if (what == 7 && (j = nth_in(JOB_PENDING, r >> 20)))
                        both_cancel(both, j->id, step);
                else if (what == 8 && (j = nth_in(JOB_PENDING, r >> 20)) && (r >> 36) % 4 == 0)
                        both_update_nice(both, j->id, (int)(r >> 38) % 3 * 5);
                else if (what == 8 && (j = nth_in(JOB_PENDING, r >> 20)))
                        both_update_cpus(both, j->id, 100 * (int64_t)(1 + (r >> 8) % 4)); /* below any submission */
                else {
                        ctl_schedule_dirty(&ref);
                        ref.pending_choosy = true; /* no EASY pass a job at a time: it reads the whole queue */
                        ck_assert_int_eq(ctl_schedule(&st), ctl_schedule(&ref));
                        ck_assert_uint_eq(st.npending, ref.npending);
                }
        }
        ck_assert_uint_gt(got.len, 1000);
        ck_assert_str_eq(got.text, want.text);
        ctl_free(&ref);
}
END_TEST

/* A job of group as user (uid); its id, or 0 with err set. */
static uint64_t submit_group(uid_t uid, const char *user, const char *group) {
        job_spec spec = { .argv = calloc(2, sizeof(char *)),
                          .cwd = strdup("/tmp"),
                          .group = strdup(group),
                          .req = { .mcpu = 1000, .mem = 16 * MiB } };
        spec.argv[0] = strdup("/bin/true");
        uint64_t id = 0;
        int r = ctl_submit(&st, uid, uid, user, &spec, 1000, &id, err);
        job_spec_free(&spec);
        return r < 0 ? 0 : id;
}

/* The group of the job launched k-th. */
static const char *launched_group(int k) { return ctl_find_job(&st, rec.launch_ids[k])->spec.group; }

START_TEST(departments_take_turns_by_their_entitlement) {
        char *alice[] = { "alice", NULL };
        dept v[] = { { .path = "a", .weight = 2, .cap = 1, .leaf = true },
                     { .path = "b", .weight = 1, .cap = 1, .users = alice, .leaf = true } };
        depts d = { .v = v, .n = 2 };
        st.cfg.depts = &d;
        ck_assert_int_eq(ctl_set_depts(&st, FAIR_MCH), 0);
        ctl_node *n = node("n", 6000, 1024 * MiB, NULL, 0);
        uint64_t a[10];
        for (int i = 0; i < 10; i++)
                ck_assert_uint_ne(a[i] = submit_group(1000, "u", "a"), 0);
        ck_assert_uint_eq(submit_group(1000, "u", "b"), 0); /* b lists alice only */
        ck_assert_str_eq(err, "user u may not submit to 'b' ([department_users] b)");
        for (int i = 0; i < 10; i++)
                ck_assert_uint_ne(submit_group(1001, "alice", "b"), 0);
        /* b's jobs come after a's ten, yet b gets its third of the six CPUs at once */
        ck_assert_int_eq(ctl_schedule(&st), 6);
        int in_a = 0;
        for (int k = 0; k < 6; k++)
                in_a += strcmp(launched_group(k), "a") == 0;
        ck_assert_int_eq(in_a, 4);
        /* a job of a ends: a is below its 4, so its next job takes the CPU */
        finish_ok(n, a[0]);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_str_eq(launched_group(6), "a");
        /* new weights (a reload): 1:1, so the next CPU goes to b */
        v[0].weight = 1;
        ck_assert_int_eq(ctl_set_depts(&st, FAIR_MCH), 0);
        finish_ok(n, a[1]);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_str_eq(launched_group(7), "b");
        /* fairness none: submission order again, a's jobs first */
        ck_assert_int_eq(ctl_set_depts(&st, -1), 0);
        finish_ok(n, a[2]);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_str_eq(launched_group(8), "a");
        st.cfg.depts = NULL;
}
END_TEST

/* A job asking mcpu, held or depending on dep (NULL: none) or beginning at begin (0: now). */
static uint64_t submit_blocked(int64_t mcpu, bool hold, const char *dep, int64_t begin) {
        return submit_spec((job_spec){ .req = { .mcpu = mcpu, .mem = MiB },
                                       .hold = hold,
                                       .dependency = dep ? strdup(dep) : NULL,
                                       .begin_usec = begin });
}

/* Jobs held, waiting for a dependency or for their begin time at the queue's head are its
 * blocked head, which passes in strict FIFO and EASY do not read again (st.blocked_head); a
 * release, a dependency met, a cancel among them and the head's earliest begin time come, each
 * followed by a pass, start what may start, the head cut or forgotten. */
START_TEST(the_blocked_head_is_not_read_again_and_every_release_reaches_it) {
        st.cfg.order = _i ? SCHED_BACKFILL : SCHED_STRICT_FIFO;
        ctl_node *n = node("n", 4000, 1024 * MiB, NULL, 0);
        uint64_t running = submit_as(0, 1000, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        char dep[64];
        snprintf(dep, sizeof(dep), "afterok:%llu", (unsigned long long)running);
        uint64_t held[20];
        for (int i = 0; i < 20; i++)
                held[i] = submit_blocked(1000, true, NULL, 0);
        uint64_t waits = submit_blocked(1000, false, dep, 0);
        int64_t begin = at(1000).real_usec + 3600000000;
        uint64_t later = submit_blocked(1000, false, NULL, begin);
        uint64_t held_behind = submit_blocked(1000, true, NULL, 0);
        uint64_t big = submit_as(0, 3500, MiB); /* fits nowhere while running runs */
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_uint_eq(st.blocked_head, 23);
        ck_assert_int_eq(st.next_begin_usec, begin);
        ck_assert_int_eq(ctl_cancel(&st, held[3], 0, 1500, err), 0);
        ck_assert_int_eq(ctl_cancel(&st, big, 0, 1500, err), 0);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_uint_eq(st.blocked_head, 22);      /* compacted with the queue */
        ck_assert_int_eq(st.next_begin_usec, begin); /* from the head, not read */
        ck_assert_int_eq(ctl_hold(&st, held[10], 0, false, err), 0);
        ck_assert_uint_eq(st.blocked_head, 0); /* forgotten */
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_find_job(&st, held[10])->state, JOB_RUNNING);
        /* found again: strict FIFO's windows, compacted, to big's place; EASY to the job it placed */
        ck_assert_uint_eq(st.blocked_head, _i ? 9 : 21);
        finish_ok(n, running); /* waits' dependency met: the head is cut before it */
        ck_assert_uint_eq(st.blocked_head, _i ? 9 : 18);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_find_job(&st, waits)->state, JOB_RUNNING);
        ck_assert_int_eq(ctl_find_job(&st, later)->state, JOB_PENDING);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ctl_wait_tick(&st, begin + 1); /* later's begin time comes */
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_find_job(&st, later)->state, JOB_RUNNING);
        ck_assert_int_eq(ctl_find_job(&st, held_behind)->wait, JOB_WAIT_HELD);
}
END_TEST

/* The blocked head's traits stay the queue's: a pass that read the rest whole still counts the
 * throttle of an array whose held tasks are the head, so that its tasks, once released, start
 * one at a time (%1), under EASY. */
START_TEST(a_pass_past_the_blocked_head_keeps_its_throttles) {
        st.cfg.order = SCHED_BACKFILL;
        node("n", 4000, 1024 * MiB, NULL, 0);
        uint64_t first = submit_array_with(3, 1000, 0, 1);
        ck_assert_uint_ne(first, 0);
        for (uint64_t id = first; id < first + 3; id++)
                ck_assert_int_eq(ctl_hold(&st, id, 0, true, err), 0);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_uint_eq(st.blocked_head, 3);
        submit_as(0, 1000, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 1); /* read whole past the head */
        ck_assert(st.throttle_seen);
        for (uint64_t id = first; id < first + 3; id++)
                ck_assert_int_eq(ctl_hold(&st, id, 0, false, err), 0);
        ck_assert_int_eq(ctl_schedule(&st), 1);
}
END_TEST

/* Departments a (capped at cap_a) and b, of weight 1, into v and d, the caller's (st.cfg points
 * to them until the test sets it back to NULL), under H-DRF. */
static void two_departments(dept v[2], depts *d, double cap_a) {
        v[0] = (dept){ .path = "a", .weight = 1, .cap = cap_a, .leaf = true };
        v[1] = (dept){ .path = "b", .weight = 1, .cap = 1, .leaf = true };
        *d = (depts){ .v = v, .n = 2 };
        st.cfg.depts = d;
        ck_assert_int_eq(ctl_set_depts(&st, FAIR_HDRF), 0);
}

/* A fair-order case's start: strict FIFO (variant 0) or EASY, two_departments, and a node of
 * mcpu milli-cores. */
static ctl_node *fair_case(int variant, dept v[2], depts *d, double cap_a, int64_t mcpu) {
        st.cfg.order = variant ? SCHED_BACKFILL : SCHED_STRICT_FIFO;
        two_departments(v, d, cap_a);
        return node("n", mcpu, 1024 * MiB, NULL, 0);
}

/* A department at its cap is read to its first pending job, whatever the queue behind (strict
 * FIFO's windows, EASY's job at a time): the pass marks that job, the others stay unread, and
 * each shows the cap as its reason all the same (ctl_wait_shown), a held one its hold. Once the
 * cap has room again, the department's next job starts and the cap holds the one after. */
START_TEST(a_capped_department_is_read_to_its_first_job_and_every_job_shows_the_cap) {
        dept v[2];
        depts d;
        st.cfg.max_pending = 1000;
        ctl_node *n = fair_case(_i, v, &d, 0.5, 2000);
        uint64_t running = submit_group(1000, "u", "a");
        ck_assert_int_eq(ctl_schedule(&st), 1); /* a runs its half of the two CPUs */
        enum { N = 300 };
        uint64_t a[N];
        job_wait was[N];
        for (int i = 0; i < N; i++)
                ck_assert_uint_ne(a[i] = submit_group(1000, "u", "a"), 0);
        ck_assert_int_eq(ctl_hold(&st, a[N / 2], 0, true, err), 0);
        for (int i = 0; i < N; i++)
                was[i] = ctl_find_job(&st, a[i])->wait; /* as queued */
        uint64_t b = submit_group(1000, "u", "b");
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_find_job(&st, b)->state, JOB_RUNNING);
        ck_assert_int_eq(ctl_find_job(&st, a[0])->wait, JOB_WAIT_DEPT_CAP); /* read and marked */
        for (int i = 1; i < N; i++) {
                const job *j = ctl_find_job(&st, a[i]);
                ck_assert_int_eq(j->state, JOB_PENDING);
                ck_assert_int_eq(j->wait, was[i]); /* unread */
                ck_assert_int_eq(ctl_wait_shown(&st, j), i == N / 2 ? JOB_WAIT_HELD : JOB_WAIT_DEPT_CAP);
        }
        finish_ok(n, running);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_find_job(&st, a[0])->state, JOB_RUNNING);
        ck_assert_int_eq(ctl_find_job(&st, a[1])->wait, JOB_WAIT_DEPT_CAP);
        ck_assert_int_eq(ctl_wait_shown(&st, ctl_find_job(&st, a[N - 1])), JOB_WAIT_DEPT_CAP);
        ck_assert_int_eq(ctl_wait_shown(&st, ctl_find_job(&st, a[N / 2])), JOB_WAIT_HELD);
        st.cfg.depts = NULL;
}
END_TEST

/* In the fair order a job that may not start takes no turn: a department's held jobs do not
 * put its next job behind another department's. Those at its head are its blocked head, not
 * read again (st.dept_head) until a release or a dependency met, after which what it frees
 * starts. */
START_TEST(held_jobs_take_no_turn_in_the_fair_order_and_are_not_read_again) {
        dept v[2];
        depts d;
        ctl_node *n = fair_case(_i, v, &d, 1, 3000);
        uint64_t first = submit_group(1000, "u", "b");
        ck_assert_int_eq(ctl_schedule(&st), 1);
        uint64_t held[30], b[3];
        for (int i = 0; i < 30; i++) {
                held[i] = submit_group(1000, "u", "a");
                ck_assert_int_eq(ctl_hold(&st, held[i], 0, true, err), 0);
        }
        uint64_t a = submit_group(1000, "u", "a");
        for (int i = 0; i < 3; i++)
                b[i] = submit_group(1000, "u", "b");
        ck_assert_int_eq(ctl_schedule(&st), 2); /* a's one job and b's first: a turn each */
        ck_assert_int_eq(ctl_find_job(&st, a)->state, JOB_RUNNING);
        ck_assert_int_eq(ctl_find_job(&st, b[0])->state, JOB_RUNNING);
        uint32_t da = ctl_find_job(&st, held[0])->fair_dept - 1;
        ck_assert_uint_eq(st.dept_head[da].nblocked, 30);
        ck_assert_uint_eq(st.dept_head[da].at, 30);
        ck_assert_int_eq(ctl_hold(&st, held[7], 0, false, err), 0);
        ck_assert_uint_eq(st.dept_head[da].nblocked, 0); /* forgotten */
        finish_ok(n, first);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_find_job(&st, held[7])->state, JOB_RUNNING); /* a is below b */
        ck_assert_uint_eq(st.dept_head[da].nblocked, 7);                  /* found again, to the job it started */
        ck_assert_int_eq(ctl_cancel(&st, held[2], 0, 1500, err), 0);
        ck_assert_uint_eq(st.dept_head[da].nblocked, 0); /* it counted held[2]: forgotten */
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_uint_eq(st.dept_head[da].nblocked, 28); /* all but the two gone */
        /* a nice job came and went: forgotten with it */
        uint64_t nice = submit_array_with(1, 1000, 5, 0);
        ck_assert(st.npending_nice);
        ck_assert_int_eq(ctl_cancel(&st, nice, 0, 1500, err), 0);
        ck_assert(!st.npending_nice);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        st.cfg.depts = NULL;
}
END_TEST

/* In the fair order a job waiting for its begin time joins its department's blocked head, whose
 * earliest begin time stays the controller's next: once it comes, the job starts. */
START_TEST(a_begin_time_in_a_departments_blocked_head_still_comes) {
        dept v[2];
        depts d;
        fair_case(_i, v, &d, 1, 4000);
        int64_t begin = at(1000).real_usec + 3600000000;
        uint64_t later = submit_spec(
                (job_spec){ .group = strdup("a"), .req = { .mcpu = 1000, .mem = MiB }, .begin_usec = begin });
        ck_assert_int_eq(ctl_schedule(&st), 0);
        uint32_t da = ctl_find_job(&st, later)->fair_dept - 1;
        ck_assert_uint_eq(st.dept_head[da].nblocked, 1);
        submit_group(1000, "u", "b");
        ck_assert_int_eq(ctl_schedule(&st), 1); /* b's, a's head not read */
        ck_assert_int_eq(st.next_begin_usec, begin);
        ctl_wait_tick(&st, begin + 1);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_find_job(&st, later)->state, JOB_RUNNING);
        st.cfg.depts = NULL;
}
END_TEST

/* A pass in the fair order reads each department's pending jobs from the sets the state keeps
 * as jobs come and go: through submissions to three departments (one capped), ends, cancels,
 * holds, updates and passes in any sequence, it places what a pass over sets made afresh from
 * the queue places (the reference reloads the departments before each pass), in strict FIFO
 * and EASY backfill, under H-DRF and DRF, and unwatched as the simulator runs (no reasons, no
 * reserved starts: passes that could place nothing skipped), and with running limits per user
 * and department against a reference that reads the whole order (its EASY offered every job
 * the list's filters keep), and without a cap against such a reference (a nice value then has
 * passes read the order a job at a time, each place of a user's going to their next job by nice
 * value that its array's throttle leaves); the nodes hold dozens of jobs, so that passes place windows after windows.
 */
START_TEST(fair_passes_read_the_departments_as_kept) {
        static const ctl_actions logged = { no_persist, log_launch, rec_cancel, no_end, rec_drop, NULL, NULL };
        static launch_log got, want;
        dept v[] = { { .path = "a", .weight = 2, .cap = 1, .leaf = true },
                     { .path = "b", .weight = 1, .cap = 0.5, .leaf = true },
                     { .path = "c", .weight = 1, .cap = 1, .leaf = true } };
        depts d = { .v = v, .n = 3 };
        static const char *const groups[] = { "a", "b", "c", "none" };
        fair_algo algo = _i % 2 ? FAIR_DRF : FAIR_HDRF;
        ctl_state ref;
        ctl_state *both[2] = { &st, &ref };
        ctl_config cfg = st.cfg;
        cfg.order = _i / 2 % 2 ? SCHED_BACKFILL : SCHED_STRICT_FIFO;
        cfg.max_pending = 100000;
        cfg.depts = &d;
        ctl_config unwatched = cfg;
        unwatched.unwatched = _i >= 4 && _i < 8; /* as the simulator runs it: the same placements */
        bool limits = _i >= 8 && _i < 12, whole_ref = _i >= 8;
        if (_i >= 12)
                v[1].cap = 1; /* no cap: a nice order is read a job at a time */
        if (limits) {
                cfg.max_running_per_user = unwatched.max_running_per_user = 5;
                cfg.max_running_per_dept = unwatched.max_running_per_dept = 7;
        }
        ctl_free(&st);
        ctl_init(&st, &unwatched, &logged, &got);
        ctl_init(&ref, &cfg, &logged, &want);
        got.len = want.len = 0;
        uint64_t seed = 29 + (uint64_t)_i;
        for (int k = 0; k < 2; k++)
                ck_assert_int_eq(ctl_set_depts(both[k], algo), 0);
        both_nodes(both, 12000, 6144 * MiB);
        for (int step = 0; step < 3000; step++) {
                uint64_t r = sched_rng_next(&seed), what = r % 16;
                job *j = nth_in(JOB_RUNNING, r >> 20);
                for (int k = 0; k < 2; k++) /* the clock, as the controller's timer ticks it */
                        ctl_wait_tick(both[k], step);
                if (what <= 6)
                        both_submit(both, groups[(r >> 40) % 4], r, step);
                else if (what <= 8 && j)
                        both_finish(both, j->id, step);
                else if (what == 9 && (j = nth_in(JOB_PENDING, r >> 20)))
                        both_cancel(both, j->id, step);
                else if (what == 10 && (j = nth_in(JOB_PENDING, r >> 20))) {
                        uint64_t id = j->id;
                        bool hold = !j->spec.hold;
                        for (int k = 0; k < 2; k++)
                                ck_assert_int_eq(ctl_hold(both[k], id, 0, hold, err), 0);
                } else if (what == 11 && (j = nth_in(JOB_PENDING, r >> 20)))
                        both_update_cpus(both, j->id, 250 * (int64_t)(1 + (r >> 8) % 8));
                else if (what >= 12 && (r >> 56) % 8 == 0) {            /* rare: many jobs wait for each pass */
                        ck_assert_int_eq(ctl_set_depts(&ref, algo), 0); /* its sets made afresh */
                        if (whole_ref) {
                                ctl_schedule_dirty(&ref);
                                ref.pending_choosy = true; /* the whole order, its list filtered */
                        }
                        ck_assert_int_eq(ctl_schedule(&st), ctl_schedule(&ref));
                        ck_assert_uint_eq(st.npending, ref.npending);
                }
        }
        ck_assert_uint_gt(got.len, 1000);
        ck_assert_str_eq(got.text, want.text);
        ctl_free(&ref);
        st.cfg.depts = NULL;
}
END_TEST

/* In the fair order, a requeued job goes back to its department's pending jobs in its id's
 * place, before the one a pass last found first there, and is the next of its department. */
START_TEST(a_requeued_job_is_its_departments_next_in_the_fair_order) {
        dept v[2];
        depts d;
        two_departments(v, &d, 1);
        (void)node("a", 1000, 1024 * MiB, NULL, 0);
        uint64_t rq = submit_to("a", 1000, true), a2 = submit_to("a", 1000, false), b1 = submit_to("b", 1000, false);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[0], rq);
        ctl_node *b = node("b", 1000, 1024 * MiB, NULL, 0);
        ck_assert_int_eq(ctl_schedule(&st), 1); /* b runs nothing: its job goes first */
        ck_assert_uint_eq(rec.launch_ids[1], b1);
        (void)ctl_node_heard(&st, b, at(1000 + 6000000));
        ctl_check_silence(&st, at(1000 + 6000000)); /* a times out: rq is pending again */
        ck_assert_int_eq(ctl_find_job(&st, rq)->state, JOB_PENDING);
        finish_ok(b, b1);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[2], rq); /* before a2, which was a's first */
        ck_assert_int_eq(ctl_find_job(&st, a2)->state, JOB_PENDING);
        st.cfg.depts = NULL;
}
END_TEST

/* A job submitted with requeue whose node times out goes back to pending, keeps its id, counts
 * one more attempt, keeps its place before later submissions, and runs again elsewhere. */
START_TEST(a_requeue_job_of_a_timed_out_node_runs_again) {
        ctl_node *a = node("a", 1000, 1024 * MiB, NULL, 0);
        uint64_t rq = submit_requeue(1000), plain = submit_as(0, 1000, MiB);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[0], rq);
        ctl_node *b = node("b", 1000, 1024 * MiB, NULL, 0);
        ck_assert_int_eq(ctl_schedule(&st), 1); /* plain goes to b */
        (void)ctl_node_heard(&st, b, at(1000 + 6000000));
        ctl_check_silence(&st, at(1000 + 6000000)); /* a times out */
        job *j = ctl_find_job(&st, rq);
        ck_assert_int_eq(j->state, JOB_PENDING);
        ck_assert_uint_eq(ctl_job_attempt(j), 2);
        ck_assert_ptr_null(j->node);
        ck_assert_int_eq(a->used.mcpu, 0);
        ck_assert_int_eq(rec.ended, 0); /* not terminal: nobody's wait is answered */
        ck_assert_uint_eq(st.npending, 1);
        ck_assert_ptr_eq(st.pending[0], j);
        finish_ok(b, plain);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[2], rq);
        ck_assert_str_eq(rec.launch_nodes[2], "b");
        finish_ok(b, rq);
        ck_assert_int_eq(j->state, JOB_COMPLETED);
        ck_assert_uint_eq(ctl_job_attempt(j), 2);
        ck_assert(strstr(rec.event_log, "requeued:1:a ") != NULL);
}
END_TEST

/* A restarted agent that found a job's shepherd gone (killed with the agent before it
 * recorded the job's end) reports the job lost: it ends as a timed-out node's job would, and one
 * submitted with requeue is pending again as its next attempt. */
START_TEST(a_job_its_agent_reports_lost_ends_as_a_timed_out_nodes_would) {
        ctl_node *a = node("a", 2000, 1024 * MiB, NULL, 0);
        uint64_t plain = submit_as(0, 1000, MiB), rq = submit_requeue(1000);
        ck_assert_int_eq(ctl_schedule(&st), 2);
        job_result lost_plain = { .error = strdup("exit status lost: shepherd 7 ended without recording it") };
        ck_assert_int_eq(ctl_job_finished(&st, a, plain, JOB_LOST, &lost_plain, 3000), 0);
        job *p = ctl_find_job(&st, plain);
        ck_assert_int_eq(p->state, JOB_LOST);
        ck_assert_str_eq(p->result.error, "exit status lost: shepherd 7 ended without recording it");
        job_result lost_rq = { .error = strdup("exit status lost: shepherd 8 ended without recording it") };
        ck_assert_int_eq(ctl_job_finished(&st, a, rq, JOB_LOST, &lost_rq, 3000), 0);
        job *j = ctl_find_job(&st, rq);
        ck_assert_int_eq(j->state, JOB_PENDING);
        ck_assert_uint_eq(ctl_job_attempt(j), 2);
        ck_assert(strstr(j->result.error, "shepherd 8 ended without recording it") != NULL);
        ck_assert_int_eq(a->used.mcpu, 0);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_str_eq(rec.launch_nodes[rec.launched - 1], "a");
        ck_assert_uint_eq(rec.launch_ids[rec.launched - 1], rq);
}
END_TEST

/* Node a runs a requeue job, times out (the job is pending again), and its agent comes back
 * still running the first attempt, listed in its hello: a stray. Returns a; *rq is the job. */
static ctl_node *stray_of_a_returning_node(uint64_t *rq) {
        ctl_node *a = node("a", 1000, 1024 * MiB, NULL, 0);
        *rq = submit_requeue(500);
        ctl_schedule(&st);
        ctl_node_disconnected(&st, a);
        ctl_check_silence(&st, at(1000 + 6000000));
        ck_assert_int_eq(ctl_find_job(&st, *rq)->state, JOB_PENDING);
        (void)ctl_node_heard(&st, a, at(1000 + 7000000));
        ck_assert_ptr_eq(node("a", 1000, 1024 * MiB, rq, 1), a);
        return a;
}

/* An agent that comes back listing a requeued job still runs its first attempt: the job is not
 * placed anywhere until that run's end is reported, then it runs once more. */
START_TEST(a_requeued_job_still_running_on_its_old_node_is_held_until_it_ends) {
        uint64_t rq;
        ctl_node *a = stray_of_a_returning_node(&rq);
        ck_assert(!ctl_job_runs_on(&st, a, rq)); /* the caller cancels it as a stray */
        ck_assert_uint_eq(a->nstrays, 1);
        ck_assert(ctl_node_has_stray(a, rq));
        ck_assert(!ctl_node_has_stray(a, rq + 1));
        ctl_node *b = node("b", 1000, 1024 * MiB, NULL, 0);
        (void)b;
        ck_assert_int_eq(ctl_schedule(&st), 0); /* held while a still runs it */
        job_result res = { .signal = 15 };
        ck_assert_int_eq(ctl_job_finished(&st, a, rq, JOB_CANCELLED, &res, 8000000), -ENOENT);
        ck_assert_uint_eq(a->nstrays, 0);
        ck_assert(!ctl_node_has_stray(a, rq));
        ck_assert_uint_eq(st.nstrays, 0);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_find_job(&st, rq)->state, JOB_RUNNING);
}
END_TEST

/* The fair order ranks every pending job by its position in the queue; a held job is left out
 * only after that, so the jobs offered are the right ones. */
START_TEST(a_held_job_is_left_out_after_the_fair_order) {
        dept v[] = { { .path = "a", .weight = 1, .cap = 1, .leaf = true } };
        depts d = { .v = v, .n = 1 };
        st.cfg.depts = &d;
        ck_assert_int_eq(ctl_set_depts(&st, FAIR_MCH), 0);
        uint64_t rq;
        (void)stray_of_a_returning_node(&rq);
        uint64_t plain = submit_as(0, 500, MiB);
        (void)node("b", 1000, 1024 * MiB, NULL, 0);
        int launches = rec.launched;
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(rec.launch_ids[launches], plain);
        ck_assert_int_eq(ctl_find_job(&st, rq)->state, JOB_PENDING);
        ck_assert_int_eq(ctl_set_depts(&st, -1), 0);
        st.cfg.depts = NULL;
}
END_TEST

/* An agent that lists a stray and then vanishes for good releases the job it held when its
 * node times out. */
START_TEST(a_stray_of_a_node_that_never_returns_is_forgotten_at_its_timeout) {
        uint64_t rq;
        ctl_node *a = stray_of_a_returning_node(&rq);
        ctl_node_disconnected(&st, a);
        ctl_node *b = node("b", 1000, 1024 * MiB, NULL, 0);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        (void)ctl_node_heard(&st, b, at(1000 + 13000000));
        ctl_check_silence(&st, at(1000 + 13000000));
        ck_assert_uint_eq(st.nstrays, 0);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_str_eq(ctl_find_job(&st, rq)->node, "b");
}
END_TEST

/* An agent that comes back without a requeue job (its launch never arrived) gets it requeued
 * after the window, not lost; a plain job beside it is lost. */
START_TEST(a_requeue_job_the_agent_came_back_without_is_requeued) {
        ctl_node *a = node("a", 2000, 1024 * MiB, NULL, 0);
        uint64_t rq = submit_requeue(500), plain = submit_as(0, 500, MiB);
        ctl_schedule(&st);
        ctl_node_disconnected(&st, a);
        ck_assert_ptr_eq(node("a", 2000, 1024 * MiB, NULL, 0), a);
        (void)ctl_node_heard(&st, a, at(1000 + 5000001));
        ctl_check_silence(&st, at(1000 + 5000001));
        ck_assert_int_eq(ctl_find_job(&st, plain)->state, JOB_LOST);
        job *j = ctl_find_job(&st, rq);
        ck_assert_int_eq(j->state, JOB_PENDING);
        ck_assert(strstr(j->result.error, "came back without it") != NULL);
        ck_assert_int_eq(ctl_schedule(&st), 1); /* the agent does not run it: no hold */
        ck_assert_uint_eq(ctl_job_attempt(j), 2);
}
END_TEST

/* A job the reconnecting agent did not list, launched again, is confirmed by its start: the
 * window passes without losing it. */
START_TEST(an_unlisted_job_that_starts_after_the_hello_is_kept) {
        ctl_node *a = node("a", 1000, 1024 * MiB, NULL, 0);
        uint64_t id = submit_as(0, 500, MiB);
        ctl_schedule(&st);
        ctl_node_disconnected(&st, a);
        ck_assert_ptr_eq(node("a", 1000, 1024 * MiB, NULL, 0), a);
        ck_assert_uint_eq(a->nunconfirmed, 1);
        ck_assert_int_eq(ctl_job_started(&st, a, id, 2000), 0);
        ck_assert_uint_eq(a->nunconfirmed, 0);
        (void)ctl_node_heard(&st, a, at(1000 + 5000001));
        ctl_check_silence(&st, at(1000 + 5000001));
        ck_assert_int_eq(ctl_find_job(&st, id)->state, JOB_RUNNING);
}
END_TEST

/* A start reported again (an agent after a welcome: the first may have died unread) is the
 * first's: one event, one store, the first start time; it still confirms an unlisted job. */
START_TEST(a_start_reported_twice_is_recorded_once) {
        ctl_node *a = node("a", 1000, 1024 * MiB, NULL, 0);
        uint64_t id = submit_as(0, 500, MiB);
        ctl_schedule(&st);
        ck_assert_int_eq(ctl_job_started(&st, a, id, 2000), 0);
        ctl_node_disconnected(&st, a);
        ck_assert_ptr_eq(node("a", 1000, 1024 * MiB, NULL, 0), a);
        ck_assert_uint_eq(a->nunconfirmed, 1);
        int persisted = rec.persisted, events = rec.events;
        ck_assert_int_eq(ctl_job_started(&st, a, id, 3000), 0);
        ck_assert_uint_eq(a->nunconfirmed, 0);
        ck_assert_int_eq(rec.events, events);
        ck_assert_int_eq(rec.persisted, persisted);
        ck_assert_int_eq(ctl_find_job(&st, id)->start_usec, 2000);
        ck_assert_ptr_eq(strstr(strstr(rec.event_log, "started:") + 1, "started:"), NULL);
}
END_TEST

/* Every transition is an event, and a job's event is followed by the store of that job. */
START_TEST(transitions_are_events_stored_with_their_job) {
        ctl_node *a = node("a", 1000, 1024 * MiB, NULL, 0);
        uint64_t id = submit_as(0, 1000, MiB);
        ctl_schedule(&st);
        ck_assert_int_eq(ctl_job_started(&st, a, id, 1500), 0);
        finish_ok(a, id);
        ctl_node_disconnected(&st, a);
        ck_assert_str_eq(rec.event_log, "node-up:0:a submitted:1:- placed:1:a started:1:a completed:1:a "
                                        "node-disconnected:0:a ");
        ck_assert_int_eq(rec.persisted_after_job_event, 4);
        ck_assert(!rec.job_event_unpersisted);
}
END_TEST

/* One job of uid in group (NULL: none); its id, or 0 with err set. */
static uint64_t submit_in(uid_t uid, const char *group) {
        job_spec spec = { .argv = calloc(2, sizeof(char *)),
                          .cwd = strdup("/tmp"),
                          .name = strdup("g"),
                          .group = group ? strdup(group) : NULL,
                          .req = { .mcpu = 1000, .mem = MiB } };
        spec.argv[0] = strdup("/bin/true");
        uint64_t id = 0;
        int r = ctl_submit(&st, uid, uid, "someone", &spec, 1000, &id, err);
        job_spec_free(&spec);
        return r < 0 ? 0 : id;
}

START_TEST(per_user_and_per_department_caps_hold_one_user_and_not_the_others) {
        st.cfg.max_pending_per_user = 3;
        st.cfg.max_pending_per_dept = 4;
        uint64_t a[3];
        for (int i = 0; i < 3; i++)
                ck_assert_uint_ne(a[i] = submit_in(1000, "phys/theory"), 0);
        ck_assert_uint_eq(submit_in(1000, NULL), 0);
        ck_assert_str_eq(err, "queue full for user someone: 3 jobs pending (max_pending_per_user = 3)");
        ck_assert_uint_eq(submit_array(2, 100), 0); /* uid 1000 too: an array is refused whole */
        ck_assert_ptr_nonnull(strstr(err, "an array of 2 would pass max_pending_per_user (3): none submitted"));
        ck_assert_uint_ne(submit_in(2000, "phys/exp"), 0); /* another user: the same department */
        ck_assert_uint_eq(submit_in(3000, "phys"), 0);     /* the department's fifth */
        ck_assert_str_eq(err, "queue full for department phys: 4 jobs pending (max_pending_per_dept = 4)");
        ck_assert_uint_ne(submit_in(3000, "bio"), 0);
        ck_assert_uint_ne(submit_in(3000, "physics"), 0); /* not phys: whole names */

        ck_assert_int_eq(ctl_cancel(&st, a[0], 1000, 1500, err), 0); /* a cancel gives room back */
        ck_assert_uint_ne(submit_in(1000, NULL), 0);
        ck_assert_uint_eq(submit_in(1000, NULL), 0);
        node("a", 1000, 1024 * MiB, NULL, 0);
        ck_assert_int_eq(ctl_schedule(&st), 1); /* so does a start (a[1]) */
        ck_assert_int_eq(ctl_find_job(&st, a[1])->state, JOB_RUNNING);
        ck_assert_uint_ne(submit_in(1000, NULL), 0);
        ck_assert_uint_eq(submit_in(1000, NULL), 0);
}
END_TEST

START_TEST(an_array_made_in_slices_is_numbered_and_stored_slice_by_slice) {
        job_spec spec = { .argv = calloc(2, sizeof(char *)),
                          .cwd = strdup("/tmp"),
                          .name = strdup("s"),
                          .req = { .mcpu = 100, .mem = MiB } };
        spec.argv[0] = strdup("/bin/true");
        ctl_array a;
        ck_assert_int_eq(ctl_array_begin(&st, 1000, 1000, "u", &spec, 10, 1000, &a, err), 0);
        ck_assert_ptr_null(spec.argv); /* taken */
        ck_assert_int_eq(ctl_array_more(&st, &a, 4, err), 0);
        ck_assert_int_eq(rec.persisted, 4);
        ck_assert_uint_eq(st.njobs, 4);
        ck_assert_int_eq(ctl_array_more(&st, &a, 4, err), 0);
        ck_assert_int_eq(ctl_array_more(&st, &a, 4, err), 1);
        ck_assert_int_eq(rec.persisted, 10);
        for (size_t i = 0; i < 10; i++) {
                ck_assert_uint_eq(st.jobs[i]->id, a.first + i);
                ck_assert_uint_eq(st.jobs[i]->array_first, a.first);
                ck_assert_str_eq(st.jobs[i]->spec.argv[0], "/bin/true");
        }
        uint64_t first = a.first;
        ctl_array_free(&a);
        ck_assert_uint_eq(submit_as(0, 100, MiB), first + 10); /* the next id follows */
        job_spec_free(&spec);
}
END_TEST

/* Another user's submission between an array's slices is made at once, numbered after the whole
 * array, whose ids and room below the caps were taken when it began; the array's later jobs
 * still go in their ids' place. */
START_TEST(a_submission_between_an_arrays_slices_is_made_at_once_after_its_ids) {
        job_spec spec = { .argv = calloc(2, sizeof(char *)),
                          .cwd = strdup("/tmp"),
                          .name = strdup("s"),
                          .req = { .mcpu = 100, .mem = MiB } };
        spec.argv[0] = strdup("/bin/true");
        st.cfg.max_pending = 12;
        ctl_array a;
        ck_assert_int_eq(ctl_array_begin(&st, 1000, 1000, "u", &spec, 10, 1000, &a, err), 0);
        ck_assert_int_eq(ctl_array_more(&st, &a, 4, err), 0);
        uint64_t c = submit_as(2000, 100, MiB);
        ck_assert_uint_eq(c, a.first + 10);
        ck_assert_uint_eq(submit_as(2000, 100, MiB), c + 1);
        ck_assert_uint_eq(submit_as(2000, 100, MiB), 0); /* 12: 6 of the array not made yet count */
        ck_assert_ptr_nonnull(strstr(err, "queue full: 12 jobs pending (max_pending = 12)"));
        ck_assert_int_eq(ctl_array_more(&st, &a, 4, err), 0);
        ck_assert_int_eq(ctl_array_more(&st, &a, 4, err), 1);
        ck_assert_uint_eq(st.njobs, 12);
        for (size_t i = 0; i < st.njobs; i++)
                ck_assert_ptr_eq(ctl_find_job(&st, st.jobs[i]->id), st.jobs[i]);
        ck_assert_uint_eq(st.jobs[9]->id, a.first + 9);
        ck_assert_uint_eq(st.jobs[10]->id, c);
        ck_assert_uint_eq(st.npending, 12);
        ck_assert_uint_eq(st.nreserved, 0);
        check_indexes();
        /* a failed slice gives back the room of the jobs never made */
        ctl_array_free(&a);
        st.cfg.max_pending = 100;
        spec = (job_spec){ .argv = calloc(2, sizeof(char *)),
                           .cwd = strdup("/tmp"),
                           .name = strdup("s"),
                           .req = { .mcpu = 100, .mem = MiB } };
        spec.argv[0] = strdup("/bin/true");
        ck_assert_int_eq(ctl_array_begin(&st, 1000, 1000, "u", &spec, 50, 1000, &a, err), 0);
        ck_assert_uint_eq(st.nreserved, 50);
        rec.fail_persist = 1;
        ck_assert_int_lt(ctl_array_more(&st, &a, 4, err), 0);
        rec.fail_persist = 0;
        ck_assert_uint_eq(st.nreserved, 0);
        ck_assert_uint_eq(submit_as(1000, 100, MiB), a.first + 50); /* its ids stay skipped */
        ctl_array_free(&a);
        job_spec_free(&spec);
}
END_TEST

START_TEST(a_bulk_cancel_ends_what_it_names_and_counts_the_rest) {
        ctl_node *n = node("a", 1000, 1024 * MiB, NULL, 0);
        uint64_t runner = submit_as(1000, 1000, MiB); /* runs */
        uint64_t arr = submit_array(6, 100);          /* uid 1000, pending */
        uint64_t other = submit_as(2000, 100, MiB);   /* another user's */
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ctl_cancel_counts counts = { 0 };
        uint64_t cursor = 1;
        /* by ranges, as uid 1000: 2 of the array and the other user's, refused */
        uint64_t ranges[] = { arr, arr + 1, other, other };
        ctl_cancel_filter f = { .uid = -1, .ranges = ranges, .nranges = 2, .state = -1 };
        ck_assert_int_eq(ctl_cancel_some(&st, &f, 1000, 1500, &cursor, 100, &counts), 1);
        ck_assert_uint_eq(counts.cancelled, 2);
        ck_assert_uint_eq(counts.refused, 1);
        ck_assert_int_eq(ctl_find_job(&st, arr + 1)->state, JOB_CANCELLED);
        ck_assert_int_eq(ctl_find_job(&st, arr + 2)->state, JOB_PENDING);
        ck_assert_int_eq(ctl_find_job(&st, other)->state, JOB_PENDING);
        /* by array, a slice of 2 looked at per call: the rest of it, nothing beyond */
        f = (ctl_cancel_filter){ .uid = -1, .array = arr, .state = -1 };
        counts = (ctl_cancel_counts){ 0 };
        cursor = 1;
        int calls = 1;
        while (ctl_cancel_some(&st, &f, 0, 1600, &cursor, 2, &counts) == 0)
                calls++;
        ck_assert_int_ge(calls, 3);
        ck_assert_uint_eq(counts.cancelled, 4);
        ck_assert_int_eq(ctl_find_job(&st, arr + 5)->state, JOB_CANCELLED);
        ck_assert_int_eq(ctl_find_job(&st, other)->state, JOB_PENDING);
        /* by user and state: the running job only, its agent asked */
        f = (ctl_cancel_filter){ .uid = 1000, .state = JOB_RUNNING };
        counts = (ctl_cancel_counts){ 0 };
        cursor = 1;
        ck_assert_int_eq(ctl_cancel_some(&st, &f, 1000, 1700, &cursor, 100, &counts), 1);
        ck_assert_uint_eq(counts.stopping, 1);
        ck_assert_uint_eq(counts.cancelled, 0);
        ck_assert_uint_eq(rec.cancelled, 1);
        ck_assert_int_eq(ctl_find_job(&st, runner)->state, JOB_RUNNING);
        /* the queue keeps its order and drops the cancelled at the next pass */
        ck_assert_uint_eq(st.npending - st.nstale, 1);
        ctl_schedule(&st);
        ck_assert_uint_eq(st.npending, 1);
        ck_assert_uint_eq(st.pending[0]->id, other);
        finish_ok(n, runner);
}
END_TEST

/* Whether j has a live (member) entry in s, and s is in id order with nstale stale entries. */
static bool indexed_in(const ctl_idset *s, const job *j) {
        size_t stale = 0;
        bool found = false;
        for (size_t i = 0; i < s->n; i++) {
                const job *e = s->v[i];
                bool member = s->state < 0 ? !job_state_is_terminal(e->state) : (int)e->state == s->state;
                ck_assert(i == 0 || s->v[i - 1]->id < e->id);
                stale += !member;
                found |= e == j && member;
        }
        ck_assert_uint_eq(stale, s->nstale);
        return found;
}

/* Every job is in the index of its state and in its user's live jobs exactly when it is live, and
 * found by its id. */
static void check_indexes(void) {
        for (size_t i = 0; i < st.njobs; i++) {
                const job *j = st.jobs[i];
                const ctl_idset *u = NULL;
                for (size_t k = 0; k < st.nusers; k++)
                        if (st.users[k].uid == j->uid)
                                u = &st.users[k].live;
                ck_assert_int_eq(indexed_in(&st.pending_ids, j), j->state == JOB_PENDING);
                ck_assert_int_eq(indexed_in(&st.running_ids, j), j->state == JOB_RUNNING);
                ck_assert_int_eq(u && indexed_in(u, j), !job_state_is_terminal(j->state));
                ck_assert_ptr_eq(ctl_find_job(&st, j->id), j); /* the jobs by id hold every job, and only them */
        }
        ck_assert_uint_eq(st.byid.n, st.njobs);
}

/* The indexes bulk cancels walk follow submit, restore, place, end, cancel and requeue. */
START_TEST(the_indexes_follow_every_transition) {
        job *r = calloc(1, sizeof(*r)), *p = calloc(1, sizeof(*p)), *t = calloc(1, sizeof(*t));
        *r = (job){ .id = 5,
                    .uid = 3000,
                    .state = JOB_RUNNING,
                    .node = strdup("a"),
                    .spec = { .req = { .mcpu = 500, .mem = MiB } } };
        *p = (job){ .id = 6, .uid = 3000, .state = JOB_PENDING, .spec = { .req = { .mcpu = 500, .mem = MiB } } };
        *t = (job){ .id = 7, .uid = 3000, .state = JOB_COMPLETED };
        ck_assert_int_eq(ctl_restore(&st, r, at(1000)), 0);
        ck_assert_int_eq(ctl_restore(&st, p, at(1000)), 0);
        ck_assert_int_eq(ctl_restore(&st, t, at(1000)), 0);
        check_indexes();
        ctl_node *a = node("a", 2000, 1024 * MiB, (uint64_t[]){ 5 }, 1);
        uint64_t rq = submit_requeue(1000), plain = submit_as(1000, 500, MiB), arr = submit_array(5, 100);
        check_indexes();
        ck_assert_int_gt(ctl_schedule(&st), 0); /* placed: pending to running */
        check_indexes();
        finish_ok(a, 5);
        check_indexes();
        ck_assert_int_eq(ctl_cancel(&st, arr + 1, 0, 1500, err), 0);
        ck_assert_int_eq(ctl_cancel(&st, arr + 3, 0, 1500, err), 0);
        check_indexes();
        ctl_schedule(&st);
        check_indexes();
        /* a times out: the requeue job is pending again, in its place, the others lost */
        ctl_check_silence(&st, at(1000 + 6000000));
        ck_assert_int_eq(ctl_find_job(&st, rq)->state, JOB_PENDING);
        check_indexes();
        ctl_node *b = node("b", 4000, 1024 * MiB, NULL, 0);
        ctl_schedule(&st);
        ck_assert_int_eq(ctl_find_job(&st, rq)->state, JOB_RUNNING);
        check_indexes();
        /* the others end one by one, stale entries compacted on the way */
        for (size_t i = 0; i < st.njobs; i++)
                if (st.jobs[i]->state == JOB_RUNNING)
                        finish_ok(b, st.jobs[i]->id);
                else if (st.jobs[i]->state == JOB_PENDING)
                        ck_assert_int_eq(ctl_cancel(&st, st.jobs[i]->id, 0, 1500, err), 0);
        check_indexes();
        ck_assert_uint_eq(st.pending_ids.n - st.pending_ids.nstale, 0);
        ck_assert_uint_eq(st.running_ids.n - st.running_ids.nstale, 0);
        (void)plain;
}
END_TEST

/* A cancel by user looks at that user's live jobs only: 10 jobs among 100,000 pending of
 * another user, and 10 running among them by state. */
START_TEST(a_bulk_cancel_by_user_or_state_looks_at_the_jobs_it_ends_only) {
        static const ctl_actions quiet = { rec_persist, no_launch, rec_cancel, no_end, rec_drop, NULL, NULL };
        st.act = &quiet;
        st.cfg.max_pending = 200000;
        node("a", 10000, 1024 * MiB, NULL, 0);
        uint64_t mine[10];
        for (int i = 0; i < 10; i++)
                mine[i] = submit_as(2000, 1000, MiB); /* fill the node: these run */
        ck_assert_int_eq(ctl_schedule(&st), 10);
        ck_assert_uint_ne(submit_array(100000, 100), 0); /* uid 1000's, pending */
        for (int i = 0; i < 10; i++)
                ck_assert_uint_ne(submit_as(3000, 100, MiB), 0);
        size_t listed = 0; /* what `colony queue --user` walks */
        for (job *j = ctl_next_live(&st, 3000, 1); j; j = ctl_next_live(&st, 3000, j->id + 1))
                listed += j->uid == 3000 && j->state == JOB_PENDING;
        ck_assert_uint_eq(listed, 10);
        ck_assert_uint_eq(ctl_next_live(&st, -1, 1)->id, mine[0]);
        ctl_cancel_counts counts = { 0 };
        uint64_t cursor = 1;
        ctl_cancel_filter f = { .uid = 3000, .state = -1 };
        ck_assert_int_eq(ctl_cancel_some(&st, &f, 3000, 1500, &cursor, 1000, &counts), 1);
        ck_assert_uint_eq(counts.cancelled, 10);
        ck_assert_uint_le(st.cancel_visits, 10);
        /* root's cancel of the running jobs, by state */
        f = (ctl_cancel_filter){ .uid = -1, .state = JOB_RUNNING };
        counts = (ctl_cancel_counts){ 0 };
        cursor = 1;
        st.cancel_visits = 0;
        ck_assert_int_eq(ctl_cancel_some(&st, &f, 0, 1500, &cursor, 1000, &counts), 1);
        ck_assert_uint_eq(counts.stopping, 10);
        ck_assert_uint_le(st.cancel_visits, 10);
        ck_assert_uint_eq(mine[9], mine[0] + 9);
}
END_TEST

/* An array of 1,000 is its first 256 tasks and a record of the rest: a task named alone is made
 * in its id's place, before a job submitted after the array; a bulk cancel by ids ends the
 * tasks not made that it names (another user's cancel is refused them), one by the array all
 * that are left; one of them named later shows cancelled. */
START_TEST(an_array_past_the_window_waits_in_its_record) {
        static const ctl_actions quiet = { rec_persist, no_launch, rec_cancel, no_end, rec_drop, NULL, NULL };
        st.act = &quiet; /* 1,000 ends: more than rec's list holds */
        st.cfg.max_pending = 10000;
        uint64_t first = submit_array(1000, 100), plain = submit_as(1000, 100, MiB);
        ck_assert_uint_eq(plain, first + 1000);
        ck_assert_uint_eq(st.npending, 257);
        ck_assert_uint_eq(st.nreserved, 744);
        ck_assert_uint_eq(ctl_user_tally(&st, 1000)->pending, 1001);
        ck_assert_ptr_null(ctl_find_job(&st, first + 900));
        const job *j = ctl_job_named(&st, first + 900);
        ck_assert_ptr_nonnull(j);
        ck_assert_uint_eq(j->array_index, 900);
        ck_assert_ptr_eq(st.pending[256], j);
        ck_assert_uint_eq(st.pending[257]->id, plain);
        ck_assert_uint_eq(st.nreserved, 743);
        check_indexes();
        uint64_t ids[] = { first + 300, first + 309 }; /* ten tasks not made, by their ids */
        ctl_cancel_filter r = { .uid = -1, .ranges = ids, .nranges = 1, .state = -1 };
        ctl_cancel_counts counts = { 0 };
        uint64_t cursor = 1;
        ck_assert_int_eq(ctl_cancel_some(&st, &r, 1001, 2000, &cursor, 10000, &counts), 1);
        ck_assert_uint_eq(counts.refused, 10); /* another user's */
        cursor = 1;
        counts = (ctl_cancel_counts){ 0 };
        ck_assert_int_eq(ctl_cancel_some(&st, &r, 1000, 2000, &cursor, 10000, &counts), 1);
        ck_assert_uint_eq(counts.cancelled, 10);
        ck_assert_uint_eq(st.nreserved, 733);
        ck_assert_int_eq(ctl_job_named(&st, first + 305)->state, JOB_CANCELLED);
        ck_assert_int_eq(ctl_job_named(&st, first + 310)->state, JOB_PENDING);
        ctl_cancel_filter f = { .uid = -1, .array = first, .state = -1 };
        cursor = 1;
        counts = (ctl_cancel_counts){ 0 };
        ck_assert_int_eq(ctl_cancel_some(&st, &f, 1000, 2000, &cursor, 10000, &counts), 1);
        ck_assert_uint_eq(counts.cancelled, 990);
        ck_assert_uint_eq(st.nreserved, 0);
        ck_assert_uint_eq(ctl_user_tally(&st, 1000)->pending, 1);
        ck_assert_int_eq(ctl_job_named(&st, first + 500)->state, JOB_CANCELLED);
        ck_assert_int_eq(ctl_find_job(&st, plain)->state, JOB_PENDING);
        check_indexes();
}
END_TEST

START_TEST(a_strict_fifo_pass_goes_on_window_after_window_and_stops_where_a_full_pass_would) {
        static const ctl_actions quiet = { rec_persist, no_launch, rec_cancel, no_end, rec_drop, NULL, NULL };
        st.act = &quiet;
        st.cfg.max_pending = 10000;
        node("a", 250000, 8192 * MiB, NULL, 0); /* room for 2,500 of the jobs below */
        uint64_t first = submit_as(0, 100, MiB);
        for (int i = 1; i < 2600; i++)
                ck_assert_uint_eq(submit_as(0, 100, MiB), first + (uint64_t)i);
        ck_assert_int_eq(ctl_schedule(&st), 2500); /* three windows */
        ck_assert_uint_eq(st.npending, 100);
        ck_assert_uint_eq(st.pending[0]->id, first + 2500);
        ck_assert_int_eq(ctl_find_job(&st, first + 2499)->state, JOB_RUNNING);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_int_eq(ctl_cancel(&st, first + 2500, 0, 1500, err), 0);
        ck_assert_int_eq(ctl_schedule(&st), 0); /* the next fits nowhere either */
        ck_assert_uint_eq(st.npending, 99);
}
END_TEST

/* A job choosing its nodes (constraint, nodelist, exclude, exclusive): the policy sees only
 * those; one that no up, undrained node may take holds nothing behind it in strict FIFO; a
 * drained node takes nothing until resumed. */
static uint64_t submit_sel(const char *constraint, const char *nodelist, const char *exclude, bool exclusive) {
        job_spec spec = { .argv = calloc(2, sizeof(char *)),
                          .cwd = strdup("/tmp"),
                          .name = strdup("sel"),
                          .req = { .mcpu = 100, .mem = MiB },
                          .exclusive = exclusive,
                          .constraint = constraint ? strdup(constraint) : NULL,
                          .nodelist = nodelist ? strdup(nodelist) : NULL,
                          .exclude = exclude ? strdup(exclude) : NULL };
        spec.argv[0] = strdup("/bin/true");
        uint64_t id = 0;
        int r = ctl_submit(&st, 0, 0, "u", &spec, 1000, &id, err);
        job_spec_free(&spec);
        return r < 0 ? 0 : id;
}

static const char *placed_on(uint64_t id) {
        for (int i = 0; i < rec.launched; i++)
                if (rec.launch_ids[i] == id)
                        return rec.launch_nodes[i];
        return NULL;
}

START_TEST(jobs_choose_their_nodes_and_drained_nodes_take_none) {
        ctl_node *a = node("a", 4000, 1024 * MiB, NULL, 0), *b = node("b", 4000, 1024 * MiB, NULL, 0), *n;
        ck_assert_int_eq(ctl_node_set_features(&st, a, "ssd,avx512"), 0);
        ck_assert_int_eq(ctl_node_set_features(&st, b, "gpu"), 0);
        uint64_t gpu = submit_sel("gpu", NULL, NULL, false), both = submit_sel("ssd&avx512", NULL, NULL, false),
                 nvme = submit_sel("nvme", NULL, NULL, false), listed = submit_sel(NULL, "b", NULL, false),
                 excl = submit_sel(NULL, NULL, "a", false), plain = submit_sel(NULL, NULL, NULL, false);
        ck_assert_uint_eq(submit_sel(NULL, "a,nosuch", NULL, false), 0);
        ck_assert_str_eq(err, "nodelist: no node named nosuch");
        ctl_schedule(&st);
        ck_assert_str_eq(placed_on(gpu), "b");
        ck_assert_str_eq(placed_on(both), "a");
        ck_assert_ptr_null(placed_on(nvme)); /* pending, and behind it strict FIFO went on */
        ck_assert_str_eq(placed_on(listed), "b");
        ck_assert_str_eq(placed_on(excl), "b");
        ck_assert_str_eq(placed_on(plain), "a");

        /* exclusive: b is busy, a is not idle either: it waits; the job behind it too (FIFO) */
        uint64_t whole = submit_sel(NULL, NULL, NULL, true), after = submit_sel(NULL, "a", NULL, false);
        ctl_schedule(&st);
        ck_assert_ptr_null(placed_on(whole));
        finish_ok(a, both);
        finish_ok(a, plain);
        ctl_schedule(&st);
        ck_assert_str_eq(placed_on(whole), "a");
        ck_assert_ptr_null(placed_on(after)); /* nothing beside an exclusive job */
        finish_ok(a, whole);
        ctl_schedule(&st);
        ck_assert_str_eq(placed_on(after), "a");

        /* drain: no new job; resume: jobs again */
        ck_assert_int_eq(ctl_node_drain(&st, "a", "disk", &n), 0);
        ck_assert_ptr_eq(n, a);
        ck_assert_str_eq(ctl_node_state_name(a), "draining");
        uint64_t wait = submit_sel(NULL, "a", NULL, false), other = submit_sel(NULL, NULL, NULL, false);
        ctl_schedule(&st);
        ck_assert_ptr_null(placed_on(wait));
        ck_assert_str_eq(placed_on(other), "b"); /* the job waiting for a drained node blocks nothing */
        finish_ok(a, after);
        ck_assert_str_eq(ctl_node_state_name(a), "drained");
        ctl_schedule(&st);
        ck_assert_ptr_null(placed_on(wait));
        ck_assert_int_eq(ctl_node_resume(&st, a), 0);
        ck_assert_int_eq(ctl_node_resume(&st, a), -EALREADY);
        ctl_schedule(&st);
        ck_assert_str_eq(placed_on(wait), "a");
}
END_TEST

/* The pending queue keeps submission order while starts at its head advance the head
 * (ctl_compact_pending_range) and submissions reclaim the slots before it (ctl_pending_reserve). */
START_TEST(the_queue_keeps_its_order_as_its_head_moves_and_its_slots_return) {
        static const ctl_actions quiet = { rec_persist, no_launch, rec_cancel, no_end, rec_drop, NULL, NULL };
        st.act = &quiet;
        st.cfg.max_pending = 100000;
        ctl_node *n = node("a", 4000, 1024 * MiB, NULL, 0);
        size_t moved = 0, reclaimed = 0, last_head = 0;
        for (int round = 0; round < 300; round++) {
                for (int k = 0; k < 3 + round % 5; k++) /* 5 a round, 4 start: the queue grows */
                        ck_assert_uint_ne(submit_as(1000, 1000, MiB), 0);
                for (size_t i = 0; i < st.njobs; i++)
                        if (st.jobs[i]->state == JOB_RUNNING)
                                finish_ok(n, st.jobs[i]->id);
                ck_assert_int_gt(ctl_schedule(&st), 0);
                ck_assert(n->used.mcpu == 4000 || st.npending == 0);
                size_t pending = 0;
                for (size_t i = 0; i < st.njobs; i++)
                        pending += st.jobs[i]->state == JOB_PENDING;
                ck_assert_uint_eq(st.npending, pending);
                for (size_t i = 0; i < st.npending; i++) {
                        ck_assert_int_eq(st.pending[i]->state, JOB_PENDING);
                        ck_assert(i == 0 || st.pending[i - 1]->id < st.pending[i]->id);
                }
                ck_assert_uint_le(st.pending_head + st.npending, st.pending_cap);
                moved += st.pending_head > last_head;
                reclaimed += st.pending_head < last_head;
                last_head = st.pending_head;
        }
        ck_assert_uint_gt(moved, 0);
        ck_assert_uint_gt(reclaimed, 0);
}
END_TEST

static Suite *state_suite(void) {
        Suite *s = suite_create("state");
        TCase *tc = tcase_create("state");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, jobs_start_in_submission_order_as_capacity_frees);
        tcase_add_test(tc, max_jobs_chooses_over_the_whole_queue);
        tcase_add_test(tc, easy_reads_as_far_as_a_request_made_smaller);
        tcase_add_test(tc, easy_reads_the_tasks_of_an_arrays_record);
        tcase_add_test(tc, easy_reads_tasks_an_arrays_record_makes_after_the_floor_rose);
        tcase_add_test(tc, tasks_an_arrays_record_makes_with_a_nice_value_order_their_users_jobs);
        tcase_add_loop_test(tc, a_nice_order_is_read_only_as_far_as_a_pass_places, SCHED_STRICT_FIFO,
                            SCHED_RESERVE + 1);
        tcase_add_loop_test(tc, a_nice_order_beside_a_throttled_array_is_read_only_as_far_as_a_pass_places,
                            SCHED_STRICT_FIFO, SCHED_RESERVE + 1);
        tcase_add_test(tc, strict_fifo_in_a_nice_order_marks_its_blocker);
        tcase_add_loop_test(tc, a_users_held_jobs_are_not_read_again_in_a_nice_order, SCHED_STRICT_FIFO,
                            SCHED_RESERVE + 1);
        tcase_add_loop_test(tc, a_users_jobs_waiting_for_their_begin_time_are_not_read_again_in_a_nice_order,
                            SCHED_STRICT_FIFO, SCHED_RESERVE + 1);
        tcase_add_test(tc, a_job_requeued_into_a_nice_orders_head_is_read);
        tcase_add_test(tc, tasks_an_arrays_record_makes_keep_its_throttle);
        tcase_add_loop_test(tc, fair_passes_read_the_departments_as_kept, 0, 16);
        tcase_add_test(tc, a_requeued_job_is_its_departments_next_in_the_fair_order);
        tcase_add_test(tc, the_queue_keeps_its_order_as_its_head_moves_and_its_slots_return);
        tcase_add_test(tc, departments_take_turns_by_their_entitlement);
        tcase_add_loop_test(tc, a_capped_department_is_read_to_its_first_job_and_every_job_shows_the_cap, 0, 2);
        tcase_add_loop_test(tc, the_blocked_head_is_not_read_again_and_every_release_reaches_it, 0, 2);
        tcase_add_loop_test(tc, held_jobs_take_no_turn_in_the_fair_order_and_are_not_read_again, 0, 2);
        tcase_add_loop_test(tc, a_begin_time_in_a_departments_blocked_head_still_comes, 0, 2);
        tcase_add_test(tc, a_pass_past_the_blocked_head_keeps_its_throttles);
        tcase_add_test(tc, impossible_requests_are_refused_once_a_node_is_known);
        tcase_add_test(tc, a_failed_write_refuses_the_submission);
        tcase_add_test(tc, queue_cap);
        tcase_add_test(tc, an_array_is_numbered_in_order_and_shares_its_first_jobs_strings);
        tcase_add_test(tc, a_borrowing_submission_keeps_the_callers_strings_and_the_normal_path_owns_its_copies);
        tcase_add_test(tc, an_array_past_the_window_waits_in_its_record);
        tcase_add_test(tc, an_array_past_max_pending_or_a_failed_write_stores_none_of_it);
        tcase_add_test(tc, per_user_and_per_department_caps_hold_one_user_and_not_the_others);
        tcase_add_test(tc, an_array_made_in_slices_is_numbered_and_stored_slice_by_slice);
        tcase_add_test(tc, a_bulk_cancel_ends_what_it_names_and_counts_the_rest);
        tcase_add_test(tc, the_indexes_follow_every_transition);
        tcase_add_test(tc, a_submission_between_an_arrays_slices_is_made_at_once_after_its_ids);
        tcase_add_test(tc, a_bulk_cancel_by_user_or_state_looks_at_the_jobs_it_ends_only);
        tcase_add_test(tc, a_strict_fifo_pass_goes_on_window_after_window_and_stops_where_a_full_pass_would);
        tcase_add_loop_test(tc, a_settled_pass_places_what_a_full_pass_would, 0, 6 * _SCHED_HEURISTIC_MAX);
        tcase_add_test(tc, only_owner_or_root_may_cancel);
        tcase_add_test(tc, a_lost_node_loses_its_jobs_and_frees_nothing_twice);
        tcase_add_test(tc, reconnect_keeps_listed_jobs_and_loses_the_rest_after_the_window);
        tcase_add_test(tc, a_job_that_ended_while_apart_is_reported_after_the_hello);
        tcase_add_test(tc, silent_nodes_time_out);
        tcase_add_test(tc, a_wall_clock_jump_does_not_mark_nodes_down);
        tcase_add_test(tc, restored_running_jobs_wait_for_their_node);
        tcase_add_test(tc, a_disconnected_agents_jobs_wait_for_it_to_come_back);
        tcase_add_test(tc, a_disconnected_agent_that_stays_away_loses_its_jobs);
        tcase_add_test(tc, a_silent_node_is_not_responding_its_jobs_run_on_and_it_gets_no_new_ones);
        tcase_add_test(tc, a_not_responding_node_takes_a_new_hello_and_keeps_the_jobs_it_lists);
        tcase_add_test(tc, a_node_silent_past_the_lost_timeout_loses_or_requeues_its_jobs);
        tcase_add_test(tc, a_stall_of_the_controllers_own_loop_never_counts_as_an_agents_silence);
        tcase_add_test(tc, a_requeue_job_of_a_timed_out_node_runs_again);
        tcase_add_test(tc, a_job_its_agent_reports_lost_ends_as_a_timed_out_nodes_would);
        tcase_add_test(tc, a_requeued_job_still_running_on_its_old_node_is_held_until_it_ends);
        tcase_add_test(tc, a_held_job_is_left_out_after_the_fair_order);
        tcase_add_test(tc, a_requeue_job_the_agent_came_back_without_is_requeued);
        tcase_add_test(tc, a_stray_of_a_node_that_never_returns_is_forgotten_at_its_timeout);
        tcase_add_test(tc, transitions_are_events_stored_with_their_job);
        tcase_add_test(tc, an_unlisted_job_that_starts_after_the_hello_is_kept);
        tcase_add_test(tc, a_start_reported_twice_is_recorded_once);
        tcase_add_test(tc, the_view_follows_the_nodes_through_any_sequence);
        tcase_add_test(tc, a_pass_after_one_that_placed_nothing_sees_what_changed);
        tcase_add_test(tc, jobs_choose_their_nodes_and_drained_nodes_take_none);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(state_suite)
