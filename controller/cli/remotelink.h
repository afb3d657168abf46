/* remotelink.h - the client's side of a connection to a controller on another host, up to the
 * welcome (docs/protocol.md, "Client link"): TCP, TLS when a CA is given, the controller's
 * nonce, the auth with a MUNGE credential. Blocking, each step within the link's deadline.
 * colony-connect uses it, and the tests' poker, which sends credentials of its own making. */
#pragma once
#include "log.h"
#include "proto.h"
#include "tls.h"
#include <cjson/cJSON.h>
#include <stdint.h>

typedef struct remote_link {
        int fd; /* non-blocking; -1 when closed */
        tls_ctx *ctx;
        tls_conn *tls;       /* NULL: plain TCP */
        proto_reader reader; /* what came with the welcome and after it stays here */
        const char *addr;    /* "host:port", borrowed */
        int64_t deadline_ms; /* CLOCK_MONOTONIC */
        char err[ERRLEN];    /* one line on the last failure */
} remote_link;

/* Connect to addr ("host:port") within timeout_ms for the whole exchange up to the welcome, over
 * TLS checking the controller's certificate against ca and the host's name when ca is not NULL.
 * Returns 0, or -errno with l->err set (rlink_close l either way). */
int rlink_open(remote_link *l, const char *addr, const char *ca, int timeout_ms);
/* Read the controller's challenge and copy its nonce into nonce. Returns 0, or -EACCES with the
 * controller's words in l->err ("host X may not submit"), or another -errno. */
int rlink_nonce(remote_link *l, char *nonce, size_t len);
/* Send an auth with cred and read the answer. Returns 0 on the welcome, -EACCES with the
 * controller's refusal in l->err ("permission denied: ..."), or another -errno. */
int rlink_auth(remote_link *l, const char *cred);
/* Send msg / read the next message (*msg the caller's), before the deadline. Return 0 or -errno
 * (l->err set). */
int rlink_send(remote_link *l, const cJSON *msg);
int rlink_recv(remote_link *l, cJSON **msg);
/* The poll events the link's last -EAGAIN waits for (dflt on plain TCP). */
short rlink_wants(const remote_link *l, short dflt);
/* Free everything and close the socket. */
void rlink_close(remote_link *l);
