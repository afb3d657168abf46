/* conn.c - framed non-blocking connections (see conn.h). */
#include "conn.h"
#include "log.h"
#include "proto.h"
#include "wire.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* Kept beside the public struct so its users never touch the reader or the TLS state. */
typedef struct conn_full {
        conn pub;
        proto_reader reader;
        sd_event_source *reaper;
        wire wire;                 /* the socket, plain or TLS */
        sd_event_source *deadline; /* closes a peer that has not done what it must by then */
        const char *deadline_what;
        uint64_t deadline_ms;
} conn_full;

/* Log why the last read or write failed, when TLS gave a reason. */
static void log_tls_error(conn_full *cf) {
        const char *why = wire_tls_error(&cf->wire);
        if (why)
                log_warning("fd=%d: TLS %s", cf->pub.fd, why);
}

/* Bytes at the front of the output that conn_release_held let go while held is still true. */
static size_t releasable(const conn *c) {
        size_t unsent = c->out_len - c->out_off;
        uint64_t written = c->out_queued - unsent;
        if (c->out_free <= written)
                return 0;
        return c->out_free - written < unsent ? (size_t)(c->out_free - written) : unsent;
}

/* What the connection waits for: input always; writability when output waits for it (a
 * plain socket that has output; TLS only when OpenSSL said so, since a TLS write may wait
 * for input instead, and when output is held, so that it goes once the hold ends). */
static uint32_t conn_events(conn_full *cf) {
        conn *c = &cf->pub;
        bool pending = c->out_len > c->out_off;
        bool held = pending && c->ops->held && c->ops->held(c);
        bool listed = held && c->ops->held_list;     /* conn_release_held writes it, not a poll */
        bool released = listed && releasable(c) > 0; /* released, and the socket did not take it all */
        bool tls = cf->wire.tls;
        return wire_events(&cf->wire, (pending && !listed && (!tls || held)) || (released && !tls));
}

static void held_unlink(conn *c) {
        if (!c->held_prev)
                return;
        *c->held_prev = c->held_next;
        if (c->held_next)
                c->held_next->held_prev = c->held_prev;
        c->held_next = NULL;
        c->held_prev = NULL;
}

static void held_link(conn *c) {
        if (c->held_prev || !c->ops->held_list)
                return;
        conn_held_list *l = c->ops->held_list(c);
        c->held_next = l->first;
        if (l->first)
                l->first->held_prev = &c->held_next;
        l->first = c;
        c->held_prev = &l->first;
}

static int destroy(sd_event_source *s, void *userdata) {
        conn_full *cf = userdata;
        conn *c = &cf->pub;
        (void)s;
        if (c->ops->on_close)
                c->ops->on_close(c);
        held_unlink(c);
        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(cf->reaper);
        sd_event_source_disable_unref(cf->deadline);
        wire_close(&cf->wire);
        proto_reader_free(&cf->reader);
        free(c->out);
        free(cf);
        return 0;
}

/* Destruction waits for the loop's next iteration, so that on_close (which may mark a node down
 * and reschedule) never runs inside a caller that is still iterating over the cluster state. */
void conn_close(conn *c) {
        conn_full *cf = (conn_full *)c;
        if (c->closed)
                return;
        c->closed = true;
        (void)sd_event_source_set_enabled(c->io, SD_EVENT_OFF);
        if (sd_event_add_defer(sd_event_source_get_event(c->io), &cf->reaper, destroy, cf) < 0)
                log_error("fd=%d cannot be closed: out of memory", c->fd);
}

/* Write what the socket takes. Returns 0 (maybe with output left) or -errno. */
static int flush(conn *c) {
        conn_full *cf = (conn_full *)c;
        bool held = c->ops->held && c->ops->held(c);
        size_t end = held ? c->out_off + releasable(c) : c->out_len;
        ssize_t n = wire_write(&cf->wire, c->out + c->out_off, end - c->out_off);
        if (n < 0) {
                log_tls_error(cf);
                return (int)n;
        }
        c->out_off += (size_t)n;
        if (c->out_off == c->out_len)
                c->out_off = c->out_len = 0;
        else if (held && c->out_queued > c->out_free)
                held_link(c);
        return sd_event_source_set_io_events(c->io, conn_events(cf));
}

/* Write what the socket takes; close the connection when that fails or when all of it went
 * out and it was to close then. */
static void flush_or_close(conn *c) {
        if (flush(c) < 0 || (c->close_after_flush && c->out_len == 0))
                conn_close(c);
}

