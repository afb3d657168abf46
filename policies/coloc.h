/* coloc.h - colocating jobs with types: minimise the largest colocation cost among machines.
 *
 * Source: Pascual & Rzadca, "Optimizing egalitarian performance when colocating tasks with
 * types for cloud data center resource management", here "the paper".
 *
 * Model (paper, Eq. 1). n jobs go to m identical machines; job j has a type t_j in 0..T-1 and
 * a load p_j >= 0. The cost of job i is the load of every job on i's machine, i itself and the
 * other jobs of its type included, weighted by how much that job's type slows i's type:
 *
 *     c_i = sum over jobs j on i's machine of p_j * alpha[t_j][t_i]
 *
 * so alpha[a][b] (row a, column b) is the slowdown a unit of type a's load causes a job of
 * type b; the paper's alpha_{t',t}. The paper normalises alpha[t][t] = 1; colony accepts any
 * alpha >= 0, but the approximation ratios below assume that normalisation. A machine's cost is
 * the largest cost of a job on it (0 when empty); the schedule's cost is the largest machine's.
 *
 * Everything here is pure: plain structs in and out, no I/O, no clock, no globals. Functions
 * return 0 (or a count) on success and -errno on failure; none of them keeps a pointer into its
 * arguments. Algorithms' details and where the paper is ambiguous: coloc_*.c, docs/policies.md. */
#pragma once
#include <stddef.h>
#include <stdint.h>

typedef struct coloc_instance {
        size_t ntypes;        /* T >= 1 */
        const double *alpha;  /* T x T, row-major: alpha[a * T + b] as above */
        size_t njobs;         /* n */
        const uint32_t *type; /* n types, each < T */
        const double *load;   /* n loads p_j >= 0 */
        size_t nmachines;     /* m >= 1 */
} coloc_instance;

/* Check in: T, m >= 1, every type < T, every alpha and load finite and >= 0. Returns 0, or
 * -EINVAL with a one-line reason naming the field ("job 3: load -1 is negative") in err. */
int coloc_check(const coloc_instance *in, char *err, size_t errlen);

/* The paper's algorithms (PTAS left out). The plot label in the paper's Fig. 1 follows each. */
typedef enum coloc_algo {
        COLOC_FILL_GREEDY,         /* fill: clusters of compatible types, each machine filled to a
                                    * threshold found by bisection (Sec. 4.2, 7.1.2) */
        COLOC_SCHED_MIXED,         /* mix: LPT on all jobs, types ignored (Sec. 5) */
        COLOC_SCHED_JUXTAPOSE,     /* jux: LPT per type, schedules joined (Sec. 5) */
        COLOC_BEST_SCHEDULE,       /* best: the cheaper of mix and jux (Sec. 5) */
        COLOC_GREEDY_DEDICATED,    /* d-best: machines split among clusters, best inside (Sec. 5) */
        COLOC_DEDICATED_MIXED,     /* d-mix: the same with mix inside */
        COLOC_DEDICATED_JUXTAPOSE, /* d-jux: the same with jux inside */
        COLOC_GREEDY_FOR_2_TYPES,  /* g2: fill to W/m + max(W/m, p_max), one shared machine (Sec. 6.2) */
        COLOC_FILL_REBALANCE,      /* fill-r: fill, then the rest where their cost fits (Sec. 7.1.2) */
        _COLOC_ALGO_MAX,
} coloc_algo;

/* "fill-greedy", "sched-mixed", "sched-juxtapose", "best-schedule", "greedy-dedicated",
 * "greedy-dedicated-mixed", "greedy-dedicated-juxtapose", "greedy-for-2-types",
 * "fill-rebalance". */
const char *coloc_algo_name(coloc_algo a);
/* The paper's short label: "fill", "mix", "jux", "best", "d-best", "d-mix", "d-jux", "g2",
 * "fill-r". */
const char *coloc_algo_label(coloc_algo a);
/* Inverse of coloc_algo_name (the label is accepted too). Returns 0 or -EINVAL. */
int coloc_algo_from_name(const char *name, coloc_algo *out);

