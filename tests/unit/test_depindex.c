/* test_depindex.c - dependencies through the controller's state: the index decides a job's
 * dependents when it changes, ends the impossible ones (or keeps them), counts whole arrays, and
 * the pass filters and orders what may start (holds, begin times, nice, arrays' throttles);
 * arrays' tasks take the indexes Slurm's text names and resolve by them (controller/core/arrays.h). */
#include "check_main.h"
#include "arrays.h"
#include "state.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>

#define MiB ((int64_t)1 << 20)

static int launched;
static uint64_t launch_ids[64];

static int no_persist(void *u, const job *j) {
        (void)u, (void)j;
        return 0;
}

static void note_launch(void *u, ctl_node *n, const job *j) {
        (void)u, (void)n;
        launch_ids[launched++] = j->id;
}

static void no_cancel(void *u, ctl_node *n, const job *j, int grace_ms) { (void)u, (void)n, (void)j, (void)grace_ms; }

static void no_terminal(void *u, const job *j) { (void)u, (void)j; }

static const ctl_actions actions = {
        .persist = no_persist, .launch = note_launch, .cancel = no_cancel, .terminal = no_terminal
};
static ctl_state st;
static ctl_node *n;
static char err[PROTO_ERRLEN];

static void start(bool keep_invalid) {
        launched = 0;
        ctl_config cfg = { .policy = SCHED_FIRST_FIT,
                           .order = SCHED_STRICT_FIFO,
                           .max_pending = 1000,
                           .agent_timeout_usec = 5000000,
                           .node_lost_timeout_usec = 5000000,
                           .keep_invalid_depend = keep_invalid };
        ctl_init(&st, &cfg, &actions, NULL);
        ck_assert_int_eq(ctl_node_up(&st, "a", (res_t){ .mcpu = 1000, .mem = 1024 * MiB }, "v1", "/x", NULL, 0, NULL,
                                     (ctl_time){ 1000, 1000 }, &n, err),
                         0);
}

static void setup(void) { start(false); }

static void teardown(void) { ctl_free(&st); }

/* Submit (count: an array's size, 0 for one job) with dependency dep, uid and nice; returns the
 * (first) id or -errno. */
static int64_t submit(const char *dep, size_t count, uid_t uid, int nice, int64_t mcpu) {
        job_spec spec = { .argv = calloc(2, sizeof(char *)),
                          .cwd = strdup("/tmp"),
                          .name = strdup("j"),
                          .req = { .mcpu = mcpu, .mem = MiB },
                          .dependency = dep ? strdup(dep) : NULL,
                          .nice = nice };
        spec.argv[0] = strdup("/bin/true");
        uint64_t id = 0;
        int r = ctl_submit_array(&st, uid, uid, "u", &spec, count, NULL, 1000, &id, err);
        job_spec_free(&spec);
        return r < 0 ? r : (int64_t)id;
}

static void end(uint64_t id, job_state state) {
        job_result res = { 0 };
        ck_assert_int_eq(ctl_job_finished(&st, n, id, state, &res, 2000), 0);
}

static job_state state_of(uint64_t id) { return ctl_find_job(&st, id)->state; }

START_TEST(a_chain_runs_in_order_and_a_failure_cancels_the_rest) {
        int64_t a = submit(NULL, 0, 1, 0, 100), b = submit("afterok:1", 0, 1, 0, 100);
        int64_t c = submit("afterok:2", 0, 1, 0, 100), any = submit("afterany:2", 0, 1, 0, 100);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(launch_ids[0], (uint64_t)a);
        ck_assert_int_eq(ctl_find_job(&st, (uint64_t)b)->wait, JOB_WAIT_DEPENDENCY);
        end((uint64_t)a, JOB_COMPLETED);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(launch_ids[1], (uint64_t)b);
        end((uint64_t)b, JOB_FAILED);
        ck_assert_int_eq(state_of((uint64_t)c), JOB_CANCELLED);
        ck_assert_str_eq(ctl_find_job(&st, (uint64_t)c)->result.error,
                         "dependency afterok:2 can never be met: job 2 did not complete");
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(launch_ids[2], (uint64_t)any);
        ck_assert_uint_eq(st.deps.recs.n, 0); /* every record decided and dropped */
}
END_TEST

