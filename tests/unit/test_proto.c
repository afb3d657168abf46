/* test_proto.c - framing, the incremental reader, field access. */
#include "check_main.h"
#include "net.h"
#include "proto.h"
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
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

/* proto_print writes what cJSON writes, integers as digits. */
START_TEST(print_writes_integers_as_digits_and_the_rest_as_cjson) {
        static const char in[] = "{\"a\":1,\"b\":-3,\"c\":1763913600000000,\"big\":9007199254740993000,"
                                 "\"s\":\"q\\\"\\\\\\n\\t\\u0001\u00e9/\",\"x\":[true,false,null,0.5,-0.25,[]],"
                                 "\"o\":{},\"e\":\"\",\"z\":-0}";
        cJSON *obj = cJSON_Parse(in);
        ck_assert_ptr_nonnull(obj);
        char *mine = proto_print(obj), *theirs = cJSON_PrintUnformatted(obj);
        ck_assert_str_eq(mine, "{\"a\":1,\"b\":-3,\"c\":1763913600000000,\"big\":9007199254740993024,"
                               "\"s\":\"q\\\"\\\\\\n\\t\\u0001\u00e9/\",\"x\":[true,false,null,0.5,-0.25,[]],"
                               "\"o\":{},\"e\":\"\",\"z\":-0}");
        cJSON *back = cJSON_Parse(mine), *ref = cJSON_Parse(theirs);
        ck_assert(cJSON_Compare(back, ref, true));
        ck_assert_ptr_nonnull(strstr(theirs, "\"c\":1.7639136e+15")); /* what cJSON makes of it */
        cJSON_Delete(obj);
        cJSON_Delete(back);
        cJSON_Delete(ref);
        free(mine);
        free(theirs);
}
END_TEST

/* A strict int64 reader takes every integer proto_print and proto_frame write: digits, never
 * "1.79565496963997e+15" as cJSON's "%1.15g" writes a timestamp in microseconds. */
START_TEST(print_writes_usec_and_int64_sized_values_as_digits) {
        static const struct {
                double value;
                const char *text;
        } cases[] = {
                { 1795654969639970.0, "1795654969639970" }, /* a *_usec of 2026 */
                { -1795654969639970.0, "-1795654969639970" },
                { 9007199254740992.0, "9007199254740992" },       /* 2^53 */
                { 9223372036854774784.0, "9223372036854774784" }, /* the largest double below 2^63 */
                { 1e300, "1e+300" },                              /* no int64: cJSON's way */
                { 0.5, "0.5" },
        };
        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                cJSON *msg = proto_new("t");
                cJSON_AddNumberToObject(msg, "n", cases[i].value);
                char want[128], *frame, *text = proto_print(msg);
                size_t len;
                snprintf(want, sizeof(want), "{\"v\":1,\"type\":\"t\",\"n\":%s}", cases[i].text);
                ck_assert_str_eq(text, want);
                ck_assert_int_eq(proto_frame(msg, &frame, &len), 0);
                ck_assert_uint_eq(len, PROTO_HEADER + strlen(want));
                ck_assert_mem_eq(frame + PROTO_HEADER, want, strlen(want));
                free(frame);
                free(text);
                cJSON_Delete(msg);
        }
}
END_TEST

/* proto_print_pretty lays a document out as cJSON_Print does, integers as digits. */
START_TEST(print_pretty_is_laid_out_as_cjson) {
        static const char in[] = "{\"jobs\":[{\"id\":1,\"argv\":[\"/bin/sh\",\"-c\"],\"o\":{}},{\"id\":2}],"
                                 "\"e\":{},\"a\":[],\"x\":0.25,\"s\":\"\\u001b\"}";
        cJSON *doc = cJSON_Parse(in);
        char *mine = proto_print_pretty(doc), *theirs = cJSON_Print(doc);
        ck_assert_str_eq(mine, theirs);
        free(mine);
        cJSON_AddNumberToObject(doc, "submit_usec", 1795654969639970.0);
        mine = proto_print_pretty(doc);
        ck_assert_ptr_nonnull(strstr(mine, "\"submit_usec\":\t1795654969639970\n}"));
        free(mine);
        free(theirs);
        cJSON_Delete(doc);
}
END_TEST

