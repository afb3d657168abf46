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
 * Incremental. With least = min over unblocked children c of share_c / weight_c, a node's vector
 * is  sum over blocked c of vec_c  +  least x sum over unblocked c of vec_c x weight_c / share_c,
 * so each node keeps the two sums (sumb, sumu) and a heap of its unblocked children by share /
 * weight, whose top is least and the child a descent takes. A change at a leaf marks it and its
 * ancestors dirty; at the end of a charge or release they are redone deepest first, each in
 * O(log fan-out + nres): its vector from its sums, then its new contribution into its parent's
 * sums and its place in its parent's heap. So a decision is O(depth x (log fan-out + nres)),
 * fair_next O(depth). The sums are running sums of doubles: they drift by rounding, so siblings
 * whose shares are equal in exact arithmetic may tie-break otherwise than a recomputation would
 * (tests/unit/test_fair.c compares with the from-scratch reference within 3 tasks a leaf). Per
 * node, what a decision reads sits in one fair_item and one block of hd: at 10^5 leaves a
 * decision's cost is mostly the cache lines it touches. */
#include "fair_impl.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* A comparison, not fmax: libm's fmax is a call, and this runs once per level per decision. */
static double dominant(const fair_state *s, const double *v) {
        double most = 0;
        for (size_t r = 0; r < s->nres; r++) {
                double x = v[r] * s->inv_capacity[r];
                most = x > most ? x : most;
        }
        return most;
}

/* Node n's block of s->hd. */
static double *vec_of(const fair_state *s, uint32_t n) { return &s->hd[(size_t)n * 4 * s->nres]; }
static double *sumb_of(const fair_state *s, uint32_t n) { return vec_of(s, n) + s->nres; }
static double *sumu_of(const fair_state *s, uint32_t n) { return vec_of(s, n) + 2 * s->nres; }
static double *contrib_of(const fair_state *s, uint32_t n) { return vec_of(s, n) + 3 * s->nres; }

static uint32_t *heap_of(const fair_state *s, uint32_t n) { return &s->heap[s->kid_start[n]]; }

/* n's vector from its sums and the top of its heap. A sum with no child left in it is reset to
 * exact zeros, so rounding does not outlive the children that caused it. */
static void redo(fair_state *s, uint32_t n) {
        size_t m = s->nres, nkids = s->kid_start[n + 1] - s->kid_start[n];
        double *v = vec_of(s, n), *b = sumb_of(s, n), *u = sumu_of(s, n);
        s->item[n].top = s->item[n].nopen ? heap_of(s, n)[0] : FAIR_NOWHERE;
        double least = s->item[n].nopen ? s->item[s->item[n].top].key : 0;
        for (size_t r = 0; r < m; r++) {
                u[r] = s->item[n].nopen ? u[r] : 0;
                b[r] = s->item[n].nopen < nkids ? b[r] : 0;
                v[r] = b[r] + least * u[r];
        }
}

/* c's new vector and state into its parent's sums and heap. Its share is computed here, from the
 * vector just made, rather than kept per node: the record a decision reads stays 32 bytes. */
static void push(fair_state *s, uint32_t c) {
        size_t m = s->nres;
        uint32_t p = (uint32_t)s->parent[c];
        double *old = contrib_of(s, c), *v = vec_of(s, c);
        double share = dominant(s, v);
        double *sum = s->item[c].in_sumb ? sumb_of(s, p) : sumu_of(s, p);
        for (size_t r = 0; r < m; r++)
                sum[r] -= old[r];
        s->item[c].in_sumb = s->item[c].blocked;
        double was = s->item[c].key;
        s->item[c].key = share * s->item[c].inv_omega;
        double f = s->item[c].blocked ? 1 : s->item[c].key > 0 ? 1 / s->item[c].key : 0;
        sum = s->item[c].in_sumb ? sumb_of(s, p) : sumu_of(s, p);
        for (size_t r = 0; r < m; r++) {
                old[r] = f * v[r];
                sum[r] += old[r];
        }
        if (s->item[c].blocked && s->item[c].pos != FAIR_NOWHERE)
                fair__heap_erase(s, heap_of(s, p), &s->item[p].nopen, c);
        else if (!s->item[c].blocked && s->item[c].pos == FAIR_NOWHERE)
                fair__heap_insert(s, heap_of(s, p), &s->item[p].nopen, c);
        else if (!s->item[c].blocked && s->item[c].key >= was) /* a charge below c: the usual case */
                fair__heap_raised(s, heap_of(s, p), s->item[p].nopen, c);
        else if (!s->item[c].blocked)
                fair__heap_fix(s, heap_of(s, p), s->item[p].nopen, c);
}

/* n and every ancestor not yet marked. One path is queued leaf first, deepest first already; a
 * second one makes settle sort (the depths are read then, not on every decision). */
