/* ctlink.c - the agent's controller connection: connect, hello/welcome, heartbeat, output
 * queue and reconnect with backoff, all inside the agent's sd-event loop.
 *
 * The socket is connected with a short blocking timeout (net_connect_tcp) and then used
 * non-blocking: reads feed a proto_reader, writes drain a queue of frames as EPOLLOUT allows
 * (a frame queued alone is written at once).
 * There is no acknowledgement in the protocol, so a report counts as delivered once its frame
 * has been written whole; a frame cut short by a disconnect is sent again, from its start.
 * With TLS (tls.h) the same happens through OpenSSL: the handshake runs inside the first reads
 * and writes, and a read or a write may wait for the other direction, so any readiness retries
 * both. */
#include "ctlink.h"
#include "clock.h"
#include "auth.h"
#include "log.h"
#include "net.h"
#include "proto.h"
#include "tls.h"
#include "wire.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#define CONNECT_TIMEOUT_MS 2000
#define BACKOFF_MIN_USEC   (100 * 1000ULL)
/* At most a second between attempts: a controller that restarts gives a node's running jobs
 * only node_lost_timeout_ms (300 s by default, seconds in tests) to be claimed by its agent's
 * hello, so the agent must be back well within that, however many failed attempts came before. */
#define BACKOFF_MAX_USEC    (1000 * 1000ULL)
#define HEARTBEAT_MAX_MS    (3600 * 1000)
#define TIMER_ACCURACY_USEC 1000 /* heartbeats and retries on time, not sd-event's default 250 ms */

/* Connected, the link waits for the controller's challenge, answers it with the hello, then
 * waits for the welcome (auth.h). */
typedef enum link_state { LINK_DOWN, LINK_CHALLENGE, LINK_HELLO, LINK_READY } link_state;

typedef struct frame {
        struct frame *next;
        char *data;
        size_t len;
        size_t off; /* bytes already written */
        bool reliable;
        uint64_t tag; /* > 0: tell ops->written once the frame is written whole */
} frame;

typedef struct frame_queue {
        frame *head, *tail;
} frame_queue;

struct ctlink {
        sd_event *event;
        char *hostport;
        char *name, *secret;              /* what the hello proves */
        char challenge[AUTH_HEX_LEN + 1]; /* the controller's nonce on this connection */
        char nonce[AUTH_HEX_LEN + 1];     /* ours, which its welcome must answer */
        const ctlink_ops *ops;
        void *userdata;
        link_state state;
        wire w;         /* this connection's socket (fd -1: none), plain or TLS */
        tls_ctx *tls;   /* borrowed; NULL: plain TCP */
        char *tls_host; /* the name or address the controller's certificate must carry */
        sd_event_source *io, *retry, *heartbeat;
        proto_reader reader;
        frame_queue out;     /* frames for the current connection, in order */
        frame_queue backlog; /* reliable frames waiting for the next welcome */
        uint64_t backoff_usec;
        uint64_t heartbeat_usec;
        unsigned failures; /* consecutive failed attempts; only the first is a warning */
};

static void frame_free(frame *f) {
        if (f) {
                free(f->data);
                free(f);
        }
}

static void queue_push(frame_queue *q, frame *f) {
        f->next = NULL;
        if (q->tail)
                q->tail->next = f;
        else
                q->head = f;
        q->tail = f;
}

static frame *queue_pop(frame_queue *q) {
        frame *f = q->head;

        if (f) {
                q->head = f->next;
                if (!q->head)
                        q->tail = NULL;
        }
        return f;
}

/* Move every frame of from to the end of to. */
static void queue_append(frame_queue *to, frame_queue *from) {
        frame *f;

        while ((f = queue_pop(from)))
                queue_push(to, f);
}

static void queue_clear(frame_queue *q) {
        frame *f;

        while ((f = queue_pop(q)))
                frame_free(f);
}

