/* test_job.c - job spec validation and the record's JSON round trip. */
#include "check_main.h"
#include "job.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GOOD "\"argv\":[\"/bin/echo\",\"hi\"],\"cwd\":\"/tmp\",\"mcpu\":500,\"mem\":67108864"

static int parse(const char *body, job_spec *spec, char err[PROTO_ERRLEN]) {
        char text[2048];
        ck_assert_int_lt(snprintf(text, sizeof(text), "{\"v\":1,\"type\":\"submit\",%s}", body), (int)sizeof(text));
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
        ck_assert_int_eq(spec.umask, 022); /* a client that predates the field */
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
        { GOOD ",\"mem_high\":67108865", "mem_high" },
        { GOOD ",\"mem_high\":-1", "mem_high" },
        { GOOD ",\"time_limit_usec\":-2", "time_limit_usec" },
        { GOOD ",\"time_limit_usec\":31622400000001", "time_limit_usec" },
        { GOOD ",\"env\":[\"NOEQUALS\"]", "env" },
        { GOOD ",\"env\":[\"=x\"]", "env" },
        { GOOD ",\"group\":\"a//b\"", "group" },
        { GOOD ",\"group\":\"a b\"", "group" },
        { GOOD ",\"name\":\"\"", "name" },
        { GOOD ",\"name\":\"a\\nb\"", "name" },
        { GOOD ",\"stdout_path\":\"out.txt\"", "stdout_path" },
        { GOOD ",\"stderr_path\":\"\"", "stderr_path" },
        { GOOD ",\"stderr_path\":7", "stderr_path" },
        { "\"argv\":\"/bin/x\",\"cwd\":\"/\",\"mcpu\":1,\"mem\":1", "argv" },
        { "\"argv\":[\"/bin/x\",3],\"cwd\":\"/\",\"mcpu\":1,\"mem\":1", "argv" },
        { "\"argv\":[\"\"],\"cwd\":\"/\",\"mcpu\":1,\"mem\":1", "argv" },
        { "\"argv\":[\"/bin/x\"],\"cwd\":[\"/\"],\"mcpu\":1,\"mem\":1", "cwd" },
        { "\"argv\":[\"/bin/x\"],\"cwd\":\"/\",\"mcpu\":1099511627777,\"mem\":1", "mcpu" },
        { "\"argv\":[\"/bin/x\"],\"cwd\":\"/\",\"mcpu\":0.5,\"mem\":1", "mcpu" },
        { "\"argv\":[\"/bin/x\"],\"cwd\":\"/\",\"mcpu\":\"1\",\"mem\":1", "mcpu" },
        { "\"argv\":[\"/bin/x\"],\"cwd\":\"/\",\"mem\":1", "mcpu" },
        { "\"argv\":[\"/bin/x\"],\"cwd\":\"/\",\"mcpu\":1,\"mem\":1152921504606846977", "mem" },
        { "\"argv\":[\"/bin/x\"],\"cwd\":\"/\",\"mcpu\":1,\"mem\":0", "mem" },
        { GOOD ",\"pids\":1073741825", "pids" },
        { GOOD ",\"pids\":2.5", "pids" },
        { GOOD ",\"gpus\":-1", "gpus" },
        { GOOD ",\"gpus\":1025", "gpus" },
        { GOOD ",\"gpus\":\"all\"", "gpus" },
        { GOOD ",\"env\":\"A=1\"", "env" },
        { GOOD ",\"env\":[\"\"]", "env" },
        { GOOD ",\"group\":\"/a\"", "group" },
        { GOOD ",\"group\":\"a/\"", "group" },
        { GOOD ",\"group\":\"a/..\"", "group" },
        { GOOD ",\"group\":\".\"", "group" },
        { GOOD ",\"group\":\"\"", "group" },
        { GOOD ",\"group\":\"dept/t\u00e9am\"", "group" },
        { GOOD ",\"job_type\":\"\"", "job_type" },
        { GOOD ",\"job_type\":\"x\\ty\"", "job_type" },
        { GOOD ",\"name\":false", "name" },
        { GOOD ",\"name\":\"bell\\u0007\"", "name" },
        { GOOD ",\"umask\":512", "umask" },
        { GOOD ",\"umask\":-1", "umask" },
        { GOOD ",\"umask\":\"077\"", "umask" },
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

START_TEST(field_errors_are_one_readable_line) {
        job_spec spec;
        char err[PROTO_ERRLEN];
        ck_assert_int_eq(parse("\"argv\":[\"/bin/x\"],\"cwd\":\"/\",\"mcpu\":1,\"mem\":-1", &spec, err), -EINVAL);
        ck_assert_str_eq(err, "mem: must be a positive number of bytes");
        ck_assert_int_eq(parse("\"argv\":[\"/bin/x\"],\"cwd\":\"/\",\"mcpu\":0,\"mem\":1", &spec, err), -EINVAL);
        ck_assert_str_eq(err, "mcpu: must be a positive number of milli-cores");
        ck_assert_int_eq(parse("\"argv\":[\"bin/x\"],\"cwd\":\"/\",\"mcpu\":1,\"mem\":1", &spec, err), -EINVAL);
        ck_assert_str_eq(err, "argv: the program must be an absolute path");
        ck_assert_ptr_null(strchr(err, '\n'));
}
END_TEST

/* A spec body with n argv items ("/bin/x" then "A=1"s) or n env items. Caller frees. */
static char *many_items(const char *field, size_t n) {
        bool env = strcmp(field, "env") == 0;
        char *body = malloc(128 + n * 8), *p = body;
        p += sprintf(p, "\"cwd\":\"/\",\"mcpu\":1,\"mem\":1,%s\"%s\":[", env ? "\"argv\":[\"/bin/x\"]," : "", field);
        for (size_t i = 0; i < n; i++)
                p += sprintf(p, "%s\"%s\"", i ? "," : "", !env && i == 0 ? "/bin/x" : "A=1");
        strcpy(p, "]");
        return body;
}

/* Parse a spec body of any length. */
static int parse_long(const char *body, job_spec *spec, char err[PROTO_ERRLEN]) {
        char *text = malloc(strlen(body) + 64);
        sprintf(text, "{\"v\":1,\"type\":\"submit\",%s}", body);
        cJSON *obj = cJSON_Parse(text);
        ck_assert_ptr_nonnull(obj);
        *spec = (job_spec){ 0 };
        int r = job_spec_from_json(obj, spec, err);
        cJSON_Delete(obj);
        free(text);
        return r;
}

START_TEST(item_limits) {
        job_spec spec;
        char err[PROTO_ERRLEN];
        static const struct {
                const char *field;
                size_t n;
                int ret;
        } cases[] = { { "argv", JOB_ARGV_MAX, 0 },
                      { "argv", JOB_ARGV_MAX + 1, -EINVAL },
                      { "env", JOB_ENV_MAX, 0 },
                      { "env", JOB_ENV_MAX + 1, -EINVAL } };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                char *body = many_items(cases[i].field, cases[i].n);
                ck_assert_int_eq(parse_long(body, &spec, err), cases[i].ret);
                if (cases[i].ret == 0)
                        ck_assert_uint_eq(strv_length(strcmp(cases[i].field, "env") ? spec.argv : spec.env),
                                          cases[i].n);
                else
                        ck_assert_msg(strncmp(err, cases[i].field, strlen(cases[i].field)) == 0, "%s", err);
                job_spec_free(&spec);
                free(body);
        }
}
END_TEST

