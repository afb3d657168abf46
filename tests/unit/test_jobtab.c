/* test_jobtab.c - the agent's job table (agent/jobtab.h): insert, find, remove, count, and the
 * walks its callers make (agent.c, adopt.c, report.c, jobcores.c): newest first, with the job the
 * walk is on removed after its next was taken (adopt_poll), or the head removed until the table
 * is empty (agent_stop, agent_free). A second job of an id is refused, as on_launch refuses its
 * launch. jobtab.c is compiled in; it links colony_shared (idmap) only, no event loop. */
#include "agent-internal.h"
#include "check_main.h"
#include "jobtab.h"
#include <errno.h>
#include <stdlib.h>

#define N 1000

static agent_job jobs[N + 1]; /* jobs[i].id == i */
static jobtab t;              /* each test's, emptied after it */

static void number_jobs(void) {
        for (uint64_t i = 0; i <= N; i++)
                jobs[i] = (agent_job){ .id = i };
        t = (jobtab){ 0 };
}

static void free_table(void) { jobtab_free(&t); }

/* Add jobs from..to, in that order. */
static void add_ids(uint64_t from, uint64_t to) {
        for (uint64_t id = from; id <= to; id++)
                ck_assert_int_eq(jobtab_insert(&t, &jobs[id]), 0);
}

/* The walk's ids must be want[0..n-1], in that order, and the count n; each found by its id. */
static void assert_walk(const uint64_t *want, size_t n) {
        size_t k = 0;
        const agent_job *prev = NULL;

        for (agent_job *j = jobtab_first(&t); j; prev = j, j = j->next) {
                ck_assert_uint_lt(k, n);
                ck_assert_uint_eq(j->id, want[k]);
                ck_assert_ptr_eq(j->prev, prev);
                ck_assert(j->in_table);
                ck_assert_ptr_eq(jobtab_find(&t, j->id), j);
                k++;
        }
        ck_assert_uint_eq(k, n);
        ck_assert_uint_eq(jobtab_count(&t), n);
}

START_TEST(test_insert_find_count) {
        ck_assert_ptr_null(jobtab_find(&t, 1)); /* empty, no memory */
        ck_assert_ptr_null(jobtab_first(&t));
        ck_assert_uint_eq(jobtab_count(&t), 0);
        add_ids(1, N);
        ck_assert_uint_eq(jobtab_count(&t), N);
        for (uint64_t id = 1; id <= N; id++)
                ck_assert_ptr_eq(jobtab_find(&t, id), &jobs[id]);
        ck_assert_ptr_null(jobtab_find(&t, 0));
        ck_assert_ptr_null(jobtab_find(&t, N + 1));
        uint64_t want[N];
        for (size_t k = 0; k < N; k++)
                want[k] = N - k; /* newest first, as the list before the table was */
        assert_walk(want, N);
}
END_TEST

START_TEST(test_duplicate_refused) {
        add_ids(1, 3);
        agent_job twin = { .id = 2 };
        ck_assert_int_eq(jobtab_insert(&t, &twin), -EEXIST);
        ck_assert(!twin.in_table);
        ck_assert_ptr_eq(jobtab_find(&t, 2), &jobs[2]);
        assert_walk((const uint64_t[]){ 3, 2, 1 }, 3);
}
END_TEST

START_TEST(test_remove_head_middle_tail) {
        add_ids(1, 5); /* walk: 5 4 3 2 1 */
        jobtab_remove(&t, &jobs[3]);
        ck_assert(!jobs[3].in_table);
        ck_assert_ptr_null(jobtab_find(&t, 3));
        assert_walk((const uint64_t[]){ 5, 4, 2, 1 }, 4);
        jobtab_remove(&t, &jobs[5]); /* the head */
        assert_walk((const uint64_t[]){ 4, 2, 1 }, 3);
        jobtab_remove(&t, &jobs[1]); /* the tail */
        assert_walk((const uint64_t[]){ 4, 2 }, 2);
        ck_assert_int_eq(jobtab_insert(&t, &jobs[3]), 0); /* back, at the head */
        assert_walk((const uint64_t[]){ 3, 4, 2 }, 3);
}
END_TEST

/* adopt_poll's walk: next taken, then the job it is on maybe removed (here the odd ones). */
START_TEST(test_remove_while_walking) {
        add_ids(1, N);
        agent_job *next;
        for (agent_job *j = jobtab_first(&t); j; j = next) {
                next = j->next;
                if (j->id % 2)
                        jobtab_remove(&t, j);
        }
        uint64_t want[N / 2];
        for (size_t k = 0; k < N / 2; k++)
                want[k] = N - 2 * k;
        assert_walk(want, N / 2);
        for (uint64_t id = 1; id <= N; id += 2)
                ck_assert_ptr_null(jobtab_find(&t, id));
}
END_TEST

/* agent_stop's and agent_free's: the head removed until none is left. */
START_TEST(test_empty_from_head) {
        add_ids(1, N);
        size_t left = N;
        while (jobtab_first(&t)) {
                agent_job *j = jobtab_first(&t);
                ck_assert_uint_eq(j->id, left);
                jobtab_remove(&t, j);
                ck_assert_uint_eq(jobtab_count(&t), --left);
        }
        ck_assert_uint_eq(left, 0);
        for (uint64_t id = 1; id <= N; id++)
                ck_assert_ptr_null(jobtab_find(&t, id));
}
END_TEST

/* After jobtab_reserve, an insert cannot fail (jobstart_queue and adopt_record count on it). */
START_TEST(test_reserve) {
        for (uint64_t id = 1; id <= N; id++) {
                ck_assert_int_eq(jobtab_reserve(&t), 0);
                size_t cap = t.ids.cap;
                ck_assert_int_eq(jobtab_insert(&t, &jobs[id]), 0);
                ck_assert_uint_eq(t.ids.cap, cap); /* no allocation in the insert */
        }
        ck_assert_uint_eq(jobtab_count(&t), N);
}
END_TEST

static Suite *jobtab_suite(void) {
        Suite *s = suite_create("jobtab");
        TCase *tc = tcase_create("core");
        tcase_add_checked_fixture(tc, number_jobs, free_table);
        tcase_add_test(tc, test_insert_find_count);
        tcase_add_test(tc, test_duplicate_refused);
        tcase_add_test(tc, test_remove_head_middle_tail);
        tcase_add_test(tc, test_remove_while_walking);
        tcase_add_test(tc, test_empty_from_head);
        tcase_add_test(tc, test_reserve);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(jobtab_suite)
