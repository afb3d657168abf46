/* fair.h - multi-resource fair sharing on a tree of departments: DRF, weighted DRF, H-DRF,
 * MCH, and the collapsed-hierarchy baselines C-CH and M-CH. Plain structs in, plain numbers
 * out; no I/O, no clock, no globals. Sources and the schemas of `colony fair`: docs/policies.md
 * ("Fair sharing"); MCH is You, Wang, Xu, Luo, Chen and Li, "Low complexity hierarchical
 * scheduling for diverse datacenter jobs".
 *
 * The input is a tree: internal nodes are departments (a weight, an optional cap), leaves are
 * jobs or users (the same, plus a per-task demand vector and how many tasks they want). A
 * fair_state holds how many tasks each leaf runs; the core call is fair_next, "which leaf gets
 * the next task", which a live controller calls per decision; fair_run is a loop over
 * fair_next and fair_charge until no leaf can take a task.
 *
 *   fair_node nodes[] = {
 *           { .name = "root", .parent = -1, .weight = 1, .cap = 1 },
 *           { .name = "a", .parent = 0, .weight = 1, .cap = 1, .demand = { 1000, 4 << 30 }, .tasks = 9 },
 *           { .name = "b", .parent = 0, .weight = 1, .cap = 1, .demand = { 3000, 1 << 30 }, .tasks = 9 },
 *   };
 *   fair_problem p = { .nres = 2, .capacity = { 9000, 18L << 30 }, .nodes = nodes, .nnodes = 3 };
 *   fair_state *s;
 *   if (fair_new(&p, FAIR_DRF, &s, why, sizeof(why)) == 0) { fair_run(s); ... fair_free(s); }
 *   -> a runs 3 tasks, b 2 (the DRF paper's example)
 *
 * Cost, with q nodes, p leaves, m resources, d the depth and f the largest fan-out on a path:
 *   fair_new      O(q m + S p log p): validation and the algorithm's weights (MCH's flattening is
 *                 one pass up and one down the tree), S = number of capped nodes plus one;
 *   fair_next     O(1) for the flat algorithms (top of a heap), O(d) for H-DRF;
 *   fair_charge   O(d m + log p) flat, O(d (log f + m)) for H-DRF (each ancestor redoes its
 *   fair_release  rescaled vector from two running sums and moves in its parent's heap),
 *                 plus as much again for each leaf that this blocks or unblocks, which happens
 *                 once per leaf per resource over a whole fair_run.
 * So a decision costs O(log p) with MCH and O(d (log f + m)) with H-DRF, the same order: on
 * bench_fair's trees of 2 to 6 levels H-DRF is within 2x of MCH (docs/policies.md). */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define FAIR_RES_MAX    4
#define FAIR_CPU        0 /* resource 0 is CPU (C-CH shares it) */
#define FAIR_MEM        1 /* resource 1 is memory (M-CH shares it) */
#define FAIR_GPU        2 /* resource 2 is GPUs, where the cluster has any (nres 3) */
#define FAIR_NODES_MAX  (1 << 24)
#define FAIR_AMOUNT_MAX ((int64_t)1 << 60) /* largest capacity or demand */
#define FAIR_TASKS_MAX  ((int64_t)1 << 40)

typedef enum fair_algo {
        FAIR_DRF,  /* dominant resource fairness over the leaves, weights 1, tree ignored */
        FAIR_WDRF, /* weighted DRF over the leaves, each with its own weight, tree ignored */
        FAIR_HDRF, /* hierarchical DRF (Bhattacharya et al.): from the root, the child with the least
                    * weighted dominant share, non-blocked children rescaled to the least of them */
        FAIR_MCH,  /* MCH: the tree flattened into weighted DRF with the paper's weights */
        FAIR_C_CH, /* collapsed hierarchy (weights = path product of sibling fractions), fair on CPU */
        FAIR_M_CH, /* the same, fair on memory */
        _FAIR_ALGO_MAX,
} fair_algo;

/* The controller's default: H-DRF, which keeps every node's hierarchical share guarantee on
 * every tree; MCH does not when jobs need only some resources or stop wanting tasks
 * (docs/policies.md, "Does MCH equal H-DRF?"). */
