/* test_wire.c - the framed transport on a real socketpair. Plain: a write the socket cannot take
 * whole is partial and asks for writability, then completes; a frame split across reads comes out
 * whole once its last byte is in; the peer's end of stream comes after what it sent before; a plain
 * fill stops at its per-turn bound and at an input cap. TLS (certificates made with openssl(1)):
 * a client and a server wire shake hands inside their first reads and writes, a large frame that
 * the socket takes in parts arrives whole, one fill reads all there is whatever its bound, up to
 * the client's close_notify, the server's end of stream. */
#include "check_main.h"
#include "test_certs.h"
#include "wire.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <stdio.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

typedef struct rig {
        wire w;   /* on sv[0], non-blocking */
        int peer; /* sv[1], blocking: the test's end */
        proto_reader r;
} rig;

static void rig_up(rig *t) {
        int sv[2];
        *t = (rig){ 0 };
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv), 0);
        ck_assert_int_eq(fcntl(sv[0], F_SETFL, fcntl(sv[0], F_GETFL) | O_NONBLOCK), 0);
        ck_assert_int_eq(wire_init(&t->w, sv[0], NULL, NULL), 0);
        t->peer = sv[1];
}

static void rig_down(rig *t) {
        wire_close(&t->w);
        ck_assert_int_eq(t->w.fd, -1);
        close(t->peer);
        proto_reader_free(&t->r);
}

/* A frame of a message whose "pad" string makes it about size bytes long. Caller frees. */
static char *big_frame(size_t size, size_t *len) {
        char *pad = malloc(size + 1), *frame;
        ck_assert_ptr_nonnull(pad);
        memset(pad, 'x', size);
        pad[size] = '\0';
        cJSON *m = proto_new("pad");
        ck_assert_ptr_nonnull(cJSON_AddStringToObject(m, "pad", pad));
        ck_assert_int_eq(proto_frame(m, &frame, len), 0);
        cJSON_Delete(m);
        free(pad);
        return frame;
}

/* The type of the next whole message in t's reader, or NULL when none is whole yet. */
static const char *next_type(rig *t, char type[32]) {
        char err[PROTO_ERRLEN];
        cJSON *m = NULL;
        int r = proto_reader_next(&t->r, &m, err);
        ck_assert_int_ge(r, 0);
        if (r == 0)
                return NULL;
        snprintf(type, 32, "%s", proto_type(m));
        cJSON_Delete(m);
        return type;
}

static size_t buffered(const rig *t) { return t->r.len - t->r.off; }

START_TEST(a_write_the_socket_cannot_take_is_partial_then_completes) {
        rig t;
        rig_up(&t);
        size_t len = 4 << 20, got = 0;
        char *out = malloc(len), *in = malloc(len);
        ck_assert_ptr_nonnull(out);
        ck_assert_ptr_nonnull(in);
        for (size_t i = 0; i < len; i++)
                out[i] = (char)(i * 7 + i / 251);
        ck_assert_uint_eq(wire_events(&t.w, false), EPOLLIN);
        ssize_t n = wire_write(&t.w, out, len);
        ck_assert_int_gt(n, 0);
        ck_assert_int_lt(n, (ssize_t)len); /* 4 MiB is far more than a socket buffer */
        ck_assert_uint_eq(wire_events(&t.w, true), EPOLLIN | EPOLLOUT);
        for (size_t off = (size_t)n; got < len;) {
                ssize_t k = read(t.peer, in + got, len - got);
                ck_assert_int_gt(k, 0);
                got += (size_t)k;
                n = wire_write(&t.w, out + off, len - off);
                ck_assert_int_ge(n, 0);
                off += (size_t)n;
        }
        ck_assert_int_eq(memcmp(in, out, len), 0);
        free(out);
        free(in);
        rig_down(&t);
}
END_TEST

START_TEST(a_frame_split_across_reads_comes_out_whole) {
        rig t;
        char type[32];
        size_t len;
        char *frame = big_frame(100, &len);
        rig_up(&t);
        ck_assert_int_eq(wire_fill(&t.w, &t.r, 1 << 20, 0), 0); /* nothing there yet */
        size_t cuts[] = { 0, 3, len - 1, len };                 /* inside the header, the body, the end */
        for (int i = 1; i < 4; i++) {
                ck_assert_int_eq(proto_write_all(t.peer, frame + cuts[i - 1], cuts[i] - cuts[i - 1]), 0);
                ck_assert_int_eq(wire_fill(&t.w, &t.r, 1 << 20, 0), 0);
                ck_assert_uint_eq(buffered(&t), cuts[i]);
                if (i < 3)
                        ck_assert_ptr_null(next_type(&t, type));
        }
        ck_assert_str_eq(next_type(&t, type), "pad");
        free(frame);
        rig_down(&t);
}
END_TEST

