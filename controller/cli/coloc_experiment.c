/* coloc_experiment.c - colony coloc --experiment: the paper's simulations (Sec. 7) regenerated.
 *
 * For each coefficient regime, T in 2..4 types, and every (n, m) of the size class, K instances
 * are drawn (policies/coloc_gen.c), skipping the combinations the paper skips (incompatible and
 * clashing with more types than machines; mixed with fewer than 3 types). Each algorithm the
 * paper runs on a regime (Sec. 7.1.2) places every instance, and the mean of its largest cost
 * over our lower bound is printed beside the means the paper's text gives (Sec. 7.2). */
#include "coloc_cli.h"
#include "format.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct size_class {
        const char *name, *range;
        const size_t *n, *m;
        size_t nn, nm;
        double paper[_COLOC_ALGO_MAX][_COLOC_REGIME_MAX]; /* 0: the paper's text gives no figure */
} size_class;

static const size_t small_n[] = { 10, 20, 50, 100, 200, 500, 1000 }, small_m[] = { 2, 3, 5, 10 };
static const size_t large_n[] = { 200, 500, 1000, 2000, 5000 }, large_m[] = { 20, 50, 100 };

/* The figures Sec. 7.2 states in its text; Fig. 1 has the rest only as box plots. */
static const size_class classes[] = {
        { "small", "n 10..1000, m 2..10", small_n, small_m, 7, 4,
          .paper = { [COLOC_SCHED_MIXED] = { [COLOC_COMPATIBLE] = 1.10, [COLOC_MIXED] = 1.41 },
                     [COLOC_BEST_SCHEDULE] = { [COLOC_COMPATIBLE] = 1.04 },
                     [COLOC_FILL_GREEDY] = { [COLOC_INCOMPATIBLE] = 1.15, [COLOC_CLASHING] = 1.09 },
                     [COLOC_FILL_REBALANCE] = { [COLOC_INCOMPATIBLE] = 1.08, [COLOC_CLASHING] = 1.07 },
                     [COLOC_GREEDY_DEDICATED] = { [COLOC_INCOMPATIBLE] = 1.20, [COLOC_MIXED] = 1.14 } } },
        { "large", "n 200..5000, m 20..100", large_n, large_m, 5, 3,
          .paper = { [COLOC_SCHED_MIXED] = { [COLOC_COMPATIBLE] = 1.18, [COLOC_MIXED] = 1.62 },
                     [COLOC_BEST_SCHEDULE] = { [COLOC_COMPATIBLE] = 1.07 },
                     [COLOC_GREEDY_DEDICATED] = { [COLOC_INCOMPATIBLE] = 1.02, [COLOC_MIXED] = 1.03 } } },
};

/* Sec. 7.1.2: fill and mix everywhere; jux and best on compatible; g2, fill-r and ded on the
 * others (ded's inner algorithm matters only on mixed, where one type per cluster is not the
 * rule: there d-jux, d-mix and d-best all run). */
static bool paper_runs(coloc_algo a, coloc_regime g) {
        switch (a) {
        case COLOC_FILL_GREEDY:
        case COLOC_SCHED_MIXED: return true;
        case COLOC_SCHED_JUXTAPOSE:
        case COLOC_BEST_SCHEDULE: return g == COLOC_COMPATIBLE;
        case COLOC_GREEDY_DEDICATED:
        case COLOC_GREEDY_FOR_2_TYPES:
        case COLOC_FILL_REBALANCE: return g != COLOC_COMPATIBLE;
        default: return g == COLOC_MIXED;
        }
}

static bool paper_keeps(coloc_regime g, size_t T, size_t m) {
        if (g == COLOC_INCOMPATIBLE || g == COLOC_CLASHING)
                return T <= m;
        return g != COLOC_MIXED || T >= 3;
}

typedef struct tally {
        double sum[_COLOC_ALGO_MAX][_COLOC_REGIME_MAX];
        size_t count[_COLOC_ALGO_MAX][_COLOC_REGIME_MAX], instances[_COLOC_REGIME_MAX];
} tally;

/* Scratch big enough for the largest instance of the class. */
typedef struct workspace {
        double alpha[16], *load;
        uint32_t *type, *machine_of;
} workspace;

/* Draw one instance and add every algorithm's normalized cost to t. */
static int one_instance(coloc_rng *r, coloc_regime g, size_t T, size_t n, size_t m, workspace *w, tally *t, char *err,
                        size_t errlen) {
        coloc_instance in = {
                .ntypes = T, .alpha = w->alpha, .njobs = n, .type = w->type, .load = w->load, .nmachines = m
        };
        coloc_bound b;
        coloc_gen_alpha(r, g, T, w->alpha);
        int rc = coloc_gen_jobs(r, T, n, w->type, w->load);
        if (rc == 0)
                rc = coloc_lower_bound(&in, &b, err, errlen);
        for (int a = 0; rc == 0 && a < _COLOC_ALGO_MAX; a++) {
                double cost;
                if (!paper_runs((coloc_algo)a, g))
                        continue;
                if ((rc = coloc_run((coloc_algo)a, &in, w->machine_of)) == 0 &&
                    (rc = coloc_cost(&in, w->machine_of, NULL, &cost)) == 0) {
                        t->sum[a][g] += coloc_normalized(cost, b.value);
                        t->count[a][g]++;
                } else
                        snprintf(err, errlen, "%s on %s, T %zu, n %zu, m %zu: %s", coloc_algo_name((coloc_algo)a),
                                 coloc_regime_name(g), T, n, m, strerror(-rc));
        }
        t->instances[g] += rc == 0;
        return rc;
}

