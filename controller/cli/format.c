/* format.c - durations, times, signals, command lines and tables for people to read. */
#include "format.h"
#include "utf8.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define USEC 1000000LL

char *fmt_duration(int64_t usec, char *buf, size_t len) {
        int64_t s = usec / USEC;

        if (usec < 0)
                snprintf(buf, len, "-");
        else if (usec < 60 * USEC)
                snprintf(buf, len, "%.1f s", (double)usec / USEC);
        else if (s < 3600)
                snprintf(buf, len, "%lldm%02llds", (long long)(s / 60), (long long)(s % 60));
        else if (s < 86400)
                snprintf(buf, len, "%lldh%02lldm", (long long)(s / 3600), (long long)(s / 60 % 60));
        else
                snprintf(buf, len, "%lldd%02lldh", (long long)(s / 86400), (long long)(s / 3600 % 24));
        return buf;
}

char *fmt_time(int64_t usec, char *buf, size_t len) {
        time_t t = (time_t)(usec / USEC);
        struct tm tm;
        char date[32];
        long off;

        if (usec == 0 || !localtime_r(&t, &tm) || strftime(date, sizeof(date), "%Y-%m-%dT%H:%M:%S", &tm) == 0) {
                snprintf(buf, len, "-");
                return buf;
        }
        off = tm.tm_gmtoff / 60;
        snprintf(buf, len, "%s%c%02ld:%02ld", date, off < 0 ? '-' : '+', labs(off) / 60, labs(off) % 60);
        return buf;
}

char *fmt_signal(int sig, char *buf, size_t len) {
        const char *abbrev = sigabbrev_np(sig);

        if (abbrev)
                snprintf(buf, len, "SIG%s", abbrev);
        else
                snprintf(buf, len, "signal %d", sig);
        return buf;
}

/* Write s to f with control characters and bytes that are not UTF-8 as C escapes
 * (utf8_escape_next). */
static void put_escaped(FILE *f, const char *s, bool in_shell) {
        while (*s) {
                char esc[UTF8_ESCAPE_MAX];
                const char *piece;
                size_t len;
                s += utf8_escape_next(s, in_shell, esc, &piece, &len);
                fwrite(piece, 1, len, f);
        }
}

char *fmt_escape(const char *s) {
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);

        if (!f)
                return NULL;
        put_escaped(f, s ? s : "", false);
        if (fclose(f) != 0) {
                free(out);
                return NULL;
        }
        return out;
}

void fmt_line(FILE *f, const char *fmt, ...) {
        char *text = NULL;
        va_list ap;
        int r;

        va_start(ap, fmt);
        r = vasprintf(&text, fmt, ap);
        va_end(ap);
        if (r < 0) {
                fputs("(out of memory)\n", f);
                return;
        }
        put_escaped(f, text, false);
        fputc('\n', f);
        free(text);
}

/* True when the shell would read arg as one word without quotes. */
static int shell_plain(const char *arg) {
        return *arg && arg[strspn(arg, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789_@%+=:,./-")] == '\0';
}

char *fmt_argv(char *const *argv) {
        char *out = NULL;
        size_t len = 0;
        FILE *f = open_memstream(&out, &len);

        if (!f)
                return NULL;
        for (size_t i = 0; argv && argv[i]; i++) {
                const char *a = argv[i];

                if (i > 0)
                        fputc(' ', f);
                if (shell_plain(a))
                        fputs(a, f);
                else if (utf8_needs_escape(a)) { /* bash's $'...' reads C escapes: still one pasteable word */
                        fputs("$'", f);
                        put_escaped(f, a, true);
                        fputc('\'', f);
                } else {
                        fputc('\'', f);
                        for (; *a; a++)
                                if (*a == '\'')
                                        fputs("'\\''", f);
                                else
                                        fputc(*a, f);
                        fputc('\'', f);
                }
        }
        if (fclose(f) != 0) {
                free(out);
                return NULL;
        }
        return out;
}

static int table_add(fmt_table *t, const char *const *cells) {
        if (t->nrows == t->cap) {
                size_t cap = t->cap ? 2 * t->cap : 8;
                char **c = realloc(t->cells, cap * t->ncols * sizeof(char *));
                if (!c)
                        return -ENOMEM;
                t->cells = c;
                t->cap = cap;
        }
        for (size_t i = 0; i < t->ncols; i++) {
                char *s = fmt_escape(cells[i] ? cells[i] : "-");
                if (!s) {
                        while (i > 0)
                                free(t->cells[t->nrows * t->ncols + --i]);
                        return -ENOMEM;
                }
                t->cells[t->nrows * t->ncols + i] = s;
        }
        t->nrows++;
        return 0;
}

int fmt_table_init(fmt_table *t, size_t ncols, const char *const *headers) {
        *t = (fmt_table){ .ncols = ncols };
        if (ncols == 0 || ncols > FMT_TABLE_MAX_COLS)
                return -EINVAL;
        return table_add(t, headers);
}

int fmt_table_row(fmt_table *t, ...) {
        const char *row[FMT_TABLE_MAX_COLS];
        va_list ap;

        va_start(ap, t);
        for (size_t i = 0; i < t->ncols; i++)
                row[i] = va_arg(ap, const char *);
        va_end(ap);
        return table_add(t, row);
}

/* Columns a UTF-8 string takes: its bytes that start a character. */
static size_t text_width(const char *s) {
        size_t n = 0;

        for (; *s; s++)
                n += ((unsigned char)*s & 0xC0) != 0x80;
        return n;
}

void fmt_table_print(const fmt_table *t, FILE *f) {
        size_t width[FMT_TABLE_MAX_COLS] = { 0 };

        for (size_t r = 0; r < t->nrows; r++)
                for (size_t c = 0; c < t->ncols; c++) {
                        size_t w = text_width(t->cells[r * t->ncols + c]);
                        if (w > width[c])
                                width[c] = w;
                }
        for (size_t r = 0; r < t->nrows; r++) {
                for (size_t c = 0; c < t->ncols; c++) {
                        const char *cell = t->cells[r * t->ncols + c];
                        if (c + 1 == t->ncols)
                                fprintf(f, "%s\n", cell);
                        else
                                fprintf(f, "%s%*s", cell, (int)(width[c] - text_width(cell) + 2), "");
                }
        }
}

void fmt_table_free(fmt_table *t) {
        for (size_t i = 0; i < t->nrows * t->ncols; i++)
                free(t->cells[i]);
        free(t->cells);
        *t = (fmt_table){ 0 };
}

int fmt_json(const cJSON *value) {
        char *text = proto_print_pretty(value);

        if (!text)
                return -ENOMEM;
        puts(text);
        free(text);
        return 0;
}

void fmt_wrap(FILE *f, const char *lead, const char *text, int width) {
        int indent = (int)text_width(lead), col = indent;

        fputs(lead, f);
        for (const char *w = text + strspn(text, " "); *w; w += strspn(w, " ")) {
                int len = (int)strcspn(w, " ");
                if (col > indent && col + 1 + len > width) {
                        fprintf(f, "\n%*s", indent, "");
                        col = indent;
                } else if (col > indent) {
                        fputc(' ', f);
                        col++;
                }
                fprintf(f, "%.*s", len, w);
                col += len;
                w += len;
        }
        fputc('\n', f);
}

char *fmt_psi(const psi_stats *p, const char *sep, char *buf, size_t len) {
        if (!p->known)
                snprintf(buf, len, "-");
        else
                snprintf(buf, len, "%.1f%s%.1f%s%.1f", p->cpu.some_avg10, sep, p->memory.some_avg10, sep,
                         p->io.some_avg10);
        return buf;
}
