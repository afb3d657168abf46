/* lotes_learn.c - job classes from the jobs seen (see lotes_live.h): distinct rounded requests,
 * merged down to a few, with their arrival rates and mean processing times. */
#include "lotes_live.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

int lotes_mix_alloc(lotes_mix *m, size_t n) {
        lotes_mix_free(m);
        size_t c = n ? n : 1;
        m->name = calloc(c, sizeof(*m->name));
        m->req = calloc(c, sizeof(*m->req));
        m->rate = calloc(c, sizeof(*m->rate));
        m->runtime = calloc(c, sizeof(*m->runtime));
        if (!m->name || !m->req || !m->rate || !m->runtime) {
                lotes_mix_free(m);
                return -ENOMEM;
        }
        m->n = n;
        return 0;
}

void lotes_mix_free(lotes_mix *m) {
        for (size_t k = 0; m->name && k < m->n; k++)
                free(m->name[k]);
        free(m->name);
        free(m->req);
        free(m->rate);
        free(m->runtime);
        *m = (lotes_mix){ 0 };
}

int lotes_mix_copy(lotes_mix *dst, const lotes_mix *src) {
        if (lotes_mix_alloc(dst, src->n) < 0)
                return -ENOMEM;
        for (size_t k = 0; k < src->n; k++) {
                if (src->name[k] && !(dst->name[k] = strdup(src->name[k]))) {
                        lotes_mix_free(dst);
                        return -ENOMEM;
                }
                dst->req[k] = src->req[k];
                dst->rate[k] = src->rate[k];
                dst->runtime[k] = src->runtime[k];
        }
        return 0;
}

static int64_t round_to(int64_t v, int64_t step) {
        int64_t r = (v + step / 2) / step * step;
        return r < step ? step : r;
}

/* GPUs are kept exact: a GPU count is no measurement to round. */
static res_t rounded(res_t req) {
        return (res_t){ .mcpu = round_to(req.mcpu, LOTES_CPU_STEP),
                        .mem = round_to(req.mem, LOTES_MEM_STEP),
                        .gpus = req.gpus };
}

static int cmp_key(res_t a, res_t b) {
        if (a.gpus != b.gpus)
                return a.gpus < b.gpus ? -1 : 1;
        if (a.mcpu != b.mcpu)
                return a.mcpu < b.mcpu ? -1 : 1;
        return a.mem < b.mem ? -1 : a.mem > b.mem;
}

/* One class being built: sums over its jobs. */
typedef struct group {
        res_t key;
        double n, cpu, mem; /* jobs, and the sums of their requests */
        double gpus;        /* the sum of their GPUs */
        double known, time; /* jobs with a runtime, and the sum of those */
} group;

static int cmp_group(const void *a, const void *b) { return cmp_key(((const group *)a)->key, ((const group *)b)->key); }

/* Squared distance between two groups' mean requests, as fractions of the largest, GPUs
 * included; a group with GPUs and one without are further apart than any two of a kind (each
 * term is at most 1). */
static double distance(const group *a, const group *b, double cpu_max, double mem_max, double gpu_max) {
        double dc = (a->cpu / a->n - b->cpu / b->n) / cpu_max, dm = (a->mem / a->n - b->mem / b->n) / mem_max;
        double dg = (a->gpus / a->n - b->gpus / b->n) / gpu_max;
        return dc * dc + dm * dm + dg * dg + ((a->gpus > 0) != (b->gpus > 0) ? 4 : 0);
}

/* Whether some other group asks GPUs as g[i] does (both some, or both none). */
static bool has_peer(const group *g, size_t n, size_t i) {
        for (size_t k = 0; k < n; k++)
                if (k != i && (g[k].gpus > 0) == (g[i].gpus > 0))
                        return true;
        return false;
}

/* Merge the smallest group into its nearest until at most max remain; the smallest, that is,
 * of those with a peer of their kind (GPUs or none), so that GPU jobs and CPU jobs share a class
 * only when no two groups of a kind are left. */
