/* connect.c - colony-connect, the client's link to a controller on another host (docs/protocol.md,
 * "Client link"; docs/architecture.md, "Identity from another host").
 *
 * colony starts it with one end of a socketpair as its standard input and talks to that end as
 * it talks to the controller's Unix socket. It connects to HOST:PORT (TLS when the client
 * config names a CA), answers the controller's nonce with a MUNGE credential the local munged
 * mints for the user running it, and once welcomed relays bytes both ways until either side
 * closes. A failure before that is sent to colony as an "error" message, in one line. Being its
 * own program keeps libssl and libmunge out of colony, which every local job command starts. */
#include "client.h"
#include "config.h"
#include "cred.h"
#include "net.h"
#include "proto.h"
#include "tls.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define LOCAL_FD 0
#define HANDSHAKE_TIMEOUT_MS 30000 /* the connection, TLS, the nonce and the welcome together */
#define RELAY_BUF 65536

typedef struct remote_link {
        int fd;
        tls_conn *tls; /* NULL: plain TCP */
        proto_reader reader;
        const char *addr;
        char err[512];
} remote_link;

static int64_t now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* The poll events the last -EAGAIN of l waits for (dflt for plain TCP). */
static short wants(const remote_link *l, short dflt) {
        return !l->tls ? dflt : tls_wants_write(l->tls) ? POLLOUT : POLLIN;
}

/* One read or write on the controller's side, waiting until deadline for it. Returns as tls_io,
 * -ETIMEDOUT past the deadline. */
static ssize_t io_by(remote_link *l, void *buf, size_t len, bool write, int64_t deadline) {
        for (;;) {
                ssize_t n = tls_io(l->tls, l->fd, buf, len, write);
                if (n != -EAGAIN && n != -EINTR)
                        return n;
                struct pollfd p = { .fd = l->fd, .events = wants(l, write ? POLLOUT : POLLIN) };
                int left = (int)(deadline - now_ms());
                if (left <= 0 || poll(&p, 1, left) == 0)
                        return -ETIMEDOUT;
        }
}

/* Send msg to the controller before deadline. Returns 0 or -errno. */
static int send_msg(remote_link *l, const cJSON *msg, int64_t deadline) {
        char *frame;
        size_t len, off = 0;
        int r = proto_frame(msg, &frame, &len);
        if (r < 0)
                return r;
        while (r == 0 && off < len) {
                ssize_t n = io_by(l, frame + off, len - off, true, deadline);
                if (n < 0)
                        r = (int)n;
                else
                        off += (size_t)n;
        }
        free(frame);
        return r;
}

/* The controller's next message before deadline into *msg. Returns 0 or -errno. */
static int recv_msg(remote_link *l, cJSON **msg, int64_t deadline) {
        char buf[4096], perr[PROTO_ERRLEN];
        int r;
        while ((r = proto_reader_next(&l->reader, msg, perr)) == 0) {
                ssize_t n = io_by(l, buf, sizeof(buf), false, deadline);
                if (n == 0)
                        return -ECONNRESET;
                if (n < 0)
                        return (int)n;
                if ((r = proto_reader_feed(&l->reader, buf, (size_t)n)) < 0)
                        return r;
        }
        if (r < 0)
                snprintf(l->err, sizeof(l->err), "bad message from the controller at %s: %s", l->addr, perr);
        return r < 0 ? r : 0;
}

/* The client config's setting key ([client] in $COLONY_CONFIG or /etc/colony/colony.conf), or NULL. */
static const char *setting(const config *cfg, const char *key) {
        char full[64];
        snprintf(full, sizeof(full), "client.%s", key);
        return config_get(cfg, full);
}

/* Connect, TLS, and prove the user with a credential for the controller's nonce. Returns 0 once
 * welcomed, or -errno with l->err set. */