START_TEST(the_end_of_stream_comes_after_what_was_sent_before) {
        rig t;
        char type[32];
        size_t len;
        char *frame = big_frame(100, &len);
        rig_up(&t);
        ck_assert_int_eq(proto_write_all(t.peer, frame, len), 0);
        ck_assert_int_eq(shutdown(t.peer, SHUT_WR), 0);
        ck_assert_int_eq(wire_fill(&t.w, &t.r, 1 << 20, 0), 0); /* a short read: the rest on the next turn */
        ck_assert_str_eq(next_type(&t, type), "pad");
        ck_assert_int_eq(wire_fill(&t.w, &t.r, 1 << 20, 0), 1);
        ck_assert_int_eq(wire_fill(&t.w, &t.r, 1 << 20, 0), 1);
        free(frame);
        rig_down(&t);
}
END_TEST

START_TEST(a_plain_fill_stops_at_its_per_turn_bound) {
        rig t;
        char type[32];
        size_t len;
        char *frame = big_frame(100000, &len); /* more than one read, less than the socket holds */
        rig_up(&t);
        ck_assert_int_eq(proto_write_all(t.peer, frame, len), 0);
        ck_assert_int_eq(wire_fill(&t.w, &t.r, WIRE_READ_CHUNK, 0), 0);
        ck_assert_uint_eq(buffered(&t), WIRE_READ_CHUNK);
        ck_assert_ptr_null(next_type(&t, type));
        ck_assert_int_eq(wire_fill(&t.w, &t.r, 1 << 20, 0), 0);
        ck_assert_uint_eq(buffered(&t), len);
        ck_assert_str_eq(next_type(&t, type), "pad");
        free(frame);
        rig_down(&t);
}
END_TEST

START_TEST(a_fill_stops_once_the_input_cap_is_passed) {
        rig t;
        size_t len;
        char *frame = big_frame(100000, &len);
        rig_up(&t);
        ck_assert_int_eq(proto_write_all(t.peer, frame, len), 0);
        ck_assert_int_eq(wire_fill(&t.w, &t.r, 1 << 20, 64), 0);
        ck_assert(wire_over(&t.r, 64));
        ck_assert_uint_eq(buffered(&t), WIRE_READ_CHUNK); /* not a read further */
        ck_assert(!wire_over(&t.r, len));
        free(frame);
        rig_down(&t);
}
END_TEST

typedef struct tls_rig {
        tls_ctx *sctx, *cctx;
        wire srv, cli;  /* both ends non-blocking */
        proto_reader r; /* the server's */
} tls_rig;

static void tls_rig_up(tls_rig *t) {
        int sv[2];
        *t = (tls_rig){ 0 };
        certs_contexts(&t->sctx, &t->cctx);
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
        ck_assert_int_eq(wire_init(&t->srv, sv[0], t->sctx, NULL), 0);
        ck_assert_int_eq(wire_init(&t->cli, sv[1], t->cctx, "localhost"), 0);
}

static void tls_rig_down(tls_rig *t) {
        wire_close(&t->srv);
        wire_close(&t->cli);
        tls_ctx_free(t->sctx);
        tls_ctx_free(t->cctx);
        proto_reader_free(&t->r);
}

/* The client writes frame whole while the server reads with bound, each turn as the loop would,
 * for at most 10000 turns (no clock: the socketpair makes progress every turn). Returns the
 * turns on which the client's write stopped short waiting for writability (EPOLLOUT). */
static int tls_pump(tls_rig *t, const char *frame, size_t len, size_t bound) {
        size_t off = 0;
        int waited = 0;
        for (int turn = 0; turn < 10000 && (off < len || t->r.len - t->r.off < len); turn++) {
                ssize_t n = wire_write(&t->cli, frame + off, len - off);
                ck_assert_int_ge(n, 0);
                off += (size_t)n;
                if (off < len && t->cli.wants_out) {
                        ck_assert_uint_eq(wire_events(&t->cli, false), EPOLLIN | EPOLLOUT);
                        waited++;
                }
                ck_assert_int_eq(wire_fill(&t->srv, &t->r, bound, 0), 0);
        }
        ck_assert_uint_eq(off, len);
        return waited;
}

