/* workload.h - the machines and the job stream a simulation runs: synthetic workloads that
 * reproduce the papers' set-ups, generated from a seed so that runs repeat exactly. */
#pragma once
#include "lotes.h"
#include "res.h"
#include "sim.h"
#include <stddef.h>
#include <stdint.h>

typedef struct wl_machine_config {
        size_t count;
        res_t capacity;
} wl_machine_config;

typedef struct wl_class {
        double proportion;                          /* probability that a job is of this class */
        double mean_seconds;                        /* processing times are exponential with this mean */
        double cores, cores_lo, cores_hi, cores_cv; /* normal, truncated to [lo, hi] */
        double mem_gib, mem_lo, mem_hi, mem_cv;
        int64_t gpus; /* whole GPUs each job asks (0: none) */
} wl_class;

#define WL_MAX_CLASSES 16
#define WL_MAX_CONFIGS 16

typedef struct wl_spec {
        const char *name;
        const wl_machine_config *configs;
        size_t nconfigs;
        const wl_class *classes;
        size_t nclasses;
        const double *speed; /* [j * nclasses + k]: omega_jk, a job of class k takes 1 / omega_jk of its
                              * drawn time on configuration j; NULL: the same time everywhere */
        /* MapReduce (the report's section 7): each job is maps map tasks then reduces reduce
         * tasks of its class, all of one size, each with its own drawn time; 0 and 0: a job is
         * one task */
        uint32_t maps, reduces;
        const char *const *dept_names; /* the classes' departments by name; NULL: wl_class_names() */
} wl_spec;

/* The storage of a workload generated from parameters and a seed (lotes-phi, lotes-omega). */
typedef struct wl_generated {
        wl_spec spec;
        char name[64];
        wl_machine_config configs[WL_MAX_CONFIGS];
        wl_class classes[WL_MAX_CLASSES];
        double speed[WL_MAX_CONFIGS * WL_MAX_CLASSES];
} wl_generated;

typedef struct wl_rng {
        uint64_t state;
} wl_rng;
/* The name of class k ("c1", "c2", ...), which jobs carry as their type; NULL past WL_MAX_CLASSES. */
const char *wl_class_name(size_t k);
/* Every class name, WL_MAX_CLASSES of them: the departments of a synthetic workload, whose jobs'
 * sim_job.dept is their class. */
const char *const *wl_class_names(void);
/* The named workload: "mishra", "mishra-mapreduce" (mishra's machines and classes, each job 200
 * maps and 100 reduces: the report's section 7), "lotes-google", "gpu-lab" (GPU and CPU machines,
 * five departments whose jobs ask 1, 2, 4, 8 or no GPUs: workload.c), or one generated into *gen from seed:
 * "lotes-phi:PHI" (LoTES paper, 5.4.2: 9 classes whose mean requests are 0.025 + U[-PHI, PHI] of
 * the largest machine, PHI in [0, 0.025)) or "lotes-omega:OMEGA" (5.4.3: the same at PHI = 0.006,
 * with machine-dependent times, omega_jk = U[1 - OMEGA, 1 + OMEGA], OMEGA in [0, 1)). NULL for
 * an unknown name or a parameter out of range. */
const wl_spec *wl_find(const char *name, uint64_t seed, wl_generated *gen);
/* Names of every workload, comma-separated, for help texts. */
const char *wl_names(void);

/* Tasks in each job of w: maps + reduces for a MapReduce workload, else 1. */
uint32_t wl_tasks_per_job(const wl_spec *w);

/* Machines per configuration: the largest configuration gets scale machines, the others the
 * paper's proportions of that, at least one each (all equal for mishra). */

/* The largest arrival rate (jobs per second; a MapReduce job is all its tasks) the pooled machines can sustain on their
 * bottleneck resource, at that scale: min over CPU, memory and (where jobs ask some) GPUs of capacity divided by the
 * expected demand per job (proportion x size x mean time, summed over classes). An upper bound: it ignores
 * fragmentation and which machine a class fits on. */
double wl_fluid_capacity(const wl_spec *w, size_t scale);

/* The machines of w at that scale, in configuration order, in a new
 * array of *n capacities (free()). NULL when out of memory. */
res_t *wl_machines(const wl_spec *w, size_t scale, size_t *n);

/* A job stream of w: njobs Poisson arrivals at rate jobs per second, drawn from seed. A MapReduce
 * job comes as its tasks, one sim_job each, maps first, all at its arrival. */
typedef struct wl_source {
        const wl_spec *workload;
        size_t scale;
        wl_rng rng;
        double rate, last_arrival;
        size_t left;
        sim_job task;   /* MapReduce: the job being handed out a task at a time */
        size_t klass;   /* its class */
        uint32_t given; /* its tasks handed out */
} wl_source;

void wl_source_init(wl_source *s, const wl_spec *w, size_t scale, size_t njobs, double rate, uint64_t seed);
/* sim_next_job_fn over a wl_source. */
int wl_source_next(void *source, sim_job *j);

/* sim_runtime_fn over a wl_source of w at that scale: runtime / omega_jk on the machine's
 * configuration j for a job of class k (its type). */
double wl_runtime_on(void *source, const char *type, double runtime, size_t machine);

/* The LoTES inputs of a workload at a scale, in storage of its own. */
typedef struct wl_lotes {
        lotes_problem problem;
        lotes_config configs[WL_MAX_CONFIGS];
        lotes_class classes[WL_MAX_CLASSES];
        double mu[WL_MAX_CONFIGS * WL_MAX_CLASSES];
} wl_lotes;

/* Fill out with w's configurations at that scale, its classes (alpha = proportion, r = the mean
 * request, named as the jobs' types) and mu_jk = omega_jk / mean time. out must not move while
 * out->problem is in use. */
void wl_lotes_problem(const wl_spec *w, size_t scale, wl_lotes *out);
