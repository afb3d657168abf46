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
