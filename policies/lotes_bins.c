/* lotes_bins.c - LoTES stage 2, first step: the non-dominated bins of a machine configuration
 * (section 4.2, Algorithm 1), in exact integer arithmetic on the classes' expected requests.
 *
 * Algorithm 1 fills a bin greedily class by class, then backtracks by removing the most recent
 * job and filling with the classes after it. This is the same search written as a depth-first
 * walk over the classes of K_j: each class but the last takes every count from the most that
 * fits down to none; the last class takes the most that fits, since any fewer leaves room for
 * one more of it (dominated); a leaf is kept when no class of K_j fits in what is left. Each
 * bin is thus met once, the greedy fill of Algorithm 1 first. The walk visits
 * prod_{k before last} (L_k + 1) leaves, L_k being the most jobs of class k a machine holds:
 * small because K_j is (the paper's point in restricting bins to the classes with delta > 0). */
#include "lotes.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct walk {
        const lotes_problem *p;
        size_t *classes; /* K_j */
        size_t n;
        uint32_t *cur; /* the bin being built, by class */
        lotes_bins *out;
        size_t cap;
} walk;

static int64_t most_that_fit(res_t room, res_t req) {
        int64_t by_cpu = room.mcpu / req.mcpu, by_mem = room.mem / req.mem;
        int64_t most = by_cpu < by_mem ? by_cpu : by_mem;
        if (req.gpus > 0 && room.gpus / req.gpus < most) /* a bin holds no more GPUs than its machine */
                most = room.gpus / req.gpus;
        return most;
}

static res_t minus(res_t room, res_t req, int64_t times) {
        return (res_t){ .mcpu = room.mcpu - times * req.mcpu,
                        .mem = room.mem - times * req.mem,
                        .gpus = room.gpus - times * req.gpus };
}

static int emit(walk *w) {
        size_t K = w->p->nclasses;
        if (w->out->n == LOTES_MAX_BINS)
                return -E2BIG;
        if (sched_grow(&w->out->count, &w->cap, (w->out->n + 1) * K, sizeof(*w->out->count)) < 0)
                return -ENOMEM;
        memcpy(w->out->count + w->out->n * K, w->cur, K * sizeof(*w->cur));
        w->out->n++;
        return 0;
}

/* No class of K_j fits in room. */
static bool full(const walk *w, res_t room) {
        for (size_t i = 0; i < w->n; i++)
                if (res_fits(w->p->classes[w->classes[i]].req, room))
                        return false;
        return true;
}

static int descend(walk *w, size_t depth, res_t room) {
        size_t k = w->classes[depth];
        res_t req = w->p->classes[k].req;
        int64_t most = most_that_fit(room, req);
        int r = 0;
        if (depth + 1 == w->n) {
                w->cur[k] = (uint32_t)most;
                if (full(w, minus(room, req, most)))
                        r = emit(w);
        } else {
                for (int64_t c = most; c >= 0 && r == 0; c--) {
                        w->cur[k] = (uint32_t)c;
                        r = descend(w, depth + 1, minus(room, req, c));
                }
        }
        w->cur[k] = 0;
        return r;
}

int lotes_enumerate_bins(const lotes_problem *p, size_t j, const bool *use, lotes_bins *out) {
        *out = (lotes_bins){ .nclasses = p->nclasses };
        walk w = { .p = p,
                   .out = out,
                   .classes = calloc(p->nclasses + 1, sizeof(size_t)),
                   .cur = calloc(p->nclasses + 1, sizeof(uint32_t)) };
        int r = w.classes && w.cur ? 0 : -ENOMEM;
        for (size_t k = 0; k < p->nclasses && r == 0; k++)
                if (use[k] && res_fits(p->classes[k].req, p->configs[j].capacity))
                        w.classes[w.n++] = k;
        /* no class: the empty bin, so that the machines of j still add up to n_j in (9) */
        if (r == 0)
                r = w.n == 0 ? emit(&w) : descend(&w, 0, p->configs[j].capacity);
        free(w.classes);
        free(w.cur);
        if (r < 0)
                lotes_bins_free(out);
        return r;
}

void lotes_bins_free(lotes_bins *b) {
        free(b->count);
        b->count = NULL;
        b->n = 0;
}
