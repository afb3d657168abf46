/* remote.c - clients on other hosts: the host check, the nonce, the MUNGE credential and root
 * squash before a TCP client is served like a local one (see remote.h). */
#include "remote.h"
#include "cred.h"
#include "server.h"
#include "log.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>

/* sa's address as IPv6 (IPv4 mapped), or false for another family. */
static bool addr_of(const struct sockaddr *sa, struct in6_addr *out) {
        if (sa->sa_family == AF_INET6) {
                *out = ((const struct sockaddr_in6 *)sa)->sin6_addr;
                return true;
        }
        if (sa->sa_family != AF_INET)
                return false;
        memset(out, 0, sizeof(*out));
        out->s6_addr[10] = out->s6_addr[11] = 0xff;
        memcpy(&out->s6_addr[12], &((const struct sockaddr_in *)sa)->sin_addr, 4);
        return true;
}

static bool hosts_have(const remote_hosts *h, const struct in6_addr *a) {
        for (size_t i = 0; i < h->n; i++)
                if (memcmp(&h->addrs[i], a, sizeof(*a)) == 0)
                        return true;
        return false;
}

/* Add every address name resolves to. Returns 0 or -errno with err set. */
static int hosts_add(remote_hosts *h, const char *key, const char *name, char *err, size_t errlen) {
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
        int g = getaddrinfo(name, NULL, &hints, &res);
        if (g != 0) {
                snprintf(err, errlen, "%s: cannot resolve '%s': %s", key, name, gai_strerror(g));
                return -EINVAL;
        }
        for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
                struct in6_addr a;
                if (!addr_of(ai->ai_addr, &a) || hosts_have(h, &a))
                        continue;
                struct in6_addr *grown = realloc(h->addrs, (h->n + 1) * sizeof(*grown));
                if (!grown) {
                        freeaddrinfo(res);
                        snprintf(err, errlen, "out of memory");
                        return -ENOMEM;
                }
                h->addrs = grown;
                h->addrs[h->n++] = a;
        }
        freeaddrinfo(res);
        return 0;
}

/* Resolve each word of list (spaces or commas between) into h. */
static int hosts_parse(remote_hosts *h, const char *key, const char *list, char *err, size_t errlen) {
        char *copy = list ? strdup(list) : NULL, *save = NULL;
        int r = list && !copy ? -ENOMEM : 0;
        for (char *w = copy ? strtok_r(copy, " ,\t", &save) : NULL; w && r == 0; w = strtok_r(NULL, " ,\t", &save))
                r = hosts_add(h, key, w, err, errlen);
        if (r == -ENOMEM)
                snprintf(err, errlen, "out of memory");
        free(copy);
        return r;
}

int remote_cfg_init(remote_cfg *rc, const char *submit_hosts, const char *trusted_root_hosts,
                    const char *munge_socket, char *err, size_t errlen) {
        struct passwd *pw = getpwnam("nobody");
        *rc = (remote_cfg){ .nobody_uid = pw ? pw->pw_uid : 65534, .nobody_gid = pw ? pw->pw_gid : 65534 };
        int r = hosts_parse(&rc->submit, "submit_hosts", submit_hosts, err, errlen);
        if (r == 0)
                r = hosts_parse(&rc->trusted, "trusted_root_hosts", trusted_root_hosts, err, errlen);
        if (r == 0 && munge_socket && !(rc->munge_socket = strdup(munge_socket))) {
                snprintf(err, errlen, "out of memory");
                r = -ENOMEM;
        }
        if (r < 0)
                remote_cfg_free(rc);
        return r;
}

void remote_cfg_free(remote_cfg *rc) {
        free(rc->submit.addrs);
        free(rc->trusted.addrs);
        free(rc->munge_socket);
        *rc = (remote_cfg){ 0 };
}

/* The peer's address of fd, as IPv6 and as text. Returns false when it has none. */
static bool peer_of(int fd, struct in6_addr *a, char *text, size_t len) {
        struct sockaddr_storage ss;
        socklen_t sl = sizeof(ss);
        if (getpeername(fd, (struct sockaddr *)&ss, &sl) < 0 || !addr_of((struct sockaddr *)&ss, a))
                return false;
        if (IN6_IS_ADDR_V4MAPPED(a))
                inet_ntop(AF_INET, &a->s6_addr[12], text, (socklen_t)len);
        else
                inet_ntop(AF_INET6, a, text, (socklen_t)len);
        return true;
}

