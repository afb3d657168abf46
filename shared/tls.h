/* tls.h - TLS for the controller-agent link, over OpenSSL, on non-blocking sockets.
 *
 * Optional: without a context the link is the plain TCP it always was. The controller has a
 * certificate and key, and optionally a CA that agents' client certificates must chain to;
 * an agent has the CA that the controller's certificate must chain to, and checks that the
 * certificate names the host (DNS name or IP address) it connects to; optionally it has a
 * client certificate and key. TLS 1.2 at least. The HMAC challenge-response (auth.h) runs
 * inside the TLS stream as before: TLS hides and protects the link, the secret proves the
 * agent belongs to the cluster.
 *
 * A tls_conn wraps a connected, non-blocking socket (which stays the caller's to watch and to
 * close). The handshake happens inside the first tls_read or tls_write calls. Either may need
 * the socket to become readable or writable before it can go on, whatever it was asked to do:
 * it then returns -EAGAIN, and tls_wants_write() says whether to wait for writability (else
 * readability). The caller retries both reading and writing on any readiness. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define TLS_ERRLEN 256

typedef struct tls_ctx tls_ctx;
typedef struct tls_conn tls_conn;

/* Where the certificates are (PEM files). NULL members are absent. */
typedef struct tls_files {
        const char *cert; /* this side's certificate (chain) */
        const char *key;  /* its private key */
        const char *ca;   /* the CA(s) the peer's certificate must chain to */
} tls_files;

/* A context for the controller: cert and key are required; with ca, every agent must present
 * a client certificate that chains to it. Returns 0 and *out (tls_ctx_free), or -errno
 * (-EINVAL for a missing setting, -EIO for a file OpenSSL refuses) with err set. */
int tls_ctx_new_server(const tls_files *f, tls_ctx **out, char err[TLS_ERRLEN]);
/* A context for an agent: ca is required; cert and key (both or neither) are its client
 * certificate. Same returns. */
int tls_ctx_new_client(const tls_files *f, tls_ctx **out, char err[TLS_ERRLEN]);
/* Free a context. NULL is fine. */
void tls_ctx_free(tls_ctx *ctx);

/* Wrap the connected fd: as the server of ctx (peer_host NULL), or as a client that checks the
 * server's certificate names peer_host (a DNS name or an IP address literal). Returns 0 and
 * *out (tls_conn_free), or -ENOMEM / -EINVAL. */
int tls_conn_new(tls_ctx *ctx, int fd, const char *peer_host, tls_conn **out);
/* Read up to len bytes of plaintext. Returns the count (> 0), 0 at the peer's orderly end of
 * the stream, -EAGAIN to wait (see tls_wants_write), or -EPROTO / -ECONNRESET / -errno with
 * the reason in tls_conn_error. */
ssize_t tls_read(tls_conn *t, void *buf, size_t len);
/* Write up to len bytes of plaintext (len > 0). Returns the count written (> 0), -EAGAIN to
 * wait, or a negative errno as tls_read. */
ssize_t tls_write(tls_conn *t, const void *buf, size_t len);
/* One non-blocking read or write on fd, through t, or plain when t is NULL (send without
 * SIGPIPE, read): returns as tls_read and tls_write do (a plain socket's errno negated). */
ssize_t tls_io(tls_conn *t, int fd, void *buf, size_t len, bool write);
/* After -EAGAIN: true when the connection waits to write, false when it waits to read. */
bool tls_wants_write(const tls_conn *t);
/* True once the handshake is done (and the peer's certificate verified), even after a later failure. */
bool tls_handshake_done(const tls_conn *t);
/* Why the last call failed, in one line ("handshake failed: certificate verify failed: ..."
 * during the handshake); "" if it did not, or the socket's own error is all there is. */
const char *tls_conn_error(const tls_conn *t);
/* Send the TLS close_notify, once, without waiting (best effort on a non-blocking socket): the
 * peer then reads an orderly end of the stream, not an unexpected EOF it would log. NULL, or a
 * connection whose handshake is not done, is fine (nothing sent). */
void tls_close_notify(tls_conn *t);
/* Free the TLS state (the fd is not closed). NULL is fine. */
void tls_conn_free(tls_conn *t);
