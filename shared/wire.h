/* wire.h - one framed, non-blocking stream socket, plain or TLS (tls.h): the transport that the
 * controller's connections (conn.c) and the agent's link (ctlink.c) share.
 *
 * It reads into a proto_reader and writes spans of bytes, keeping what the last TLS call waits
 * for, so that the owner knows which events to poll. With TLS a read may wait for writability
 * and a write for input, so the owner retries both on any readiness. Queues, handshakes, caps
 * and logging stay with the owner: it logs wire_tls_error after a failure as it sees fit. */
#pragma once
#include "proto.h"
#include "tls.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#define WIRE_READ_CHUNK 65536 /* bytes one read asks for */

typedef struct wire {
        int fd;           /* the owner's: watched by it, closed by wire_close */
        tls_conn *tls;    /* NULL: plain */
        bool wants_out;   /* the last TLS call waits for writability */
        bool write_waits; /* the last TLS write waits for input */
} wire;

/* Wrap the connected, non-blocking fd: plain when ctx is NULL, else through TLS as ctx's server
 * (peer_host NULL) or as a client that checks the server's certificate names peer_host.
 * Returns 0, or -ENOMEM / -EINVAL (w is then plain: wire_close still closes fd). */
int wire_init(wire *w, int fd, tls_ctx *ctx, const char *peer_host);
/* Free the TLS state and close the fd (if >= 0); w is then empty (fd -1). */
void wire_close(wire *w);
/* The epoll events to wait for: EPOLLIN always, EPOLLOUT when out (the owner's output waits for
 * writability) or when the last TLS call waits for it. */
uint32_t wire_events(const wire *w, bool out);
/* Read what the peer sent into r: with TLS until OpenSSL has nothing left (what it decrypted and
 * buffered would never wake the loop), plain until a short read or after bound bytes (fairness
 * to other peers). With frame_max > 0, stops too once r's next frame announces more than
 * frame_max bytes or r holds more than one such frame (see wire_over). Returns 1 when the
 * peer ended the stream (what came before is in r), 0 when it has nothing more for now, or
 * -errno: the read's (-EPROTO: TLS, see wire_tls_error) or -ENOMEM. */
int wire_fill(wire *w, proto_reader *r, size_t bound, size_t frame_max);
/* Whether r's next frame announces more than frame_max bytes, or r holds more than one such
 * frame: the peer sent more than one message of at most frame_max. */
bool wire_over(const proto_reader *r, size_t frame_max);
/* Write as much of buf[0..len) as the socket takes. Returns the count (less than len: wait for
 * wire_events), or -errno when the connection is broken. */
ssize_t wire_write(wire *w, const char *buf, size_t len);
/* Why the last TLS call failed, to log; NULL without TLS, after a success or -EAGAIN, or when
 * the socket's errno is all there is. */
const char *wire_tls_error(const wire *w);
