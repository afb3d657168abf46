/* fair_ref.h - slow, plain references for policies/fair: before every decision they recompute
 * everything (what each subtree holds, which leaves fit, every H-DRF vector) from the task
 * counts alone, straight from the definitions in docs/policies.md. O(nodes x depth x nres) per
 * decision. test_fair.c compares the incremental engines with them; bench_fair.c times them as
 * the H-DRF a scheduler gets without caching. */
#pragma once
#include "fair.h"

/* H-DRF from no task: tasks[i] (nnodes entries, zeroed here) gets each leaf's count. Stops after
 * max decisions. Returns the decisions made, or (size_t)-1 without memory. */
size_t ref_hdrf(const fair_problem *p, int64_t *tasks, size_t max);

/* Weighted flat fair sharing from no task: the leaf with weight[i] > 0 that fits and has the least
 * share / weight (share: the dominant one when res < 0, else that of resource res) gets each
 * next task. Otherwise as ref_hdrf. */
size_t ref_flat(const fair_problem *p, const double *weight, int res, int64_t *tasks, size_t max);

/* Static H-DRF by progressive filling (fair_fluid.c): from no allocation, every leaf's dominant
 * share grows so that under each node the unblocked children keep equal dominant share / weight,
 * a node's share being of what its subtree really holds; a leaf stops when it has all its tasks
 * or no room is left in the cluster or under a capped ancestor. Simulated in slivers of step of
 * dominant share, each to the leaf reached from the root by the unblocked child with the least
 * share / weight; a leaf's last sliver fills what is left. Fills tasks (fractional), share and
 * used (nnodes x nres) per node. O(nodes^2 x depth x nres / step). Returns 0, or -1 without
 * memory. */
int ref_fluid_hdrf(const fair_problem *p, double step, double *tasks, double *share, double *used);
