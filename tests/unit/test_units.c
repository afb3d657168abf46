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
        { "0", 0, 0 },
        { "1024", 0, 1024 },
        { "64M", 0, 64 << 20 },
        { "64m", 0, 64 << 20 },
        { "1.5G", 0, 3LL << 29 },
        { "2GiB", 0, 2LL << 30 },
        { "10KB", 0, 10240 },
        { "7B", 0, 7 },
        { "1T", 0, 1LL << 40 },
        { "-1", -EINVAL, 0 },
        { "", -EINVAL, 0 },
        { "abc", -EINVAL, 0 },
        { "1.5.3", -EINVAL, 0 },
        { "1.", -EINVAL, 0 },
        { "12X", -EINVAL, 0 },
        { "64 M", -EINVAL, 0 },
        { "99999999999T", -ERANGE, 0 },
        { "99999999999999999999", -ERANGE, 0 },
        { "0.5K", 0, 512 },
        { "1kib", 0, 1024 },
        { "1KiB", 0, 1024 },
        { "0.3K", 0, 307 },
        { "1.5", -EINVAL, 0 },
        { "1.5B", -EINVAL, 0 },
        { "1iB", -EINVAL, 0 },
        { "1Ki", -EINVAL, 0 },
        { "1KBB", -EINVAL, 0 },
        { "+1", -EINVAL, 0 },
        { " 1", -EINVAL, 0 },
        { "1 ", -EINVAL, 0 },
        { ".5G", -EINVAL, 0 },
        { "1P", -EINVAL, 0 },
        { "1.0000000001G", -EINVAL, 0 },
        { "1048576T", 0, RES_MEM_MAX },
        { "1073741824G", 0, RES_MEM_MAX },
        { "1048576.001T", -ERANGE, 0 },
        { "1048577T", -ERANGE, 0 },
        { "1152921504606846977", -ERANGE, 0 },
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
        { "2", 0, 2000 },
        { "0.5", 0, 500 },
        { "1.25", 0, 1250 },
        { "500m", 0, 500 },
        { "0.001", 0, 1 },
        { "0", -EINVAL, 0 },
        { "0.0005", -EINVAL, 0 },
        { "-1", -EINVAL, 0 },
        { "abc", -EINVAL, 0 },
        { "1.5m", -EINVAL, 0 },
        { "0m", -EINVAL, 0 },
        { "", -EINVAL, 0 },
        { "100000", 0, 100000000 },
        { "9999999999999", -ERANGE, 0 },
        { "1.250", 0, 1250 },
        { "0.5000", -EINVAL, 0 },
        { "2.", -EINVAL, 0 },
        { ".5", -EINVAL, 0 },
        { "500M", -EINVAL, 0 },
        { "1 ", -EINVAL, 0 },
        { "+1", -EINVAL, 0 },
        { "1e3", -EINVAL, 0 },
        { "1099511627776m", 0, RES_MCPU_MAX },
        { "1099511627.776", 0, RES_MCPU_MAX },
        { "1099511627777m", -ERANGE, 0 },
        { "1099511628", -ERANGE, 0 },
};

START_TEST(cpu_table) {
        int64_t out = -7;
        int r = units_parse_cpus(cpus[_i].text, &out);
        ck_assert_msg(r == cpus[_i].ret, "'%s': got %d want %d", cpus[_i].text, r, cpus[_i].ret);
        if (r == 0)
                ck_assert_int_eq(out, cpus[_i].mcpu);
}
END_TEST

#define S 1000000LL
/* The Slurm-style parsers: a job's memory (bare = MiB) and its time limit. */
static const struct {
        int (*parse)(const char *s, int64_t *out);
        const char *text;
        int ret;
        int64_t value;
} slurm[] = {
        { units_parse_mem, "100", 0, 100LL << 20 },
        { units_parse_mem, "4096", 0, 4096LL << 20 },
        { units_parse_mem, "1", 0, 1 << 20 },
        { units_parse_mem, "2G", 0, 2LL << 30 },
        { units_parse_mem, "1024K", 0, 1 << 20 },
        { units_parse_mem, "512K", -EDOM, 0 },
        { units_parse_mem, "0", -EDOM, 0 },
        { units_parse_mem, "1048575B", -EDOM, 0 },
        { units_parse_mem, "1073741824B", 0, 1LL << 30 },
        { units_parse_mem, "1.5", -EINVAL, 0 },
        { units_parse_mem, "", -EINVAL, 0 },
        { units_parse_mem, "x", -EINVAL, 0 },
        { units_parse_mem, "1099511627777", -ERANGE, 0 },
        { units_parse_mem, "1048576", 0, 1LL << 40 },
        { units_parse_time, "10", 0, 600 * S },
        { units_parse_time, "0:02", 0, 2 * S },
        { units_parse_time, "1:30", 0, 90 * S },
        { units_parse_time, "2:00:01", 0, 7201 * S },
        { units_parse_time, "1-0", 0, 86400 * S },
        { units_parse_time, "1-2", 0, (86400 + 7200) * S },
        { units_parse_time, "1-2:03", 0, (86400 + 7200 + 180) * S },
        { units_parse_time, "1-02:03:04", 0, (86400 + 7200 + 184) * S },
        { units_parse_time, "0", 0, 0 },
        { units_parse_time, "UNLIMITED", 0, 0 },
        { units_parse_time, "infinite", 0, 0 },
        { units_parse_time, "", -EINVAL, 0 },
        { units_parse_time, "1:2:3:4", -EINVAL, 0 },
        { units_parse_time, "-1", -EINVAL, 0 },
        { units_parse_time, "1-", -EINVAL, 0 },
        { units_parse_time, "1-2:3:4:5", -EINVAL, 0 },
        { units_parse_time, "1h", -EINVAL, 0 },
        { units_parse_time, ":30", -EINVAL, 0 },
        { units_parse_time, "1:", -EINVAL, 0 },
        { units_parse_time, " 1", -EINVAL, 0 },
        { units_parse_time, "367-0", -ERANGE, 0 },
        { units_parse_time, "9999999999", -EINVAL, 0 },
        { units_parse_time, "366-0", 0, 366 * 86400 * S },
};