static int run_grid(const size_class *sc, uint64_t seed, size_t per, tally *t, char *err, size_t errlen) {
        size_t nmax = sc->n[sc->nn - 1];
        workspace w = { .load = malloc(nmax * sizeof(double)),
                        .type = malloc(nmax * sizeof(uint32_t)),
                        .machine_of = malloc(nmax * sizeof(uint32_t)) };
        coloc_rng r;
        int rc = w.load && w.type && w.machine_of ? 0 : -ENOMEM;
        coloc_rng_seed(&r, seed);
        for (int g = 0; g < _COLOC_REGIME_MAX; g++)
                for (size_t T = 2; T <= 4; T++)
                        for (size_t i = 0; i < sc->nn; i++)
                                for (size_t k = 0; k < sc->nm; k++)
                                        for (size_t x = 0; rc == 0 && paper_keeps(g, T, sc->m[k]) && x < per; x++)
                                                rc = one_instance(&r, (coloc_regime)g, T, sc->n[i], sc->m[k], &w, t,
                                                                  err, errlen);
        if (rc == -ENOMEM)
                snprintf(err, errlen, "out of memory");
        free(w.load);
        free(w.type);
        free(w.machine_of);
        return rc;
}

static cJSON *tally_json(const size_class *sc, uint64_t seed, size_t per, const tally *t) {
        cJSON *doc = cJSON_CreateObject(), *inst, *ours, *paper;
        cJSON_AddStringToObject(doc, "experiment", sc->name);
        cJSON_AddNumberToObject(doc, "seed", (double)seed);
        cJSON_AddNumberToObject(doc, "instances_per_combination", (double)per);
        inst = cJSON_AddObjectToObject(doc, "instances");
        ours = cJSON_AddObjectToObject(doc, "mean_normalized_cost");
        paper = cJSON_AddObjectToObject(doc, "paper");
        for (int g = 0; inst && g < _COLOC_REGIME_MAX; g++)
                cJSON_AddNumberToObject(inst, coloc_regime_name((coloc_regime)g), (double)t->instances[g]);
        for (int a = 0; ours && paper && a < _COLOC_ALGO_MAX; a++) {
                cJSON *o = cJSON_AddObjectToObject(ours, coloc_algo_name((coloc_algo)a)), *p = NULL;
                for (int g = 0; o && g < _COLOC_REGIME_MAX; g++) {
                        const char *regime = coloc_regime_name((coloc_regime)g);
                        if (t->count[a][g])
                                cJSON_AddNumberToObject(o, regime, t->sum[a][g] / (double)t->count[a][g]);
                        if (sc->paper[a][g] > 0 &&
                            (p || (p = cJSON_AddObjectToObject(paper, coloc_algo_name((coloc_algo)a)))))
                                cJSON_AddNumberToObject(p, regime, sc->paper[a][g]);
                }
        }
        return doc;
}

static int print_tally(const size_class *sc, uint64_t seed, size_t per, const tally *t) {
        const char *headers[1 + _COLOC_REGIME_MAX] = { "ALGORITHM" };
        size_t total = 0;
        fmt_table tab;
        for (int g = 0; g < _COLOC_REGIME_MAX; g++) {
                headers[1 + g] = coloc_regime_name((coloc_regime)g);
                total += t->instances[g];
        }
        int r = fmt_table_init(&tab, 1 + _COLOC_REGIME_MAX, headers);
        printf("%s instances (%s), %zu per combination, seed %llu: %zu instances\n", sc->name, sc->range, per,
               (unsigned long long)seed, total);
        printf("mean normalized cost (largest cost / lower bound); the paper's Sec. 7.2 figure in brackets\n");
        for (int a = 0; r == 0 && a < _COLOC_ALGO_MAX; a++) {
                char cell[_COLOC_REGIME_MAX][32];
                for (int g = 0; g < _COLOC_REGIME_MAX; g++) {
                        double mean = t->count[a][g] ? t->sum[a][g] / (double)t->count[a][g] : 0, p = sc->paper[a][g];
                        int len = t->count[a][g] ? snprintf(cell[g], sizeof(cell[g]), "%.3f", mean)
                                                 : snprintf(cell[g], sizeof(cell[g]), "-");
                        if (p > 0)
                                snprintf(cell[g] + len, sizeof(cell[g]) - (size_t)len, " (%.2f)", p);
                }
                r = fmt_table_row(&tab, coloc_algo_label((coloc_algo)a), cell[0], cell[1], cell[2], cell[3]);
        }
        if (r == 0)
                fmt_table_print(&tab, stdout);
        fmt_table_free(&tab);
        return r;
}

int coloc_experiment(const cli *c, const char *size, uint64_t seed, size_t per_combination) {
        const size_class *sc = NULL;
        char err[ERRLEN] = "";
        for (size_t i = 0; i < sizeof(classes) / sizeof(classes[0]); i++)
                sc = strcmp(size, classes[i].name) == 0 ? &classes[i] : sc;
        if (!sc)
                return cli_usage_error(c, "--experiment: small or large, not '%s'", size);
        tally *t = calloc(1, sizeof(*t));
        int r = t ? run_grid(sc, seed, per_combination, t, err, sizeof(err)) : -ENOMEM;
        if (r == 0 && c->json) {
                cJSON *doc = tally_json(sc, seed, per_combination, t);
                r = fmt_json(doc);
                cJSON_Delete(doc);
        } else if (r == 0)
                r = print_tally(sc, seed, per_combination, t);
        if (r < 0)
                cli_error(c, "%s", *err ? err : "out of memory");
        free(t);
        return r < 0 ? EXIT_FAIL : 0;
}
