/* remote.c - clients on other hosts: the host check, the nonce, the MUNGE credential and root
 * squash before a TCP client is served like a local one (see remote.h). */
#include "remote.h"
#include "cred.h"
#include "server.h"
#include "log.h"
#include "offloop.h"
#include "clients.h"
#include "commit.h"
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

int remote_cfg_init(remote_cfg *rc, const char *submit_hosts, const char *trusted_root_hosts, const char *munge_socket,
                    char *err, size_t errlen) {
        struct passwd *pw = getpwnam("nobody");
        *rc = (remote_cfg){ .nobody_uid = pw ? pw->pw_uid : 65534, .nobody_gid = pw ? pw->pw_gid : 65534 };
        int r = hostlist_parse(&rc->submit, "submit_hosts", submit_hosts, err, errlen);
        if (r == 0)
                r = hostlist_parse(&rc->trusted, "trusted_root_hosts", trusted_root_hosts, err, errlen);
        if (r == 0 && munge_socket && !(rc->munge_socket = strdup(munge_socket))) {
                snprintf(err, errlen, "out of memory");
                r = -ENOMEM;
        }
        if (r < 0)
                remote_cfg_free(rc);
        return r;
}

void remote_cfg_free(remote_cfg *rc) {
        hostlist_free(&rc->submit);
        hostlist_free(&rc->trusted);
        free(rc->munge_socket);
        *rc = (remote_cfg){ 0 };
}

/* The peer's address of fd, as IPv6 and as text. Returns false when it has none. */
static bool peer_of(int fd, struct in6_addr *a, char *text, size_t len) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0 || !hostlist_addr_of((struct sockaddr *)&ss, a))
                return false;
        hostlist_addr_text(a, text, len);
        return true;
}

/* Whether a is a cluster host that may submit: the controller's own (loopback), one of
 * submit_hosts, or the host of a connected agent. */
static bool may_submit(ctl_server *srv, const struct in6_addr *a) {
        struct in6_addr node;
        char unused[INET6_ADDRSTRLEN];
        if (hostlist_is_loopback(a) || hostlist_has(&srv->remote->cfg.submit, a))
                return true;
        for (size_t i = 0; i < srv->state.nnodes; i++) {
                conn *link = srv->state.nodes[i]->link;
                if (link && peer_of(link->fd, &node, unused, sizeof(unused)) && memcmp(&node, a, sizeof(node)) == 0)
                        return true;
        }
        return false;
}

/* A new remote client: refused unless its host may submit, else sent the nonce its
 * credential must carry, with a deadline and a stranger's input limit until it proves who it is. */
static void remote_opened(conn *c) {
        ctl_server *srv = c->owner;
        struct in6_addr a;
        char host[INET6_ADDRSTRLEN] = "?", text[PROTO_ERRLEN];
        unsigned missed;
        if (!peer_of(c->fd, &a, host, sizeof(host)) || !may_submit(srv, &a)) {
                if (log_ratelimit_ok(&srv->remote->strangers, &missed))
                        log_warning("remote client fd=%d from %s refused: not a cluster host (submit_hosts) (%u more "
                                    "refused since the last such line)",
                                    c->fd, host, missed);
                snprintf(text, sizeof(text), "host %s may not submit", host);
                conn_fail(c, text);
                return;
        }
        if (srv->remote->npreauth >= REMOTE_PREAUTH_MAX) {
                if (log_ratelimit_ok(&srv->remote->refused, &missed))
                        log_warning(
                                "remote client fd=%d from %s refused: %d connections have not authenticated yet (%u "
                                "more refused since the last such line)",
                                c->fd, host, REMOTE_PREAUTH_MAX, missed);
                conn_close(c);
                return;
        }
        cJSON *msg = proto_new("challenge");
        int r = conn_set_deadline(c, REMOTE_AUTH_DEADLINE_MS, "auth");
        if (r == 0)
                r = auth_nonce(c->challenge);
        if (r < 0 || !msg || !cJSON_AddStringToObject(msg, "nonce", c->challenge)) {
                log_errno(LOG_ERR, r < 0 ? r : -ENOMEM, "remote client fd=%d from %s: cannot send a challenge", c->fd,
                          host);
                conn_close(c);
        } else {
                c->input_max = REMOTE_PREAUTH_INPUT_MAX; /* and counted, until welcomed or closed */
                srv->remote->npreauth++;
                (void)conn_send(c, msg); /* a failure closes the connection */
        }
        cJSON_Delete(msg);
}

struct remote_auth {
        conn *c; /* NULL once it closed */
        char *cred, *munge_socket;
        char nonce[AUTH_HEX_LEN + 1];
        uid_t uid; /* what the decode found */
        gid_t gid;
        char err[CRED_ERRLEN];
};

static void auth_free(remote_auth *a) {
        if (a) {
                free(a->cred);
                free(a->munge_socket);
                free(a);
        }
}

/* The checker thread's call: munged decodes the credential. */
static int check(void *arg) {
        remote_auth *a = arg;
        return cred_check(a->munge_socket, a->cred, a->nonce, &a->uid, &a->gid, a->err);
}

/* Hand the oldest queued auth to the thread, unless it is busy. */
static void check_next(remote_server *rs) {
        if (rs->inflight || rs->nqueue == 0)
                return;
        rs->inflight = rs->queue[0];
        memmove(rs->queue, rs->queue + 1, --rs->nqueue * sizeof(*rs->queue));
        (void)offloop_start(rs->checker, rs->inflight); /* not busy: cannot fail */
}

/* The decode of a's credential returned r: the connection is its user's from now on (root
 * squashed unless its host is trusted) and welcomed, or refused with "permission denied" and
 * closed. */
