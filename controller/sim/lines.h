/* lines.h - a trace read line by line as users have it: a file, gzip'd or not, or standard
 * input ("-"). zlib tells the two apart by the gzip magic bytes and reads a plain file as it
 * is, so the loaders (swf.c, google.c) need not know which they were given. */
#pragma once
#include <stddef.h>
#include <zlib.h>

typedef struct sim_lines {
        gzFile gz;
        const char *name; /* the path, or "standard input" for "-": what messages name */
        char *line;       /* the current line, its end of line removed; NUL-terminated */
        size_t len, cap;  /* of line, and its buffer */
        size_t lineno;    /* of line, from 1 */
} sim_lines;

/* Open path ("-": standard input) for reading. Returns 0, or -errno with "path: reason" in err. */
int sim_lines_open(sim_lines *l, const char *path, char *err, size_t errlen);
/* Read the next line into l->line. Returns 1, 0 at the end, or -EIO (a damaged or truncated
 * gzip stream, a read error) / -ENOMEM with what set to the reason. */
int sim_lines_next(sim_lines *l, const char **what);
/* Close the input and free the line, leaving l empty. */
void sim_lines_close(sim_lines *l);
