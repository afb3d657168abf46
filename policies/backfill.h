/* backfill.h - EASY backfilling with time limits: the first job that fits nowhere reserves the
 * earliest time and node where it will fit, computed from the running jobs' limits, and a later
 * job starts now only if it does not delay that reservation. Lifka, "The ANL/IBM SP scheduling
 * system" (JSSPP 1995), and Mu'alem and Feitelson, "Utilization, predictability, workloads, and
 * user runtime estimates in scheduling the IBM SP2 with backfilling" (IEEE TPDS 2001);
 * docs/policies.md.
 *
 * A colony job runs on one node, so the reservation is one node and a time: for each node the
 * earliest time its free resources (cores and memory), plus those of the jobs whose limits end
 * by then, hold the reserved job; the earliest of those times over the nodes (the shadow time),
 * the earliest node on a tie. A later job may then start now on any other node, and on the
 * reserved node only if its limit ends by the shadow time or it fits in what the reservation
 * leaves free there at that time (the extra). A job without a limit is taken to run forever: a
 * running one never frees its resources for the reservation, a pending one never ends before
 * it. Pure, like every policy: plain structs in and out, the time given, no clock. */
#pragma once
#include "sched_index.h"

/* A running job's end for the pass: start + limit, or SCHED_FOREVER without a limit. */
#define SCHED_FOREVER INT64_MAX

/* A job that holds resources on a machine until end_usec (SCHED_FOREVER: no limit). */
typedef struct sched_running {
        size_t machine; /* position in the index's machines */
        res_t req;
        int64_t end_usec;
} sched_running;

/* The reservation a pass made: job_id 0 when none (every job it offered was placed, or those left
 * fit on no up machine at all). start_usec is SCHED_FOREVER when only jobs without a limit stand
 * in the way. */
typedef struct sched_reservation {
        uint64_t job_id;
        uint32_t machine; /* sched_machine.index */
        int64_t start_usec;
} sched_reservation;

/* The jobs running on the machines, asked for only when a reservation must be computed: sets *v
 * (the caller's, alive until the pass returns) and *n. Returns 0 or -errno. An end already past
 * (a job being killed at its limit) counts as now. */
typedef int (*sched_running_fn)(void *arg, const sched_running **v, size_t *n);

/* One EASY pass at time now over the indexed machines (their free resources as they are now):
 * jobs[0..njobs) in order, each placed by heuristic h (not SCHED_MAX_JOBS) while they fit, the
 * first that fits nowhere (but fits an up machine's capacity) reserved, the rest backfilled
 * around the reservation. sched_job.limit_usec is each job's time limit (0: none). running(arg)
 * gives the jobs holding the machines, asked once, and only when a later job fits somewhere (it
 * must be told whether it may start) or when want_start (the reserved start is wanted anyway).
 * The machines' free resources and the index follow the placements. out must hold njobs
 * entries; *resv says what was reserved (job_id 0 when nothing was computed). Returns the number
 * of assignments, -EINVAL (h) or -errno. O(jobs log machines) (Mix-Fit: jobs x machines), and
 * O(running log running) when a reservation is computed. */
long sched_easy_place(sched_index *ix, sched_heuristic h, const sched_job *jobs, size_t njobs, sched_running_fn running,
                      void *arg, bool want_start, int64_t now, sched_assignment *out, sched_reservation *resv);

/* sched_easy_place over list's jobs, which stops taking them once it has its reservation and
 * nothing as small as list->floor fits any machine: the jobs left could not start either. The
 * same placements and reservation as over the whole list. O(jobs taken log machines). */
long sched_easy_place_from(sched_index *ix, sched_heuristic h, const sched_job_list *list, sched_running_fn running,
                           void *arg, bool want_start, int64_t now, sched_assignment *out, sched_reservation *resv);
