/* test_proto.c - framing, the incremental reader, field access. */
#include "check_main.h"
#include "proto.h"
#include <errno.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* A frame of text as given (need not be JSON). Caller frees. */
static char *raw_frame(const char *text, size_t *len) {
        size_t n = strlen(text);
        char *f = malloc(n + PROTO_HEADER);
        f[0] = (char)(n >> 24), f[1] = (char)(n >> 16), f[2] = (char)(n >> 8), f[3] = (char)n;
        memcpy(f + PROTO_HEADER, text, n);
        *len = n + PROTO_HEADER;
        return f;
}

static int read_one(const char *text, cJSON **msg, char err[PROTO_ERRLEN]) {
        proto_reader r = { 0 };
        size_t len;
        char *f = raw_frame(text, &len);
        proto_reader_feed(&r, f, len);
        int ret = proto_reader_next(&r, msg, err);
        free(f);
        proto_reader_free(&r);
        return ret;
}

START_TEST(round_trip_byte_by_byte) {
        cJSON *msg = proto_new("submit");
        cJSON_AddNumberToObject(msg, "mcpu", 500);
        char *frame, err[PROTO_ERRLEN];
        size_t len;
        ck_assert_int_eq(proto_frame(msg, &frame, &len), 0);

        proto_reader r = { 0 };
        cJSON *got = NULL;
        for (size_t i = 0; i < len - 1; i++) {
                ck_assert_int_eq(proto_reader_feed(&r, frame + i, 1), 0);
                ck_assert_int_eq(proto_reader_next(&r, &got, err), 0);
        }
        ck_assert_int_eq(proto_reader_feed(&r, frame + len - 1, 1), 0);
        ck_assert_int_eq(proto_reader_next(&r, &got, err), 1);
        ck_assert_str_eq(proto_type(got), "submit");
        ck_assert(cJSON_Compare(msg, got, true));
        ck_assert_uint_eq(r.len, 0);
        cJSON_Delete(got);
        cJSON_Delete(msg);
        free(frame);
        proto_reader_free(&r);
}
END_TEST

START_TEST(two_frames_in_one_feed) {
        size_t l1, l2;
        char *f1 = raw_frame("{\"v\":1,\"type\":\"a\"}", &l1), *f2 = raw_frame("{\"v\":1,\"type\":\"b\"}", &l2);
        char both[128], err[PROTO_ERRLEN];
        memcpy(both, f1, l1);
        memcpy(both + l1, f2, l2);
        proto_reader r = { 0 };
        cJSON *m;
        proto_reader_feed(&r, both, l1 + l2);
        ck_assert_int_eq(proto_reader_next(&r, &m, err), 1);
        ck_assert_str_eq(proto_type(m), "a");
        cJSON_Delete(m);
        ck_assert_int_eq(proto_reader_next(&r, &m, err), 1);
        ck_assert_str_eq(proto_type(m), "b");
        cJSON_Delete(m);
        ck_assert_int_eq(proto_reader_next(&r, &m, err), 0);
        free(f1);
        free(f2);
        proto_reader_free(&r);
}
END_TEST

START_TEST(oversized_header_is_refused_before_the_body) {
        unsigned char header[PROTO_HEADER] = { 0, 0x1e, 0x84, 0x80 }; /* 2,000,000 */
        proto_reader r = { 0 };
        cJSON *m;
        char err[PROTO_ERRLEN];
        proto_reader_feed(&r, header, sizeof(header));
        ck_assert_int_eq(proto_reader_next(&r, &m, err), -EMSGSIZE);
        ck_assert_ptr_nonnull(strstr(err, "exceeds"));
        ck_assert_uint_le(r.cap, 4096); /* nothing was reserved for the announced body */
        proto_reader_free(&r);

        unsigned char zero[PROTO_HEADER] = { 0 };
        proto_reader_feed(&r, zero, sizeof(zero));
        ck_assert_int_eq(proto_reader_next(&r, &m, err), -EMSGSIZE);
        proto_reader_free(&r);
}
END_TEST

START_TEST(bad_bodies) {
        cJSON *m;
        char err[PROTO_ERRLEN];
        ck_assert_int_eq(read_one("{\"v\":1,\"type\":", &m, err), -EBADMSG);
        ck_assert_ptr_nonnull(strstr(err, "JSON"));
        ck_assert_int_eq(read_one("[1,2]", &m, err), -EBADMSG);
        ck_assert_int_eq(read_one("{\"v\":1}", &m, err), -EBADMSG);
        ck_assert_int_eq(read_one("{\"v\":1,\"type\":7}", &m, err), -EBADMSG);
        ck_assert_int_eq(read_one("{\"v\":2,\"type\":\"queue\"}", &m, err), -EPROTO);
        ck_assert_ptr_nonnull(strstr(err, "version 2"));
        ck_assert_int_eq(read_one("{\"type\":\"queue\"}", &m, err), -EPROTO);
}
END_TEST

