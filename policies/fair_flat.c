/* fair_flat.c - the flat engine: DRF, weighted DRF, MCH, C-CH and M-CH all give the next task to
 * the unblocked leaf with the least share / weight (the share is the dominant one, or the CPU or
 * memory one for C-CH and M-CH; ties to the lowest index). The unblocked leaves sit in a binary
 * heap on that key (fair_heap.c): fair_next reads its top, O(1); a charge, a release, a block or
 * an unblock moves one leaf, O(log p). */
#include "fair_impl.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>

static double metric(const fair_state *s, uint32_t leaf) {
        const int64_t *u = &s->used[(size_t)leaf * s->nres];
        if (s->algo == FAIR_C_CH)
                return (double)u[FAIR_CPU] / (double)s->capacity[FAIR_CPU];
        if (s->algo == FAIR_M_CH)
                return (double)u[FAIR_MEM] / (double)s->capacity[FAIR_MEM];
        return fair_dominant_share(s, leaf);
}

static void touch(fair_state *s, uint32_t leaf) {
        s->item[leaf].key = metric(s, leaf) / s->weight[leaf];
        if (s->item[leaf].pos != FAIR_NOWHERE)
                fair__heap_fix(s, s->heap, s->nheap, leaf);
}

static void flip(fair_state *s, uint32_t leaf) {
        if (s->nblock[leaf] > 0 && s->item[leaf].pos != FAIR_NOWHERE)
                fair__heap_erase(s, s->heap, &s->nheap, leaf);
        else if (s->nblock[leaf] == 0 && s->item[leaf].pos == FAIR_NOWHERE)
                fair__heap_insert(s, s->heap, &s->nheap, leaf);
}

static int init(fair_state *s) {
        s->item = calloc(s->nnodes, sizeof(*s->item));
        s->heap = calloc(s->nnodes, sizeof(*s->heap));
        if (!s->item || !s->heap)
                return -ENOMEM;
        for (uint32_t n = 0; n < s->nnodes; n++) {
                s->item[n].pos = FAIR_NOWHERE;
                if (fair__is_leaf(s, n) && s->weight[n] > 0) {
                        touch(s, n);
                        flip(s, n);
                }
        }
        return 0;
}

static long next(const fair_state *s) { return s->nheap > 0 ? (long)s->heap[0] : -1; }

static void settle(fair_state *s) { (void)s; /* the heap is in order after every step */ }

const fair_engine fair__flat_engine = { init, next, touch, flip, settle };
