/* test_arrayspec.c - Slurm's --array syntax, the set of pending task indexes, and its fold
 * (shared/arrayspec.h). */
#include "check_main.h"
#include "arrayspec.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The set of spec, folded back (with its throttle) into buf. */
static const char *fold(const char *spec, char *buf, size_t len) {
        array_set set = { 0 };
        uint32_t throttle;
        char err[256] = "";
        int r = array_spec_parse(spec, 100000, &set, &throttle, err, sizeof(err));
        ck_assert_msg(r == 0, "%s: %s", spec, err);
        array_set_format(&set, throttle, buf, len);
        array_set_free(&set);
        return buf;
}

static const struct {
        const char *spec, *folded;
        size_t count;
} good[] = {
        /* clang-format off */
        { "0-99", "0-99", 100 },
        { "1,3,5-7", "1,3,5-7", 5 },
        { "0-999%8", "0-999%8", 1000 },
        { "0-15:4", "0-12:4", 4 },        /* Slurm's 0,4,8,12 */
        { "0-14:7", "0-14:7", 3 },
        { "5", "5", 1 },                   /* the single index 5, as Slurm reads it */
        { "7,1,2,3", "1-3,7", 4 },         /* sorted, neighbours joined */
        { "4000000", "4000000", 1 },
        { "0-9%2", "0-9%2", 10 },
        { "10-20:995", "10", 1 },          /* one index, whatever the step (found by fuzz_arrayspec) */
        { "1-5:4", "1,5", 2 },
        /* clang-format on */
};

START_TEST(folds_as_expected) {
        char buf[128], err[256] = "";
        array_set set = { 0 };
        uint32_t throttle;
        ck_assert_int_eq(array_spec_parse(good[_i].spec, 100000, &set, &throttle, err, sizeof(err)), 0);
        ck_assert_uint_eq(array_set_count(&set), good[_i].count);
        array_set_free(&set);
        ck_assert_str_eq(fold(good[_i].spec, buf, sizeof(buf)), good[_i].folded);
}
END_TEST

static const struct {
        const char *spec, *err;
} bad[] = {
        { "0-", "array '0-': the range's last index expected at its end" },
        { "5-1", "array '5-1': range 5-1 ends before it begins" },
        { "0-9%0", "array '0-9%0': %0: the throttle is 1 task at once or more" },
        { "4000001", "array '4000001': 4000001 is above the largest an index, 4000000" },
        { "0-200000", "array '0-200000': more than the 100000 tasks an array may have" },
        { "", "array '': an index expected at its end" },
        { "1,,2", "array '1,,2': an index expected at ',2'" },
        { "1-3,2", "array '1-3,2': index 2 is given twice (or ranges overlap)" },
        { "0-8:0", "array '0-8:0': step 0: a step is 1 or more" },
        { "3x", "array '3x': unexpected 'x' (want N, N-M, N-M:STEP, lists of them, %LIMIT)" },
        { "-1", "array '-1': an index expected at '-1'" },
        { "1%", "array '1%': a count of tasks at once expected at its end" },
};

