/* lotes.h - LoTES, Long Term Evaluation Scheduling (Tran, Padmanabhan, Zhang, Li, Down and
 * Beck, "Multi-stage resource-aware scheduling for data centers with heterogeneous servers",
 * Journal of Scheduling 2018, section 4): three stages that plan how job classes share machine configurations, then
 * dispatch each job to follow the plan.
 *
 *   1. lotes_allocate: the allocation LP (1)-(5), a fluid model pooling each configuration
 *      into one super-machine: max lambda over delta_jkl, the share of resource l of
 *      configuration j given to class k, with the per-resource stability constraints (2),
 *      the same-ratio constraints (3) and the capacities (4).
 *   2. lotes_enumerate_bins + lotes_assign: the non-dominated bins (multisets of jobs of the
 *      classes with delta_jk > 0 that fill a machine of j so that no further job fits), the
 *      machine-assignment LP (6)-(10) over x_ij, the machines of j that emulate bin i, and the
 *      paper's rounding (round up the q_j largest fractional parts, the others down).
 *   3. lotes_dispatcher_new: the online dispatcher (dispatch.h) of section 4.3.
 *
 * Stages 1 and 2 solve LPs with GLPK's simplex (glp_simplex): the LP presolver on, the
 * problem scaled first with glp_scale_prob(GLP_SF_AUTO), every message off (msg_lev
 * GLP_MSG_OFF, and glp_term_out(GLP_OFF) while solving, restored after). Resources enter the
 * LPs as fractions of the largest capacity of each resource, which leaves (1)-(10) unchanged
 * and keeps coefficients near 1. Bins are enumerated in exact integer arithmetic (milli-cores,
 * bytes, GPUs). Two resources have columns: cores and memory. GPUs (issue 25) need none: by the
 * same-ratio constraints (3) a class's GPU share of a configuration follows from its core share,
 * so they add one capacity row (4) per configuration with GPUs; a class asking GPUs gets no share
 * of a configuration without enough, and no bin holds more GPUs than its machine.
 *
 * Nothing here reads a clock, does I/O or keeps a global: the caller times the stages. */
#pragma once
#include "dispatch.h"
#include "res.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define LOTES_NRES     2       /* l = 0: cores, l = 1: memory */
#define LOTES_MAX_BINS 2000000 /* per configuration: beyond it lotes_assign refuses (-E2BIG) */

typedef struct lotes_config {
        size_t count;   /* n_j machines */
        res_t capacity; /* c_j */
} lotes_config;

typedef struct lotes_class {
        const char *name; /* jobs whose type is this name are of this class */
        double alpha;     /* alpha_k: the probability that an arrival is of this class */
        res_t req;        /* r_k: the expected request (mcpu and mem > 0) */
} lotes_class;

/* The inputs of both offline stages. mu[j * nclasses + k] is mu_jk, the processing rate of a job
 * of class k on a machine of configuration j, per second (1 / its mean time); 0 where it
 * cannot run there. Classes whose expected request exceeds a configuration's capacity get no
 * share of it. */
typedef struct lotes_problem {
        const lotes_config *configs;
        size_t nconfigs;
        const lotes_class *classes;
        size_t nclasses;
        const double *mu;
} lotes_problem;

/* Stage 1's solution. */
typedef struct lotes_alloc {
        double lambda; /* lambda*: the largest arrival rate (jobs/s) the fluid model sustains */
        double *delta; /* delta_jkl at [(j * nclasses + k) * LOTES_NRES + l] */
} lotes_alloc;

/* The non-dominated bins of one configuration: bin b holds count[b * nclasses + k] jobs of
 * class k (0 for classes outside K_j), in the order the enumeration finds them. */
typedef struct lotes_bins {
        size_t n, nclasses;
        uint32_t *count;
} lotes_bins;

/* Stage 2's solution. Bins of configuration j are bins[j]; x and machines run over every
 * configuration's bins in turn, configuration j's from first[j]. */
typedef struct lotes_plan {
        size_t nconfigs, nclasses;
        lotes_bins *bins;
        size_t *first;
        double *x;          /* x_ij of the machine-assignment LP */
        uint32_t *machines; /* x_ij rounded: how many machines of j emulate bin i */
        double *slots;      /* [j * nclasses + k]: jobs of class k the rounded plan runs on j at once;
                             * Delta_jkl = slots * r_kl */
        double lambda_lp;   /* lambda* of the machine-assignment LP */
        double lambda;      /* the rate the rounded plan sustains, by constraint (7) */
} lotes_plan;

