/* depts.c - the configured department tree (depts.h). */
#include "depts.h"
#include "job.h"
#include "units.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SECTION       "departments."
#define CAPS          "department_caps."
#define USERS         "department_users."
#define USER_NAME_MAX 32
#define DEFAULT_TIME  "department_default_time."
#define MAX_TIME      "department_max_time."

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

const dept *depts_find(const depts *d, const char *path) { return d && path ? find_n(d, path, strlen(path)) : NULL; }

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
                snprintf(err, errlen,
                         "%s: '%s' is not a department path (dept/team, letters, digits, _ . -, at most "
                         "%d levels)",
                         e->key, path, JOB_GROUP_LEVELS_MAX);
                return -EINVAL;
        }
        if (parse_weight(e->value, &w) < 0) {
                snprintf(err, errlen, "%s: weight '%s' is not a number in (0, %g]", e->key, e->value, DEPT_WEIGHT_MAX);
                return -EINVAL;
        }
        if (slash && !find_n(out, path, (size_t)(slash - path))) {
                snprintf(err, errlen, "%s: its parent %.*s is not configured above it", e->key, (int)(slash - path),
                         path);
                return -EINVAL;
        }
        dept *v = realloc(out->v, (out->n + 1) * sizeof(*v));
        if (!v)
                return -ENOMEM;
        out->v = v;
        v[out->n] = (dept){ .path = strdup(path), .weight = w, .cap = 1, .leaf = true };
        if (!v[out->n].path)
                return -ENOMEM;
        if (slash)
                ((dept *)find_n(out, path, (size_t)(slash - path)))->leaf = false;
        out->n++;
        return 0;
}

/* The configured department an entry of section prefix names, or NULL with err filled. */
static dept *named(depts *d, const config_entry *e, const char *prefix, char *err, size_t errlen) {
        const char *path = e->key + strlen(prefix);
        dept *t = (dept *)find_n(d, path, strlen(path));
        if (!t)
                snprintf(err, errlen, "%s: '%s' is not in [departments]", e->key, path);
        return t;
}

static int add_cap(depts *d, const config_entry *e, char *err, size_t errlen) {
        dept *t = named(d, e, CAPS, err, errlen);
        char *end;
        double v = strtod(e->value, &end);
        if (!t)
                return -EINVAL;
        if (end == e->value || *end || !(v > 0 && v <= 1)) {
                snprintf(err, errlen, "%s: cap '%s' is not a fraction in (0, 1]", e->key, e->value);
                return -EINVAL;
        }
        t->cap = v;
        return 0;
}

