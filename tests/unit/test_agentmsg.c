/* test_agentmsg.c - an agent's hello as the controller checks it. */
#include "agentmsg.h"
#include "check_main.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

/* Check a hello given as JSON text; returns what agentmsg_hello did. */
static int hello(const char *text, agent_hello *h, char err[PROTO_ERRLEN]) {
        cJSON *msg = cJSON_Parse(text);
        ck_assert_ptr_nonnull(msg);
        int r = agentmsg_hello(msg, h, err);
        cJSON_Delete(msg);
        return r;
}

START_TEST(hello_with_running_jobs) {
        agent_hello h;
        char err[PROTO_ERRLEN];
        cJSON *msg =
                cJSON_Parse("{\"v\":1,\"type\":\"hello\",\"name\":\"n1\",\"nonce\":\"x\",\"proof\":\"y\",\"mcpu\":2000,"
                            "\"mem\":8589934592,\"running\":[3,4]}");
        ck_assert_int_eq(agentmsg_hello(msg, &h, err), 0);
        ck_assert_str_eq(h.name, "n1");
        ck_assert_int_eq(h.capacity.mcpu, 2000);
        ck_assert_int_eq(h.capacity.pids, 0);
        ck_assert_str_eq(h.cgroup_mode, "");
        ck_assert_uint_eq(h.nrunning, 2);
        ck_assert_uint_eq(h.running[1], 4);
        free(h.running);
        cJSON_Delete(msg);
}
END_TEST

/* Job ids are exact integers: 1e300 was converted to uint64_t (undefined behaviour), 1.5 read as 1. */
static const char *const bad_running[] = { "[1e300]", "[1.5]", "[0]", "[-1]", "[\"3\"]", "3" };

START_TEST(running_holds_job_ids_only) {
        char text[256], err[PROTO_ERRLEN];
        agent_hello h;
        snprintf(text, sizeof(text), "{\"v\":1,\"type\":\"hello\",\"name\":\"n1\",\"mcpu\":1,\"mem\":1,\"running\":%s}",
                 bad_running[_i]);
        ck_assert_int_eq(hello(text, &h, err), -EINVAL);
        ck_assert_ptr_null(h.running);
        ck_assert_ptr_nonnull(strstr(err, "running:"));
}
END_TEST

START_TEST(hello_needs_name_and_capacity) {
        char err[PROTO_ERRLEN];
        agent_hello h;
        ck_assert_int_eq(hello("{\"v\":1,\"type\":\"hello\",\"name\":\"n1\",\"mcpu\":1}", &h, err), -EINVAL);
        ck_assert_str_eq(err, "hello needs name, mcpu and mem");
        ck_assert_int_eq(hello("{\"v\":1,\"type\":\"hello\",\"name\":\"n1\",\"mcpu\":1,\"mem\":1,\"x\":1}", &h, err),
                         -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "unknown field 'x'"));
}
END_TEST

START_TEST(hello_offers_gpus_and_their_type) {
        char err[PROTO_ERRLEN];
        agent_hello h;
        ck_assert_int_eq(hello("{\"v\":1,\"type\":\"hello\",\"name\":\"n1\",\"mcpu\":1,\"mem\":1}", &h, err), 0);
        ck_assert_int_eq(h.capacity.gpus, 0);
        ck_assert_ptr_null(h.gpu_type);
        free(h.running);
        cJSON *msg = cJSON_Parse("{\"v\":1,\"type\":\"hello\",\"name\":\"n1\",\"mcpu\":1,\"mem\":1,\"gpus\":4,"
                                 "\"gpu_type\":\"a100\"}");
        ck_assert_int_eq(agentmsg_hello(msg, &h, err), 0);
        ck_assert_int_eq(h.capacity.gpus, 4);
        ck_assert_str_eq(h.gpu_type, "a100"); /* borrowed from msg */
        free(h.running);
        cJSON_Delete(msg);
        ck_assert_int_eq(
                hello("{\"v\":1,\"type\":\"hello\",\"name\":\"n1\",\"mcpu\":1,\"mem\":1,\"gpus\":-1}", &h, err),
                -EINVAL);
        ck_assert_int_eq(hello("{\"v\":1,\"type\":\"hello\",\"name\":\"n1\",\"mcpu\":1,\"mem\":1,"
                               "\"gpu_type\":\"a,b\"}",
                               &h, err),
                         -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "gpu_type:"));
}
END_TEST

static Suite *agentmsg_suite(void) {
        Suite *s = suite_create("agentmsg");
        TCase *tc = tcase_create("hello");
        tcase_add_test(tc, hello_with_running_jobs);
        tcase_add_loop_test(tc, running_holds_job_ids_only, 0, sizeof(bad_running) / sizeof(bad_running[0]));
        tcase_add_test(tc, hello_needs_name_and_capacity);
        tcase_add_test(tc, hello_offers_gpus_and_their_type);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(agentmsg_suite)
