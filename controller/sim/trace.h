/* trace.h - what the trace readers (swf.c, google.c) share: the jobs they load, held in memory
 * as a job stream, and the names of the departments those jobs belong to. */
#pragma once
#include "sim.h"
#include <stddef.h>
#include <stdint.h>

/* A job stream held in memory: v[next..n) are still to come, in arrival order. */
typedef struct sim_jobs {
        sim_job *v;
        size_t n, next, cap;
} sim_jobs;

/* Append a copy of j. Returns 0, or -ENOMEM with a unchanged. */
int sim_jobs_push(sim_jobs *a, const sim_job *j);
/* sim_next_job_fn over a sim_jobs. */
int sim_jobs_next(void *jobs, sim_job *j);
/* Free the jobs, leaving an empty stream. */
void sim_jobs_free(sim_jobs *a);

/* A table of distinct names, each numbered in the order it was first seen: the departments a
 * trace's jobs belong to ("g12", a user's hash), interned once so that each job carries a small
 * index instead of a string. Open addressing with linear probing over FNV-1a hashes; the slot
 * array doubles when half full, so an insertion or a lookup costs O(1) expected, O(n) in the
 * worst case. */
typedef struct sim_names {
        char **v; /* v[i]: the name numbered i */
        size_t n, cap;
        uint32_t *slots; /* index + 1 into v, 0 when empty */
        size_t nslots;
} sim_names;

#define SIM_NAMES_MAX UINT32_MAX

/* The number of name in *index, adding it (a copy) when it is new. Returns 0, -ENOMEM, or
 * -E2BIG past SIM_NAMES_MAX names; t is unchanged on error. */
int sim_names_intern(sim_names *t, const char *name, uint32_t *index);
/* Free every name and the table's arrays, leaving an empty table. */
void sim_names_free(sim_names *t);

/* What a trace's jobs are grouped into departments by: the field a loader reads. */
typedef enum sim_dept_key {
        SIM_DEPT_NONE,  /* no per-department figures */
        SIM_DEPT_GROUP, /* SWF: the group ID, "g<id>" */
        SIM_DEPT_USER,  /* SWF: the user ID, "u<id>"; Google: the user's name (a hash) */
        SIM_DEPT_CLASS, /* Google: the scheduling class, "class<n>"; synthetic workloads: the job class */
} sim_dept_key;

/* The key named "none", "group", "user" or "class". Returns 0, or -EINVAL for another name. */
int sim_dept_key_from_name(const char *name, sim_dept_key *out);
/* The name of a key, as sim_dept_key_from_name reads it. */
const char *sim_dept_key_name(sim_dept_key key);
