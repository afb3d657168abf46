/* remote.h - clients on other hosts, on the controller's TCP client listener (client_listen;
 * docs/architecture.md, "Identity from another host"; docs/protocol.md, "Client link").
 *
 * A remote client's host must be allowed (loopback, a connected agent's host, or one of
 * submit_hosts), else it is told "host X may not submit" and closed. The controller then speaks
 * first, with a nonce; the first message back must be an auth carrying a MUNGE credential
 * (cred.h) minted for that nonce; the controller's munged decodes it, which proves the uid and
 * gid on the client's host. uid 0 becomes `nobody` unless the host is one of
 * trusted_root_hosts. Only then is the connection a client like those of the Unix socket
 * (clients.c), with the same requests and limits. */
#pragma once
#include "conn.h"
#include "hostlist.h"
#include "log.h"
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* A remote client has REMOTE_AUTH_DEADLINE_MS to authenticate, in one frame of at most
 * REMOTE_PREAUTH_INPUT_MAX bytes (a credential takes some 300); at most REMOTE_PREAUTH_MAX
 * may be at that stage at once, the rest closed at accept, as on the agent port. */
#define REMOTE_AUTH_DEADLINE_MS  10000
#define REMOTE_PREAUTH_INPUT_MAX 8192
#define REMOTE_PREAUTH_MAX       128

typedef struct remote_cfg {
        char *munge_socket; /* NULL: munge's default */
        hostlist submit;    /* may submit without running an agent */
        hostlist trusted;   /* their root stays root */
        uid_t nobody_uid;   /* what an untrusted host's root becomes */
        gid_t nobody_gid;
} remote_cfg;

/* An auth waiting for munged (remote.c). */
typedef struct remote_auth remote_auth;

/* The client listener's state: its settings (a reload replaces them) and the credentials
 * waiting for the controller's munged, decoded one at a time on a thread of their own, so that
 * a slow or stopped munged (libmunge waits 10 s for an answer) holds up only the clients
 * authenticating, never the loop. */
typedef struct remote_server {
        remote_cfg cfg;
        struct offloop *checker;
        remote_auth **queue; /* in arrival order */
        size_t nqueue;
        remote_auth *inflight;   /* the one the thread decodes; its conn NULL once that closed */
        size_t npreauth;         /* connections not welcomed yet (their input_max is set) */
        log_ratelimit refused;   /* connections refused for REMOTE_PREAUTH_MAX */
        log_ratelimit strangers; /* from hosts that may not submit */
        log_ratelimit denied;    /* credentials refused */
} remote_server;

/* Start rs's checker thread on srv's loop (rs->cfg set; srv->remote is rs). Returns 0 or -errno. */
struct ctl_server;
int remote_server_start(remote_server *rs, struct ctl_server *srv);
/* Wait for the decode in flight, stop the thread, free the queue and rs->cfg. */
void remote_server_stop(remote_server *rs);

/* Fill rc from the config's words: submit_hosts and trusted_root_hosts are lists of host names
 * or addresses separated by spaces or commas (NULL: none), each name resolved now to all its
 * addresses; munge_socket may be NULL. Returns 0, or -EINVAL / -ENOMEM with one line in err
 * ("submit_hosts: cannot resolve 'x': ..."). rc is left empty on failure. */
int remote_cfg_init(remote_cfg *rc, const char *submit_hosts, const char *trusted_root_hosts, const char *munge_socket,
                    char *err, size_t errlen);
/* Free what remote_cfg_init allocated. */
void remote_cfg_free(remote_cfg *rc);

/* Accept-side ops for the TCP client listener (remote.c); the owner is the ctl_server, whose
 * remote member must be started. */
extern const conn_ops remote_conn_ops;