START_TEST(name_limits_and_defaults) {
        job_spec spec;
        char err[PROTO_ERRLEN], body[512], name[JOB_NAME_MAX + 2];
        memset(name, 'n', sizeof(name) - 1);
        name[JOB_NAME_MAX] = '\0';
        snprintf(body, sizeof(body), GOOD ",\"name\":\"%s\",\"group\":\"%s\"", name, name);
        ck_assert_int_eq(parse(body, &spec, err), 0);
        ck_assert_uint_eq(strlen(spec.name), JOB_NAME_MAX);
        job_spec_free(&spec);
        name[JOB_NAME_MAX] = 'n';
        name[JOB_NAME_MAX + 1] = '\0';
        snprintf(body, sizeof(body), GOOD ",\"name\":\"%s\"", name);
        ck_assert_int_eq(parse(body, &spec, err), -EINVAL);
        ck_assert_str_eq(err, "name: must be 1 to 128 characters");
        snprintf(body, sizeof(body), GOOD ",\"group\":\"%s\"", name);
        ck_assert_int_eq(parse(body, &spec, err), -EINVAL);

        ck_assert_int_eq(parse(GOOD ",\"group\":\"Dept_1.x/team-2/sub\",\"name\":\"caf\u00e9 job\"", &spec, err), 0);
        ck_assert_str_eq(spec.name, "caf\u00e9 job"); /* any printable text, spaces and UTF-8 included */
        job_spec_free(&spec);

        ck_assert_int_eq(parse("\"argv\":[\"/\"],\"cwd\":\"/\",\"mcpu\":1,\"mem\":1", &spec, err), 0);
        ck_assert_str_eq(spec.name, "/");
        job_spec_free(&spec);
        ck_assert_int_eq(parse("\"argv\":[\"/opt/x\\ny\"],\"cwd\":\"/\",\"mcpu\":1,\"mem\":1", &spec, err), 0);
        ck_assert_str_eq(spec.name, "x?y"); /* the default name is displayable too */
        ck_assert_str_eq(spec.argv[0], "/opt/x\ny");
        job_spec_free(&spec);
}
END_TEST

