/* sched_index.h - the machines kept indexed, so that the NetBatch heuristics of sched.h decide
 * without scanning every machine (sched_place, the scan, stays the reference).
 *
 * The index owns an array of sched_machine, by position, that the caller keeps alive between
 * passes: it changes a machine in place (free, up, capacity) and then calls
 * sched_index_update for that position. Three structures follow the array:
 *   - First-Fit: a segment tree over positions holding the most free cores, the most free
 *     memory and the most of the least of both (memory counted at 4 GiB a core) of each
 *     subtree. The search prunes every subtree where any is too small; the maxima may come
 *     from different machines, so it backtracks: not O(log machines) but tens of nodes per
 *     decision at 10,000 machines on the papers' workloads (docs/policies.md), and every
 *     machine on a crafted cluster.
 *   - Best-Fit and Worst-Fit on cores: a treap of the up machines ordered by (free cores,
 *     position), each subtree holding its most free memory: the least free cores that fit with
 *     enough memory is a descent, O(log machines) expected; the most free cores is the
 *     rightmost node with enough memory, then that value's earliest position.
 *   - The same on memory, ordered by free memory, holding the most free cores.
 *     Both treaps are built on the first query that needs them, so First-Fit never pays for them.
 * Every answer equals the scan's, ties included (the earliest machine); tests/unit/
 * test_sched_index.c checks it on random clusters. Mix-Fit's angle depends on each machine's
 * capacity and free point together, which no order here captures: it stays a scan over the
 * array, and Max-Jobs runs the scans on copies, then updates the machines its winner changed. Like every policy, no
 * I/O, no clock, no global. */
#pragma once
#include "sched.h"
#include <stdbool.h>

/* A segment tree node: the most free cores, memory, and corner (the least of both) over its
 * machines (private to sched_index.c). */
typedef struct sched_seg {
        int64_t mcpu, mem, corner;
        int64_t gpus; /* the most free GPUs */
} sched_seg;

/* A treap over the up machines (private to sched_index.c). */
typedef struct sched_tree {
        uint32_t root;
        uint32_t *left, *right; /* by position */
        int64_t *key;           /* the free amount it orders by, as of the last update */
        int64_t *other;         /* the other resource's free amount, as of the last update */
        int64_t *max_other;     /* the largest other over the subtree */
        bool *in;               /* the machine is in the tree (it was up at its last update) */
} sched_tree;

typedef struct sched_index {
        sched_machine *machines; /* by position; change one, then sched_index_update it */
        size_t n, cap;
        /* private: */
        size_t leaves;  /* of the segment tree, a power of two >= cap */
        sched_seg *seg; /* segment tree, 2 * leaves nodes, root at 1 */
        sched_tree by_mcpu, by_mem;
        bool trees;                  /* by_mcpu and by_mem are built and kept */
        size_t *reserved, nreserved; /* machines reserved during a SCHED_RESERVE pass */
        /* scratch arrays of EASY passes (backfill.c), kept so that a pass over many running jobs
         * does not map and fault in fresh memory each time */
        void *easy_scratch[3];
        size_t easy_cap[3];
        /* some machine had GPUs: Best- and Worst-Fit, whose first key is then the GPUs a machine
         * would have left (sched.h), scan the array, as Mix-Fit does; a GPU cluster is a lab's
         * few hundred machines, not the 10,000 the treaps are for */
        bool gpus;
} sched_index;

/* An empty index (no allocation). */
void sched_index_init(sched_index *ix);
/* Free what the index holds and empty it. */
void sched_index_free(sched_index *ix);

/* Append machine m at position ix->n. O(log machines), amortized. Returns 0 or -ENOMEM (the
 * index is then unchanged). */
int sched_index_add(sched_index *ix, sched_machine m);
/* Machine pos changed (free, up or capacity): update the structures. O(log machines). */
void sched_index_update(sched_index *ix, size_t pos);

/* The earliest up machine req fits (cores, memory and GPUs), or -1 (First-Fit). */
long sched_index_first_fit(const sched_index *ix, res_t req);
/* Among the up machines req fits, the one with the least (most = false) or the most free
 * memory (by_mem) or cores, the earliest on a tie; -1 when none (Best-Fit, Worst-Fit). The
 * first such query builds the treaps, O(machines log machines); the index keeps them after. */
long sched_index_extreme(sched_index *ix, res_t req, bool by_mem, bool most);
/* The up machine with the most free memory, fit or not, the earliest on a tie, or -1 (what
 * SCHED_RESERVE reserves). Builds the treaps as sched_index_extreme does. */
long sched_index_roomiest(sched_index *ix);

/* The position of the machine heuristic h picks for req, the one sched_place would pick, or
 * -1 when none fits; -EINVAL for SCHED_MAX_JOBS, which is not a choice of one machine.
 * O(log machines), Mix-Fit O(machines). */
long sched_index_choose(sched_index *ix, sched_heuristic h, res_t req);

/* sched_place on the indexed machines: the same assignments, and the same free vectors after,
 * with the index kept up to date. out must hold njobs entries. Returns the number of
 * assignments written, -EINVAL for an unknown h, or -ENOMEM (Max-Jobs). */
long sched_index_place(sched_index *ix, sched_heuristic h, const sched_job *jobs, size_t njobs, sched_order order,
                       sched_assignment *out);
/* sched_index_place over list's jobs, which stops taking them once nothing as small as
 * list->floor fits any machine left (SCHED_RESERVE's reserved ones left out): the jobs behind
 * could not be placed either, so the placements are the whole list's. out must hold list->max
 * entries. -EINVAL for an unknown h or SCHED_MAX_JOBS (it compares whole schedules). O(jobs
 * taken log machines). */
long sched_index_place_from(sched_index *ix, sched_heuristic h, const sched_job_list *list, sched_order order,
                            sched_assignment *out);
