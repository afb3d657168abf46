/* workload.c - synthetic workloads from the papers, drawn from a seeded generator.
 *
 * mishra: the earlier LoTES report (Tran and Beck, "Report: Google data center scheduling"), Table 1 (10 machine
 * configurations of 1000 machines; cores and RAM in the paper's units, read here as cores and
 * GiB) and Tables 2-3 (8 job classes after Mishra et al.: proportion, exponential processing
 * time, and normal core and RAM demands with their coefficient of variation and range).
 *
 * lotes-google: the LoTES paper (Tran et al., "Multi-stage resource-aware scheduling for data
 * centers with heterogeneous servers"), Table 1 (10 configurations, 12,583
 * machines, capacities normalised to the largest machine, read here as 64 cores and 256 GiB)
 * and Table 2 (4 job classes from the Google 2011 trace: proportion, mean time, mean cores and
 * memory). The paper replays the trace itself; for the synthetic stream colony draws times
 * from an exponential and sizes from a Gaussian with CV 0.5 truncated to one machine, the
 * convention of the paper's own generated workloads (section 5.4). */
#include "workload.h"
#include "rng.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GiB  ((int64_t)1 << 30)
#define HOUR 3600.0

static const wl_machine_config mishra_configs[] = {
        { 1000, { .mcpu = 4000, .mem = 2 * GiB } },  { 1000, { .mcpu = 4000, .mem = 4 * GiB } },
        { 1000, { .mcpu = 4000, .mem = 8 * GiB } },  { 1000, { .mcpu = 4000, .mem = 16 * GiB } },
        { 1000, { .mcpu = 8000, .mem = 2 * GiB } },  { 1000, { .mcpu = 8000, .mem = 4 * GiB } },
        { 1000, { .mcpu = 8000, .mem = 8 * GiB } },  { 1000, { .mcpu = 8000, .mem = 16 * GiB } },
        { 1000, { .mcpu = 8000, .mem = 32 * GiB } }, { 1000, { .mcpu = 24000, .mem = 32 * GiB } },
};

/* proportion, mean time, cores (mean, range, CV), RAM (mean, range, CV): Table 3 */
static const wl_class mishra_classes[] = {
        { 0.33, 0.083 * HOUR, 0.08, 0.0, 0.2, 0.16, 0.48, 0.0, 0.5, 0.09, 0 },
        { 0.29, 0.32 * HOUR, 0.40, 0.2, 0.5, 0.03, 0.74, 0.0, 32, 0.09, 0 },
        { 0.06, 0.65 * HOUR, 1.11, 0.5, 4.0, 0.03, 0.68, 0.0, 1.0, 0.08, 0 },
        { 0.01, 0.42 * HOUR, 1.39, 0.5, 4.0, 0.04, 1.54, 1.0, 32, 0.05, 0 },
        { 0.17, 18.34 * HOUR, 0.12, 0.0, 0.2, 0.19, 0.48, 0.0, 0.5, 0.11, 0 },
        { 0.02, 22.23 * HOUR, 0.16, 0.0, 0.2, 0.09, 1.66, 1.0, 32, 0.09, 0 },
        { 0.07, 20.49 * HOUR, 1.22, 0.2, 4.0, 0.03, 0.65, 0.0, 1.0, 0.08, 0 },
        { 0.05, 18.85 * HOUR, 1.32, 0.2, 4.0, 0.06, 1.93, 1.0, 32, 0.07, 0 },
};

#define NORM_CORES 64.0 /* lotes-google: what 1.0 of a normalised capacity means */
#define NORM_GIB   256.0
/* Rounded to the nearest milli-core and byte, as wl_lotes_problem rounds the class requests: a
 * truncated capacity fell one byte short of class c4's 0.06 x 256 GiB on configuration 10, which
 * Table 1 gives exactly that memory, and barred c4 from it. (Constant expressions: no llround.) */
