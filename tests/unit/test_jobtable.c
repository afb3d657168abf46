/* test_jobtable.c - the jobs by id (controller/core/jobtable.h): insert, lookup, removal with its
 * backward shift checked against a plain reference, slots reused, growth and shrinking; and the
 * simulator's ctl_forget_ended through the state: ended jobs freed, live ones found and
 * cancellable, new ids never old ones. */
#include "check_main.h"
#include "ctl_noop.h"
#include "jobtable.h"
#include "state.h"
#include <stdlib.h>
#include <string.h>

#define N 20000

static job jobs[N + 1]; /* jobs[i].id == i */

static jobtable t; /* each test's, emptied after it */

static void number_jobs(void) {
        for (uint64_t i = 0; i <= N; i++)
                jobs[i] = (job){ .id = i };
        t = (jobtable){ 0 };
}

static void free_table(void) {
        jobtable_free(&t);
}

/* Add the jobs of ids from..to to t. */
static void add_ids(uint64_t from, uint64_t to) {
        for (uint64_t id = from; id <= to; id++)
                ck_assert_int_eq(jobtable_add(&t, &jobs[id]), 0);
}

START_TEST(test_insert_lookup) {
        ck_assert_ptr_null(jobtable_find(&t, 1)); /* empty, no slots */
        add_ids(1, N);
        ck_assert_uint_eq(t.n, N);
        for (uint64_t id = 1; id <= N; id++)
                ck_assert_ptr_eq(jobtable_find(&t, id), &jobs[id]);
        ck_assert_ptr_null(jobtable_find(&t, 0));
        ck_assert_ptr_null(jobtable_find(&t, N + 1));
        ck_assert_ptr_null(jobtable_find(&t, UINT64_MAX));
}
END_TEST

START_TEST(test_growth) {
        size_t grew = 0, cap = 0;
        for (uint64_t id = 1; id <= N; id++) {
                ck_assert_int_eq(jobtable_add(&t, &jobs[id]), 0);
                ck_assert_uint_le(2 * t.n, t.cap); /* at most half full: probes stay short */
                ck_assert_uint_eq(t.cap & (t.cap - 1), 0);
                grew += t.cap != cap;
                cap = t.cap;
        }
        ck_assert_uint_le(grew, 16); /* doubling: log2(2 N / 64) + 1 */
        /* room reserved is room kept: the adds after it move nothing */
        jobtable_free(&t);
        ck_assert_int_eq(jobtable_reserve(&t, 1000), 0);
        job **slots = t.slots;
        add_ids(1, 1000);
        ck_assert_ptr_eq(t.slots, slots);
}
END_TEST

/* A random walk of adds and removals, every id's lookup checked against a plain array after each
 * step's batch: a backward shift that lost a job, or left one behind a hole, fails here. */
START_TEST(test_remove_against_reference) {
        static bool in[N + 1];
        memset(in, 0, sizeof(in));
        srand(42);
        size_t n = 0;
        for (int step = 0; step < 200; step++) {
                for (int k = 0; k < 500; k++) {
                        uint64_t id = 1 + (uint64_t)rand() % N;
                        if (in[id]) {
                                jobtable_remove(&t, id);
                                n--;
                        } else {
                                ck_assert_int_eq(jobtable_add(&t, &jobs[id]), 0);
                                n++;
                        }
                        in[id] = !in[id];
                }
                ck_assert_uint_eq(t.n, n);
                size_t wrong = 0; /* counted, not asserted each: Check marks every assertion */
                for (uint64_t id = 1; id <= N; id++)
                        wrong += jobtable_find(&t, id) != (in[id] ? &jobs[id] : NULL);
                ck_assert_uint_eq(wrong, 0);
        }
        jobtable_remove(&t, N + 5); /* not there: nothing */
        ck_assert_uint_eq(t.n, n);
}
END_TEST

/* The simulator's pattern: ids grow, a window of them lives. Freed slots are reused: the table
 * stays the size of the window, not of every id ever added. */
