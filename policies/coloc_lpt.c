/* coloc_lpt.c - the algorithms built on a P||Cmax algorithm A, here LPT as in the paper's
 * experiments (Sec. 5, 7.1.2): SchedMixed, SchedJuxtapose, BestSchedule and GreedyDedicated. */
#include "coloc_internal.h"
#include <assert.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* The machine heap orders by load, then index, so that ties go to the lowest machine. */
static bool lighter(const double *load, uint32_t a, uint32_t b) {
        return load[a] < load[b] || (load[a] == load[b] && a < b);
}

static void sift_down(uint32_t *heap, size_t m, const double *load, size_t i) {
        for (;;) {
                size_t l = 2 * i + 1, r = l + 1, min = i;
                if (l < m && lighter(load, heap[l], heap[min]))
                        min = l;
                if (r < m && lighter(load, heap[r], heap[min]))
                        min = r;
                if (min == i)
                        return;
                uint32_t t = heap[i];
                heap[i] = heap[min];
                heap[min] = t;
                i = min;
        }
}

int coloc__lpt(const coloc__view *v, uint32_t *machine_of) {
        double *load = calloc(v->m, sizeof(*load));
        uint32_t *heap = malloc(v->m * sizeof(*heap));
        if (!load || !heap) {
                free(load);
                free(heap);
                return -ENOMEM;
        }
        for (size_t k = 0; k < v->m; k++)
                heap[k] = (uint32_t)k; /* all empty: index order is heap order */
        for (size_t i = 0; i < v->n; i++) {
                uint32_t j = v->jobs[i], k = heap[0];
                machine_of[j] = v->first + k;
                load[k] += v->in->load[j];
                sift_down(heap, v->m, load, 0);
        }
        free(load);
        free(heap);
        return 0;
}

/* SchedJuxtapose: LPT on each type alone over all of v's machines, then the schedules joined.
 * The paper reverses the machine order "for every other type" so that LPT's heavy first
 * machines of one type meet the light last machines of the next; it numbers types 1..T, which
 * leaves open what happens when a type has no job here. We alternate over the types that
 * have jobs in v, so that two consecutive ones are always reversed against each other. */
static int juxtapose(const coloc__view *v, uint32_t *machine_of) {
        size_t T = v->in->ntypes, present = 0;
        uint32_t *jobs = malloc((v->n + 1) * sizeof(*jobs));
        int r = jobs ? 0 : -ENOMEM;
        for (uint32_t t = 0; r == 0 && t < T; t++) {
                coloc__view sub = { .in = v->in, .jobs = jobs, .n = 0, .first = v->first, .m = v->m };
                for (size_t i = 0; i < v->n; i++) /* v->jobs is by decreasing load: so is sub */
                        if (v->in->type[v->jobs[i]] == t)
                                jobs[sub.n++] = v->jobs[i];
                if (sub.n == 0 || (r = coloc__lpt(&sub, machine_of)) < 0)
                        continue;
                for (size_t i = 0; present % 2 == 1 && i < sub.n; i++)
                        machine_of[jobs[i]] = v->first + (uint32_t)(v->m - 1 - (machine_of[jobs[i]] - v->first));
                present++;
        }
        free(jobs);
        return r;
}

/* Run a (mix or jux) on v into machine_of, its cost into *cost; s is scratch for v->m machines. */
static int run_one(coloc_algo a, const coloc__view *v, uint32_t *machine_of, coloc__machines *s, double *cost) {
        int r = a == COLOC_SCHED_MIXED ? coloc__lpt(v, machine_of) : juxtapose(v, machine_of);
        if (r == 0)
                *cost = coloc__view_cost(v, machine_of, s);
        return r;
}

/* BestSchedule: SchedMixed, then SchedJuxtapose in scratch, kept when strictly cheaper. */
static int best(const coloc__view *v, uint32_t *machine_of, coloc__machines *s, double *cost) {
        uint32_t *jux = malloc((v->in->njobs + 1) * sizeof(*jux));
        double jux_cost = INFINITY;
        int r = jux ? run_one(COLOC_SCHED_MIXED, v, machine_of, s, cost) : -ENOMEM;
        if (r == 0)
                r = run_one(COLOC_SCHED_JUXTAPOSE, v, jux, s, &jux_cost);
        for (size_t i = 0; r == 0 && jux_cost < *cost && i < v->n; i++)
                machine_of[v->jobs[i]] = jux[v->jobs[i]];
        if (r == 0)
                *cost = fmin(*cost, jux_cost);
        free(jux);
        return r;
}

int coloc__sched_lpt(coloc_algo a, const coloc__view *v, uint32_t *machine_of, double *cost) {
        coloc__machines s;
        assert(a == COLOC_SCHED_MIXED || a == COLOC_SCHED_JUXTAPOSE || a == COLOC_BEST_SCHEDULE);
        if (coloc__machines_init(&s, v->in, v->m) < 0)
                return -ENOMEM;
        int r = a == COLOC_BEST_SCHEDULE ? best(v, machine_of, &s, cost) : run_one(a, v, machine_of, &s, cost);
        coloc__machines_free(&s);
        return r;
}

