/* bench_fit.c - placement decisions per CPU second of each NetBatch heuristic on a large cluster,
 * through the machine index (sched_index_place) and through the reference scan of every machine
 * (sched_place), in the same run. Prints JSON.
 *
 *   build/bin/bench_fit [BUDGET_SECONDS [MACHINES]]   (defaults: 1 s per measurement, 10000)
 *
 * The cluster: lotes-phi:0.009's ten configurations (the LoTES paper's Table 1), as many
 * machines of each as make MACHINES. The jobs: that workload's stream. Each run first fills the
 * cluster with First-Fit (through the index, whatever is measured, so that a slow policy does
 * not spend minutes filling) until 90% of its cores are taken or 1,000 jobs in a row fit
 * nowhere, then measures a steady state: one decision (one job placed, or found to fit nowhere) and one running job,
 * drawn at random, ending, so the load stays where the fill left it. What is timed per decision is what the scheduling
 * core pays: the choice, the placement and the release, index updates included. Times are CPU time of this process, so
 * other load on the machine does not count. Both engines see the same jobs and must make the same decisions: each run
 * hashes the machines chosen, and "same" says whether the index's hash equals the scan's over the decisions the scan
 * made. */
#include "sched_index.h"
#include "workload.h"
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct running {
        size_t machine;
        res_t req;
} running;

typedef struct engine {
        bool indexed;
        sched_index ix; /* its machines are the cluster, whichever the engine */
        running *jobs;  /* placed and not yet ended */
        size_t njobs, cap;
        wl_source source;
        uint64_t rng, hash;
} engine;

typedef struct measure {
        size_t decisions, placed;
        double seconds, utilization;
        uint64_t hash_at; /* the hash after a given number of decisions */
} measure;

