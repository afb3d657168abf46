/* conn.c - framed non-blocking connections (see conn.h). */
#include "conn.h"
#include "log.h"
#include "proto.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

/* Kept beside the public struct so its users never touch the reader. */
typedef struct conn_full {
        conn pub;
        proto_reader reader;
        sd_event_source *reaper;
} conn_full;

static int destroy(sd_event_source *s, void *userdata) {
        conn_full *cf = userdata;
        conn *c = &cf->pub;
        (void)s;
        if (c->ops->on_close)
                c->ops->on_close(c);
        sd_event_source_disable_unref(c->io);
        sd_event_source_disable_unref(cf->reaper);
        close(c->fd);
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
        while (c->out_off < c->out_len) {
                ssize_t n = send(c->fd, c->out + c->out_off, c->out_len - c->out_off, MSG_NOSIGNAL | MSG_DONTWAIT);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN)
                        break;
                if (n < 0)
                        return -errno;
                c->out_off += (size_t)n;
        }
        if (c->out_off == c->out_len)
                c->out_off = c->out_len = 0;
        return sd_event_source_set_io_events(c->io, EPOLLIN | (c->out_len ? EPOLLOUT : 0));
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

size_t conn_unsent(const conn *c) {
        return c->out_len - c->out_off;
}

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

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        conn *c = userdata;
        (void)s;
        if (revents & EPOLLOUT) {
                if (flush(c) < 0 || (c->close_after_flush && c->out_len == 0)) {
                        conn_close(c);
                        return 0;
                }
        }
        if (!(revents & (EPOLLIN | EPOLLHUP | EPOLLERR)) || c->close_after_flush)
                return 0;
        char buf[65536];
        ssize_t n = read(fd, buf, sizeof(buf));
        if (n < 0 && (errno == EAGAIN || errno == EINTR))
                return 0;
        if (n <= 0 || proto_reader_feed(&((conn_full *)c)->reader, buf, (size_t)n) < 0) {
                conn_close(c);
                return 0;
        }
        dispatch(c);
        return 0;
}

int conn_new(sd_event *event, int fd, const conn_ops *ops, void *owner, conn **out) {
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
        int r = sd_event_add_io(event, &c->io, fd, EPOLLIN, on_io, c);
        if (r < 0) {
                close(fd);
                free(cf);
                return r;
        }
        *out = c;
        if (ops->on_open)
                ops->on_open(c);
        return 0;
}
