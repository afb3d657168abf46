/* fuzz_file.h - hand a fuzz input to a parser that takes a path, as users' files reach it. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* The path of a file holding exactly data[0, size): one memfd per process, rewritten on each
 * call, so no fuzz input touches the disk. The path stays valid until the next call. Aborts when
 * the memfd cannot be made or written: every later verdict would be about the wrong bytes. */
const char *fuzz_file(const uint8_t *data, size_t size);
/* data[0, size) as a malloc'ed string (NUL-terminated; a NUL inside ends it early, as it would
 * for the parser's C caller), for a parser that takes one; NULL when out of memory. */
char *fuzz_string(const uint8_t *data, size_t size);
