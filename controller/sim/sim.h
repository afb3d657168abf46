/* sim.h - the discrete-event simulator: the controller's own scheduling core (state.c and the
 * policies it calls) driven on a virtual clock, with simulated agents that end each job after
 * its runtime. Nothing here is a second copy of the scheduling logic. */
#pragma once
#include "dispatch.h"
#include "fair.h"
#include "res.h"
#include <stddef.h>
#include <stdint.h>

/* Seconds, about 31 years: the longest time a trace may give. The simulator counts time in
 * int64 microseconds, and no archived trace comes near. */
#define SIM_TIME_MAX 1e9

typedef struct sim_job {
        double arrival; /* seconds since the start, non-decreasing */
        double runtime; /* seconds */
        res_t req;
        const char *type; /* the job's class in the workload, or NULL; lives as long as the source */
        uint32_t dept;    /* its department: an index into sim_config.dept_names (0 when there are none) */
        double limit;     /* its requested time limit in seconds (SWF's field 9), 0 when the source has
                           * none: the job's time limit is then its runtime, an exact estimate */
        /* A task of a MapReduce job (family.h): its family (1, 2, ... in arrival order; 0 for a job
         * of one task), whose tasks arrive together, maps first; no reduce starts before the
         * family's last map has ended. */
        uint64_t family;
        uint32_t family_maps, family_tasks; /* the family's maps, and its tasks in all */
        bool reduce;
} sim_job;

/* One job the simulation ran, as sim_config.each_job sees it at the end; its strings live only
 * as long as the call. */
typedef struct sim_job_record {
        uint64_t id;                /* the controller's, in arrival order of the jobs it accepted */
        const char *dept;           /* NULL without departments */
        const char *machine;        /* where it ran (its name, "m1" for the first unnamed); NULL if it never did */
        double arrival, start, end; /* seconds; start and end are NAN for a job that never ran */
        res_t req;
        uint64_t family; /* its MapReduce job, 0 for none (sim_job.family) */
        bool reduce;     /* a reduce task: its arrival is when its family's last map ended */
} sim_job_record;

/* Called for every accepted job once the simulation is over. Returns 0, or -errno to stop
 * sim_run with that error. */
typedef int (*sim_each_job_fn)(void *data, const sim_job_record *r);

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
        sched_dispatcher *dispatcher;  /* instead of policy and order: an event-driven policy (dispatch.h);
                                        * sim_run takes it and frees it */
        bool scan;                     /* place by the reference scan of every machine instead of the index
                                        * (ctl_config.scan): the same run, slower; for benchmarks */
        double cycle_seconds;          /* 0: place on every arrival and exit; else every cycle (NetBatch: 30) */
        double sample_seconds;         /* utilization sampling period; 0: none */
        const char *const *dept_names; /* what sim_job.dept indexes; NULL: no per-department figures */
        size_t ndepts;
        sim_each_job_fn each_job; /* NULL: nobody wants the jobs one by one */
        void *each_job_data;
        /* Called as each job arrives and as it leaves the simulation (it ends, or is refused) with
         * how many arrivals and leaves there were, two per job in all; NULL: none. For a progress
         * display (the simulator itself keeps no clock): while jobs queue, ends lag behind the
         * arrivals, and a count of ends alone would make the work done look smaller than it is. */
        void (*progress)(void *arg, size_t events_done);
        void *progress_arg;
        const char *const *machine_names; /* nmachines names (a --machines file's), distinct; NULL: m1, m2, ... */
        /* With departments: order the pending jobs fairly among them under fair_algo, as the
         * controller's [departments] would, each a top-level department of weight 1 (a job's
         * group is its department's name); false: submission order. */
        bool fair;
        fair_algo fair_algo;
} sim_config;

typedef struct sim_stats {
        double mean, p50, p95, p99, max;
} sim_stats;

/* The figures of one department: its jobs' waits and responses, and its part of the work. */
typedef struct sim_dept {
        const char *name; /* from sim_config.dept_names */
        size_t jobs, refused;
        sim_stats wait, response; /* seconds, over the jobs it accepted */
        double cpu_seconds;       /* cores x seconds its jobs ran */
        double cpu_share;         /* of every department's cpu_seconds */
        double gpu_seconds;       /* GPUs x seconds its jobs ran */
        double gpu_share;         /* of every department's gpu_seconds (0 when none ran a GPU) */
} sim_dept;

typedef struct sim_sample {
        double t;
        double cpu, mem; /* fractions of the cluster in use */
        double gpu;      /* the same of its GPUs; 0 for a cluster without */
} sim_sample;

typedef struct sim_result {
        size_t machines, jobs, completed, refused;
        double makespan;           /* seconds from the first arrival to the last exit */
        sim_stats wait, response;  /* seconds */
        double mean_cpu, mean_mem; /* time-averaged utilization over the makespan */
        sim_sample *samples;
        size_t nsamples;
        uint64_t passes; /* scheduling passes run */
        sim_dept *depts; /* the departments with at least one job, in dept_names order */
        size_t ndepts;
        /* MapReduce jobs (0 families without them): their flow times, arrival to the end of
         * the last reduce, over the families that ran whole, and the ideal ones (the longest
         * map plus the longest reduce, as on unlimited machines), seconds */
        size_t families, families_whole;
        sim_stats flow, ideal_flow;
        int64_t gpus;    /* the cluster's GPUs (0: none, and mean_gpu is 0) */
        double mean_gpu; /* time-averaged GPU utilization over the makespan */
} sim_result;

/* Run a simulation. Returns 0 and fills out (free with sim_result_free), or -errno with a
 * one-line reason in err. */
int sim_run(const sim_config *cfg, sim_result *out, char *err, size_t errlen);
/* Free what sim_run allocated in r. */
void sim_result_free(sim_result *r);

/* The mean, percentiles and maximum of v[0..n) (which it sorts); all 0 when n is 0. */
sim_stats sim_summarize(double *v, size_t n);
