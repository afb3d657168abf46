/* test_fit.c - First-Fit placement and its two queue orders. */
#include "sched.h"
#include <check.h>
#include <stdlib.h>

#define GiB ((int64_t)1 << 30)

static sched_machine machine(uint32_t index, int64_t mcpu, int64_t mem) {
        res_t cap = { .mcpu = mcpu, .mem = mem };
        return (sched_machine){ .index = index, .capacity = cap, .free = cap, .up = 1 };
}

static sched_job job(uint64_t id, int64_t mcpu, int64_t mem) {
        return (sched_job){ .id = id, .req = { .mcpu = mcpu, .mem = mem } };
}

START_TEST(places_on_first_machine_that_fits) {
        sched_machine m[] = { machine(10, 1000, 4 * GiB), machine(20, 4000, 32 * GiB) };
        sched_job j[] = { job(1, 2000, GiB), job(2, 500, GiB), job(3, 500, GiB) };
        sched_assignment out[3];

        size_t n = sched_first_fit(m, 2, j, 3, SCHED_STRICT_FIFO, out);

        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(out[0].job_id, 1);
        ck_assert_uint_eq(out[0].machine, 20);
        ck_assert_uint_eq(out[1].machine, 10);
        ck_assert_uint_eq(out[2].machine, 10);
        ck_assert_int_eq(m[0].free.mcpu, 0);
        ck_assert_int_eq(m[1].free.mcpu, 2000);
        ck_assert_int_eq(m[1].free.mem, 31 * GiB);
}
END_TEST

START_TEST(strict_fifo_never_lets_a_later_job_overtake) {
        sched_machine m[] = { machine(0, 2000, 8 * GiB) };
        sched_job j[] = { job(1, 1500, GiB), job(2, 1000, GiB), job(3, 500, GiB) };
        sched_assignment out[3];

        size_t n = sched_first_fit(m, 1, j, 3, SCHED_STRICT_FIFO, out);

        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(out[0].job_id, 1);
        ck_assert_int_eq(m[0].free.mcpu, 500);
}
END_TEST

START_TEST(backfill_places_later_jobs_that_fit) {
        sched_machine m[] = { machine(0, 2000, 8 * GiB) };
        sched_job j[] = { job(1, 1500, GiB), job(2, 1000, GiB), job(3, 500, GiB) };
        sched_assignment out[3];

        size_t n = sched_first_fit(m, 1, j, 3, SCHED_BACKFILL, out);

        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(out[1].job_id, 3);
        ck_assert_int_eq(m[0].free.mcpu, 0);
}
END_TEST

START_TEST(down_machines_get_nothing) {
        sched_machine m[] = { machine(0, 4000, 8 * GiB), machine(1, 4000, 8 * GiB) };
        sched_job j[] = { job(1, 1000, GiB) };
        sched_assignment out[1];
        m[0].up = 0;

        ck_assert_uint_eq(sched_first_fit(m, 2, j, 1, SCHED_STRICT_FIFO, out), 1);
        ck_assert_uint_eq(out[0].machine, 1);
        ck_assert(!sched_can_ever_fit(m, 1, j[0].req));
}
END_TEST

START_TEST(memory_alone_can_block_a_job) {
        sched_machine m[] = { machine(0, 4000, 1 * GiB) };
        sched_job j[] = { job(1, 100, 2 * GiB) };
        sched_assignment out[1];

        ck_assert_uint_eq(sched_first_fit(m, 1, j, 1, SCHED_BACKFILL, out), 0);
        ck_assert(!sched_can_ever_fit(m, 1, j[0].req));
        ck_assert(sched_can_ever_fit(m, 1, (res_t){ .mcpu = 4000, .mem = GiB }));
}
END_TEST

int main(void) {
        Suite *s = suite_create("fit");
        TCase *tc = tcase_create("first_fit");
        tcase_add_test(tc, places_on_first_machine_that_fits);
        tcase_add_test(tc, strict_fifo_never_lets_a_later_job_overtake);
        tcase_add_test(tc, backfill_places_later_jobs_that_fit);
        tcase_add_test(tc, down_machines_get_nothing);
        tcase_add_test(tc, memory_alone_can_block_a_job);
        suite_add_tcase(s, tc);
        SRunner *sr = srunner_create(s);
        srunner_run_all(sr, CK_NORMAL);
        int failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
