/* units.h - parsing and printing of the sizes users type: "64M", "1.5G", "0.5" cores. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* Parse a byte size: digits with an optional fraction and an optional K, M, G or T suffix
 * (binary: K = 1024; an optional trailing "B" or "iB" is accepted, case-insensitive). A fraction
 * needs a K/M/G/T suffix ("1.5" bytes is -EINVAL); fractions of a byte are truncated.
 * Returns 0 and sets *out, or -EINVAL (malformed, negative) or -ERANGE (above RES_MEM_MAX). */
int units_parse_size(const char *s, int64_t *out);

/* Parse a CPU count: "2", "0.5", "1.25" cores, or "500m" milli-cores, into milli-cores.
 * Zero, negative or more than three decimals give -EINVAL; above RES_MCPU_MAX gives -ERANGE. */
int units_parse_cpus(const char *s, int64_t *out_mcpu);

/* Parse a non-negative decimal integer no larger than max. Returns 0, -EINVAL or -ERANGE. */
int units_parse_uint(const char *s, int64_t max, int64_t *out);

/* Print bytes in the largest binary unit that keeps one decimal ("64.0M", "1.5G", "512B").
 * Returns buf. */
char *units_format_size(int64_t bytes, char *buf, size_t len);

/* Print milli-cores as cores ("0.5", "2", "1.25"). Returns buf. */
char *units_format_cpus(int64_t mcpu, char *buf, size_t len);
