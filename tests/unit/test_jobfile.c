/* test_jobfile.c - the agent's state directory files: names, records, exit statuses, and the
 * start time read from /proc/PID/stat (agent/jobfile.h). */
#include "check_main.h"
#include "jobfile.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static char err[PROTO_ERRLEN];

static const jobfile_record sample = { .id = 7,
                                       .cgroup = "job-7",
                                       .shepherd = 4242,
                                       .shepherd_start = 987654321,
                                       .mem_limit = 64 << 20,
                                       .start_usec = 1767225600123456,
                                       .cancelled = true,
                                       .time_limit_usec = 2000000,
                                       .timed_out = true,
                                       .gpu_ids = "0,2" };

START_TEST(a_record_reads_back_as_written) {
        char *text = jobfile_record_format(&sample);
        jobfile_record back;

        ck_assert_ptr_nonnull(text);
        ck_assert_int_eq(jobfile_record_parse(text, &back, err), 0);
        ck_assert_uint_eq(back.id, 7);
        ck_assert_str_eq(back.cgroup, "job-7");
        ck_assert_int_eq(back.shepherd, 4242);
        ck_assert_uint_eq(back.shepherd_start, 987654321);
        ck_assert_int_eq(back.mem_limit, 64 << 20);
        ck_assert_int_eq(back.start_usec, 1767225600123456);
        ck_assert(back.cancelled);
        ck_assert_int_eq(back.time_limit_usec, 2000000);
        ck_assert(back.timed_out);
        ck_assert_str_eq(back.gpu_ids, "0,2");
        free(text);
        /* a record of an agent older than time limits: none, not timed out */
        ck_assert_int_eq(jobfile_record_parse("{\"id\":7,\"cgroup\":\"job-7\",\"shepherd_pid\":42,\"shepherd_start\":1,"
                                              "\"mem_limit\":0,\"start_usec\":0,\"cancelled\":false}",
                                              &back, err),
                         0);
        ck_assert_int_eq(back.time_limit_usec, 0);
        ck_assert(!back.timed_out);
        ck_assert_str_eq(back.gpu_ids, ""); /* and older than GPUs: it holds none */
}
END_TEST

START_TEST(an_exit_status_reads_back_as_written) {
        jobfile_exit e = { .exit_code = 3, .end_usec = 1767225660000001 }, k = { .signal = 9 }, back;
        char *text = jobfile_exit_format(&e), *ktext = jobfile_exit_format(&k);

        ck_assert_int_eq(jobfile_exit_parse(text, &back, err), 0);
        ck_assert_int_eq(back.exit_code, 3);
        ck_assert_int_eq(back.signal, 0);
        ck_assert_int_eq(back.end_usec, 1767225660000001);
        ck_assert_int_eq(jobfile_exit_parse(ktext, &back, err), 0);
        ck_assert_int_eq(back.signal, 9);
        free(text);
        free(ktext);
}
END_TEST

/* A record half understood must not be acted on: the agent would signal or kill by it. */
START_TEST(a_damaged_record_is_refused_with_the_field_named) {
        static const struct {
                const char *text, *want;
        } bad[] = {
                { "", "not a JSON object" },
                { "{\"id\":7,\"cgroup\":\"job-7\",\"shepherd_pid\":42,\"shepherd_start\":1,", "not a JSON object" },
                { "[1]", "not a JSON object" },
                { "{\"id\":7,\"cgroup\":\"job-7\",\"shepherd_start\":1,\"mem_limit\":0,\"start_usec\":0,"
                  "\"cancelled\":false}",
                  "shepherd_pid" },
                { "{\"id\":7,\"cgroup\":\"job-7\",\"shepherd_pid\":0,\"shepherd_start\":1,\"mem_limit\":0,"
                  "\"start_usec\":0,\"cancelled\":false}",
                  "shepherd_pid" },
                { "{\"id\":7,\"cgroup\":\"../../init.scope\",\"shepherd_pid\":42,\"shepherd_start\":1,"
                  "\"mem_limit\":0,\"start_usec\":0,\"cancelled\":false}",
                  "cgroup" },
                { "{\"id\":7,\"cgroup\":\"..\",\"shepherd_pid\":42,\"shepherd_start\":1,\"mem_limit\":0,"
                  "\"start_usec\":0,\"cancelled\":false}",
                  "cgroup" },
                { "{\"id\":7,\"cgroup\":\"\",\"shepherd_pid\":42,\"shepherd_start\":1,\"mem_limit\":0,"
                  "\"start_usec\":0,\"cancelled\":false}",
                  "cgroup" },
                { "{\"id\":7,\"cgroup\":\"job-7\",\"shepherd_pid\":42,\"shepherd_start\":1,\"mem_limit\":0,"
                  "\"start_usec\":0,\"cancelled\":false,\"extra\":1}",
                  "extra" },
                { "{\"id\":7,\"cgroup\":\"job-7\",\"shepherd_pid\":42,\"shepherd_start\":1,\"mem_limit\":0,"
                  "\"start_usec\":0}",
                  "cancelled" },
                { "{\"id\":7,\"cgroup\":\"job-7\",\"shepherd_pid\":42,\"shepherd_start\":1,\"mem_limit\":0,"
                  "\"start_usec\":0,\"cancelled\":\"no\"}",
                  "cancelled" },
                { "{\"id\":7,\"cgroup\":\"job-7\",\"shepherd_pid\":42,\"shepherd_start\":1,\"mem_limit\":0,"
                  "\"start_usec\":0,\"cancelled\":false,\"time_limit_usec\":-1}",
                  "time_limit_usec" },
                { "{\"id\":7,\"cgroup\":\"job-7\",\"shepherd_pid\":42,\"shepherd_start\":1,\"mem_limit\":0,"
                  "\"start_usec\":0,\"cancelled\":false,\"timed_out\":1}",
                  "timed_out" },
        };
        jobfile_record r;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                ck_assert_msg(jobfile_record_parse(bad[i].text, &r, err) == -EINVAL, "accepted: %s", bad[i].text);
                ck_assert_msg(strstr(err, bad[i].want), "%s: error '%s' lacks '%s'", bad[i].text, err, bad[i].want);
        }
}
END_TEST

