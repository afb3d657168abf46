/* test_nodesel.c - feature lists, constraints and a job's choice of nodes. */
#include "check_main.h"
#include "nodesel.h"

START_TEST(lists_and_expressions_are_checked) {
        ck_assert(nodesel_list_ok("ssd"));
        ck_assert(nodesel_list_ok("ssd,avx512,node-1.a_b"));
        ck_assert(!nodesel_list_ok(""));
        ck_assert(!nodesel_list_ok("ssd,"));
        ck_assert(!nodesel_list_ok(",ssd"));
        ck_assert(!nodesel_list_ok("ssd,,gpu"));
        ck_assert(!nodesel_list_ok("ssd gpu"));
        ck_assert(!nodesel_list_ok("ssd&gpu"));
        ck_assert(!nodesel_list_ok(NULL));
        ck_assert(nodesel_expr_ok("ssd&avx512"));
        ck_assert(nodesel_expr_ok("ssd,avx512|gpu"));
        ck_assert(!nodesel_expr_ok("ssd&&gpu"));
        ck_assert(!nodesel_expr_ok("|ssd"));
        ck_assert(!nodesel_expr_ok("ssd|"));
        ck_assert(!nodesel_expr_ok("(ssd)"));
        ck_assert(!nodesel_expr_ok("ssd*2"));
}
END_TEST

START_TEST(constraints_match_whole_feature_names) {
        ck_assert(nodesel_expr_match("ssd", "ssd,avx512"));
        ck_assert(nodesel_expr_match("avx512&ssd", "ssd,avx512"));
        ck_assert(nodesel_expr_match("avx512,ssd", "ssd,avx512"));
        ck_assert(!nodesel_expr_match("ssd&gpu", "ssd,avx512"));
        ck_assert(nodesel_expr_match("gpu|ssd", "ssd,avx512"));
        ck_assert(nodesel_expr_match("ssd&gpu|avx512", "ssd,avx512"));
        ck_assert(!nodesel_expr_match("ss", "ssd")); /* a prefix is not the feature */
        ck_assert(!nodesel_expr_match("ssd", "ssd2"));
        ck_assert(!nodesel_expr_match("ssd", NULL)); /* a node with no features */
}
END_TEST

START_TEST(nodelist_is_one_of_exclude_none_of) {
        ck_assert(nodesel_eligible(NULL, NULL, NULL, "a", NULL));
        ck_assert(nodesel_eligible(NULL, "a,b", NULL, "b", NULL));
        ck_assert(!nodesel_eligible(NULL, "a,b", NULL, "c", NULL));
        ck_assert(!nodesel_eligible(NULL, "ab", NULL, "a", NULL));
        ck_assert(!nodesel_eligible(NULL, NULL, "a,b", "a", NULL));
        ck_assert(nodesel_eligible(NULL, NULL, "a,b", "c", NULL));
        ck_assert(!nodesel_eligible(NULL, "a,b", "b", "b", NULL));
        ck_assert(nodesel_eligible("gpu", "a", NULL, "a", "gpu"));
        ck_assert(!nodesel_eligible("gpu", "a", NULL, "a", "ssd"));
}
END_TEST

static Suite *nodesel_suite(void) {
        Suite *s = suite_create("nodesel");
        TCase *tc = tcase_create("nodesel");
        tcase_add_test(tc, lists_and_expressions_are_checked);
        tcase_add_test(tc, constraints_match_whole_feature_names);
        tcase_add_test(tc, nodelist_is_one_of_exclude_none_of);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(nodesel_suite)
