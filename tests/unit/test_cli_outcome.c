/* test_cli_outcome.c - the exit status `colony wait` gives for each way a job can end. */
#include "check_main.h"
#include "outcome.h"
#include <signal.h>
#include <stdlib.h>

#define T0 1700000000000000LL

/* A job in state s whose main process ended with code or sig; started says it ever ran. */
static job ended(job_state s, int code, int sig, bool started) {
        return (job){ .state = s,
                      .submit_usec = T0,
                      .start_usec = started ? T0 + 1 : 0,
                      .end_usec = T0 + 2,
                      .result = { .exit_code = code, .signal = sig } };
}

START_TEST(exit_status_mirrors_the_job) {
        job completed = ended(JOB_COMPLETED, 0, 0, true), code = ended(JOB_FAILED, 3, 0, true);
        job segv = ended(JOB_FAILED, 0, SIGSEGV, true), oom = ended(JOB_OOM_KILLED, 0, SIGKILL, true);
        job oom_code = ended(JOB_OOM_KILLED, 1, 0, true), cancelled = ended(JOB_CANCELLED, 0, SIGTERM, true);
        job cancel_caught = ended(JOB_CANCELLED, 0, 0, true), cancel_pending = ended(JOB_CANCELLED, 0, 0, false);
        job not_started = ended(JOB_FAILED, 127, 0, false), lost = ended(JOB_LOST, 0, 0, true);

        ck_assert_int_eq(outcome_exit_status(&completed), 0);
        ck_assert_int_eq(outcome_exit_status(&code), 3);
        ck_assert_int_eq(outcome_exit_status(&segv), 128 + SIGSEGV);
        ck_assert_int_eq(outcome_exit_status(&oom), 137);
        ck_assert_int_eq(outcome_exit_status(&oom_code), 1);
        ck_assert_int_eq(outcome_exit_status(&cancelled), 143);
        ck_assert_int_eq(outcome_exit_status(&cancel_caught), 143);
        ck_assert_int_eq(outcome_exit_status(&cancel_pending), 143);
        ck_assert_int_eq(outcome_exit_status(&not_started), 127);
        ck_assert_int_eq(outcome_exit_status(&lost), 1);
}
END_TEST

START_TEST(a_failure_never_looks_like_success) {
        job failed_zero = ended(JOB_FAILED, 0, 0, true), failed_big = ended(JOB_FAILED, 300, 0, true);
        job never_ran = ended(JOB_FAILED, 0, 0, false);

        ck_assert_int_eq(outcome_exit_status(&failed_zero), 1);
        ck_assert_int_eq(outcome_exit_status(&failed_big), 1);
        ck_assert_int_eq(outcome_exit_status(&never_ran), 127);
}
END_TEST

START_TEST(unfinished_jobs_have_no_status) {
        job pending = { .state = JOB_PENDING }, running = { .state = JOB_RUNNING, .start_usec = T0 };
        char buf[64];

        ck_assert_int_eq(outcome_exit_status(&pending), -1);
        ck_assert_int_eq(outcome_exit_status(&running), -1);
        ck_assert_str_eq(outcome_describe(&pending, buf, sizeof(buf)), "-");
        ck_assert_str_eq(outcome_describe(&running, buf, sizeof(buf)), "-");
}
END_TEST

START_TEST(description_says_how_the_main_process_ended) {
        job completed = ended(JOB_COMPLETED, 0, 0, true), code = ended(JOB_FAILED, 3, 0, true);
        job oom = ended(JOB_OOM_KILLED, 0, SIGKILL, true), not_started = ended(JOB_FAILED, 127, 0, false);
        job lost = ended(JOB_LOST, 0, 0, true);
        char buf[64];

        ck_assert_str_eq(outcome_describe(&completed, buf, sizeof(buf)), "exit 0");
        ck_assert_str_eq(outcome_describe(&code, buf, sizeof(buf)), "exit 3");
        ck_assert_str_eq(outcome_describe(&oom, buf, sizeof(buf)), "SIGKILL");
        ck_assert_str_eq(outcome_describe(&not_started, buf, sizeof(buf)), "not started");
        ck_assert_str_eq(outcome_describe(&lost, buf, sizeof(buf)), "unknown");
}
END_TEST

static Suite *cli_outcome_suite(void) {
        Suite *s = suite_create("cli_outcome");
        TCase *tc = tcase_create("outcome");
        tcase_add_test(tc, exit_status_mirrors_the_job);
        tcase_add_test(tc, a_failure_never_looks_like_success);
        tcase_add_test(tc, unfinished_jobs_have_no_status);
        tcase_add_test(tc, description_says_how_the_main_process_ended);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(cli_outcome_suite)
