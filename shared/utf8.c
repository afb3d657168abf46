/* utf8.c - UTF-8 validation, strict as RFC 3629 asks. */
#include "utf8.h"
#include <stdint.h>

size_t utf8_char_len(const char *s) {
        const unsigned char *u = (const unsigned char *)s;
        size_t n;
        uint32_t cp;

        if (u[0] < 0x80)
                return 1;
        if (u[0] >= 0xC2 && u[0] <= 0xDF)
                n = 2, cp = u[0] & 0x1F;
        else if (u[0] >= 0xE0 && u[0] <= 0xEF)
                n = 3, cp = u[0] & 0x0F;
        else if (u[0] >= 0xF0 && u[0] <= 0xF4)
                n = 4, cp = u[0] & 0x07;
        else
                return 0; /* a continuation byte, 0xC0/0xC1 (always overlong), or 0xF5 and up */
        for (size_t i = 1; i < n; i++) {
                if ((u[i] & 0xC0) != 0x80) /* also ends at the NUL of a cut sequence */
                        return 0;
                cp = cp << 6 | (u[i] & 0x3F);
        }
        /* the shortest form only; no UTF-16 surrogates; nothing above U+10FFFF */
        if ((n == 3 && cp < 0x800) || (n == 4 && cp < 0x10000) || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
                return 0;
        return n;
}

long utf8_invalid_at(const char *s) {
        for (const char *p = s; *p;) {
                size_t n = utf8_char_len(p);
                if (n == 0)
                        return (long)(p - s);
                p += n;
        }
        return -1;
}
