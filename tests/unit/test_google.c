/* test_google.c - Google cluster-data 2011 tables: the jobs colony sim makes of a task_events
 * table (a task's first run), what it leaves out and counts, the cluster of a machine_events
 * table, and the broken lines it refuses with their line number, keeping nothing. */
#include "check_main.h"
#include "google.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define MIB ((int64_t)1 << 20)

/* A machine of normalized size 1.0: 10 cores, 1000 MiB, so that 0.5 is 5 cores and 500 MiB. */
static const res_t machine = { .mcpu = 10000, .mem = 1000 * MIB };

static char path[64];

/* text in a temporary file, whose name stays in path until the next call */
static void write_file(const char *text) {
        strcpy(path, "/tmp/colony-test-google-XXXXXX");
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(write(fd, text, strlen(text)), (ssize_t)strlen(text));
        close(fd);
}

static int load_tasks(const char *text, sim_dept_key by, google_trace *t, char *err, size_t errlen) {
        write_file(text);
        int r = google_load_tasks(path, machine, by, t, err, errlen);
        unlink(path);
        return r;
}

static int load_machines(const char *text, google_machines *m, char *err, size_t errlen) {
        write_file(text);
        int r = google_load_machines(path, machine, m, err, errlen);
        unlink(path);
        return r;
}

/* Times from 600 s, the 2011 trace's start. Task (job, index):
 *   (1,0) alice, class 2: SUBMIT 600, SCHEDULE 601, FINISH 610: a job, 9 s
 *   (1,1) bob, class 0: SUBMIT 600, UPDATE_PENDING memory 0.2, SCHEDULE 603 (no requests on the
 *         line: it keeps CPU 0.1 and memory 0.2), EVICT 613: a job, 10 s; SUBMIT again 614:
 *         a later attempt, left out
 *   (2,0) carol: SUBMIT 611, KILL 612: ended before it ran
 *   (3,0) dave: SCHEDULE 615 with no SUBMIT (it started before the file)
 *   (4,0) no user: no memory request in any event, FINISH 622: no request
 *   (5,0) alice: requests of 0 (colony asks at least 1 milli-core and 1 MiB), 630 to 639
 *   (6,0) alice: SCHEDULE 651, FINISH "after the end of the trace": unfinished */
static const char trace[] = "600000000,,1,0,,0,alice,2,9,0.5,0.25,0,0\n"
                            "600000000,,1,1,,0,bob,0,1,0.1,0.1,,\n"
                            "\n"
                            "601000000,,1,0,7,1,alice,2,9,0.5,0.25,0,0\r\n"
                            "602000000,,1,1,,7,bob,0,1,,0.2,,\n"
                            "603000000,,1,1,8,1,bob,0,1,,,,\n"
                            "610000000,,1,0,7,4,alice,2,9,,,,\n"
                            "611000000,,2,0,,0,carol,1,0,0.2,0.2,,\n"
                            "612000000,1,2,0,,5,carol,1,0,,,,\n"
                            "613000000,,1,1,8,2,bob,0,1,,,,\n"
                            "614000000,,1,1,,0,bob,0,1,0.1,0.2,,\n"
                            "615000000,,3,0,9,1,dave,3,0,0.1,0.1,,\n"
                            "620000000,,4,0,,0,,1,0,0.3,,,\n"
                            "621000000,,4,0,3,1,,1,0,0.3,,,\n"
                            "622000000,,4,0,3,4,,1,0,,,,\n"
                            "630000000,,5,0,,0,alice,2,9,0,0,,\n"
                            "631000000,,5,0,1,1,alice,2,9,,,,\n"
                            "639000000,,5,0,1,4,alice,2,9,,,,\n"
                            "650000000,,6,0,,0,alice,2,9,0.1,0.1,,\n"
                            "651000000,,6,0,1,1,alice,2,9,0.1,0.1,,\n"
                            "9223372036854775807,,6,0,1,4,alice,2,9,,,,\n";