/* Strings that are not UTF-8 are refused with the field named; valid ones of every length pass. */
START_TEST(strings_that_are_not_utf8_are_refused) {
        static const struct {
                const char *text;
                long at; /* the first bad byte */
        } bad[] = { { "a\xff", 1 },
                    { "\xc0\xaf", 0 } /* overlong */,
                    { "\xed\xa0\x80", 0 } /* surrogate */,
                    { "\xf4\x90\x80\x80", 0 } /* above U+10FFFF */,
                    { "x\xe2\x82", 1 } /* cut */,
                    { "\x80", 0 } };
        char err[PROTO_ERRLEN], want[PROTO_ERRLEN];
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                cJSON *msg = proto_new("submit");
                cJSON *argv = cJSON_AddArrayToObject(msg, "argv");
                cJSON_AddItemToArray(argv, cJSON_CreateString("/bin/echo"));
                cJSON_AddItemToArray(argv, cJSON_CreateString(bad[i].text));
                ck_assert_int_eq(proto_check_utf8(msg, err), -EINVAL);
                if (bad[i].at)
                        snprintf(want, sizeof(want), "argv item 1: not valid UTF-8 (byte %ld, after \"%.*s\")",
                                 bad[i].at, (int)bad[i].at, bad[i].text);
                else
                        snprintf(want, sizeof(want), "argv item 1: not valid UTF-8 (byte 0)");
                ck_assert_str_eq(err, want);
                cJSON_Delete(msg);
                msg = proto_new("submit");
                cJSON_AddStringToObject(msg, "name", bad[i].text);
                ck_assert_int_eq(proto_check_utf8(msg, err), -EINVAL);
                ck_assert_ptr_nonnull(strstr(err, "name: not valid UTF-8"));
                cJSON_Delete(msg);
        }
        cJSON *ok = proto_new("submit");
        cJSON_AddStringToObject(ok, "name", "caf\u00e9 \u20ac \U0001F600 \x7f");
        ck_assert_int_eq(proto_check_utf8(ok, err), 0);
        cJSON_Delete(ok);
}
END_TEST

/* Whatever a string holds, proto_print writes valid UTF-8: a stray byte becomes U+FFFD. */
START_TEST(print_writes_a_stray_byte_as_the_replacement_character) {
        cJSON *msg = cJSON_CreateObject();
        cJSON_AddStringToObject(msg, "error", "unknown field 'a\xff\xe2\x82' \u00e9");
        char *text = proto_print(msg);
        ck_assert_str_eq(text, "{\"error\":\"unknown field 'a\\ufffd\\ufffd\\ufffd' \u00e9\"}");
        free(text);
        cJSON_Delete(msg);
}
END_TEST

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

/* The frames of two messages of the given types, back to back in buf; *len1 is the first's size. */
static size_t two_frames(const char *type1, const char *type2, char buf[128], size_t *len1) {
        char text[64];
        size_t l2;
        snprintf(text, sizeof(text), "{\"v\":1,\"type\":\"%s\"}", type1);
        char *f1 = raw_frame(text, len1);
        snprintf(text, sizeof(text), "{\"v\":1,\"type\":\"%s\"}", type2);
        char *f2 = raw_frame(text, &l2);
        memcpy(buf, f1, *len1);
        memcpy(buf + *len1, f2, l2);
        free(f1);
        free(f2);
        return *len1 + l2;
}