#define NORM_ROUND(x) ((int64_t)((x) + 0.5))
#define NORM(c, m)                                                                                                     \
        { .mcpu = NORM_ROUND(NORM_CORES * 1000 * (c)), .mem = NORM_ROUND(NORM_GIB * (m) * (double)GiB) }

static const wl_machine_config lotes_google_configs[] = {
        { 6732, NORM(0.50, 0.50) }, { 3863, NORM(0.50, 0.25) }, { 1001, NORM(0.50, 0.75) }, { 795, NORM(1.00, 1.00) },
        { 126, NORM(0.25, 0.25) },  { 52, NORM(0.50, 0.12) },   { 5, NORM(0.50, 0.03) },    { 5, NORM(0.50, 0.97) },
        { 3, NORM(1.00, 0.50) },    { 1, NORM(1.00, 0.06) },
};

#define LG_CLASS(p, hours, c, m)                                                                                       \
        { p, HOUR *(hours), NORM_CORES *(c), 0, NORM_CORES, 0.5, NORM_GIB *(m), 0, NORM_GIB, 0.5, 0 }

static const wl_class lotes_google_classes[] = {
        LG_CLASS(0.23, 0.03, 0.02, 0.01),
        LG_CLASS(0.46, 0.04, 0.02, 0.03),
        LG_CLASS(0.30, 0.04, 0.07, 0.03),
        LG_CLASS(0.01, 0.03, 0.20, 0.06),
};

/* gpu-lab: a university lab's cluster, made up for issue 25 (no public trace has GPUs per job):
 * GPU machines of 8 and 4 GPUs listed first, as sites list them, then twice as many CPU
 * machines; four departments train on 1, 2, 4 or 8 GPUs with cores and memory in proportion,
 * a fifth (physics) needs no GPU. The GPUs are the bottleneck: at the fluid capacity they are
 * full while the cores are a third used. */
static const wl_machine_config gpu_lab_configs[] = {
        { 4, { .mcpu = 64000, .mem = 512 * GiB, .gpus = 8 } },
        { 4, { .mcpu = 32000, .mem = 256 * GiB, .gpus = 4 } },
        { 8, { .mcpu = 64000, .mem = 256 * GiB } },
};

/* proportion, mean time, cores (mean, range, CV), memory in GiB (mean, range, CV), GPUs */
static const wl_class gpu_lab_classes[] = {
        { 0.30, 1 * HOUR, 4, 1, 8, 0.5, 32, 4, 64, 0.5, 1 },      /* vision */
        { 0.15, 2 * HOUR, 8, 2, 16, 0.5, 64, 8, 128, 0.5, 2 },    /* nlp */
        { 0.10, 2 * HOUR, 16, 4, 32, 0.5, 64, 8, 128, 0.5, 4 },   /* rl */
        { 0.05, 4 * HOUR, 32, 8, 64, 0.5, 256, 64, 512, 0.5, 8 }, /* llm */
        { 0.40, 1 * HOUR, 16, 1, 64, 0.5, 32, 1, 128, 0.5, 0 },   /* physics */
};

static const char *const gpu_lab_depts[] = { "vision", "nlp", "rl", "llm", "physics" };

static const wl_spec workloads[] = {
        { "mishra", mishra_configs, sizeof(mishra_configs) / sizeof(mishra_configs[0]), mishra_classes,
          sizeof(mishra_classes) / sizeof(mishra_classes[0]), NULL, 0, 0, NULL },
        { "mishra-mapreduce", mishra_configs, sizeof(mishra_configs) / sizeof(mishra_configs[0]), mishra_classes,
          sizeof(mishra_classes) / sizeof(mishra_classes[0]), NULL, 200, 100, NULL },
        { "lotes-google", lotes_google_configs, sizeof(lotes_google_configs) / sizeof(lotes_google_configs[0]),
          lotes_google_classes, sizeof(lotes_google_classes) / sizeof(lotes_google_classes[0]), NULL, 0, 0, NULL },
        { "gpu-lab", gpu_lab_configs, sizeof(gpu_lab_configs) / sizeof(gpu_lab_configs[0]), gpu_lab_classes,
          sizeof(gpu_lab_classes) / sizeof(gpu_lab_classes[0]), NULL, 0, 0, gpu_lab_depts },
};