START_TEST(frame_too_large_to_send) {
        cJSON *msg = proto_new("x");
        char *big = malloc(PROTO_MAX_MSG + 1);
        memset(big, 'a', PROTO_MAX_MSG);
        big[PROTO_MAX_MSG] = '\0';
        cJSON_AddStringToObject(msg, "blob", big);
        char *frame;
        size_t len;
        ck_assert_int_eq(proto_frame(msg, &frame, &len), -EMSGSIZE);
        free(big);
        cJSON_Delete(msg);
}
END_TEST

START_TEST(fields_are_validated) {
        cJSON *m = cJSON_Parse("{\"v\":1,\"type\":\"t\",\"n\":5,\"f\":1.5,\"s\":\"x\",\"b\":true,"
                               "\"a\":[\"x\",\"\"],\"big\":1e300,\"neg\":-3}");
        char err[PROTO_ERRLEN];
        int64_t i = 42;
        const char *s;
        bool b;
        char **v;
        ck_assert_int_eq(proto_get_int(m, "n", 0, 10, &i, err), 0);
        ck_assert_int_eq(i, 5);
        ck_assert_int_eq(proto_get_int(m, "n", 6, 10, &i, err), -EINVAL);
        ck_assert_int_eq(proto_get_int(m, "f", 0, 10, &i, err), -EINVAL);
        ck_assert_int_eq(proto_get_int(m, "big", 0, INT64_MAX, &i, err), -EINVAL);
        ck_assert_int_eq(proto_get_int(m, "neg", 0, 10, &i, err), -EINVAL);
        ck_assert_int_eq(proto_get_int(m, "s", 0, 10, &i, err), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "s: "));
        ck_assert_int_eq(proto_get_int(m, "absent", 0, 10, &i, err), -ENOENT);
        ck_assert_int_eq(i, 5);
        ck_assert_int_eq(proto_get_str(m, "s", &s, err), 0);
        ck_assert_str_eq(s, "x");
        ck_assert_int_eq(proto_get_str(m, "n", &s, err), -EINVAL);
        ck_assert_int_eq(proto_get_bool(m, "b", &b, err), 0);
        ck_assert(b);
        ck_assert_int_eq(proto_get_strv(m, "a", 10, false, &v, err), -EINVAL);
        ck_assert_int_eq(proto_get_strv(m, "a", 1, true, &v, err), -EINVAL);
        ck_assert_int_eq(proto_get_strv(m, "a", 10, true, &v, err), 0);
        ck_assert_uint_eq(strv_length(v), 2);
        char **copy = strv_copy(v);
        ck_assert_str_eq(copy[0], "x");
        strv_free(copy);
        strv_free(v);

        const char *const allowed[] = { "n", "f", "s", "b", "a", "big", NULL };
        ck_assert_int_eq(proto_check_fields(m, allowed, err), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "'neg'"));
        const char *const all[] = { "n", "f", "s", "b", "a", "big", "neg", NULL };
        ck_assert_int_eq(proto_check_fields(m, all, err), 0);
        cJSON_Delete(m);
}
END_TEST

START_TEST(blocking_send_and_receive) {
        int sv[2];
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM, 0, sv), 0);
        cJSON *msg = proto_error("bad\nthing %d", 7), *got = NULL;
        char err[PROTO_ERRLEN];
        ck_assert_int_eq(proto_send(sv[0], msg), 0);
        ck_assert_int_eq(proto_recv(sv[1], &got, err), 0);
        ck_assert_str_eq(cJSON_GetObjectItem(got, "error")->valuestring, "bad thing 7");
        cJSON_Delete(got);
        close(sv[0]);
        ck_assert_int_eq(proto_recv(sv[1], &got, err), -ECONNRESET);
        close(sv[1]);
        cJSON_Delete(msg);
}
END_TEST

static Suite *proto_suite(void) {
        Suite *s = suite_create("proto");
        TCase *tc = tcase_create("proto");
        tcase_add_test(tc, round_trip_byte_by_byte);
        tcase_add_test(tc, two_frames_in_one_feed);
        tcase_add_test(tc, oversized_header_is_refused_before_the_body);
        tcase_add_test(tc, bad_bodies);
        tcase_add_test(tc, frame_too_large_to_send);
        tcase_add_test(tc, fields_are_validated);
        tcase_add_test(tc, blocking_send_and_receive);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(proto_suite)