START_TEST(a_damaged_exit_status_is_refused) {
        static const char *const bad[] = {
                "{\"exit_code\":0,\"signal\":0}",
                "{\"exit_code\":256,\"signal\":0,\"end_usec\":1}",
                "{\"exit_code\":0,\"signal\":-1,\"end_usec\":1}",
                "{\"exit_code\":0,\"signal\":0,\"end_usec\":1,\"id\":3}",
                "exit 0",
        };
        jobfile_exit e;

        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
                ck_assert_msg(jobfile_exit_parse(bad[i], &e, err) == -EINVAL, "accepted: %s", bad[i]);
}
END_TEST

START_TEST(only_job_file_names_are_taken) {
        static const char *const other[] = { ".tmp-job-7.json", "job-07.json",
                                             "job-7.json.bak",  "job-.json",
                                             "job-7",           "job-7.",
                                             "agent",           "job-99999999999999999999.exit",
                                             "job-7.JSON" };
        jobfile_kind kind;
        uint64_t id;

        ck_assert_int_eq(jobfile_name_parse("job-7.json", &id, &kind), 0);
        ck_assert_uint_eq(id, 7);
        ck_assert_int_eq(kind, JOBFILE_RECORD);
        ck_assert_int_eq(jobfile_name_parse("job-12.exit", &id, &kind), 0);
        ck_assert_int_eq(kind, JOBFILE_EXIT);
        ck_assert_int_eq(jobfile_name_parse("job-3.done", &id, &kind), 0);
        ck_assert_uint_eq(id, 3);
        ck_assert_int_eq(kind, JOBFILE_DONE);
        ck_assert_str_eq(jobfile_suffix(JOBFILE_DONE), "done");
        for (size_t i = 0; i < sizeof(other) / sizeof(other[0]); i++)
                ck_assert_msg(jobfile_name_parse(other[i], &id, &kind) == -EINVAL, "took %s", other[i]);
}
END_TEST

/* The command name may hold anything: fields are counted after its last ')'. */
START_TEST(the_start_time_is_field_22_whatever_the_command_name) {
        const char *stat = "4242 (a) b) (c S) S 1 4242 4242 0 -1 4194560 100 0 0 0 1 2 0 0 20 0 1 0 "
                           "987654321 1234567 100 18446744073709551615 1 1 0 0 0 0 0 0 0 0 0 0 17 1 0 0 0 0 0\n";
        uint64_t start;
        char state;

        ck_assert_int_eq(jobfile_stat_parse(stat, &state, &start), 0);
        ck_assert_int_eq(state, 'S');
        ck_assert_uint_eq(start, 987654321);
        ck_assert_int_eq(jobfile_stat_parse("4242 (zombie) Z 1 2 3", &state, &start), -EINVAL);
        ck_assert_int_eq(jobfile_stat_parse("4242 no name at all", &state, &start), -EINVAL);
}
END_TEST

static Suite *jobfile_suite(void) {
        Suite *s = suite_create("jobfile");
        TCase *tc = tcase_create("jobfile");

        tcase_add_test(tc, a_record_reads_back_as_written);
        tcase_add_test(tc, an_exit_status_reads_back_as_written);
        tcase_add_test(tc, a_damaged_record_is_refused_with_the_field_named);
        tcase_add_test(tc, a_damaged_exit_status_is_refused);
        tcase_add_test(tc, only_job_file_names_are_taken);
        tcase_add_test(tc, the_start_time_is_field_22_whatever_the_command_name);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(jobfile_suite)
