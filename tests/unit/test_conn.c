/* test_conn.c - framed connections on a real socketpair and sd-event loop: a connection with an
 * input cap takes a frame within it, refuses (with an error, then closes) a header announcing
 * more and a second message before the first is answered, and a deadline closes a silent peer;
 * held output goes in stages: what waited for the step in flight, then what waited for the
 * next; over TLS, output queued before the handshake goes once a read ends the handshake (the
 * client's Finished arriving between the conn's write and its read). */
#include "check_main.h"
#include "conn.h"
#include "proto.h"
#include "test_certs.h"
#include "wire.h"
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

typedef struct seen {
        int messages, closes;
} seen;

static void on_message(conn *c, const cJSON *msg) {
        (void)msg;
        ((seen *)c->data)->messages++;
}

static void on_close(conn *c) { ((seen *)c->data)->closes++; }

static const conn_ops ops = { .on_message = on_message, .on_close = on_close };

typedef struct rig {
        sd_event *event;
        conn *c;
        int peer;
        seen seen;
} rig;

/* A conn on one end of a socketpair, capped at cap bytes per frame; the test holds the other. */
static void rig_up(rig *t, size_t cap) {
        int sv[2];
        *t = (rig){ 0 };
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
        ck_assert_int_ge(sd_event_new(&t->event), 0);
        ck_assert_int_eq(conn_new(t->event, sv[0], NULL, &ops, NULL, &t->c), 0);
        t->c->data = &t->seen;
        t->c->input_max = cap;
        t->peer = sv[1];
}

static void rig_down(rig *t) {
        if (!t->seen.closes)
                conn_close(t->c);
        while (!t->seen.closes)
                ck_assert_int_ge(sd_event_run(t->event, 100000), 0);
        close(t->peer);
        sd_event_unref(t->event);
}

/* Run the loop until done() or about 10 s of idle turns (a busy host may be slow). */
static void run_until(rig *t, bool (*done)(const rig *)) {
        for (int i = 0; i < 100 && !done(t); i++)
                ck_assert_int_ge(sd_event_run(t->event, 100000), 0);
}

/* After n turns of the loop, each waiting up to 100 ms, the conn is still open; then the rig is
 * taken down. */
static void assert_open_after_turns(rig *t, int n) {
        for (int i = 0; i < n; i++)
                ck_assert_int_ge(sd_event_run(t->event, 100000), 0);
        ck_assert_int_eq(t->seen.closes, 0);
        rig_down(t);
}

static bool got_message(const rig *t) { return t->seen.messages > 0 || t->seen.closes > 0; }

static bool closed(const rig *t) { return t->seen.closes > 0; }

static void send_header(int fd, uint32_t len) {
        unsigned char h[PROTO_HEADER] = { len >> 24, len >> 16, len >> 8, len };
        ck_assert_int_eq(write(fd, h, sizeof(h)), (ssize_t)sizeof(h));
}

static void send_hello(int fd) {
        cJSON *m = proto_new("hello");
        ck_assert_int_eq(proto_send(fd, m), 0);
        cJSON_Delete(m);
}

/* The peer's next message is an error (the refusal), and then end of file. */
static void assert_refused_then_eof(int fd) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        char err[PROTO_ERRLEN], byte;
        cJSON *msg = NULL;
        ck_assert_int_eq(poll(&p, 1, 10000), 1);
        ck_assert_int_eq(proto_recv(fd, &msg, err), 0);
        ck_assert_str_eq(proto_type(msg), "error");
        cJSON_Delete(msg);
        ck_assert_int_eq(poll(&p, 1, 10000), 1);
        ck_assert_int_eq(read(fd, &byte, 1), 0);
}

/* The conn closes without taking a message, the peer told why; then the rig is taken down. */
static void assert_cut(rig *t) {
        run_until(t, closed);
        ck_assert_int_eq(t->seen.messages, 0);
        ck_assert_int_eq(t->seen.closes, 1);
        assert_refused_then_eof(t->peer);
        rig_down(t);
}

