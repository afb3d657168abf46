/* test_config.c - config files: sections, typed values, and errors that name path:line; and
 * the rest of the daemons' start-up plumbing: small files (fileio.h) and logging (log.h). */
#include "check_main.h"
#include "config.h"
#include "fileio.h"
#include "log.h"
#include "log_journal.h"
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <regex.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
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
        bool b = true;
        ck_assert_int_eq(config_get_bool(&cfg, "agent.nope", &b, err, sizeof(err)), -ENOENT);
        ck_assert(b);
        ck_assert_int_eq(config_get_bool(&cfg, "root", &b, err, sizeof(err)), 0); /* "1" */
        ck_assert(b);
        ck_assert_int_eq(config_get_bool(&cfg, "agent.mem", &b, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "yes or no"));

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
        { "a = 1\nb = 2\n[s]\nx = 1\n[t]\n[s]\nx = 3\n", ":7:" }, /* a section reopened */
        { "[ ]\n", ":1:" },
        { "[s] junk\n", ":1:" },
        { "[s\n", ":1:" },
        { "#ok\n;ok\n\n=\n", ":4:" },
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

START_TEST(duplicate_names_the_first_line) {
        write_config("[agent]\nmem = 1G\n\n# again\nmem = 2G\n");
        config cfg;
        char err[256];
        ck_assert_int_eq(config_load(path, &cfg, err, sizeof(err)), -EINVAL);
        unlink(path);
        char want[256];
        snprintf(want, sizeof(want), "%s:5: agent.mem already set on line 2", path);
        ck_assert_str_eq(err, want);
}
END_TEST

START_TEST(values_keep_what_users_mean) {
        write_config("[a]\nx = 1\n[b]\nx = 2\n[ spaced ]\nurl = k=v=w\nempty =\n"
                     "quoted = \"  padded # not a comment \"\nlone = \"\ncrlf = yes\r\n\tindented\t=\tt\n");
        config cfg;
        char err[256];
        ck_assert_int_eq(config_load(path, &cfg, err, sizeof(err)), 0);
        unlink(path);
        ck_assert_str_eq(config_get(&cfg, "a.x"), "1"); /* the same key in two sections is no duplicate */
        ck_assert_str_eq(config_get(&cfg, "b.x"), "2");
        ck_assert_str_eq(config_get(&cfg, "spaced.url"), "k=v=w");
        ck_assert_str_eq(config_get(&cfg, "spaced.empty"), "");
        ck_assert_str_eq(config_get(&cfg, "spaced.quoted"), "  padded # not a comment ");
        ck_assert_str_eq(config_get(&cfg, "spaced.lone"), "\"");
        ck_assert_str_eq(config_get(&cfg, "spaced.crlf"), "yes");
        ck_assert_str_eq(config_get(&cfg, "spaced.indented"), "t");
        ck_assert_uint_eq(cfg.n, 8);
        ck_assert_int_eq(cfg.entries[7].line, 11);
        const char *const all[] = { "a.x",
                                    "b.x",
                                    "spaced.url",
                                    "spaced.empty",
                                    "spaced.quoted",
                                    "spaced.lone",
                                    "spaced.crlf",
                                    "spaced.indented",
                                    NULL };
        ck_assert_int_eq(config_check_keys(&cfg, all, err, sizeof(err)), 0);
        config_free(&cfg);
        ck_assert_uint_eq(cfg.n, 0);
}
END_TEST

START_TEST(typed_values_name_path_line_and_key) {
        write_config("mem = 2X\ncpus = 0.0001\ncount = -3\nbig = 11\nzero = 0\n");
        config cfg;
        char err[256], want[256];
        int64_t v = 77;
        ck_assert_int_eq(config_load(path, &cfg, err, sizeof(err)), 0);
        unlink(path);
        ck_assert_int_eq(config_get_size(&cfg, "mem", &v, err, sizeof(err)), -EINVAL);
        snprintf(want, sizeof(want), "%s:1: mem: '2X' is not a size (like 512M or 4G)", path);
        ck_assert_str_eq(err, want);
        ck_assert_int_eq(config_get_cpus(&cfg, "cpus", &v, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, ":2: cpus:"));
        ck_assert_int_eq(config_get_uint(&cfg, "count", 10, &v, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, ":3: count:"));
        ck_assert_int_eq(config_get_uint(&cfg, "big", 10, &v, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "from 0 to 10"));
        ck_assert_int_eq(config_get_cpus(&cfg, "zero", &v, err, sizeof(err)), -EINVAL);
        ck_assert_int_eq(v, 77); /* failures leave the output alone */
        ck_assert_int_eq(config_get_size(&cfg, "zero", &v, err, sizeof(err)), 0);
        ck_assert_int_eq(v, 0);
        config_free(&cfg);
}
END_TEST