/* Arm a one-shot timer usec from now. */
static void arm(sd_event_source *s, uint64_t usec) {
        (void)sd_event_source_set_time_relative(s, usec);
        (void)sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

/* Output waits for writability unless a TLS write waits for input (which EPOLLIN brings). */
static void update_events(ctlink *l) {
        if (l->io)
                (void)sd_event_source_set_io_events(l->io, wire_events(&l->w, l->out.head && !l->w.write_waits));
}

/* Log why the last read or write failed, when TLS gave a reason: the first of a run of failed
 * attempts as an error. */
static void log_tls_error(ctlink *l) {
        const char *why = wire_tls_error(&l->w);
        if (why)
                log_msg(l->failures++ ? LOG_DEBUG : LOG_ERR, "controller=%s: TLS %s", l->hostport, why);
}

/* Keep the reliable frames of the dead connection, in front of those queued meanwhile. */
static void requeue_reliable(ctlink *l) {
        frame_queue keep = { 0 };
        frame *f;

        while ((f = queue_pop(&l->out))) {
                if (f->reliable) {
                        f->off = 0;
                        queue_push(&keep, f);
                } else
                        frame_free(f);
        }
        queue_append(&keep, &l->backlog);
        l->backlog = keep;
}

static void schedule_retry(ctlink *l) {
        arm(l->retry, l->backoff_usec);
        l->backoff_usec = l->backoff_usec * 2 > BACKOFF_MAX_USEC ? BACKOFF_MAX_USEC : l->backoff_usec * 2;
}

/* Tear the connection down and plan the next attempt; the caller has logged why. */
static void link_drop(ctlink *l) {
        l->io = sd_event_source_disable_unref(l->io);
        wire_close(&l->w);
        proto_reader_free(&l->reader);
        memset(&l->reader, 0, sizeof(l->reader));
        (void)sd_event_source_set_enabled(l->heartbeat, SD_EVENT_OFF);
        requeue_reliable(l);
        l->state = LINK_DOWN;
        (void)sd_notifyf(0, "STATUS=controller %s unreachable, reconnecting", l->hostport);
        schedule_retry(l);
}

/* Write as much of the queue as the socket takes. Returns 0 or -errno (connection broken). */
static int write_out(ctlink *l) {
        frame *f;

        while ((f = l->out.head)) {
                ssize_t n = wire_write(&l->w, f->data + f->off, f->len - f->off);
                uint64_t tag = f->tag;

                if (n < 0) {
                        log_tls_error(l);
                        return (int)n;
                }
                f->off += (size_t)n;
                if (f->off < f->len)
                        return 0;
                frame_free(queue_pop(&l->out));
                if (tag && l->ops->written)
                        l->ops->written(tag, l->userdata);
        }
        return 0;
}

static int queue_msg(ctlink *l, frame_queue *q, const cJSON *msg, bool reliable, uint64_t tag) {
        frame *f = calloc(1, sizeof(*f));
        int r;

        if (!f)
                return -ENOMEM;
        r = proto_frame(msg, &f->data, &f->len);
        if (r < 0) {
                free(f);
                return r;
        }
        f->reliable = reliable;
        f->tag = tag;
        queue_push(q, f);
        /* Alone in a connection's queue, the frame goes now: waiting for EPOLLOUT cost a turn of
         * the loop and two epoll_ctl per report (strace: every "started" and "finished"). A failure
         * leaves it queued, and the next on_io, which meets it too, drops the link. */
        if (q == &l->out && l->state == LINK_READY && l->out.head == f)
                (void)write_out(l);
        update_events(l);
        return 0;
}

static int send_tagged(ctlink *l, const cJSON *msg, bool reliable, uint64_t tag) {
        if (l->state == LINK_READY)
                return queue_msg(l, &l->out, msg, reliable, tag);
        if (!reliable)
                return -ENOTCONN;
        return queue_msg(l, &l->backlog, msg, true, tag);
}

int ctlink_send(ctlink *l, const cJSON *msg, bool reliable) { return send_tagged(l, msg, reliable, 0); }

int ctlink_send_tracked(ctlink *l, const cJSON *msg, uint64_t tag) { return send_tagged(l, msg, true, tag); }

bool ctlink_is_ready(const ctlink *l) { return l->state == LINK_READY; }

static int on_heartbeat(sd_event_source *s, uint64_t usec, void *userdata) {
        ctlink *l = userdata;
        cJSON *msg = proto_new("heartbeat");
        (void)usec;

        if (!msg || ctlink_send(l, msg, false) < 0)
                log_warning("controller=%s: could not queue a heartbeat", l->hostport);
        cJSON_Delete(msg);
        arm(s, l->heartbeat_usec);
        return 0;
}

/* The challenge: answer it with the hello, whose proof binds the secret to both nonces. */
static int handle_challenge(ctlink *l, const cJSON *msg) {
        static const char *const fields[] = { "nonce", NULL };
        char err[PROTO_ERRLEN], proof[AUTH_HEX_LEN + 1];
        const char *nonce = NULL;
        cJSON *hello;
        int r = proto_check_fields(msg, fields, err);

        if (r == 0 && (proto_get_str(msg, "nonce", &nonce, err) < 0 || !auth_hex_ok(nonce))) {
                log_error("controller=%s: bad challenge", l->hostport);
                return -EPROTO;
        }
        snprintf(l->challenge, sizeof(l->challenge), "%s", nonce);
        if (r == 0 && (r = auth_nonce(l->nonce)) == 0)
                r = auth_proof(l->secret, AUTH_AGENT, l->challenge, l->nonce, l->name, proof);
        hello = r == 0 ? l->ops->hello(l->userdata) : NULL;
        if (!hello || !cJSON_AddStringToObject(hello, "nonce", l->nonce) ||
            !cJSON_AddStringToObject(hello, "proof", proof))
                r = r < 0 ? r : -ENOMEM;
        if (r == 0)
                r = queue_msg(l, &l->out, hello, false, 0);
        cJSON_Delete(hello);
        if (r < 0)
                return log_errno(LOG_ERR, r, "controller=%s: cannot answer the challenge", l->hostport);
        l->state = LINK_HELLO;
        return 0;
}

/* Whether the welcome proves the controller knows the secret too. */
static bool welcome_proves_secret(ctlink *l, const cJSON *msg) {
        char err[PROTO_ERRLEN], want[AUTH_HEX_LEN + 1];
        const char *proof = NULL;

        return proto_get_str(msg, "proof", &proof, err) == 0 &&
               auth_proof(l->secret, AUTH_CONTROLLER, l->challenge, l->nonce, l->name, want) == 0 &&
               auth_equal(proof, want);
}

static int handle_welcome(ctlink *l, const cJSON *msg) {
        static const char *const fields[] = { "heartbeat_ms", "proof", NULL };
        char err[PROTO_ERRLEN];
        int64_t ms = 0;
        int r;

        r = proto_check_fields(msg, fields, err);
        if (r == 0)
                r = proto_get_int(msg, "heartbeat_ms", 1, HEARTBEAT_MAX_MS, &ms, err);
        if (r == -ENOENT)
                snprintf(err, sizeof(err), "missing field 'heartbeat_ms'");
        if (r < 0) {
                log_error("controller=%s: bad welcome: %s", l->hostport, err);
                return -EPROTO;
        }
        if (!welcome_proves_secret(l, msg)) {
                l->ops->fatal("the controller does not prove it knows the secret: a wrong secret file, or not "
                              "our controller",
                              l->userdata);
                return -EACCES;
        }
        l->state = LINK_READY;
        l->failures = 0;
        l->backoff_usec = BACKOFF_MIN_USEC;
        l->heartbeat_usec = (uint64_t)ms * 1000;
        queue_append(&l->out, &l->backlog);
        update_events(l);
        arm(l->heartbeat, l->heartbeat_usec);
        log_info("controller=%s: connected (heartbeat every %lld ms)", l->hostport, (long long)ms);
        l->ops->ready(l->userdata);
        return 0;
}

static int handle_refusal(ctlink *l, const cJSON *msg) {
        char err[PROTO_ERRLEN];
        const char *text = "(no reason given)";

        (void)proto_get_str(msg, "error", &text, err);
        log_error("controller=%s refused the hello: %s", l->hostport, text);
        if (strcasestr(text, "secret"))
                l->ops->fatal(text, l->userdata);
        return -ECONNREFUSED;
}

/* Act on one message. Returns 0, or a negative errno when the connection must be dropped. */
static int handle_message(ctlink *l, const cJSON *msg) {
        const char *type = proto_type(msg);
        char err[PROTO_ERRLEN];
        const char *text = "";

        if (l->state == LINK_CHALLENGE) {
                if (strcmp(type, "challenge") == 0)
                        return handle_challenge(l, msg);
                if (strcmp(type, "error") == 0)
                        return handle_refusal(l, msg);
                log_error("controller=%s: expected a challenge, got '%s'", l->hostport, type);
                return -EPROTO;
        }
        if (l->state == LINK_HELLO) {
                if (strcmp(type, "welcome") == 0)
                        return handle_welcome(l, msg);
                if (strcmp(type, "error") == 0)
                        return handle_refusal(l, msg);
                log_error("controller=%s: expected welcome, got '%s'", l->hostport, type);
                return -EPROTO;
        }
        if (strcmp(type, "error") == 0) {
                (void)proto_get_str(msg, "error", &text, err);
                log_warning("controller=%s reported an error: %s", l->hostport, text);
                return 0;
        }
        if (strcmp(type, "welcome") == 0) {
                log_error("controller=%s: unexpected second welcome", l->hostport);
                return -EPROTO;
        }
        l->ops->message(msg, l->userdata);
        return 0;
}

/* Read what is there into the reader: one chunk from a plain socket, until OpenSSL has nothing
 * left with TLS. Returns 0 or a negative errno when the connection is gone or unusable (logged
 * here). */
static int link_fill(ctlink *l) {
        int r = wire_fill(&l->w, &l->reader, WIRE_READ_CHUNK, 0);

        if (r == 0)
                return 0;
        if (r == 1 && l->state == LINK_CHALLENGE && !l->tls)
                log_warning("controller=%s: connection closed before the controller's challenge (does it "
                            "expect TLS? see tls_ca in colony-agent(8))",
                            l->hostport);
        else if (r == 1)
                log_warning("controller=%s: connection closed by the controller", l->hostport);
        if (r == 1)
                return -ECONNRESET;
        if (r == -ENOMEM && !wire_tls_error(&l->w))
                return log_errno(LOG_ERR, r, "controller=%s: cannot buffer input", l->hostport);
        log_tls_error(l);
        if (r == -EPROTO || (l->w.tls && !tls_handshake_done(l->w.tls)))
                return r; /* its reason is logged */
        return log_errno(LOG_WARNING, r, "controller=%s: connection lost", l->hostport);
}

/* Read what is there and act on every whole message. Returns 0 or a negative errno when the
 * connection is gone or unusable (logged here). */
static int link_read(ctlink *l) {
        char err[PROTO_ERRLEN];
        cJSON *msg;
        int r = link_fill(l);

        if (r < 0)
                return r;
        while ((r = proto_reader_next(&l->reader, &msg, err)) > 0) {
                r = handle_message(l, msg);
                cJSON_Delete(msg);
                if (r < 0)
                        return r;
        }
        if (r < 0)
                log_error("controller=%s: bad message: %s", l->hostport, err);
        return r;
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        ctlink *l = userdata;
        int r;
        (void)s;
        (void)fd;

        if ((revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) || l->w.tls) {
                if (link_read(l) < 0) {
                        link_drop(l);
                        return 0;
                }
        }
        r = write_out(l);
        if (r < 0) {
                log_errno(LOG_WARNING, r, "controller=%s: connection lost", l->hostport);
                link_drop(l);
                return 0;
        }
        update_events(l);
        return 0;
}

/* Open the socket (non-blocking, close-on-exec) and watch it. Returns 0 or -errno (logged). */
static int link_open(ctlink *l) {
        int fd, r;

        fd = net_connect_tcp(l->hostport, CONNECT_TIMEOUT_MS);
        if (fd < 0)
                return log_errno(l->failures++ ? LOG_DEBUG : LOG_WARNING, fd,
                                 "controller=%s: cannot connect (will keep trying)", l->hostport);
        if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK) < 0 || fcntl(fd, F_SETFD, FD_CLOEXEC) < 0) {
                r = -errno;
                close(fd);
                return log_errno(LOG_ERR, r, "controller=%s: cannot set up the socket", l->hostport);
        }
        if ((r = wire_init(&l->w, fd, l->tls, l->tls_host)) < 0) {
                wire_close(&l->w);
                return log_errno(LOG_ERR, r, "controller=%s: cannot set up TLS (expected name %s)", l->hostport,
                                 l->tls_host);
        }
        r = sd_event_add_io(l->event, &l->io, fd, EPOLLIN | (l->w.tls ? EPOLLOUT : 0), on_io, l);
        if (r < 0) {
                wire_close(&l->w);
                return log_errno(LOG_ERR, r, "controller=%s: cannot watch the socket", l->hostport);
        }
        return 0;
}

