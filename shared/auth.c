/* auth.c - challenge-response with HMAC-SHA256 (auth.h), on OpenSSL's libcrypto: hand-written
 * SHA-256 would be one more thing to get wrong, and libcrypto is on every Debian host. */
#include "auth.h"
#include <errno.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <string.h>
#include <sys/random.h>

static const char hex_digits[] = "0123456789abcdef";

static void to_hex(const unsigned char *b, size_t n, char *out) {
        for (size_t i = 0; i < n; i++) {
                out[2 * i] = hex_digits[b[i] >> 4];
                out[2 * i + 1] = hex_digits[b[i] & 15];
        }
        out[2 * n] = 0;
}

bool auth_hex_ok(const char *s) {
        size_t n = 0;
        for (; s && s[n]; n++)
                if (!strchr(hex_digits, s[n]))
                        return false;
        return n == AUTH_HEX_LEN;
}

int auth_nonce(char out[AUTH_HEX_LEN + 1]) {
        unsigned char b[AUTH_HEX_LEN / 2];
        size_t got = 0;
        while (got < sizeof(b)) {
                ssize_t n = getrandom(b + got, sizeof(b) - got, 0);
                if (n < 0 && errno != EINTR)
                        return -errno;
                got += n > 0 ? (size_t)n : 0;
        }
        to_hex(b, sizeof(b), out);
        return 0;
}

int auth_proof(const char *secret, auth_role role, const char *challenge, const char *response_nonce, const char *name,
               char out[AUTH_HEX_LEN + 1]) {
        const char *label = role == AUTH_AGENT ? "colony agent v1" : "colony controller v1";
        /* Each side signs the other's nonce first, so a proof never answers its own challenge. */
        const char *first = role == AUTH_AGENT ? challenge : response_nonce;
        const char *second = role == AUTH_AGENT ? response_nonce : challenge;
        unsigned char msg[32 + 2 * AUTH_HEX_LEN + 256], mac[EVP_MAX_MD_SIZE];
        unsigned int maclen = 0;
        size_t len = strlen(label) + 1, nlen = strlen(name);

        if (!auth_hex_ok(challenge) || !auth_hex_ok(response_nonce) || nlen > 255)
                return -EINVAL;
        memcpy(msg, label, len); /* with its NUL: the fields cannot run into each other */
        memcpy(msg + len, first, AUTH_HEX_LEN);
        memcpy(msg + len + AUTH_HEX_LEN, second, AUTH_HEX_LEN);
        memcpy(msg + len + 2 * AUTH_HEX_LEN, name, nlen);
        len += 2 * AUTH_HEX_LEN + nlen;
        if (!HMAC(EVP_sha256(), secret, (int)strlen(secret), msg, len, mac, &maclen) || maclen != AUTH_HEX_LEN / 2)
                return -EIO;
        to_hex(mac, maclen, out);
        return 0;
}

bool auth_equal(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        unsigned char diff = la != lb;
        for (size_t i = 0; i < la; i++)
                diff |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
        return diff == 0;
}
