/* coloc_internal.h - what the coloc_*.c files share and nobody else should call (coloc__). */
#pragma once
#include "coloc.h"
#include <stdbool.h>

/* Per-machine running state while a schedule is built: tc[k*T + b] is the cost a job of type
 * b has (or would have) on machine k, count[k*T + b] how many jobs of type b are there, load[k]
 * the plain sum of loads. Adding a job of type a and load p adds p * alpha[a][b] to every
 * tc[k*T + b], so a machine's cost, and its cost after a job would join it, take O(T). */
typedef struct coloc__machines {
        const coloc_instance *in;
        size_t m;
        double *tc;
        uint32_t *count;
        double *load;
} coloc__machines;

/* Allocate for m machines, all empty. Returns 0 or -ENOMEM; free with coloc__machines_free. */
int coloc__machines_init(coloc__machines *s, const coloc_instance *in, size_t m);
void coloc__machines_free(coloc__machines *s);
/* Empty every machine again. */
void coloc__machines_clear(coloc__machines *s);
/* Put job j on machine k. */
void coloc__machines_add(coloc__machines *s, size_t k, uint32_t j);
/* Machine k's cost now (0 when empty), and what it would be with job j added. */
double coloc__machine_cost(const coloc__machines *s, size_t k);
double coloc__machine_cost_with(const coloc__machines *s, size_t k, uint32_t j);

/* The n job indices of in, sorted by decreasing load (ties: lower index first). When key is
 * not NULL, sorted by increasing key[j] first (a cluster or a type), then so. Returns a new
 * array (free()) or NULL when out of memory. */
uint32_t *coloc__sorted_jobs(const coloc_instance *in, const uint32_t *key);

/* A subset of the jobs, sorted by decreasing load, to schedule on machines first..first+m-1. */
typedef struct coloc__view {
        const coloc_instance *in;
        const uint32_t *jobs;
        size_t n;
        uint32_t first;
        size_t m;
} coloc__view;

/* LPT (the paper's A): each job, largest first, to the machine of v with the smallest load
 * (the lowest index on a tie). Writes machine_of[j] for v's jobs. O(n log m). Returns 0 or
 * -ENOMEM. */
int coloc__lpt(const coloc__view *v, uint32_t *machine_of);

/* The cost of v's jobs alone on v's machines as machine_of places them; s must hold m machines
 * (it is cleared first). */
double coloc__view_cost(const coloc__view *v, const uint32_t *machine_of, coloc__machines *s);

/* SchedMixed, SchedJuxtapose or BestSchedule (a) on view v, the result's cost in *cost.
 * Returns 0 or -ENOMEM. */
int coloc__sched_lpt(coloc_algo a, const coloc__view *v, uint32_t *machine_of, double *cost);

/* The fill family: FillGreedy, GreedyFor2Types, FillRebalance (coloc_fill.c). */
int coloc__fill_greedy(const coloc_instance *in, uint32_t *machine_of);
int coloc__greedy_for_2_types(const coloc_instance *in, uint32_t *machine_of);
int coloc__fill_rebalance(const coloc_instance *in, uint32_t *machine_of);
/* GreedyDedicated with inner algorithm a (coloc_lpt.c). */
int coloc__greedy_dedicated(coloc_algo inner, const coloc_instance *in, uint32_t *machine_of);
