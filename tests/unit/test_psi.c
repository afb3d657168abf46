/* test_psi.c - pressure stall information: the kernel's text in, colony's JSON out and back. */
#include "check_main.h"
#include "psi.h"
#include <errno.h>
#include <string.h>

START_TEST(kernel_text_parses) {
        psi_resource r;
        ck_assert_int_eq(psi_parse("some avg10=1.50 avg60=0.25 avg300=0.00 total=123456\n"
                                   "full avg10=0.75 avg60=0.00 avg300=0.00 total=654",
                                   &r),
                         0);
        ck_assert_double_eq_tol(r.some_avg10, 1.5, 1e-9);
        ck_assert_double_eq_tol(r.full_avg10, 0.75, 1e-9);
        ck_assert_uint_eq(r.some_total_usec, 123456);
        ck_assert_uint_eq(r.full_total_usec, 654);
        /* cpu before 5.13 has no full line */
        ck_assert_int_eq(psi_parse("some avg10=0.00 avg60=0.00 avg300=0.00 total=9", &r), 0);
        ck_assert_uint_eq(r.some_total_usec, 9);
        ck_assert_uint_eq(r.full_total_usec, 0);
        ck_assert_int_eq(psi_parse("", &r), -EINVAL);
        ck_assert_int_eq(psi_parse("full avg10=0.00 avg60=0.00 avg300=0.00 total=9", &r), -EINVAL);
        ck_assert_int_eq(psi_parse("some avg10=x avg60=0.00 avg300=0.00 total=9", &r), -EINVAL);
        ck_assert_int_eq(psi_parse("some avg10=-1 avg60=0.00 avg300=0.00 total=9", &r), -EINVAL);
}
END_TEST

START_TEST(json_round_trip_and_bad_json) {
        psi_stats in = { .known = true, .cpu = { 12.5, 0, 100, 0 }, .memory = { 0, 0, 5, 3 }, .io = { 3.25, 1, 7, 2 } };
        psi_stats out;
        char err[PROTO_ERRLEN];
        cJSON *obj = cJSON_CreateObject();
        ck_assert_int_eq(psi_to_json(&in, obj), 0);
        ck_assert_int_eq(psi_from_json(obj, &out, err), 0);
        ck_assert(out.known);
        ck_assert_double_eq(out.cpu.some_avg10, 12.5);
        ck_assert_uint_eq(out.memory.full_total_usec, 3);
        ck_assert_double_eq(out.io.some_avg10, 3.25);
        cJSON_Delete(obj);

        obj = cJSON_CreateObject(); /* unknown: nothing written, nothing read */
        ck_assert_int_eq(psi_to_json(&(psi_stats){ 0 }, obj), 0);
        ck_assert_ptr_null(cJSON_GetObjectItem(obj, "psi"));
        ck_assert_int_eq(psi_from_json(obj, &out, err), 0);
        ck_assert(!out.known);
        cJSON_Delete(obj);

        static const char *const bad[] = {
                "{\"psi\":{\"cpu\":1}}",
                "{\"psi\":{\"gpu\":{}}}",
                "{\"psi\":{\"cpu\":{\"some_avg10\":101,\"full_avg10\":0,\"some_usec\":0,\"full_usec\":0}}}",
                "{\"psi\":{\"cpu\":{\"some_avg10\":1,\"full_avg10\":0,\"some_usec\":-1,\"full_usec\":0}}}",
        };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                obj = cJSON_Parse(bad[i]);
                ck_assert_msg(psi_from_json(obj, &out, err) == -EINVAL, "accepted %s", bad[i]);
                cJSON_Delete(obj);
        }
}
END_TEST

static Suite *psi_suite(void) {
        Suite *s = suite_create("psi");
        TCase *tc = tcase_create("psi");
        tcase_add_test(tc, kernel_text_parses);
        tcase_add_test(tc, json_round_trip_and_bad_json);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(psi_suite)