static int open_link(remote_link *l, const config *cfg, tls_ctx **ctx) {
        char host[256], terr[TLS_ERRLEN], cerr[CRED_ERRLEN];
        uint16_t port;
        int64_t deadline = now_ms() + HANDSHAKE_TIMEOUT_MS;
        const char *ca = setting(cfg, "tls_ca"), *nonce = NULL, *type;
        cJSON *msg = NULL, *auth = NULL;
        char *cred = NULL, perr[PROTO_ERRLEN];
        int r = net_split_hostport(l->addr, host, sizeof(host), &port);
        if (r < 0) {
                snprintf(l->err, sizeof(l->err), "controller address '%s' is not host:port", l->addr);
                return r;
        }
        if ((l->fd = net_connect_tcp(l->addr, HANDSHAKE_TIMEOUT_MS)) < 0) {
                snprintf(l->err, sizeof(l->err), "cannot reach the controller at %s: %s", l->addr, strerror(-l->fd));
                return l->fd;
        }
        if (fcntl(l->fd, F_SETFL, fcntl(l->fd, F_GETFL) | O_NONBLOCK) < 0)
                return snprintf(l->err, sizeof(l->err), "%s: %s", l->addr, strerror(errno)), -errno;
        tls_files f = { .ca = ca, .cert = NULL, .key = NULL };
        if (ca && ((r = tls_ctx_new_client(&f, ctx, terr)) < 0 || (r = tls_conn_new(*ctx, l->fd, host, &l->tls)) < 0)) {
                snprintf(l->err, sizeof(l->err), "TLS to %s: %s", l->addr, r == -ENOMEM ? "out of memory" : terr);
                return r;
        }
        if ((r = recv_msg(l, &msg, deadline)) < 0) {
                if (!*l->err)
                        snprintf(l->err, sizeof(l->err), "no challenge from the controller at %s: %s", l->addr,
                                 l->tls && *tls_conn_error(l->tls) ? tls_conn_error(l->tls) : strerror(-r));
                return r;
        }
        type = proto_type(msg);
        if (strcmp(type, "challenge") != 0 || proto_get_str(msg, "nonce", &nonce, perr) < 0 || !nonce) {
                const char *text = NULL;
                if (strcmp(type, "error") != 0 || proto_get_str(msg, "error", &text, perr) < 0 || !text)
                        text = "no challenge";
                snprintf(l->err, sizeof(l->err), "%s", text); /* "host X may not submit" */
                cJSON_Delete(msg);
                return -EACCES;
        }
        r = cred_mint(setting(cfg, "munge_socket"), nonce, &cred, cerr);
        cJSON_Delete(msg);
        msg = NULL;
        if (r < 0) {
                snprintf(l->err, sizeof(l->err), "cannot prove who you are to the controller at %s: %s", l->addr, cerr);
                return r;
        }
        auth = proto_new("auth");
        if (!auth || !cJSON_AddStringToObject(auth, "cred", cred))
                r = -ENOMEM;
        free(cred);
        if (r == 0 && (r = send_msg(l, auth, deadline)) == 0)
                r = recv_msg(l, &msg, deadline);
        cJSON_Delete(auth);
        if (r < 0) {
                if (!*l->err)
                        snprintf(l->err, sizeof(l->err), "the controller at %s did not welcome us: %s", l->addr,
                                 strerror(-r));
                return r;
        }
        if (strcmp(proto_type(msg), "welcome") != 0) {
                const char *text = NULL;
                if (proto_get_str(msg, "error", &text, perr) < 0 || !text)
                        text = "unexpected answer to the credential";
                snprintf(l->err, sizeof(l->err), "%s", text); /* "permission denied: ..." */
                r = -EACCES;
        }
        cJSON_Delete(msg);
        return r;
}

/* A byte buffer one way. */
typedef struct pipebuf {
        char d[RELAY_BUF];
        size_t off, len;
} pipebuf;

static void compact(pipebuf *b) {
        if (b->off == 0)
                return;
        memmove(b->d, b->d + b->off, b->len - b->off);
        b->len -= b->off;
        b->off = 0;
}

/* Move bytes both ways until colony closes its end or the controller closes the connection
 * (what it sent is passed on first). Returns 0 or -errno. */
