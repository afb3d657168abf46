/* format.h - how the CLI shows things to people: durations, times, signals, command lines and
 * column-aligned tables. Sizes and CPUs are printed with units_format_size/units_format_cpus. */
#pragma once
#include "psi.h"
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define FMT_BUF 64 /* enough for every fmt_* result that goes into a caller's buffer */

/* A duration: "0.4 s", "12.3 s", "3m05s", "2h03m", "3d04h"; "-" when negative. Returns buf. */
char *fmt_duration(int64_t usec, char *buf, size_t len);
/* Microseconds since the epoch as local ISO 8601 time with the UTC offset
 * ("2024-11-23T08:30:01+01:00"); "-" for 0. Returns buf. */
char *fmt_time(int64_t usec, char *buf, size_t len);
/* "SIGKILL", or "signal 70" for a number libc has no name for. Returns buf. */
char *fmt_signal(int sig, char *buf, size_t len);
/* argv as one shell-quoted line (malloc'ed; caller frees), or NULL when out of memory. An
 * argument with a control character is quoted as bash's $'...' with C escapes. */
char *fmt_argv(char *const *argv);
/* s (NULL: "") as a terminal may show it: control characters and bytes that are not UTF-8 as
 * C escapes ("\n", "\x1b", "\u009b" for C1), so that a job's name or argv cannot move the
 * cursor, recolour or retitle the terminal of whoever lists it. Backslashes stay as they are.
 * Malloc'ed (caller frees); NULL when out of memory. */
char *fmt_escape(const char *s);
/* printf fmt to f as one line (a newline is added) escaped as fmt_escape escapes: for every
 * line of human output that holds strings users gave (names, argv, paths, errors). */
void fmt_line(FILE *f, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The "some" 10-second pressure of cpu, memory and io in percent, joined by sep:
 * "12.5/0.0/3.1"; "-" when not known. Returns buf. */
char *fmt_psi(const psi_stats *p, const char *sep, char *buf, size_t len);

#define FMT_TABLE_MAX_COLS 16

/* A table printed with each column as wide as its widest cell (header included). */
typedef struct fmt_table {
        size_t ncols, nrows, cap; /* rows counted with the header row */
        char **cells;             /* nrows * ncols copies */
} fmt_table;

/* Start a table with ncols (1..FMT_TABLE_MAX_COLS) columns and these headers. Returns 0,
 * -EINVAL or -ENOMEM. */
int fmt_table_init(fmt_table *t, size_t ncols, const char *const *headers);
/* Append a row of t->ncols strings (copied, escaped as fmt_escape escapes; NULL prints as
 * "-"). Returns 0 or -ENOMEM. */
int fmt_table_row(fmt_table *t, ...);
/* Print header and rows to f, columns separated by two spaces, no trailing blanks. */
void fmt_table_print(const fmt_table *t, FILE *f);
/* Free the cells. */
void fmt_table_free(fmt_table *t);

struct cJSON;
/* Print a JSON value, indented, with a newline, to stdout. Returns 0 or -ENOMEM. */
int fmt_json(const struct cJSON *value);

/* Print text to f word-wrapped at width columns: lead ("* ") before the first line, the others
 * indented as far, each line ending in a newline. */
void fmt_wrap(FILE *f, const char *lead, const char *text, int width);
