/* bench_fair.c - time per allocation decision (fair_next + fair_charge) of MCH against H-DRF as
 * the jobs (leaves, q = 10^2 .. 10^5) grow and the tree deepens (2 .. 6 levels, root and leaves
 * included), the MCH paper's run-time comparison (002_*, section IV-B). Prints JSON.
 *
 *   build/bin/bench_fair [BUDGET_SECONDS [LEVELS [LEAVES]]]   (default 2: the most each
 *          measurement may take; LEVELS: only trees of that depth; LEAVES: only that q, a power
 *          of 10, on the same tree as with LEVELS alone)
 *
 * Trees are complete with fan-out ceil(q^(1/(levels-1))), cut at q leaves; 70% of the jobs are
 * full-type (1-4 cores, 1-8 GiB a task), 15% CPU-only, 15% memory-only, and none runs out of
 * tasks. The cluster holds about 10 tasks per job, so a whole allocation is about 10 q
 * decisions; a measurement that would take longer than the budget stops there and says so
 * ("capped"); H-DRF then times the same number of decisions as MCH. Three engines: MCH (flat
 * heap), H-DRF as policies/fair does it (per-node heaps and running sums), and H-DRF
 * recomputed from scratch before each decision (tests/unit/fair_ref.c,
 * what the paper's O(q^2) counts; only the first decisions). Times are CPU time of this
 * process, so other load on the machine does not count; setup_ms is fair_new (validation,
 * the algorithm's weights, blocking lists, heap or H-DRF vectors). */
#include "fair.h"
#include "fair_ref.h"
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

typedef struct measure {
        double setup_ms, per_decision_us;
        size_t decisions;
        bool capped;
} measure;

static double now(void) {
        struct timespec t;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static void random_leaf(fair_node *n, unsigned *seed) {
        int kind = rand_r(seed) % 20;
        n->demand[FAIR_CPU] = kind < 17 ? 1000 * (1 + rand_r(seed) % 4) : 0;
        n->demand[FAIR_MEM] = kind < 14 || kind >= 17 ? ((int64_t)1 << 30) * (1 + rand_r(seed) % 8) : 0;
        n->tasks = 1000000000;
}

/* A complete tree with q leaves at depth levels - 1. Returns the node count; *fanout set. */
static size_t build_tree(fair_node *nodes, size_t q, int levels, size_t *fanout, unsigned *seed) {
        size_t f = (size_t)ceil(pow((double)q, 1.0 / (levels - 1)) - 1e-9), n = 1;
        long last[8], index[8]; /* per depth: the last group id seen, and its node */
        nodes[0] = (fair_node){ .parent = -1, .weight = 1, .cap = 1 };
        for (int d = 0; d < 8; d++)
                last[d] = -1, index[d] = 0;
        for (size_t i = 0; i < q; i++) {
                int32_t up = 0;
                for (int d = 1; d < levels - 1; d++) {
                        long id = (long)(i / (size_t)pow((double)f, levels - 1 - d));
                        if (id != last[d]) {
                                nodes[n] = (fair_node){ .parent = up, .weight = 1, .cap = 1 };
                                last[d] = id;
                                index[d] = (long)n++;
                        }
                        up = (int32_t)index[d];
                }
                nodes[n] = (fair_node){ .parent = up, .weight = 1, .cap = 1 };
                random_leaf(&nodes[n++], seed);
        }
        *fanout = f;
        return n;
}

/* Up to max decisions of algorithm a, or what the budget allows. */
static measure time_engine(const fair_problem *p, fair_algo a, double budget, size_t max) {
        measure m = { 0 };
        char why[256];
        fair_state *s;
        double t0 = now();
        if (fair_new(p, a, &s, why, sizeof(why)) < 0) {
                fprintf(stderr, "bench_fair: %s\n", why);
                exit(1);
        }
        double t1 = now();
        for (long leaf; !m.capped && m.decisions < max && (leaf = fair_next(s)) >= 0; m.decisions++) {
                fair_charge(s, (size_t)leaf);
                m.capped = (m.decisions & 63) == 63 && now() - t1 > budget;
        }
        m.setup_ms = (t1 - t0) * 1e3;
        m.per_decision_us = (now() - t1) * 1e6 / (double)(m.decisions ? m.decisions : 1);
        fair_free(s);
        return m;
}

/* The from-scratch H-DRF: time one decision, then as many as fit in the budget (at least 1). */
static measure time_reference(const fair_problem *p, double budget) {
        measure m = { .capped = true };
        int64_t *tasks = calloc(p->nnodes, sizeof(*tasks));
        double t0 = now();
        ref_hdrf(p, tasks, 1);
        double one = now() - t0;
        size_t n = (size_t)fmax(1, fmin(1000, budget / one));
        t0 = now();
        m.decisions = ref_hdrf(p, tasks, n);
        m.per_decision_us = (now() - t0) * 1e6 / (double)m.decisions;
        free(tasks);
        return m;
}

/* setup_ms only for the engines (the reference has no state to build). */
static void print_measure(const char *name, measure m, bool setup) {
        printf("\"%s\": {\"per_decision_us\": %.3f, \"decisions\": %zu, \"capped\": %s", name, m.per_decision_us,
               m.decisions, m.capped ? "true" : "false");
        if (setup)
                printf(", \"setup_ms\": %.3f", m.setup_ms);
        printf("}, ");
}

int main(int argc, char **argv) {
        double budget = argc > 1 ? atof(argv[1]) : 2;
        int only = argc > 2 ? atoi(argv[2]) : 0;
        size_t only_q = argc > 3 ? (size_t)atol(argv[3]) : 0;
        size_t qmax = 100000, fanout;
        fair_node *nodes = calloc(2 * qmax + 8, sizeof(*nodes));
        unsigned seed = 42;
        bool first = true;
        printf("{\"bench\": \"fair\", \"budget_s\": %g, \"runs\": [\n", budget);
        for (int levels = only ? only : 2; levels <= (only ? only : 6); levels++)
                for (size_t q = 100; q <= qmax; q *= 10) {
                        size_t n = build_tree(nodes, q, levels, &fanout, &seed);
                        if (only_q && q != only_q)
                                continue; /* built all the same: the seed draws the next tree's leaves */
                        fair_problem p = { .nres = 2,
                                           .nodes = nodes,
                                           .nnodes = n,
                                           .capacity = { (int64_t)q * 25000, (int64_t)q * 45 << 30 } };
                        /* H-DRF times the decisions MCH made in its budget, the same stretch of the
                         * allocation (a decision costs more as leaves fill and block), with 4x
                         * the budget as a ceiling */
                        measure mch = time_engine(&p, FAIR_MCH, budget, SIZE_MAX);
                        measure hdrf = time_engine(&p, FAIR_HDRF, 4 * budget, mch.decisions);
                        measure ref = time_reference(&p, budget);
                        printf("%s  {\"levels\": %d, \"leaves\": %zu, \"nodes\": %zu, \"fanout\": %zu, ",
                               first ? "" : ",\n", levels, q, n, fanout);
                        print_measure("mch", mch, true);
                        print_measure("hdrf", hdrf, true);
                        print_measure("hdrf_recompute", ref, false);
                        printf("\"hdrf_over_mch\": %.2f, \"recompute_over_mch\": %.1f}",
                               hdrf.per_decision_us / mch.per_decision_us, ref.per_decision_us / mch.per_decision_us);
                        fflush(stdout);
                        first = false;
                }
        printf("\n]}\n");
        free(nodes);
        return 0;
}
