/* depts.c - the configured department tree (depts.h). */
#include "depts.h"
#include "job.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SECTION "departments."

static const dept *find_n(const depts *d, const char *path, size_t len) {
        for (size_t i = 0; i < d->n; i++)
                if (strlen(d->v[i].path) == len && strncmp(d->v[i].path, path, len) == 0)
                        return &d->v[i];
        return NULL;
}

bool depts_in(const char *group, const char *path) {
        size_t n = strlen(path);
        return group && strncmp(group, path, n) == 0 && (group[n] == '\0' || group[n] == '/');
}

const dept *depts_parent(const depts *d, const char *path) {
        const char *slash = strrchr(path, '/');
        return slash ? find_n(d, path, (size_t)(slash - path)) : NULL;
}

const dept *depts_find(const depts *d, const char *path) {
        return d && path ? find_n(d, path, strlen(path)) : NULL;
}

long depts_weights(const depts *d, const char *group, double *out, size_t max) {
        size_t levels = 0;
        for (const char *p = group; p && *p; p++) {
                if (p[1] != '/' && p[1] != 0)
                        continue;
                if (levels == max)
                        return -E2BIG;
                const dept *e = d ? find_n(d, group, (size_t)(p + 1 - group)) : NULL;
                out[levels++] = e ? e->weight : 1.0;
        }
        return (long)levels;
}

static int parse_weight(const char *text, double *w) {
        char *end;
        double v = strtod(text, &end);
        if (end == text || *end || !isfinite(v) || !(v > 0) || v > DEPT_WEIGHT_MAX)
                return -EINVAL;
        *w = v;
        return 0;
}

/* Check one entry against the ones read so far, and add it. */
static int add_dept(depts *out, const config_entry *e, char *err, size_t errlen) {
        const char *path = e->key + strlen(SECTION), *slash = strrchr(path, '/');
        double w;
        if (!job_group_ok(path)) {
                snprintf(err, errlen, "%s: '%s' is not a department path (dept/team, letters, digits, _ . -, at most "
                         "%d levels)", e->key, path, JOB_GROUP_LEVELS_MAX);
                return -EINVAL;
        }
        if (parse_weight(e->value, &w) < 0) {
                snprintf(err, errlen, "%s: weight '%s' is not a number in (0, %g]", e->key, e->value, DEPT_WEIGHT_MAX);
                return -EINVAL;
        }
        if (slash && !find_n(out, path, (size_t)(slash - path))) {
                snprintf(err, errlen, "%s: its parent %.*s is not configured above it", e->key, (int)(slash - path), path);
                return -EINVAL;
        }
        dept *v = realloc(out->v, (out->n + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        out->v = v;
        if (!(v[out->n].path = strdup(path)))
                return -ENOMEM;
        v[out->n++].weight = w;
        return 0;
}

int depts_from_config(const config *cfg, depts *out, char *err, size_t errlen) {
        *out = (depts){ 0 };
        for (size_t i = 0; i < cfg->n; i++) {
                const config_entry *e = &cfg->entries[i];
                if (strncmp(e->key, SECTION, strlen(SECTION)) != 0)
                        continue;
                char what[256];
                int r = add_dept(out, e, what, sizeof(what));
                if (r < 0) {
                        if (r == -ENOMEM)
                                snprintf(what, sizeof(what), "out of memory");
                        snprintf(err, errlen, "%s:%d: %s", cfg->path, e->line, what);
                        depts_free(out);
                        return r;
                }
        }
        return 0;
}

void depts_free(depts *d) {
        for (size_t i = 0; i < d->n; i++)
                free(d->v[i].path);
        free(d->v);
        *d = (depts){ 0 };
}