static double now(void) {
        struct timespec t;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static uint64_t next_random(uint64_t *state) {
        *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
        return *state >> 33;
}

static void *checked(void *p) {
        if (!p) {
                fprintf(stderr, "bench_fit: out of memory\n");
                exit(1);
        }
        return p;
}

/* An engine on the machines of m[0..n), with the running jobs and the job stream of from (or
 * none and a fresh stream). */
static void start(engine *e, bool indexed, const sched_machine *m, size_t n, const engine *from) {
        *e = (engine){ .indexed = indexed, .rng = 7, .hash = 1469598103934665603ULL };
        sched_index_init(&e->ix);
        for (size_t i = 0; i < n; i++)
                if (sched_index_add(&e->ix, m[i]) < 0)
                        checked(NULL);
        if (!from)
                return;
        e->jobs = checked(malloc(from->cap * sizeof(*e->jobs)));
        memcpy(e->jobs, from->jobs, from->njobs * sizeof(*e->jobs));
        e->njobs = from->njobs;
        e->cap = from->cap;
        e->source = from->source;
}

static void stop(engine *e) {
        sched_index_free(&e->ix);
        free(e->jobs);
}

/* One decision for the next job of the stream, through the index or the scan. Returns true
 * when the job was placed. */
static bool decide(engine *e, sched_heuristic h, bool indexed) {
        sim_job j;
        sched_assignment a;
        (void)wl_source_next(&e->source, &j);
        sched_job one = { .id = 1, .req = j.req, .runtime = j.runtime };
        long placed = indexed ? sched_index_place(&e->ix, h, &one, 1, SCHED_BACKFILL, &a)
                              : sched_place(h, e->ix.machines, e->ix.n, &one, 1, SCHED_BACKFILL, &a);
        e->hash = (e->hash ^ (placed > 0 ? a.machine + 1 : 0)) * 1099511628211ULL;
        if (placed <= 0)
                return false;
        if (e->njobs == e->cap)
                e->jobs = checked(realloc(e->jobs, (e->cap = e->cap ? 2 * e->cap : 4096) * sizeof(*e->jobs)));
        e->jobs[e->njobs++] = (running){ .machine = a.machine, .req = j.req };
        return true;
}

/* A running job drawn at random ends. */
static void release_one(engine *e) {
        size_t k = next_random(&e->rng) % e->njobs;
        sched_machine *m = &e->ix.machines[e->jobs[k].machine];
        m->free = res_add(m->free, e->jobs[k].req);
        if (e->indexed) /* the scan's index served its fill only */
                sched_index_update(&e->ix, e->jobs[k].machine);
        e->jobs[k] = e->jobs[--e->njobs];
}

static double core_utilization(const engine *e) {
        double used = 0, cap = 0;
        for (size_t m = 0; m < e->ix.n; m++) {
                used += (double)(e->ix.machines[m].capacity.mcpu - e->ix.machines[m].free.mcpu);
                cap += (double)e->ix.machines[m].capacity.mcpu;
        }
        return used / cap;
}

/* Fill the cluster with First-Fit (through the index) until 90% of its cores are taken or 1,000
 * jobs in a row fit nowhere. */
static void fill(engine *e) {
        double cap = 0, used = 0;
        for (size_t m = 0; m < e->ix.n; m++)
                cap += (double)e->ix.machines[m].capacity.mcpu;
        for (size_t misses = 0; misses < 1000 && used < 0.9 * cap;) {
                size_t before = e->njobs;
                misses = decide(e, SCHED_FIRST_FIT, true) ? 0 : misses + 1;
                if (e->njobs > before)
                        used += (double)e->jobs[e->njobs - 1].req.mcpu;
        }
}

/* Decide until budget seconds have passed and at least min decisions are made. */
static measure run(engine *e, sched_heuristic h, double budget, size_t min, size_t hash_at) {
        measure r = { 0 };
        double t0 = now();
        while (r.decisions < min || ((r.decisions & 63) != 0 || now() - t0 < budget)) {
                r.placed += decide(e, h, e->indexed);
                release_one(e);
                if (++r.decisions == hash_at)
                        r.hash_at = e->hash;
        }
        r.seconds = now() - t0;
        r.utilization = core_utilization(e);
        return r;
}

int main(int argc, char **argv) {
        double budget = argc > 1 ? atof(argv[1]) : 1;
        size_t want = argc > 2 ? (size_t)atoll(argv[2]) : 10000, n;
        wl_generated gen;
        const wl_spec *w = wl_find("lotes-phi:0.009", 1, &gen);
        size_t scale = want / w->nconfigs ? want / w->nconfigs : 1;
        res_t *caps = wl_machines(w, scale, &n);
        sched_machine *m = caps ? calloc(n, sizeof(*m)) : NULL;
        if (!m)
                return 1;
        for (size_t i = 0; i < n; i++)
                m[i] = (sched_machine){ .index = (uint32_t)i, .capacity = caps[i], .free = caps[i], .up = 1 };
        engine full;
        start(&full, true, m, n, NULL);
        wl_source_init(&full.source, w, scale, SIZE_MAX, 1.0, 1);
        fill(&full);
        printf("{\"bench\": \"fit\", \"workload\": \"lotes-phi:0.009\", \"machines\": %zu, \"budget_s\": %g, "
               "\"running_after_fill\": %zu, \"core_utilization_after_fill\": %.3f, \"runs\": [\n",
               n, budget, full.njobs, core_utilization(&full));
        for (int h = 0; h < _SCHED_HEURISTIC_MAX; h++) {
                engine scan, indexed;
                start(&scan, false, full.ix.machines, n, &full);
                measure s = run(&scan, (sched_heuristic)h, budget, 64, 0);
                start(&indexed, true, full.ix.machines, n, &full);
                measure x = run(&indexed, (sched_heuristic)h, budget, s.decisions, s.decisions);
                double srate = (double)s.decisions / s.seconds, xrate = (double)x.decisions / x.seconds;
                printf("%s  {\"policy\": \"%s\", \"indexed\": %s, \"scan\": {\"decisions_per_s\": %.0f, \"decisions\": "
                       "%zu, "
                       "\"placed\": %zu, \"core_utilization\": %.3f}, \"index\": {\"decisions_per_s\": %.0f, "
                       "\"decisions\": %zu, \"placed\": %zu, \"core_utilization\": %.3f}, \"speedup\": %.1f, \"same\": "
                       "%s}",
                       h ? ",\n" : "", sched_heuristic_name((sched_heuristic)h),
                       h == SCHED_MIX_FIT || h == SCHED_MAX_JOBS ? "false" : "true", srate, s.decisions, s.placed,
                       s.utilization, xrate, x.decisions, x.placed, x.utilization, xrate / srate,
                       x.hash_at == scan.hash ? "true" : "false");
                fflush(stdout);
                stop(&scan);
                stop(&indexed);
        }
        printf("\n]}\n");
        stop(&full);
        free(m);
        free(caps);
        return 0;
}