static bool user_name_ok(const char *u, size_t len) {
        return len > 0 && len <= USER_NAME_MAX && u[0] != '-' &&
               strspn(u, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-$") >= len;
}

/* "alice bob" into a NULL-terminated list (an empty value: nobody but root). */
static int add_users(depts *d, const config_entry *e, char *err, size_t errlen) {
        dept *t = named(d, e, USERS, err, errlen);
        size_t n = 0;
        if (!t)
                return -EINVAL;
        if (!(t->users = calloc(strlen(e->value) / 2 + 2, sizeof(*t->users))))
                return -ENOMEM;
        for (const char *p = e->value + strspn(e->value, " \t,"); *p; p += strspn(p, " \t,")) {
                size_t len = strcspn(p, " \t,");
                if (!user_name_ok(p, len)) {
                        snprintf(err, errlen, "%s: '%.*s' is not a user name", e->key, (int)len, p);
                        return -EINVAL;
                }
                if (!(t->users[n++] = strndup(p, len)))
                        return -ENOMEM;
                p += len;
        }
        return 0;
}

/* A time limit of section prefix into *out (a field of the department e names). */
static int add_time(depts *d, const config_entry *e, const char *prefix, bool max, char *err, size_t errlen) {
        dept *t = named(d, e, prefix, err, errlen);
        int64_t v;
        if (!t)
                return -EINVAL;
        if (units_parse_time(e->value, &v) < 0) {
                snprintf(err, errlen, "%s: '%s' is not a time limit (like 60, 2:00:00 or 1-0)", e->key, e->value);
                return -EINVAL;
        }
        *(max ? &t->max_time_usec : &t->default_time_usec) = v;
        return 0;
}

static int add_default_time(depts *d, const config_entry *e, char *err, size_t errlen) {
        return add_time(d, e, DEFAULT_TIME, false, err, errlen);
}

static int add_max_time(depts *d, const config_entry *e, char *err, size_t errlen) {
        return add_time(d, e, MAX_TIME, true, err, errlen);
}

int depts_time_limit(const depts *d, const char *group, int64_t dflt, int64_t max, int64_t *limit, char *err,
                     size_t errlen) {
        const char *max_from = NULL;
        char want[32], most[32];
        /* the deepest level that sets each wins: walk from the group up */
        for (size_t len = d && group ? strlen(group) : 0, got_d = 0, got_m = 0; len > 0;) {
                const dept *t = find_n(d, group, len);
                if (t && !got_d && t->default_time_usec)
                        dflt = t->default_time_usec, got_d = 1;
                if (t && !got_m && t->max_time_usec)
                        max = t->max_time_usec, got_m = 1, max_from = t->path;
                while (len > 0 && group[--len] != '/')
                        ;
        }
        if (*limit == 0)
                *limit = dflt ? dflt : max;
        else if (*limit == JOB_TIME_UNLIMITED)
                *limit = max;
        if (max && *limit > max) {
                snprintf(err, errlen, "time limit %s is over the maximum %s (%s%s)",
                         units_format_time(*limit, want, sizeof(want)), units_format_time(max, most, sizeof(most)),
                         max_from ? "department_max_time of " : "the controller's max_time", max_from ? max_from : "");
                return -EINVAL;
        }
        return 0;
}

int depts_from_config(const config *cfg, depts *out, char *err, size_t errlen) {
        static const struct {
                const char *prefix;
                int (*add)(depts *d, const config_entry *e, char *err, size_t errlen);
        } sections[] = { { SECTION, add_dept },
                         { CAPS, add_cap },
                         { USERS, add_users },
                         { DEFAULT_TIME, add_default_time },
                         { MAX_TIME, add_max_time } };
        *out = (depts){ 0 };
        /* the tree first, whatever the order of the sections: caps and users name its nodes */
        for (size_t s = 0; s < sizeof(sections) / sizeof(sections[0]); s++)
                for (size_t i = 0; i < cfg->n; i++) {
                        const config_entry *e = &cfg->entries[i];
                        if (strncmp(e->key, sections[s].prefix, strlen(sections[s].prefix)) != 0)
                                continue;
                        char what[256];
                        int r = sections[s].add(out, e, what, sizeof(what));
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

static bool listed(char *const *users, const char *user) {
        for (size_t i = 0; users[i]; i++)
                if (strcmp(users[i], user) == 0)
                        return true;
        return false;
}

int depts_may_submit(const depts *d, const char *group, uid_t uid, const char *user, char *err, size_t errlen) {
        const dept *t = depts_find(d, group);
        if (!group || !d || d->n == 0)
                return 0;
        if (!t) {
                snprintf(err, errlen, "unknown department '%.64s': the controller's [departments] do not list it",
                         group);
                return -EINVAL;
        }
        if (!t->leaf) {
                snprintf(err, errlen, "department '%.64s' has sub-departments: submit to one of them", group);
                return -EINVAL;
        }
        for (const char *p = group; *p && uid != 0; p++) {
                if (p[1] != '/' && p[1] != 0)
                        continue;
                const dept *level = find_n(d, group, (size_t)(p + 1 - group));
                if (level->users && !listed(level->users, user)) {
                        snprintf(err, errlen, "user %.32s may not submit to '%.64s' ([department_users] %s)", user,
                                 group, level->path);
                        return -EPERM;
                }
        }
        return 0;
}

void depts_free(depts *d) {
        for (size_t i = 0; i < d->n; i++) {
                for (size_t u = 0; d->v[i].users && d->v[i].users[u]; u++)
                        free(d->v[i].users[u]);
                free(d->v[i].users);
                free(d->v[i].path);
        }
        free(d->v);
        *d = (depts){ 0 };
}
