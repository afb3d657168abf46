/* cred.c - MUNGE credentials bound to one connection (see cred.h). */
#include "cred.h"
#include <errno.h>
#include <munge.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A context that talks to the munged at socket (NULL: the default one). */
static munge_ctx_t ctx_for(const char *socket) {
        munge_ctx_t ctx = munge_ctx_create();
        if (ctx && socket && munge_ctx_set(ctx, MUNGE_OPT_SOCKET, socket) != EMUNGE_SUCCESS) {
                munge_ctx_destroy(ctx);
                return NULL;
        }
        return ctx;
}

/* munge's error as -errno: the daemon unreachable, or anything else. */
static int munge_errno(munge_err_t e) {
        return e == EMUNGE_SOCKET ? -ECONNREFUSED : e == EMUNGE_NO_MEMORY ? -ENOMEM : -EIO;
}

int cred_mint(const char *socket, const char *nonce, char **out, char err[CRED_ERRLEN]) {
        char payload[256];
        int n = snprintf(payload, sizeof(payload), "%s%s", CRED_PAYLOAD_PREFIX, nonce);
        munge_ctx_t ctx = ctx_for(socket);
        char *cred = NULL;
        if (n < 0 || (size_t)n >= sizeof(payload) || !ctx) {
                munge_ctx_destroy(ctx);
                snprintf(err, CRED_ERRLEN,
                         n < 0 || (size_t)n >= sizeof(payload) ? "the controller's nonce is too long"
                                                               : "out of memory");
                return n < 0 || (size_t)n >= sizeof(payload) ? -EINVAL : -ENOMEM;
        }
        munge_err_t e = munge_encode(&cred, ctx, payload, n);
        if (e != EMUNGE_SUCCESS)
                snprintf(err, CRED_ERRLEN, "munge: %s",
                         munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(e));
        munge_ctx_destroy(ctx);
        if (e != EMUNGE_SUCCESS)
                return munge_errno(e);
        *out = cred;
        return 0;
}

int cred_check(const char *socket, const char *cred, const char *nonce, uid_t *uid, gid_t *gid, char err[CRED_ERRLEN]) {
        munge_ctx_t ctx = ctx_for(socket);
        void *payload = NULL;
        int len = 0, r = 0;
        if (!ctx) {
                snprintf(err, CRED_ERRLEN, "out of memory");
                return -ENOMEM;
        }
        munge_err_t e = munge_decode(cred, ctx, &payload, &len, uid, gid);
        size_t plen = strlen(CRED_PAYLOAD_PREFIX);
        if (e == EMUNGE_SUCCESS) {
                if (len < 0 || (size_t)len != plen + strlen(nonce) || memcmp(payload, CRED_PAYLOAD_PREFIX, plen) != 0 ||
                    memcmp((char *)payload + plen, nonce, strlen(nonce)) != 0) {
                        snprintf(err, CRED_ERRLEN, "credential for another connection or purpose");
                        r = -EACCES;
                }
        } else if (e == EMUNGE_SOCKET || e == EMUNGE_NO_MEMORY || e == EMUNGE_SNAFU) {
                snprintf(err, CRED_ERRLEN, "munge: %s",
                         munge_ctx_strerror(ctx) ? munge_ctx_strerror(ctx) : munge_strerror(e));
                r = munge_errno(e);
        } else { /* invalid, expired, rewound, replayed, unauthorized, a bad cipher or MAC... */
                snprintf(err, CRED_ERRLEN, "%s", munge_strerror(e));
                r = -EACCES;
        }
        free(payload);
        munge_ctx_destroy(ctx);
        return r;
}