/* One connection attempt: connect, then wait for the challenge; on failure the next attempt is
 * planned. */
static int on_retry(sd_event_source *s, uint64_t usec, void *userdata) {
        ctlink *l = userdata;
        (void)s;
        (void)usec;

        if (link_open(l) < 0) {
                schedule_retry(l);
                return 0;
        }
        l->state = LINK_CHALLENGE;
        log_debug("controller=%s: connected, waiting for the challenge", l->hostport);
        return 0;
}

/* The host part of hostport, for the certificate check. NULL when out of memory or malformed. */
static char *host_of(const char *hostport) {
        char host[256];
        uint16_t port;

        return net_split_hostport(hostport, host, sizeof(host), &port) == 0 ? strdup(host) : NULL;
}

int ctlink_new(sd_event *e, const char *hostport, const char *name, const char *secret, tls_ctx *tls,
               const char *tls_host, const ctlink_ops *ops, void *userdata, ctlink **out) {
        ctlink *l = calloc(1, sizeof(*l));
        int r;

        if (!l)
                return -ENOMEM;
        l->event = e;
        l->ops = ops;
        l->userdata = userdata;
        l->w.fd = -1;
        l->backoff_usec = BACKOFF_MIN_USEC;
        l->hostport = strdup(hostport);
        l->name = strdup(name);
        l->secret = strdup(secret);
        l->tls = tls;
        if (tls)
                l->tls_host = tls_host ? strdup(tls_host) : host_of(hostport);
        if (!l->hostport || !l->name || !l->secret || (tls && !l->tls_host)) {
                ctlink_free(l);
                return -ENOMEM;
        }
        r = sd_event_add_time_relative(e, &l->retry, CLOCK_MONOTONIC, 0, TIMER_ACCURACY_USEC, on_retry, l);
        if (r >= 0)
                r = sd_event_add_time_relative(e, &l->heartbeat, CLOCK_MONOTONIC, 0, TIMER_ACCURACY_USEC, on_heartbeat,
                                               l);
        if (r >= 0)
                r = sd_event_source_set_enabled(l->heartbeat, SD_EVENT_OFF);
        if (r < 0) {
                ctlink_free(l);
                return r;
        }
        *out = l;
        return 0;
}

int ctlink_flush(ctlink *l, int timeout_ms) {
        int64_t deadline = clock_mono_ms() + timeout_ms;

        if (l->state != LINK_READY)
                return -ENOTCONN;
        for (;;) {
                struct pollfd p = { .fd = l->w.fd, .events = l->w.write_waits ? POLLIN : POLLOUT };
                int64_t left;
                int r = write_out(l);

                if (r < 0 || !l->out.head)
                        return r;
                left = deadline - clock_mono_ms();
                if (left <= 0)
                        return -ETIMEDOUT;
                if (poll(&p, 1, (int)left) < 0 && errno != EINTR)
                        return -errno;
        }
}

void ctlink_free(ctlink *l) {
        if (!l)
                return;
        sd_event_source_disable_unref(l->io);
        sd_event_source_disable_unref(l->retry);
        sd_event_source_disable_unref(l->heartbeat);
        wire_close(&l->w);
        proto_reader_free(&l->reader);
        queue_clear(&l->out);
        queue_clear(&l->backlog);
        free(l->tls_host);
        free(l->hostport);
        free(l->name);
        if (l->secret)
                explicit_bzero(l->secret, strlen(l->secret));
        free(l->secret);
        free(l);
}
