/* arrayspec.c - Slurm's --array syntax and the set of task indexes it names (arrayspec.h). */
#include "arrayspec.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static size_t range_count(const array_range *r) { return (size_t)(r->hi - r->lo) / r->step + 1; }

/* The step of a as it would continue into b, a single index taking b's (or 1). */
static uint32_t join_step(const array_range *a, const array_range *b) {
        if (a->lo != a->hi)
                return a->step;
        return b->lo != b->hi ? b->step : 1;
}

/* Join b, which follows a, into a when together they are one range. Returns whether it did. */
static bool try_join(array_range *a, const array_range *b) {
        uint32_t s = join_step(a, b);
        if (b->lo - a->hi != s || (b->lo != b->hi && b->step != s))
                return false;
        a->hi = b->hi;
        a->step = s;
        return true;
}

static int set_grow(array_set *set, size_t n) {
        if (n <= set->cap)
                return 0;
        size_t cap = set->cap ? set->cap * 2 : 4;
        while (cap < n)
                cap *= 2;
        array_range *r = realloc(set->r, cap * sizeof(*r));
        if (!r)
                return -ENOMEM;
        set->r = r;
        set->cap = cap;
        return 0;
}

/* Insert r at position at. Returns 0 or -ENOMEM. */
static int set_insert(array_set *set, size_t at, array_range r) {
        if (set_grow(set, set->n + 1) < 0)
                return -ENOMEM;
        memmove(&set->r[at + 1], &set->r[at], (set->n - at) * sizeof(*set->r));
        set->r[at] = r;
        set->n++;
        return 0;
}

static void set_drop(array_set *set, size_t at) {
        memmove(&set->r[at], &set->r[at + 1], (set->n - at - 1) * sizeof(*set->r));
        set->n--;
}

