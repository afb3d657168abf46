/* test_units.c - parsing and printing of sizes and CPU counts. */
#include "check_main.h"
#include "res.h"
#include "units.h"
#include <errno.h>

static const struct {
        const char *text;
        int ret;
        int64_t bytes;
} sizes[] = {
        { "0", 0, 0 },          { "1024", 0, 1024 },          { "64M", 0, 64 << 20 },
        { "64m", 0, 64 << 20 }, { "1.5G", 0, 3LL << 29 },     { "2GiB", 0, 2LL << 30 },
        { "10KB", 0, 10240 },   { "7B", 0, 7 },               { "1T", 0, 1LL << 40 },
        { "-1", -EINVAL, 0 },   { "", -EINVAL, 0 },           { "abc", -EINVAL, 0 },
        { "1.5.3", -EINVAL, 0 }, { "1.", -EINVAL, 0 },        { "12X", -EINVAL, 0 },
        { "64 M", -EINVAL, 0 }, { "99999999999T", -ERANGE, 0 }, { "99999999999999999999", -ERANGE, 0 },
};

START_TEST(size_table) {
        int64_t out = -7;
        int r = units_parse_size(sizes[_i].text, &out);
        ck_assert_msg(r == sizes[_i].ret, "'%s': got %d want %d", sizes[_i].text, r, sizes[_i].ret);
        if (r == 0)
                ck_assert_int_eq(out, sizes[_i].bytes);
        else
                ck_assert_int_eq(out, -7);
}
END_TEST

static const struct {
        const char *text;
        int ret;
        int64_t mcpu;
} cpus[] = {
        { "2", 0, 2000 },        { "0.5", 0, 500 },          { "1.25", 0, 1250 },      { "500m", 0, 500 },
        { "0.001", 0, 1 },       { "0", -EINVAL, 0 },        { "0.0005", -EINVAL, 0 }, { "-1", -EINVAL, 0 },
        { "abc", -EINVAL, 0 },   { "1.5m", -EINVAL, 0 },     { "0m", -EINVAL, 0 },     { "", -EINVAL, 0 },
        { "100000", 0, 100000000 }, { "9999999999999", -ERANGE, 0 },
};

START_TEST(cpu_table) {
        int64_t out = -7;
        int r = units_parse_cpus(cpus[_i].text, &out);
        ck_assert_msg(r == cpus[_i].ret, "'%s': got %d want %d", cpus[_i].text, r, cpus[_i].ret);
        if (r == 0)
                ck_assert_int_eq(out, cpus[_i].mcpu);
}
END_TEST

START_TEST(uint_limits) {
        int64_t out;
        ck_assert_int_eq(units_parse_uint("4096", 4096, &out), 0);
        ck_assert_int_eq(out, 4096);
        ck_assert_int_eq(units_parse_uint("4097", 4096, &out), -ERANGE);
        ck_assert_int_eq(units_parse_uint("1.0", 10, &out), -EINVAL);
        ck_assert_int_eq(units_parse_uint("1k", 10000, &out), -EINVAL);
}
END_TEST

START_TEST(formatting) {
        char buf[32];
        ck_assert_str_eq(units_format_size(512, buf, sizeof(buf)), "512B");
        ck_assert_str_eq(units_format_size(64 << 20, buf, sizeof(buf)), "64.0M");
        ck_assert_str_eq(units_format_size(3LL << 29, buf, sizeof(buf)), "1.5G");
        ck_assert_str_eq(units_format_cpus(500, buf, sizeof(buf)), "0.5");
        ck_assert_str_eq(units_format_cpus(2000, buf, sizeof(buf)), "2");
        ck_assert_str_eq(units_format_cpus(1250, buf, sizeof(buf)), "1.25");
        ck_assert_str_eq(units_format_cpus(1, buf, sizeof(buf)), "0.001");
}
END_TEST

static Suite *units_suite(void) {
        Suite *s = suite_create("units");
        TCase *tc = tcase_create("units");
        tcase_add_loop_test(tc, size_table, 0, sizeof(sizes) / sizeof(sizes[0]));
        tcase_add_loop_test(tc, cpu_table, 0, sizeof(cpus) / sizeof(cpus[0]));
        tcase_add_test(tc, uint_limits);
        tcase_add_test(tc, formatting);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(units_suite)
