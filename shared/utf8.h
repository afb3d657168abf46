/* utf8.h - what is valid UTF-8 (RFC 3629): the one check behind colony's refusal of other
 * bytes in messages, its JSON printer and the CLI's escaping of text for terminals. */
#pragma once
#include <stddef.h>

/* The length (1 to 4) of the valid UTF-8 character s starts with, or 0 when s starts with a
 * byte that begins none (a stray continuation byte, an overlong form, a surrogate, a code point
 * above U+10FFFF, a sequence cut short). s is NUL-terminated and *s is not NUL. */
size_t utf8_char_len(const char *s);

/* The offset of the first byte of NUL-terminated s that is not valid UTF-8, or -1 when all
 * of s is valid. */
long utf8_invalid_at(const char *s);
