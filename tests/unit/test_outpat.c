/* test_outpat.c - %-patterns in output file names (shared/outpat.h). */
#include "check_main.h"
#include "outpat.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static const outpat_vars plain = { .id = 42, .user = "alice", .name = "fit", .node = "n1" };
static const outpat_vars member = {
        .id = 45, .array_first = 40, .array_index = 5, .user = "bob", .name = "a/b", .node = "n2"
};

static const struct {
        const char *pattern;
        const outpat_vars *v;
        const char *want;
} cases[] = {
        { "/d/out-%j-%u-%x.txt", &plain, "/d/out-42-alice-fit.txt" },
        { "/d/colony-%A_%a.out", &member, "/d/colony-40_5.out" },
        { "/d/colony-%A_%a.out", &plain, "/d/colony-42_0.out" },
        { "/d/%x-%N-%j", &member, "/d/a_b-n2-45" }, /* a name cannot reach another directory */
        { "/d/100%%-%j", &plain, "/d/100%-42" },
        { "/d/%%j", &plain, "/d/%j" },
        { "/d/no-pattern", &plain, "/d/no-pattern" },
};

START_TEST(expands) {
        char *out = NULL;
        char err[128] = "";
        ck_assert_int_eq(outpat_check(cases[_i].pattern, err, sizeof(err)), 0);
        ck_assert_int_eq(outpat_expand(cases[_i].pattern, cases[_i].v, &out), 0);
        ck_assert_str_eq(out, cases[_i].want);
        free(out);
}
END_TEST

START_TEST(unknown_patterns_are_refused_with_the_letter) {
        static const char *const bad[] = { "/d/%q", "/d/out%", "/d/%J", "/d/%%%" };
        char err[128];
        char *out = NULL;
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                ck_assert_int_eq(outpat_check(bad[i], err, sizeof(err)), -EINVAL);
                ck_assert_int_eq(outpat_expand(bad[i], &plain, &out), -EINVAL);
                ck_assert_ptr_null(out);
        }
        outpat_check("/d/%q.out", err, sizeof(err));
        ck_assert_str_eq(err, "unknown pattern %q (want %j %A %a %u %x %N or %%)");
}
END_TEST

static Suite *outpat_suite(void) {
        Suite *s = suite_create("outpat");
        TCase *tc = tcase_create("outpat");
        tcase_add_loop_test(tc, expands, 0, (int)(sizeof(cases) / sizeof(cases[0])));
        tcase_add_test(tc, unknown_patterns_are_refused_with_the_letter);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(outpat_suite)
