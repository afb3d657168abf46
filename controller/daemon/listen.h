/* listen.h - colony-controller's listeners: clients on the Unix socket, agents on TCP (TLS when
 * configured), clients of other hosts (remote.h), and the HTTP side. Each accepted socket becomes
 * a conn (conn.h) with its listener's ops. */
#pragma once
#include "options.h"
#include "remote.h"
#include "server.h"

/* How long a listener rests when the process or the system is out of descriptors (or memory):
 * the pending connection stays in the backlog, so the listener's readiness would otherwise make
 * every turn of the loop fail the same accept. */
#define ACCEPT_BACKOFF_MS 250

typedef struct listener {
        ctl_server *srv;
        const conn_ops *ops;
        const char *what;
        tls_ctx *tls;                /* NULL: plain */
        sd_event_source *src, *rest; /* the listening socket; the timer that ends a backoff */
        log_ratelimit accept_failed;
} listener;

/* Bind the client and agent listeners into ls[0] and ls[1] (the agent one with TLS when
 * o->tls_cert is set), and the HTTP one when o->http_listen is set, and write the port files.
 * Returns 0 or -errno (logged). */
int listen_open(ctl_server *srv, const options *o, listener ls[2]);
/* The TCP client listener for other hosts, when client_listen is set: TLS when the controller has
 * a certificate (clients are not asked for one: their MUNGE credential says who they are). rs
 * becomes srv->remote. Returns 0 or -errno (logged). */
int listen_open_remote(ctl_server *srv, const options *o, listener *l, remote_server *rs);