START_TEST(a_frame_within_the_cap_is_taken) {
        rig t;
        rig_up(&t, 1024);
        send_hello(t.peer);
        run_until(&t, got_message);
        ck_assert_int_eq(t.seen.messages, 1);
        ck_assert_int_eq(t.seen.closes, 0);
        rig_down(&t);
}
END_TEST

START_TEST(a_header_announcing_more_than_the_cap_is_refused) {
        rig t;
        rig_up(&t, 1024);
        send_header(t.peer, 1025); /* a valid frame length, but not before authentication */
        assert_cut(&t);
}
END_TEST

START_TEST(a_second_frame_before_an_answer_is_refused) {
        rig t;
        rig_up(&t, 64);
        for (int i = 0; i < 3; i++) /* each well within the cap, together not */
                send_hello(t.peer);
        assert_cut(&t);
}
END_TEST

START_TEST(without_a_cap_a_large_frame_waits_for_its_body) {
        rig t;
        rig_up(&t, 0);
        send_header(t.peer, 1025);
        assert_open_after_turns(&t, 5);
}
END_TEST

START_TEST(a_deadline_closes_a_silent_peer_and_can_be_cleared) {
        rig t;
        rig_up(&t, 0);
        ck_assert_int_eq(conn_set_deadline(t.c, 20, "hello"), 0);
        run_until(&t, closed);
        ck_assert_int_eq(t.seen.closes, 1);
        rig_down(&t);

        rig_up(&t, 0);
        ck_assert_int_eq(conn_set_deadline(t.c, 20, "hello"), 0);
        ck_assert_int_eq(conn_set_deadline(t.c, 0, NULL), 0);
        assert_open_after_turns(&t, 3); /* each turn waits up to 100 ms: past the 20 ms deadline */
}
END_TEST

/* The owner's hold, for staged_hold: while held is set, output waits on the list. */
static bool holding;
static conn_held_list hold_list;
static bool held(conn *c) {
        (void)c;
        return holding;
}
static conn_held_list *held_list(conn *c) {
        (void)c;
        return &hold_list;
}
static const conn_ops held_ops = {
        .on_message = on_message, .on_close = on_close, .held = held, .held_list = held_list
};

/* Bytes of one frame of {"n": n}, as conn_send queues it. */
static size_t frame_len(int n) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddNumberToObject(m, "n", n);
        char *frame;
        size_t len;
        ck_assert_int_eq(proto_frame(m, &frame, &len), 0);
        free(frame);
        cJSON_Delete(m);
        return len;
}

static void send_n(conn *c, int n) {
        cJSON *m = cJSON_CreateObject();
        cJSON_AddNumberToObject(m, "n", n);
        ck_assert_int_eq(conn_send(c, m), 0);
        cJSON_Delete(m);
}

/* What the peer can read now, without waiting. */
static size_t readable(int fd) {
        char buf[4096];
        ssize_t n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT);
        return n < 0 ? 0 : (size_t)n;
}

START_TEST(held_output_goes_in_the_stages_it_was_marked_for) {
        rig t;
        rig_up(&t, 0);
        t.c->ops = &held_ops;
        holding = true;
        hold_list = (conn_held_list){ 0 };
        send_n(t.c, 1);
        conn_held_mark(&hold_list, false); /* 1 waits for the step in flight */
        send_n(t.c, 2);
        conn_held_mark(&hold_list, true); /* 2 for the next */
        ck_assert_uint_eq(readable(t.peer), 0);
        conn_release_held(&hold_list); /* the step in flight ends: 1 only */
        ck_assert_uint_eq(readable(t.peer), frame_len(1));
        ck_assert_ptr_eq(hold_list.first, t.c);
        conn_held_advance(&hold_list); /* the next starts */
        send_n(t.c, 3);                /* during it, marked for nothing yet */
        conn_release_held(&hold_list);
        ck_assert_uint_eq(readable(t.peer), frame_len(2));
        holding = false; /* nothing held any more: all of it */
        conn_release_held(&hold_list);
        ck_assert_uint_eq(readable(t.peer), frame_len(3));
        ck_assert_ptr_null(hold_list.first);
        send_n(t.c, 4);
        ck_assert_uint_eq(readable(t.peer), frame_len(4));
        rig_down(&t);
}
END_TEST