static void mark_dirty(fair_state *s, int32_t n) {
        s->multipath |= s->ndirty > 0 && n >= 0 && !s->item[n].dirty;
        for (; n >= 0 && !s->item[n].dirty; n = s->parent[n]) {
                s->item[n].dirty = true;
                s->dirtyq[s->ndirty++] = (uint32_t)n;
        }
}

static int deepest_first(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return (x < y) - (x > y);
}

/* Several paths (a charge that blocks or unblocks other leaves) are sorted deepest first. */
static void settle(fair_state *s) {
        if (s->multipath) {
                for (size_t i = 0; i < s->ndirty; i++)
                        s->dirtyq[i] |= (uint64_t)s->depth[(uint32_t)s->dirtyq[i]] << 32;
                qsort(s->dirtyq, s->ndirty, sizeof(*s->dirtyq), deepest_first);
                s->multipath = false;
        }
        /* every node's block is known now: asked for at once, their cache misses overlap rather
         * than come one level at a time (the hd block spans two lines unless it is aligned) */
        for (size_t i = 0; i < s->ndirty; i++) {
                uint32_t n = (uint32_t)s->dirtyq[i];
                __builtin_prefetch(vec_of(s, n));
                __builtin_prefetch(contrib_of(s, n));
                __builtin_prefetch(&s->kid_start[n]);
        }
        for (size_t i = 0; i < s->ndirty; i++) {
                uint32_t n = (uint32_t)s->dirtyq[i];
                if (!s->item[n].leaf)
                        redo(s, n);
                if (s->parent[n] >= 0)
                        push(s, n);
                s->item[n].dirty = false;
        }
        s->ndirty = 0;
}

static void load_leaf(fair_state *s, uint32_t leaf) {
        double *v = vec_of(s, leaf);
        for (size_t r = 0; r < s->nres; r++)
                v[r] = (double)s->used[(size_t)leaf * s->nres + r];
}

static void touch(fair_state *s, uint32_t leaf) {
        load_leaf(s, leaf);
        mark_dirty(s, (int32_t)leaf);
}

/* A node is blocked when all its children are: pass the change up as far as it goes. */
static void flip(fair_state *s, uint32_t leaf) {
        uint32_t changed = leaf;
        s->item[leaf].blocked = s->nblock[leaf] > 0;
        for (int32_t n = s->parent[leaf]; n >= 0; changed = (uint32_t)n, n = s->parent[n]) {
                bool was = s->item[n].blocked;
                s->open[n] += s->item[changed].blocked ? -1u : 1u;
                s->item[n].blocked = s->open[n] == 0;
                if (was == s->item[n].blocked)
                        break;
        }
        mark_dirty(s, (int32_t)leaf);
}

/* n zeroed items of size bytes on 64-byte cache lines: calloc's large blocks start 16 bytes into
 * a page, so every 64-byte hd block and every other 32-byte fair_item spanned two lines.
 * free() it. NULL when out of memory. */
static void *calloc_lines(size_t n, size_t size) {
        size_t bytes = (n * size + 63) / 64 * 64;
        void *p = aligned_alloc(64, bytes ? bytes : 64);
        return p ? memset(p, 0, bytes) : NULL;
}

static int init(fair_state *s) {
        size_t n = s->nnodes, nr = n * s->nres;
        s->hd = calloc_lines(4 * nr, sizeof(*s->hd));
        s->open = calloc(n, sizeof(*s->open));
        s->dirtyq = calloc(n, sizeof(*s->dirtyq));
        s->item = calloc_lines(n, sizeof(*s->item));
        s->heap = calloc(n, sizeof(*s->heap));
        if (!s->hd || !s->open || !s->dirtyq || !s->item || !s->heap)
                return -ENOMEM;
        for (size_t r = 0; r < s->nres; r++)
                s->inv_capacity[r] = 1 / (double)s->capacity[r];
        for (size_t i = 0; i < n; i++) {
                s->item[i].pos = FAIR_NOWHERE;
                s->item[i].leaf = fair__is_leaf(s, (uint32_t)i);
                s->item[i].inv_omega = 1 / s->omega[i];
        }
        for (size_t i = n; i-- > 0;) { /* children before parents */
                uint32_t node = s->order[i];
                if (fair__is_leaf(s, node)) {
                        s->item[node].blocked = s->nblock[node] > 0;
                        load_leaf(s, node);
                } else {
                        s->item[node].blocked = s->open[node] == 0;
                        redo(s, node);
                }
                if (s->parent[node] >= 0) {
                        s->open[s->parent[node]] += !s->item[node].blocked;
                        push(s, node);
                }
        }
        return 0;
}

static long next(const fair_state *s) {
        uint32_t n = s->order[0];
        if (s->item[n].blocked)
                return -1;
        while (!s->item[n].leaf)
                n = s->item[n].top;
        return n;
}

const fair_engine fair__hdrf_engine = { init, next, touch, flip, settle };
