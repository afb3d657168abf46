/* b64.h - base64 (RFC 4648, with padding), for bytes that travel in JSON: a job's output in the
 * "output" messages (docs/protocol.md), which may be anything, while JSON text must be UTF-8.
 * Our own rather than OpenSSL's, since colony (the CLI) links no libcrypto. */
#pragma once
#include <stddef.h>

/* The encoding of len bytes, NUL-terminated, malloc'ed; NULL when out of memory. */
char *b64_encode(const void *data, size_t len);
/* Decode text into malloc'ed *out (*len bytes; a NUL follows them). Returns 0, -EINVAL (not
 * base64: a length not a multiple of 4, a byte outside the alphabet, padding inside) or -ENOMEM. */
int b64_decode(const char *text, unsigned char **out, size_t *len);
