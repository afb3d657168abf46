/* outpat.c - %-patterns in output file names (outpat.h). */
#include "outpat.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define LETTERS "jAauxN%"

int outpat_check(const char *pattern, char *err, size_t errlen) {
        for (const char *p = strchr(pattern, '%'); p; p = strchr(p + 2, '%'))
                if (!p[1] || !strchr(LETTERS, p[1])) {
                        snprintf(err, errlen, "unknown pattern %%%.1s (want %%j %%A %%a %%u %%x %%N or %%%%)", p + 1);
                        return -EINVAL;
                }
        return 0;
}

/* Append s to the open memstream f, a '/' as '_'. */
static void put_name(FILE *f, const char *s) {
        for (; s && *s; s++)
                fputc(*s == '/' ? '_' : *s, f);
}

int outpat_expand(const char *pattern, const outpat_vars *v, char **out) {
        char *buf = NULL;
        size_t len = 0;
        FILE *f;
        char err[8];

        if (outpat_check(pattern, err, sizeof(err)) < 0)
                return -EINVAL;
        if (!(f = open_memstream(&buf, &len)))
                return -ENOMEM;
        for (const char *p = pattern; *p; p++) {
                if (*p != '%') {
                        fputc(*p, f);
                        continue;
                }
                switch (*++p) {
                case 'j': fprintf(f, "%llu", (unsigned long long)v->id); break;
                case 'A': fprintf(f, "%llu", (unsigned long long)(v->array_first ? v->array_first : v->id)); break;
                case 'a': fprintf(f, "%u", v->array_first ? v->array_index : 0); break;
                case 'u': put_name(f, v->user); break;
                case 'x': put_name(f, v->name); break;
                case 'N': put_name(f, v->node); break;
                default: fputc('%', f); break; /* "%%": checked above */
                }
        }
        if (fclose(f) != 0) {
                free(buf);
                return -ENOMEM;
        }
        *out = buf;
        return 0;
}
