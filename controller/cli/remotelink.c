/* remotelink.c - a client's connection to a controller on another host (see remotelink.h). */
#include "remotelink.h"
#include "clock.h"
#include "net.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

short rlink_wants(const remote_link *l, short dflt) {
        return !l->tls ? dflt : tls_wants_write(l->tls) ? POLLOUT : POLLIN;
}

/* One read or write, waiting for it until the deadline. Returns as tls_io, -ETIMEDOUT past it. */
static ssize_t io_by(remote_link *l, void *buf, size_t len, bool write) {
        for (;;) {
                ssize_t n = tls_io(l->tls, l->fd, buf, len, write);
                if (n != -EAGAIN && n != -EINTR)
                        return n;
                struct pollfd p = { .fd = l->fd, .events = rlink_wants(l, write ? POLLOUT : POLLIN) };
                int left = (int)(l->deadline_ms - clock_mono_ms());
                if (left <= 0 || poll(&p, 1, left) == 0)
                        return -ETIMEDOUT;
        }
}

/* l->err for the failure r of what, unless already set. Returns r. */
static int failed(remote_link *l, int r, const char *what) {
        if (!*l->err)
                snprintf(l->err, sizeof(l->err), "%s the controller at %s: %s", what, l->addr,
                         l->tls && *tls_conn_error(l->tls) ? tls_conn_error(l->tls)
                         : r == -ECONNRESET                ? "it closed the connection"
                                                           : strerror(-r));
        return r;
}

int rlink_open(remote_link *l, const char *addr, const char *ca, int timeout_ms) {
        char host[256], terr[TLS_ERRLEN];
        uint16_t port;
        tls_files f = { .ca = ca };
        *l = (remote_link){ .fd = -1, .addr = addr, .deadline_ms = clock_mono_ms() + timeout_ms };
        int r = net_split_hostport(addr, host, sizeof(host), &port);
        if (r < 0) {
                snprintf(l->err, sizeof(l->err), "controller address '%s' is not host:port", addr);
                return r;
        }
        if ((l->fd = net_connect_tcp(addr, timeout_ms)) < 0) {
                r = l->fd;
                l->fd = -1;
                return failed(l, r, "cannot reach");
        }
        if (fcntl(l->fd, F_SETFL, fcntl(l->fd, F_GETFL) | O_NONBLOCK) < 0)
                return failed(l, -errno, "cannot reach");
        if (ca &&
            ((r = tls_ctx_new_client(&f, &l->ctx, terr)) < 0 || (r = tls_conn_new(l->ctx, l->fd, host, &l->tls)) < 0))
                snprintf(l->err, sizeof(l->err), "TLS to %s: %s", addr, r == -ENOMEM ? "out of memory" : terr);
        return r;
}

int rlink_send(remote_link *l, const cJSON *msg) {
        char *frame;
        size_t len, off = 0;
        int r = proto_frame(msg, &frame, &len);
        if (r < 0)
                return failed(l, r, "cannot send to");
        while (r == 0 && off < len) {
                ssize_t n = io_by(l, frame + off, len - off, true);
                if (n < 0)
                        r = failed(l, (int)n, "cannot send to");
                else
                        off += (size_t)n;
        }
        free(frame);
        return r;
}

int rlink_recv(remote_link *l, cJSON **msg) {
        char buf[4096], perr[PROTO_ERRLEN];
        int r;
        while ((r = proto_reader_next(&l->reader, msg, perr)) == 0) {
                ssize_t n = io_by(l, buf, sizeof(buf), false);
                if (n <= 0)
                        return failed(l, n == 0 ? -ECONNRESET : (int)n, "no answer from");
                if ((r = proto_reader_feed(&l->reader, buf, (size_t)n)) < 0)
                        return failed(l, r, "no answer from");
        }
        if (r < 0)
                snprintf(l->err, sizeof(l->err), "bad message from the controller at %s: %s", l->addr, perr);
        return r < 0 ? r : 0;
}

/* The next message, which must be of type want: else -EACCES with an "error"'s words (or
 * fallback) in l->err. Returns 0 with *msg, or -errno. */
static int expect(remote_link *l, const char *want, const char *fallback, cJSON **msg) {
        const char *text = NULL;
        char perr[PROTO_ERRLEN];
        int r = rlink_recv(l, msg);
        if (r < 0 || strcmp(proto_type(*msg), want) == 0)
                return r;
        if (strcmp(proto_type(*msg), "error") != 0 || proto_get_str(*msg, "error", &text, perr) < 0 || !text)
                text = fallback;
        snprintf(l->err, sizeof(l->err), "%s", text);
        cJSON_Delete(*msg);
        *msg = NULL;
        return -EACCES;
}

int rlink_nonce(remote_link *l, char *nonce, size_t len) {
        const char *n = NULL;
        char perr[PROTO_ERRLEN];
        cJSON *msg = NULL;
        int r = expect(l, "challenge", "the controller sent no challenge", &msg);
        if (r == 0 && (proto_get_str(msg, "nonce", &n, perr) < 0 || !n || strlen(n) >= len)) {
                snprintf(l->err, sizeof(l->err), "bad challenge from the controller at %s", l->addr);
                r = -EBADMSG;
        }
        if (r == 0)
                snprintf(nonce, len, "%s", n);
        cJSON_Delete(msg);
        return r;
}

int rlink_auth(remote_link *l, const char *cred) {
        cJSON *auth = proto_new("auth"), *msg = NULL;
        int r = auth && cJSON_AddStringToObject(auth, "cred", cred) ? 0 : -ENOMEM;
        if (r == 0)
                r = rlink_send(l, auth);
        if (r == 0)
                r = expect(l, "welcome", "unexpected answer to the credential", &msg);
        else if (r == -ENOMEM)
                snprintf(l->err, sizeof(l->err), "out of memory");
        cJSON_Delete(auth);
        cJSON_Delete(msg);
        return r;
}

void rlink_close(remote_link *l) {
        tls_close_notify(l->tls);
        tls_conn_free(l->tls);
        tls_ctx_free(l->ctx);
        proto_reader_free(&l->reader);
        if (l->fd >= 0)
                close(l->fd);
        l->fd = -1;
        l->tls = NULL;
        l->ctx = NULL;
}
