/* workload.h - the machines and the job stream a simulation runs: synthetic workloads that
 * reproduce the papers' set-ups, generated from a seed so that runs repeat exactly. */
#pragma once
#include "res.h"
#include "sim.h"
#include <stddef.h>
#include <stdint.h>

typedef struct wl_machine_config {
        size_t count;
        res_t capacity;
} wl_machine_config;

typedef struct wl_class {
        double proportion;   /* probability that a job is of this class */
        double mean_seconds; /* processing times are exponential with this mean */
        double cores, cores_lo, cores_hi, cores_cv;  /* normal, truncated to [lo, hi] */
        double mem_gib, mem_lo, mem_hi, mem_cv;
} wl_class;

#define WL_MAX_CLASSES 16

typedef struct wl_spec {
        const char *name;
        const wl_machine_config *configs;
        size_t nconfigs;
        const wl_class *classes;
        size_t nclasses;
} wl_spec;

typedef struct wl_rng {
        uint64_t state;
} wl_rng;
/* The name of class k ("c1", "c2", ...), which jobs carry as their type; NULL past WL_MAX_CLASSES. */
const char *wl_class_name(size_t k);
/* The named workload ("mishra", "lotes-google"), or NULL. */
const wl_spec *wl_find(const char *name);
/* Names of every workload, comma-separated, for help texts. */
const char *wl_names(void);

/* Machines per configuration: the largest configuration gets scale machines, the others the
 * paper's proportions of that, at least one each (all equal for mishra). */

/* The largest arrival rate (jobs per second) the pooled machines can sustain on their bottleneck
 * resource, at that scale: min over CPU and memory of capacity divided
 * by the expected demand per job (proportion x size x mean time, summed over classes). An upper
 * bound: it ignores fragmentation and which machine a class fits on. */
double wl_fluid_capacity(const wl_spec *w, size_t scale);

/* The machines of w at that scale, in configuration order, in a new
 * array of *n capacities (free()). NULL when out of memory. */
res_t *wl_machines(const wl_spec *w, size_t scale, size_t *n);

/* A job stream of w: njobs Poisson arrivals at rate jobs per second, drawn from seed. */
typedef struct wl_source {
        const wl_spec *workload;
        wl_rng rng;
        double rate, last_arrival;
        size_t left;
} wl_source;

void wl_source_init(wl_source *s, const wl_spec *w, size_t njobs, double rate, uint64_t seed);
/* sim_next_job_fn over a wl_source. */
int wl_source_next(void *source, sim_job *j);
