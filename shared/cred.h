/* cred.h - MUNGE credentials for the client link from another host (docs/architecture.md,
 * "Identity from another host").
 *
 * The client's local munged mints a credential that names the caller's uid and gid (munged
 * takes them from SO_PEERCRED on its own socket) and carries a payload; the controller's
 * munged decodes it once (a second decode is refused as a replay) and only with the cluster's
 * MUNGE key. colony binds each credential to one connection: its payload is
 * CRED_PAYLOAD_PREFIX followed by the nonce the controller sent on that connection. */
#pragma once
#include <stddef.h>
#include <sys/types.h>

#define CRED_ERRLEN         256
#define CRED_PAYLOAD_PREFIX "colony-client "

/* Mint a credential for the calling process's uid and gid through the munged at socket (NULL:
 * munge's default, /run/munge/munge.socket.2) with CRED_PAYLOAD_PREFIX nonce as its payload.
 * Returns 0 and *out (the caller frees it), or -errno with one line in err: -ECONNREFUSED when
 * munged cannot be reached, -EIO for another of munge's errors. */
int cred_mint(const char *socket, const char *nonce, char **out, char err[CRED_ERRLEN]);

/* Decode cred through the munged at socket (NULL: munge's default) and check that its payload
 * is CRED_PAYLOAD_PREFIX nonce. Returns 0 with *uid and *gid, or -EACCES with the reason in err
 * ("credential replayed", "invalid credential", "credential expired", "credential for another
 * connection"...), or -ECONNREFUSED / -EIO when munged could not answer. */
int cred_check(const char *socket, const char *cred, const char *nonce, uid_t *uid, gid_t *gid, char err[CRED_ERRLEN]);
