/* test_cli_progress.c - the progress line's text and when it is redrawn. */
#include "check_main.h"
#include "progress.h"

#define SEC 1000000LL

START_TEST(line_shows_percent_count_and_estimate) {
        char buf[256];
        ck_assert_str_eq(progress_line("colony sim", "jobs", 0, 10000, 0, NULL, buf, sizeof(buf)),
                         "colony sim: 0% (0/10000 jobs), 0.0 s");
        /* A quarter in 10 s: three quarters left at that rate, 30 s. */
        ck_assert_str_eq(progress_line("colony sim", "jobs", 2500, 10000, 10 * SEC, NULL, buf, sizeof(buf)),
                         "colony sim: 25% (2500/10000 jobs), 10.0 s, about 30.0 s left");
        ck_assert_str_eq(progress_line("colony measure", "runs", 9, 12, 90 * SEC, "cpu beside io", buf, sizeof(buf)),
                         "colony measure: 75% (9/12 runs), 1m30s, about 30.0 s left: cpu beside io");
        ck_assert_str_eq(progress_line("colony sim", "jobs", 10000, 10000, 40 * SEC, "", buf, sizeof(buf)),
                         "colony sim: 100% (10000/10000 jobs), 40.0 s");
}
END_TEST

START_TEST(odd_counts_stay_in_range) {
        char buf[256];
        /* Nothing to do, or more done than announced: never above 100%, no estimate. */
        ck_assert_str_eq(progress_line("x", "jobs", 0, 0, SEC, NULL, buf, sizeof(buf)), "x: 0% (0/0 jobs), 1.0 s");
        ck_assert_str_eq(progress_line("x", "jobs", 12, 10, SEC, NULL, buf, sizeof(buf)),
                         "x: 100% (12/10 jobs), 1.0 s");
        /* 99.99% shows as 99%, not a rounded-up 100% before the end. */
        ck_assert_str_eq(progress_line("x", "jobs", 9999, 10000, 0, NULL, buf, sizeof(buf)),
                         "x: 99% (9999/10000 jobs), 0.0 s, about 0.0 s left");
        /* A small buffer truncates, terminated. */
        char small[8];
        ck_assert_str_eq(progress_line("colony sim", "jobs", 1, 2, SEC, NULL, small, sizeof(small)), "colony ");
}
END_TEST

START_TEST(redraws_at_most_ten_times_a_second) {
        ck_assert(progress_due(0, 5 * SEC, 0, 100));                                    /* the first line */
        ck_assert(!progress_due(5 * SEC, 5 * SEC + PROGRESS_PERIOD_USEC - 1, 50, 100)); /* too soon */
        ck_assert(progress_due(5 * SEC, 5 * SEC + PROGRESS_PERIOD_USEC, 50, 100));
        ck_assert(progress_due(5 * SEC, 5 * SEC + 1, 100, 100)); /* the last item: always shown */
}
END_TEST

static Suite *cli_progress_suite(void) {
        Suite *s = suite_create("cli_progress");
        TCase *tc = tcase_create("progress");
        tcase_add_test(tc, line_shows_percent_count_and_estimate);
        tcase_add_test(tc, odd_counts_stay_in_range);
        tcase_add_test(tc, redraws_at_most_ten_times_a_second);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(cli_progress_suite)