START_TEST(a_cancel_cascades_down_a_long_chain) {
        char dep[32];
        ck_assert_int_eq(submit(NULL, 0, 1, 0, 100), 1); /* no pass: it stays pending */
        for (int i = 2; i <= 500; i++) {
                snprintf(dep, sizeof(dep), "afterok:%d", i - 1);
                ck_assert_int_eq(submit(dep, 0, 1, 0, 100), i);
        }
        ck_assert_int_eq(ctl_cancel(&st, 1, 1, 3000, err), 0);
        for (uint64_t i = 2; i <= 500; i++)
                ck_assert_int_eq(state_of(i), JOB_CANCELLED);
        ck_assert_uint_eq(st.deps.recs.n, 0);
}
END_TEST

START_TEST(a_whole_array_is_waited_for) {
        int64_t first = submit(NULL, 3, 1, 0, 300);
        int64_t w = submit("afterok:1", 0, 1, 0, 100), nw = submit("afternotok:1", 0, 1, 0, 100);
        ck_assert_int_eq(first, 1);
        ck_assert_int_eq(ctl_schedule(&st), 3);
        end(1, JOB_COMPLETED);
        end(2, JOB_COMPLETED);
        ck_assert_uint_eq(ctl_find_job(&st, (uint64_t)w)->deps_unmet, 1);
        end(3, JOB_COMPLETED);
        ck_assert_uint_eq(ctl_find_job(&st, (uint64_t)w)->deps_unmet, 0);
        ck_assert_int_eq(state_of((uint64_t)nw), JOB_CANCELLED); /* every member completed */
        ck_assert_str_eq(ctl_find_job(&st, (uint64_t)nw)->result.error,
                         "dependency afternotok:1 can never be met: all of array 1's 3 jobs completed");
}
END_TEST

START_TEST(unknown_and_impossible_dependencies_are_refused) {
        ck_assert_int_eq(submit("afterok:9", 0, 1, 0, 100), -ENOENT);
        ck_assert_str_eq(err, "dependency afterok:9: no job 9");
        ck_assert_int_eq(submit(NULL, 0, 1, 0, 100), 1);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        end(1, JOB_FAILED);
        ck_assert_int_eq(submit("afterok:1", 0, 1, 0, 100), -EINVAL);
        ck_assert_int_eq(submit(NULL, 0, 1, -1, 100), -EPERM); /* a negative nice is root's */
        ck_assert_uint_eq(st.njobs, 1);                        /* nothing made */
}
END_TEST

START_TEST(kill_invalid_depend_no_keeps_the_job_pending) {
        teardown();
        start(true);
        ck_assert_int_eq(submit(NULL, 0, 1, 0, 100), 1);
        ck_assert_int_eq(submit("afterok:1", 0, 1, 0, 100), 2);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        end(1, JOB_FAILED);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_int_eq(state_of(2), JOB_PENDING);
        ck_assert_int_eq(ctl_find_job(&st, 2)->wait, JOB_WAIT_DEP_NEVER);
}
END_TEST

START_TEST(held_jobs_wait_until_released) {
        ck_assert_int_eq(submit(NULL, 0, 1, 0, 100), 1);
        ck_assert_int_eq(ctl_hold(&st, 1, 2, true, err), -EPERM);
        ck_assert_int_eq(ctl_hold(&st, 1, 1, true, err), 0);
        ck_assert_int_eq(ctl_hold(&st, 1, 1, true, err), -EALREADY);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_int_eq(ctl_find_job(&st, 1)->wait, JOB_WAIT_HELD);
        ck_assert_int_eq(ctl_update(&st, 1, 1, &(ctl_update_req){ 5000, -1, INT_MIN, INT64_MIN, -1 }, err), -E2BIG);
        ck_assert_int_eq(ctl_update(&st, 1, 1, &(ctl_update_req){ 200, -1, INT_MIN, INT64_MIN, -1 }, err), 0);
        ck_assert_int_eq(ctl_update(&st, 1, 1, &(ctl_update_req){ -1, -1, INT_MIN, 60000000, -1 }, err), 0);
        ck_assert_int_eq(ctl_find_job(&st, 1)->spec.time_limit_usec, 60000000);
        ck_assert_int_eq(ctl_find_job(&st, 1)->spec.req.mcpu, 200);
        ck_assert_int_eq(ctl_hold(&st, 1, 0, false, err), 0); /* root may */
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(n->used.mcpu, 200);
        ck_assert_int_eq(ctl_hold(&st, 1, 1, true, err), -EBUSY);
        ck_assert_str_eq(err, "job 1 is running: only a pending job can be held or released");
}
END_TEST

