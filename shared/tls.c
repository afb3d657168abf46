/* tls.c - TLS over OpenSSL for the controller-agent link (see tls.h). */
#include "tls.h"
#include <arpa/inet.h>
#include <errno.h>
#include <openssl/err.h>
#include <openssl/ssl.h>
#include <openssl/x509v3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

struct tls_ctx {
        SSL_CTX *ssl;
        bool server;
};

struct tls_conn {
        SSL *ssl;
        bool want_write;
        char error[TLS_ERRLEN];
        bool handshaken; /* the handshake ended: OpenSSL's state is "in init" again after any fatal error */
};

/* OpenSSL's word that the handshake is done, kept (see handshaken). */
static void on_info(const SSL *ssl, int where, int ret) {
        (void)ret;
        if (where & SSL_CB_HANDSHAKE_DONE)
                ((tls_conn *)SSL_get_app_data(ssl))->handshaken = true;
}

/* The oldest OpenSSL error on the queue as text, the queue then cleared. */
static void openssl_reason(char *buf, size_t len, const char *fallback) {
        unsigned long e = ERR_peek_error();
        const char *reason = e ? ERR_reason_error_string(e) : NULL;
        snprintf(buf, len, "%s", reason ? reason : fallback);
        ERR_clear_error();
}

/* Load this side's certificate and key when given (both or neither). Returns 0 or -errno. */
static int load_identity(SSL_CTX *ssl, const tls_files *f, char err[TLS_ERRLEN]) {
        char why[128];
        if (!f->cert != !f->key) {
                snprintf(err, TLS_ERRLEN, "a TLS certificate needs its key and a key its certificate");
                return -EINVAL;
        }
        if (!f->cert)
                return 0;
        if (SSL_CTX_use_certificate_chain_file(ssl, f->cert) != 1) {
                openssl_reason(why, sizeof(why), "unreadable");
                snprintf(err, TLS_ERRLEN, "TLS certificate %s: %s", f->cert, why);
                return -EIO;
        }
        if (SSL_CTX_use_PrivateKey_file(ssl, f->key, SSL_FILETYPE_PEM) != 1 || SSL_CTX_check_private_key(ssl) != 1) {
                openssl_reason(why, sizeof(why), "unreadable");
                snprintf(err, TLS_ERRLEN, "TLS key %s: %s", f->key, why);
                return -EIO;
        }
        return 0;
}

static int load_ca(SSL_CTX *ssl, const char *ca, char err[TLS_ERRLEN]) {
        char why[128];
        if (SSL_CTX_load_verify_locations(ssl, ca, NULL) == 1)
                return 0;
        openssl_reason(why, sizeof(why), "unreadable");
        snprintf(err, TLS_ERRLEN, "TLS CA %s: %s", ca, why);
        return -EIO;
}

static int ctx_new(bool server, const tls_files *f, tls_ctx **out, char err[TLS_ERRLEN]) {
        tls_ctx *c = calloc(1, sizeof(*c));
        int r = -ENOMEM;
        if (c)
                c->ssl = SSL_CTX_new(server ? TLS_server_method() : TLS_client_method());
        if (!c || !c->ssl) {
                snprintf(err, TLS_ERRLEN, "out of memory");
                goto fail;
        }
        c->server = server;
        /* Partial writes: a frame is written as the socket takes it, from a buffer that may move
         * between calls (the caller's output queue). */
        SSL_CTX_set_mode(c->ssl, SSL_MODE_ENABLE_PARTIAL_WRITE | SSL_MODE_ACCEPT_MOVING_WRITE_BUFFER);
        SSL_CTX_set_options(c->ssl, SSL_OP_NO_RENEGOTIATION);
        if (SSL_CTX_set_min_proto_version(c->ssl, TLS1_2_VERSION) != 1) {
                snprintf(err, TLS_ERRLEN, "TLS 1.2 is not available");
                r = -EINVAL;
                goto fail;
        }
        if ((r = load_identity(c->ssl, f, err)) < 0 || (f->ca && (r = load_ca(c->ssl, f->ca, err)) < 0))
                goto fail;
        if (f->ca)
                SSL_CTX_set_verify(c->ssl, SSL_VERIFY_PEER | (server ? SSL_VERIFY_FAIL_IF_NO_PEER_CERT : 0), NULL);
        *out = c;
        return 0;
fail:
        tls_ctx_free(c);
        return r;
}

int tls_ctx_new_server(const tls_files *f, tls_ctx **out, char err[TLS_ERRLEN]) {
        if (!f->cert || !f->key) {
                snprintf(err, TLS_ERRLEN, "TLS on the agent listener needs a certificate and its key");
                return -EINVAL;
        }
        return ctx_new(true, f, out, err);
}