START_TEST(spec_fields_cover_what_to_json_writes) {
        job_spec spec;
        char err[PROTO_ERRLEN];
        ck_assert_int_eq(parse(GOOD ",\"env\":[\"A=1\"],\"pids\":64,\"gpus\":2,\"name\":\"n\",\"group\":\"g\","
                                    "\"job_type\":\"t\",\"expected_usec\":60000000,\"stdout_path\":\"/"
                                    "o\",\"stderr_path\":\"/e\",\"mem_high\":1024,\"requeue\":true,"
                                    "\"open_mode\":\"append\",\"time_limit_usec\":2000000"
                                    ",\"constraint\":\"ssd&avx\",\"nodelist\":\"a,b\",\"exclude\":\"c\",\"exclusive\":"
                                    "true,\"share_cores\":true"
                                    ",\"dependency\":\"afterok:1\",\"hold\":true,\"begin_usec\":5,\"nice\":10"
                                    ",\"array_throttle\":8,\"script\":\"#!/bin/sh\\ntrue\\n\"",
                               &spec, err),
                         0);
        cJSON *obj = proto_new("launch");
        ck_assert_int_eq(job_spec_to_json(&spec, obj), 0);
        ck_assert_int_eq(proto_check_fields(obj, job_spec_fields, err), 0);
        size_t nfields = 0;
        while (job_spec_fields[nfields])
                nfields++;
        ck_assert_int_eq(cJSON_GetArraySize(obj), (int)nfields + 2); /* every field, plus v and type */
        cJSON_AddNumberToObject(obj, "priority", 1);
        ck_assert_int_eq(proto_check_fields(obj, job_spec_fields, err), -EINVAL);
        ck_assert_str_eq(err, "unknown field 'priority' in launch");
        cJSON_Delete(obj);
        job_spec_free(&spec);
}
END_TEST

/* job_spec_json_bound is never below the printed length, even with every field set, every string
 * byte escaped to six and the largest numbers. */
START_TEST(the_bound_covers_the_printed_spec) {
        job_spec spec;
        char err[PROTO_ERRLEN];
        ck_assert_int_eq(
                parse(GOOD
                      ",\"env\":[\"A=\\u0001\\u0002\\u0003\",\"B=\\u001f\"],\"pids\":4194304,"
                      "\"name\":\"n\",\"group\":\"g/h\",\"job_type\":\"t\",\"expected_usec\":9007199254740991,"
                      "\"stdout_path\":\"/o\\u0001\",\"stderr_path\":\"/e\\u0001\",\"mem_high\":1024,\"requeue\":true,"
                      "\"open_mode\":\"append\",\"time_limit_usec\":2000000,\"exclusive\":true,\"share_cores\":true"
                      ",\"dependency\":\"afterok:1\",\"hold\":true,\"begin_usec\":5,\"nice\":10"
                      ",\"array_throttle\":8",
                      &spec, err),
                0);
        spec.req.mem = INT64_C(1) << 62;
        char *ctl = malloc(4001); /* a variable of 4000 control characters: far past the fixed room */
        memset(ctl, 1, 4000);
        ctl[4000] = 0;
        free(spec.env[1]);
        spec.env[1] = ctl;
        cJSON *obj = cJSON_CreateObject();
        ck_assert_int_eq(job_spec_to_json(&spec, obj), 0);
        char *text = cJSON_PrintUnformatted(obj);
        ck_assert_ptr_nonnull(strstr(text, "\\u0001"));
        ck_assert_uint_ge(job_spec_json_bound(&spec), strlen(text));
        free(text);
        cJSON_Delete(obj);
        job_spec_free(&spec);
}
END_TEST

