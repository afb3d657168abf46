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
        uint32_t index;  /* caller's handle, returned in assignments */
        res_t capacity;
        res_t free;
        int up;          /* 0 = not eligible */
} sched_machine;

typedef struct sched_job {
        uint64_t id;
        res_t req;
} sched_job;

typedef struct sched_assignment {
        uint64_t job_id;
        uint32_t machine; /* sched_machine.index */
} sched_assignment;

typedef enum sched_order {
        SCHED_STRICT_FIFO, /* stop at the first job that fits nowhere now: no job overtakes it */
        SCHED_BACKFILL,    /* place any job that fits, in order */
} sched_order;

/* Place jobs[0..njobs) on machines in order, first machine that fits (First-Fit). machines'
 * free vectors are updated for the placed jobs. out must hold njobs entries. Returns the
 * number of assignments written. O(njobs * nmachines). */
size_t sched_first_fit(sched_machine *machines, size_t nmachines, const sched_job *jobs, size_t njobs,
                       sched_order order, sched_assignment *out);

/* True when req fits the capacity of at least one up machine (so it can ever run). */
int sched_can_ever_fit(const sched_machine *machines, size_t nmachines, res_t req);