static void rng_seed(wl_rng *r, uint64_t seed) { r->state = seed ^ 0x9e3779b97f4a7c15ULL; }

static double uniform(wl_rng *r) { return sched_rng_uniform(&r->state); }

/* U[lo, hi]. */
static double between(wl_rng *r, double lo, double hi) { return lo + (hi - lo) * uniform(r); }

/* The LoTES paper's generated instances (5.4): Table 1's configurations with the same number of
 * machines each (1000 in the paper: --scale), 9 classes arriving at equal rates, each with mean
 * requests 0.025 + U[-phi, phi] of the largest machine per resource (CV 0.5, truncated to one
 * machine) and u_k = U[0, 1]: a job's time is its work w = Exp(1) times u_k hours (mu_jk = 1/u_k).
 * With omega > 0, omega_jk = U[1 - omega, 1 + omega] divides the time on configuration j. The
 * instance is drawn from its own generator, seeded from seed, apart from the job stream. */
static const wl_spec *generate(wl_generated *g, double phi, double omega, uint64_t seed) {
        wl_rng r;
        rng_seed(&r, seed ^ 0x10735ULL);
        size_t nconfigs = sizeof(lotes_google_configs) / sizeof(lotes_google_configs[0]), nclasses = 9;
        for (size_t j = 0; j < nconfigs; j++)
                g->configs[j] = (wl_machine_config){ 1000, lotes_google_configs[j].capacity };
        for (size_t k = 0; k < nclasses; k++) {
                double cores = 0.025 + between(&r, -phi, phi), mem = 0.025 + between(&r, -phi, phi);
                g->classes[k] = (wl_class)LG_CLASS(1.0 / (double)nclasses, 0, cores, mem);
        }
        for (size_t k = 0; k < nclasses; k++)
                g->classes[k].mean_seconds = uniform(&r) * HOUR;
        for (size_t i = 0; i < nconfigs * nclasses; i++)
                g->speed[i] = omega > 0 ? between(&r, 1 - omega, 1 + omega) : 1;
        g->spec = (wl_spec){ g->name, g->configs, nconfigs, g->classes, nclasses, omega > 0 ? g->speed : NULL,
                             0,       0,          NULL };
        return &g->spec;
}

/* "prefix:X" with X a number in [0, max): X in *x. */
static bool parameter(const char *name, const char *prefix, double max, double *x) {
        size_t n = strlen(prefix);
        char *end;
        if (strncmp(name, prefix, n) != 0 || name[n] != ':')
                return false;
        *x = strtod(name + n + 1, &end);
        return end != name + n + 1 && !*end && *x >= 0 && *x < max;
}

const wl_spec *wl_find(const char *name, uint64_t seed, wl_generated *gen) {
        double x;
        for (size_t i = 0; i < sizeof(workloads) / sizeof(workloads[0]); i++)
                if (strcmp(workloads[i].name, name) == 0)
                        return &workloads[i];
        if (strlen(name) >= sizeof(gen->name))
                return NULL;
        strcpy(gen->name, name);
        if (parameter(name, "lotes-phi", 0.025, &x)) /* beyond, a class's mean request could be <= 0 */
                return generate(gen, x, 0, seed);
        if (parameter(name, "lotes-omega", 1, &x)) /* the paper's Phi = 0.06 is read as 0.006: see simulator.md */
                return generate(gen, 0.006, x, seed);
        return NULL;
}

const char *wl_names(void) {
        return "mishra, mishra-mapreduce, lotes-google, gpu-lab, lotes-phi:PHI, lotes-omega:OMEGA";
}

