/* lotes_live.h - LoTES on a live cluster: job classes learned from the jobs seen, a plan (stages
 * 1 and 2 of lotes.h) built from a snapshot, and a dispatcher whose plan can be swapped.
 *
 * The controller (controller/daemon/lotes_plan.c) drives these; everything here is pure:
 *   - lotes_learn: the class mix of the jobs submitted in a window (requests rounded, GPU counts
 *     kept exact and apart, at most max_classes classes), their arrival rates and mean
 *     processing times;
 *   - lotes_drifted: whether a mix differs enough from the one a plan was solved for;
 *   - lotes_model_new + lotes_model_solve: a plan for the up machines and a mix, built on plain
 *     copies so that it can be solved on another thread;
 *   - lotes_live_new + lotes_live_swap: a dispatcher (dispatch.h) that places with first-fit
 *     until it has a plan, then with LoTES's stage 3, and takes a new plan at any time, keeping
 *     the jobs it placed counted (kappa) under the new plan. */
#pragma once
#include "lotes.h"

/* A job as the learner sees it. */
typedef struct lotes_sample {
        res_t req;
        double submit;  /* seconds on the caller's clock */
        double runtime; /* seconds it ran (finished), else its submitter's estimate, else < 0 */
} lotes_sample;

/* Job classes and their traffic: configured, or learned by lotes_learn. */
typedef struct lotes_mix {
        size_t n;
        char **name;     /* NULL for a learned class (jobs join it by request, not by type) */
        res_t *req;      /* the class's mean request */
        double *rate;    /* arrivals per second */
        double *runtime; /* mean processing time, seconds (> 0) */
} lotes_mix;

/* Make m hold n classes, zeroed (the previous contents are freed). Returns 0 or -ENOMEM. */
int lotes_mix_alloc(lotes_mix *m, size_t n);
/* Free m's arrays (a zeroed mix is fine). */
void lotes_mix_free(lotes_mix *m);
/* Copy src into dst (freed first). Returns 0 or -ENOMEM. */
int lotes_mix_copy(lotes_mix *dst, const lotes_mix *src);

#define LOTES_CPU_STEP 100          /* learned requests are rounded to 0.1 core... */
#define LOTES_MEM_STEP (16ll << 20) /* ...and 16 MiB */

/* Learn the classes of the samples submitted in (now - window, now]: one class per distinct
 * rounded request, then, while there are more than max_classes, the class with the fewest jobs
 * merged into the nearest (requests as fractions of the largest), the larger keeping its place.
 * A class's rate is its jobs in the window over the window; its runtime the mean of its known
 * runtimes, else the mean of every known runtime in the window, else 1 s. Classes come out in
 * the order of their rounded requests (CPU, then memory): the same jobs give the same mix. Fills
 * out (lotes_mix_free); out->n is 0 when no sample is in the window. Returns 0, -EINVAL
 * (window <= 0 or max_classes 0), or -ENOMEM. O(n log n + c^2) for c distinct requests. */
int lotes_learn(const lotes_sample *s, size_t n, double now, double window, size_t max_classes, lotes_mix *out);

/* True when cur differs from old, the mix a plan was solved for: another number of classes, a
 * class whose rounded request is not in old, shares of the arrivals (rate over total rate) whose
 * sum of absolute differences exceeds threshold, or a mean runtime off by more than threshold
 * of old's. Classes are matched by rounded request. */
bool lotes_drifted(const lotes_mix *old, const lotes_mix *cur, double threshold);

/* A plan and everything it borrows from: the live dispatcher owns it. */
typedef struct lotes_model {
        lotes_config *configs;
        lotes_class *classes;
        double *mu;
        lotes_problem problem;
        lotes_alloc alloc;
        lotes_plan plan;
        lotes_mix mix;   /* what it was solved for */
        res_t *machines; /* the up machines' capacities it was solved for */
        size_t nmachines;
} lotes_model;

/* A model of the up machines (grouped by capacity into configurations) and mix (alpha_k the
 * class's share of the arrivals, mu_jk = 1 / runtime where the class's request fits j, 0
 * elsewhere; a class that fits no configuration gets alpha 0). Copies both: nothing is
 * borrowed. Returns 0, -EINVAL (no up machine, or an empty mix) with err set, or -ENOMEM;
 * *out is freed with lotes_model_free. */
int lotes_model_new(const sched_machine *machines, size_t nmachines, const lotes_mix *mix, lotes_model **out, char *err,
                    size_t errlen);
/* Stages 1 and 2 on m. Returns 0 or an error of lotes_allocate / lotes_assign, with err set. */
int lotes_model_solve(lotes_model *m, char *err, size_t errlen);
/* Free m (NULL is fine). */
void lotes_model_free(lotes_model *m);
/* True when the up machines' capacities, as a multiset, are those m was solved for. */
bool lotes_model_same_machines(const lotes_model *m, const sched_machine *machines, size_t nmachines);

/* A dispatcher named "lotes" that places with first-fit (arrival: the first machine it fits;
 * exit: the waiting jobs in id order) until lotes_live_swap gives it a plan. Returns 0 or
 * -ENOMEM. */
int lotes_live_new(uint64_t seed, sched_dispatcher **out);
/* Dispatch with m's plan from now on (d takes m; the previous model is freed). The jobs d placed
 * that are still running are counted in the new plan's kappa (classified by it) at the next
 * pass, and every machine is rescanned then. Returns 0 or -ENOMEM (d keeps its old plan and m
 * is freed). */
int lotes_live_swap(sched_dispatcher *d, lotes_model *m);
/* The model d dispatches with, or NULL while it uses first-fit. */
const lotes_model *lotes_live_model(const sched_dispatcher *d);
/* How many jobs of class k (of the current model) d counts on machine m (kappa_mk), for tests
 * and status; 0 without a model. */
uint32_t lotes_live_kappa(const sched_dispatcher *d, size_t m, size_t k);
