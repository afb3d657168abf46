/* cred-poke - authenticate to a controller's client listener (remote.h) with credentials made
 * by hand, and print what it answers, for tests of what it refuses.
 *
 *   cred-poke HOST:PORT CA MODE MUNGE_SOCKET     (CA "-": plain TCP)
 *
 * MODE: "mint": a credential from the munged at MUNGE_SOCKET for this connection's nonce (from
 * a munged with another key it is a forgery); "replay": such a credential, accepted on a first
 * connection, sent again on a second; "moved": a credential minted for a first connection's
 * nonce, first sent on a second; "garbage": a credential that is none; "noauth": a submit
 * request in place of the auth. Prints "welcome uid=U gid=G" or "refused: TEXT" for the last
 * connection's answer; exits 0 with an answer, 1 on another failure. */
#include "cred.h"
#include "remotelink.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Open a link and read its nonce. Returns 0 or -errno (printed). */
static int open_one(remote_link *l, const char *addr, const char *ca, char nonce[128]) {
        int r = rlink_open(l, addr, strcmp(ca, "-") == 0 ? NULL : ca, 30000);
        if (r == 0)
                r = rlink_nonce(l, nonce, 128);
        if (r < 0)
                fprintf(stderr, "cred-poke: %s\n", l->err);
        return r;
}

/* Print the answer to an auth with cred on l (r from rlink_auth). */
static int report(remote_link *l, int r) {
        if (r == -EACCES) {
                printf("refused: %s\n", l->err);
                return 0;
        }
        if (r < 0) {
                fprintf(stderr, "cred-poke: %s\n", l->err);
                return 1;
        }
        printf("welcome\n");
        return 0;
}

static char *mint(const char *sock, const char *nonce) {
        char err[CRED_ERRLEN], *cred = NULL;
        if (cred_mint(sock, nonce, &cred, err) < 0)
                fprintf(stderr, "cred-poke: %s\n", err);
        return cred;
}

int main(int argc, char **argv) {
        remote_link a = { .fd = -1 }, b = { .fd = -1 };
        char na[128], nb[128], *cred = NULL;
        int rc = 1;
        if (argc != 5) {
                fprintf(stderr, "usage: cred-poke HOST:PORT CA mint|replay|moved|garbage|noauth MUNGE_SOCKET\n");
                return 2;
        }
        const char *addr = argv[1], *ca = argv[2], *mode = argv[3], *sock = argv[4];
        if (open_one(&a, addr, ca, na) < 0)
                goto out;
        if (strcmp(mode, "mint") == 0) {
                rc = (cred = mint(sock, na)) ? report(&a, rlink_auth(&a, cred)) : 1;
        } else if (strcmp(mode, "garbage") == 0) {
                rc = report(&a, rlink_auth(&a, "MUNGE:bm90IGEgY3JlZGVudGlhbA==:"));
        } else if (strcmp(mode, "noauth") == 0) {
                cJSON *req = proto_new("queue"), *msg = NULL;
                if (req && rlink_send(&a, req) == 0 && rlink_recv(&a, &msg) == 0) {
                        const cJSON *e = cJSON_GetObjectItemCaseSensitive(msg, "error");
                        printf("%s: %s\n", proto_type(msg), cJSON_IsString(e) ? e->valuestring : "");
                        rc = 0;
                }
                cJSON_Delete(req);
                cJSON_Delete(msg);
        } else if (strcmp(mode, "replay") == 0 || strcmp(mode, "moved") == 0) {
                bool replay = strcmp(mode, "replay") == 0;
                if (!(cred = mint(sock, na)) || (replay && report(&a, rlink_auth(&a, cred)) != 0) ||
                    open_one(&b, addr, ca, nb) < 0)
                        goto out;
                rc = report(&b, rlink_auth(&b, cred));
        } else {
                fprintf(stderr, "cred-poke: unknown mode '%s'\n", mode);
                rc = 2;
        }
out:
        free(cred);
        rlink_close(&a);
        rlink_close(&b);
        return rc;
}
