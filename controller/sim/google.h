/* google.h - the Google cluster-data 2011 trace (clusterdata-2011-2, "trace-data v2.1 format +
 * schema"), as a job stream and a cluster.
 *
 * Both tables are CSV as published (concatenate the task_events parts in order: they are sorted
 * by time), gzip'd or not, or "-" (standard input); a first line that does not start with a
 * digit is a header, skipped. Empty fields are missing values.
 *
 *   task_events, 13 fields: time (microseconds), missing info, job ID, task index, machine ID,
 *     event type, user, scheduling class, priority, CPU request, memory request, disk request,
 *     different-machines restriction. Event types: 0 SUBMIT, 1 SCHEDULE, 2 EVICT, 3 FAIL,
 *     4 FINISH, 5 KILL, 6 LOST, 7 UPDATE_PENDING, 8 UPDATE_RUNNING.
 *   machine_events, 6 fields: time, machine ID, event type (0 ADD, 1 REMOVE, 2 UPDATE), platform
 *     ID, CPUs, memory.
 *
 * CPU and memory are normalized to the largest machine (1.0); the caller says what 1.0 is.
 *
 * A job is a task's first run: it arrives at the task's first SUBMIT and runs from its first
 * SCHEDULE to the EVICT, FAIL, FINISH, KILL or LOST that ends that run, asking for the
 * requests it had when it was scheduled (SUBMIT and UPDATE_PENDING set them). What the model
 * leaves out is counted, never guessed: later attempts of a task, tasks that end before they
 * run, tasks whose run does not end within the trace, tasks without a SUBMIT in the file (they
 * started before it), tasks without requests. Events at time 2^63 - 1 (the schema's "after the
 * end of the trace") never happen. Arrivals are made relative to the first job. */
#pragma once
#include "res.h"
#include "sim.h"
#include "trace.h"
#include <stddef.h>

typedef struct google_trace {
        sim_jobs jobs;
        sim_names depts;                                                  /* the jobs' sim_job.dept indexes these */
        size_t tasks;                                                     /* distinct tasks in the file */
        size_t resubmitted, never_ran, unfinished, no_submit, no_request; /* left out, as above */
} google_trace;

/* Read a task_events table. machine is the size of a machine of normalized capacity 1.0;
 * departments come from the field dept_by names (SIM_DEPT_USER: the user, "unknown" when
 * empty; SIM_DEPT_CLASS: the scheduling class, "class0" to "class3"; SIM_DEPT_NONE leaves
 * depts empty and every dept 0). Events must come in time order. Returns 0, or -errno with
 * "path:line: reason" in err for the first malformed line, or "path: no task ran" (nothing is
 * kept). */
int google_load_tasks(const char *path, res_t machine, sim_dept_key dept_by, google_trace *out, char *err,
                      size_t errlen);
/* Free the jobs and department names of t, and zero its counts. */
void google_free(google_trace *t);

typedef struct google_machines {
        res_t *capacity; /* of the machines the trace adds at time 0, in file order */
        size_t n;
        size_t ignored;     /* events other than an ADD at time 0: the cluster is the one at the start */
        size_t no_capacity; /* machines added at time 0 without a CPU or memory figure, left out */
} google_machines;

/* Read a machine_events table, machines scaled as for google_load_tasks. Returns 0, or -errno
 * with "path:line: reason" in err (a malformed line, a machine added twice at time 0) or "path: no
 * machine at time 0" (nothing is kept). */
int google_load_machines(const char *path, res_t machine, google_machines *out, char *err, size_t errlen);
/* Free the capacities of m. */
void google_machines_free(google_machines *m);
