/* dispatch.h - event-driven policies: the LoTES paper's baselines Tetris and Greedy (Tran et
 * al., "Multi-stage resource-aware scheduling for data centers with heterogeneous servers",
 * section 5.1), and the interface LoTES's dispatcher (lotes.h) shares with them.
 *
 * The NetBatch heuristics of sched.h are passes: each call sees the machines and the queue and
 * keeps nothing. The LoTES paper's schedulers instead react to two events, with state between
 * them (per-machine or per-class queues, counts of jobs per machine):
 *   - an arrival: the job is placed at once if the policy finds a machine, else it waits;
 *   - an exit: resources free on one machine, which may start waiting jobs.
 * A dispatcher reads both events from what the scheduling core (controller/core/state.c) gives it,
 * so that the controller and the simulator run it through the same code:
 *   - sched_dispatch(): one pass, with every machine and every pending job in id order (the
 *     core's own view). A pending job with an id above every id offered before is an arrival;
 *     ids only grow. So is a job offered late (fresh: released from a hold, its dependency met,
 *     requeued) that the policy did not keep waiting (ops.on_whole). A machine appended since
 *     the last pass, or up again after being down, counts as freed.
 *   - sched_dispatch_arrivals(): the same pass for a dispatcher that reads waiting jobs by id
 *     only (ops.by_id: Greedy), offered the arrivals alone and a lookup of the others, so that
 *     a pass costs what arrived and what the freed machines' queues name, not the queue.
 *   - sched_dispatch_exit(): a job the core ran left machine m (completed, failed, lost). m is
 *     the machine's position in the machines array, which must not change between passes.
 * Waiting jobs start only on exits, as in the paper (a fresh job arrives again). Like every
 * policy, a dispatcher does no I/O, reads no clock and keeps no global; its random draws come
 * from a seed given at creation.
 *
 * Not handled yet: a machine that goes down keeps Greedy's queue bound to it until it is back. */
#pragma once
#include "sched.h"
#include <stdbool.h>

typedef struct sched_dispatcher sched_dispatcher;

/* sched_machine.up of a node hidden from one run of a pass in runs (sched_dispatch_run): not up
 * for that run, yet neither down nor up again after it; an exit there waits for a run that sees
 * the node. */
#define SCHED_HIDDEN (-2)

/* The core's lookup of a waiting job by id: 1 with *out set when the job is pending and may be
 * offered now, 0 when it is not (started, ended, held). */
typedef int (*sched_find_fn)(void *ctx, uint64_t id, sched_job *out);

/* What one pass works on: the core's machines and pending jobs, which jobs this pass has
 * placed, and the assignments written so far. */
typedef struct sched_pass {
        sched_machine *machines;
        size_t nmachines;
        const sched_job *jobs;
        size_t njobs;
        bool *taken; /* by job position */
        sched_assignment *out;
        size_t placed;
        res_t largest; /* the largest capacity of each resource over the machines (Tetris) */
        /* A pass of the arrivals alone (sched_dispatch_arrivals): jobs[0..nsorted) are the
         * arrivals in id order; the waiting jobs a policy reads are found by id through find
         * (sched_pass_lookup) and appended behind them, in the owner's arrays. */
        size_t nsorted;
        sched_find_fn find;
        void *find_ctx;
        sched_dispatcher *owner;
        /* A whole pass (sched_dispatch) of a policy with on_whole: a bit by id from kept_from to
         * the last arrival's, set for each job the policy kept waiting (sched_pass_keep); a job
         * up to the last arrival whose bit is clear is fresh. */
        uint64_t *kept;
        uint64_t kept_from, kept_to;
        bool run; /* a run of a pass in runs (sched_dispatch_run): other pending jobs wait still */
} sched_pass;

/* A policy's reaction to each event; on_exit and on_arrival place jobs through sched_pass_assign
 * and return 0 or -ENOMEM. */
typedef struct sched_dispatcher_ops {
        const char *name;
        /* Machine m freed resources: start waiting jobs (ids <= the last pass's) on it. */
        int (*on_exit)(sched_dispatcher *d, sched_pass *p, size_t m);
        /* jobs[j] arrived: place it or let it wait. */
        int (*on_arrival)(sched_dispatcher *d, sched_pass *p, size_t j);
        /* A job the policy had placed left machine m (its counts). May be NULL. */
        void (*on_release)(sched_dispatcher *d, const sched_job *job, size_t m);
        void (*free)(sched_dispatcher *d);
        /* on_exit reads waiting jobs only through sched_pass_lookup: the core may offer the
         * arrivals alone (sched_dispatch_arrivals) instead of every pending job. */
        bool by_id;
        /* A pass offers every pending job (sched_dispatch), before the exits: the policy calls
         * sched_pass_keep for each job it kept waiting before, and keeps those alone of the jobs
         * up to the last arrival (in a run, p->run, the jobs not offered too). The others up to
         * it are fresh (held, blocked by a dependency or requeued while later jobs arrived): the
         * pass offers them as arrivals, after the exits, or they would wait for an exit, on an
         * idle cluster for ever. May be NULL (none is fresh). Returns 0 or -ENOMEM. */
        int (*on_whole)(sched_dispatcher *d, const sched_pass *p);
} sched_dispatcher_ops;

