/* test_depend.c - the dependency and --begin parsers (shared/depend.c). */
#include "check_main.h"
#include "depend.h"
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const struct {
        const char *text;
        int ret;
        const char *canonical; /* dep_format of the parse */
} deps[] = {
        { "afterok:1", 0, "afterok:1" },
        { "afterok:1:2,afterany:3", 0, "afterok:1:2,afterany:3" },
        { "after:7,afternotok:8:9", 0, "after:7,afternotok:8:9" },
        { "singleton", 0, "singleton" },
        { "afterok:1,singleton,afterok:2", 0, "afterok:1,singleton,afterok:2" },
        { "afterok:9223372036854775807", 0, "afterok:9223372036854775807" },
        { "afterok:9223372036854775808", -EINVAL, NULL },
        { "afterok:1?afterany:2", -EINVAL, NULL },
        { "afterok:1+30", -EINVAL, NULL },
        { "aftercorr:1", -EINVAL, NULL },
        { "afterok", -EINVAL, NULL },
        { "afterok:", -EINVAL, NULL },
        { "afterok:1:", -EINVAL, NULL },
        { "afterok::1", -EINVAL, NULL },
        { "afterok:0", -EINVAL, NULL },
        { "afterok:x", -EINVAL, NULL },
        { "afterok:-1", -EINVAL, NULL },
        { "afterok:1,", -EINVAL, NULL },
        { ",afterok:1", -EINVAL, NULL },
        { "singleton:1", -EINVAL, NULL },
        { "", -EINVAL, NULL },
        { "AFTEROK:1", -EINVAL, NULL },
        { "afterok:123456789012345678901", -EINVAL, NULL },
};

START_TEST(dep_table) {
        dep_list l;
        char err[256] = "";
        int r = dep_parse(deps[_i].text, &l, err, sizeof(err));
        ck_assert_msg(r == deps[_i].ret, "'%s': got %d want %d (%s)", deps[_i].text, r, deps[_i].ret, err);
        if (r < 0) {
                ck_assert_ptr_null(l.items);
                ck_assert_msg(strncmp(err, "dependency: ", 12) == 0 && !strchr(err, '\n'), "'%s'", err);
                return;
        }
        char *s = dep_format(&l);
        ck_assert_str_eq(s, deps[_i].canonical);
        free(s);
        dep_list_free(&l);
}
END_TEST

START_TEST(dep_items) {
        dep_list l;
        char err[256];
        ck_assert_int_eq(dep_parse("afterok:1:2,afterany:3,singleton", &l, err, sizeof(err)), 0);
        ck_assert_uint_eq(l.n, 4);
        ck_assert_int_eq(l.items[0].kind, DEP_AFTEROK);
        ck_assert_uint_eq(l.items[1].id, 2);
        ck_assert_int_eq(l.items[2].kind, DEP_AFTERANY);
        ck_assert_uint_eq(l.items[2].id, 3);
        ck_assert_int_eq(l.items[3].kind, DEP_SINGLETON);
        dep_list_free(&l);
        ck_assert_int_eq(dep_parse("afterok:1?afterok:2", &l, err, sizeof(err)), -EINVAL);
        ck_assert_msg(strstr(err, "'?'") && strstr(err, "not supported"), "%s", err);
}
END_TEST

START_TEST(dep_too_many) {
        size_t len = 8 + (DEP_ITEMS_MAX + 1) * 2;
        char *s = malloc(len + 1), err[256];
        strcpy(s, "afterok");
        for (int i = 0; i <= DEP_ITEMS_MAX; i++)
                strcat(s, ":1");
        dep_list l;
        ck_assert_int_eq(dep_parse(s, &l, err, sizeof(err)), -ERANGE);
        free(s);
}
END_TEST

/* 2026-11-26 10:30:00 UTC: the tests run with TZ=UTC. */
#define NOW_USEC (1795689000LL * 1000000)

static const struct {
        const char *text;
        int ret;
        int64_t offset_s; /* from NOW_USEC, or the time itself when absolute */
        bool absolute;
} begins[] = {
        { "now", 0, 0, false },
        { "now+60", 0, 60, false },
        { "now+60s", 0, 60, false },
        { "now+1hour", 0, 3600, false },
        { "now+2hours", 0, 7200, false },
        { "now+5minutes", 0, 300, false },
        { "now+3min", 0, 180, false },
        { "now+1day", 0, 86400, false },
        { "now+1week", 0, 604800, false },
        { "16:00", 0, 1795708800, true }, /* later today */
        { "08:15", 0, 1795767300, true }, /* passed today: tomorrow */
        { "16:00:30", 0, 1795708830, true },
        { "2026-11-27T08:00", 0, 1795766400, true },
        { "2026-11-27T08:00:05", 0, 1795766405, true },
        { "2026-11-27", 0, 1795737600, true },
        { "now+", -EINVAL, 0, false },
        { "now+1fortnight", -EINVAL, 0, false },
        { "now-5", -EINVAL, 0, false },
        { "now+99999999999", -ERANGE, 0, false },
        { "25:00", -EINVAL, 0, false },
        { "16:60", -EINVAL, 0, false },
        { "2026-02-30", -EINVAL, 0, false },
        { "2026-13-01", -EINVAL, 0, false },
        { "2026-11-27T", -EINVAL, 0, false },
        { "2026-11-27 08:00", -EINVAL, 0, false },
        { "tomorrow", -EINVAL, 0, false },
        { "", -EINVAL, 0, false },
};

START_TEST(begin_table) {
        int64_t out = -7;
        char err[256] = "";
        int r = dep_parse_begin(begins[_i].text, NOW_USEC, &out, err, sizeof(err));
        ck_assert_msg(r == begins[_i].ret, "'%s': got %d want %d (%s)", begins[_i].text, r, begins[_i].ret, err);
        if (r < 0) {
                ck_assert_int_eq(out, -7);
                ck_assert_msg(strncmp(err, "begin: ", 7) == 0, "'%s'", err);
                return;
        }
        int64_t want = begins[_i].absolute ? begins[_i].offset_s * 1000000 : NOW_USEC + begins[_i].offset_s * 1000000;
        ck_assert_msg(out == want, "'%s': got %lld want %lld", begins[_i].text, (long long)out, (long long)want);
}
END_TEST

static Suite *depend_suite(void) {
        setenv("TZ", "UTC", 1);
        tzset();
        Suite *s = suite_create("depend");
        TCase *tc = tcase_create("depend");
        tcase_add_loop_test(tc, dep_table, 0, sizeof(deps) / sizeof(deps[0]));
        tcase_add_test(tc, dep_items);
        tcase_add_test(tc, dep_too_many);
        tcase_add_loop_test(tc, begin_table, 0, sizeof(begins) / sizeof(begins[0]));
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(depend_suite)
