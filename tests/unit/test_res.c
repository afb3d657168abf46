/* test_res.c - resource vector arithmetic. */
#include "check_main.h"
#include "res.h"

START_TEST(add_sub_round_trip) {
        res_t a = { .mcpu = 1500, .mem = 1 << 20, .pids = 10 }, b = { .mcpu = 500, .mem = 4096, .pids = 2 };
        ck_assert(res_equal(res_sub(res_add(a, b), b), a));
        ck_assert_int_eq(res_add(a, b).mcpu, 2000);
        ck_assert_int_eq(res_sub(b, a).mem, 4096 - (1 << 20));
}
END_TEST

START_TEST(fits_needs_both_cpu_and_memory) {
        res_t avail = { .mcpu = 1000, .mem = 1000 };
        ck_assert(res_fits((res_t){ .mcpu = 1000, .mem = 1000 }, avail));
        ck_assert(!res_fits((res_t){ .mcpu = 1001, .mem = 10 }, avail));
        ck_assert(!res_fits((res_t){ .mcpu = 10, .mem = 1001 }, avail));
        ck_assert(res_fits((res_t){ .mcpu = 10, .mem = 10, .pids = 99999 }, avail)); /* pids are a limit */
}
END_TEST

/* The least of two requests fits wherever either does, and is each field's least. */
START_TEST(min_is_each_fields_least_and_fits_where_either_fits) {
        res_t a = { .mcpu = 500, .mem = 4096, .gpus = 1 }, b = { .mcpu = 2000, .mem = 1024, .gpus = 0 };
        res_t m = res_min(a, b), room = { .mcpu = 600, .mem = 1500, .gpus = 0 };
        ck_assert(res_equal(m, (res_t){ .mcpu = 500, .mem = 1024, .gpus = 0 }));
        ck_assert(!res_fits(a, room) && !res_fits(b, room));
        ck_assert(res_fits(m, room));
        ck_assert(res_fits(m, a) && res_fits(m, b));
}
END_TEST

START_TEST(range_rejects_negative_and_huge) {
        ck_assert(res_in_range((res_t){ .mcpu = RES_MCPU_MAX, .mem = RES_MEM_MAX, .pids = RES_PIDS_MAX }));
        ck_assert(!res_in_range((res_t){ .mcpu = -1 }));
        ck_assert(!res_in_range((res_t){ .mem = RES_MEM_MAX + 1 }));
        ck_assert(!res_in_range((res_t){ .pids = -5 }));
}
END_TEST

static Suite *res_suite(void) {
        Suite *s = suite_create("res");
        TCase *tc = tcase_create("res");
        tcase_add_test(tc, add_sub_round_trip);
        tcase_add_test(tc, fits_needs_both_cpu_and_memory);
        tcase_add_test(tc, range_rejects_negative_and_huge);
        tcase_add_test(tc, min_is_each_fields_least_and_fits_where_either_fits);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(res_suite)