START_TEST(a_job_is_a_tasks_first_run) {
        google_trace t;
        sim_job j;
        char err[256];
        ck_assert_int_eq(load_tasks(trace, SIM_DEPT_USER, &t, err, sizeof(err)), 0);
        ck_assert_uint_eq(t.tasks, 7);
        ck_assert_uint_eq(t.jobs.n, 3);
        ck_assert_uint_eq(t.resubmitted, 1);
        ck_assert_uint_eq(t.never_ran, 1);
        ck_assert_uint_eq(t.no_submit, 1);
        ck_assert_uint_eq(t.no_request, 1);
        ck_assert_uint_eq(t.unfinished, 1);
        ck_assert_int_eq(sim_jobs_next(&t.jobs, &j), 1);
        ck_assert(j.arrival == 0 && j.runtime == 9);
        ck_assert_int_eq(j.req.mcpu, 5000);
        ck_assert_int_eq(j.req.mem, 250 * MIB);
        ck_assert_str_eq(t.depts.v[j.dept], "alice");
        ck_assert_int_eq(sim_jobs_next(&t.jobs, &j), 1);
        ck_assert(j.arrival == 0 && j.runtime == 10);
        ck_assert_int_eq(j.req.mcpu, 1000);
        ck_assert_int_eq(j.req.mem, 200 * MIB); /* UPDATE_PENDING's, not SUBMIT's */
        ck_assert_str_eq(t.depts.v[j.dept], "bob");
        ck_assert_int_eq(sim_jobs_next(&t.jobs, &j), 1);
        ck_assert(j.arrival == 30 && j.runtime == 8);
        ck_assert_int_eq(j.req.mcpu, 1);
        ck_assert_int_eq(j.req.mem, MIB);
        ck_assert_str_eq(t.depts.v[j.dept], "alice");
        ck_assert_int_eq(sim_jobs_next(&t.jobs, &j), 0);
        /* departments of every task with a SUBMIT, whether it became a job or not */
        ck_assert_uint_eq(t.depts.n, 4);
        ck_assert_str_eq(t.depts.v[3], "unknown");
        google_free(&t);
}
END_TEST

START_TEST(departments_by_scheduling_class_or_none) {
        google_trace t;
        sim_job j;
        char err[256];
        ck_assert_int_eq(load_tasks(trace, SIM_DEPT_CLASS, &t, err, sizeof(err)), 0);
        ck_assert_uint_eq(t.depts.n, 3);
        ck_assert_int_eq(sim_jobs_next(&t.jobs, &j), 1);
        ck_assert_str_eq(t.depts.v[j.dept], "class2");
        ck_assert_int_eq(sim_jobs_next(&t.jobs, &j), 1);
        ck_assert_str_eq(t.depts.v[j.dept], "class0");
        google_free(&t);
        ck_assert_int_eq(load_tasks(trace, SIM_DEPT_NONE, &t, err, sizeof(err)), 0);
        ck_assert_uint_eq(t.depts.n, 0);
        ck_assert_int_eq(sim_jobs_next(&t.jobs, &j), 1);
        ck_assert_uint_eq(j.dept, 0);
        google_free(&t);
}
END_TEST

#define OK_LINE "600000000,,1,0,,0,alice,2,9,0.5,0.25,0,0\n"

static const struct {
        const char *text, *reason;
} broken[] = {
        { OK_LINE "600000000,,1,1,,0,alice,2,9,0.5,0.25,0\n", ":2: fewer than 13 fields" },
        { OK_LINE "600000000,,1,1,,0,alice,2,9,0.5,0.25,0,0,0\n", ":2: more than 13 fields" },
        { OK_LINE "6e8,,1,1,,0,alice,2,9,0.5,0.25,0,0\n", ":2: the time is not a whole number" },
        { OK_LINE "-600000000,,1,1,,0,alice,2,9,0.5,0.25,0,0\n", ":2: the time is not a whole number" },
        { OK_LINE "10000000000000000,,1,1,,0,alice,2,9,0.5,0.25,0,0\n", ":2: time beyond 10^9 s" },
        { OK_LINE "500000000,,1,1,,0,alice,2,9,0.5,0.25,0,0\n", ":2: time goes backwards" },
        { OK_LINE "600000000,,1,,,0,alice,2,9,0.5,0.25,0,0\n", ":2: the job ID or task index" },
        { OK_LINE "600000000,,x,1,,0,alice,2,9,0.5,0.25,0,0\n", ":2: the job ID or task index" },
        { OK_LINE "600000000,,1,1,,9,alice,2,9,0.5,0.25,0,0\n", ":2: the event type is not 0 to 8" },
        { OK_LINE "600000000,,1,1,,,alice,2,9,0.5,0.25,0,0\n", ":2: the event type is not 0 to 8" },
        { OK_LINE "600000000,,1,1,,0,alice,2,9,nan,0.25,0,0\n", ":2: CPU or memory is not empty or a number" },
        { OK_LINE "600000000,,1,1,,0,alice,2,9,0.5,-0.25,0,0\n", ":2: CPU or memory is not empty or a number" },
        { OK_LINE "600000000,,1,1,,0,alice,2,9,2e6,0.25,0,0\n", ":2: CPU or memory is not empty or a number" },
        { OK_LINE "600000000,,1,1,,0,alice,7,9,0.5,0.25,0,0\n", ":2: missing info, machine ID, class" },
        { OK_LINE "600000000,,1,1,,0,alice,2,9,0.5,0.25,0,2\n", ":2: missing info, machine ID, class" },
        { OK_LINE "600000000,,1,1,,0,al\"ice,2,9,0.5,0.25,0,0\n", ":2: the user is not a printable name" },
        { "", ": no task ran" },
        { OK_LINE "601000000,,1,0,,5,alice,2,9,,,,\n", ": no task ran" },
};

