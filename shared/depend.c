/* depend.c - dependency and begin-time parsing (see depend.h). */
#include "depend.h"
#include <ctype.h>
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *const kind_names[_DEP_KIND_MAX] = {
        [DEP_AFTER] = "after",       [DEP_AFTEROK] = "afterok",     [DEP_AFTERNOTOK] = "afternotok",
        [DEP_AFTERANY] = "afterany", [DEP_SINGLETON] = "singleton",
};

const char *dep_kind_name(dep_kind k) { return k < _DEP_KIND_MAX ? kind_names[k] : "invalid"; }

static int fail(char *err, size_t errlen, int r, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(char *err, size_t errlen, int r, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
        return r;
}

/* The kind named by the len bytes at s. Returns 0 or -EINVAL. */
static int kind_from(const char *s, size_t len, dep_kind *out) {
        for (int k = 0; k < _DEP_KIND_MAX; k++)
                if (strlen(kind_names[k]) == len && strncmp(s, kind_names[k], len) == 0) {
                        *out = (dep_kind)k;
                        return 0;
                }
        return -EINVAL;
}

static int push(dep_list *l, dep_kind kind, uint64_t id, char *err, size_t errlen) {
        if (l->n == DEP_ITEMS_MAX)
                return fail(err, errlen, -ERANGE, "dependency: more than %d jobs", DEP_ITEMS_MAX);
        dep_item *items = realloc(l->items, (l->n + 1) * sizeof(*items));
        if (!items)
                return fail(err, errlen, -ENOMEM, "out of memory");
        items[l->n++] = (dep_item){ kind, id };
        l->items = items;
        return 0;
}

/* One KIND:ID[:ID...] or "singleton" term of len bytes at s, into l. */
static int parse_term(const char *s, size_t len, dep_list *l, char *err, size_t errlen) {
        size_t klen = strcspn(s, ":");
        dep_kind kind;
        if (klen > len)
                klen = len;
        if (kind_from(s, klen, &kind) < 0)
                return fail(err, errlen, -EINVAL,
                            "dependency: '%.*s' is not after, afterok, afternotok, afterany or singleton", (int)klen,
                            s);
        if (kind == DEP_SINGLETON)
                return klen == len ? push(l, kind, 0, err, errlen)
                                   : fail(err, errlen, -EINVAL, "dependency: singleton takes no job ids");
        if (klen == len)
                return fail(err, errlen, -EINVAL, "dependency: %s needs job ids (%s:ID[:ID...])", kind_names[kind],
                            kind_names[kind]);
        for (const char *p = s + klen, *end = s + len; p < end;) {
                const char *id = ++p; /* past the ':' */
                size_t n = 0;
                while (p < end && isdigit((unsigned char)*p))
                        p++, n++;
                if (n > 0 && p < end && *p == '+')
                        return fail(err, errlen, -EINVAL, "dependency: '+time' after a job id is not supported");
                if (n == 0 || (p < end && *p != ':') || n > 19 || *id == '0' || strtoull(id, NULL, 10) > INT64_MAX)
                        return fail(err, errlen, -EINVAL, "dependency: '%.*s' is not a job id", (int)strcspn(id, ":,"),
                                    id);
                int r = push(l, kind, strtoull(id, NULL, 10), err, errlen);
                if (r < 0)
                        return r;
        }
        return 0;
}

int dep_parse(const char *s, dep_list *out, char *err, size_t errlen) {
        *out = (dep_list){ 0 };
        if (strchr(s, '?'))
                return fail(err, errlen, -EINVAL,
                            "dependency: '?' (any of them) is not supported: only ',' (all of them)");
        if (!*s)
                return fail(err, errlen, -EINVAL, "dependency: empty");
        for (const char *p = s;;) {
                size_t len = strcspn(p, ",");
                int r = len ? parse_term(p, len, out, err, errlen)
                            : fail(err, errlen, -EINVAL, "dependency: an empty term in '%s'", s);
                if (r < 0) {
                        dep_list_free(out);
                        return r;
                }
                if (!p[len])
                        return 0;
                p += len + 1;
        }
}

char *dep_format(const dep_list *l) {
        size_t cap = 1 + l->n * (sizeof("afternotok:") + 21), len = 0;
        char *s = malloc(cap);
        if (!s)
                return NULL;
        s[0] = '\0';
        for (size_t i = 0; i < l->n; i++) {
                const dep_item *d = &l->items[i];
                bool same = i > 0 && d->kind == l->items[i - 1].kind && d->kind != DEP_SINGLETON;
                if (same)
                        len += (size_t)snprintf(s + len, cap - len, ":%llu", (unsigned long long)d->id);
                else if (d->kind == DEP_SINGLETON)
                        len += (size_t)snprintf(s + len, cap - len, "%s%s", i ? "," : "", kind_names[d->kind]);
                else
                        len += (size_t)snprintf(s + len, cap - len, "%s%s:%llu", i ? "," : "", kind_names[d->kind],
                                                (unsigned long long)d->id);
        }
        return s;
}

void dep_list_free(dep_list *l) {
        free(l->items);
        *l = (dep_list){ 0 };
}

/* --- begin times ----------------------------------------------------------------------------- */

/* Seconds in one of the unit named by s (whole), or 0 when it names none. */
static int64_t unit_seconds(const char *s) {
        static const struct {
                const char *name;
                int64_t seconds;
        } units[] = {
                { "", 1 },        { "s", 1 },         { "sec", 1 },        { "second", 1 },   { "seconds", 1 },
                { "m", 60 },      { "min", 60 },      { "minute", 60 },    { "minutes", 60 }, { "h", 3600 },
                { "hour", 3600 }, { "hours", 3600 },  { "d", 86400 },      { "day", 86400 },  { "days", 86400 },
                { "w", 604800 },  { "week", 604800 }, { "weeks", 604800 },
        };
        for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
                if (strcasecmp(s, units[i].name) == 0)
                        return units[i].seconds;
        return 0;
}

/* "now" or "now+N[unit]". */
static int begin_relative(const char *s, int64_t now_usec, int64_t *out, char *err, size_t errlen) {
        if (!s[3]) {
                *out = now_usec;
                return 0;
        }
        char *end;
        errno = 0;
        long long n = s[3] == '+' && isdigit((unsigned char)s[4]) ? strtoll(s + 4, &end, 10) : -1;
        int64_t unit = n >= 0 ? unit_seconds(end) : 0;
        if (n < 0 || unit == 0)
                return fail(err, errlen, -EINVAL,
                            "begin: '%s' is not now+N with a unit (seconds, minutes, hours, days, weeks)", s);
        if (errno == ERANGE || n > 10LL * 366 * 86400 / unit)
                return fail(err, errlen, -ERANGE, "begin: '%s' is more than ten years away", s);
        *out = now_usec + (int64_t)n * unit * 1000000;
        return 0;
}

/* Read "HH:MM[:SS]" at s into tm; returns the bytes read, or 0 when malformed. */
static size_t clock_time(const char *s, struct tm *tm) {
        int h, m, sec = 0, n = 0, n2 = 0;
        if (sscanf(s, "%2d:%2d%n:%2d%n", &h, &m, &n, &sec, &n2) < 2)
                return 0;
        if (h > 23 || m > 59 || sec > 60 || h < 0 || m < 0 || sec < 0)
                return 0;
        tm->tm_hour = h;
        tm->tm_min = m;
        tm->tm_sec = sec;
        return (size_t)(n2 ? n2 : n);
}

int dep_parse_begin(const char *s, int64_t now_usec, int64_t *out_usec, char *err, size_t errlen) {
        if (strncasecmp(s, "now", 3) == 0)
                return begin_relative(s, now_usec, out_usec, err, errlen);
        time_t now = (time_t)(now_usec / 1000000);
        struct tm tm;
        localtime_r(&now, &tm);
        int y, mo, d, n = 0;
        size_t used;
        bool dated = sscanf(s, "%4d-%2d-%2d%n", &y, &mo, &d, &n) == 3 && n == 10;
        if (dated) {
                tm = (struct tm){ .tm_year = y - 1900, .tm_mon = mo - 1, .tm_mday = d, .tm_isdst = -1 };
                used = !s[n]                                                ? (size_t)n
                       : s[n] == 'T' && (used = clock_time(s + n + 1, &tm)) ? (size_t)n + 1 + used
                                                                            : 0;
        } else {
                tm.tm_isdst = -1;
                used = clock_time(s, &tm);
        }
        if (used == 0 || s[used] || (dated && (mo < 1 || mo > 12 || d < 1 || d > 31)))
                return fail(err, errlen, -EINVAL,
                            "begin: '%s' is not now+N[unit], HH:MM[:SS], YYYY-MM-DD or YYYY-MM-DDTHH:MM[:SS]", s);
        int mday = tm.tm_mday;
        time_t t = mktime(&tm);
        if (t == (time_t)-1 || (dated && tm.tm_mday != mday))
                return fail(err, errlen, -EINVAL, "begin: '%s' is not a date", s);
        if (!dated && t <= now) { /* a time of day that has passed today: tomorrow's */
                tm.tm_mday++;
                tm.tm_isdst = -1;
                t = mktime(&tm);
        }
        *out_usec = (int64_t)t * 1000000;
        return 0;
}