/* Machines of configuration c when the largest configuration has scale machines: the paper's
 * proportions, at least one each. */
static size_t scaled_count(const wl_spec *w, size_t c, size_t scale) {
        size_t largest = 0;
        for (size_t i = 0; i < w->nconfigs; i++)
                if (w->configs[i].count > largest)
                        largest = w->configs[i].count;
        size_t n = (size_t)llround((double)w->configs[c].count * (double)scale / (double)largest);
        return n ? n : 1;
}

double wl_fluid_capacity(const wl_spec *w, size_t scale) {
        double cores = 0, mem = 0, gpus = 0, cores_per_job = 0, mem_per_job = 0, gpus_per_job = 0;
        for (size_t i = 0; i < w->nconfigs; i++) {
                double n = (double)scaled_count(w, i, scale);
                cores += n * (double)w->configs[i].capacity.mcpu / 1000.0;
                mem += n * (double)w->configs[i].capacity.mem / (double)GiB;
                gpus += n * (double)w->configs[i].capacity.gpus;
        }
        for (size_t k = 0; k < w->nclasses; k++) {
                cores_per_job += w->classes[k].proportion * w->classes[k].cores * w->classes[k].mean_seconds;
                mem_per_job += w->classes[k].proportion * w->classes[k].mem_gib * w->classes[k].mean_seconds;
                gpus_per_job += w->classes[k].proportion * (double)w->classes[k].gpus * w->classes[k].mean_seconds;
        }
        double rate = fmin(cores / cores_per_job, mem / mem_per_job);
        if (gpus_per_job > 0)
                rate = fmin(rate, gpus / gpus_per_job);
        return rate / wl_tasks_per_job(w);
}

uint32_t wl_tasks_per_job(const wl_spec *w) { return w->maps + w->reduces ? w->maps + w->reduces : 1; }

static double exponential(wl_rng *r, double mean) { return -mean * log(uniform(r)); }

static double normal(wl_rng *r, double mean, double sd) {
        return mean + sd * sqrt(-2.0 * log(uniform(r))) * cos(2.0 * M_PI * uniform(r));
}

/* A normal draw kept inside [lo, hi] by drawing again (then clamping, for a far-off mean). */
static double truncated_normal(wl_rng *r, double mean, double cv, double lo, double hi) {
        for (int tries = 0; tries < 16; tries++) {
                double x = normal(r, mean, mean * cv);
                if (x >= lo && x <= hi)
                        return x;
        }
        return fmin(hi, fmax(lo, mean));
}

static const char *const class_names[WL_MAX_CLASSES] = { "c1", "c2",  "c3",  "c4",  "c5",  "c6",  "c7",  "c8",
                                                         "c9", "c10", "c11", "c12", "c13", "c14", "c15", "c16" };

const char *wl_class_name(size_t k) { return k < WL_MAX_CLASSES ? class_names[k] : NULL; }

const char *const *wl_class_names(void) { return class_names; }

res_t *wl_machines(const wl_spec *w, size_t scale, size_t *n) {
        size_t total = 0;
        for (size_t c = 0; c < w->nconfigs; c++)
                total += scaled_count(w, c, scale);
        res_t *m = calloc(total + 1, sizeof(*m));
        *n = 0;
        for (size_t c = 0; m && c < w->nconfigs; c++)
                for (size_t i = scaled_count(w, c, scale); i > 0; i--)
                        m[(*n)++] = w->configs[c].capacity;
        return m;
}

void wl_source_init(wl_source *s, const wl_spec *w, size_t scale, size_t njobs, double rate, uint64_t seed) {
        *s = (wl_source){ .workload = w, .scale = scale, .rate = rate, .left = njobs };
        rng_seed(&s->rng, seed);
}

