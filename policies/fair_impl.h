/* fair_impl.h - what the fair_*.c files share: the state, and the two engines behind fair_next.
 * Internal to policies/ (prefix fair__); users include fair.h.
 *
 * Blocking. A leaf can take a task when it wants one more and the task fits under every scope
 * above it: the root (the whole capacity) and each capped ancestor (cap x capacity). Per scope
 * and resource the leaves below are kept sorted by demand, largest first, with a cut: those
 * before it do not fit what the scope has left. A charge or release moves the cuts of the scopes
 * on its path, so each leaf is blocked or unblocked in O(1) when that happens, and nblock counts
 * the reasons a leaf is blocked (0: it can take a task).
 *
 * Engines. The flat one (DRF, WDRF, MCH, C-CH, M-CH) keeps the unblocked leaves in a binary heap
 * keyed by share / weight; H-DRF keeps, per node, the rescaled consumption vector of H-DRF, a
 * heap of its unblocked children by share / weight, and running sums of its children's vectors
 * from which the rescaled sum follows in O(nres). */
#pragma once
#include "fair.h"
#include <stdbool.h>

typedef struct fair_scope {
        uint32_t node;
        uint32_t nleaves;
        int64_t limit[FAIR_RES_MAX]; /* floor(cap x capacity) */
        uint32_t *order;             /* nres rows of nleaves: leaves by demand on r, largest first */
        uint32_t cut[FAIR_RES_MAX];  /* order[r][0 .. cut) do not fit limit - used on r */
} fair_scope;

/* What a decision reads of a node, in one record rather than one array each: at 10^5 leaves a
 * decision's cost is mostly cache misses, one per array touched at the leaf and its parent. */
typedef struct fair_item {
        double key;       /* the heap's: share / weight */
        double inv_omega; /* H-DRF: 1 / omega, a multiplication where the key was a division */
        uint32_t pos;     /* index in its heap, or FAIR_NOWHERE */
        uint32_t top;     /* H-DRF: the top of the node's heap (FAIR_NOWHERE: empty), for fair_next */
        uint32_t nopen;   /* H-DRF: the size of the node's heap, its unblocked children */
        bool blocked;     /* H-DRF: as the engine last saw it */
        bool in_sumb;     /* H-DRF: which of its parent's sums it adds to */
        bool dirty;       /* H-DRF: to be redone at the end of the charge or release */
        bool leaf;        /* H-DRF: fair__is_leaf, here so that a descent reads no kid_start (32 bytes in all) */
} fair_item;

typedef struct fair_engine {
        int (*init)(fair_state *s); /* after blocking is set up; 0 or -ENOMEM */
        long (*next)(const fair_state *s);
        void (*touch)(fair_state *s, uint32_t leaf); /* leaf's usage changed */
        void (*flip)(fair_state *s, uint32_t leaf);  /* leaf became blocked or unblocked */
        void (*settle)(fair_state *s);               /* end of a charge or release */
} fair_engine;

struct fair_state {
        fair_algo algo;
        const fair_engine *engine;
        size_t nres, nnodes;
        int64_t capacity[FAIR_RES_MAX];
        /* the tree */
        int32_t *parent;
        uint32_t *kid_start; /* nnodes + 1: node n's children are kids[kid_start[n] .. kid_start[n + 1]) */
        uint32_t *kids;
        uint32_t *order; /* every node after its parent, the root first */
        uint32_t *depth;
        double *omega;   /* configured weights */
        int64_t *demand; /* nnodes x nres */
        int64_t *want, *tasks;
        int64_t *used; /* nnodes x nres: what each subtree holds */
        /* blocking */
        uint32_t *nblock;
        fair_scope *scopes;
        size_t nscopes;
        int32_t *scope_of; /* the node's scope, or -1 */
        double *guarantee; /* fair_guarantee's */
        /* weights (all algorithms), and the flat engine */
        double *weight;
        int first_saturated;
        fair_item *item; /* per node: heap key and place, and H-DRF's per-node scalars */
        uint32_t *heap;
        uint32_t nheap;
        /* the H-DRF engine; its heaps use item[].key and .pos, node n's over heap[kid_start[n] ..) */
        double *hd;       /* nnodes x 4 x nres, one block per node (a cache line at two
                           * resources): vec, the rescaled consumption; sumb, over its blocked
                           * children their vec; sumu, over the unblocked ones vec x weight /
                           * share; contrib, what it adds to its parent's sumb or sumu */
        uint32_t *open;   /* unblocked children, as flip counts them */
        uint64_t *dirtyq; /* node, and depth << 32 once settle must sort them */
        size_t ndirty;
        double inv_capacity[FAIR_RES_MAX]; /* H-DRF: 1 / capacity, multiplied where a share divided */
        bool multipath;                    /* H-DRF: dirtyq holds more than one leaf's path, to sort deepest first */
};

extern const fair_engine fair__flat_engine, fair__hdrf_engine;

#define FAIR_NOWHERE UINT32_MAX /* the pos of a node in no heap */

static inline bool fair__is_leaf(const fair_state *s, uint32_t n) { return s->kid_start[n] == s->kid_start[n + 1]; }

/* Fill s->guarantee from the tree (s->order set) and p's caps. */
void fair__guarantees(fair_state *s, const fair_problem *p);
/* Fill s->weight (and s->first_saturated) for s->algo. Returns 0 or -ENOMEM. */
int fair__weights(fair_state *s);

/* Heaps of node indices in slot[0 .. *n), least key first, ties to the lowest index; s->item[].pos
 * holds each node's place (FAIR_NOWHERE once erased). O(log n) each. */
void fair__heap_insert(fair_state *s, uint32_t *slot, uint32_t *n, uint32_t node);
void fair__heap_erase(fair_state *s, uint32_t *slot, uint32_t *n, uint32_t node);
/* Restore the order after node's key changed. */
void fair__heap_fix(fair_state *s, uint32_t *slot, size_t n, uint32_t node);
/* The same after node's key grew or stayed: it can only go down, so its parent is not read. */
void fair__heap_raised(fair_state *s, uint32_t *slot, size_t n, uint32_t node);