static bool is_loopback(const struct in6_addr *a) {
        return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

/* Whether a is a cluster host that may submit: the controller's own (loopback), one of
 * submit_hosts, or the host of a connected agent. */
static bool may_submit(ctl_server *srv, const struct in6_addr *a) {
        struct in6_addr node;
        char unused[INET6_ADDRSTRLEN];
        if (is_loopback(a) || hosts_have(&srv->remote->submit, a))
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
        if (!peer_of(c->fd, &a, host, sizeof(host)) || !may_submit(srv, &a)) {
                log_warning("remote client fd=%d from %s refused: not a cluster host (submit_hosts)", c->fd, host);
                snprintf(text, sizeof(text), "host %s may not submit", host);
                conn_fail(c, text);
                return;
        }
        cJSON *msg = proto_new("challenge");
        int r = conn_set_deadline(c, REMOTE_AUTH_DEADLINE_MS, "auth");
        if (r == 0)
                r = auth_nonce(c->challenge);
        if (r < 0 || !msg || !cJSON_AddStringToObject(msg, "nonce", c->challenge)) {
                log_errno(LOG_ERR, r < 0 ? r : -ENOMEM, "remote client fd=%d from %s: cannot send a challenge", c->fd, host);
                conn_close(c);
        } else {
                c->input_max = REMOTE_PREAUTH_INPUT_MAX;
                (void)conn_send(c, msg); /* a failure closes the connection */
        }
        cJSON_Delete(msg);
}

/* The first message: an auth whose credential, minted for this connection's nonce, names the
 * user. Anything else is refused with "permission denied" and the connection closed. */
static void authenticate(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const fields[] = { "cred", NULL };
        char err[PROTO_ERRLEN], cerr[CRED_ERRLEN], text[CRED_ERRLEN + 64], host[INET6_ADDRSTRLEN] = "?";
        const char *cred = NULL, *type = proto_type(msg);
        struct in6_addr a;
        uid_t uid;
        gid_t gid;
        int r = -EACCES;
        (void)peer_of(c->fd, &a, host, sizeof(host));
        if (!type || strcmp(type, "auth") != 0 || proto_check_fields(msg, fields, err) < 0 ||
            proto_get_str(msg, "cred", &cred, err) < 0 || !cred)
                snprintf(cerr, sizeof(cerr), "the first message must be an auth with a MUNGE credential");
        else
                r = cred_check(srv->remote->munge_socket, cred, c->challenge, &uid, &gid, cerr);
        if (r < 0) {
                log_warning("remote client fd=%d from %s: %s: %s", c->fd, host,
                            r == -EACCES ? "permission denied" : "cannot check its credential", cerr);
                snprintf(text, sizeof(text), "%s: %s", r == -EACCES ? "permission denied" : "the controller cannot check "
                         "credentials", cerr);
                conn_fail(c, text);
                return;
        }
        /* root on a host not trusted with the cluster is an unprivileged user; root on the
         * controller's own host (loopback) could use the Unix socket and read the store anyway */
        bool squashed = uid == 0 && !is_loopback(&a) && !hosts_have(&srv->remote->trusted, &a);
        if (squashed) {
                uid = srv->remote->nobody_uid;
                gid = srv->remote->nobody_gid;
        }
        log_debug("remote client fd=%d from %s: uid=%u gid=%u%s", c->fd, host, (unsigned)uid, (unsigned)gid,
                  squashed ? " (root squashed)" : "");
        c->uid = uid;
        c->gid = gid;
        c->input_max = 0;
        (void)conn_set_deadline(c, 0, NULL);
        cJSON *welcome = proto_new("welcome");
        if (welcome && (!cJSON_AddNumberToObject(welcome, "uid", uid) || !cJSON_AddNumberToObject(welcome, "gid", gid) ||
                        !cJSON_AddBoolToObject(welcome, "squashed", squashed))) {
                cJSON_Delete(welcome);
                welcome = NULL;
        }
        if (!welcome) {
                conn_fail(c, "out of memory");
                return;
        }
        server_reply(c, welcome);
        client_conn_ops.on_open(c); /* counted against its uid, as on the Unix socket */
}

static void remote_message(conn *c, const cJSON *msg) {
        if (c->uid == (uid_t)-1)
                authenticate(c->owner, c, msg);
        else
                client_conn_ops.on_message(c, msg);
}

/* Whatever it did, the closing connection is released as a local client is. */
static void remote_closed(conn *c) {
        client_conn_ops.on_close(c);
}

const conn_ops remote_conn_ops = { .on_open = remote_opened, .on_message = remote_message,
                                   .on_close = remote_closed, .held = server_output_held, .held_list = server_held_list };