static int relay(remote_link *l) {
        static pipebuf up, down; /* colony to the controller, and back */
        bool remote_eof = false;
        if (l->reader.len > l->reader.off) { /* sent after the welcome, read with it */
                memcpy(down.d, l->reader.buf + l->reader.off, l->reader.len - l->reader.off);
                down.len = l->reader.len - l->reader.off;
        }
        for (;;) {
                short lev = 0, rev = 0;
                bool progress = true;
                while (progress) {
                        ssize_t n;
                        progress = false;
                        lev = rev = 0;
                        compact(&up);
                        compact(&down);
                        if (up.len < RELAY_BUF) {
                                n = read(LOCAL_FD, up.d + up.len, RELAY_BUF - up.len);
                                if (n == 0)
                                        return 0; /* colony is done */
                                if (n < 0 && errno != EAGAIN && errno != EINTR)
                                        return -errno;
                                if (n > 0)
                                        up.len += (size_t)n, progress = true;
                                else
                                        lev |= POLLIN;
                        }
                        if (up.off < up.len) {
                                n = tls_io(l->tls, l->fd, up.d + up.off, up.len - up.off, true);
                                if (n > 0)
                                        up.off += (size_t)n, progress = true;
                                else if (n == -EAGAIN || n == -EINTR)
                                        rev |= wants(l, POLLOUT);
                                else
                                        return (int)n;
                        }
                        if (!remote_eof && down.len < RELAY_BUF) {
                                n = tls_io(l->tls, l->fd, down.d + down.len, RELAY_BUF - down.len, false);
                                if (n > 0)
                                        down.len += (size_t)n, progress = true;
                                else if (n == 0)
                                        remote_eof = true, progress = true;
                                else if (n == -EAGAIN || n == -EINTR)
                                        rev |= wants(l, POLLIN);
                                else if (n == -ECONNRESET)
                                        remote_eof = true, progress = true;
                                else
                                        return (int)n;
                        }
                        if (down.off < down.len) {
                                n = write(LOCAL_FD, down.d + down.off, down.len - down.off);
                                if (n > 0)
                                        down.off += (size_t)n, progress = true;
                                else if (n < 0 && errno != EAGAIN && errno != EINTR)
                                        return -errno;
                                else
                                        lev |= POLLOUT;
                        }
                        if (remote_eof && down.off == down.len)
                                return 0; /* the controller closed, and colony has all it sent */
                }
                struct pollfd p[2] = { { .fd = LOCAL_FD, .events = lev }, { .fd = l->fd, .events = rev } };
                if (poll(p, 2, -1) < 0 && errno != EINTR)
                        return -errno;
        }
}

int main(int argc, char **argv) {
        const char *path = getenv("COLONY_CONFIG");
        config cfg = { 0 };
        tls_ctx *ctx = NULL;
        remote_link l = { .fd = -1, .addr = argc == 2 ? argv[1] : "" };
        int r = 0;
        signal(SIGPIPE, SIG_IGN); /* a closed peer is an error return, on either side */
        if (argc != 2) {
                fprintf(stderr, "usage: colony-connect HOST:PORT (colony runs it, with its socket as stdin)\n");
                return 2;
        }
        if (!path || !*path)
                path = CLIENT_CONFIG_PATH;
        if ((r = config_load(path, &cfg, l.err, sizeof(l.err))) == -ENOENT)
                r = 0;
        if (r == 0)
                r = open_link(&l, &cfg, &ctx);
        if (r < 0) {
                cJSON *e = proto_error("%s", l.err);
                (void)proto_send(LOCAL_FD, e);
                cJSON_Delete(e);
        } else if (fcntl(LOCAL_FD, F_SETFL, fcntl(LOCAL_FD, F_GETFL) | O_NONBLOCK) < 0 || (r = relay(&l)) < 0) {
                fprintf(stderr, "colony-connect: relaying to the controller at %s: %s\n", l.addr,
                        l.tls && *tls_conn_error(l.tls) ? tls_conn_error(l.tls) : strerror(r < 0 ? -r : errno));
        }
        tls_conn_free(l.tls);
        tls_ctx_free(ctx);
        proto_reader_free(&l.reader);
        config_free(&cfg);
        if (l.fd >= 0)
                close(l.fd);
        return r < 0 ? 1 : 0;
}
