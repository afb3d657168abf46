/* gres.c - --gpus and --gres as Slurm writes them (gres.h). */
#include "gres.h"
#include "res.h"
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char name_chars[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-";

/* Whether s (len bytes) is all digits, at least one. */
static bool digits(const char *s, size_t len) { return len > 0 && strspn(s, "0123456789") >= len; }

/* A count of len digits at s into *n. Returns 0 or -EINVAL. */
static int count(const char *s, size_t len, int64_t *n) {
        if (!digits(s, len) || len > 5)
                return -EINVAL;
        *n = strtoll(s, NULL, 10);
        return *n <= RES_GPUS_MAX ? 0 : -EINVAL;
}

/* A type name of len bytes at s into type. Returns 0 or -EINVAL. */
static int type_name(const char *s, size_t len, char type[GRES_TYPE_MAX]) {
        if (len == 0 || len >= GRES_TYPE_MAX || strspn(s, name_chars) < len || digits(s, len))
                return -EINVAL;
        memcpy(type, s, len);
        type[len] = '\0';
        return 0;
}

/* "[TYPE:]N", or with type_alone "TYPE" too (a count of 1), into *n and type. */
static int type_and_count(const char *s, bool type_alone, int64_t *n, char type[GRES_TYPE_MAX]) {
        const char *colon = strchr(s, ':');
        type[0] = '\0';
        if (!colon) {
                if (digits(s, strlen(s)))
                        return count(s, strlen(s), n);
                *n = 1;
                return type_alone ? type_name(s, strlen(s), type) : -EINVAL;
        }
        if (type_name(s, (size_t)(colon - s), type) < 0) {
                type[0] = '\0';
                return -EINVAL;
        }
        return count(colon + 1, strlen(colon + 1), n);
}

int gres_parse_gpus(const char *arg, int64_t *n, char type[GRES_TYPE_MAX]) {
        return type_and_count(arg, false, n, type);
}

int gres_parse(const char *arg, int64_t *n, char type[GRES_TYPE_MAX]) {
        size_t len = strcspn(arg, ":");
        type[0] = '\0';
        if (len != 3 || strncmp(arg, "gpu", 3) != 0)
                return len > 0 && strspn(arg, name_chars) >= len ? -EOPNOTSUPP : -EINVAL;
        if (!arg[3]) {
                *n = 1;
                return 0;
        }
        return type_and_count(arg + 4, true, n, type);
}

int gres_constraint(const char *constraint, const char *type, char *buf, size_t len) {
        size_t used = 0;
        const char *p = constraint && *constraint ? constraint : "";
        do {
                size_t term = strcspn(p, "|");
                int w = snprintf(buf + used, len - used, "%s%.*s%s%s", used ? "|" : "", (int)term, p, term ? "&" : "",
                                 type);
                if (w < 0 || (size_t)w >= len - used)
                        return -ENAMETOOLONG;
                used += (size_t)w;
                p += term + (p[term] == '|');
        } while (*p);
        return 0;
}
