/* fair_ref.c - see fair_ref.h. Recursion and full rescans on purpose: nothing is remembered
 * between decisions except the task counts. */
#include "fair_ref.h"
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

typedef struct ref {
        const fair_problem *p;
        int64_t *tasks, *used; /* used: nnodes x nres */
        double *vec, *share;   /* H-DRF */
        bool *blocked;
        size_t *first, *kids; /* node n's children: kids[first[n] .. first[n + 1]) */
        size_t root;
} ref;

static bool leaf(const ref *r, size_t n) { return r->first[n] == r->first[n + 1]; }

static int64_t dem(const ref *r, size_t n, size_t res) { return r->p->nodes[n].demand[res]; }

/* Children in index order, by a counting pass. */
static void link(ref *r) {
        const fair_problem *p = r->p;
        for (size_t i = 0; i < p->nnodes; i++)
                if (p->nodes[i].parent < 0)
                        r->root = i;
                else
                        r->first[p->nodes[i].parent + 1]++;
        for (size_t i = 0; i < p->nnodes; i++)
                r->first[i + 1] += r->first[i];
        size_t *fill = calloc(p->nnodes + 1, sizeof(*fill));
        memcpy(fill, r->first, (p->nnodes + 1) * sizeof(*fill));
        for (size_t i = 0; i < p->nnodes; i++)
                if (p->nodes[i].parent >= 0)
                        r->kids[fill[p->nodes[i].parent]++] = i;
        free(fill);
}

/* What every subtree holds: each leaf's tasks x demand, added to it and all its ancestors. */
static void count_used(ref *r) {
        size_t m = r->p->nres;
        memset(r->used, 0, r->p->nnodes * m * sizeof(*r->used));
        for (size_t l = 0; l < r->p->nnodes; l++)
                for (long n = (long)l; leaf(r, l) && n >= 0; n = r->p->nodes[n].parent)
                        for (size_t res = 0; res < m; res++)
                                r->used[(size_t)n * m + res] += r->tasks[l] * dem(r, l, res);
}

static int64_t limit(const ref *r, size_t n, size_t res) {
        double cap = r->p->nodes[n].cap;
        return cap < 1 ? (int64_t)floor(cap * (double)r->p->capacity[res]) : r->p->capacity[res];
}

/* l wants one more task and it fits under the root and every capped ancestor. */
static bool fits(const ref *r, size_t l) {
        if (r->tasks[l] >= r->p->nodes[l].tasks)
                return false;
        for (long n = (long)l; n >= 0; n = r->p->nodes[n].parent)
                for (size_t res = 0; res < r->p->nres; res++)
                        if ((r->p->nodes[n].parent < 0 || r->p->nodes[n].cap < 1) &&
                            r->used[(size_t)n * r->p->nres + res] + dem(r, l, res) > limit(r, n, res))
                                return false;
        return true;
}

static double dominant(const ref *r, const double *v) {
        double most = 0;
        for (size_t res = 0; res < r->p->nres; res++)
                most = fmax(most, v[res] / (double)r->p->capacity[res]);
        return most;
}

/* H-DRF's vector of n: its own usage for a leaf; for a node, its children's, the unblocked ones
 * rescaled to the least weighted dominant share among them. */
static void eval(ref *r, size_t n) {
        size_t m = r->p->nres;
        double *v = &r->vec[n * m], least = INFINITY;
        memset(v, 0, m * sizeof(*v));
        if (leaf(r, n)) {
                for (size_t res = 0; res < m; res++)
                        v[res] = (double)r->used[n * m + res];
                r->blocked[n] = !fits(r, n);
                r->share[n] = dominant(r, v);
                return;
        }
        r->blocked[n] = true;
        for (size_t k = r->first[n]; k < r->first[n + 1]; k++) {
                size_t c = r->kids[k];
                eval(r, c);
                r->blocked[n] &= r->blocked[c];
                if (!r->blocked[c])
                        least = fmin(least, r->share[c] / r->p->nodes[c].weight);
        }
        for (size_t k = r->first[n]; k < r->first[n + 1]; k++) {
                size_t c = r->kids[k];
                double w = r->p->nodes[c].weight;
                double f = r->blocked[c] ? 1 : r->share[c] > 0 ? least * w / r->share[c] : 0;
                for (size_t res = 0; res < m; res++)
                        v[res] += f * r->vec[c * m + res];
        }
        r->share[n] = dominant(r, v);
}

/* From the root, the unblocked child with the least share / weight, the first on a tie. */
static long pick_hdrf(ref *r) {
        size_t n = r->root;
        if (r->blocked[n])
                return -1;
        while (!leaf(r, n)) {
                size_t best = SIZE_MAX;
                for (size_t k = r->first[n]; k < r->first[n + 1]; k++) {
                        size_t c = r->kids[k];
                        double key = r->share[c] / r->p->nodes[c].weight;
                        if (!r->blocked[c] && (best == SIZE_MAX || key < r->share[best] / r->p->nodes[best].weight))
                                best = c;
                }
                n = best;
        }
        return (long)n;
}

static double leaf_share(const ref *r, size_t l, int res) {
        double most = 0;
        for (size_t x = 0; x < r->p->nres; x++)
                if (res < 0 || (size_t)res == x)
                        most = fmax(most, (double)r->used[l * r->p->nres + x] / (double)r->p->capacity[x]);
        return most;
}

static long pick_flat(const ref *r, const double *weight, int res) {
        long best = -1;
        double best_key = 0;
        for (size_t l = 0; l < r->p->nnodes; l++) {
                if (!leaf(r, l) || !(weight[l] > 0) || !fits(r, l))
                        continue;
                double key = leaf_share(r, l, res) / weight[l];
                if (best < 0 || key < best_key) {
                        best = (long)l;
                        best_key = key;
                }
        }
        return best;
}

static bool ref_init(ref *r, const fair_problem *p, int64_t *tasks) {
        size_t n = p->nnodes;
        *r = (ref){ .p = p, .tasks = tasks };
        memset(tasks, 0, n * sizeof(*tasks));
        r->used = calloc(n * p->nres, sizeof(*r->used));
        r->vec = calloc(n * p->nres, sizeof(*r->vec));
        r->share = calloc(n, sizeof(*r->share));
        r->blocked = calloc(n, sizeof(*r->blocked));
        r->first = calloc(n + 1, sizeof(*r->first));
        r->kids = calloc(n, sizeof(*r->kids));
        if (r->used && r->vec && r->share && r->blocked && r->first && r->kids)
                link(r);
        return r->used && r->vec && r->share && r->blocked && r->first && r->kids;
}

static void ref_done(ref *r) {
        free(r->used);
        free(r->vec);
        free(r->share);
        free(r->blocked);
        free(r->first);
        free(r->kids);
}

size_t ref_hdrf(const fair_problem *p, int64_t *tasks, size_t max) {
        ref r;
        size_t made = 0;
        if (!ref_init(&r, p, tasks))
                made = (size_t)-1;
        for (long l; made < max && (count_used(&r), eval(&r, r.root), l = pick_hdrf(&r)) >= 0; made++)
                tasks[l]++;
        ref_done(&r);
        return made;
}

size_t ref_flat(const fair_problem *p, const double *weight, int res, int64_t *tasks, size_t max) {
        ref r;
        size_t made = 0;
        if (!ref_init(&r, p, tasks))
                made = (size_t)-1;
        for (long l; made < max && (count_used(&r), l = pick_flat(&r, weight, res)) >= 0; made++)
                tasks[l]++;
        ref_done(&r);
        return made;
}
