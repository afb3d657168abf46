/* lines.c - traces read line by line through zlib (see lines.h). */
#include "lines.h"
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define READ_BUFFER (256 * 1024) /* zlib's input buffer: its default 8 KiB costs a read(2) per 8 KiB */

int sim_lines_open(sim_lines *l, const char *path, char *err, size_t errlen) {
        bool in = strcmp(path, "-") == 0;
        *l = (sim_lines){ .name = in ? "standard input" : path };
        /* gzclose closes the descriptor: standard input is read through a copy of it */
        int fd = in ? fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 3) : open(path, O_RDONLY | O_CLOEXEC);
        if (fd < 0 || !(l->gz = gzdopen(fd, "rb"))) {
                int r = fd < 0 ? -errno : -ENOMEM;
                if (fd >= 0)
                        close(fd);
                snprintf(err, errlen, "%s: %s", l->name, strerror(-r));
                return r;
        }
        gzbuffer(l->gz, READ_BUFFER);
        return 0;
}

/* Make room for at least one more byte after len, and its NUL. Returns 0 or -ENOMEM. */
static int grow(sim_lines *l) {
        if (l->cap - l->len >= 2)
                return 0;
        size_t cap = l->cap ? l->cap * 2 : 4096;
        char *p = realloc(l->line, cap);
        if (!p)
                return -ENOMEM;
        l->line = p;
        l->cap = cap;
        return 0;
}

/* Whether the stream failed (a damaged or truncated gzip stream, a read error), with what set. */
static bool failed(sim_lines *l, const char **what) {
        int code;
        const char *msg = gzerror(l->gz, &code);
        if (code == Z_OK)
                return false;
        const char *colon = strstr(msg, ": "); /* past zlib's "<fd:3>: " */
        *what = code == Z_ERRNO ? strerror(errno) : colon ? colon + 2 : msg;
        return true;
}

int sim_lines_next(sim_lines *l, const char **what) {
        l->len = 0;
        for (;;) {
                if (grow(l) < 0) {
                        *what = "out of memory";
                        return -ENOMEM;
                }
                size_t room = l->cap - l->len;
                if (!gzgets(l->gz, l->line + l->len, room > INT_MAX ? INT_MAX : (int)room))
                        break; /* the end, an error, or the last line's end without an end of line */
                l->len += strlen(l->line + l->len);
                if (l->len > 0 && l->line[l->len - 1] == '\n')
                        break;
        }
        /* At the end or at an error: a last line cut short by a truncated stream is not a line.
         * (zlib may know of the error while whole lines inflated before it are still to read.) */
        bool whole = l->len > 0 && l->line[l->len - 1] == '\n';
        if (!whole && failed(l, what))
                return -EIO;
        if (l->len == 0)
                return 0;
        while (l->len > 0 && (l->line[l->len - 1] == '\n' || l->line[l->len - 1] == '\r'))
                l->line[--l->len] = '\0';
        l->lineno++;
        return 1;
}

void sim_lines_close(sim_lines *l) {
        if (l->gz)
                gzclose(l->gz);
        free(l->line);
        *l = (sim_lines){ 0 };
}
