/* sched.h - the placement policy interface: plain structs in, plain structs out.
 *
 * A policy sees the machines (what each has free) and the pending jobs in submission order,
 * and returns which job goes where in this round. It performs no I/O and keeps no state
 * between calls beyond what its own opaque state holds. */
#pragma once
#include "res.h"
#include <stddef.h>
#include <stdint.h>

typedef struct sched_machine {
        uint32_t index; /* caller's handle, returned in assignments */
        res_t capacity;
        res_t free;
        int up; /* > 0: eligible; 0: down */
} sched_machine;

typedef struct sched_job {
        uint64_t id;
        res_t req;
        double runtime;     /* expected processing time in seconds, 0 if unknown (Tetris uses it) */
        const char *type;   /* the job's declared type or class, or NULL (LoTES matches its classes) */
        int64_t limit_usec; /* its time limit, 0 if none (EASY backfill: backfill.h) */
} sched_job;

typedef struct sched_assignment {
        uint64_t job_id;
        uint32_t machine; /* sched_machine.index */
} sched_assignment;

typedef enum sched_order {
        SCHED_STRICT_FIFO, /* stop at the first job that fits nowhere now: no job overtakes it */
        SCHED_BACKFILL,    /* place any job that fits, in order; with time limits (backfill.h) the
                            * first that fits nowhere reserves its earliest start (EASY) */
        SCHED_RESERVE,     /* NetBatch: a job that fits nowhere reserves the machine with the most
                            * free memory for the rest of the pass; later jobs go elsewhere */
} sched_order;

/* A pass's jobs handed out one at a time, so that a pass which stops early has not had the rest
 * made: next(arg, out) gives the next in order (1), or 0 at the end. */
typedef struct sched_job_list {
        int (*next)(void *arg, sched_job *out);
        void *arg;
        size_t max;  /* at most this many: out must hold as many */
        res_t floor; /* no job of the list asks less, resource by resource ({0}: unknown) */
} sched_job_list;

/* An array of jobs handed out as a sched_job_list, by sched_job_array_next; next counts those
 * handed out. */
typedef struct sched_job_array {
        const sched_job *jobs;
        size_t n, next;
} sched_job_array;
/* sched_job_list.next over a sched_job_array (arg). */
int sched_job_array_next(void *arg, sched_job *out);

/* "fifo", "backfill", "reserve". */
const char *sched_order_name(sched_order o);
/* Inverse of sched_order_name. Returns 0 or -EINVAL. */
int sched_order_from_name(const char *name, sched_order *out);

/* The NetBatch heuristics (Intel NetBatch pool manager paper, policies.md), one job at a time in
 * queue order. Best-Fit takes the machine with the least free cores (or memory) among those the
 * job fits, Worst-Fit the most; Mix-Fit the machine whose used cores:memory point after the job
 * lies at the smallest angle alpha from the machine's diagonal, seen from the grid's top-right
 * corner; Max-Jobs runs the five others and keeps the schedule that places the most jobs (the
 * earliest in this list on a tie). Ties between machines go to the earliest machine. */
typedef enum sched_heuristic {
        SCHED_FIRST_FIT,
        SCHED_BEST_FIT_CORES,
        SCHED_BEST_FIT_MEM,
        SCHED_WORST_FIT_CORES,
        SCHED_WORST_FIT_MEM,
        SCHED_MIX_FIT,
        SCHED_MAX_JOBS,
        _SCHED_HEURISTIC_MAX,
} sched_heuristic;

/* "first-fit", "best-fit-cores", "best-fit-mem", "worst-fit-cores", "worst-fit-mem", "mix-fit",
 * "max-jobs". */
const char *sched_heuristic_name(sched_heuristic h);
/* Inverse of sched_heuristic_name. Returns 0 or -EINVAL. */
int sched_heuristic_from_name(const char *name, sched_heuristic *out);

/* Place jobs[0..njobs) on machines with heuristic h, in queue order; machines' free vectors are
 * updated for the placed jobs. out must hold njobs entries. Returns the number of assignments
 * written, or -ENOMEM (Max-Jobs needs scratch copies). O(njobs * nmachines) per heuristic. */
long sched_place(sched_heuristic h, sched_machine *machines, size_t nmachines, const sched_job *jobs, size_t njobs,
                 sched_order order, sched_assignment *out);

/* The Mix-Fit angle alpha, in radians, of putting req on m; -1 when it does not fit. */
double sched_mix_fit_alpha(const sched_machine *m, res_t req);

/* sched_place with SCHED_FIRST_FIT, which never fails. */
size_t sched_first_fit(sched_machine *machines, size_t nmachines, const sched_job *jobs, size_t njobs,
                       sched_order order, sched_assignment *out);

/* True when req fits the capacity of at least one up machine (so it can ever run). */
int sched_can_ever_fit(const sched_machine *machines, size_t nmachines, res_t req);
