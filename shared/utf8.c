/* utf8.c - UTF-8 validation, strict as RFC 3629 asks. */
#include "utf8.h"
#include <stdint.h>
#include <stdio.h>
#include <string.h>

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

/* The length of the character at s when a terminal may show it as it is, else 0: control
 * characters (C0, DEL, C1) move the cursor, recolour or retitle the terminal (or forge a log
 * line), and bytes that are not UTF-8 are not text. */
static size_t printable_len(const char *s) {
        unsigned char b = (unsigned char)*s;
        size_t n = utf8_char_len(s);

        if (b < 0x20 || b == 0x7f || n == 0 || (b == 0xC2 && (unsigned char)s[1] < 0xA0))
                return 0;
        return n;
}

size_t utf8_escape_next(const char *s, bool in_shell, char esc[UTF8_ESCAPE_MAX], const char **piece, size_t *len) {
        static const char specials[] = "\n\t\r", names[] = "ntr";
        size_t n = printable_len(s), eaten = 1;
        const char *named = strchr(specials, *s);
        int w;

        if (in_shell && (*s == '\\' || *s == '\'')) {
                w = snprintf(esc, UTF8_ESCAPE_MAX, "\\%c", *s);
        } else if (n > 0) {
                *piece = s;
                *len = n;
                return n;
        } else if (named) {
                w = snprintf(esc, UTF8_ESCAPE_MAX, "\\%c", names[named - specials]);
        } else if (utf8_char_len(s) == 2) { /* C1 */
                w = snprintf(esc, UTF8_ESCAPE_MAX, "\\u%04x",
                             ((unsigned)(unsigned char)s[0] & 0x1F) << 6 | ((unsigned char)s[1] & 0x3F));
                eaten = 2;
        } else {
                w = snprintf(esc, UTF8_ESCAPE_MAX, "\\x%02x", (unsigned char)*s);
        }
        *piece = esc;
        *len = (size_t)w;
        return eaten;
}

bool utf8_needs_escape(const char *s) {
        for (size_t n; *s; s += n)
                if (!(n = printable_len(s)))
                        return true;
        return false;
}

char *utf8_escape_into(char *out, size_t len, const char *s) {
        size_t used = 0;
        while (*s) {
                char esc[UTF8_ESCAPE_MAX];
                const char *piece;
                size_t plen, eaten = utf8_escape_next(s, false, esc, &piece, &plen);
                if (used + plen >= len)
                        break;
                memcpy(out + used, piece, plen);
                used += plen;
                s += eaten;
        }
        out[used] = '\0';
        return out;
}
