/* test_ctlink.c - the agent's controller link (agent/ctlink.c) against a stand-in controller on a
 * real loopback socket, on a real sd-event loop: challenge, hello with its proof, welcome, then
 * messages both ways and heartbeats; a reliable report made while the link is down goes after
 * the next welcome, an unreliable one is refused; a welcome that does not prove the secret is
 * fatal. */
#include "check_main.h"
#include "auth.h"
#include "ctlink.h"
#include "net.h"
#include "proto.h"
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define SECRET "a shared secret"
#define NAME   "node1"
/* A busy host may be slow: every wait polls the loop for up to this long. */
#define DEADLINE_TURNS 600 /* of 50 ms: 30 s */

typedef struct rig {
        sd_event *event;
        ctlink *link;
        int listener;
        char hostport[32];
        int readies, messages, fatals, heartbeats;
        uint64_t written_tag;
        char last_type[32];
} rig;

static cJSON *hello(void *userdata) {
        (void)userdata;
        cJSON *m = proto_new("hello");
        cJSON_AddStringToObject(m, "node", NAME);
        return m;
}

static void ready(void *userdata) { ((rig *)userdata)->readies++; }

static void message(const cJSON *msg, void *userdata) {
        rig *t = userdata;
        t->messages++;
        snprintf(t->last_type, sizeof(t->last_type), "%s", proto_type(msg));
}

static void fatal(const char *reason, void *userdata) {
        (void)reason;
        ((rig *)userdata)->fatals++;
}

static void written(uint64_t tag, void *userdata) { ((rig *)userdata)->written_tag = tag; }

static const ctlink_ops ops = {
        .hello = hello, .ready = ready, .message = message, .fatal = fatal, .written = written
};

static void rig_up(rig *t) {
        uint16_t port;
        *t = (rig){ 0 };
        ck_assert_int_ge(t->listener = net_listen_tcp("127.0.0.1:0", &port), 0);
        snprintf(t->hostport, sizeof(t->hostport), "127.0.0.1:%u", port);
        ck_assert_int_ge(sd_event_new(&t->event), 0);
        ck_assert_int_eq(ctlink_new(t->event, t->hostport, NAME, SECRET, NULL, NULL, &ops, t, &t->link), 0);
}

static void rig_down(rig *t) {
        ctlink_free(t->link);
        close(t->listener);
        sd_event_unref(t->event);
}

/* Turn the link's loop until fd is readable. */
static void pump_until_readable(rig *t, int fd) {
        struct pollfd p = { .fd = fd, .events = POLLIN };
        for (int i = 0; i < DEADLINE_TURNS; i++) {
                if (poll(&p, 1, 0) == 1)
                        return;
                ck_assert_int_ge(sd_event_run(t->event, 50000), 0);
        }
        ck_abort_msg("fd %d never became readable", fd);
}

/* Turn the link's loop until *counter reaches n. */
static void pump_until(rig *t, const int *counter, int n) {
        for (int i = 0; i < DEADLINE_TURNS && *counter < n; i++)
                ck_assert_int_ge(sd_event_run(t->event, 50000), 0);
        ck_assert_int_ge(*counter, n);
}

/* The next message the link sends on fd, of type type; the caller frees it. */
static cJSON *expect(rig *t, int fd, const char *type) {
        char err[PROTO_ERRLEN];
        cJSON *msg = NULL;
        pump_until_readable(t, fd);
        ck_assert_msg(proto_recv(fd, &msg, err) == 0, "no message: %s", err);
        ck_assert_str_eq(proto_type(msg), type);
        return msg;
}

static void send_msg(int fd, cJSON *msg) {
        ck_assert_ptr_nonnull(msg);
        ck_assert_int_eq(proto_send(fd, msg), 0);
        cJSON_Delete(msg);
}

/* Accept the link's next connection and take it through challenge, hello and welcome (whose
 * proof is right when honest); returns the stand-in controller's end. */