/* Run algorithm a on a checked instance: machine_of[j] (caller's array of n entries) gets job
 * j's machine, 0..m-1. Returns 0; -ENOSPC when fill-greedy or a greedy-dedicated variant has
 * more clusters of compatible types than machines (each cluster needs its own machine; the
 * paper assumes m > T); -ENOMEM; -EINVAL for an a out of range. Deterministic: ties go to the
 * lowest job and machine index. */
int coloc_run(coloc_algo a, const coloc_instance *in, uint32_t *machine_of);

/* Types grouped into clusters of mutually compatible types (alpha[a][b] <= 1 and
 * alpha[b][a] <= 1 for every pair in a cluster), greedily in type order, types without jobs
 * left out: cluster_of[t] gets t's cluster (UINT32_MAX for a type without jobs). Returns the
 * number of clusters K, or -ENOMEM. */
long coloc_clusters(const coloc_instance *in, uint32_t *cluster_of);

/* The cost of an assignment (machine_of[j] < m for every job): machine_cost (m entries, or
 * NULL) gets each machine's cost, *max_cost the largest. Returns 0 or -ENOMEM. */
int coloc_cost(const coloc_instance *in, const uint32_t *machine_of, double *machine_cost, double *max_cost);

/* A lower bound on the optimal cost, and its two parts. */
typedef struct coloc_bound {
        double p_max;      /* max_j p_j * alpha[t_j][t_j]: a job's cost alone (p_max when normalised) */
        double relaxation; /* the divisible-load relaxation solved as a linear program with GLPK */
        double value;      /* max(p_max, relaxation) */
} coloc_bound;

#define COLOC_BOUND_MAX_TYPES 12 /* the LP has one block per set of types: 2^T - 1 of them */

/* Compute the bound of a checked instance (coloc_bound.c says how; docs/policies.md why it is
 * a bound). Returns 0; -E2BIG when more than COLOC_BOUND_MAX_TYPES types have jobs; -ENOMEM;
 * -EIO when GLPK's simplex fails or does not reach an optimum, with the reason in err. */
int coloc_lower_bound(const coloc_instance *in, coloc_bound *out, char *err, size_t errlen);

/* ---- The paper's experiment (Sec. 7.1.1): instances generated from a seed. ---- */

typedef struct coloc_rng {
        uint64_t state;
} coloc_rng;

/* Start r's sequence from seed: the same seed gives the same instances everywhere. */
void coloc_rng_seed(coloc_rng *r, uint64_t seed);
/* Uniform in [0, 1). */
double coloc_rng_uniform(coloc_rng *r);

/* How the coefficients are drawn (alpha[t][t] = 1, the others uniform): compatible in [0, 1),
 * incompatible in [1, 2], clashing in [1, 4], mixed: two clusters, types 0..ceil(T/2)-1 and the
 * rest, compatible [0, 1) inside and incompatible [1, 2] between them. */
typedef enum coloc_regime {
        COLOC_COMPATIBLE,
        COLOC_INCOMPATIBLE,
        COLOC_CLASHING,
        COLOC_MIXED,
        _COLOC_REGIME_MAX,
} coloc_regime;

/* "compatible", "incompatible", "clashing", "mixed". */
const char *coloc_regime_name(coloc_regime g);

/* Fill alpha (T x T) for regime g. */
void coloc_gen_alpha(coloc_rng *r, coloc_regime g, size_t ntypes, double *alpha);

/* n jobs drawn as a Google-like task sample (coloc_gen.c: how, and what is our assumption),
 * with T in 2..4 types from the CPU/memory ratio and load round(100 * max(cpu, mem)); when a
 * type is missing, a job of the most common type is replaced by one drawn of the missing type,
 * as the paper does. type and load hold n entries each. Returns 0 or -EINVAL (T outside 2..4,
 * or n < T). */
int coloc_gen_jobs(coloc_rng *r, size_t ntypes, size_t njobs, uint32_t *type, double *load);