START_TEST(broken_tables_are_refused_whole) {
        google_trace t;
        char err[256];
        ck_assert_int_eq(load_tasks(broken[_i].text, SIM_DEPT_USER, &t, err, sizeof(err)), -EINVAL);
        ck_assert_msg(strstr(err, broken[_i].reason), "%s", err);
        ck_assert_ptr_null(t.jobs.v);
        ck_assert_uint_eq(t.jobs.n, 0);
        ck_assert_uint_eq(t.depts.n, 0);
}
END_TEST

START_TEST(requests_beyond_what_colony_counts_are_refused) {
        const res_t huge = { .mcpu = RES_MCPU_MAX, .mem = RES_MEM_MAX };
        google_trace t;
        char err[256];
        write_file("600000000,,1,1,,0,alice,2,9,2,0.25,0,0\n");
        ck_assert_int_eq(google_load_tasks(path, huge, SIM_DEPT_USER, &t, err, sizeof(err)), -EINVAL);
        unlink(path);
        ck_assert_msg(strstr(err, ":1: CPU or memory beyond what colony counts"), "%s", err);
        ck_assert_int_eq(
                google_load_tasks("/nonexistent/task_events.csv", machine, SIM_DEPT_USER, &t, err, sizeof(err)),
                -ENOENT);
        ck_assert_msg(strstr(err, "No such file"), "%s", err);
}
END_TEST

START_TEST(the_cluster_is_the_machines_added_at_time_0) {
        google_machines m;
        char err[256];
        ck_assert_int_eq(load_machines("0,11,0,p1,0.5,0.5\n"
                                       "0,12,0,p1,1,1\n"
                                       "0,13,0,p2,,\n"
                                       "5000000,14,0,p1,1,1\n"
                                       "6000000,11,1,p1,,\n"
                                       "0,12,2,p1,0.5,0.5\n",
                                       &m, err, sizeof(err)),
                         0);
        ck_assert_uint_eq(m.n, 2);
        ck_assert_int_eq(m.capacity[0].mcpu, 5000);
        ck_assert_int_eq(m.capacity[0].mem, 500 * MIB);
        ck_assert_int_eq(m.capacity[1].mcpu, 10000);
        ck_assert_int_eq(m.capacity[1].mem, 1000 * MIB);
        ck_assert_uint_eq(m.ignored, 3);
        ck_assert_uint_eq(m.no_capacity, 1);
        google_machines_free(&m);
}
END_TEST

static const struct {
        const char *text, *reason;
} broken_machines[] = {
        { "0,11,0,p1,0.5,0.5\n0,12,0,p1,1,1\n0,11,0,p1,1,1\n", ":3: a machine added twice at time 0" },
        { "0,11,0,p1,0.5,0.5\n0,12,0,p1,1\n", ":2: fewer than 6 fields" },
        { "0,11,0,p1,0.5,0.5,1\n", ":1: more than 6 fields" },
        { "0,11,3,p1,0.5,0.5\n", ":1: the machine ID is not a whole number or the event type" },
        { "0,11,0,p1,0.5,x\n", ":1: CPU or memory is not empty or a number" },
        { "5,11,0,p1,0.5,0.5\n0,12,0,p1,,\n", ": no machine added at time 0" },
        { "", ": no machine added at time 0" }, /* tests/fuzz: sorted no ids with qsort(NULL, 0) */
};

START_TEST(broken_machine_tables_are_refused_whole) {
        google_machines m;
        char err[256];
        ck_assert_int_eq(load_machines(broken_machines[_i].text, &m, err, sizeof(err)), -EINVAL);
        ck_assert_msg(strstr(err, broken_machines[_i].reason), "%s", err);
        ck_assert_ptr_null(m.capacity);
        ck_assert_uint_eq(m.n, 0);
}
END_TEST

static Suite *google_suite(void) {
        Suite *s = suite_create("google");
        TCase *tc = tcase_create("google");
        tcase_add_test(tc, a_job_is_a_tasks_first_run);
        tcase_add_test(tc, departments_by_scheduling_class_or_none);
        tcase_add_loop_test(tc, broken_tables_are_refused_whole, 0, sizeof(broken) / sizeof(broken[0]));
        tcase_add_test(tc, requests_beyond_what_colony_counts_are_refused);
        tcase_add_test(tc, the_cluster_is_the_machines_added_at_time_0);
        tcase_add_loop_test(tc, broken_machine_tables_are_refused_whole, 0,
                            sizeof(broken_machines) / sizeof(broken_machines[0]));
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(google_suite)