START_TEST(a_large_frame_over_tls_arrives_whole) {
        tls_rig t;
        size_t len;
        char *frame = big_frame(900 << 10, &len); /* many TLS records, more than the socket holds */
        tls_rig_up(&t);
        ssize_t n = wire_write(&t.cli, frame, len); /* the handshake first: waits for the server */
        ck_assert_int_eq(n, 0);
        ck_assert(t.cli.write_waits);
        ck_assert(!tls_handshake_done(t.cli.tls));
        ck_assert_int_gt(tls_pump(&t, frame, len, 1), 0); /* a full socket; TLS reads on past a bound of 1 */
        ck_assert(tls_handshake_done(t.srv.tls));
        ck_assert_uint_eq(t.r.len - t.r.off, len);
        ck_assert_int_eq(memcmp(t.r.buf + t.r.off, frame, len), 0);
        free(frame);
        tls_rig_down(&t);
}
END_TEST

START_TEST(a_tls_fill_reads_all_there_is_then_the_close_notify) {
        tls_rig t;
        size_t small, big;
        char *hello = big_frame(100, &small), *frame = big_frame(100000, &big); /* one fits the socket */
        tls_rig_up(&t);
        (void)tls_pump(&t, hello, small, 1 << 20);
        ck_assert_int_eq(wire_write(&t.cli, frame, big), (ssize_t)big);
        tls_close_notify(t.cli.tls);
        ck_assert_int_eq(wire_fill(&t.srv, &t.r, 1, 0), 1); /* many reads past a bound of 1, then the end */
        ck_assert_uint_eq(t.r.len - t.r.off, small + big);
        ck_assert_ptr_null(wire_tls_error(&t.srv));
        free(hello);
        free(frame);
        tls_rig_down(&t);
}
END_TEST

/* The server's stream ended without a close_notify, before and after the handshake: only the
 * first is called a handshake failure (OpenSSL's state is "in init" again after either). */
START_TEST(an_end_after_the_handshake_is_no_handshake_failure) {
        size_t small;
        char *hello = big_frame(100, &small);
        for (int after = 0; after < 2; after++) {
                tls_rig t;
                proto_reader r = { 0 };
                tls_rig_up(&t);
                if (after)
                        (void)tls_pump(&t, hello, small, 1 << 20);
                else
                        ck_assert_int_eq(wire_write(&t.cli, hello, small), 0); /* the ClientHello */
                ck_assert(tls_handshake_done(t.cli.tls) == after);
                ck_assert_int_eq(shutdown(t.srv.fd, SHUT_WR), 0);
                ck_assert_int_eq(wire_fill(&t.cli, &r, 1 << 20, 0), -EPROTO);
                ck_assert_str_eq(wire_tls_error(&t.cli), after ? "unexpected eof while reading"
                                                               : "handshake failed: unexpected eof while reading");
                ck_assert(tls_handshake_done(t.cli.tls) == after);
                proto_reader_free(&r);
                tls_rig_down(&t);
        }
        free(hello);
}
END_TEST

static Suite *wire_suite(void) {
        Suite *s = suite_create("wire");
        TCase *tc = tcase_create("plain");
        tcase_add_test(tc, a_write_the_socket_cannot_take_is_partial_then_completes);
        tcase_add_test(tc, a_frame_split_across_reads_comes_out_whole);
        tcase_add_test(tc, the_end_of_stream_comes_after_what_was_sent_before);
        tcase_add_test(tc, a_plain_fill_stops_at_its_per_turn_bound);
        tcase_add_test(tc, a_fill_stops_once_the_input_cap_is_passed);
        suite_add_tcase(s, tc);
        tc = tcase_create("tls");
        tcase_add_unchecked_fixture(tc, certs_up, certs_down);
        tcase_add_test(tc, a_large_frame_over_tls_arrives_whole);
        tcase_add_test(tc, a_tls_fill_reads_all_there_is_then_the_close_notify);
        tcase_add_test(tc, an_end_after_the_handshake_is_no_handshake_failure);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(wire_suite)