START_TEST(begin_times_wait_for_the_tick) {
        job_spec spec = { .argv = calloc(2, sizeof(char *)),
                          .cwd = strdup("/tmp"),
                          .req = { .mcpu = 100, .mem = MiB },
                          .begin_usec = 5000 };
        spec.argv[0] = strdup("/bin/true");
        uint64_t id;
        ck_assert_int_eq(ctl_submit(&st, 1, 1, "u", &spec, 1000, &id, err), 0);
        job_spec_free(&spec);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_int_eq(ctl_find_job(&st, id)->wait, JOB_WAIT_BEGIN);
        ctl_wait_tick(&st, 4999);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ctl_wait_tick(&st, 5000);
        ck_assert_int_eq(ctl_schedule(&st), 1);
}
END_TEST

START_TEST(nice_orders_a_users_own_jobs_only) {
        ck_assert_int_eq(submit(NULL, 0, 1, 0, 1000), 1); /* takes the node */
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(submit(NULL, 0, 1, 100, 1000), 2);
        ck_assert_int_eq(submit(NULL, 0, 2, 0, 1000), 3); /* another user's: keeps its place */
        ck_assert_int_eq(submit(NULL, 0, 1, 0, 1000), 4);
        uint64_t want[] = { 4, 2, 3 }; /* 2 and 4 swap places; 3 keeps its own, behind the first */
        for (size_t i = 0; i < 3; i++) {
                end(launch_ids[launched - 1], JOB_COMPLETED);
                ck_assert_int_eq(ctl_schedule(&st), 1);
                ck_assert_uint_eq(launch_ids[launched - 1], want[i]);
        }
}
END_TEST

/* A nice value makes passes reorder a user's jobs only while a pending job has one: a held
 * one keeps it, its cancel forgets it, and the next job submitted with one orders its user's
 * jobs again. */
START_TEST(nice_is_forgotten_once_no_pending_job_has_one) {
        ck_assert_int_eq(submit(NULL, 0, 1, 0, 1000), 1); /* takes the node */
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(submit(NULL, 0, 1, 100, 1000), 2);
        ck_assert_int_eq(submit(NULL, 0, 1, 0, 1000), 3);
        ck_assert_int_eq(ctl_hold(&st, 2, 1, true, err), 0);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert(st.npending_nice);
        ck_assert_int_eq(ctl_cancel(&st, 2, 1, 2000, err), 0);
        ck_assert(!st.npending_nice);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_int_eq(submit(NULL, 0, 1, 50, 1000), 4);
        ck_assert(st.npending_nice);
        ck_assert_int_eq(submit(NULL, 0, 1, 0, 1000), 5);
        uint64_t want[] = { 3, 5, 4 };
        for (size_t i = 0; i < 3; i++) {
                end(launch_ids[launched - 1], JOB_COMPLETED);
                ck_assert_int_eq(ctl_schedule(&st), 1);
                ck_assert_uint_eq(launch_ids[launched - 1], want[i]);
        }
}
END_TEST

START_TEST(a_singleton_waits_for_its_name_to_stop_running) {
        ck_assert_int_eq(submit(NULL, 0, 1, 0, 100), 1);
        ck_assert_int_eq(submit("singleton", 0, 1, 0, 100), 2);
        ck_assert_int_eq(submit("singleton", 0, 1, 0, 100), 3);
        ck_assert_int_eq(submit("singleton", 0, 2, 0, 100), 4); /* another user's: not held back */
        ck_assert_int_eq(ctl_schedule(&st), 2);
        ck_assert_uint_eq(launch_ids[1], 4);
        ck_assert_int_eq(ctl_find_job(&st, 2)->wait, JOB_WAIT_DEPENDENCY);
        end(1, JOB_COMPLETED);
        ck_assert_int_eq(ctl_schedule(&st), 1); /* one of the two singletons, the first */
        ck_assert_uint_eq(launch_ids[2], 2);
        end(2, JOB_COMPLETED);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(launch_ids[3], 3);
}
END_TEST