START_TEST(a_directory_is_not_a_config_file) {
        config cfg;
        char err[256];
        ck_assert_int_eq(config_load("/tmp", &cfg, err, sizeof(err)), -EISDIR);
        ck_assert_ptr_nonnull(strstr(err, "/tmp"));
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

/* The files tests work in a directory the unchecked fixture creates and removes. */
static char dir[64];

static void make_dir(void) {
        strcpy(dir, "/tmp/colony-test-files-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
}

static int remove_entry(const char *p, const struct stat *st, int flag, struct FTW *ftw) {
        (void)st, (void)flag, (void)ftw;
        return remove(p);
}

static void remove_dir(void) { nftw(dir, remove_entry, 8, FTW_DEPTH | FTW_PHYS); }

/* The mode a file created with mode gets under the current umask. */
static mode_t masked(mode_t mode) {
        mode_t mask = umask(0);
        umask(mask);
        return mode & ~mask & 07777;
}

static const char *in_dir(const char *name) {
        static char p[192];
        snprintf(p, sizeof(p), "%s/%s", dir, name);
        return p;
}

START_TEST(write_then_read_trims_trailing_whitespace) {
        char *text = NULL;
        const char *f = in_dir("pid");
        ck_assert_int_eq(file_write(f, "  4242 \n\n", 0644), 0);
        ck_assert_int_eq(file_read_small(f, 0, &text), 0);
        ck_assert_str_eq(text, "  4242");
        free(text);
        ck_assert_int_eq(file_write(f, "7", 0600), 0); /* truncates, keeps the first mode */
        ck_assert_int_eq(file_read_small(f, 0, &text), 0);
        ck_assert_str_eq(text, "7");
        free(text);
        struct stat st;
        ck_assert_int_eq(stat(f, &st), 0);
        ck_assert_int_eq(st.st_mode & 07777, masked(0644));
        ck_assert_int_eq(file_read_small(in_dir("absent"), 0, &text), -ENOENT);
        ck_assert_int_eq(file_write(in_dir("no/such/dir"), "x", 0600), -ENOENT);
}
END_TEST

START_TEST(secrets_must_be_private) {
        char *text = NULL;
        const char *f = in_dir("secret");
        ck_assert_int_eq(file_write(f, "s3cret\n", 0600), 0);
        ck_assert_int_eq(file_read_small(f, 1, &text), 0);
        ck_assert_str_eq(text, "s3cret");
        free(text);
        text = NULL;
        static const mode_t leaky[] = { 0640, 0604, 0620, 0602, 0610 };
        for (size_t i = 0; i < sizeof(leaky) / sizeof(leaky[0]); i++) {
                ck_assert_int_eq(chmod(f, leaky[i]), 0);
                ck_assert_int_eq(file_read_small(f, 1, &text), -EPERM);
                ck_assert_ptr_null(text);
        }
        ck_assert_int_eq(file_read_small(f, 0, &text), 0); /* fine when secrecy is not asked */
        free(text);
}
END_TEST

START_TEST(small_means_at_most_64k) {
        char *big = malloc(64 * 1024 + 2), *text = NULL;
        memset(big, 'x', 64 * 1024 + 1);
        big[64 * 1024] = '\0';
        const char *f = in_dir("big");
        ck_assert_int_eq(file_write(f, big, 0600), 0);
        ck_assert_int_eq(file_read_small(f, 0, &text), 0);
        ck_assert_uint_eq(strlen(text), 64 * 1024);
        free(text);
        big[64 * 1024] = 'x';
        big[64 * 1024 + 1] = '\0';
        ck_assert_int_eq(file_write(f, big, 0600), 0);
        ck_assert_int_eq(file_read_small(f, 0, &text), -EFBIG);
        free(big);
        /* proc and cgroup files report size 0 but still read */
        ck_assert_int_eq(file_read_small("/proc/self/stat", 0, &text), 0);
        ck_assert_ptr_nonnull(strchr(text, '('));
        free(text);
}
END_TEST

START_TEST(mkdir_p_makes_parents_and_accepts_existing) {
        char p[256];
        snprintf(p, sizeof(p), "%s/a/b//c/", dir);
        ck_assert_int_eq(file_mkdir_p(p, 0750), 0);
        ck_assert_int_eq(file_mkdir_p(p, 0750), 0);
        struct stat st;
        ck_assert_int_eq(stat(in_dir("a/b/c"), &st), 0);
        ck_assert(S_ISDIR(st.st_mode));
        ck_assert_int_eq(st.st_mode & 07777, masked(0750));
        ck_assert_int_eq(file_write(in_dir("a/file"), "x", 0600), 0);
        ck_assert_int_eq(file_mkdir_p(in_dir("a/file"), 0700), -ENOTDIR);
        ck_assert_int_eq(file_mkdir_p(in_dir("a/file/sub"), 0700), -ENOTDIR);
        ck_assert_int_eq(file_mkdir_p("", 0700), -EINVAL);
}
END_TEST

/* Run fn with stderr going to a file, and return what it wrote (caller frees). */
static char *capture_stderr(void (*fn)(void)) {
        const char *f = in_dir("stderr");
        int fd = open(f, O_RDWR | O_CREAT | O_TRUNC | O_CLOEXEC, 0600), saved = dup(STDERR_FILENO);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(dup2(fd, STDERR_FILENO), STDERR_FILENO);
        fn();
        dup2(saved, STDERR_FILENO);
        close(saved);
        close(fd);
        char *text = NULL;
        ck_assert_int_eq(file_read_small(f, 0, &text), 0);
        return text;
}

static void log_some(void) {
        log_open("colony-test", NULL, LOG_INFO);
        log_info("agent up host=%s", "node1");
        log_debug("not shown at info level");
        errno = EBUSY;
        ck_assert_int_eq(log_errno(LOG_WARNING, -ENOENT, "job=%d cgroup=%s", 42, "/colony-x/job-42"), -ENOENT);
        ck_assert_int_eq(errno, EBUSY); /* callers may still look at errno after logging */
}

START_TEST(log_lines_carry_time_ident_pid_and_level) {
        char *text = capture_stderr(log_some), pattern[256];
        snprintf(pattern, sizeof(pattern),
                 "^[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9]{2}:[0-9]{2}:[0-9]{2}\\.[0-9]{3} colony-test\\[%d\\] info: "
                 "agent up host=node1\n"
                 "[0-9]{4}-[0-9]{2}-[0-9]{2}T[0-9:.]{12} colony-test\\[%d\\] warning: "
                 "job=42 cgroup=/colony-x/job-42: No such file or directory$",
                 (int)getpid(), (int)getpid());
        regex_t re;
        ck_assert_int_eq(regcomp(&re, pattern, REG_EXTENDED | REG_NOSUB), 0);
        ck_assert_msg(regexec(&re, text, 0, NULL, 0) == 0, "unexpected log output:\n%s", text);
        regfree(&re);
        free(text);
}
END_TEST

static void log_with_foreign_journal_stream(void) {
        /* a variable inherited from a systemd service whose stderr this is not */
        setenv("JOURNAL_STREAM", "1:1", 1);
        ck_assert_int_eq(log_open_journal("colony-test", LOG_DEBUG), 0);
        log_debug("still on stderr");
}

START_TEST(journal_only_when_stderr_is_the_journal) {
        char *text = capture_stderr(log_with_foreign_journal_stream);
        ck_assert_ptr_nonnull(strstr(text, "debug: still on stderr"));
        free(text);
}
END_TEST

static Suite *config_suite(void) {
        Suite *s = suite_create("config");
        TCase *tc = tcase_create("config");
        tcase_add_test(tc, sections_values_and_types);
        tcase_add_loop_test(tc, broken_files_name_the_line, 0, sizeof(broken) / sizeof(broken[0]));
        tcase_add_test(tc, duplicate_names_the_first_line);
        tcase_add_test(tc, values_keep_what_users_mean);
        tcase_add_test(tc, typed_values_name_path_line_and_key);
        tcase_add_test(tc, a_directory_is_not_a_config_file);
        tcase_add_test(tc, missing_file);
        suite_add_tcase(s, tc);

        TCase *files = tcase_create("files");
        tcase_add_unchecked_fixture(files, make_dir, remove_dir);
        tcase_add_test(files, write_then_read_trims_trailing_whitespace);
        tcase_add_test(files, secrets_must_be_private);
        tcase_add_test(files, small_means_at_most_64k);
        tcase_add_test(files, mkdir_p_makes_parents_and_accepts_existing);
        tcase_add_test(files, log_lines_carry_time_ident_pid_and_level);
        tcase_add_test(files, journal_only_when_stderr_is_the_journal);
        suite_add_tcase(s, files);
        return s;
}

COLONY_CHECK_MAIN(config_suite)
