/* test_agent_state.c - how the agent judges a job's end (docs/protocol.md, "State rules"). */
#include "check_main.h"
#include "agent-state.h"
#include <signal.h>
#include <stdlib.h>
#include <string.h>

#define MiB ((int64_t)1 << 20)

static job_result exited(int code, uint64_t oom_kills) {
        return (job_result){ .exit_code = code, .oom_kills = oom_kills };
}

static job_result killed(int sig, uint64_t oom_kills) { return (job_result){ .signal = sig, .oom_kills = oom_kills }; }

START_TEST(exit_status_decides_completed_or_failed) {
        job_result ok = exited(0, 0), bad = exited(3, 0), sig = killed(SIGSEGV, 0);

        ck_assert_int_eq(agent_state_decide(&ok, false), JOB_COMPLETED);
        ck_assert_int_eq(agent_state_decide(&bad, false), JOB_FAILED);
        ck_assert_int_eq(agent_state_decide(&sig, false), JOB_FAILED);
}
END_TEST

START_TEST(oom_kill_counts_only_when_the_main_process_failed) {
        job_result sigkilled = killed(SIGKILL, 1), nonzero = exited(1, 2), survived = exited(0, 1);

        ck_assert_int_eq(agent_state_decide(&sigkilled, false), JOB_OOM_KILLED);
        ck_assert_int_eq(agent_state_decide(&nonzero, false), JOB_OOM_KILLED);
        /* A child was OOM-killed but the job handled it and succeeded. */
        ck_assert_int_eq(agent_state_decide(&survived, false), JOB_COMPLETED);
}
END_TEST

START_TEST(cancel_wins_over_exit_status_but_not_over_oom) {
        job_result term = killed(SIGTERM, 0), clean = exited(0, 0), oom = killed(SIGKILL, 1);

        ck_assert_int_eq(agent_state_decide(&term, true), JOB_CANCELLED);
        ck_assert_int_eq(agent_state_decide(&clean, true), JOB_CANCELLED);
        ck_assert_int_eq(agent_state_decide(&oom, true), JOB_OOM_KILLED);
}
END_TEST

START_TEST(error_text_names_the_cause) {
        job_result oom = killed(SIGKILL, 1), sig = killed(SIGKILL, 0), term = killed(SIGTERM, 0);
        job_result code = exited(2, 0), ok = exited(0, 0);
        char buf[128];

        ck_assert_str_eq(agent_state_error(JOB_OOM_KILLED, &oom, 64 * MiB, buf, sizeof(buf)),
                         "killed by the OOM killer (memory limit 64.0M)");
        ck_assert_str_eq(agent_state_error(JOB_OOM_KILLED, &oom, 0, buf, sizeof(buf)), "killed by the OOM killer");
        ck_assert_str_eq(agent_state_error(JOB_FAILED, &sig, 0, buf, sizeof(buf)), "killed by signal 9 (SIGKILL)");
        ck_assert_str_eq(agent_state_error(JOB_CANCELLED, &term, 0, buf, sizeof(buf)),
                         "cancelled: killed by signal 15 (SIGTERM)");
        ck_assert_str_eq(agent_state_error(JOB_CANCELLED, &ok, 0, buf, sizeof(buf)), "cancelled");
        ck_assert_ptr_null(agent_state_error(JOB_FAILED, &code, 0, buf, sizeof(buf)));
        ck_assert_ptr_null(agent_state_error(JOB_COMPLETED, &ok, 0, buf, sizeof(buf)));
}
END_TEST

static Suite *agent_state_suite(void) {
        Suite *s = suite_create("agent_state");
        TCase *tc = tcase_create("rules");
        tcase_add_test(tc, exit_status_decides_completed_or_failed);
        tcase_add_test(tc, oom_kill_counts_only_when_the_main_process_failed);
        tcase_add_test(tc, cancel_wins_over_exit_status_but_not_over_oom);
        tcase_add_test(tc, error_text_names_the_cause);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(agent_state_suite)
