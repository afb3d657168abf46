/* fairorder.h - the order in which the controller offers pending jobs to the placement policy:
 * the next job is the one of the leaf department whose running dominant share is furthest below
 * its entitlement. Pure: plain structs in and out, no I/O, no clock (state.c and `colony shares`
 * call it).
 *
 * The tree is the configured departments (depts.h) under a root, plus a default department,
 * FAIRORDER_DEFAULT, at the top level with weight 1, for jobs of no group (or of a group that a
 * reload removed or turned into an inner department). A pass:
 *
 *   1. entitlements: a fair_problem (policies/fair.h) whose leaves are the leaf departments, each
 *      wanting running + pending tasks of their mean request, on the capacity of the up nodes;
 *      fair_run under the configured algorithm gives each node the dominant share it is entitled
 *      to (caps included);
 *   2. order: a heap of the leaf departments with pending jobs, keyed by running dominant share
 *      over entitlement (an entitlement of 0, a department whose mean task did not fit, counts as
 *      one job's worth, so no department waits forever); the least goes next with its oldest
 *      pending job, whose request is then added to its share (and its ancestors'), as if started;
 *   3. caps: a job that would take a capped department (or one of its ancestors) beyond its cap
 *      of the capacity is held, with every later job of its department, for this pass.
 *
 * Cost per pass, with D departments, T the tasks fair_run places (at most what the cluster
 * holds) and d the depth: O(D log D + T log D) for the entitlements, then O(log D + d) for each
 * job taken from the order (a walk, below, reads only as far as the pass places; the departments'
 * pending jobs and their sums come from the caller, who keeps them). A single department with
 * pending jobs and no cap on its path keeps submission order without solving anything.
 * fairorder_rank orders a whole array of pending jobs (`colony shares`), O(P) more. */
#pragma once
#include "depts.h"
#include "fair.h"
#include "res.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define FAIRORDER_DEFAULT "(none)"

typedef struct fairorder {
        fair_algo algo;
        size_t n;          /* nodes: 0 the root, then the departments (parents first), then the default */
        fair_node *nodes;  /* the tree, names are paths ("" for the root); demands filled per pass */
        uint32_t *sorted;  /* node indices sorted by path, for lookups */
        res_t *used;       /* per node: requests of the running jobs of that very department */
        uint32_t *running; /* per node: running jobs of that very department */
        bool *inner;       /* per node: some node names it as parent (the root always) */
} fairorder;

/* One pending job, as fairorder_rank sees it. */
typedef struct fairorder_job {
        uint32_t dept; /* fairorder_dept() of its group */
        res_t req;
        bool waits; /* it may not start (held, a dependency, a begin time): it takes no turn, and
                     * counts in its department's demand */
} fairorder_job;

/* Per node, what a pass found (fairorder_rank's report). */
typedef struct fairorder_share {
        double entitled; /* dominant share the algorithm gives the subtree */
        double share;    /* dominant share of the subtree's running jobs */
        uint32_t running, pending;
        bool held;             /* a job of it is held by a cap this pass */
        double entitled_other; /* entitled under fairorder_other_algo */
} fairorder_share;

typedef struct fairorder_report {
        fairorder_share *nodes; /* fo->n of them, allocated by the caller */
        long next;              /* index in pending of the job offered first, or -1 */
        uint32_t next_dept;     /* its department */
} fairorder_report;

/* Build the tree of d (copied: d may be freed after) for algorithm algo, with nothing running.
 * Returns 0 or -ENOMEM. */
int fairorder_init(fairorder *fo, const depts *d, fair_algo algo);
/* Free what fairorder_init allocated. */
void fairorder_free(fairorder *fo);
/* Whether the tree has a configured department: without one every job is in the default
 * department and the order is the submission order. */
bool fairorder_has_depts(const fairorder *fo);
/* Whether a department of the tree has a cap (below 1): the order then holds jobs back. */
bool fairorder_has_caps(const fairorder *fo);
/* The node a job of group runs under: its leaf department, or the default one (NULL group,
 * unknown, or not a leaf). O(log D). */
