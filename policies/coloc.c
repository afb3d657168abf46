/* coloc.c - the colocation cost model (paper, Eq. 1), input checks, clusters of compatible
 * types, and the dispatch to the algorithms (coloc_lpt.c, coloc_fill.c). */
#include "coloc_internal.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const struct {
        const char *name, *label;
} algos[_COLOC_ALGO_MAX] = {
        [COLOC_FILL_GREEDY] = { "fill-greedy", "fill" },
        [COLOC_SCHED_MIXED] = { "sched-mixed", "mix" },
        [COLOC_SCHED_JUXTAPOSE] = { "sched-juxtapose", "jux" },
        [COLOC_BEST_SCHEDULE] = { "best-schedule", "best" },
        [COLOC_GREEDY_DEDICATED] = { "greedy-dedicated", "d-best" },
        [COLOC_DEDICATED_MIXED] = { "greedy-dedicated-mixed", "d-mix" },
        [COLOC_DEDICATED_JUXTAPOSE] = { "greedy-dedicated-juxtapose", "d-jux" },
        [COLOC_GREEDY_FOR_2_TYPES] = { "greedy-for-2-types", "g2" },
        [COLOC_FILL_REBALANCE] = { "fill-rebalance", "fill-r" },
};

const char *coloc_algo_name(coloc_algo a) { return a < _COLOC_ALGO_MAX ? algos[a].name : "?"; }

const char *coloc_algo_label(coloc_algo a) { return a < _COLOC_ALGO_MAX ? algos[a].label : "?"; }

int coloc_algo_from_name(const char *name, coloc_algo *out) {
        for (int a = 0; a < _COLOC_ALGO_MAX; a++)
                if (strcmp(name, algos[a].name) == 0 || strcmp(name, algos[a].label) == 0) {
                        *out = (coloc_algo)a;
                        return 0;
                }
        return -EINVAL;
}

static bool nonnegative(double x) { return isfinite(x) && x >= 0; }

int coloc_check(const coloc_instance *in, char *err, size_t errlen) {
        size_t T = in->ntypes;
        if (T == 0 || in->nmachines == 0) {
                snprintf(err, errlen, "needs at least one type and one machine");
                return -EINVAL;
        }
        for (size_t a = 0; a < T * T; a++)
                if (!nonnegative(in->alpha[a])) {
                        snprintf(err, errlen, "alpha[%zu][%zu] = %g: coefficients are numbers >= 0", a / T, a % T,
                                 in->alpha[a]);
                        return -EINVAL;
                }
        for (size_t j = 0; j < in->njobs; j++) {
                if (in->type[j] >= T) {
                        snprintf(err, errlen, "job %zu: type %u out of range (%zu types)", j + 1, in->type[j], T);
                        return -EINVAL;
                }
                if (!nonnegative(in->load[j])) {
                        snprintf(err, errlen, "job %zu: load %g: loads are numbers >= 0", j + 1, in->load[j]);
                        return -EINVAL;
                }
        }
        return 0;
}

static bool compatible(const coloc_instance *in, size_t a, size_t b) {
        size_t T = in->ntypes;
        return in->alpha[a * T + b] <= 1 && in->alpha[b * T + a] <= 1;
}

/* Greedy, in type order: a type joins the first cluster all of whose types it is compatible
 * with. The paper allows any grouping here (minimising the number of clusters is NP-hard,
 * Sec. 4.2); types with no job are left out so that no machine is set aside for nothing. */
long coloc_clusters(const coloc_instance *in, uint32_t *cluster_of) {
        size_t T = in->ntypes;
        bool *used = calloc(T, sizeof(*used));
        uint32_t k = 0;
        if (!used)
                return -ENOMEM;
        for (size_t j = 0; j < in->njobs; j++)
                used[in->type[j]] = true;
        for (size_t t = 0; t < T; t++) {
                cluster_of[t] = used[t] ? k : UINT32_MAX;
                for (uint32_t c = 0; used[t] && c < k && cluster_of[t] == k; c++) {
                        bool fits = true;
                        for (size_t u = 0; u < t && fits; u++)
                                fits = cluster_of[u] != c || compatible(in, t, u);
                        if (fits)
                                cluster_of[t] = c;
                }
                if (cluster_of[t] == k)
                        k++;
        }
        free(used);
        return k;
}

int coloc__machines_init(coloc__machines *s, const coloc_instance *in, size_t m) {
        size_t T = in->ntypes;
        *s = (coloc__machines){ .in = in, .m = m };
        s->tc = calloc(m * T, sizeof(*s->tc));
        s->count = calloc(m * T, sizeof(*s->count));
        s->load = calloc(m, sizeof(*s->load));
        if (!s->tc || !s->count || !s->load) {
                coloc__machines_free(s);
                return -ENOMEM;
        }
        return 0;
}

void coloc__machines_free(coloc__machines *s) {
        free(s->tc);
        free(s->count);
        free(s->load);
        *s = (coloc__machines){ 0 };
}

void coloc__machines_clear(coloc__machines *s) {
        size_t T = s->in->ntypes;
        memset(s->tc, 0, s->m * T * sizeof(*s->tc));
        memset(s->count, 0, s->m * T * sizeof(*s->count));
        memset(s->load, 0, s->m * sizeof(*s->load));
}

