/* test_instance.c - the machines and jobs files of colony place and colony sim: one range for a
 * value whether it is written as a number or a string, and strings read whole. */
#include "check_main.h"
#include "instance.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static char path[64];

static const char *write_file(const char *text) {
        strcpy(path, "/tmp/colony-test-instance-XXXXXX");
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
        return path;
}

/* Load text as a jobs file; returns what inst_load_jobs did, err its message. */
static int load_jobs(const char *text, sched_job **jobs, size_t *n, char *err, size_t errlen) {
        int r = inst_load_jobs(write_file(text), jobs, n, err, errlen);
        unlink(path);
        return r;
}

static int load_machines(const char *text, inst_machines *m, char *err, size_t errlen) {
        int r = inst_load_machines(write_file(text), m, err, errlen);
        unlink(path);
        return r;
}

START_TEST(count_repeats_an_entry) {
        sched_job *jobs;
        size_t n;
        char err[512];
        ck_assert_int_eq(load_jobs("{\"jobs\": [{\"cpus\": 1, \"mem\": \"16G\", \"count\": 2}, "
                                   "{\"cpus\": \"500m\", \"mem\": 4294967296}]}",
                                   &jobs, &n, err, sizeof(err)),
                         0);
        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(jobs[1].id, 2);
        ck_assert_int_eq(jobs[1].req.mcpu, 1000);
        ck_assert_int_eq(jobs[2].req.mcpu, 500);
        ck_assert_int_eq(jobs[2].req.mem, (int64_t)4 << 30);
        free(jobs);
}
END_TEST

/* Found by tests/fuzz (corpus/instance/crash-6d4bbbf2...): "mem": 0 was refused, "mem": "0m" taken. */
static const char *const zero_memory[] = {
        "{\"jobs\": [{\"cpus\": 1, \"mem\": \"0m\"}]}",
        "{\"jobs\": [{\"cpus\": 1, \"mem\": \"0\"}]}",
        "{\"jobs\": [{\"cpus\": 1, \"mem\": 0}]}",
};

START_TEST(zero_memory_is_refused_however_written) {
        sched_job *jobs = (sched_job *)1;
        size_t n = 1;
        char err[512];
        ck_assert_int_eq(load_jobs(zero_memory[_i], &jobs, &n, err, sizeof(err)), -EINVAL);
        ck_assert_ptr_null(jobs);
        ck_assert_uint_eq(n, 0);
        ck_assert_ptr_nonnull(strstr(err, "job entry 1: mem: not a size"));
}
END_TEST

START_TEST(a_machine_may_have_nothing_free) {
        inst_machines m = { 0 };
        char err[512];
        ck_assert_int_eq(load_machines("{\"machines\": [{\"cpus\": 4, \"mem\": \"8G\", \"free_cpus\": 0, "
                                       "\"free_mem\": \"0\"}]}",
                                       &m, err, sizeof(err)),
                         0);
        ck_assert_int_eq(m.machines[0].free.mcpu, 0);
        ck_assert_int_eq(m.machines[0].free.mem, 0);
        inst_machines_free(&m);
        ck_assert_int_eq(load_machines("{\"machines\": [{\"cpus\": 0, \"mem\": \"8G\"}]}", &m, err, sizeof(err)),
                         -EINVAL);
        inst_machines_free(&m);
}
END_TEST

START_TEST(cpu_strings_are_read_whole) {
        char text[256];
        inst_machines m = { 0 };
        char err[512];
        /* 61 zeros, then 150: a copy cut at 63 bytes read 15 cores */
        snprintf(text, sizeof(text), "{\"machines\": [{\"cpus\": \"%061d150\", \"mem\": \"8G\"}]}", 0);
        ck_assert_int_eq(load_machines(text, &m, err, sizeof(err)), 0);
        ck_assert_int_eq(m.machines[0].capacity.mcpu, 150000);
        inst_machines_free(&m);
}
END_TEST

static Suite *instance_suite(void) {
        Suite *s = suite_create("instance");
        TCase *tc = tcase_create("instance");
        tcase_add_test(tc, count_repeats_an_entry);
        tcase_add_loop_test(tc, zero_memory_is_refused_however_written, 0,
                            sizeof(zero_memory) / sizeof(zero_memory[0]));
        tcase_add_test(tc, a_machine_may_have_nothing_free);
        tcase_add_test(tc, cpu_strings_are_read_whole);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(instance_suite)