static int handshake(rig *t, bool honest, int64_t heartbeat_ms) {
        char challenge[AUTH_HEX_LEN + 1], proof[AUTH_HEX_LEN + 1], err[PROTO_ERRLEN];
        const char *nonce, *their_proof;
        pump_until_readable(t, t->listener);
        int fd = accept4(t->listener, NULL, NULL, SOCK_CLOEXEC);
        ck_assert_int_ge(fd, 0);
        ck_assert_int_eq(auth_nonce(challenge), 0);
        cJSON *m = proto_new("challenge");
        cJSON_AddStringToObject(m, "nonce", challenge);
        send_msg(fd, m);
        cJSON *h = expect(t, fd, "hello");
        ck_assert_int_eq(proto_get_str(h, "nonce", &nonce, err), 0);
        ck_assert_int_eq(proto_get_str(h, "proof", &their_proof, err), 0);
        ck_assert_int_eq(auth_proof(SECRET, AUTH_AGENT, challenge, nonce, NAME, proof), 0);
        ck_assert_str_eq(their_proof, proof); /* the agent proves it holds the secret */
        ck_assert_int_eq(auth_proof(honest ? SECRET : "another secret", AUTH_CONTROLLER, challenge, nonce, NAME, proof),
                         0);
        cJSON_Delete(h);
        m = proto_new("welcome");
        cJSON_AddNumberToObject(m, "heartbeat_ms", (double)heartbeat_ms);
        cJSON_AddStringToObject(m, "proof", proof);
        send_msg(fd, m);
        return fd;
}

START_TEST(after_the_welcome_messages_go_both_ways_and_heartbeats_follow) {
        rig t;
        rig_up(&t);
        ck_assert(!ctlink_is_ready(t.link));
        int fd = handshake(&t, true, 100);
        pump_until(&t, &t.readies, 1);
        ck_assert(ctlink_is_ready(t.link));
        send_msg(fd, proto_new("cancel"));
        pump_until(&t, &t.messages, 1);
        ck_assert_str_eq(t.last_type, "cancel");
        cJSON *report = proto_new("finished");
        ck_assert_int_eq(ctlink_send_tracked(t.link, report, 7), 0);
        cJSON_Delete(report);
        cJSON_Delete(expect(&t, fd, "finished"));
        ck_assert_uint_eq(t.written_tag, 7); /* written whole: what was kept for it may go */
        cJSON_Delete(expect(&t, fd, "heartbeat"));
        ck_assert_int_eq(t.fatals, 0);
        close(fd);
        rig_down(&t);
}
END_TEST

START_TEST(a_reliable_report_made_while_down_goes_after_the_next_welcome) {
        rig t;
        rig_up(&t);
        int fd = handshake(&t, true, 3600 * 1000);
        pump_until(&t, &t.readies, 1);
        close(fd); /* the controller goes away */
        for (int i = 0; i < DEADLINE_TURNS && ctlink_is_ready(t.link); i++)
                ck_assert_int_ge(sd_event_run(t.event, 50000), 0);
        ck_assert(!ctlink_is_ready(t.link));
        cJSON *lost = proto_new("usage"), *kept = proto_new("finished");
        ck_assert_int_eq(ctlink_send(t.link, lost, false), -ENOTCONN);
        ck_assert_int_eq(ctlink_send(t.link, kept, true), 0);
        cJSON_Delete(lost);
        cJSON_Delete(kept);
        fd = handshake(&t, true, 3600 * 1000); /* the link comes back by itself */
        pump_until(&t, &t.readies, 2);
        cJSON_Delete(expect(&t, fd, "finished"));
        close(fd);
        rig_down(&t);
}
END_TEST

START_TEST(a_welcome_that_does_not_prove_the_secret_is_fatal) {
        rig t;
        rig_up(&t);
        int fd = handshake(&t, false, 1000);
        pump_until(&t, &t.fatals, 1);
        ck_assert_int_eq(t.readies, 0);
        ck_assert(!ctlink_is_ready(t.link));
        close(fd);
        rig_down(&t);
}
END_TEST

static Suite *ctlink_suite(void) {
        Suite *s = suite_create("ctlink");
        TCase *tc = tcase_create("link");
        tcase_add_test(tc, after_the_welcome_messages_go_both_ways_and_heartbeats_follow);
        tcase_add_test(tc, a_reliable_report_made_while_down_goes_after_the_next_welcome);
        tcase_add_test(tc, a_welcome_that_does_not_prove_the_secret_is_fatal);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(ctlink_suite)