/* GreedyDedicated's tables: cost[c * span + (mc - 1)] is the cost of cluster c alone on mc
 * machines, mc in 1..span (span = m - K + 1, since every other cluster needs one). */
typedef struct dedicated {
        const coloc_instance *in;
        coloc_algo inner;
        uint32_t *jobs; /* by cluster, then decreasing load */
        size_t *start;  /* cluster c's jobs: jobs[start[c] .. start[c + 1]) */
        size_t K, span;
        double *cost;
} dedicated;

static coloc__view cluster_view(const dedicated *d, size_t c, uint32_t first, size_t mc) {
        return (coloc__view){
                .in = d->in, .jobs = d->jobs + d->start[c], .n = d->start[c + 1] - d->start[c], .first = first, .m = mc
        };
}

/* A single cluster can only have all m machines: the other entries stay unused (INFINITY). */
static int cost_table(dedicated *d, uint32_t *machine_of) {
        for (size_t c = 0; c < d->K; c++)
                for (size_t mc = d->K == 1 ? d->span : 1; mc <= d->span; mc++) {
                        coloc__view v = cluster_view(d, c, 0, mc);
                        int r = coloc__sched_lpt(d->inner, &v, machine_of, &d->cost[c * d->span + mc - 1]);
                        if (r < 0)
                                return r;
                }
        return 0;
}

/* The paper searches every vector (m_1..m_K) summing to m exhaustively, O(m^K). The same
 * minimum of max_c cost(c, m_c) comes from a dynamic program over clusters and machines used:
 * best[c][s] = min over m_c of max(best[c-1][s - m_c], cost(c, m_c)), O(K m^2). count gets m_c;
 * ties keep the fewest machines for the earlier cluster. */
static int split_machines(const dedicated *d, size_t m, size_t *count) {
        size_t K = d->K;
        double *best = malloc(K * (m + 1) * sizeof(*best));
        size_t *pick = calloc(K * (m + 1), sizeof(*pick));
        if (!best || !pick) {
                free(best);
                free(pick);
                return -ENOMEM;
        }
        for (size_t c = 0; c < K; c++)
                for (size_t s = 0; s <= m; s++) {
                        best[c * (m + 1) + s] = INFINITY;
                        for (size_t mc = 1; mc <= d->span && mc <= s; mc++) {
                                double before = c == 0 ? (s == mc ? 0 : INFINITY) : best[(c - 1) * (m + 1) + s - mc];
                                double v = fmax(before, d->cost[c * d->span + mc - 1]);
                                if (v < best[c * (m + 1) + s]) {
                                        best[c * (m + 1) + s] = v;
                                        pick[c * (m + 1) + s] = mc;
                                }
                        }
                }
        for (size_t c = K, s = m; c-- > 0; s -= count[c])
                count[c] = pick[c * (m + 1) + s];
        free(best);
        free(pick);
        return 0;
}

static int place_clusters(const dedicated *d, const size_t *count, uint32_t *machine_of) {
        uint32_t first = 0;
        for (size_t c = 0; c < d->K; first += (uint32_t)count[c], c++) {
                coloc__view v = cluster_view(d, c, first, count[c]);
                double cost;
                int r = coloc__sched_lpt(d->inner, &v, machine_of, &cost);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* GreedyDedicated(B) (Sec. 5): clusters of compatible types never share a machine; for each
 * cluster and each number of machines B (mix, jux or best) is run, and the split of the m
 * machines with the lowest largest cost is kept. Clusters occupy consecutive machines. */
int coloc__greedy_dedicated(coloc_algo inner, const coloc_instance *in, uint32_t *machine_of) {
        size_t T = in->ntypes, m = in->nmachines;
        uint32_t *cluster_of = malloc(T * sizeof(*cluster_of)), *key = malloc((in->njobs + 1) * sizeof(*key));
        dedicated d = { .in = in, .inner = inner };
        size_t *count = NULL;
        long K = cluster_of && key ? coloc_clusters(in, cluster_of) : -ENOMEM;
        int r = K < 0 ? (int)K : (size_t)K > m ? -ENOSPC : 0;
        if (r == 0) {
                d.K = (size_t)K;
                d.span = m - d.K + 1;
                for (size_t j = 0; j < in->njobs; j++)
                        key[j] = cluster_of[in->type[j]];
                d.jobs = coloc__sorted_jobs(in, key);
                d.start = calloc(d.K + 1, sizeof(*d.start));
                d.cost = malloc((d.K * d.span + 1) * sizeof(*d.cost));
                for (size_t i = 0; d.cost && i < d.K * d.span; i++)
                        d.cost[i] = INFINITY;
                count = calloc(d.K + 1, sizeof(*count));
                r = d.jobs && d.start && d.cost && count ? 0 : -ENOMEM;
        }
        for (size_t j = 0; r == 0 && j < in->njobs; j++)
                d.start[key[j] + 1]++;
        for (size_t c = 0; r == 0 && c < d.K; c++)
                d.start[c + 1] += d.start[c];
        if (r == 0 && (r = cost_table(&d, machine_of)) == 0 && (r = split_machines(&d, m, count)) == 0)
                r = place_clusters(&d, count, machine_of);
        free(cluster_of);
        free(key);
        free(d.jobs);
        free(d.start);
        free(d.cost);
        free(count);
        return r;
}
