/* gpus.c - the agent's GPUs and the jobs holding them (gpus.h). */
#include "gpus.h"
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>

int gpus_take(gpus *g, uint64_t job, int64_t n, char *buf, size_t len) {
        size_t idx[GPUS_MAX], k = 0, used = 0;
        if (len == 0)
                return -ENOBUFS;
        for (size_t i = 0; i < g->n && (int64_t)k < n; i++)
                if (!g->holder[i])
                        idx[k++] = i;
        if ((int64_t)k < n)
                return -EBUSY;
        buf[0] = '\0';
        for (size_t i = 0; i < k; i++) {
                int w = snprintf(buf + used, len - used, "%s%zu", i ? "," : "", idx[i]);
                if (w < 0 || (size_t)w >= len - used)
                        return -ENOBUFS;
                used += (size_t)w;
        }
        for (size_t i = 0; i < k; i++)
                g->holder[idx[i]] = job;
        return 0;
}

int gpus_hold(gpus *g, uint64_t job, const char *list) {
        bool pick[GPUS_MAX] = { false };
        const char *p = list;
        while (*p) {
                char *end;
                unsigned long i = strtoul(p, &end, 10);
                if (end == p || *p < '0' || *p > '9' || i >= g->n || pick[i] || (g->holder[i] && g->holder[i] != job) ||
                    (*end && *end != ','))
                        return -EINVAL;
                pick[i] = true;
                p = *end ? end + 1 : end;
                if (*end && !*p)
                        return -EINVAL; /* a trailing comma */
        }
        for (size_t i = 0; i < g->n; i++)
                if (pick[i])
                        g->holder[i] = job;
        return 0;
}

void gpus_release(gpus *g, uint64_t job) {
        for (size_t i = 0; i < g->n; i++)
                if (g->holder[i] == job)
                        g->holder[i] = 0;
}

size_t gpus_deny(const gpus *g, uint64_t job, cg_device *out) {
        size_t k = 0;
        for (size_t i = 0; i < g->n; i++)
                if (g->holder[i] != job)
                        out[k++] = g->dev[i].dev;
        return k;
}
