/* coloc_dispatch.h - colocation by type on a live cluster: a dispatcher (dispatch.h) that puts
 * each job where the largest colocation cost among machines stays smallest.
 *
 * The cost model is coloc.h's: on a machine, a job of type b costs
 *     c = sum over the jobs j there (itself included) of p_j * alpha[t_j][b]
 * and a machine costs the most of its jobs' costs. Here alpha comes from the controller's
 * measured matrix (coloc_dispatcher_set_alpha), p_j is the job's expected run time in seconds
 * (sched_job.runtime), else the mean run time of its type's jobs that ended
 * (coloc_dispatcher_note_runtime), else 1, and a job whose type the matrix does not name
 * (or that has none) is of an extra "unknown" type, with alpha 1 to and from every type,
 * itself included: it slows and is slowed like a job of a type's own kind.
 *
 * Arrival: among the up machines the job fits, one after which the largest machine cost of
 * the cluster is smallest: the machine whose own cost after the job is smallest (the first on
 * a tie), which is such a machine (coloc_dispatch.c says why). If it fits nowhere it waits.
 * Exit: the waiting jobs that fit the freed machine, in id order, each placed by the same rule.
 * The dispatcher keeps the jobs that wait (kept.h), so that a job offered late (fresh,
 * dispatch.h) is an arrival, not a job waiting for an exit, and reads them by id (ops.by_id: the
 * core may offer the arrivals alone). Costs are kept per machine as the load of each type, so a
 * decision costs O(machines x types^2). */
#pragma once
#include "dispatch.h"

/* A "coloc" dispatcher with no matrix yet (every alpha 1). Returns 0 or -ENOMEM. */
int coloc_dispatcher_new(sched_dispatcher **out);
/* Place by this matrix from now on (T x T, row-major as in coloc.h, with the types' names;
 * copied). The running jobs it placed are re-typed by name. Returns 0 or -ENOMEM (d keeps its
 * old matrix). */
int coloc_dispatcher_set_alpha(sched_dispatcher *d, const char *const *types, size_t ntypes, const double *alpha);
/* A job of that type (NULL: none) ran for seconds (> 0; others are ignored): jobs of the type
 * that give no estimate count the mean of these as their load from their placement on.
 * Returns 0 or -ENOMEM. */
int coloc_dispatcher_note_runtime(sched_dispatcher *d, const char *type, double seconds);
/* The cost of machine m now (0 when empty or not seen yet). */
double coloc_dispatcher_cost(const sched_dispatcher *d, size_t m);