static void finish(ctl_server *srv, conn *c, remote_auth *a, int r) {
        char text[CRED_ERRLEN + 64], host[INET6_ADDRSTRLEN] = "?";
        struct in6_addr addr;
        uid_t uid = a->uid;
        gid_t gid = a->gid;
        bool known = peer_of(c->fd, &addr, host, sizeof(host));
        unsigned missed;
        if (r < 0) {
                if (log_ratelimit_ok(&srv->remote->denied, &missed))
                        log_warning("remote client fd=%d from %s: %s: %s (%u more since the last such line)", c->fd,
                                    host, r == -EACCES ? "permission denied" : "cannot check its credential", a->err,
                                    missed);
                snprintf(text, sizeof(text), "%s: %s",
                         r == -EACCES ? "permission denied" : "the controller cannot check credentials", a->err);
                conn_fail(c, text);
                return;
        }
        /* root on a host not trusted with the cluster is an unprivileged user; root on the
         * controller's own host (loopback) could use the Unix socket and read the store anyway */
        bool squashed =
                uid == 0 && !(known && (hostlist_is_loopback(&addr) || hostlist_has(&srv->remote->cfg.trusted, &addr)));
        if (squashed) {
                uid = srv->remote->cfg.nobody_uid;
                gid = srv->remote->cfg.nobody_gid;
        }
        log_debug("remote client fd=%d from %s: uid=%u gid=%u%s", c->fd, host, (unsigned)uid, (unsigned)gid,
                  squashed ? " (root squashed)" : "");
        c->uid = uid;
        c->gid = gid;
        c->input_max = 0;
        srv->remote->npreauth--;
        (void)conn_set_deadline(c, 0, NULL);
        cJSON *welcome = proto_new("welcome");
        if (welcome &&
            (!cJSON_AddNumberToObject(welcome, "uid", uid) || !cJSON_AddNumberToObject(welcome, "gid", gid) ||
             !cJSON_AddBoolToObject(welcome, "squashed", squashed))) {
                cJSON_Delete(welcome);
                welcome = NULL;
        }
        if (!welcome) {
                conn_fail(c, "out of memory");
                return;
        }
        conn_reply(c, welcome);
        client_conn_ops.on_open(c); /* counted against its uid, as on the Unix socket */
}

/* The thread's answer for the auth in flight. */
static void checked(void *userdata, int r) {
        ctl_server *srv = userdata;
        remote_auth *a = srv->remote->inflight;
        srv->remote->inflight = NULL;
        if (a && a->c)
                finish(srv, a->c, a, r);
        auth_free(a);
        check_next(srv->remote);
}

/* The first message must be an auth with a MUNGE credential: queued for the checker (one per
 * connection: the nonce is spent), anything else refused with "permission denied". */
static void authenticate(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const fields[] = { "cred", NULL };
        char err[PROTO_ERRLEN];
        const char *cred = NULL, *type = proto_type(msg), *why = NULL;
        remote_auth *a = NULL, **grown = NULL;
        if (!c->challenge[0])
                why = "permission denied: one auth per connection, and nothing else before the welcome";
        else if (!type || strcmp(type, "auth") != 0 || proto_check_fields(msg, fields, err) < 0 ||
                 proto_get_str(msg, "cred", &cred, err) < 0 || !cred)
                why = "permission denied: the first message must be an auth with a MUNGE credential";
        else if (!(a = calloc(1, sizeof(*a))) || !(a->cred = strdup(cred)) ||
                 (srv->remote->cfg.munge_socket && !(a->munge_socket = strdup(srv->remote->cfg.munge_socket))) ||
                 !(grown = realloc(srv->remote->queue, (srv->remote->nqueue + 1) * sizeof(*grown))))
                why = "out of memory";
        if (why) {
                auth_free(a);
                log_warning("remote client fd=%d: %s", c->fd, why);
                conn_fail(c, why);
                return;
        }
        a->c = c;
        memcpy(a->nonce, c->challenge, sizeof(a->nonce));
        c->challenge[0] = '\0';
        srv->remote->queue = grown;
        grown[srv->remote->nqueue++] = a;
        check_next(srv->remote);
}

static void remote_message(conn *c, const cJSON *msg) {
        if (c->uid == (uid_t)-1)
                authenticate(c->owner, c, msg);
        else
                client_conn_ops.on_message(c, msg);
}

/* Whatever it did, the closing connection is released as a local client is, and its auth
 * forgotten. */
static void remote_closed(conn *c) {
        remote_server *rs = ((ctl_server *)c->owner)->remote;
        if (c->input_max)
                rs->npreauth--;
        if (rs->inflight && rs->inflight->c == c)
                rs->inflight->c = NULL; /* the thread still reads the auth: freed when it is done */
        for (size_t i = 0; i < rs->nqueue; i++)
                if (rs->queue[i]->c == c) {
                        auth_free(rs->queue[i]);
                        memmove(rs->queue + i, rs->queue + i + 1, (--rs->nqueue - i) * sizeof(*rs->queue));
                        break;
                }
        client_conn_ops.on_close(c);
}

int remote_server_start(remote_server *rs, ctl_server *srv) {
        return offloop_new(srv->event, "colony-munge", check, checked, srv, &rs->checker);
}

void remote_server_stop(remote_server *rs) {
        offloop_free(rs->checker); /* waits for the decode in flight; checked does not run */
        auth_free(rs->inflight);
        for (size_t i = 0; i < rs->nqueue; i++)
                auth_free(rs->queue[i]);
        free(rs->queue);
        remote_cfg_free(&rs->cfg);
        *rs = (remote_server){ 0 };
}

const conn_ops remote_conn_ops = { .on_open = remote_opened,
                                   .on_message = remote_message,
                                   .on_close = remote_closed,
                                   .held = server_output_held,
                                   .held_list = server_held_list };
