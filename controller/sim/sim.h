/* sim.h - the discrete-event simulator: the controller's own scheduling core (state.c and the
 * policies it calls) driven on a virtual clock, with simulated agents that end each job after
 * its runtime. Nothing here is a second copy of the scheduling logic. */
#pragma once
#include "dispatch.h"
#include "res.h"
#include <stddef.h>
#include <stdint.h>

typedef struct sim_job {
        double arrival; /* seconds since the start, non-decreasing */
        double runtime; /* seconds */
        res_t req;
        const char *type; /* the job's class in the workload, or NULL; lives as long as the source */
} sim_job;

/* The job stream: fill *j with the next job in arrival order. Returns 1, 0 at the end, or
 * -errno. */
typedef int (*sim_next_job_fn)(void *source, sim_job *j);

/* How long a job of that type, drawn with that runtime, runs on the machine at that position. */
typedef double (*sim_runtime_fn)(void *source, const char *type, double runtime, size_t machine);

typedef struct sim_config {
        const res_t *machines; /* capacities */
        size_t nmachines;
        sim_next_job_fn next_job;
        void *source;
        sim_runtime_fn runtime_on; /* NULL: every job runs its drawn runtime wherever it goes */
        sched_heuristic policy;
        sched_order order;
        sched_dispatcher *dispatcher; /* instead of policy and order: an event-driven policy (dispatch.h);
                                       * sim_run takes it and frees it */
        double cycle_seconds;  /* 0: place on every arrival and exit; else every cycle (NetBatch: 30) */
        double sample_seconds; /* utilization sampling period; 0: none */
        /* Called as each job leaves the simulation (it ends, or is refused) with how many have;
         * NULL: none. For a progress display: the simulator itself keeps no clock. */
        void (*progress)(void *arg, size_t jobs_done);
        void *progress_arg;
} sim_config;

typedef struct sim_stats {
        double mean, p50, p95, p99, max;
} sim_stats;

typedef struct sim_sample {
        double t;
        double cpu, mem; /* fractions of the cluster in use */
} sim_sample;

typedef struct sim_result {
        size_t machines, jobs, completed, refused;
        double makespan;                     /* seconds from the first arrival to the last exit */
        sim_stats wait, response;            /* seconds */
        double mean_cpu, mean_mem;           /* time-averaged utilization over the makespan */
        sim_sample *samples;
        size_t nsamples;
        uint64_t passes; /* scheduling passes run */
} sim_result;

/* Run a simulation. Returns 0 and fills out (free with sim_result_free), or -errno with a
 * one-line reason in err. */
int sim_run(const sim_config *cfg, sim_result *out, char *err, size_t errlen);
void sim_result_free(sim_result *r);