START_TEST(bad_input_is_one_clear_line) {
        array_set set = { 0 };
        uint32_t throttle = 7;
        char err[256] = "";
        ck_assert_int_eq(array_spec_parse(bad[_i].spec, 100000, &set, &throttle, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err, bad[_i].err);
        ck_assert_uint_eq(set.n, 0);
        ck_assert_ptr_null(set.r);
}
END_TEST

START_TEST(take_put_remove_count) {
        array_set set = { 0 };
        uint32_t throttle, i;
        char err[256], buf[128];
        ck_assert_int_eq(array_spec_parse("1,3,5-7,10-20:5", 100, &set, &throttle, err, sizeof(err)), 0);
        ck_assert_uint_eq(array_set_count(&set), 8);
        ck_assert(array_set_has(&set, 15) && !array_set_has(&set, 12) && !array_set_has(&set, 4));
        ck_assert_int_eq(array_set_take(&set, &i), 0);
        ck_assert_uint_eq(i, 1);
        ck_assert_int_eq(array_set_remove(&set, 6), 0); /* a split: 5,7 */
        ck_assert_int_eq(array_set_remove(&set, 6), -ENOENT);
        array_set_format(&set, 0, buf, sizeof(buf));
        ck_assert_str_eq(buf, "3,5,7,10-20:5");
        ck_assert_int_eq(array_set_put(&set, 6), 0); /* joins 5 and 7 again */
        ck_assert_int_eq(array_set_put(&set, 6), -EEXIST);
        ck_assert_int_eq(array_set_put(&set, 4), 0);
        ck_assert_int_eq(array_set_put(&set, 12), 0); /* between two of a step's indexes */
        ck_assert_int_eq(array_set_put(&set, 1), 0);
        array_set_format(&set, 3, buf, sizeof(buf));
        ck_assert_str_eq(buf, "1,3-7,10,12,15,20%3");
        ck_assert_uint_eq(array_set_count(&set), 10);
        static const uint32_t order[] = { 1, 3, 4, 5, 6, 7, 10, 12, 15, 20 };
        for (size_t k = 0; k < 10; k++) {
                ck_assert_int_eq(array_set_take(&set, &i), 0);
                ck_assert_uint_eq(i, order[k]);
        }
        ck_assert_int_eq(array_set_take(&set, &i), -ENOENT);
        ck_assert_uint_eq(array_set_count(&set), 0);
        array_set_free(&set);
}
END_TEST

/* A large array is a few ranges however many tasks it has, and a long fold is cut, not overrun. */
START_TEST(large_sets_stay_small_and_folds_are_cut) {
        array_set set = { 0 };
        uint32_t throttle, i;
        char err[256], buf[8];
        ck_assert_int_eq(array_spec_parse("0-3999999", 4000000, &set, &throttle, err, sizeof(err)), 0);
        for (int k = 0; k < 1000; k++)
                ck_assert_int_eq(array_set_take(&set, &i), 0);
        ck_assert_uint_eq(set.n, 1);
        ck_assert_uint_eq(array_set_count(&set), 3999000);
        ck_assert_uint_eq(array_set_format(&set, 8, buf, sizeof(buf)), strlen("1000-3999999%8"));
        ck_assert_str_eq(buf, "1000-39");
        array_set_free(&set);
}
END_TEST

/* A span cut out of stepped ranges leaves each side on its step; positions map both ways. */
START_TEST(cut_a_span_and_positions) {
        array_set set = { 0 };
        uint32_t throttle, i;
        size_t removed, pos;
        char err[256], buf[64];
        ck_assert_int_eq(array_spec_parse("0-20:2,30,40-49", 100, &set, &throttle, err, sizeof(err)), 0);
        ck_assert(array_set_position(&set, 30, &pos));
        ck_assert_uint_eq(pos, 11);
        ck_assert(!array_set_position(&set, 31, &pos));
        ck_assert(array_set_at(&set, 12, &i));
        ck_assert_uint_eq(i, 40);
        ck_assert(!array_set_at(&set, 22, &i));
        ck_assert_int_eq(array_set_cut(&set, 5, 42, &removed), 0);
        ck_assert_uint_eq(removed, 8 + 1 + 3); /* 6..20 step 2, 30, 40..42 */
        array_set_format(&set, 0, buf, sizeof(buf));
        ck_assert_str_eq(buf, "0-4:2,43-49");
        ck_assert_int_eq(array_set_cut(&set, 100, 200, &removed), 0);
        ck_assert_uint_eq(removed, 0);
        ck_assert_int_eq(array_set_cut(&set, 0, 100, &removed), 0);
        ck_assert_uint_eq(removed, 10);
        ck_assert_uint_eq(set.n, 0);
        array_set_free(&set);
}
END_TEST

static Suite *arrayspec_suite(void) {
        Suite *s = suite_create("arrayspec");
        TCase *tc = tcase_create("arrayspec");
        tcase_add_loop_test(tc, folds_as_expected, 0, (int)(sizeof(good) / sizeof(good[0])));
        tcase_add_loop_test(tc, bad_input_is_one_clear_line, 0, (int)(sizeof(bad) / sizeof(bad[0])));
        tcase_add_test(tc, take_put_remove_count);
        tcase_add_test(tc, large_sets_stay_small_and_folds_are_cut);
        tcase_add_test(tc, cut_a_span_and_positions);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(arrayspec_suite)
