/* test_cores.c - the agent's cores and the whole-CPU jobs holding them. */
#include "check_main.h"
#include "cores.h"
#include <errno.h>

START_TEST(whole_jobs_take_distinct_cores_fractions_share_the_rest) {
        static const int allowed[] = { 0, 1, 2, 3, 5, 6 };
        cores c;
        char buf[64];
        ck_assert_int_eq(cores_init(&c, allowed, 6, 4500), 0); /* 4.5 CPUs: the first 5 */
        ck_assert_uint_eq(c.n, 5);
        ck_assert(cores_whole(1000) && cores_whole(3000) && !cores_whole(500) && !cores_whole(1500));
        ck_assert_int_eq(cores_take(&c, 7, 2000, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "0-1");
        ck_assert_int_eq(cores_take(&c, 8, 1000, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "2");
        ck_assert_int_eq(cores_shared(&c, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "3,5"); /* 4 is not ours */
        ck_assert_int_eq(cores_take(&c, 9, 3000, buf, sizeof(buf)), -EBUSY);
        cores_release(&c, 7);
        ck_assert_int_eq(cores_take(&c, 9, 3000, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "0-1,3");
        ck_assert_int_eq(cores_take(&c, 10, 1000, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "5");
        ck_assert_int_eq(cores_shared(&c, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "0-3,5"); /* every core held: a fraction shares them all */
}
END_TEST

START_TEST(a_restarted_agent_marks_what_the_cgroups_say) {
        static const int allowed[] = { 0, 1, 2, 3 };
        cores c;
        char buf[64];
        ck_assert_int_eq(cores_init(&c, allowed, 4, 4000), 0);
        ck_assert_int_eq(cores_count("0-1,3"), 3);
        ck_assert_int_eq(cores_count("2"), 1);
        ck_assert_int_eq(cores_count(""), -EINVAL);
        ck_assert_int_eq(cores_count("1-"), -EINVAL);
        ck_assert_int_eq(cores_hold(&c, 5, "1-2"), 0);
        ck_assert_int_eq(cores_hold(&c, 6, "2-3"), -EINVAL); /* 2 is job 5's: nothing marked */
        ck_assert_int_eq(cores_hold(&c, 6, "7"), -EINVAL);   /* not ours */
        ck_assert_int_eq(cores_take(&c, 6, 2000, buf, sizeof(buf)), 0);
        ck_assert_str_eq(buf, "0,3");
}
END_TEST

static Suite *cores_suite(void) {
        Suite *s = suite_create("cores");
        TCase *tc = tcase_create("cores");
        tcase_add_test(tc, whole_jobs_take_distinct_cores_fractions_share_the_rest);
        tcase_add_test(tc, a_restarted_agent_marks_what_the_cgroups_say);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(cores_suite)