void conn_release_held(conn_held_list *l) {
        /* A connection whose output is still partly held joins l again: walk a copy. */
        conn_held_list todo = { l->first };
        if (todo.first)
                todo.first->held_prev = &todo.first;
        l->first = NULL;
        while (todo.first) {
                conn *c = todo.first;
                held_unlink(c);
                if (c->hold_mark[0] > c->out_free)
                        c->out_free = c->hold_mark[0];
                if (!c->closed)
                        flush_or_close(c);
        }
}

void conn_held_mark(conn_held_list *l, bool next) {
        for (conn *c = l->first; c; c = c->held_next)
                c->hold_mark[next] = c->out_queued;
}

void conn_held_advance(conn_held_list *l) {
        for (conn *c = l->first; c; c = c->held_next)
                if (c->hold_mark[1] > c->hold_mark[0])
                        c->hold_mark[0] = c->hold_mark[1];
}

static int queue(conn *c, const char *frame, size_t len) {
        if (c->out_len - c->out_off + len > CONN_OUTPUT_MAX)
                return -ENOBUFS;
        if (c->out_off > 0 && c->out_len + len > c->out_cap) { /* reuse the flushed front */
                memmove(c->out, c->out + c->out_off, c->out_len - c->out_off);
                c->out_len -= c->out_off;
                c->out_off = 0;
        }
        if (c->out_len + len > c->out_cap) {
                size_t cap = c->out_cap ? c->out_cap : 4096;
                while (cap < c->out_len + len)
                        cap *= 2;
                char *p = realloc(c->out, cap);
                if (!p)
                        return -ENOMEM;
                c->out = p;
                c->out_cap = cap;
        }
        memcpy(c->out + c->out_len, frame, len);
        c->out_len += len;
        c->out_queued += len;
        return 0;
}

int conn_send(conn *c, const cJSON *msg) {
        if (c->closed)
                return -ECONNRESET;
        char *frame;
        size_t len;
        int r = proto_frame(msg, &frame, &len);
        if (r == -EMSGSIZE)
                return r; /* the message, not the peer, is at fault: the caller may send another */
        if (r == 0) {
                r = queue(c, frame, len);
                free(frame);
        }
        if (r == 0)
                r = flush(c);
        if (r < 0) {
                log_warning("dropping connection fd=%d pid=%d: %s", c->fd, (int)c->pid,
                            r == -ENOBUFS ? "peer does not read its replies" : strerror(-r));
                conn_close(c);
        }
        return r;
}

void conn_reply(conn *c, cJSON *msg) {
        if (msg && conn_send(c, msg) == -EMSGSIZE) {
                cJSON *err = proto_error("the reply would exceed the %d-byte message limit", PROTO_MAX_MSG);
                (void)conn_send(c, err);
                cJSON_Delete(err);
        }
        cJSON_Delete(msg);
}

size_t conn_unsent(const conn *c) { return c->out_len - c->out_off; }

void conn_fail(conn *c, const char *text) {
        cJSON *err = proto_error("%s", text);
        int r = err ? conn_send(c, err) : -ENOMEM;
        cJSON_Delete(err);
        if (r == -ENOMEM && !err)
                conn_close(c);
        if (r < 0)
                return; /* conn_send closed it */
        c->close_after_flush = true;
        if (c->out_len == 0)
                conn_close(c);
}

/* Decode and dispatch every whole message in the reader. */
static void dispatch(conn *c) {
        conn_full *cf = (conn_full *)c;
        char err[PROTO_ERRLEN];
        cJSON *msg;
        int r;
        while (!c->closed && !c->close_after_flush && (r = proto_reader_next(&cf->reader, &msg, err)) != 0) {
                if (r < 0) {
                        log_warning("bad frame from fd=%d pid=%d: %s", c->fd, (int)c->pid, err);
                        conn_fail(c, err); /* the stream cannot be trusted past a bad frame */
                        break;
                }
                c->ops->on_message(c, msg);
                cJSON_Delete(msg);
        }
}

/* Whether c has input_max and the peer sent more than one frame of at most that: logged, and
 * the peer told and cut. Before it is trusted a peer has one message to send (an agent's hello),
 * so the reader never holds more than one such frame and a read's worth. */