/* TLS: the conn is the server of a client that the test drives on the other end. */
typedef struct tls_client {
        wire w;         /* non-blocking */
        proto_reader r; /* what it read */
        bool finish;    /* at the next look, take the server's flight and send the Finished */
} tls_client;
static tls_client client;

/* held is asked right after flush's write and before on_io reads (flush's conn_events): the
 * place where the client's Finished arrives between the server's write, which then waits for
 * it, and its read. A client as fast as a busy controller is slow does so. */
static bool finish_between(conn *c) {
        struct pollfd p = { .fd = client.w.fd, .events = POLLIN };
        (void)c;
        if (client.finish && poll(&p, 1, 0) == 1) { /* the server's flight is there */
                client.finish = false;
                ck_assert_int_eq(wire_fill(&client.w, &client.r, 1 << 20, 0), 0);
                ck_assert(tls_handshake_done(client.w.tls));
        }
        return false;
}

static void speak_first(conn *c) { send_n(c, 1); } /* as the remote listener's challenge */

static const conn_ops tls_ops = {
        .on_open = speak_first, .on_message = on_message, .on_close = on_close, .held = finish_between
};

START_TEST(output_waiting_for_the_handshake_goes_when_a_read_ends_it) {
        tls_ctx *sctx, *cctx;
        rig t = { 0 };
        int sv[2];
        certs_contexts(&sctx, &cctx);
        ck_assert_int_eq(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv), 0);
        ck_assert_int_ge(sd_event_new(&t.event), 0);
        client = (tls_client){ 0 };
        ck_assert_int_eq(wire_init(&client.w, sv[1], cctx, "localhost"), 0);
        ck_assert_int_eq(conn_new(t.event, sv[0], sctx, &tls_ops, NULL, &t.c), 0); /* its write waits */
        t.c->data = &t.seen;
        t.peer = sv[1];
        ck_assert_int_eq(conn_unsent(t.c), frame_len(1));
        ck_assert_int_eq(wire_fill(&client.w, &client.r, 1 << 20, 0), 0); /* the ClientHello */
        client.finish = true;
        /* One turn ends the handshake in the server's read; the client then only waits. */
        for (int i = 0; i < 20 && client.r.len - client.r.off < frame_len(1); i++) {
                ck_assert_int_ge(sd_event_run(t.event, 100000), 0);
                ck_assert_int_eq(wire_fill(&client.w, &client.r, 1 << 20, 0), 0);
        }
        ck_assert(!client.finish);
        ck_assert_uint_eq(client.r.len - client.r.off, frame_len(1));
        ck_assert_uint_eq(conn_unsent(t.c), 0);
        rig_down(&t); /* closes sv[1] */
        client.w.fd = -1;
        wire_close(&client.w);
        proto_reader_free(&client.r);
        tls_ctx_free(sctx);
        tls_ctx_free(cctx);
}
END_TEST

static Suite *conn_suite(void) {
        Suite *s = suite_create("conn");
        TCase *tc = tcase_create("core");
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, a_frame_within_the_cap_is_taken);
        tcase_add_test(tc, a_header_announcing_more_than_the_cap_is_refused);
        tcase_add_test(tc, a_second_frame_before_an_answer_is_refused);
        tcase_add_test(tc, without_a_cap_a_large_frame_waits_for_its_body);
        tcase_add_test(tc, a_deadline_closes_a_silent_peer_and_can_be_cleared);
        tcase_add_test(tc, held_output_goes_in_the_stages_it_was_marked_for);
        suite_add_tcase(s, tc);
        tc = tcase_create("tls");
        tcase_set_timeout(tc, 60);
        tcase_add_unchecked_fixture(tc, certs_up, certs_down);
        tcase_add_test(tc, output_waiting_for_the_handshake_goes_when_a_read_ends_it);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(conn_suite)
