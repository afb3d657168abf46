/* cores.c - the agent's cores and the jobs holding them (cores.h). */
#include "cores.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int cores_init(cores *c, const int *allowed, size_t nallowed, int64_t mcpu) {
        size_t want = (size_t)((mcpu + 999) / 1000);
        if (nallowed == 0)
                return -EINVAL;
        *c = (cores){ .n = want < nallowed ? want : nallowed };
        if (c->n > CORES_MAX)
                c->n = CORES_MAX;
        memcpy(c->cpu, allowed, c->n * sizeof(*c->cpu));
        return 0;
}

bool cores_whole(int64_t mcpu) { return mcpu >= 1000 && mcpu % 1000 == 0; }

/* Append the CPUs of c whose pick[i] is set to buf as ranges. Returns 0 or -ENOBUFS. */
static int format_list(const cores *c, const bool *pick, char *buf, size_t len) {
        size_t used = 0;
        buf[0] = '\0';
        for (size_t i = 0; i < c->n; i++) {
                if (!pick[i])
                        continue;
                size_t j = i;
                while (j + 1 < c->n && pick[j + 1] && c->cpu[j + 1] == c->cpu[j] + 1)
                        j++;
                int k = j > i ? snprintf(buf + used, len - used, "%s%d-%d", used ? "," : "", c->cpu[i], c->cpu[j])
                              : snprintf(buf + used, len - used, "%s%d", used ? "," : "", c->cpu[i]);
                if (k < 0 || (size_t)k >= len - used)
                        return -ENOBUFS;
                used += (size_t)k;
                i = j;
        }
        return 0;
}

int cores_take(cores *c, uint64_t job, int64_t mcpu, char *buf, size_t len) {
        bool pick[CORES_MAX] = { false };
        size_t want = (size_t)(mcpu / 1000), got = 0;
        for (size_t i = 0; i < c->n && got < want; i++)
                if (!c->holder[i])
                        pick[i] = true, got++;
        if (got < want)
                return -EBUSY;
        int r = format_list(c, pick, buf, len);
        for (size_t i = 0; r == 0 && i < c->n; i++)
                if (pick[i])
                        c->holder[i] = job;
        return r;
}

int cores_shared(const cores *c, char *buf, size_t len) {
        bool pick[CORES_MAX] = { false }, any = false;
        for (size_t i = 0; i < c->n; i++)
                any |= pick[i] = !c->holder[i];
        if (!any)
                for (size_t i = 0; i < c->n; i++)
                        pick[i] = true;
        return format_list(c, pick, buf, len);
}

/* Call fn for every CPU of list. Returns 0, fn's error, or -EINVAL for a bad list. */
static int list_each(const char *list, int (*fn)(void *ud, int cpu), void *ud) {
        const char *p = list;
        if (!*p)
                return -EINVAL;
        while (*p) {
                char *end;
                long lo = strtol(p, &end, 10), hi = lo;
                if (end == p || lo < 0)
                        return -EINVAL;
                if (*end == '-') {
                        p = end + 1;
                        hi = strtol(p, &end, 10);
                        if (end == p || hi < lo)
                                return -EINVAL;
                }
                for (long cpu = lo; cpu <= hi; cpu++) {
                        int r = fn(ud, (int)cpu);
                        if (r < 0)
                                return r;
                }
                if (*end && *end != ',')
                        return -EINVAL;
                p = *end ? end + 1 : end;
        }
        return 0;
}

static int count_one(void *ud, int cpu) {
        (void)cpu;
        (*(int *)ud)++;
        return 0;
}

int cores_count(const char *list) {
        int n = 0, r = list_each(list, count_one, &n);
        return r < 0 ? r : n;
}

typedef struct hold_walk {
        cores *c;
        uint64_t job;
        bool mark[CORES_MAX];
} hold_walk;

static int hold_one(void *ud, int cpu) {
        hold_walk *w = ud;
        for (size_t i = 0; i < w->c->n; i++)
                if (w->c->cpu[i] == cpu) {
                        if (w->c->holder[i] && w->c->holder[i] != w->job)
                                return -EINVAL;
                        w->mark[i] = true;
                        return 0;
                }
        return -EINVAL;
}

int cores_hold(cores *c, uint64_t job, const char *list) {
        hold_walk *w = calloc(1, sizeof(*w));
        if (!w)
                return -ENOMEM;
        w->c = c;
        w->job = job;
        int r = list_each(list, hold_one, w);
        for (size_t i = 0; r == 0 && i < c->n; i++)
                if (w->mark[i])
                        c->holder[i] = job;
        free(w);
        return r;
}

void cores_release(cores *c, uint64_t job) {
        for (size_t i = 0; i < c->n; i++)
                if (c->holder[i] == job)
                        c->holder[i] = 0;
}