/* Check p: counts and capacities positive, alphas >= 0 summing to more than 0, requests
 * positive, rates >= 0, and every class with alpha > 0 able to run on some configuration.
 * Returns 0 or -EINVAL with the reason, naming the configuration or class, in err. */
int lotes_check(const lotes_problem *p, char *err, size_t errlen);

/* Stage 1: solve the allocation LP. Fills out (free with lotes_alloc_free). Returns 0, -EINVAL
 * (lotes_check), -EDOM (GLPK found the LP infeasible or unbounded, or lambda* = 0), -ENOMEM;
 * err says which. */
int lotes_allocate(const lotes_problem *p, lotes_alloc *out, char *err, size_t errlen);
void lotes_alloc_free(lotes_alloc *a);

/* The delta_jk of stage 1 (any resource: constraint (3) makes them proportional) is positive. */
bool lotes_alloc_uses(const lotes_problem *p, const lotes_alloc *a, size_t j, size_t k);

/* Stage 2, first step: every non-dominated bin of configuration j over the classes k with
 * use[k] (the paper's K_j). Fills out (free with lotes_bins_free). Returns 0, -E2BIG past
 * LOTES_MAX_BINS bins, or -ENOMEM. */
int lotes_enumerate_bins(const lotes_problem *p, size_t j, const bool *use, lotes_bins *out);
void lotes_bins_free(lotes_bins *b);

/* Stage 2: the bins of every configuration (over the classes stage 1 gave it), the
 * machine-assignment LP, and the rounding. Fills out (free with lotes_plan_free). Returns 0,
 * -E2BIG, -EDOM or -ENOMEM with the reason in err. */
int lotes_assign(const lotes_problem *p, const lotes_alloc *a, lotes_plan *out, char *err, size_t errlen);
void lotes_plan_free(lotes_plan *plan);

/* Free GLPK's environment of the calling thread (GLPK keeps one per thread): a thread that ran
 * stages 1 or 2 calls it before it ends, or the environment leaks with it. */
void lotes_thread_done(void);

/* Stage 3, roulette: a configuration for a job of class k, drawn with probability
 * rho_jk = slots_jk / sum_m slots_mk among those with slots > 0 and not yet tried[]. Advances
 * *rng. Returns the configuration, or -1 when none is left. */
long lotes_roulette(const lotes_plan *plan, size_t k, const bool *tried, uint64_t *rng);

/* The class of a job: the class named by its type, else the class whose expected request is
 * nearest to req (resources as fractions of the largest configuration's). */
size_t lotes_classify(const lotes_problem *p, const sched_job *j);

/* Stage 3: the dispatcher of section 4.3 (see dispatch.h for how the core drives it). A machine
 * belongs to the configuration of the same capacity; the machines of a configuration emulate
 * its bins in plan order, x_ij of them each (wrapping around if more machines come than the
 * plan counted). Arrival: roulette over configurations, the machine of that configuration
 * with the largest upsilon = N_ijk - kappa_jk that fits, the other configurations with
 * Delta_jk > 0 in roulette order, then any machine; else the job waits in its class's queue.
 * Exit: the classes with Delta_jk > 0 on that machine's configuration by decreasing upsilon,
 * each queue in arrival order, re-ranked when a start demotes a class; a class with
 * Delta_jk = 0 never starts from a queue. One addition to the paper: a waiting job too large for
 * every configuration with Delta_jk > 0 of its class (its own request, not the class's mean)
 * may start on any machine's exit, after the class queues, or it would wait forever. p and plan
 * are borrowed: they must outlive the dispatcher. Returns 0 or -ENOMEM. */
int lotes_dispatcher_new(const lotes_problem *p, const lotes_plan *plan, uint64_t seed, sched_dispatcher **out);
/* Count job, running on machine m since before d (a dispatcher of lotes_dispatcher_new) was
 * made, in its kappa, under the class d gives it; p is a pass, for the machines' capacities.
 * A live plan swap replays the running jobs through it. Returns 0 or -ENOMEM. */
int lotes_dispatcher_adopt(sched_dispatcher *d, const sched_pass *p, const sched_job *job, size_t m);
/* kappa of class k on machine m: the jobs of that class d counts there (0 for a machine it has
 * not mapped yet). */
uint32_t lotes_dispatcher_kappa(const sched_dispatcher *d, size_t m, size_t k);
