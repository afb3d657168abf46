/* test_certs.h - for the unit tests of TLS: a CA and a server certificate naming localhost (made
 * with openssl(1)) in a fresh directory, certdir, for a Check fixture; and TLS contexts of them. */
#pragma once
#include "check_main.h"
#include "tls.h"
#include <stdio.h>
#include <stdlib.h>

static char certdir[] = "/tmp/test_certs.XXXXXX";

static void certs_up(void) {
        char cmd[1024];
        ck_assert_ptr_nonnull(mkdtemp(certdir));
        snprintf(cmd, sizeof(cmd),
                 "cd %s && openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 "
                 "-keyout ca.key -out ca.pem -subj /CN=ca 2>/dev/null && openssl req -newkey ec -pkeyopt "
                 "ec_paramgen_curve:prime256v1 -nodes -keyout srv.key -out srv.csr -subj /CN=srv 2>/dev/null && "
                 "printf 'subjectAltName=DNS:localhost\\n' >srv.ext && openssl x509 -req -in srv.csr -CA ca.pem "
                 "-CAkey ca.key -CAcreateserial -days 2 -out srv.pem -extfile srv.ext 2>/dev/null",
                 certdir);
        ck_assert_int_eq(system(cmd), 0);
}

static void certs_down(void) {
        char cmd[256];
        snprintf(cmd, sizeof(cmd), "rm -rf %s", certdir);
        ck_assert_int_eq(system(cmd), 0);
}

/* A server context with certdir's certificate and a client context that trusts its CA. */
static void certs_contexts(tls_ctx **server, tls_ctx **client) {
        char cert[128], key[128], ca[128], err[TLS_ERRLEN];
        snprintf(cert, sizeof(cert), "%s/srv.pem", certdir);
        snprintf(key, sizeof(key), "%s/srv.key", certdir);
        snprintf(ca, sizeof(ca), "%s/ca.pem", certdir);
        ck_assert_int_eq(tls_ctx_new_server(&(tls_files){ .cert = cert, .key = key }, server, err), 0);
        ck_assert_int_eq(tls_ctx_new_client(&(tls_files){ .ca = ca }, client, err), 0);
}
