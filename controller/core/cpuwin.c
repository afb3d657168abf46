/* cpuwin.c - CPU time per department over a sliding window (cpuwin.h). */
#include "cpuwin.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int64_t period(int64_t now_usec) { return now_usec / ((int64_t)CPUWIN_BUCKET_SECONDS * 1000000); }

static cpuwin_group *find_or_add(cpuwin *w, const char *group) {
        for (size_t i = 0; i < w->n; i++)
                if (strcmp(w->v[i].group, group) == 0)
                        return &w->v[i];
        cpuwin_group *v = realloc(w->v, (w->n + 1) * sizeof(*v));
        if (!v)
                return NULL;
        w->v = v;
        v[w->n] = (cpuwin_group){ .group = strdup(group) };
        return v[w->n].group ? &v[w->n++] : NULL;
}

int cpuwin_add(cpuwin *w, const char *group, int64_t usec, int64_t now_usec) {
        cpuwin_group *g = usec > 0 ? find_or_add(w, group ? group : "") : NULL;
        int64_t p = period(now_usec);
        size_t b = (size_t)(p % CPUWIN_BUCKETS);
        if (usec <= 0)
                return 0;
        if (!g)
                return -ENOMEM;
        if (g->epoch[b] != p) {
                g->epoch[b] = p;
                g->usec[b] = 0;
        }
        g->usec[b] += usec;
        return 0;
}

int64_t cpuwin_sum(const cpuwin_group *g, int64_t now_usec) {
        int64_t p = period(now_usec), sum = 0;
        for (size_t b = 0; b < CPUWIN_BUCKETS; b++)
                if (g->epoch[b] > p - CPUWIN_BUCKETS && g->epoch[b] <= p)
                        sum += g->usec[b];
        return sum;
}

void cpuwin_free(cpuwin *w) {
        for (size_t i = 0; i < w->n; i++)
                free(w->v[i].group);
        free(w->v);
        *w = (cpuwin){ 0 };
}
