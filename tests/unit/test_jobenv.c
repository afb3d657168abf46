/* test_jobenv.c - a launch's environment and output names on its node (agent/jobenv.h). */
#include "check_main.h"
#include "jobenv.h"
#include <stdlib.h>
#include <string.h>

/* The value of name in env, or NULL. */
static const char *get(char **env, const char *name) {
        size_t len = strlen(name);
        for (size_t i = 0; env && env[i]; i++)
                if (strncmp(env[i], name, len) == 0 && env[i][len] == '=')
                        return env[i] + len + 1;
        return NULL;
}

static launch_msg launch(const char *const *env) {
        launch_msg m = { .id = 45, .array_first = 40, .array_index = 5, .user = "bob" };
        size_t n = 0;
        while (env[n])
                n++;
        m.spec.env = calloc(n + 1, sizeof(char *));
        for (size_t i = 0; i < n; i++)
                m.spec.env[i] = strdup(env[i]);
        m.spec.name = strdup("fit");
        m.spec.cwd = strdup("/home/bob/run");
        m.spec.stdout_path = strdup("/home/bob/run/out-%A_%a-%N.txt");
        m.spec.req = (res_t){ .mcpu = 1500, .mem = 100 << 20 };
        return m;
}

START_TEST(colony_variables_replace_inherited_ones_thread_counts_keep_the_users) {
        static const char *const env[] = { "HOME=/home/bob", "COLONY_JOB_ID=7", "OMP_NUM_THREADS=4", NULL };
        launch_msg m = launch(env);
        char err[128];
        ck_assert_int_eq(jobenv_prepare(&m, "n2", err, sizeof(err)), 0);
        ck_assert_str_eq(get(m.spec.env, "HOME"), "/home/bob");
        ck_assert_str_eq(get(m.spec.env, "COLONY_JOB_ID"), "45"); /* not the submitting job's */
        ck_assert_str_eq(get(m.spec.env, "COLONY_ARRAY_JOB_ID"), "40");
        ck_assert_str_eq(get(m.spec.env, "COLONY_ARRAY_TASK_ID"), "5");
        ck_assert_str_eq(get(m.spec.env, "COLONY_ARRAY_INDEX"), "5");
        ck_assert_str_eq(get(m.spec.env, "COLONY_NODE"), "n2");
        ck_assert_str_eq(get(m.spec.env, "COLONY_CPUS"), "2");  /* 1.5 rounded up */
        ck_assert_str_eq(get(m.spec.env, "COLONY_MEM"), "100"); /* MiB */
        ck_assert_str_eq(get(m.spec.env, "COLONY_SUBMIT_DIR"), "/home/bob/run");
        ck_assert_str_eq(get(m.spec.env, "COLONY_JOB_NAME"), "fit");
        ck_assert_str_eq(get(m.spec.env, "OMP_NUM_THREADS"), "4"); /* the user's */
        ck_assert_str_eq(get(m.spec.env, "OPENBLAS_NUM_THREADS"), "2");
        ck_assert_str_eq(get(m.spec.env, "MKL_NUM_THREADS"), "2");
        ck_assert_str_eq(m.spec.stdout_path, "/home/bob/run/out-40_5-n2.txt");
        ck_assert_ptr_null(m.spec.stderr_path);
        job_spec_free(&m.spec);
}
END_TEST

START_TEST(a_single_job_has_no_array_variables_and_at_least_one_thread) {
        static const char *const env[] = { "COLONY_ARRAY_TASK_ID=3", NULL };
        launch_msg m = launch(env);
        char err[128];
        m.array_first = 0;
        m.spec.req.mcpu = 100;
        ck_assert_int_eq(jobenv_prepare(&m, "n1", err, sizeof(err)), 0);
        ck_assert_str_eq(get(m.spec.env, "COLONY_CPUS"), "1");
        ck_assert_str_eq(get(m.spec.env, "OMP_NUM_THREADS"), "1");
        ck_assert_ptr_null(get(m.spec.env, "COLONY_ARRAY_JOB_ID"));
        ck_assert_str_eq(m.spec.stdout_path, "/home/bob/run/out-45_0-n1.txt");
        job_spec_free(&m.spec);
}
END_TEST

START_TEST(a_job_given_gpus_is_told_which_one_without_is_told_nothing) {
        static const char *const env[] = { "CUDA_VISIBLE_DEVICES=3", NULL };
        launch_msg m = launch(env);
        char err[128];
        ck_assert_int_eq(jobenv_gpus(&m, "0,2", err, sizeof(err)), 0);
        ck_assert_str_eq(get(m.spec.env, "COLONY_GPUS"), "0,2");
        ck_assert_str_eq(get(m.spec.env, "CUDA_VISIBLE_DEVICES"), "0,2"); /* not the submitter's */
        ck_assert_str_eq(get(m.spec.env, "ROCR_VISIBLE_DEVICES"), "0,2");
        job_spec_free(&m.spec);
        m = launch((const char *const[]){ NULL });
        ck_assert_int_eq(jobenv_gpus(&m, "", err, sizeof(err)), 0);
        ck_assert_ptr_null(get(m.spec.env, "COLONY_GPUS"));
        ck_assert_ptr_null(get(m.spec.env, "CUDA_VISIBLE_DEVICES"));
        job_spec_free(&m.spec);
}
END_TEST

static Suite *jobenv_suite(void) {
        Suite *s = suite_create("jobenv");
        TCase *tc = tcase_create("jobenv");
        tcase_add_test(tc, colony_variables_replace_inherited_ones_thread_counts_keep_the_users);
        tcase_add_test(tc, a_single_job_has_no_array_variables_and_at_least_one_thread);
        tcase_add_test(tc, a_job_given_gpus_is_told_which_one_without_is_told_nothing);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(jobenv_suite)
