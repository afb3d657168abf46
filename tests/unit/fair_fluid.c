/* fair_fluid.c - static H-DRF by progressive filling (Bhattacharya et al., SoCC 2013, section
 * 4.1), the fluid allocation the task-at-a-time H-DRF of policies/fair_hdrf.c approximates.
 * See fair_ref.h. Nothing is shared with policies/: no rescaling, no heaps, no running sums;
 * what each subtree holds is recomputed from the task counts before every sliver. */
#include "fair_ref.h"
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct fluid {
        const fair_problem *p;
        double *tasks, *used, *share; /* used: nnodes x nres */
        bool *blocked, *leaf;
} fluid;

static double limit(const fluid *f, size_t n, size_t r) {
        double cap = f->p->nodes[n].cap;
        return cap < 1 ? floor(cap * (double)f->p->capacity[r]) : (double)f->p->capacity[r];
}

/* The most tasks of leaf l that still fit: what it wants, and every scope above it (the root and
 * each capped ancestor) on every resource it needs. */
static double room(const fluid *f, size_t l) {
        const fair_problem *p = f->p;
        double most = (double)p->nodes[l].tasks - f->tasks[l];
        for (long n = (long)l; n >= 0; n = p->nodes[n].parent)
                for (size_t r = 0; r < p->nres; r++)
                        if ((p->nodes[n].parent < 0 || p->nodes[n].cap < 1) && p->nodes[l].demand[r] > 0)
                                most = fmin(most, (limit(f, (size_t)n, r) - f->used[(size_t)n * p->nres + r]) /
                                                          (double)p->nodes[l].demand[r]);
        return most;
}

/* Every subtree's holdings and dominant share, and which nodes are blocked (a leaf with no
 * room for another ~1e-9 of a task; a node whose children all are), from the task counts. */
static void recount(fluid *f) {
        const fair_problem *p = f->p;
        size_t m = p->nres;
        memset(f->used, 0, p->nnodes * m * sizeof(*f->used));
        for (size_t l = 0; l < p->nnodes; l++)
                for (long n = (long)l; f->leaf[l] && n >= 0; n = p->nodes[n].parent)
                        for (size_t r = 0; r < m; r++)
                                f->used[(size_t)n * m + r] += f->tasks[l] * (double)p->nodes[l].demand[r];
        for (size_t n = 0; n < p->nnodes; n++) {
                f->share[n] = 0;
                for (size_t r = 0; r < m; r++)
                        f->share[n] = fmax(f->share[n], f->used[n * m + r] / (double)p->capacity[r]);
                f->blocked[n] = true;
        }
        for (size_t l = 0; l < p->nnodes; l++)
                for (long n = (long)l; f->leaf[l] && room(f, l) > 1e-9 && n >= 0; n = p->nodes[n].parent)
                        f->blocked[n] = false;
}

/* From the root, the unblocked child with the least share / weight (the first on a tie), down to
 * a leaf; -1 when the root is blocked. */
static long descend(const fluid *f, size_t root) {
        const fair_problem *p = f->p;
        long n = (long)root;
        if (f->blocked[root])
                return -1;
        while (!f->leaf[n]) {
                long best = -1;
                for (size_t c = 0; c < p->nnodes; c++)
                        if (p->nodes[c].parent == n && !f->blocked[c] &&
                            (best < 0 || f->share[c] / p->nodes[c].weight < f->share[best] / p->nodes[best].weight))
                                best = (long)c;
                n = best;
        }
        return n;
}

int ref_fluid_hdrf(const fair_problem *p, double step, double *tasks, double *share, double *used) {
        size_t n = p->nnodes, root = 0;
        fluid f = { .p = p,
                    .tasks = tasks,
                    .used = used,
                    .share = share,
                    .blocked = calloc(n, sizeof(bool)),
                    .leaf = calloc(n, sizeof(bool)) };
        if (!f.blocked || !f.leaf) {
                free(f.blocked);
                free(f.leaf);
                return -1;
        }
        memset(tasks, 0, n * sizeof(*tasks));
        for (size_t i = 0; i < n; i++)
                f.leaf[i] = true;
        for (size_t i = 0; i < n; i++)
                if (p->nodes[i].parent < 0)
                        root = i;
                else
                        f.leaf[p->nodes[i].parent] = false;
        for (long l; recount(&f), (l = descend(&f, root)) >= 0;) {
                double mu = 0; /* the leaf's dominant share per task */
                for (size_t r = 0; r < p->nres; r++)
                        mu = fmax(mu, (double)p->nodes[l].demand[r] / (double)p->capacity[r]);
                tasks[l] += fmin(step / mu, room(&f, (size_t)l));
        }
        free(f.blocked);
        free(f.leaf);
        return 0;
}
