/* utf8.h - what is valid UTF-8 (RFC 3629): the one check behind colony's refusal of other
 * bytes in messages, its JSON printer, and the escaping of text for terminals and logs. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* The length (1 to 4) of the valid UTF-8 character s starts with, or 0 when s starts with a
 * byte that begins none (a stray continuation byte, an overlong form, a surrogate, a code point
 * above U+10FFFF, a sequence cut short). s is NUL-terminated and *s is not NUL. */
size_t utf8_char_len(const char *s);

/* The offset of the first byte of NUL-terminated s that is not valid UTF-8, or -1 when all
 * of s is valid. */
long utf8_invalid_at(const char *s);

/* The longest C escape of one character ("\u009b") and its NUL. */
#define UTF8_ESCAPE_MAX 8

/* The next piece of s (*s not NUL) as a terminal or a log may show it: s's character itself
 * when it is printable UTF-8, else its C escape written in esc: "\n", "\t", "\r", "\x1b" for a
 * byte (a control character, or one that is not UTF-8), "\u009b" for a C1 character; with
 * in_shell also "\\" and "\'", as bash's $'...' reads them. *piece points at the one or the
 * other (borrowed), *len is its length. Returns how many bytes of s it stands for (>= 1). */
size_t utf8_escape_next(const char *s, bool in_shell, char esc[UTF8_ESCAPE_MAX], const char **piece, size_t *len);

/* Whether s holds a character that utf8_escape_next escapes (in_shell false). */
bool utf8_needs_escape(const char *s);

/* s escaped as utf8_escape_next does (in_shell false) into out, len bytes (> 0), cut after the
 * last whole piece that fits, NUL-terminated. Returns out. */
char *utf8_escape_into(char *out, size_t len, const char *s);
