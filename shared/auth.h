/* auth.h - how an agent and the controller prove to each other that they hold the cluster
 * secret without sending it: challenge-response with HMAC-SHA256 over fresh nonces.
 *
 *   controller -> agent   challenge {nonce: Nc}
 *   agent -> controller   hello {name, nonce: Na, proof: HMAC(secret, "agent" Nc Na name), ...}
 *   controller -> agent   welcome {proof: HMAC(secret, "controller" Na Nc name), ...}
 *
 * A hello recorded on the wire is worthless on the next connection (Nc is new each time), and
 * an agent learns it talks to the real controller before it obeys a launch. Nonces and proofs
 * travel as lowercase hex. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

#define AUTH_HEX_LEN 64 /* 32 bytes: a nonce or an HMAC-SHA256 */

typedef enum auth_role { AUTH_AGENT, AUTH_CONTROLLER } auth_role;

/* A fresh random nonce (getrandom) as AUTH_HEX_LEN hex digits plus NUL. Returns 0 or -errno. */
int auth_nonce(char out[AUTH_HEX_LEN + 1]);
/* The proof role gives: HMAC-SHA256(secret, role's label, then the nonces, its own peer's
 * first as the table above shows, then name) as hex. Returns 0, -EINVAL (a nonce that is not
 * AUTH_HEX_LEN hex digits) or -EIO. */
int auth_proof(const char *secret, auth_role role, const char *challenge, const char *response_nonce, const char *name,
               char out[AUTH_HEX_LEN + 1]);
/* Whether two strings are equal, in time that does not depend on where they differ. */
bool auth_equal(const char *a, const char *b);
/* Whether s is exactly AUTH_HEX_LEN lowercase hex digits. */
bool auth_hex_ok(const char *s);