START_TEST(two_frames_in_one_feed) {
        size_t l1;
        char both[128], err[PROTO_ERRLEN];
        size_t total = two_frames("a", "b", both, &l1);
        proto_reader r = { 0 };
        cJSON *m;
        proto_reader_feed(&r, both, total);
        ck_assert_int_eq(proto_reader_next(&r, &m, err), 1);
        ck_assert_str_eq(proto_type(m), "a");
        cJSON_Delete(m);
        ck_assert_int_eq(proto_reader_next(&r, &m, err), 1);
        ck_assert_str_eq(proto_type(m), "b");
        cJSON_Delete(m);
        ck_assert_int_eq(proto_reader_next(&r, &m, err), 0);
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
        ck_assert(strv_equal(copy, v));
        char *const shorter[] = { copy[0], NULL }, *const empty[] = { NULL };
        ck_assert(!strv_equal(shorter, v) && !strv_equal(v, shorter)); /* a prefix is not equal */
        ck_assert(strv_equal(empty, NULL) && !strv_equal(NULL, v));
        copy[1][0] ^= 1;
        ck_assert(!strv_equal(copy, v));
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

START_TEST(header_split_across_feeds) {
        size_t len;
        char *f = raw_frame("{\"v\":1,\"type\":\"split\"}", &len), err[PROTO_ERRLEN];
        proto_reader r = { 0 };
        cJSON *m = NULL;
        ck_assert_int_eq(proto_reader_feed(&r, f, 2), 0);
        ck_assert_int_eq(proto_reader_next(&r, &m, err), 0);
        ck_assert_int_eq(proto_reader_feed(&r, f + 2, 3), 0); /* rest of the header, one body byte */
        ck_assert_int_eq(proto_reader_next(&r, &m, err), 0);
        ck_assert_int_eq(proto_reader_feed(&r, f + 5, len - 5), 0);
        ck_assert_int_eq(proto_reader_next(&r, &m, err), 1);
        ck_assert_str_eq(proto_type(m), "split");
        cJSON_Delete(m);
        free(f);
        proto_reader_free(&r);
}
END_TEST

START_TEST(frame_and_a_half_then_the_rest) {
        size_t l1;
        char buf[128], err[PROTO_ERRLEN];
        size_t total = two_frames("one", "two", buf, &l1);
        proto_reader r = { 0 };
        cJSON *m;
        ck_assert_int_eq(proto_reader_feed(&r, buf, l1 + 6), 0);
        ck_assert_int_eq(proto_reader_next(&r, &m, err), 1);
        ck_assert_str_eq(proto_type(m), "one");
        cJSON_Delete(m);
        ck_assert_int_eq(proto_reader_next(&r, &m, err), 0);
        ck_assert_uint_eq(r.len - r.off, 6); /* waiting: what follows the consumed frame */
        ck_assert_int_eq(proto_reader_feed(&r, buf + l1 + 6, total - l1 - 6), 0);
        ck_assert_int_eq(proto_reader_next(&r, &m, err), 1);
        ck_assert_str_eq(proto_type(m), "two");
        cJSON_Delete(m);
        proto_reader_free(&r);
}
END_TEST

START_TEST(oversized_header_with_its_body_in_the_same_feed) {
        size_t n = 2000000;
        char *data = calloc(1, PROTO_HEADER + n), err[PROTO_ERRLEN];
        data[0] = 0, data[1] = 0x1e, data[2] = (char)0x84, data[3] = (char)0x80;
        proto_reader r = { 0 };
        cJSON *m;
        ck_assert_int_eq(proto_reader_feed(&r, data, PROTO_HEADER + n), 0);
        ck_assert_uint_le(r.cap, 4096); /* the announced body was not stored */
        ck_assert_int_eq(proto_reader_next(&r, &m, err), -EMSGSIZE);
        ck_assert_str_eq(err, "message of 2000000 bytes exceeds the 1048576-byte limit");
        ck_assert_int_eq(proto_reader_feed(&r, data, 65536), 0); /* later bytes are dropped too */
        ck_assert_uint_le(r.cap, 4096);
        ck_assert_int_eq(proto_reader_next(&r, &m, err), -EMSGSIZE);
        free(data);
        proto_reader_free(&r);
}
END_TEST

START_TEST(bad_header_split_across_feeds) {
        unsigned char header[PROTO_HEADER] = { 0xff, 0xff, 0xff, 0xff };
        char body[8192] = { 0 }, err[PROTO_ERRLEN];
        proto_reader r = { 0 };
        cJSON *m;
        ck_assert_int_eq(proto_reader_feed(&r, header, 3), 0);
        ck_assert_int_eq(proto_reader_next(&r, &m, err), 0);
        ck_assert_int_eq(proto_reader_feed(&r, header + 3, 1), 0);
        ck_assert_int_eq(proto_reader_feed(&r, body, sizeof(body)), 0);
        ck_assert_uint_eq(r.len, PROTO_HEADER);
        ck_assert_int_eq(proto_reader_next(&r, &m, err), -EMSGSIZE);
        ck_assert_ptr_nonnull(strstr(err, "4294967295 bytes"));
        proto_reader_free(&r);
}
END_TEST

/* A message whose JSON is exactly n bytes. Caller deletes. */
static cJSON *message_of_size(size_t n) {
        cJSON *msg = proto_new("big");
        char *json = cJSON_PrintUnformatted(msg);
        size_t overhead = strlen(json) + strlen(",\"pad\":\"\"");
        free(json);
        char *pad = malloc(n - overhead + 1);
        memset(pad, 'p', n - overhead);
        pad[n - overhead] = '\0';
        cJSON_AddStringToObject(msg, "pad", pad);
        free(pad);
        return msg;
}

START_TEST(largest_frame_fits_and_one_more_byte_does_not) {
        cJSON *msg = message_of_size(PROTO_MAX_MSG), *got = NULL;
        char *frame, err[PROTO_ERRLEN];
        size_t len;
        ck_assert_int_eq(proto_frame(msg, &frame, &len), 0);
        ck_assert_uint_eq(len, PROTO_HEADER + PROTO_MAX_MSG);
        proto_reader r = { 0 };
        int ret = 0;
        for (size_t off = 0; off < len; off += 65536) {
                size_t n = len - off < 65536 ? len - off : 65536;
                ck_assert_int_eq(proto_reader_feed(&r, frame + off, n), 0);
                ck_assert_uint_le(r.cap, PROTO_HEADER + PROTO_MAX_MSG); /* one frame, not a doubling past it */
                ret = proto_reader_next(&r, &got, err);
                ck_assert_int_eq(ret, off + n == len ? 1 : 0);
        }
        ck_assert(cJSON_Compare(msg, got, true));
        cJSON_Delete(got);
        free(frame);
        proto_reader_free(&r);
        cJSON_Delete(msg);

        msg = message_of_size(PROTO_MAX_MSG + 1);
        ck_assert_int_eq(proto_frame(msg, &frame, &len), -EMSGSIZE);
        cJSON_Delete(msg);
}
END_TEST

static const struct {
        const char *body;
        int ret;
        const char *err;
} bodies[] = {
        { "{\"v\":1,\"type\":\"ok\"}", 1, NULL },
        { "{\"v\":1,\"type\":\"ok\"}\r\n ", 1, NULL },
        { "{\"v\":1,\"type\":", -EBADMSG, "malformed JSON" },
        { "{\"v\":1,\"type\":\"a\"}{\"v\":1,\"type\":\"b\"}", -EBADMSG, "malformed JSON" },
        { "{\"v\":1,\"type\":\"a\"} x", -EBADMSG, "malformed JSON" },
        { "   ", -EBADMSG, "malformed JSON" },
        { "[1,2]", -EBADMSG, "not a JSON object" },
        { "\"text\"", -EBADMSG, "not a JSON object" },
        { "null", -EBADMSG, "not a JSON object" },
        { "{\"v\":1}", -EBADMSG, "\"type\"" },
        { "{\"v\":1,\"type\":7}", -EBADMSG, "\"type\"" },
        { "{\"v\":1,\"type\":null}", -EBADMSG, "\"type\"" },
        { "{\"v\":2,\"type\":\"queue\"}", -EPROTO, "protocol version 2 not supported (want 1)" },
        { "{\"v\":1.5,\"type\":\"queue\"}", -EPROTO, "version 1.5" },
        { "{\"v\":\"1\",\"type\":\"queue\"}", -EPROTO, "not a number" },
        { "{\"type\":\"queue\"}", -EPROTO, "version missing" },
};

START_TEST(body_table) {
        cJSON *m = NULL;
        char err[PROTO_ERRLEN] = "";
        int r = read_one(bodies[_i].body, &m, err);
        ck_assert_msg(r == bodies[_i].ret, "'%s': got %d want %d (%s)", bodies[_i].body, r, bodies[_i].ret, err);
        if (bodies[_i].err)
                ck_assert_msg(strstr(err, bodies[_i].err), "'%s': error '%s' lacks '%s'", bodies[_i].body, err,
                              bodies[_i].err);
        if (r == 1)
                ck_assert_str_eq(proto_type(m), "ok");
        cJSON_Delete(m);
}
END_TEST

START_TEST(error_leaves_the_stream_dead_but_the_buffer_bounded) {
        size_t l1, l2;
        char *bad = raw_frame("{\"v\":2,\"type\":\"x\"}", &l1), *good = raw_frame("{\"v\":1,\"type\":\"y\"}", &l2);
        char err[PROTO_ERRLEN];
        proto_reader r = { 0 };
        cJSON *m;
        proto_reader_feed(&r, bad, l1);
        proto_reader_feed(&r, good, l2);
        ck_assert_int_eq(proto_reader_next(&r, &m, err), -EPROTO);
        ck_assert_uint_eq(r.len - r.off, l2); /* the bad frame was consumed, nothing leaked */
        free(bad);
        free(good);
        proto_reader_free(&r);
}
END_TEST

START_TEST(integers_must_be_exact_and_in_range) {
        cJSON *m = cJSON_Parse("{\"v\":1,\"type\":\"t\",\"max53\":9007199254740992,\"over53\":9007199254740994,"
                               "\"negmax53\":-9007199254740992,\"exp\":1e3,\"tiny\":1e-300,\"t\":true,"
                               "\"null\":null,\"negzero\":-0,\"str\":\"5\"}");
        char err[PROTO_ERRLEN];
        int64_t i = 99;
        ck_assert_int_eq(proto_get_int(m, "max53", 0, INT64_MAX, &i, err), 0);
        ck_assert_int_eq(i, 9007199254740992LL);
        ck_assert_int_eq(proto_get_int(m, "over53", 0, INT64_MAX, &i, err), -EINVAL);
        ck_assert_int_eq(proto_get_int(m, "negmax53", INT64_MIN, 0, &i, err), 0);
        ck_assert_int_eq(i, -9007199254740992LL);
        ck_assert_int_eq(proto_get_int(m, "exp", 1000, 1000, &i, err), 0); /* bounds are inclusive */
        ck_assert_int_eq(i, 1000);
        ck_assert_int_eq(proto_get_int(m, "exp", 0, 999, &i, err), -EINVAL);
        ck_assert_str_eq(err, "exp: must be an integer from 0 to 999");
        ck_assert_int_eq(proto_get_int(m, "exp", 1001, 2000, &i, err), -EINVAL);
        ck_assert_int_eq(proto_get_int(m, "tiny", 0, 10, &i, err), -EINVAL);
        ck_assert_int_eq(proto_get_int(m, "t", 0, 10, &i, err), -EINVAL);
        ck_assert_int_eq(proto_get_int(m, "null", 0, 10, &i, err), -EINVAL);
        ck_assert_int_eq(proto_get_int(m, "str", 0, 10, &i, err), -EINVAL);
        ck_assert_int_eq(proto_get_int(m, "negzero", 0, 10, &i, err), 0);
        ck_assert_int_eq(i, 0);
        cJSON_Delete(m);
}
END_TEST

START_TEST(strings_bools_and_vectors) {
        cJSON *m = cJSON_Parse("{\"v\":1,\"type\":\"t\",\"b\":false,\"n\":1,\"notarr\":\"x\",\"mixed\":[\"a\",2],"
                               "\"empty\":[]}");
        char err[PROTO_ERRLEN];
        bool b = true;
        char **v = NULL;
        const char *s = "preset";
        ck_assert_int_eq(proto_get_bool(m, "b", &b, err), 0);
        ck_assert(!b);
        ck_assert_int_eq(proto_get_bool(m, "n", &b, err), -EINVAL);
        ck_assert_str_eq(err, "n: must be true or false");
        ck_assert_int_eq(proto_get_bool(m, "absent", &b, err), -ENOENT);
        ck_assert_int_eq(proto_get_str(m, "absent", &s, err), -ENOENT);
        ck_assert_str_eq(s, "preset");
        ck_assert_int_eq(proto_get_strv(m, "notarr", 10, true, &v, err), -EINVAL);
        ck_assert_int_eq(proto_get_strv(m, "mixed", 10, true, &v, err), -EINVAL);
        ck_assert_str_eq(err, "mixed: item 1 must be a string");
        ck_assert_int_eq(proto_get_strv(m, "absent", 10, true, &v, err), -ENOENT);
        ck_assert_ptr_null(v);
        ck_assert_int_eq(proto_get_strv(m, "empty", 0, false, &v, err), 0);
        ck_assert_ptr_nonnull(v);
        ck_assert_ptr_null(v[0]);
        strv_free(v);
        strv_free(NULL);
        ck_assert_uint_eq(strv_length(NULL), 0);
        cJSON_Delete(m);
}
END_TEST

START_TEST(duplicate_and_unknown_fields) {
        const char *const allowed[] = { "id", NULL };
        char err[PROTO_ERRLEN];
        cJSON *m = cJSON_Parse("{\"v\":1,\"type\":\"show\",\"id\":1,\"id\":2}");
        ck_assert_int_eq(proto_check_fields(m, allowed, err), -EINVAL);
        ck_assert_str_eq(err, "duplicate field 'id' in show");
        cJSON_Delete(m);
        m = cJSON_Parse("{\"v\":1,\"type\":\"show\",\"type\":\"cancel\"}");
        ck_assert_int_eq(proto_check_fields(m, allowed, err), -EINVAL);
        ck_assert_ptr_nonnull(strstr(err, "duplicate field 'type'"));
        cJSON_Delete(m);
        m = cJSON_Parse("{\"v\":1,\"type\":\"show\",\"id\":1,\"ID\":2}");
        ck_assert_int_eq(proto_check_fields(m, allowed, err), -EINVAL); /* names are case-sensitive */
        ck_assert_str_eq(err, "unknown field 'ID' in show");
        cJSON_Delete(m);
        m = cJSON_Parse("[1]");
        ck_assert_int_eq(proto_check_fields(m, allowed, err), -EINVAL);
        cJSON_Delete(m);
        m = proto_new("nodes");
        ck_assert_int_eq(proto_check_fields(m, allowed, err), 0);
        cJSON_Delete(m);
}
END_TEST

START_TEST(error_message_is_one_line) {
        cJSON *e = proto_error("line one\r\nline %s", "two");
        ck_assert_str_eq(proto_type(e), "error");
        ck_assert_str_eq(cJSON_GetObjectItem(e, "error")->valuestring, "line one  line two");
        ck_assert_int_eq((int)cJSON_GetObjectItem(e, "v")->valuedouble, PROTO_VERSION);
        cJSON_Delete(e);
}
END_TEST

START_TEST(recv_takes_one_frame_and_leaves_the_next) {
        int sv[2];
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        cJSON *a = proto_new("welcome"), *b = proto_new("launch"), *got;
        char err[PROTO_ERRLEN];
        /* both frames are queued before the first read, as a controller may send them */
        ck_assert_int_eq(proto_send(sv[0], a), 0);
        ck_assert_int_eq(proto_send(sv[0], b), 0);
        ck_assert_int_eq(proto_recv(sv[1], &got, err), 0);
        ck_assert_str_eq(proto_type(got), "welcome");
        cJSON_Delete(got);
        ck_assert_int_eq(proto_recv(sv[1], &got, err), 0);
        ck_assert_str_eq(proto_type(got), "launch");
        cJSON_Delete(got);
        cJSON_Delete(a);
        cJSON_Delete(b);
        close(sv[0]);
        close(sv[1]);
}
END_TEST

START_TEST(recv_refuses_an_oversized_header_without_waiting_for_the_body) {
        int sv[2];
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        unsigned char header[PROTO_HEADER] = { 0x7f, 0, 0, 0 };
        cJSON *got = NULL;
        char err[PROTO_ERRLEN];
        ck_assert_int_eq(write(sv[0], header, sizeof(header)), (ssize_t)sizeof(header));
        /* sv[0] stays open: reading for the body would block the test until Check kills it */
        ck_assert_int_eq(proto_recv(sv[1], &got, err), -EMSGSIZE);
        ck_assert_ptr_null(got);
        ck_assert_ptr_nonnull(strstr(err, "exceeds"));
        close(sv[0]);
        close(sv[1]);
}
END_TEST

START_TEST(recv_reports_eof_in_the_middle_of_a_frame) {
        int sv[2];
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        size_t len;
        char *f = raw_frame("{\"v\":1,\"type\":\"cut\"}", &len), err[PROTO_ERRLEN];
        cJSON *got = NULL;
        ck_assert_int_eq(write(sv[0], f, len - 3), (ssize_t)(len - 3));
        close(sv[0]);
        ck_assert_int_eq(proto_recv(sv[1], &got, err), -ECONNRESET);
        ck_assert_ptr_null(got);
        free(f);
        close(sv[1]);
}
END_TEST

START_TEST(send_to_a_closed_peer_fails_without_sigpipe) {
        int sv[2];
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        close(sv[1]);
        cJSON *msg = proto_new("heartbeat");
        ck_assert_int_eq(proto_send(sv[0], msg), -EPIPE); /* a SIGPIPE would kill this test */
        cJSON_Delete(msg);
        close(sv[0]);
}
END_TEST

START_TEST(send_and_recv_work_on_pipes) {
        int p[2];
        ck_assert_int_eq(pipe(p), 0);
        cJSON *msg = proto_new("piped"), *got;
        char err[PROTO_ERRLEN];
        ck_assert_int_eq(proto_send(p[1], msg), 0);
        ck_assert_int_eq(proto_recv(p[0], &got, err), 0);
        ck_assert(cJSON_Compare(msg, got, true));
        cJSON_Delete(got);
        cJSON_Delete(msg);
        close(p[0]);
        close(p[1]);
}
END_TEST

/* Sockets for the transport tests live in a directory the unchecked fixture creates and
 * removes, whatever the tests do. */
static char sockdir[64];

static void make_sockdir(void) {
        strcpy(sockdir, "/tmp/colony-test-net-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(sockdir));
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
        (void)st, (void)flag, (void)ftw;
        return remove(path);
}

static void remove_sockdir(void) { nftw(sockdir, remove_entry, 8, FTW_DEPTH | FTW_PHYS); }

static char *sock_path(const char *name) {
        static char path[128];
        snprintf(path, sizeof(path), "%s/%s", sockdir, name);
        return path;
}

/* Accept one connection on a non-blocking listener. */
static int accept_one(int lfd) {
        struct pollfd p = { .fd = lfd, .events = POLLIN };
        ck_assert_int_eq(poll(&p, 1, 5000), 1);
        int fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        return fd;
}

/* One message each way between a connected pair. */
static void exchange(int a, int b) {
        cJSON *msg = proto_new("ping"), *got;
        char err[PROTO_ERRLEN];
        ck_assert_int_eq(proto_send(a, msg), 0);
        ck_assert_int_eq(proto_recv(b, &got, err), 0);
        ck_assert_str_eq(proto_type(got), "ping");
        cJSON_Delete(got);
        ck_assert_int_eq(proto_send(b, msg), 0);
        ck_assert_int_eq(proto_recv(a, &got, err), 0);
        cJSON_Delete(got);
        cJSON_Delete(msg);
}

START_TEST(unix_listener_has_its_mode_and_flags) {
        const char *path = sock_path("ctl.sock");
        int lfd = net_listen_unix(path, 0660);
        ck_assert_int_ge(lfd, 0);
        struct stat st;
        ck_assert_int_eq(stat(path, &st), 0);
        ck_assert(S_ISSOCK(st.st_mode));
        ck_assert_int_eq(st.st_mode & 07777, 0660);
        ck_assert(fcntl(lfd, F_GETFL) & O_NONBLOCK);
        ck_assert(fcntl(lfd, F_GETFD) & FD_CLOEXEC);
        int c = net_connect_unix(path);
        ck_assert_int_ge(c, 0);
        ck_assert(fcntl(c, F_GETFD) & FD_CLOEXEC);
        int s = accept_one(lfd);
        exchange(c, s);
        close(c);
        close(s);
        close(lfd);
}
END_TEST

START_TEST(unix_listener_replaces_only_stale_sockets) {
        const char *path = sock_path("ctl.sock");
        int lfd = net_listen_unix(path, 0600);
        ck_assert_int_ge(lfd, 0);
        /* a live listener keeps its socket: a second daemon must not steal it */
        ck_assert_int_eq(net_listen_unix(path, 0600), -EADDRINUSE);
        int c = net_connect_unix(path);
        ck_assert_int_ge(c, 0);
        close(c);
        close(lfd);
        ck_assert_int_eq(net_connect_unix(path), -ECONNREFUSED); /* stale now */
        lfd = net_listen_unix(path, 0600);
        ck_assert_int_ge(lfd, 0);
        close(lfd);

        const char *file = sock_path("not-a-socket");
        FILE *f = fopen(file, "w");
        fputs("keep me", f);
        fclose(f);
        ck_assert_int_eq(net_listen_unix(file, 0600), -EEXIST);
        struct stat st;
        ck_assert_int_eq(stat(file, &st), 0);
        ck_assert_int_eq(st.st_size, 7);

        char longpath[200];
        memset(longpath, 'x', sizeof(longpath) - 1);
        longpath[0] = '/';
        longpath[sizeof(longpath) - 1] = '\0';
        ck_assert_int_eq(net_listen_unix(longpath, 0600), -ENAMETOOLONG);
        ck_assert_int_eq(net_connect_unix(sock_path("absent.sock")), -ENOENT);
}
END_TEST

START_TEST(tcp_ipv4_listen_connect) {
        uint16_t port = 0;
        int lfd = net_listen_tcp("127.0.0.1:0", &port);
        ck_assert_int_ge(lfd, 0);
        ck_assert_uint_gt(port, 0);
        ck_assert(fcntl(lfd, F_GETFL) & O_NONBLOCK);
        char hostport[64];
        snprintf(hostport, sizeof(hostport), "127.0.0.1:%u", port);
        int c = net_connect_tcp(hostport, 5000);
        ck_assert_int_ge(c, 0);
        ck_assert(!(fcntl(c, F_GETFL) & O_NONBLOCK)); /* blocking again after the timed connect */
        ck_assert(fcntl(c, F_GETFD) & FD_CLOEXEC);
        int s = accept_one(lfd);
        exchange(c, s);
        close(c);
        close(s);
        /* names resolve too (where localhost also gives ::1 first, each address is tried) */
        snprintf(hostport, sizeof(hostport), "localhost:%u", port);
        c = net_connect_tcp(hostport, 5000);
        ck_assert_int_ge(c, 0);
        close(c);
        close(lfd);
        snprintf(hostport, sizeof(hostport), "127.0.0.1:%u", port);
        ck_assert_int_eq(net_connect_tcp(hostport, 5000), -ECONNREFUSED);
}
END_TEST

START_TEST(tcp_ipv6_listen_connect) {
        uint16_t port = 0;
        int lfd = net_listen_tcp("[::1]:0", &port);
        if (lfd == -EADDRNOTAVAIL || lfd == -EAFNOSUPPORT)
                return; /* no IPv6 loopback on this host */
        ck_assert_int_ge(lfd, 0);
        char hostport[64];
        snprintf(hostport, sizeof(hostport), "[::1]:%u", port);
        int c = net_connect_tcp(hostport, 5000);
        ck_assert_int_ge(c, 0);
        int s = accept_one(lfd);
        exchange(c, s);
        close(c);
        close(s);
        close(lfd);
}
END_TEST

static const struct {
        const char *text;
        int ret;
        const char *host;
        uint16_t port;
} hostports[] = {
        { "127.0.0.1:7000", 0, "127.0.0.1", 7000 },
        { "[::1]:7000", 0, "::1", 7000 },
        { "node1:0", 0, "node1", 0 },
        { "[fe80::1%lo]:65535", 0, "fe80::1%lo", 65535 },
        { "node1", -EINVAL, NULL, 0 },
        { "node1:", -EINVAL, NULL, 0 },
        { ":80", -EINVAL, NULL, 0 },
        { "node1:65536", -EINVAL, NULL, 0 },
        { "node1:+80", -EINVAL, NULL, 0 },
        { "node1: 80", -EINVAL, NULL, 0 },
        { "node1:-0", -EINVAL, NULL, 0 },
        { "node1:80x", -EINVAL, NULL, 0 },
        { "::1:80", -EINVAL, NULL, 0 },
        { "[::1]80", -EINVAL, NULL, 0 },
        { "[::1]", -EINVAL, NULL, 0 },
        { "[]:80", -EINVAL, NULL, 0 },
        { "averyveryverylonghostname:80", -EINVAL, NULL, 0 }, /* longer than the caller's buffer */
};

START_TEST(hostport_table) {
        char host[16] = "untouched";
        uint16_t port = 1;
        int r = net_split_hostport(hostports[_i].text, host, sizeof(host), &port);
        ck_assert_msg(r == hostports[_i].ret, "'%s': got %d", hostports[_i].text, r);
        if (r == 0) {
                ck_assert_str_eq(host, hostports[_i].host);
                ck_assert_uint_eq(port, hostports[_i].port);
        } else {
                ck_assert_str_eq(host, "untouched");
        }
}
END_TEST

/* The last answer of an ended job's output: every file it carries read to its end. */
START_TEST(output_is_all_read_once_every_file_it_carries_is) {
        static const struct {
                const char *answer;
                bool ended, all_read;
        } cases[] = {
                { "{\"out\":\"\",\"out_eof\":true}", true, true },
                { "{\"out\":\"\",\"out_eof\":true}", false, false }, /* more may come */
                { "{\"out\":\"\",\"out_eof\":false}", true, false },
                { "{\"out\":\"\",\"out_eof\":true,\"err\":\"\",\"err_eof\":false}", true, false },
                { "{\"out\":\"\",\"out_eof\":true,\"err\":\"\",\"err_eof\":true}", true, true },
                { "{\"out\":\"\",\"out_eof\":1}", true, false }, /* not a JSON true */
                { "{\"error\":\"node away\"}", true, false },
        };

        for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
                cJSON *a = cJSON_Parse(cases[i].answer);

                ck_assert_ptr_nonnull(a);
                ck_assert_msg(proto_output_all_read(a, cases[i].ended) == cases[i].all_read, "%s, ended %d",
                              cases[i].answer, cases[i].ended);
                cJSON_Delete(a);
        }
}
END_TEST

static Suite *proto_suite(void) {
        Suite *s = suite_create("proto");
        TCase *reader = tcase_create("reader");
        tcase_add_test(reader, round_trip_byte_by_byte);
        tcase_add_test(reader, print_writes_integers_as_digits_and_the_rest_as_cjson);
        tcase_add_test(reader, print_writes_usec_and_int64_sized_values_as_digits);
        tcase_add_test(reader, print_pretty_is_laid_out_as_cjson);
        tcase_add_test(reader, strings_that_are_not_utf8_are_refused);
        tcase_add_test(reader, print_writes_a_stray_byte_as_the_replacement_character);
        tcase_add_test(reader, two_frames_in_one_feed);
        tcase_add_test(reader, header_split_across_feeds);
        tcase_add_test(reader, frame_and_a_half_then_the_rest);
        tcase_add_test(reader, oversized_header_is_refused_before_the_body);
        tcase_add_test(reader, oversized_header_with_its_body_in_the_same_feed);
        tcase_add_test(reader, bad_header_split_across_feeds);
        tcase_add_test(reader, largest_frame_fits_and_one_more_byte_does_not);
        tcase_add_loop_test(reader, body_table, 0, sizeof(bodies) / sizeof(bodies[0]));
        tcase_add_test(reader, error_leaves_the_stream_dead_but_the_buffer_bounded);
        suite_add_tcase(s, reader);

        TCase *fields = tcase_create("fields");
        tcase_add_test(fields, fields_are_validated);
        tcase_add_test(fields, integers_must_be_exact_and_in_range);
        tcase_add_test(fields, strings_bools_and_vectors);
        tcase_add_test(fields, duplicate_and_unknown_fields);
        tcase_add_test(fields, error_message_is_one_line);
        tcase_add_test(fields, output_is_all_read_once_every_file_it_carries_is);
        suite_add_tcase(s, fields);

        TCase *blocking = tcase_create("blocking");
        tcase_add_test(blocking, blocking_send_and_receive);
        tcase_add_test(blocking, recv_takes_one_frame_and_leaves_the_next);
        tcase_add_test(blocking, recv_refuses_an_oversized_header_without_waiting_for_the_body);
        tcase_add_test(blocking, recv_reports_eof_in_the_middle_of_a_frame);
        tcase_add_test(blocking, send_to_a_closed_peer_fails_without_sigpipe);
        tcase_add_test(blocking, send_and_recv_work_on_pipes);
        suite_add_tcase(s, blocking);

        TCase *transport = tcase_create("transport"); /* net.h: the sockets frames travel on */
        tcase_add_unchecked_fixture(transport, make_sockdir, remove_sockdir);
        tcase_add_test(transport, unix_listener_has_its_mode_and_flags);
        tcase_add_test(transport, unix_listener_replaces_only_stale_sockets);
        tcase_add_test(transport, tcp_ipv4_listen_connect);
        tcase_add_test(transport, tcp_ipv6_listen_connect);
        tcase_add_loop_test(transport, hostport_table, 0, sizeof(hostports) / sizeof(hostports[0]));
        suite_add_tcase(s, transport);
        return s;
}

COLONY_CHECK_MAIN(proto_suite)