static size_t merge_down(group *g, size_t n, size_t max) {
        double cpu_max = 1, mem_max = 1, gpu_max = 1;
        for (size_t i = 0; i < n; i++) {
                cpu_max = fmax(cpu_max, g[i].cpu / g[i].n);
                mem_max = fmax(mem_max, g[i].mem / g[i].n);
                gpu_max = fmax(gpu_max, g[i].gpus / g[i].n);
        }
        while (n > max) {
                size_t s = 0, t;
                for (size_t i = 1; i < n; i++)
                        if (has_peer(g, n, i) > has_peer(g, n, s) ||
                            (has_peer(g, n, i) == has_peer(g, n, s) && g[i].n < g[s].n))
                                s = i;
                t = s == 0 ? 1 : 0;
                for (size_t i = 0; i < n; i++)
                        if (i != s && distance(&g[i], &g[s], cpu_max, mem_max, gpu_max) <
                                              distance(&g[t], &g[s], cpu_max, mem_max, gpu_max))
                                t = i;
                g[t].n += g[s].n;
                g[t].cpu += g[s].cpu;
                g[t].mem += g[s].mem;
                g[t].gpus += g[s].gpus;
                g[t].known += g[s].known;
                g[t].time += g[s].time;
                memmove(&g[s], &g[s + 1], (n - s - 1) * sizeof(*g));
                n--;
        }
        return n;
}

int lotes_learn(const lotes_sample *s, size_t n, double now, double window, size_t max_classes, lotes_mix *out) {
        if (!(window > 0) || max_classes == 0)
                return -EINVAL;
        group *g = calloc(n ? n : 1, sizeof(*g));
        if (!g)
                return -ENOMEM;
        size_t ng = 0;
        double known = 0, time = 0;
        for (size_t i = 0; i < n; i++) {
                if (!(s[i].submit > now - window && s[i].submit <= now))
                        continue;
                g[ng++] = (group){ .key = rounded(s[i].req),
                                   .n = 1,
                                   .cpu = (double)s[i].req.mcpu,
                                   .mem = (double)s[i].req.mem,
                                   .gpus = (double)s[i].req.gpus,
                                   .known = s[i].runtime >= 0,
                                   .time = s[i].runtime >= 0 ? s[i].runtime : 0 };
                known += g[ng - 1].known;
                time += g[ng - 1].time;
        }
        qsort(g, ng, sizeof(*g), cmp_group);
        size_t nd = 0;
        for (size_t i = 0; i < ng; i++) {
                if (nd > 0 && cmp_key(g[nd - 1].key, g[i].key) == 0) {
                        group *d = &g[nd - 1];
                        d->n++, d->cpu += g[i].cpu, d->mem += g[i].mem, d->known += g[i].known, d->time += g[i].time;
                        d->gpus += g[i].gpus;
                } else
                        g[nd++] = g[i];
        }
        nd = merge_down(g, nd, max_classes);
        int r = lotes_mix_alloc(out, nd);
        for (size_t k = 0; r == 0 && k < nd; k++) {
                /* GPUs rounded up: a merged class asks at least its jobs' mean, never 0 for GPU jobs */
                out->req[k] = (res_t){ .mcpu = llround(g[k].cpu / g[k].n),
                                       .mem = llround(g[k].mem / g[k].n),
                                       .gpus = (int64_t)ceil(g[k].gpus / g[k].n) };
                out->rate[k] = g[k].n / window;
                out->runtime[k] = g[k].known > 0 ? g[k].time / g[k].known : known > 0 ? time / known : 1;
                if (!(out->runtime[k] > 0))
                        out->runtime[k] = 1e-3; /* jobs that ended at once: a tiny time, not a zero rate */
        }
        free(g);
        return r;
}

static long find_class(const lotes_mix *m, res_t key) {
        for (size_t k = 0; k < m->n; k++)
                if (cmp_key(rounded(m->req[k]), key) == 0)
                        return (long)k;
        return -1;
}

static double total_rate(const lotes_mix *m) {
        double t = 0;
        for (size_t k = 0; k < m->n; k++)
                t += m->rate[k];
        return t > 0 ? t : 1;
}

bool lotes_drifted(const lotes_mix *old, const lotes_mix *cur, double threshold) {
        if (old->n != cur->n)
                return true;
        double told = total_rate(old), tcur = total_rate(cur), moved = 0;
        for (size_t k = 0; k < cur->n; k++) {
                long o = find_class(old, rounded(cur->req[k]));
                if (o < 0)
                        return true;
                moved += fabs(cur->rate[k] / tcur - old->rate[o] / told);
                if (fabs(cur->runtime[k] - old->runtime[o]) > threshold * old->runtime[o])
                        return true;
        }
        return moved > threshold;
}