/* The position of the first range whose lo is above index (0..n). */
static size_t upper(const array_set *set, uint32_t index) {
        size_t lo = 0, hi = set->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (set->r[mid].lo <= index)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

static bool range_has(const array_range *r, uint32_t index) {
        return index >= r->lo && index <= r->hi && (index - r->lo) % r->step == 0;
}

size_t array_set_count(const array_set *set) {
        size_t n = 0;
        for (size_t i = 0; i < set->n; i++)
                n += range_count(&set->r[i]);
        return n;
}

bool array_set_has(const array_set *set, uint32_t index) {
        size_t at = upper(set, index);
        return at > 0 && range_has(&set->r[at - 1], index);
}

int array_set_take(array_set *set, uint32_t *index) {
        if (set->n == 0)
                return -ENOENT;
        array_range *r = &set->r[0];
        *index = r->lo;
        if (r->lo == r->hi)
                set_drop(set, 0);
        else
                r->lo += r->step;
        return 0;
}

int array_set_remove(array_set *set, uint32_t index) {
        size_t at = upper(set, index);
        if (at == 0 || !range_has(&set->r[at - 1], index))
                return -ENOENT;
        array_range *r = &set->r[at - 1];
        if (r->lo == r->hi)
                set_drop(set, at - 1);
        else if (index == r->lo)
                r->lo += r->step;
        else if (index == r->hi)
                r->hi -= r->step;
        else {
                array_range right = { index + r->step, r->hi, r->step };
                if (set_insert(set, at, right) < 0)
                        return -ENOMEM;
                set->r[at - 1].hi = index - set->r[at - 1].step;
        }
        return 0;
}

int array_set_put(array_set *set, uint32_t index) {
        size_t at = upper(set, index);
        array_range one = { index, index, 1 };
        if (at > 0 && range_has(&set->r[at - 1], index))
                return -EEXIST;
        if (at > 0 && set->r[at - 1].hi > index) {
                /* inside a stepped range, between two of its indexes: split it around index */
                array_range *r = &set->r[at - 1], right = *r;
                uint32_t below = r->lo + (index - r->lo) / r->step * r->step;
                right.lo = below + r->step;
                r->hi = below;
                if (set_grow(set, set->n + 2) < 0)
                        return -ENOMEM;
                (void)set_insert(set, at, right); /* room made */
                return set_insert(set, at, one);
        }
        if (at > 0 && try_join(&set->r[at - 1], &one)) {
                if (at < set->n && try_join(&set->r[at - 1], &set->r[at]))
                        set_drop(set, at);
                return 0;
        }
        if (at < set->n && try_join(&one, &set->r[at])) {
                set->r[at] = one;
                return 0;
        }
        return set_insert(set, at, one);
}

int array_set_cut(array_set *set, uint32_t lo, uint32_t hi, size_t *removed) {
        array_set out = { 0 };
        size_t kept = 0, before = array_set_count(set);
        for (size_t i = 0; i < set->n; i++) {
                array_range r = set->r[i], below = r, above = r;
                bool outside = r.hi < lo || r.lo > hi;
                below.hi = outside || r.lo >= lo ? r.hi : r.lo + (lo - 1 - r.lo) / r.step * r.step;
                above.lo = outside || r.hi <= hi ? r.lo : r.lo + ((hi - r.lo) / r.step + 1) * r.step;
                if ((outside || r.lo < lo) && set_insert(&out, out.n, below) < 0)
                        goto oom;
                if (!outside && r.hi > hi && above.lo <= r.hi && set_insert(&out, out.n, above) < 0)
                        goto oom;
        }
        for (size_t i = 0; i < out.n; i++)
                kept += range_count(&out.r[i]);
        *removed = before - kept;
        array_set_free(set);
        *set = out;
        return 0;
oom:
        array_set_free(&out);
        return -ENOMEM;
}

int array_set_copy(const array_set *from, array_set *to) {
        if (set_grow(to, from->n) < 0)
                return -ENOMEM;
        memcpy(to->r, from->r, from->n * sizeof(*from->r));
        to->n = from->n;
        return 0;
}

bool array_set_position(const array_set *set, uint32_t index, size_t *pos) {
        size_t below = 0, at = upper(set, index);
        for (size_t i = 0; i + 1 < at; i++)
                below += range_count(&set->r[i]);
        if (at == 0 || !range_has(&set->r[at - 1], index))
                return false;
        *pos = below + (index - set->r[at - 1].lo) / set->r[at - 1].step;
        return true;
}

bool array_set_at(const array_set *set, size_t pos, uint32_t *index) {
        for (size_t i = 0; i < set->n; i++) {
                size_t n = range_count(&set->r[i]);
                if (pos < n) {
                        *index = set->r[i].lo + (uint32_t)pos * set->r[i].step;
                        return true;
                }
                pos -= n;
        }
        return false;
}

void array_set_free(array_set *set) {
        free(set->r);
        *set = (array_set){ 0 };
}

/* A decimal index at *p, moved past it. Returns 0 or -EINVAL with err set. */
static int parse_index(const char *spec, const char **p, const char *what, uint32_t *out, char *err, size_t errlen) {
        const char *s = *p;
        unsigned long long v = 0;
        if (*s < '0' || *s > '9') {
                if (*s)
                        snprintf(err, errlen, "array '%s': %s expected at '%s'", spec, what, s);
                else
                        snprintf(err, errlen, "array '%s': %s expected at its end", spec, what);
                return -EINVAL;
        }
        for (; *s >= '0' && *s <= '9'; s++)
                if ((v = v * 10 + (unsigned)(*s - '0')) > ARRAY_INDEX_MAX) {
                        snprintf(err, errlen, "array '%s': %.*s is above the largest %s, %u", spec,
                                 (int)strspn(*p, "0123456789"), *p, what, ARRAY_INDEX_MAX);
                        return -EINVAL;
                }
        *out = (uint32_t)v;
        *p = s;
        return 0;
}

/* One item of the list at *p: "N", "N-M" or "N-M:S". Returns 0 or -EINVAL with err set. */
static int parse_item(const char *spec, const char **p, array_range *r, char *err, size_t errlen) {
        int e = parse_index(spec, p, "an index", &r->lo, err, errlen);
        r->hi = r->lo;
        r->step = 1;
        if (e < 0 || **p != '-')
                return e;
        (*p)++;
        if ((e = parse_index(spec, p, "the range's last index", &r->hi, err, errlen)) < 0)
                return e;
        if (r->hi < r->lo) {
                snprintf(err, errlen, "array '%s': range %u-%u ends before it begins", spec, r->lo, r->hi);
                return -EINVAL;
        }
        if (**p == ':') {
                (*p)++;
                if ((e = parse_index(spec, p, "a step", &r->step, err, errlen)) < 0)
                        return e;
                if (r->step == 0) {
                        snprintf(err, errlen, "array '%s': step 0: a step is 1 or more", spec);
                        return -EINVAL;
                }
                r->hi = r->lo + (r->hi - r->lo) / r->step * r->step; /* Slurm's 0-15:4 is 0,4,8,12 */
                if (r->hi == r->lo)
                        r->step = 1; /* one index: the same set as "N", whatever the step */
        }
        return 0;
}

static int cmp_range(const void *a, const void *b) {
        const array_range *x = a, *y = b;
        return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/* Sort set's ranges, refuse overlaps, and join neighbours. Returns 0 or -EINVAL with err set. */
static int normalise(const char *spec, array_set *set, char *err, size_t errlen) {
        size_t out = 0;
        qsort(set->r, set->n, sizeof(*set->r), cmp_range);
        for (size_t i = 0; i < set->n; i++) {
                if (out > 0 && set->r[i].lo <= set->r[out - 1].hi) {
                        snprintf(err, errlen, "array '%s': index %u is given twice (or ranges overlap)", spec,
                                 set->r[i].lo);
                        return -EINVAL;
                }
                if (out == 0 || !try_join(&set->r[out - 1], &set->r[i]))
                        set->r[out++] = set->r[i];
        }
        set->n = out;
        return 0;
}

int array_spec_parse(const char *spec, size_t max_tasks, array_set *set, uint32_t *throttle, char *err, size_t errlen) {
        const char *p = spec;
        size_t tasks = 0;
        int r = 0;
        *throttle = 0;
        while (r == 0) {
                array_range one;
                if ((r = parse_item(spec, &p, &one, err, errlen)) < 0)
                        break;
                if ((tasks += range_count(&one)) > max_tasks) {
                        snprintf(err, errlen, "array '%s': more than the %zu tasks an array may have", spec, max_tasks);
                        r = -EINVAL;
                        break;
                }
                if ((r = set_insert(set, set->n, one)) < 0) {
                        snprintf(err, errlen, "out of memory");
                        break;
                }
                if (*p != ',')
                        break;
                p++;
        }
        if (r == 0 && *p == '%') {
                p++;
                if ((r = parse_index(spec, &p, "a count of tasks at once", throttle, err, errlen)) == 0 &&
                    *throttle == 0) {
                        snprintf(err, errlen, "array '%s': %%0: the throttle is 1 task at once or more", spec);
                        r = -EINVAL;
                }
        }
        if (r == 0 && *p) {
                snprintf(err, errlen, "array '%s': unexpected '%c' (want N, N-M, N-M:STEP, lists of them, %%LIMIT)",
                         spec, *p);
                r = -EINVAL;
        }
        if (r == 0)
                r = normalise(spec, set, err, errlen);
        if (r < 0)
                array_set_free(set);
        return r;
}

size_t array_set_format(const array_set *set, uint32_t throttle, char *buf, size_t len) {
        size_t used = 0;
        for (size_t i = 0; i < set->n; i++) {
                const array_range *r = &set->r[i];
                char part[40];
                size_t count = range_count(r);
                const char *sep = i ? "," : "";
                if (count == 1)
                        snprintf(part, sizeof(part), "%s%u", sep, r->lo);
                else if (r->step == 1)
                        snprintf(part, sizeof(part), "%s%u-%u", sep, r->lo, r->hi);
                else if (count == 2)
                        snprintf(part, sizeof(part), "%s%u,%u", sep, r->lo, r->hi);
                else
                        snprintf(part, sizeof(part), "%s%u-%u:%u", sep, r->lo, r->hi, r->step);
                used += (size_t)snprintf(used < len ? buf + used : NULL, used < len ? len - used : 0, "%s", part);
        }
        if (throttle)
                used += (size_t)snprintf(used < len ? buf + used : NULL, used < len ? len - used : 0, "%%%u", throttle);
        if (len && used == 0)
                buf[0] = '\0';
        return used;
}