/* Draw the next job's arrival, class and size into s->task (its runtime is drawn per task). */
static void draw_job(wl_source *s) {
        const wl_spec *w = s->workload;
        wl_rng *r = &s->rng;
        double u = uniform(r), acc = 0;
        size_t k = 0;
        while (k + 1 < w->nclasses && u > (acc += w->classes[k].proportion))
                k++;
        const wl_class *c = &w->classes[k];
        double cores = truncated_normal(r, c->cores, c->cores_cv, c->cores_lo, c->cores_hi);
        double mem = truncated_normal(r, c->mem_gib, c->mem_cv, c->mem_lo, c->mem_hi);
        /* the first job arrives at 0, each next one an exponential gap later */
        double arrival = s->last_arrival;
        s->task = (sim_job){
                .arrival = arrival,
                .type = wl_class_name(k),
                .dept = (uint32_t)k,
                .req = { .mcpu = (int64_t)fmax(1, llround(cores * 1000)),
                         .mem = (int64_t)fmax(1 << 20, llround(mem * (double)GiB)),
                         .gpus = c->gpus },
        };
        s->klass = k;
        s->given = 0;
}

int wl_source_next(void *source, sim_job *j) {
        wl_source *s = source;
        const wl_spec *w = s->workload;
        bool mapreduce = w->maps + w->reduces > 0;
        if (!mapreduce || s->given == w->maps + w->reduces) {
                uint64_t family = s->task.family;
                if (s->left == 0)
                        return 0;
                draw_job(s);
                s->left--;
                if (mapreduce)
                        s->task.family = family + 1;
        }
        *j = s->task;
        j->runtime = exponential(&s->rng, w->classes[s->klass].mean_seconds);
        if (mapreduce) {
                j->family = s->task.family;
                j->family_maps = w->maps;
                j->family_tasks = w->maps + w->reduces;
                j->reduce = s->given >= w->maps;
                s->given++;
        }
        if (!mapreduce || s->given == w->maps + w->reduces)
                s->last_arrival = j->arrival + exponential(&s->rng, 1.0 / s->rate);
        return 1;
}

/* The configuration of the machine at that position of wl_machines(w, scale). */
static size_t config_of_machine(const wl_spec *w, size_t scale, size_t machine) {
        size_t j = 0;
        for (size_t end = scaled_count(w, 0, scale); machine >= end && j + 1 < w->nconfigs;)
                end += scaled_count(w, ++j, scale);
        return j;
}

double wl_runtime_on(void *source, const char *type, double runtime, size_t machine) {
        const wl_source *s = source;
        const wl_spec *w = s->workload;
        if (!w->speed || !type || type[0] != 'c')
                return runtime;
        size_t k = strtoul(type + 1, NULL, 10) - 1; /* wl_class_name's "c1", "c2", ... */
        size_t j = config_of_machine(w, s->scale, machine);
        return k < w->nclasses ? runtime / w->speed[j * w->nclasses + k] : runtime;
}

void wl_lotes_problem(const wl_spec *w, size_t scale, wl_lotes *out) {
        for (size_t j = 0; j < w->nconfigs && j < WL_MAX_CONFIGS; j++)
                out->configs[j] = (lotes_config){ scaled_count(w, j, scale), w->configs[j].capacity };
        for (size_t k = 0; k < w->nclasses && k < WL_MAX_CLASSES; k++) {
                const wl_class *c = &w->classes[k];
                out->classes[k] = (lotes_class){
                        wl_class_name(k),
                        c->proportion,
                        { .mcpu = llround(c->cores * 1000), .mem = llround(c->mem_gib * (double)GiB), .gpus = c->gpus }
                };
                for (size_t j = 0; j < w->nconfigs && j < WL_MAX_CONFIGS; j++)
                        out->mu[j * w->nclasses + k] = (w->speed ? w->speed[j * w->nclasses + k] : 1) / c->mean_seconds;
        }
        out->problem = (lotes_problem){ out->configs, w->nconfigs, out->classes, w->nclasses, out->mu };
}