void coloc__machines_add(coloc__machines *s, size_t k, uint32_t j) {
        size_t T = s->in->ntypes;
        uint32_t a = s->in->type[j];
        double p = s->in->load[j];
        for (size_t b = 0; b < T; b++)
                s->tc[k * T + b] += p * s->in->alpha[a * T + b];
        s->count[k * T + a]++;
        s->load[k] += p;
}

/* Only the types with a job there count: a job of load 0 still has a cost. */
double coloc__machine_cost(const coloc__machines *s, size_t k) {
        size_t T = s->in->ntypes;
        double worst = 0;
        for (size_t b = 0; b < T; b++)
                if (s->count[k * T + b] && s->tc[k * T + b] > worst)
                        worst = s->tc[k * T + b];
        return worst;
}

double coloc__machine_cost_with(const coloc__machines *s, size_t k, uint32_t j) {
        size_t T = s->in->ntypes;
        uint32_t a = s->in->type[j];
        double p = s->in->load[j], worst = 0;
        for (size_t b = 0; b < T; b++) {
                double c = s->tc[k * T + b] + p * s->in->alpha[a * T + b];
                if ((s->count[k * T + b] || b == a) && c > worst)
                        worst = c;
        }
        return worst;
}

int coloc_cost(const coloc_instance *in, const uint32_t *machine_of, double *machine_cost, double *max_cost) {
        coloc__machines s;
        if (coloc__machines_init(&s, in, in->nmachines) < 0)
                return -ENOMEM;
        for (size_t j = 0; j < in->njobs; j++)
                coloc__machines_add(&s, machine_of[j], (uint32_t)j);
        *max_cost = 0;
        for (size_t k = 0; k < in->nmachines; k++) {
                double c = coloc__machine_cost(&s, k);
                if (machine_cost)
                        machine_cost[k] = c;
                *max_cost = fmax(*max_cost, c);
        }
        coloc__machines_free(&s);
        return 0;
}

double coloc__view_cost(const coloc__view *v, const uint32_t *machine_of, coloc__machines *s) {
        double worst = 0;
        coloc__machines_clear(s);
        for (size_t i = 0; i < v->n; i++)
                coloc__machines_add(s, machine_of[v->jobs[i]] - v->first, v->jobs[i]);
        for (size_t k = 0; k < v->m; k++)
                worst = fmax(worst, coloc__machine_cost(s, k));
        return worst;
}

typedef struct sort_key {
        uint32_t key, job;
        double load;
} sort_key;

static int by_key_then_load(const void *x, const void *y) {
        const sort_key *a = x, *b = y;
        if (a->key != b->key)
                return a->key < b->key ? -1 : 1;
        if (a->load != b->load)
                return a->load > b->load ? -1 : 1;
        return a->job < b->job ? -1 : a->job > b->job;
}

uint32_t *coloc__sorted_jobs(const coloc_instance *in, const uint32_t *key) {
        size_t n = in->njobs;
        sort_key *keys = malloc((n + 1) * sizeof(*keys));
        uint32_t *jobs = malloc((n + 1) * sizeof(*jobs));
        if (!keys || !jobs) {
                free(keys);
                free(jobs);
                return NULL;
        }
        for (size_t j = 0; j < n; j++)
                keys[j] = (sort_key){ .key = key ? key[j] : 0, .job = (uint32_t)j, .load = in->load[j] };
        qsort(keys, n, sizeof(*keys), by_key_then_load);
        for (size_t j = 0; j < n; j++)
                jobs[j] = keys[j].job;
        free(keys);
        return jobs;
}

/* SchedMixed, SchedJuxtapose and BestSchedule on every job and every machine. */
static int sched_all(coloc_algo a, const coloc_instance *in, uint32_t *machine_of) {
        uint32_t *jobs = coloc__sorted_jobs(in, NULL);
        double cost;
        if (!jobs)
                return -ENOMEM;
        coloc__view v = { .in = in, .jobs = jobs, .n = in->njobs, .first = 0, .m = in->nmachines };
        int r = coloc__sched_lpt(a, &v, machine_of, &cost);
        free(jobs);
        return r;
}

int coloc_run(coloc_algo a, const coloc_instance *in, uint32_t *machine_of) {
        switch (a) {
        case COLOC_FILL_GREEDY: return coloc__fill_greedy(in, machine_of);
        case COLOC_SCHED_MIXED:
        case COLOC_SCHED_JUXTAPOSE:
        case COLOC_BEST_SCHEDULE: return sched_all(a, in, machine_of);
        case COLOC_GREEDY_DEDICATED: return coloc__greedy_dedicated(COLOC_BEST_SCHEDULE, in, machine_of);
        case COLOC_DEDICATED_MIXED: return coloc__greedy_dedicated(COLOC_SCHED_MIXED, in, machine_of);
        case COLOC_DEDICATED_JUXTAPOSE: return coloc__greedy_dedicated(COLOC_SCHED_JUXTAPOSE, in, machine_of);
        case COLOC_GREEDY_FOR_2_TYPES: return coloc__greedy_for_2_types(in, machine_of);
        case COLOC_FILL_REBALANCE: return coloc__fill_rebalance(in, machine_of);
        default: return -EINVAL;
        }
}