START_TEST(spec_round_trip_keeps_env) {
        job_spec a, b;
        char err[PROTO_ERRLEN];
        ck_assert_int_eq(parse(GOOD ",\"env\":[\"X=y\"],\"job_type\":\"cpu\",\"umask\":63", &a, err), 0);
        cJSON *obj = proto_new("launch");
        ck_assert_int_eq(job_spec_to_json(&a, obj), 0);
        b = (job_spec){ 0 };
        ck_assert_int_eq(job_spec_from_json(obj, &b, err), 0);
        ck_assert_str_eq(b.env[0], "X=y");
        ck_assert_str_eq(b.job_type, "cpu");
        ck_assert_int_eq(b.umask, 077);
        ck_assert(res_equal(a.req, b.req));
        cJSON_Delete(obj);
        job_spec_free(&a);
        job_spec_free(&b);
}
END_TEST

START_TEST(record_round_trip_hides_env) {
        job j = { .id = 7,
                  .uid = 65534,
                  .gid = 65534,
                  .state = JOB_OOM_KILLED,
                  .submit_usec = 1,
                  .start_usec = 2,
                  .end_usec = 3,
                  .array_first = 5,
                  .array_index = 2 };
        char err[PROTO_ERRLEN];
        ck_assert_int_eq(parse(GOOD ",\"env\":[\"SECRET=1\"],\"array_throttle\":3", &j.spec, err), 0);
        j.user = strdup("nobody");
        j.node = strdup("node1");
        j.result = (job_result){ .signal = 9,
                                 .cpu_usec = 123,
                                 .mem_peak = 1 << 26,
                                 .oom_kills = 1,
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
        ck_assert_uint_eq(back.array_first, 5);
        ck_assert_uint_eq(back.array_index, 2);
        ck_assert_uint_eq(back.spec.array_throttle, 3); /* the queue folds it as 5_[...%3] */
        cJSON_Delete(obj);
        job_free(&back);
        j.array_first = 0; /* a job of no array: no array fields */
        obj = job_to_json(&j);
        ck_assert_ptr_null(cJSON_GetObjectItem(obj, "array_first"));
        ck_assert_ptr_null(cJSON_GetObjectItem(obj, "array_index"));
        cJSON_Delete(obj);
        job_free(&j);
}
END_TEST

/* Two jobs of an array read back from the store: the second takes the first's strings where
 * they are equal, and frees its own. */
START_TEST(an_arrays_jobs_share_equal_strings_again) {
        char err[PROTO_ERRLEN];
        job first = { .id = 4, .array_first = 4, .user = strdup("ada") },
            second = { .id = 5, .array_first = 4, .array_index = 1, .user = strdup("ada") };
        ck_assert_int_eq(parse(GOOD, &first.spec, err), 0);
        ck_assert_int_eq(parse(GOOD, &second.spec, err), 0);
        first.spec.stdout_path = strdup("/tmp/colony-4.out");
        second.spec.stdout_path = strdup("/tmp/colony-5.out");
        ck_assert(job_share_strings(&second, &first));
        ck_assert_ptr_eq(second.spec.argv, first.spec.argv);
        ck_assert_ptr_eq(second.user, first.user);
        ck_assert_ptr_eq(second.spec.cwd, first.spec.cwd);
        ck_assert_str_eq(second.spec.stdout_path, "/tmp/colony-5.out"); /* its own, still */
        ck_assert(!second.borrows_stdout);
        ck_assert(!job_share_strings(&second, &first)); /* once only */
        job other = { .id = 6, .user = strdup("bob") }; /* a different user: nothing shared */
        ck_assert_int_eq(parse(GOOD, &other.spec, err), 0);
        ck_assert(!job_share_strings(&other, &first));
        ck_assert(!other.borrows_spec);
        job_free(&other);
        job_free(&second);
        ck_assert_str_eq(first.spec.argv[0], "/bin/echo"); /* the owner's are intact */
        job_free(&first);
}
END_TEST

START_TEST(record_parse_is_tolerant_but_not_blind) {
        job j;
        char err[PROTO_ERRLEN];
        cJSON *obj = cJSON_Parse("{\"id\":3,\"state\":\"pending\"}");
        ck_assert_int_eq(job_from_json(obj, &j, err), 0); /* a sparse record still displays */
        ck_assert_uint_eq(j.id, 3);
        ck_assert_int_eq(j.state, JOB_PENDING);
        ck_assert_ptr_null(j.spec.argv);
        ck_assert_ptr_null(j.node);
        ck_assert_int_eq(j.spec.umask, 022); /* stored before the field */
        job_free(&j);
        cJSON_Delete(obj);

        static const char *const broken[] = {
                "{\"state\":\"pending\"}",
                "{\"id\":3}",
                "{\"id\":0,\"state\":\"pending\"}",
                "{\"id\":3,\"state\":\"finished\"}",
                "{\"id\":3,\"state\":\"running\",\"argv\":\"/bin/x\"}",
                "{\"id\":3,\"state\":\"failed\",\"exit_code\":256}",
                "{\"id\":3,\"state\":\"failed\",\"signal\":-1}",
                "{\"id\":3,\"state\":\"failed\",\"error\":5}",
                "{\"id\":3,\"state\":\"pending\",\"umask\":4096}",
        };
        for (size_t i = 0; i < sizeof(broken) / sizeof(broken[0]); i++) {
                obj = cJSON_Parse(broken[i]);
                ck_assert_msg(job_from_json(obj, &j, err) == -EINVAL, "%s accepted", broken[i]);
                ck_assert_ptr_null(j.user);
                ck_assert_ptr_null(j.spec.argv);
                cJSON_Delete(obj);
        }
}
END_TEST

START_TEST(result_round_trip) {
        job_result a = { .exit_code = 3, .cpu_usec = 1500000, .mem_peak = 3LL << 30, .oom_kills = 0 }, b;
        char err[PROTO_ERRLEN];
        cJSON *obj = proto_new("finished");
        ck_assert_int_eq(job_result_to_json(&a, obj), 0);
        ck_assert_ptr_null(cJSON_GetObjectItem(obj, "error")); /* absent when there is none */
        ck_assert_int_eq(job_result_from_json(obj, &b, err), 0);
        ck_assert_int_eq(b.exit_code, 3);
        ck_assert_int_eq(b.signal, 0);
        ck_assert_uint_eq(b.cpu_usec, 1500000);
        ck_assert_uint_eq(b.mem_peak, 3ULL << 30);
        ck_assert_ptr_null(b.error);
        job_result_free(&b);
        cJSON_Delete(obj);
}
END_TEST

/* A job's GPU use travels only where its agent read it: absent, not zeros, otherwise; and the
 * two figures go together. */
START_TEST(gpu_use_only_where_measured) {
        job_result a = { .gpu_known = true, .gpu_util = 42, .gpu_mem = 3ULL << 30 }, b, none = { 0 };
        char err[PROTO_ERRLEN];
        cJSON *obj = proto_new("usage"), *bare = proto_new("usage");
        ck_assert_int_eq(job_usage_to_json(&a, obj), 0);
        ck_assert_int_eq(job_result_from_json(obj, &b, err), 0);
        ck_assert(b.gpu_known);
        ck_assert_uint_eq(b.gpu_util, 42);
        ck_assert_uint_eq(b.gpu_mem, 3ULL << 30);
        ck_assert_int_eq(job_usage_to_json(&none, bare), 0);
        ck_assert_ptr_null(cJSON_GetObjectItem(bare, "gpu_util"));
        ck_assert_ptr_null(cJSON_GetObjectItem(bare, "gpu_mem"));
        ck_assert_int_eq(job_result_from_json(bare, &b, err), 0);
        ck_assert(!b.gpu_known);
        cJSON_DeleteItemFromObject(obj, "gpu_mem");
        ck_assert_int_eq(job_result_from_json(obj, &b, err), -EINVAL);
        ck_assert_str_eq(err, "gpu_mem: missing (gpu_util and gpu_mem go together)");
        cJSON_ReplaceItemInObject(obj, "gpu_util", cJSON_CreateNumber(101));
        cJSON_AddNumberToObject(obj, "gpu_mem", 1);
        ck_assert_int_eq(job_result_from_json(obj, &b, err), -EINVAL);
        cJSON_Delete(obj);
        cJSON_Delete(bare);
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
        ck_assert_int_eq(job_state_from_name("Pending", &unused), -EINVAL);
        ck_assert_str_eq(job_state_name(_JOB_STATE_MAX), "invalid");
        static const char *const names[] = { "pending",   "running",    "completed", "failed",
                                             "cancelled", "oom-killed", "lost",      "timeout" };
        for (int s = 0; s < _JOB_STATE_MAX; s++)
                ck_assert_str_eq(job_state_name((job_state)s), names[s]);
        ck_assert(job_state_is_terminal(JOB_COMPLETED) && job_state_is_terminal(JOB_FAILED) &&
                  job_state_is_terminal(JOB_CANCELLED) && job_state_is_terminal(JOB_OOM_KILLED) &&
                  job_state_is_terminal(JOB_TIMEOUT));
        ck_assert(!job_state_is_terminal(JOB_PENDING));
}
END_TEST

START_TEST(a_script_is_kept_within_its_cap) {
        job_spec spec = { 0 };
        char err[PROTO_ERRLEN];
        char *big = malloc(JOB_SCRIPT_BYTES_MAX + 2);
        memset(big, 'x', JOB_SCRIPT_BYTES_MAX + 1);
        big[JOB_SCRIPT_BYTES_MAX + 1] = 0;
        cJSON *obj = cJSON_CreateObject();
        cJSON_AddItemToObject(obj, "argv", cJSON_CreateStringArray((const char *[]){ "/j.sh" }, 1));
        cJSON_AddStringToObject(obj, "cwd", "/");
        cJSON_AddNumberToObject(obj, "mcpu", 1);
        cJSON_AddNumberToObject(obj, "mem", 1);
        cJSON_AddStringToObject(obj, "script", big);
        ck_assert_int_eq(job_spec_from_json(obj, &spec, err), -E2BIG);
        ck_assert_str_eq(err, "script: 65537 bytes, more than the 65536 a batch script may have");
        ck_assert_ptr_null(spec.script);
        cJSON_Delete(obj);
        free(big);

        ck_assert_int_eq(parse(GOOD ",\"script\":\"echo hi\\n\"", &spec, err), 0);
        job j = { .id = 3, .state = JOB_PENDING, .spec = spec }, back;
        obj = job_to_json(&j);
        ck_assert_int_eq(job_from_json(obj, &back, err), 0);
        ck_assert_str_eq(back.spec.script, "echo hi\n"); /* what a restarted controller reads back */
        cJSON_Delete(obj);
        job_free(&back);
        job_free(&j);
}
END_TEST

static Suite *job_suite(void) {
        Suite *s = suite_create("job");
        TCase *tc = tcase_create("job");
        tcase_add_test(tc, good_spec_gets_defaults);
        tcase_add_loop_test(tc, bad_specs_name_their_field, 0, sizeof(bad) / sizeof(bad[0]));
        tcase_add_test(tc, field_errors_are_one_readable_line);
        tcase_add_test(tc, item_limits);
        tcase_add_test(tc, name_limits_and_defaults);
        tcase_add_test(tc, spec_fields_cover_what_to_json_writes);
        tcase_add_test(tc, a_script_is_kept_within_its_cap);
        tcase_add_test(tc, the_bound_covers_the_printed_spec);
        tcase_add_test(tc, spec_round_trip_keeps_env);
        tcase_add_test(tc, record_round_trip_hides_env);
        tcase_add_test(tc, an_arrays_jobs_share_equal_strings_again);
        tcase_add_test(tc, record_parse_is_tolerant_but_not_blind);
        tcase_add_test(tc, result_round_trip);
        tcase_add_test(tc, gpu_use_only_where_measured);
        tcase_add_test(tc, state_names);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(job_suite)