START_TEST(test_reuse_and_fit) {
        const uint64_t window = 500;
        for (uint64_t id = 1; id <= N; id++) {
                ck_assert_int_eq(jobtable_add(&t, &jobs[id]), 0);
                if (id > window)
                        jobtable_remove(&t, id - window);
        }
        ck_assert_uint_eq(t.n, window);
        ck_assert_uint_le(t.cap, 4 * window);
        for (uint64_t id = N - window + 1; id <= N; id++)
                ck_assert_ptr_eq(jobtable_find(&t, id), &jobs[id]);
        ck_assert_ptr_null(jobtable_find(&t, N - window));
        /* a table emptied to a few gives its memory back, and still finds them */
        for (uint64_t id = N - window + 1; id <= N - 10; id++)
                jobtable_remove(&t, id);
        ck_assert_int_eq(jobtable_fit(&t), 0);
        ck_assert_uint_eq(t.cap, 64);
        for (uint64_t id = N - 9; id <= N; id++)
                ck_assert_ptr_eq(jobtable_find(&t, id), &jobs[id]);
}
END_TEST

/* --- ctl_forget_ended through the state ------------------------------------------------------- */

static uint64_t submit(ctl_state *st) {
        char err[PROTO_ERRLEN];
        job_spec spec = { .req = { .mcpu = 1000, .mem = 1 << 20 }, .cwd = strdup("/"), .argv = calloc(1, sizeof(char *)) };
        uint64_t id = 0;
        ck_assert_int_eq(ctl_submit(st, 1000, 1000, "u", &spec, 1, &id, err), 0);
        return id;
}

START_TEST(test_forget_ended) {
        ctl_state st;
        ctl_config cfg = { .max_pending = 100000, .agent_timeout_usec = INT64_MAX, .node_lost_timeout_usec = INT64_MAX };
        ctl_init(&st, &cfg, &ctl_noop_actions, NULL);
        char err[PROTO_ERRLEN];
        ctl_node *n;
        ck_assert_int_eq(ctl_node_up(&st, "h", (res_t){ .mcpu = 4000, .mem = 1 << 30 }, "sim", "", NULL, 0, NULL,
                                     (ctl_time){ 0 }, &n, err), 0);
        for (int i = 0; i < 10; i++)
                submit(&st); /* 1..10: 1..4 run, 5..10 wait */
        ck_assert_int_eq(ctl_schedule(&st), 4);
        for (uint64_t id = 1; id <= 3; id++) {
                job_result res = { 0 };
                ck_assert_int_eq(ctl_job_finished(&st, n, id, JOB_COMPLETED, &res, 2), 0);
        }
        ck_assert_int_eq(ctl_cancel(&st, 10, 1000, 3, err), 0); /* pending, ended: the queue keeps it till a pass */
        ctl_forget_ended(&st);
        ck_assert_uint_eq(st.njobs, 6);
        ck_assert_uint_eq(st.byid.n, 6); /* no entry left naming a freed job */
        ck_assert_uint_eq(st.npending, 5);
        for (uint64_t id = 1; id <= 10; id++) {
                job *j = ctl_find_job(&st, id);
                bool ended = id <= 3 || id == 10;
                ck_assert_msg(ended ? !j : j && j->id == id, "job %llu after forgetting", (unsigned long long)id);
        }
        /* what remains is whole: passes place the queue, bulk cancels reach live jobs only */
        ck_assert_int_eq(ctl_schedule(&st), 3);
        ck_assert_ptr_eq(ctl_next_live(&st, 1000, 1), ctl_find_job(&st, 4));
        ck_assert_uint_eq(submit(&st), 11); /* forgotten ids are never given again */
        ctl_free(&st);
}
END_TEST

static Suite *jobtable_suite(void) {
        Suite *s = suite_create("jobtable");
        TCase *tc = tcase_create("core");
        tcase_add_checked_fixture(tc, number_jobs, free_table);
        tcase_add_test(tc, test_insert_lookup);
        tcase_add_test(tc, test_growth);
        tcase_add_test(tc, test_remove_against_reference);
        tcase_add_test(tc, test_reuse_and_fit);
        tcase_add_test(tc, test_forget_ended);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(jobtable_suite)