START_TEST(slurm_table) {
        int64_t out = -7;
        int r = slurm[_i].parse(slurm[_i].text, &out);
        ck_assert_msg(r == slurm[_i].ret, "'%s': got %d want %d", slurm[_i].text, r, slurm[_i].ret);
        ck_assert_int_eq(out, r == 0 ? slurm[_i].value : -7);
}
END_TEST

START_TEST(time_format) {
        char buf[32];
        ck_assert_str_eq(units_format_time(0, buf, sizeof(buf)), "UNLIMITED");
        ck_assert_str_eq(units_format_time(2 * S, buf, sizeof(buf)), "0:02");
        ck_assert_str_eq(units_format_time(3725 * S, buf, sizeof(buf)), "1:02:05");
        ck_assert_str_eq(units_format_time((86400 + 61) * S, buf, sizeof(buf)), "1-00:01:01");
        int64_t back;
        ck_assert_int_eq(units_parse_time("1-00:01:01", &back), 0);
        ck_assert_int_eq(back, (86400 + 61) * S);
}
END_TEST

START_TEST(uint_limits) {
        int64_t out;
        ck_assert_int_eq(units_parse_uint("4096", 4096, &out), 0);
        ck_assert_int_eq(out, 4096);
        ck_assert_int_eq(units_parse_uint("4097", 4096, &out), -ERANGE);
        ck_assert_int_eq(units_parse_uint("1.0", 10, &out), -EINVAL);
        ck_assert_int_eq(units_parse_uint("1k", 10000, &out), -EINVAL);
        ck_assert_int_eq(units_parse_uint("", 10, &out), -EINVAL);
        ck_assert_int_eq(units_parse_uint("-1", 10, &out), -EINVAL);
        ck_assert_int_eq(units_parse_uint("99999999999999999999", INT64_MAX, &out), -ERANGE);
        ck_assert_int_eq(units_parse_uint("0", 0, &out), 0);
        ck_assert_int_eq(out, 0);
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
        ck_assert_str_eq(units_format_cpus(0, buf, sizeof(buf)), "0");
        ck_assert_str_eq(units_format_cpus(1050, buf, sizeof(buf)), "1.05");
        ck_assert_str_eq(units_format_cpus(-500, buf, sizeof(buf)), "-0.5");
        ck_assert_str_eq(units_format_cpus(-2001, buf, sizeof(buf)), "-2.001");
        ck_assert_str_eq(units_format_cpus(INT64_MIN, buf, sizeof(buf)), "-9223372036854775.808");
        ck_assert_str_eq(units_format_size(0, buf, sizeof(buf)), "0B");
        ck_assert_str_eq(units_format_size(1023, buf, sizeof(buf)), "1023B");
        ck_assert_str_eq(units_format_size(1024, buf, sizeof(buf)), "1.0K");
        ck_assert_str_eq(units_format_size((1 << 20) - 1, buf, sizeof(buf)), "1.0M"); /* not "1024.0K" */
        ck_assert_str_eq(units_format_size(RES_MEM_MAX, buf, sizeof(buf)), "1.0E");
        ck_assert_str_eq(units_format_size(-(64 << 20), buf, sizeof(buf)), "-64.0M");
        ck_assert_str_eq(units_format_size(1 << 20, buf, 4), "1.0"); /* truncated, still terminated */
}

/* What the CLI prints must read back as what it printed. */
START_TEST(format_parses_back) {
        static const int64_t sizes_back[] = { 512, 1 << 10, 64 << 20, 3LL << 29, 1LL << 40 };
        static const int64_t cpus_back[] = { 1, 10, 100, 500, 1250, 2000, 123456 };
        char buf[32];
        int64_t out;
        for (size_t i = 0; i < sizeof(sizes_back) / sizeof(sizes_back[0]); i++) {
                ck_assert_int_eq(units_parse_size(units_format_size(sizes_back[i], buf, sizeof(buf)), &out), 0);
                ck_assert_int_eq(out, sizes_back[i]);
        }
        for (size_t i = 0; i < sizeof(cpus_back) / sizeof(cpus_back[0]); i++) {
                ck_assert_int_eq(units_parse_cpus(units_format_cpus(cpus_back[i], buf, sizeof(buf)), &out), 0);
                ck_assert_int_eq(out, cpus_back[i]);
        }
}
END_TEST

static Suite *units_suite(void) {
        Suite *s = suite_create("units");
        TCase *tc = tcase_create("units");
        tcase_add_loop_test(tc, size_table, 0, sizeof(sizes) / sizeof(sizes[0]));
        tcase_add_loop_test(tc, cpu_table, 0, sizeof(cpus) / sizeof(cpus[0]));
        tcase_add_test(tc, uint_limits);
        tcase_add_test(tc, formatting);
        tcase_add_test(tc, format_parses_back);
        tcase_add_loop_test(tc, slurm_table, 0, sizeof(slurm) / sizeof(slurm[0]));
        tcase_add_test(tc, time_format);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(units_suite)
