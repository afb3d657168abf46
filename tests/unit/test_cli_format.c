/* test_cli_format.c - how the CLI prints durations, times, signals, command lines, tables. */
#include "check_main.h"
#include "format.h"
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define SEC 1000000LL

START_TEST(durations_pick_a_readable_unit) {
        char buf[FMT_BUF];

        ck_assert_str_eq(fmt_duration(0, buf, sizeof(buf)), "0.0 s");
        ck_assert_str_eq(fmt_duration(1234567, buf, sizeof(buf)), "1.2 s");
        ck_assert_str_eq(fmt_duration(59 * SEC, buf, sizeof(buf)), "59.0 s");
        ck_assert_str_eq(fmt_duration(65 * SEC, buf, sizeof(buf)), "1m05s");
        ck_assert_str_eq(fmt_duration((3 * 3600 + 2 * 60 + 59) * SEC, buf, sizeof(buf)), "3h02m");
        ck_assert_str_eq(fmt_duration((2 * 86400 + 5 * 3600) * SEC, buf, sizeof(buf)), "2d05h");
        ck_assert_str_eq(fmt_duration(-1, buf, sizeof(buf)), "-");
}
END_TEST

START_TEST(times_are_local_iso_8601_with_the_offset) {
        char buf[FMT_BUF];
        int64_t t = 1700000000 * SEC + 999999;

        setenv("TZ", "UTC", 1);
        tzset();
        ck_assert_str_eq(fmt_time(t, buf, sizeof(buf)), "2023-11-14T22:13:20+00:00");
        setenv("TZ", "XYZ-2", 1); /* POSIX: two hours east of UTC */
        tzset();
        ck_assert_str_eq(fmt_time(t, buf, sizeof(buf)), "2023-11-15T00:13:20+02:00");
        setenv("TZ", "XYZ+5:30", 1);
        tzset();
        ck_assert_str_eq(fmt_time(t, buf, sizeof(buf)), "2023-11-14T16:43:20-05:30");
        ck_assert_str_eq(fmt_time(0, buf, sizeof(buf)), "-");
}
END_TEST

START_TEST(signals_by_name_or_number) {
        char buf[FMT_BUF];

        ck_assert_str_eq(fmt_signal(SIGKILL, buf, sizeof(buf)), "SIGKILL");
        ck_assert_str_eq(fmt_signal(SIGTERM, buf, sizeof(buf)), "SIGTERM");
        ck_assert_str_eq(fmt_signal(200, buf, sizeof(buf)), "signal 200");
}
END_TEST

START_TEST(command_lines_are_shell_quoted) {
        char *argv[] = { "/bin/echo", "plain-arg_1.txt", "a b", "it's", "", "$HOME", NULL };
        char *none[] = { NULL };
        char *s = fmt_argv(argv);

        ck_assert_str_eq(s, "/bin/echo plain-arg_1.txt 'a b' 'it'\\''s' '' '$HOME'");
        free(s);
        s = fmt_argv(none);
        ck_assert_str_eq(s, "");
        free(s);
}
END_TEST

/* Control characters and bytes that are not UTF-8 reach no terminal raw: C escapes instead. */
START_TEST(control_characters_are_escaped) {
        static const struct {
                const char *in, *out;
        } cases[] = {
                { "plain h\xc3\xa9 \xe2\x82\xac back\\slash", "plain h\xc3\xa9 \xe2\x82\xac back\\slash" },
                { "a\nb\tc\rd", "a\\nb\\tc\\rd" },
                { "\x1b]0;pwned\x07\x1b[2J", "\\x1b]0;pwned\\x07\\x1b[2J" },
                { "del\x7f", "del\\x7f" },
                { "csi\xc2\x9b"
                  "31m nbsp\xc2\xa0",
                  "csi\\u009b31m nbsp\xc2\xa0" }, /* C1 escaped, U+00A0 kept */
                { "latin1 \xe9t\xe9 cut\xe2\x82", "latin1 \\xe9t\\xe9 cut\\xe2\\x82" },
                { "", "" },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *s = fmt_escape(cases[i].in);
                ck_assert_str_eq(s, cases[i].out);
                free(s);
        }
        char *out = NULL, *argv[] = { "/bin/sh", "-c", "printf '\x1b[31m'\necho \\done", NULL };
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        fmt_line(f, "%-6s%s", "name:", "evil\x1b[2J\nline");
        fclose(f);
        ck_assert_str_eq(out, "name: evil\\x1b[2J\\nline\n");
        free(out);
        /* bash reads it back as the same three words */
        out = fmt_argv(argv);
        ck_assert_str_eq(out, "/bin/sh -c $'printf \\'\\x1b[31m\\'\\necho \\\\done'");
        free(out);
}
END_TEST

START_TEST(tables_align_columns_to_the_widest_cell) {
        static const char *const headers[] = { "ID", "NAME", "STATE" };
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);
        fmt_table t;

        ck_assert_int_eq(fmt_table_init(&t, 3, headers), 0);
        ck_assert_int_eq(fmt_table_row(&t, "7", "crunch-numbers", "running"), 0);
        ck_assert_int_eq(fmt_table_row(&t, "12", NULL, "pending"), 0);
        ck_assert_int_eq(fmt_table_row(&t, "13", "h\xc3\xa9", "x"), 0);  /* UTF-8: two bytes, one column */
        ck_assert_int_eq(fmt_table_row(&t, "14", "a\x1b[2Jb", "\n"), 0); /* escaped, then measured */
        fmt_table_print(&t, f);
        fclose(f);
        ck_assert_str_eq(out, "ID  NAME            STATE\n"
                              "7   crunch-numbers  running\n"
                              "12  -               pending\n"
                              "13  h\xc3\xa9              x\n"
                              "14  a\\x1b[2Jb       \\n\n");
        free(out);
        fmt_table_free(&t);
        ck_assert_int_eq(fmt_table_init(&t, 0, headers), -EINVAL);
}
END_TEST

START_TEST(text_wraps_at_word_boundaries) {
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);

        fmt_wrap(f, "* ", "one two three four five six seven", 16);
        fmt_wrap(f, "- ", "averyveryverylongword x", 8);
        fclose(f);
        ck_assert_str_eq(out, "* one two three\n  four five six\n  seven\n"
                              "- averyveryverylongword\n  x\n");
        free(out);
}
END_TEST

static Suite *cli_format_suite(void) {
        Suite *s = suite_create("cli_format");
        TCase *tc = tcase_create("format");
        tcase_add_test(tc, durations_pick_a_readable_unit);
        tcase_add_test(tc, times_are_local_iso_8601_with_the_offset);
        tcase_add_test(tc, signals_by_name_or_number);
        tcase_add_test(tc, command_lines_are_shell_quoted);
        tcase_add_test(tc, control_characters_are_escaped);
        tcase_add_test(tc, tables_align_columns_to_the_widest_cell);
        tcase_add_test(tc, text_wraps_at_word_boundaries);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(cli_format_suite)