/* Submit an array of Slurm's text spec (its throttle in the spec, as clients.c puts it). */
static uint64_t submit_text(const char *text) {
        job_spec spec = { .argv = calloc(2, sizeof(char *)),
                          .cwd = strdup("/tmp"),
                          .name = strdup("arr"),
                          .req = { .mcpu = 100, .mem = MiB } };
        spec.argv[0] = strdup("/bin/true");
        array_set set = { 0 };
        uint32_t throttle;
        uint64_t first = 0;
        ck_assert_int_eq(array_spec_parse(text, JOB_ARRAY_MAX, &set, &throttle, err, sizeof(err)), 0);
        spec.array_throttle = throttle;
        ck_assert_int_eq(ctl_submit_array(&st, 1000, 1000, "u", &spec, array_set_count(&set), &set, 1000, &first, err),
                         0);
        ck_assert_ptr_null(set.r); /* taken */
        job_spec_free(&spec);
        return first;
}

static size_t running_of(uint64_t array) {
        size_t k = 0;
        for (size_t i = 0; i < st.njobs; i++)
                k += st.jobs[i]->array_first == array && st.jobs[i]->state == JOB_RUNNING;
        return k;
}

START_TEST(tasks_take_the_indexes_named_and_resolve_by_index) {
        uint64_t a = submit_text("1,3,5-7"), id, last;
        static const uint32_t want[] = { 1, 3, 5, 6, 7 };
        for (size_t i = 0; i < 5; i++) {
                const job *j = ctl_find_job(&st, a + i);
                ck_assert_uint_eq(j->array_first, a);
                ck_assert_uint_eq(j->array_index, want[i]);
                ck_assert_int_eq(ctl_array_task(&st, a, want[i], &id, err), 0);
                ck_assert_uint_eq(id, a + i);
        }
        ck_assert_int_eq(ctl_array_span(&st, a, &last, err), 0);
        ck_assert_uint_eq(last, a + 4);
        ck_assert_int_eq(ctl_array_task(&st, a, 4, &id, err), -ENOENT);
        ck_assert_str_eq(err, "array 1 has no task 4");
        ck_assert_int_eq(ctl_array_span(&st, a + 1, &last, err), -ENOENT);
        ck_assert_str_eq(err, "job 2 is not an array's id");
        ck_assert_int_eq(ctl_array_span(&st, 99, &last, err), -ENOENT);
        ck_assert_str_eq(err, "no job 99");
        /* a plain job after it is nobody's task */
        uint64_t b = submit_text("5"); /* the single index 5, as Slurm reads it */
        ck_assert_uint_eq(b, a + 5);
        ck_assert_int_eq(ctl_array_task(&st, b, 5, &id, err), 0);
        ck_assert_uint_eq(id, b);
        ck_assert_int_eq(ctl_array_task(&st, a, 8, &id, err), -ENOENT);
}
END_TEST

START_TEST(a_throttle_holds_the_running_tasks_across_passes_and_ends) {
        uint64_t a = submit_text("0-9%2"), b = submit_text("0-3");
        ck_assert_int_eq(ctl_schedule(&st), 2 + 4); /* b's tasks are not held behind a's */
        ck_assert_uint_eq(running_of(a), 2);
        ck_assert_uint_eq(running_of(b), 4);
        ck_assert_int_eq(ctl_find_job(&st, a + 2)->wait, JOB_WAIT_THROTTLE);
        for (int round = 0; round < 8; round++) {
                uint64_t done = 0;
                for (size_t i = 0; i < 10 && !done; i++)
                        if (ctl_find_job(&st, a + i)->state == JOB_RUNNING)
                                done = a + i;
                job_result res = { 0 };
                ck_assert_int_eq(ctl_job_finished(&st, n, done, JOB_COMPLETED, &res, 2000), 0);
                ck_assert_int_eq(ctl_schedule(&st), 1);
                ck_assert_uint_eq(running_of(a), 2);
        }
        ck_assert_int_eq(ctl_schedule(&st), 0);
        for (size_t i = 0; i < 10; i++)
                ck_assert_int_ne(ctl_find_job(&st, a + i)->state, JOB_PENDING);
}
END_TEST