#define FAIR_DEFAULT FAIR_HDRF

typedef struct fair_node {
        const char *name;             /* for messages only; may be NULL ("node #<index>") */
        int32_t parent;               /* index of the parent in the node array; -1 for the one root */
        double weight;                /* > 0: share among siblings is weight / sum of the siblings' */
        double cap;                   /* (0, 1]: the subtree never holds more than this fraction of any
                                       * resource; 1 = no cap */
        int64_t demand[FAIR_RES_MAX]; /* leaves: per task, each in [0, capacity], not all 0 */
        int64_t tasks;                /* leaves: tasks wanted, >= 0 (0: inactive) */
} fair_node;

typedef struct fair_problem {
        size_t nres;                    /* 1 .. FAIR_RES_MAX; C-CH needs 1, M-CH 2 */
        int64_t capacity[FAIR_RES_MAX]; /* each in 1 .. FAIR_AMOUNT_MAX */
        const fair_node *nodes;         /* leaves are the nodes no other node names as parent */
        size_t nnodes;                  /* 1 .. FAIR_NODES_MAX */
} fair_problem;

typedef struct fair_state fair_state;

/* "drf", "wdrf", "hdrf", "mch", "c-ch", "m-ch". */
const char *fair_algo_name(fair_algo a);
/* Inverse of fair_algo_name. Returns 0 or -EINVAL. */
int fair_algo_from_name(const char *name, fair_algo *out);

/* Check p for algorithm a: one root, parents in range, no cycle, weights and caps in range,
 * demands within capacity. Returns 0, -EINVAL with one line naming the node in why, or
 * -ENOMEM. O(nnodes + nnodes x nres). */
int fair_check(const fair_problem *p, fair_algo a, char *why, size_t whylen);

/* A state with no task running, for problem p under algorithm a (p is copied; the names are
 * not, so they must outlive the state). Returns 0 and *out (free with fair_free), -EINVAL with
 * why filled (fair_check), or -ENOMEM. */
int fair_new(const fair_problem *p, fair_algo a, fair_state **out, char *why, size_t whylen);
void fair_free(fair_state *s);

/* The leaf that gets the next task, or -1 when no leaf wants one that fits (the capacity left,
 * and the caps of its ancestors). Changes nothing; ties go to the lowest index. */
long fair_next(const fair_state *s);
/* Start one task of leaf. Returns 0, -EINVAL (not a leaf), or -ENOSPC (it wants no more tasks,
 * or the next one does not fit). */
int fair_charge(fair_state *s, size_t leaf);
/* End one running task of leaf. Returns 0, -EINVAL (not a leaf), or -ENOENT (none running). */
int fair_release(fair_state *s, size_t leaf);
/* fair_next then fair_charge until no leaf can take a task. Returns the tasks started. */
size_t fair_run(fair_state *s);

/* Tasks leaf runs now (0 for an internal node). */
int64_t fair_tasks(const fair_state *s, size_t node);
/* What node's subtree holds of resource r now. */
int64_t fair_used(const fair_state *s, size_t node, size_t r);
/* max over resources of fair_used / capacity: the subtree's dominant share. */
double fair_dominant_share(const fair_state *s, size_t node);
/* The weight the algorithm gives leaf among all leaves (MCH, C-CH, M-CH: the flattened weight;
 * DRF: 1; WDRF and H-DRF: the leaf's own); 0 for an internal node or a leaf wanting no task. */
double fair_weight(const fair_state *s, size_t node);
/* MCH's first saturated resource k' (the paper, section III-A3), or -1 for other algorithms. */
int fair_first_saturated(const fair_state *s);

/* node's hierarchical share guarantee: 1 for the root; below it, the least of the node's cap and
 * its parent's guarantee x its weight / the sum of its and its siblings' weights. */
double fair_guarantee(const fair_state *s, size_t node);
/* Per node (out: one entry per node), how far its dominant share is below its guarantee while
 * the guarantee is owed: some leaf below it wants another task that only the cluster or a cap at
 * the node or above it keeps out (a node whose jobs have all they want, or stop at a cap inside
 * it, is owed no more); else 0. O(leaves x depth x nres). */
void fair_shortfalls(const fair_state *s, double *out);