/* The part every dispatcher shares; a policy's own state follows it in memory. */
struct sched_dispatcher {
        const sched_dispatcher_ops *ops;
        uint64_t seen; /* the largest job id offered so far */
        size_t known;  /* machines offered so far */
        bool *freed;   /* by machine: released resources since the last pass */
        bool *was_up;  /* by machine: up at the last pass */
        size_t freed_cap;
        uint64_t rng; /* splitmix64 state (rng.h) */
        /* A pass of the arrivals alone: its jobs and their taken flags, kept between passes. */
        sched_job *own_jobs;
        bool *own_taken;
        size_t own_cap;
        uint64_t *kept_bits; /* a whole pass's sched_pass.kept */
        size_t kept_cap;
        bool want_whole; /* the next pass must offer every pending job: what the policy keeps was reset */
};

/* A new Tetris ("tetris"), Greedy ("greedy") dispatcher drawing from seed, or a colocation
 * ("coloc", coloc_dispatch.h) one with every alpha 1; free with sched_dispatcher_free. Returns
 * 0, -EINVAL for another name, or -ENOMEM. */
int sched_dispatcher_new(const char *name, uint64_t seed, sched_dispatcher **out);
/* The policy called name: a NetBatch heuristic in *h (and *d = NULL), or else a new dispatcher
 * of sched_dispatcher_new drawing from seed in *d (the caller frees it, or hands it to the
 * core). The one place that tells the two kinds apart. Returns 0, -EINVAL for an unknown name,
 * or -ENOMEM. */
int sched_policy_new(const char *name, uint64_t seed, sched_heuristic *h, sched_dispatcher **d);
/* How long a job of that type, drawn with that runtime (seconds), runs on the machine whose
 * sched_machine.index is machine: where times depend on the machine. */
typedef double (*sched_runtime_fn)(void *ctx, const char *type, double runtime, size_t machine);
/* Make the Tetris dispatcher d score a job's work with its time on each machine, from
 * runtime_on(ctx, ...); ctx is borrowed and must outlive d. Returns 0, or -EINVAL when d is not
 * Tetris. */
int sched_tetris_set_runtime(sched_dispatcher *d, sched_runtime_fn runtime_on, void *ctx);
/* "tetris", "greedy", "lotes", "coloc". */
const char *sched_dispatcher_name(const sched_dispatcher *d);
/* Free d and its state (NULL is fine). */
void sched_dispatcher_free(sched_dispatcher *d);

/* One pass: exits first (waiting jobs on each freed machine), then the arrivals in id order.
 * machines' free vectors are updated for the placed jobs; out must hold njobs entries.
 * Returns the number of assignments written, or -ENOMEM. */
long sched_dispatch(sched_dispatcher *d, sched_machine *machines, size_t nmachines, const sched_job *jobs, size_t njobs,
                    sched_assignment *out);
/* sched_dispatch for one run of a pass in runs (the core offers each job that chooses its nodes
 * alone, the nodes it does not choose SCHED_HIDDEN, and the other jobs in runs between them):
 * jobs are some of the pending jobs, and the policy keeps waiting those it does not offer. */
long sched_dispatch_run(sched_dispatcher *d, sched_machine *machines, size_t nmachines, const sched_job *jobs,
                        size_t njobs, sched_assignment *out);
/* sched_dispatch for a dispatcher whose ops say by_id, offered the arrivals alone (the pending
 * jobs with ids above every id offered before, in id order): the waiting jobs it reads are
 * found through find(ctx, id). The same decisions as sched_dispatch offered every pending job
 * find finds; out must hold an entry for each job placed. Returns the number of assignments
 * written, or -ENOMEM. O(machines + arrivals + jobs found). */
long sched_dispatch_arrivals(sched_dispatcher *d, sched_machine *machines, size_t nmachines, const sched_job *arrivals,
                             size_t narrivals, sched_find_fn find, void *ctx, sched_assignment *out);
/* Job j left machine m (its position in the machines array). */
void sched_dispatch_exit(sched_dispatcher *d, const sched_job *j, size_t m);
/* Count every known machine as freed at the next pass (a policy whose plan changed rescans its
 * queues on all of them). */
void sched_dispatch_rescan(sched_dispatcher *d);

/* For the policies: record jobs[j] on machines[m] in the pass (free vector, taken, out). */
void sched_pass_assign(sched_pass *p, size_t j, size_t m);
/* True when machine m is up and jobs[j] fits its free resources. */
bool sched_pass_fits(const sched_pass *p, size_t j, size_t m);
/* The position of the pending job with that id in p->jobs (binary search), or -1. */
long sched_pass_find(const sched_pass *p, uint64_t id);
/* ops.on_whole: the policy kept job id waiting (an id the pass does not offer changes nothing).
 * O(1). */
void sched_pass_keep(const sched_pass *p, uint64_t id);
/* Whether the policy kept p's job j waiting before this whole pass (sched_pass_keep). */
bool sched_pass_kept(const sched_pass *p, size_t j);
/* sched_pass_find, then, in a pass of the arrivals, the core's lookup (p->find): a job it finds
 * is appended to p->jobs. Returns its position, -1 when it is not offered, or -ENOMEM. */
long sched_pass_lookup(sched_pass *p, uint64_t id);
/* Make *array (of elem-sized items, *cap of them) hold at least need, doubling. Returns 0 or
 * -ENOMEM (the array is then unchanged). */
int sched_grow(void *array, size_t *cap, size_t need, size_t elem);
/* A new dispatcher of that policy: size bytes (the policy's struct, whose first member is its
 * sched_dispatcher), zero but for the shared part; NULL when out of memory. The caller's. */
void *sched_dispatcher_alloc(size_t size, const sched_dispatcher_ops *ops, uint64_t seed);
