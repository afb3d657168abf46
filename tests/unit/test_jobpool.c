/* test_jobpool.c - the controller's job records cut from chunks (controller/core/jobpool.h):
 * fresh records zeroed and in the order they were made, released ones taken again before new
 * memory, a chunk emptied given back, and a malloc'ed record released with its strings. Leaks
 * show in the ASan tree. */
#include "check_main.h"
#include "jobpool.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define N 1000

static jobpool p;
static job *made[N];

static void empty_pool(void) { p = (jobpool){ 0 }; }

static void free_pool(void) { jobpool_free(&p); }

/* Make n records into made[], each numbered and owning a string. */
static void make(size_t n) {
        for (size_t i = 0; i < n; i++) {
                ck_assert_ptr_nonnull(made[i] = jobpool_get(&p));
                made[i]->id = i + 1;
                ck_assert_ptr_nonnull(made[i]->node = strdup("m1"));
        }
}

START_TEST(test_fresh_in_order) {
        make(N);
        for (size_t i = 0; i < N; i++) {
                ck_assert_ptr_nonnull(made[i]->pool_chunk);
                ck_assert_uint_eq(made[i]->id, i + 1); /* no record handed out twice */
                if (i > 0 && made[i]->pool_chunk == made[i - 1]->pool_chunk)
                        ck_assert_ptr_eq(made[i], made[i - 1] + 1); /* a chunk is cut in order */
        }
        for (size_t i = 0; i < N; i++)
                jobpool_release(&p, made[i]);
}
END_TEST

START_TEST(test_released_taken_again) {
        make(N);
        job *hole[3] = { made[5], made[500], made[900] };
        for (size_t k = 0; k < 3; k++)
                jobpool_release(&p, hole[k]);
        for (size_t k = 0; k < 3; k++) {
                job *j = jobpool_get(&p);
                bool reused = j == hole[0] || j == hole[1] || j == hole[2];
                ck_assert_msg(reused, "a new record %p while three were free", (void *)j);
                ck_assert_uint_eq(j->id, 0); /* zeroed */
                ck_assert_ptr_null(j->node);
                ck_assert_ptr_nonnull(j->pool_chunk);
                made[j == hole[0] ? 5 : j == hole[1] ? 500 : 900] = j;
        }
        for (size_t i = 0; i < N; i++)
                jobpool_release(&p, made[i]);
        ck_assert_ptr_nonnull(p.open); /* one chunk kept for the next job */
}
END_TEST

START_TEST(test_malloced_record) {
        job *j = calloc(1, sizeof(*j));
        ck_assert_ptr_nonnull(j);
        ck_assert_ptr_nonnull(j->node = strdup("m2"));
        jobpool_release(&p, j); /* freed with its string, the pool untouched */
        ck_assert_ptr_null(p.open);
}
END_TEST

static Suite *jobpool_suite(void) {
        Suite *s = suite_create("jobpool");
        TCase *tc = tcase_create("core");
        tcase_add_checked_fixture(tc, empty_pool, free_pool);
        tcase_add_test(tc, test_fresh_in_order);
        tcase_add_test(tc, test_released_taken_again);
        tcase_add_test(tc, test_malloced_record);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(jobpool_suite)