static bool over_input_max(conn_full *cf) {
        conn *c = &cf->pub;
        if (!c->input_max || !wire_over(&cf->reader, c->input_max))
                return false;
        int64_t len = proto_reader_next_length(&cf->reader);
        static log_ratelimit lines = { .interval_usec = LOG_FLOOD_USEC }; /* strangers may come by the thousand */
        unsigned missed;
        if (log_ratelimit_ok(&lines, &missed))
                log_warning("fd=%d pid=%d: more than one message of at most %zu bytes before authentication (%s): cut "
                            "(%u more since the last such line)",
                            c->fd, (int)c->pid, c->input_max,
                            len > (int64_t)c->input_max ? "a larger frame" : "more frames", missed);
        conn_fail(c, "too much input before authentication");
        return true;
}

/* Read what the peer sent, up to a bound that keeps the loop fair to other peers (the more
 * requests one turn reads, the more share one commit: commit.c), and no further than the input
 * cap. Returns false when the peer is gone or the stream broken. */
static bool take_input(conn_full *cf) {
        int r = wire_fill(&cf->wire, &cf->reader, CONN_READ_PER_TURN, cf->pub.input_max);
        if (r < 0)
                log_tls_error(cf);
        if (r == 0)
                (void)over_input_max(cf);
        return r == 0;
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        conn_full *cf = userdata;
        conn *c = &cf->pub;
        (void)s;
        (void)fd;
        /* TLS: a write may have waited for input, a read for output; try both on any event. */
        if ((revents & EPOLLOUT) || (cf->wire.tls && c->out_len > c->out_off)) {
                flush_or_close(c);
                if (c->closed)
                        return 0;
        }
        if ((!(revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) && !cf->wire.tls) || c->close_after_flush)
                return 0;
        bool gone = !take_input(cf);
        dispatch(c); /* what came before an end of file is still served */
        if (gone && c->out_len > c->out_off)
                c->close_after_flush = true; /* the replies may still be read (a half-closed peer) */
        else if (gone)
                conn_close(c);
        else if (cf->wire.tls && cf->wire.write_waits && c->out_len > c->out_off)
                flush_or_close(c); /* the read may have taken what the write waited for (the client's
                                    * Finished): no event would come for it, the peer waits for us */
        else if (cf->wire.tls)
                (void)sd_event_source_set_io_events(c->io, conn_events(cf));
        return 0;
}

static int on_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        static log_ratelimit lines = { .interval_usec = LOG_FLOOD_USEC }; /* strangers may come by the thousand */
        conn_full *cf = userdata;
        unsigned missed;
        (void)s;
        (void)usec;
        bool handshake = cf->wire.tls && !tls_handshake_done(cf->wire.tls);
        if (log_ratelimit_ok(&lines, &missed))
                log_warning("fd=%d: no %s within %g s%s: closed (%u more deadlines since the last such line)",
                            cf->pub.fd, handshake ? "TLS handshake" : cf->deadline_what, (double)cf->deadline_ms / 1000,
                            handshake ? " (a peer without TLS?)" : "", missed);
        conn_close(&cf->pub);
        return 0;
}

int conn_set_deadline(conn *c, uint64_t ms, const char *what) {
        conn_full *cf = (conn_full *)c;
        cf->deadline_ms = ms;
        cf->deadline_what = what;
        if (!ms)
                return cf->deadline ? sd_event_source_set_enabled(cf->deadline, SD_EVENT_OFF) : 0;
        if (!cf->deadline)
                return sd_event_add_time_relative(sd_event_source_get_event(c->io), &cf->deadline, CLOCK_MONOTONIC,
                                                  ms * 1000, 0, on_deadline, cf);
        int r = sd_event_source_set_time_relative(cf->deadline, ms * 1000);
        return r < 0 ? r : sd_event_source_set_enabled(cf->deadline, SD_EVENT_ONESHOT);
}

int conn_new(sd_event *event, int fd, tls_ctx *tls, const conn_ops *ops, void *owner, conn **out) {
        conn_full *cf = calloc(1, sizeof(*cf));
        if (!cf) {
                close(fd);
                return -ENOMEM;
        }
        conn *c = &cf->pub;
        *c = (conn){ .fd = fd, .ops = ops, .owner = owner, .uid = (uid_t)-1, .gid = (gid_t)-1 };
        struct ucred cred;
        socklen_t len = sizeof(cred);
        if (getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) == 0 && cred.pid > 0) {
                c->uid = cred.uid;
                c->gid = cred.gid;
                c->pid = cred.pid;
        }
        int r = wire_init(&cf->wire, fd, tls, NULL);
        if (r >= 0)
                r = sd_event_add_io(event, &c->io, fd, EPOLLIN, on_io, cf);
        if (r < 0) {
                wire_close(&cf->wire);
                free(cf);
                return r;
        }
        *out = c;
        if (ops->on_open)
                ops->on_open(c);
        return 0;
}