/* Passes count throttled arrays' tasks (and read the whole queue) only while a pending job is
 * of one: once a throttled array's tasks have all started, a pass forgets it, and the next
 * throttled array is held to its throttle again. */
START_TEST(a_throttle_is_forgotten_once_no_pending_task_has_one) {
        uint64_t a = submit_text("0-1%2");
        ck_assert(st.throttle_seen);
        ck_assert_int_eq(ctl_schedule(&st), 2);
        ck_assert_int_eq(submit(NULL, 0, 1, 0, 100), (int64_t)a + 2); /* a plain job: the queue isn't empty */
        ck_assert_int_eq(ctl_hold(&st, a + 2, 1, true, err), 0);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert(!st.throttle_seen);
        uint64_t b = submit_text("0-3%1");
        ck_assert(st.throttle_seen);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(running_of(b), 1);
}
END_TEST

/* A controller restarted with an array's tasks in its store (two running, four pending, %2)
 * applies the throttle from the records alone. */
START_TEST(a_restored_array_keeps_its_throttle) {
        ctl_free(&st);
        ctl_config cfg = { .policy = SCHED_FIRST_FIT,
                           .order = SCHED_STRICT_FIFO,
                           .max_pending = 1000,
                           .agent_timeout_usec = 5000000,
                           .node_lost_timeout_usec = 5000000 };
        ctl_init(&st, &cfg, &actions, NULL);
        launched = 0;
        for (uint64_t id = 100; id < 106; id++) {
                job *j = calloc(1, sizeof(*j));
                *j = (job){ .id = id,
                            .uid = 1,
                            .gid = 1,
                            .user = strdup("u"),
                            .submit_usec = 1000,
                            .attempt = 1,
                            .state = id < 102 ? JOB_RUNNING : JOB_PENDING,
                            .node = id < 102 ? strdup("a") : NULL,
                            .start_usec = id < 102 ? 1500 : 0,
                            .array_first = 100,
                            .array_index = (uint32_t)(id - 100),
                            .spec = { .argv = calloc(2, sizeof(char *)),
                                      .cwd = strdup("/tmp"),
                                      .name = strdup("r"),
                                      .req = { .mcpu = 100, .mem = MiB },
                                      .array_throttle = 2 } };
                j->spec.argv[0] = strdup("/bin/true");
                ck_assert_int_eq(ctl_restore(&st, j, (ctl_time){ 1000, 1000 }), 0);
        }
        static const uint64_t running[] = { 100, 101 };
        ck_assert_int_eq(ctl_node_up(&st, "a", (res_t){ .mcpu = 1000, .mem = 1024 * MiB }, "v1", "/x", running, 2, NULL,
                                     (ctl_time){ 1000, 1000 }, &n, err),
                         0);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_int_eq(ctl_find_job(&st, 102)->wait, JOB_WAIT_THROTTLE);
        end(100, JOB_COMPLETED);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_uint_eq(launch_ids[0], 102);
}
END_TEST

static Suite *depindex_suite(void) {
        Suite *s = suite_create("depindex");
        TCase *tc = tcase_create("depindex");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, a_chain_runs_in_order_and_a_failure_cancels_the_rest);
        tcase_add_test(tc, a_cancel_cascades_down_a_long_chain);
        tcase_add_test(tc, a_whole_array_is_waited_for);
        tcase_add_test(tc, unknown_and_impossible_dependencies_are_refused);
        tcase_add_test(tc, kill_invalid_depend_no_keeps_the_job_pending);
        tcase_add_test(tc, held_jobs_wait_until_released);
        tcase_add_test(tc, begin_times_wait_for_the_tick);
        tcase_add_test(tc, nice_orders_a_users_own_jobs_only);
        tcase_add_test(tc, nice_is_forgotten_once_no_pending_job_has_one);
        tcase_add_test(tc, a_throttle_is_forgotten_once_no_pending_task_has_one);
        tcase_add_test(tc, a_singleton_waits_for_its_name_to_stop_running);
        tcase_add_test(tc, tasks_take_the_indexes_named_and_resolve_by_index);
        tcase_add_test(tc, a_throttle_holds_the_running_tasks_across_passes_and_ends);
        tcase_add_test(tc, a_restored_array_keeps_its_throttle);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(depindex_suite)
