/* figures.h - the simulator's summaries beyond the whole run's (sim.h has sim_summarize): the
 * figures of each department. Internal to controller/sim. */
#pragma once
#include "sim.h"

/* Per-job values of the jobs the simulation accepted, by position. */
typedef struct sim_job_values {
        const uint32_t *dept;
        const double *wait, *response, *cpu_seconds;
        size_t n;
} sim_job_values;

/* Fill out->depts with one entry per department of names[0..ndepts) that had a job, accepted
 * (in v) or refused (refused[d] of them). O(n log n + ndepts). Returns 0 or -ENOMEM (out->depts
 * then stays NULL). */
int sim_dept_figures(const sim_job_values *v, const size_t *refused, const char *const *names, size_t ndepts,
                     sim_result *out);
/* Set the gpu_seconds and gpu_share of out->depts (made by sim_dept_figures from the same names)
 * from gpu_seconds[0..ndepts), by department index. O(ndepts). */
void sim_dept_gpu_figures(const double *gpu_seconds, const char *const *names, size_t ndepts, sim_result *out);
