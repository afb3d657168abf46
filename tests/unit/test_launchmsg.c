/* test_launchmsg.c - the agent's checks of a launch message (agent/launchmsg.h). */
#include "check_main.h"
#include "launchmsg.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

#define GOOD "\"argv\":[\"/bin/true\"],\"cwd\":\"/tmp\",\"mcpu\":500,\"mem\":67108864"
#define WHO  "\"uid\":1000,\"gid\":100,\"user\":\"alice\""

/* Parse {"v":1,"type":"launch","id":7,body} into m; *msg is the caller's (m borrows from it). */
static int parse(const char *body, cJSON **msg, launch_msg *m, char err[PROTO_ERRLEN]) {
        char text[2048];

        ck_assert_int_lt(snprintf(text, sizeof(text), "{\"v\":1,\"type\":\"launch\",\"id\":7,%s}", body),
                         (int)sizeof(text));
        ck_assert_ptr_nonnull(*msg = cJSON_Parse(text));
        *m = (launch_msg){ 0 };
        err[0] = 0;
        return launchmsg_parse(*msg, m, err);
}

/* Parse a launch that must be good; *msg and the result's spec are the caller's. */
static launch_msg parse_good(const char *body, cJSON **msg) {
        char err[PROTO_ERRLEN];
        launch_msg m;

        ck_assert_msg(parse(body, msg, &m, err) == 0, "%s: refused: %s", body, err);
        return m;
}

START_TEST(good_launch_gets_its_user_and_default_weights) {
        cJSON *msg;
        launch_msg m = parse_good(GOOD "," WHO ",\"group\":\"physics/astro\",\"attempt\":2", &msg);

        ck_assert_uint_eq(m.uid, 1000);
        ck_assert_uint_eq(m.gid, 100);
        ck_assert_str_eq(m.user, "alice");
        ck_assert_str_eq(m.spec.argv[0], "/bin/true");
        ck_assert_uint_eq(m.ndept_weights, 2);
        ck_assert(m.dept_weights[0] == 1.0 && m.dept_weights[1] == 1.0);
        ck_assert_uint_eq(m.array_first, 0);
        job_spec_free(&m.spec);
        cJSON_Delete(msg);
        m = parse_good(GOOD "," WHO ",\"array_first\":5,\"array_index\":2,\"time_limit_usec\":2000000", &msg);
        ck_assert_uint_eq(m.array_first, 5);
        ck_assert_uint_eq(m.array_index, 2);
        ck_assert_int_eq(m.spec.time_limit_usec, 2000000);
        job_spec_free(&m.spec);
        cJSON_Delete(msg);
}
END_TEST

START_TEST(weights_are_taken_per_level) {
        cJSON *msg;
        launch_msg m = parse_good(GOOD "," WHO ",\"group\":\"a/b/c\",\"dept_weights\":[2,0.5,10000]", &msg);

        ck_assert_uint_eq(m.ndept_weights, 3);
        ck_assert(m.dept_weights[0] == 2 && m.dept_weights[1] == 0.5 && m.dept_weights[2] == 10000);
        job_spec_free(&m.spec);
        cJSON_Delete(msg);
}
END_TEST

/* Each bad launch is refused with a one-line reason naming what is wrong. */
static const struct {
        const char *body, *reason;
} bad[] = {
        { GOOD ",\"gid\":100,\"user\":\"alice\"", "missing field 'uid'" },
        { GOOD ",\"uid\":1000,\"user\":\"alice\"", "missing field 'gid'" },
        { GOOD ",\"uid\":1000,\"gid\":100", "missing field 'user'" },
        { GOOD ",\"uid\":-1,\"gid\":100,\"user\":\"alice\"", "uid" },
        { GOOD "," WHO ",\"shell\":\"/bin/sh\"", "shell" },
        { "\"cwd\":\"/tmp\",\"mcpu\":1,\"mem\":1," WHO, "argv" },
        { GOOD "," WHO ",\"group\":\"a/b\",\"dept_weights\":[1]", "not an array of 2 numbers" },
        { GOOD "," WHO ",\"group\":\"a\",\"dept_weights\":[0]", "entry 1 is not a number in (0, 10000]" },
        { GOOD "," WHO ",\"group\":\"a/b\",\"dept_weights\":[1,10001]", "entry 2 is not a number" },
        { GOOD "," WHO ",\"group\":\"a\",\"dept_weights\":[\"1\"]", "entry 1" },
        { GOOD "," WHO ",\"dept_weights\":[1]", "not an array of 0 numbers" },
        { GOOD "," WHO ",\"array_first\":5,\"array_index\":-1", "array_index" },
        { GOOD "," WHO ",\"stdout_path\":\"/o-%q\"", "stdout_path: unknown pattern %q" },
};

START_TEST(bad_launch_is_refused_with_its_reason) {
        char err[PROTO_ERRLEN];
        cJSON *msg;
        launch_msg m;
        int r = parse(bad[_i].body, &msg, &m, err);

        ck_assert_msg(r == -EINVAL, "%s: accepted", bad[_i].body);
        ck_assert_msg(strstr(err, bad[_i].reason), "%s: reason '%s' lacks '%s'", bad[_i].body, err, bad[_i].reason);
        ck_assert_ptr_null(strchr(err, '\n'));
        job_spec_free(&m.spec);
        cJSON_Delete(msg);
}
END_TEST

START_TEST(a_required_int_must_be_there_and_in_range) {
        cJSON *msg = cJSON_Parse("{\"id\":0,\"grace_ms\":5}");
        char err[PROTO_ERRLEN];
        int64_t v = -1;

        ck_assert_int_eq(launchmsg_require_int(msg, "grace_ms", 0, 10, &v, err), 0);
        ck_assert_int_eq(v, 5);
        ck_assert_int_eq(launchmsg_require_int(msg, "id", 1, 10, &v, err), -EINVAL);
        ck_assert_int_eq(launchmsg_require_int(msg, "attempt", 1, 10, &v, err), -EINVAL);
        ck_assert_str_eq(err, "missing field 'attempt'");
        cJSON_Delete(msg);
}
END_TEST

static Suite *launchmsg_suite(void) {
        Suite *s = suite_create("launchmsg");
        TCase *tc = tcase_create("parse");

        tcase_add_test(tc, good_launch_gets_its_user_and_default_weights);
        tcase_add_test(tc, weights_are_taken_per_level);
        tcase_add_loop_test(tc, bad_launch_is_refused_with_its_reason, 0, (int)(sizeof(bad) / sizeof(bad[0])));
        tcase_add_test(tc, a_required_int_must_be_there_and_in_range);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(launchmsg_suite)
