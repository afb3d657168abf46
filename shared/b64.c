/* b64.c - base64 (b64.h). */
#include "b64.h"
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

char *b64_encode(const void *data, size_t len) {
        const unsigned char *in = data;
        char *out = malloc((len + 2) / 3 * 4 + 1), *o = out;

        if (!out)
                return NULL;
        for (size_t i = 0; i < len; i += 3) {
                uint32_t v = (uint32_t)in[i] << 16 | (i + 1 < len ? (uint32_t)in[i + 1] << 8 : 0) |
                             (i + 2 < len ? in[i + 2] : 0);
                *o++ = alphabet[v >> 18];
                *o++ = alphabet[(v >> 12) & 63];
                *o++ = i + 1 < len ? alphabet[(v >> 6) & 63] : '=';
                *o++ = i + 2 < len ? alphabet[v & 63] : '=';
        }
        *o = 0;
        return out;
}

/* The value of base64 digit c, or -1. */
static int digit(char c) {
        const char *p = c ? strchr(alphabet, c) : NULL;
        return p ? (int)(p - alphabet) : -1;
}

int b64_decode(const char *text, unsigned char **out, size_t *len) {
        size_t n = strlen(text), k = 0;
        unsigned char *buf;

        if (n % 4)
                return -EINVAL;
        if (!(buf = malloc(n / 4 * 3 + 1)))
                return -ENOMEM;
        for (size_t i = 0; i < n; i += 4) {
                int d[4], pad = 0;
                for (int j = 0; j < 4; j++) {
                        bool last = i + 4 == n;
                        d[j] = digit(text[i + j]);
                        /* '=' only at the end, as the last one or two */
                        if (d[j] < 0 && last && j >= 2 && text[i + j] == '=' && (j == 3 || text[i + 3] == '=')) {
                                d[j] = 0;
                                pad++;
                        } else if (d[j] < 0 || pad) {
                                free(buf);
                                return -EINVAL;
                        }
                }
                uint32_t v = (uint32_t)d[0] << 18 | (uint32_t)d[1] << 12 | (uint32_t)d[2] << 6 | (uint32_t)d[3];
                buf[k++] = (unsigned char)(v >> 16);
                if (pad < 2)
                        buf[k++] = (unsigned char)(v >> 8);
                if (pad < 1)
                        buf[k++] = (unsigned char)v;
        }
        buf[k] = 0;
        *out = buf;
        *len = k;
        return 0;
}
