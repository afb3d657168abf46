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
#include "remotelink.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define LOCAL_FD             0
#define HANDSHAKE_TIMEOUT_MS 30000 /* the connection, TLS, the nonce and the welcome together */
#define RELAY_BUF            65536

/* The client config's setting key ([client] in $COLONY_CONFIG or /etc/colony/colony.conf), or NULL. */
static const char *setting(const config *cfg, const char *key) {
        char full[64];
        snprintf(full, sizeof(full), "client.%s", key);
        return config_get(cfg, full);
}

/* Connect, and prove the user with a credential for the controller's nonce. Returns 0 once
 * welcomed, or -errno with l->err set. */
static int open_link(remote_link *l, const char *addr, const config *cfg) {
        char nonce[128], cerr[CRED_ERRLEN], *cred = NULL;
        int r = rlink_open(l, addr, setting(cfg, "tls_ca"), HANDSHAKE_TIMEOUT_MS);
        if (r == 0)
                r = rlink_nonce(l, nonce, sizeof(nonce));
        if (r == 0 && (r = cred_mint(setting(cfg, "munge_socket"), nonce, &cred, cerr)) < 0)
                snprintf(l->err, sizeof(l->err), "cannot prove who you are to the controller at %s: %s", addr, cerr);
        if (r == 0)
                r = rlink_auth(l, cred);
        free(cred);
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

/* colony's bytes towards the controller, as far as they go without blocking: read from colony,
 * sent on l. Returns 1 to go on (*progress set when bytes moved, the events to wait for added to
 * *lev and *rev), 0 when colony is done, or -errno. */
static int pump_up(remote_link *l, pipebuf *up, short *lev, short *rev, bool *progress) {
        ssize_t n;

        if (up->len < RELAY_BUF) {
                n = read(LOCAL_FD, up->d + up->len, RELAY_BUF - up->len);
                if (n == 0 || (n < 0 && errno == ECONNRESET))
                        return 0; /* colony is done */
                if (n < 0 && errno != EAGAIN && errno != EINTR)
                        return -errno;
                if (n > 0)
                        up->len += (size_t)n, *progress = true;
                else
                        *lev |= POLLIN;
        }
        if (up->off < up->len) {
                n = tls_io(l->tls, l->fd, up->d + up->off, up->len - up->off, true);
                if (n > 0)
                        up->off += (size_t)n, *progress = true;
                else if (n == -EAGAIN || n == -EINTR)
                        *rev |= rlink_wants(l, POLLOUT);
                else
                        return (int)n;
        }
        return 1;
}

/* The controller's bytes towards colony, as pump_up's the other way; *remote_eof set once the
 * controller closed. Returns 1 to go on, 0 when colony wants no more, or -errno. */
static int pump_down(remote_link *l, pipebuf *down, bool *remote_eof, short *lev, short *rev, bool *progress) {
        ssize_t n;

        if (!*remote_eof && down->len < RELAY_BUF) {
                n = tls_io(l->tls, l->fd, down->d + down->len, RELAY_BUF - down->len, false);
                if (n > 0)
                        down->len += (size_t)n, *progress = true;
                else if (n == 0)
                        *remote_eof = true, *progress = true;
                else if (n == -EAGAIN || n == -EINTR)
                        *rev |= rlink_wants(l, POLLIN);
                else if (n == -ECONNRESET)
                        *remote_eof = true, *progress = true;
                else
                        return (int)n;
        }
        if (down->off < down->len) {
                n = write(LOCAL_FD, down->d + down->off, down->len - down->off);
                if (n > 0)
                        down->off += (size_t)n, *progress = true;
                else if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
                        return 0; /* colony is done, and wants no more */
                else if (n < 0 && errno != EAGAIN && errno != EINTR)
                        return -errno;
                else
                        *lev |= POLLOUT;
        }
        return 1;
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
                        int r;
                        progress = false;
                        lev = rev = 0;
                        compact(&up);
                        compact(&down);
                        if ((r = pump_up(l, &up, &lev, &rev, &progress)) <= 0 ||
                            (r = pump_down(l, &down, &remote_eof, &lev, &rev, &progress)) <= 0)
                                return r;
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
        remote_link l = { .fd = -1 };
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
                r = open_link(&l, argv[1], &cfg);
        if (r < 0) {
                cJSON *e = proto_error("%s", l.err);
                char sink[4096];
                (void)proto_send(LOCAL_FD, e);
                cJSON_Delete(e);
                /* Read what colony sends until it closes: closed now, its request's write would
                 * fail with EPIPE before it read the reason. */
                while (read(LOCAL_FD, sink, sizeof(sink)) > 0)
                        ;
        } else if (fcntl(LOCAL_FD, F_SETFL, fcntl(LOCAL_FD, F_GETFL) | O_NONBLOCK) < 0 || (r = relay(&l)) < 0) {
                fprintf(stderr, "colony-connect: relaying to the controller at %s: %s\n", argv[1],
                        l.tls && *tls_conn_error(l.tls) ? tls_conn_error(l.tls) : strerror(r < 0 ? -r : errno));
        }
        rlink_close(&l);
        config_free(&cfg);
        return r < 0 ? 1 : 0;
}