uint32_t fairorder_dept(const fairorder *fo, const char *group);
/* A job of department dept with request req started (sign +1) or ended (-1). */
void fairorder_charge(fairorder *fo, uint32_t dept, res_t req, int sign);
/* Order pending (n jobs, in submission order) for capacity: order[0 .. *nkept) are the indices
 * of the jobs to offer, in that order, order[*nkept .. n) those held by caps, then those that
 * wait. rep, when not NULL,
 * gets the pass's figures (the entitlements are then computed even where the order needs none).
 * Returns 0, or -ENOMEM / -EINVAL (the fair code refused the tree: a bug) with order the
 * identity. */
int fairorder_rank(const fairorder *fo, res_t capacity, const fairorder_job *pending, size_t n, uint32_t *order,
                   size_t *nkept, fairorder_report *rep);
/* Where a walk reads each leaf department's pending jobs, in submission order: the
 * controller's sets of them, or an array (fairorder_rank). */
typedef struct fairorder_source {
        const uint32_t *npend; /* per node: its pending jobs (leaves; 0 for the others) */
        const res_t *pend_sum; /* per node: their requests summed */
        /* leaf's pending job after its job at after (UINT32_MAX: its first): its place in the
         * source, or UINT32_MAX when none; *seq set to its place in submission order, *req to
         * its request */
        uint32_t (*next)(void *arg, uint32_t leaf, uint32_t after, uint64_t *seq, res_t *req);
        void *arg;
} fairorder_source;

/* A job a walk hands out: its leaf department and its place in the source. */
typedef struct fairorder_pick {
        uint32_t leaf, at;
} fairorder_pick;

/* One pass's order taken a window at a time, so that a pass which stops at the first job that
 * fits nowhere (strict FIFO) orders only what it offered: the set-up is O(D log D + T log D),
 * each job taken O(log D + d) and a call of src->next. The order is fairorder_rank's, whatever
 * the windows. */
typedef struct fairorder_walk fairorder_walk;
/* Start a walk over src's jobs (src->arg read until fairorder_walk_free). Returns 0 with *out
 * set, or -ENOMEM / -EINVAL (the fair code refused the tree: a bug). */
int fairorder_walk_start(const fairorder *fo, res_t capacity, const fairorder_source *src, fairorder_walk **out);
/* fairorder_walk_start over the n jobs of pending (in submission order; read until
 * fairorder_walk_free), each pick's place its index there. O(n) more to list them. */
int fairorder_walk_jobs(const fairorder *fo, res_t capacity, const fairorder_job *pending, size_t n,
                        fairorder_walk **out);
/* The next at most max jobs of the order into order; 0 at the end. */
size_t fairorder_walk_next(fairorder_walk *w, fairorder_pick *order, size_t max);
/* From now on a department a cap holds gives *held of fairorder_walk_stop its next job alone,
 * and its later jobs are not read: a pass that reads only as far as it places, O(1) a held
 * department (a capped department's 100,000 pending jobs were each listed at every pass). */
void fairorder_walk_hold_heads(fairorder_walk *w);
/* End the walk: the departments whose next job a cap holds now are held too. *held gets the jobs
 * held by caps, in submission order within each department (valid until fairorder_walk_free);
 * returns how many. */
size_t fairorder_walk_stop(fairorder_walk *w, const fairorder_pick **held);
/* Free a walk (NULL is fine). */
void fairorder_walk_free(fairorder_walk *w);
/* The algorithm `colony shares` compares fo's with: MCH under H-DRF, else H-DRF. */
fair_algo fairorder_other_algo(const fairorder *fo);

/* Why rep's next job goes first, in one line ("physics/astro is 0.21 below its entitlement
 * (0.05 of 0.26)"), into buf; "" when there is no next job. */
void fairorder_why(const fairorder *fo, const fairorder_report *rep, char *buf, size_t len);
