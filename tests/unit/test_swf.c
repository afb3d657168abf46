/* test_swf.c - Standard Workload Format traces: the job stream colony sim draws from them, and
 * the lines it refuses because their numbers do not fit what the simulator counts in. */
#include "check_main.h"
#include "swf.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define GIB ((int64_t)1 << 30)

static char path[64];

/* Load text as a trace with 1 GiB per processor where it says nothing, departments by by; err gets
 * the message. */
static int load_by(const char *text, sim_dept_key by, swf_trace *t, char *err, size_t errlen) {
        strcpy(path, "/tmp/colony-test-swf-XXXXXX");
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
        int r = swf_load(path, GIB, by, t, err, errlen);
        unlink(path);
        return r;
}

static int load(const char *text, swf_trace *t, char *err, size_t errlen) {
        return load_by(text, SIM_DEPT_GROUP, t, err, errlen);
}

START_TEST(jobs_in_arrival_order_from_zero) {
        swf_trace t;
        sim_job j;
        char err[256];
        ck_assert_int_eq(load("; comment\n"
                              "1 120 -1 10 2 -1 -1 2 10 1048576 1 1 1 1 1 -1 -1 -1\n"
                              "2 100 -1  5 1 -1 -1 -1 5 -1 1 1 1 1 1 -1 -1 -1\n"
                              "3 101 -1 -1 1 -1 -1 1 5 -1 5 1 1 1 1 -1 -1 -1\n",
                              &t, err, sizeof(err)),
                         0);
        ck_assert_uint_eq(t.skipped, 1);
        ck_assert_int_eq(sim_jobs_next(&t.jobs, &j), 1);
        ck_assert(j.arrival == 0 && j.runtime == 5);
        ck_assert_int_eq(j.req.mcpu, 1000); /* allocated processors stand in for requested */
        ck_assert_int_eq(j.req.mem, GIB);   /* the default per processor */
        ck_assert_int_eq(sim_jobs_next(&t.jobs, &j), 1);
        ck_assert(j.arrival == 20 && j.runtime == 10);
        ck_assert_int_eq(j.req.mem, 2 * GIB); /* 1 GiB in KB, per processor */
        ck_assert_int_eq(sim_jobs_next(&t.jobs, &j), 0);
        swf_free(&t);
}
END_TEST

/* Field 12 is the user ID, 13 the group ID; -1 is unknown. */
static const char two_users[] = "1 0 -1 10 2 -1 -1 2 10 -1 1  3 7 1 1 -1 -1 -1\n"
                                "2 5 -1 10 2 -1 -1 2 10 -1 1 -1 2 1 1 -1 -1 -1\n";

START_TEST(departments_by_group_or_user) {
        swf_trace t;
        sim_job j;
        char err[256];
        ck_assert_int_eq(load_by(two_users, SIM_DEPT_GROUP, &t, err, sizeof(err)), 0);
        ck_assert_int_eq(sim_jobs_next(&t.jobs, &j), 1);
        ck_assert_str_eq(t.depts.v[j.dept], "g7");
        ck_assert_int_eq(sim_jobs_next(&t.jobs, &j), 1);
        ck_assert_str_eq(t.depts.v[j.dept], "g2");
        swf_free(&t);
        ck_assert_int_eq(load_by(two_users, SIM_DEPT_USER, &t, err, sizeof(err)), 0);
        ck_assert_int_eq(sim_jobs_next(&t.jobs, &j), 1);
        ck_assert_str_eq(t.depts.v[j.dept], "u3");
        ck_assert_int_eq(sim_jobs_next(&t.jobs, &j), 1);
        ck_assert_str_eq(t.depts.v[j.dept], "unknown");
        ck_assert_uint_eq(t.depts.n, 2);
        swf_free(&t);
        ck_assert_int_eq(load_by(two_users, SIM_DEPT_NONE, &t, err, sizeof(err)), 0);
        ck_assert_uint_eq(t.depts.n, 0);
        swf_free(&t);
        ck_assert_int_eq(
                load_by("1 0 -1 10 2 -1 -1 2 10 -1 1 3 7.5 1 1 -1 -1 -1\n", SIM_DEPT_GROUP, &t, err, sizeof(err)),
                -EINVAL);
        ck_assert_msg(strstr(err, ":1: the group ID is not -1 or a whole number"), "%s", err);
        ck_assert_uint_eq(t.depts.n, 0);
}
END_TEST

/* Found by tests/fuzz (corpus/swf/crash-40a665e4...): memory of 1e80 KB per processor was
 * converted to int64 bytes, which is undefined behaviour; times are bounded for the same reason
 * (the simulator counts int64 microseconds). */
static const struct {
        const char *line, *reason;
} too_large[] = {
        { "1 0 -1 10 2 -1 -1 2 10 1e80 1 1 1 1 1 -1 -1 -1\n", ":1: memory beyond 1 EiB" },
        { "1 0 -1 10 2 -1 9e200 2 10 -1 1 1 1 1 1 -1 -1 -1\n", ":1: memory beyond 1 EiB" },
        { "1 1e300 -1 10 2 -1 -1 2 10 -1 1 1 1 1 1 -1 -1 -1\n", ":1: submit or run time beyond 10^9 s" },
        { "1 0 -1 1e19 2 -1 -1 2 10 -1 1 1 1 1 1 -1 -1 -1\n", ":1: submit or run time beyond 10^9 s" },
};

START_TEST(numbers_beyond_what_the_simulator_counts_are_refused) {
        swf_trace t;
        char err[256];
        ck_assert_int_eq(load(too_large[_i].line, &t, err, sizeof(err)), -EINVAL);
        ck_assert_msg(strstr(err, too_large[_i].reason), "%s", err);
        ck_assert_ptr_null(t.jobs.v);
}
END_TEST

static Suite *swf_suite(void) {
        Suite *s = suite_create("swf");
        TCase *tc = tcase_create("swf");
        tcase_add_test(tc, jobs_in_arrival_order_from_zero);
        tcase_add_test(tc, departments_by_group_or_user);
        tcase_add_loop_test(tc, numbers_beyond_what_the_simulator_counts_are_refused, 0,
                            sizeof(too_large) / sizeof(too_large[0]));
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(swf_suite)
