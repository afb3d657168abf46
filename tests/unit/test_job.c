/* test_job.c - job spec validation and the record's JSON round trip. */
#include "check_main.h"
#include "job.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define GOOD "\"argv\":[\"/bin/echo\",\"hi\"],\"cwd\":\"/tmp\",\"mcpu\":500,\"mem\":67108864"

static int parse(const char *body, job_spec *spec, char err[PROTO_ERRLEN]) {
        char text[1024];
        snprintf(text, sizeof(text), "{\"v\":1,\"type\":\"submit\",%s}", body);
        cJSON *obj = cJSON_Parse(text);
        ck_assert_ptr_nonnull(obj);
        *spec = (job_spec){ 0 };
        int r = job_spec_from_json(obj, spec, err);
        cJSON_Delete(obj);
        return r;
}

START_TEST(good_spec_gets_defaults) {
        job_spec spec;
        char err[PROTO_ERRLEN];
        ck_assert_int_eq(parse(GOOD ",\"env\":[\"A=1\",\"B=\"],\"group\":\"physics/astro\"", &spec, err), 0);
        ck_assert_str_eq(spec.name, "echo");
        ck_assert_str_eq(spec.argv[1], "hi");
        ck_assert_int_eq(spec.req.mcpu, 500);
        ck_assert_int_eq(spec.req.pids, 0);
        ck_assert_str_eq(spec.env[1], "B=");
        ck_assert_str_eq(spec.group, "physics/astro");
        job_spec_free(&spec);
}
END_TEST

static const struct {
        const char *body;
        const char *field;
} bad[] = {
        { "\"cwd\":\"/\",\"mcpu\":1,\"mem\":1", "argv" },
        { "\"argv\":[],\"cwd\":\"/\",\"mcpu\":1,\"mem\":1", "argv" },
        { "\"argv\":[\"echo\"],\"cwd\":\"/\",\"mcpu\":1,\"mem\":1", "argv" },
        { "\"argv\":[\"/bin/x\"],\"cwd\":\"tmp\",\"mcpu\":1,\"mem\":1", "cwd" },
        { "\"argv\":[\"/bin/x\"],\"mcpu\":1,\"mem\":1", "cwd" },
        { "\"argv\":[\"/bin/x\"],\"cwd\":\"/\",\"mcpu\":0,\"mem\":1", "mcpu" },
        { "\"argv\":[\"/bin/x\"],\"cwd\":\"/\",\"mcpu\":1,\"mem\":-1", "mem" },
        { "\"argv\":[\"/bin/x\"],\"cwd\":\"/\",\"mcpu\":1,\"mem\":1.5", "mem" },
        { "\"argv\":[\"/bin/x\"],\"cwd\":\"/\",\"mcpu\":1", "mem" },
        { GOOD ",\"pids\":-1", "pids" },
        { GOOD ",\"env\":[\"NOEQUALS\"]", "env" },
        { GOOD ",\"env\":[\"=x\"]", "env" },
        { GOOD ",\"group\":\"a//b\"", "group" },
        { GOOD ",\"group\":\"a b\"", "group" },
        { GOOD ",\"name\":\"\"", "name" },
        { GOOD ",\"name\":\"a\\nb\"", "name" },
        { GOOD ",\"stdout_path\":\"out.txt\"", "stdout_path" },
};

START_TEST(bad_specs_name_their_field) {
        job_spec spec;
        char err[PROTO_ERRLEN] = "";
        ck_assert_int_eq(parse(bad[_i].body, &spec, err), -EINVAL);
        ck_assert_msg(strncmp(err, bad[_i].field, strlen(bad[_i].field)) == 0, "'%s' for %s", err, bad[_i].body);
        ck_assert_ptr_null(spec.argv); /* nothing half-built is left */
        ck_assert_ptr_null(spec.name);
}
END_TEST

START_TEST(spec_round_trip_keeps_env) {
        job_spec a, b;
        char err[PROTO_ERRLEN];
        ck_assert_int_eq(parse(GOOD ",\"env\":[\"X=y\"],\"job_type\":\"cpu\"", &a, err), 0);
        cJSON *obj = proto_new("launch");
        ck_assert_int_eq(job_spec_to_json(&a, obj), 0);
        b = (job_spec){ 0 };
        ck_assert_int_eq(job_spec_from_json(obj, &b, err), 0);
        ck_assert_str_eq(b.env[0], "X=y");
        ck_assert_str_eq(b.job_type, "cpu");
        ck_assert(res_equal(a.req, b.req));
        cJSON_Delete(obj);
        job_spec_free(&a);
        job_spec_free(&b);
}
END_TEST

START_TEST(record_round_trip_hides_env) {
        job j = { .id = 7, .uid = 65534, .gid = 65534, .state = JOB_OOM_KILLED, .submit_usec = 1, .start_usec = 2,
                  .end_usec = 3 };
        char err[PROTO_ERRLEN];
        ck_assert_int_eq(parse(GOOD ",\"env\":[\"SECRET=1\"]", &j.spec, err), 0);
        j.user = strdup("nobody");
        j.node = strdup("node1");
        j.result = (job_result){ .signal = 9, .cpu_usec = 123, .mem_peak = 1 << 26, .oom_kills = 1,
                                 .error = strdup("killed by the OOM killer") };
        cJSON *obj = job_to_json(&j);
        ck_assert_ptr_null(cJSON_GetObjectItem(obj, "env"));
        job back;
        ck_assert_int_eq(job_from_json(obj, &back, err), 0);
        ck_assert_uint_eq(back.id, 7);
        ck_assert_int_eq(back.state, JOB_OOM_KILLED);
        ck_assert_str_eq(back.node, "node1");
        ck_assert_str_eq(back.spec.argv[0], "/bin/echo");
        ck_assert_int_eq(back.result.signal, 9);
        ck_assert_uint_eq(back.result.oom_kills, 1);
        ck_assert_str_eq(back.result.error, "killed by the OOM killer");
        ck_assert_int_eq(back.end_usec, 3);
        cJSON_Delete(obj);
        job_free(&back);
        job_free(&j);
}
END_TEST

START_TEST(state_names) {
        for (int s = 0; s < _JOB_STATE_MAX; s++) {
                job_state back;
                ck_assert_int_eq(job_state_from_name(job_state_name((job_state)s), &back), 0);
                ck_assert_int_eq(back, s);
        }
        ck_assert_str_eq(job_state_name(JOB_OOM_KILLED), "oom-killed");
        ck_assert(!job_state_is_terminal(JOB_RUNNING));
        ck_assert(job_state_is_terminal(JOB_LOST));
        job_state unused;
        ck_assert_int_eq(job_state_from_name("done", &unused), -EINVAL);
}
END_TEST

static Suite *job_suite(void) {
        Suite *s = suite_create("job");
        TCase *tc = tcase_create("job");
        tcase_add_test(tc, good_spec_gets_defaults);
        tcase_add_loop_test(tc, bad_specs_name_their_field, 0, sizeof(bad) / sizeof(bad[0]));
        tcase_add_test(tc, spec_round_trip_keeps_env);
        tcase_add_test(tc, record_round_trip_hides_env);
        tcase_add_test(tc, state_names);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(job_suite)
