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

/* The smallest memory limit a job may ask for: below it a job cannot even start its program. */
#define UNITS_MEM_MIN ((int64_t)1 << 20)
/* Parse a job's memory limit as Slurm users type it: a bare number is MiB ("4096" is 4 GiB),
 * else as units_parse_size ("512M", "2G", "1073741824B"). Returns 0 and sets *out (bytes), or
 * -EINVAL (malformed), -ERANGE (above RES_MEM_MAX) or -EDOM (below UNITS_MEM_MIN). */
int units_parse_mem(const char *s, int64_t *out);

/* The longest time limit: a year, so that start + limit never overflows microseconds. */
#define UNITS_TIME_MAX_USEC ((int64_t)366 * 24 * 3600 * 1000000)
/* Parse a time limit in Slurm's forms: "M" minutes, "M:S", "H:M:S", "D-H", "D-H:M", "D-H:M:S";
 * "0", "UNLIMITED" and "INFINITE" (any case) mean none and give 0. Returns 0 and sets *out_usec,
 * or -EINVAL (malformed) or -ERANGE (longer than UNITS_TIME_MAX_USEC). */
int units_parse_time(const char *s, int64_t *out_usec);
/* A time limit or span as Slurm prints it: "M:SS", "H:MM:SS", "D-HH:MM:SS"; "UNLIMITED" for 0.
 * Returns buf. */
char *units_format_time(int64_t usec, char *buf, size_t len);
