/* ctlink.h - the agent's connection to the controller, kept alive in an sd-event loop.
 *
 * The link connects, answers the controller's challenge with the caller's hello (to which it
 * adds the proof that it knows the secret), waits for welcome, then sends a heartbeat every
 * heartbeat_ms. It reconnects after a failed connect, a refused hello or a lost connection, with
 * exponential backoff from 100 ms to 5 s. Messages are queued on a non-blocking socket; those
 * sent as "reliable" (started, finished) that could not be written whole before the connection
 * went away, or that were produced while it was down, are sent after the next welcome, in order. */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>
#include "tls.h"

typedef struct ctlink ctlink;

typedef struct ctlink_ops {
        /* The hello to send on each new connection; the link frees it. NULL means out of memory. */
        cJSON *(*hello)(void *userdata);
        /* The controller accepted the hello. */
        void (*ready)(void *userdata);
        /* A message from the controller other than welcome or error; valid only during the call. */
        void (*message)(const cJSON *msg, void *userdata);
        /* The controller refused the hello in a way retrying cannot fix (wrong secret). */
        void (*fatal)(const char *reason, void *userdata);
        /* A frame queued by ctlink_send_tracked was written whole to the socket. Optional. */
        void (*written)(uint64_t tag, void *userdata);
} ctlink_ops;

/* Create a link to hostport ("host:port") driven by loop e; it first connects at once. Its
 * hello proves that agent name holds secret, and a welcome that does not prove the same of the
 * controller is fatal (auth.h). With tls (a client context, tls.h) the link runs over TLS and
 * the controller's certificate must name tls_host, or the host part of hostport when tls_host
 * is NULL. ops, userdata and tls are borrowed for the link's life; the strings are copied.
 * Returns 0 or -errno. */
int ctlink_new(sd_event *e, const char *hostport, const char *name, const char *secret, tls_ctx *tls,
               const char *tls_host, const ctlink_ops *ops, void *userdata, ctlink **out);
/* True between welcome and the next disconnect. */
bool ctlink_is_ready(const ctlink *l);
/* Queue msg (not consumed). Unreliable messages are dropped unless the link is ready; reliable
 * ones are kept across disconnects. Returns 0, -ENOTCONN (unreliable, dropped), -ENOMEM or
 * -EMSGSIZE. */
int ctlink_send(ctlink *l, const cJSON *msg, bool reliable);
/* ctlink_send(l, msg, true), and once the frame has been written whole, ops->written(tag)
 * (tag > 0): what the sender kept on disk for the message may go then. Never called for a
 * frame still queued when the link is freed. */
int ctlink_send_tracked(ctlink *l, const cJSON *msg, uint64_t tag);
/* Write out the queue, blocking for at most timeout_ms (for a last report before exit).
 * Returns 0 when everything was written, -ENOTCONN, -ETIMEDOUT, or the socket's -errno. */
int ctlink_flush(ctlink *l, int timeout_ms);
/* Close the connection and free the link and its queues. NULL is fine. */
void ctlink_free(ctlink *l);
