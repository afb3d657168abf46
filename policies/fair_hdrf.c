/* fair_hdrf.c - the H-DRF engine (Bhattacharya et al., "Hierarchical scheduling for diverse
 * datacenter workloads", SoCC 2013, cited by the MCH paper as [3]; dynamic H-DRF).
 *
 * Every node has a consumption vector: a leaf's is what it holds; an internal node's is the sum
 * of its children's, where each unblocked child is first rescaled so that its weighted dominant
 * share equals the least among its unblocked siblings ("rescaling to the minimum node": a child
 * that got ahead does not make its parent look rich while a sibling still waits), and a
 * blocked child counts as it is ("ignoring blocked nodes" for the rescaling: one that can take
 * no more does not hold its siblings back). The next task goes down from the root, each time to
 * the unblocked child with the least dominant share / weight (ties to the lowest index).
 *
 * A node's vector depends only on its children's, so a change at a leaf redoes its ancestors:
 * they are marked dirty and redone deepest first, O(fan-out x nres) each, at the end of a charge
 * or release; each also remembers the child a descent takes, so fair_next is O(depth). */
#include "fair_impl.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static double dominant(const fair_state *s, const double *v) {
        double most = 0;
        for (size_t r = 0; r < s->nres; r++)
                most = fmax(most, v[r] / (double)s->capacity[r]);
        return most;
}

/* n's vector, share and descent child from its children's. */
static void redo(fair_state *s, uint32_t n) {
        size_t m = s->nres;
        double least = INFINITY, *v = &s->vec[(size_t)n * m];
        uint32_t best = UINT32_MAX;
        for (uint32_t k = s->kid_start[n]; k < s->kid_start[n + 1]; k++) {
                uint32_t c = s->kids[k];
                if (!s->blocked[c] && s->share[c] / s->omega[c] < least) {
                        least = s->share[c] / s->omega[c];
                        best = c;
                }
        }
        memset(v, 0, m * sizeof(*v));
        for (uint32_t k = s->kid_start[n]; k < s->kid_start[n + 1]; k++) {
                uint32_t c = s->kids[k];
                double f = s->blocked[c] ? 1 : s->share[c] > 0 ? least * s->omega[c] / s->share[c] : 0;
                for (size_t r = 0; r < m; r++)
                        v[r] += f * s->vec[(size_t)c * m + r];
        }
        s->share[n] = dominant(s, v);
        s->best[n] = best;
}

static void mark_dirty(fair_state *s, int32_t n) {
        for (; n >= 0 && !s->dirty[n]; n = s->parent[n]) {
                s->dirty[n] = true;
                s->dirtyq[s->ndirty++] = (uint64_t)s->depth[n] << 32 | (uint32_t)n;
        }
}

static int deepest_first(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return (x < y) - (x > y);
}

static void settle(fair_state *s) {
        qsort(s->dirtyq, s->ndirty, sizeof(*s->dirtyq), deepest_first);
        for (size_t i = 0; i < s->ndirty; i++) {
                uint32_t n = (uint32_t)s->dirtyq[i];
                redo(s, n);
                s->dirty[n] = false;
        }
        s->ndirty = 0;
}

static void touch(fair_state *s, uint32_t leaf) {
        double *v = &s->vec[(size_t)leaf * s->nres];
        for (size_t r = 0; r < s->nres; r++)
                v[r] = (double)s->used[(size_t)leaf * s->nres + r];
        s->share[leaf] = dominant(s, v);
        mark_dirty(s, s->parent[leaf]);
}

/* A node is blocked when all its children are: pass the change up as far as it goes. */
static void flip(fair_state *s, uint32_t leaf) {
        uint32_t changed = leaf;
        s->blocked[leaf] = s->nblock[leaf] > 0;
        for (int32_t n = s->parent[leaf]; n >= 0; changed = (uint32_t)n, n = s->parent[n]) {
                bool was = s->blocked[n];
                s->open[n] += s->blocked[changed] ? -1u : 1u;
                s->blocked[n] = s->open[n] == 0;
                if (was == s->blocked[n])
                        break;
        }
        mark_dirty(s, s->parent[leaf]);
}

static int init(fair_state *s) {
        size_t n = s->nnodes;
        s->vec = calloc(n * s->nres, sizeof(*s->vec));
        s->share = calloc(n, sizeof(*s->share));
        s->open = calloc(n, sizeof(*s->open));
        s->best = calloc(n, sizeof(*s->best));
        s->blocked = calloc(n, sizeof(*s->blocked));
        s->dirty = calloc(n, sizeof(*s->dirty));
        s->dirtyq = calloc(n, sizeof(*s->dirtyq));
        if (!s->vec || !s->share || !s->open || !s->best || !s->blocked || !s->dirty || !s->dirtyq)
                return -ENOMEM;
        for (size_t i = n; i-- > 0;) {
                uint32_t node = s->order[i];
                if (fair__is_leaf(s, node)) {
                        s->blocked[node] = s->nblock[node] > 0;
                        touch(s, node);
                } else
                        s->blocked[node] = s->open[node] == 0;
                if (!s->blocked[node] && s->parent[node] >= 0)
                        s->open[s->parent[node]]++;
        }
        settle(s);
        return 0;
}

static long next(const fair_state *s) {
        uint32_t n = s->order[0];
        if (s->blocked[n])
                return -1;
        while (!fair__is_leaf(s, n))
                n = s->best[n];
        return n;
}

const fair_engine fair__hdrf_engine = { init, next, touch, flip, settle };