int tls_ctx_new_client(const tls_files *f, tls_ctx **out, char err[TLS_ERRLEN]) {
        if (!f->ca) {
                snprintf(err, TLS_ERRLEN, "TLS to the controller needs the CA its certificate must chain to");
                return -EINVAL;
        }
        return ctx_new(false, f, out, err);
}

void tls_ctx_free(tls_ctx *ctx) {
        if (!ctx)
                return;
        SSL_CTX_free(ctx->ssl);
        free(ctx);
}

/* Make the client check that the server's certificate names host (an IP literal or a name). */
static int expect_host(SSL *ssl, const char *host) {
        unsigned char addr[sizeof(struct in6_addr)];
        if (inet_pton(AF_INET, host, addr) == 1 || inet_pton(AF_INET6, host, addr) == 1)
                return X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host) == 1 ? 0 : -EINVAL;
        return SSL_set_tlsext_host_name(ssl, host) == 1 && SSL_set1_host(ssl, host) == 1 ? 0 : -EINVAL;
}

int tls_conn_new(tls_ctx *ctx, int fd, const char *peer_host, tls_conn **out) {
        tls_conn *t = calloc(1, sizeof(*t));
        int r = -ENOMEM;
        if (!t || !(t->ssl = SSL_new(ctx->ssl)))
                goto fail;
        r = -EINVAL;
        if (SSL_set_fd(t->ssl, fd) != 1 || (!ctx->server && (!peer_host || expect_host(t->ssl, peer_host) < 0)))
                goto fail;
        SSL_set_app_data(t->ssl, t);
        SSL_set_info_callback(t->ssl, on_info);
        if (ctx->server)
                SSL_set_accept_state(t->ssl);
        else
                SSL_set_connect_state(t->ssl);
        *out = t;
        return 0;
fail:
        ERR_clear_error();
        tls_conn_free(t);
        return r;
}

/* Turn a failed SSL_read/SSL_write into tls.h's returns, keeping the reason. */
static ssize_t failed(tls_conn *t, int ret) {
        int e = SSL_get_error(t->ssl, ret), saved = errno;
        long verify = SSL_get_verify_result(t->ssl);
        switch (e) {
        case SSL_ERROR_WANT_READ: t->want_write = false; return -EAGAIN;
        case SSL_ERROR_WANT_WRITE: t->want_write = true; return -EAGAIN;
        case SSL_ERROR_ZERO_RETURN: return 0;
        case SSL_ERROR_SYSCALL:
                if (ERR_peek_error() == 0) {
                        snprintf(t->error, sizeof(t->error), "%s", saved ? strerror(saved) : "connection closed");
                        return saved ? -saved : -ECONNRESET;
                }
                break;
        }
        char why[TLS_ERRLEN - 32];
        if (verify != X509_V_OK) {
                snprintf(why, sizeof(why), "certificate verify failed: %s", X509_verify_cert_error_string(verify));
                ERR_clear_error();
        } else
                openssl_reason(why, sizeof(why), "protocol error");
        snprintf(t->error, sizeof(t->error), "%s%s", t->handshaken ? "" : "handshake failed: ", why);
        return -EPROTO;
}

ssize_t tls_read(tls_conn *t, void *buf, size_t len) {
        size_t n = 0;
        ERR_clear_error();
        t->error[0] = '\0';
        int ret = SSL_read_ex(t->ssl, buf, len, &n);
        return ret == 1 ? (ssize_t)n : failed(t, ret);
}

ssize_t tls_write(tls_conn *t, const void *buf, size_t len) {
        size_t n = 0;
        ERR_clear_error();
        t->error[0] = '\0';
        int ret = SSL_write_ex(t->ssl, buf, len, &n);
        ssize_t r = ret == 1 ? (ssize_t)n : failed(t, ret);
        if (r == 0)
                snprintf(t->error, sizeof(t->error), "the peer closed the TLS stream");
        return r == 0 ? -ECONNRESET : r;
}

ssize_t tls_io(tls_conn *t, int fd, void *buf, size_t len, bool write) {
        if (t)
                return write ? tls_write(t, buf, len) : tls_read(t, buf, len);
        ssize_t n = write ? send(fd, buf, len, MSG_NOSIGNAL | MSG_DONTWAIT) : read(fd, buf, len);
        return n < 0 ? -errno : n;
}

bool tls_wants_write(const tls_conn *t) { return t->want_write; }

bool tls_handshake_done(const tls_conn *t) { return t->handshaken; }

const char *tls_conn_error(const tls_conn *t) { return t->error; }

void tls_close_notify(tls_conn *t) {
        if (t && SSL_is_init_finished(t->ssl))
                (void)SSL_shutdown(t->ssl);
        ERR_clear_error();
}

void tls_conn_free(tls_conn *t) {
        if (!t)
                return;
        SSL_free(t->ssl);
        free(t);
}
