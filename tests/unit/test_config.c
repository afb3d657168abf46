/* test_config.c - config files: sections, typed values, and errors that name path:line. */
#include "check_main.h"
#include "config.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char path[64];

static void write_config(const char *text) {
        strcpy(path, "/tmp/colony-test-config-XXXXXX");
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
}

START_TEST(sections_values_and_types) {
        write_config("# comment\nroot = 1\n[controller]\n  socket = \"/run/x.sock\"  \nmax_pending=500\n"
                     "[agent]\nmem = 2G\ncpus = 1.5\n");
        config cfg;
        char err[256];
        ck_assert_int_eq(config_load(path, &cfg, err, sizeof(err)), 0);
        unlink(path);
        ck_assert_str_eq(config_get(&cfg, "root"), "1");
        ck_assert_str_eq(config_get(&cfg, "controller.socket"), "/run/x.sock");
        ck_assert_ptr_null(config_get(&cfg, "socket"));
        int64_t v;
        ck_assert_int_eq(config_get_uint(&cfg, "controller.max_pending", 1000, &v, err, sizeof(err)), 0);
        ck_assert_int_eq(v, 500);
        ck_assert_int_eq(config_get_uint(&cfg, "controller.max_pending", 100, &v, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, ":5:"));
        ck_assert_int_eq(config_get_size(&cfg, "agent.mem", &v, err, sizeof(err)), 0);
        ck_assert_int_eq(v, 2LL << 30);
        ck_assert_int_eq(config_get_cpus(&cfg, "agent.cpus", &v, err, sizeof(err)), 0);
        ck_assert_int_eq(v, 1500);
        ck_assert_int_eq(config_get_size(&cfg, "agent.nope", &v, err, sizeof(err)), -ENOENT);

        const char *const known[] = { "root", "controller.socket", "controller.max_pending", "agent.mem", NULL };
        ck_assert_int_eq(config_check_keys(&cfg, known, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "agent.cpus"));
        ck_assert_ptr_nonnull(strstr(err, ":8:"));
        config_free(&cfg);
}
END_TEST

static const struct {
        const char *text;
        const char *where;
} broken[] = {
        { "a = 1\njust words\n", ":2:" },
        { "[unclosed\n", ":1:" },
        { "a = 1\n\n a=2\n", ":3:" },
        { " = 5\n", ":1:" },
};

START_TEST(broken_files_name_the_line) {
        write_config(broken[_i].text);
        config cfg;
        char err[256];
        ck_assert_int_eq(config_load(path, &cfg, err, sizeof(err)), -EINVAL);
        unlink(path);
        ck_assert_msg(strstr(err, broken[_i].where), "'%s' lacks %s", err, broken[_i].where);
        ck_assert_ptr_null(cfg.entries);
}
END_TEST

START_TEST(missing_file) {
        config cfg;
        char err[256];
        ck_assert_int_eq(config_load("/nonexistent/colony.conf", &cfg, err, sizeof(err)), -ENOENT);
        ck_assert_ptr_nonnull(strstr(err, "/nonexistent/colony.conf"));
}
END_TEST

static Suite *config_suite(void) {
        Suite *s = suite_create("config");
        TCase *tc = tcase_create("config");
        tcase_add_test(tc, sections_values_and_types);
        tcase_add_loop_test(tc, broken_files_name_the_line, 0, sizeof(broken) / sizeof(broken[0]));
        tcase_add_test(tc, missing_file);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(config_suite)
