/* coloc_gen.c - instances like the paper's experiment (Sec. 7.1.1), generated from a seed.
 *
 * The paper samples 10,000 task records of a Google cluster trace; we have no trace here, so a
 * task's two figures are drawn, and how is our assumption:
 *  - s = max(CPU, memory), each normalised to its maximum: log10 s ~ Normal(log10 0.03, 0.45),
 *    redrawn outside [0.005, 1] (the paper drops records below 0.005 in both); most tasks are
 *    small and a few use a large share, as in the trace, but the shape of the tail is ours;
 *  - rho = CPU / memory: log10 rho ~ Normal(0.0145, 0.526), chosen so that the paper's
 *    thresholds give its proportions: log10 rho <= -0.66 for 10% (memory-intensive), > 0.66
 *    for 11% (CPU-intensive), and rho <= 1 for about half (T = 2 "almost equal halves").
 * The paper does not say which logarithm its thresholds use; the proportions are what we match.
 * Load = round(100 s), as in the paper, so loads are 1..100. */
#include "coloc.h"
#include <errno.h>
#include <math.h>
#include <stdbool.h>

void coloc_rng_seed(coloc_rng *r, uint64_t seed) {
        r->state = seed * 0x9e3779b97f4a7c15ULL + 0x2545f4914f6cdd1dULL;
        if (r->state == 0) /* the one state xorshift never leaves */
                r->state = 1;
}

/* xorshift64* (Vigna, 2016): small, and the same sequence everywhere. */
static uint64_t next_u64(coloc_rng *r) {
        uint64_t x = r->state;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        r->state = x;
        return x * 0x2545f4914f6cdd1dULL;
}

double coloc_rng_uniform(coloc_rng *r) { return (double)(next_u64(r) >> 11) / 9007199254740992.0; }

static double between(coloc_rng *r, double lo, double hi) { return lo + (hi - lo) * coloc_rng_uniform(r); }

/* Box-Muller; 1 - u keeps the logarithm's argument in (0, 1]. */
static double gaussian(coloc_rng *r, double mean, double sd) {
        double u = 1 - coloc_rng_uniform(r), v = coloc_rng_uniform(r);
        return mean + sd * sqrt(-2 * log(u)) * cos(2 * M_PI * v);
}

static const char *const regimes[_COLOC_REGIME_MAX] = {
        [COLOC_COMPATIBLE] = "compatible",
        [COLOC_INCOMPATIBLE] = "incompatible",
        [COLOC_CLASHING] = "clashing",
        [COLOC_MIXED] = "mixed",
};

const char *coloc_regime_name(coloc_regime g) { return g < _COLOC_REGIME_MAX ? regimes[g] : "?"; }

/* The paper's ranges: "smaller than 1", "between 1 and 2", "between 1 and 4". For mixed it
 * names only the clusters; between them we draw as for incompatible. */
void coloc_gen_alpha(coloc_rng *r, coloc_regime g, size_t ntypes, double *alpha) {
        size_t half = (ntypes + 1) / 2;
        for (size_t a = 0; a < ntypes; a++)
                for (size_t b = 0; b < ntypes; b++) {
                        bool apart = g == COLOC_INCOMPATIBLE || (g == COLOC_MIXED && (a < half) != (b < half));
                        double *x = &alpha[a * ntypes + b];
                        if (a == b)
                                *x = 1;
                        else if (g == COLOC_CLASHING)
                                *x = between(r, 1, 4);
                        else
                                *x = apart ? between(r, 1, 2) : between(r, 0, 1);
                }
}

/* Types by log10 rho: T = 2 splits at 0; T = 3 at -0.66 and 0.66; T = 4 at -0.66, 0, 0.66. */
static uint32_t type_of(double log_rho, size_t ntypes) {
        static const double cuts[5][3] = { [2] = { 0 }, [3] = { -0.66, 0.66 }, [4] = { -0.66, 0, 0.66 } };
        uint32_t t = 0;
        while (t + 1 < ntypes && log_rho > cuts[ntypes][t])
                t++;
        return t;
}

static void draw_task(coloc_rng *r, size_t ntypes, uint32_t *type, double *load) {
        double log_s;
        int tries = 0;
        do
                log_s = gaussian(r, log10(0.03), 0.45);
        while ((log_s < log10(0.005) || log_s > 0) && ++tries < 64);
        log_s = fmin(0, fmax(log10(0.005), log_s));
        *load = round(100 * pow(10, log_s));
        *type = type_of(gaussian(r, 0.0145, 0.526), ntypes);
}

/* The paper's repair of a sample missing a type: drop a task of the most common type (here its
 * last one) and add one of the missing type (here drawn until it has that type). */
static void add_missing(coloc_rng *r, size_t ntypes, size_t njobs, uint32_t *type, double *load, uint32_t missing) {
        size_t count[4] = { 0 }, most = 0, victim = 0;
        for (size_t j = 0; j < njobs; j++)
                count[type[j]]++;
        for (size_t t = 1; t < ntypes; t++)
                most = count[t] > count[most] ? t : most;
        for (size_t j = 0; j < njobs; j++)
                victim = type[j] == most ? j : victim;
        do
                draw_task(r, ntypes, &type[victim], &load[victim]);
        while (type[victim] != missing);
}

int coloc_gen_jobs(coloc_rng *r, size_t ntypes, size_t njobs, uint32_t *type, double *load) {
        if (ntypes < 2 || ntypes > 4 || njobs < ntypes)
                return -EINVAL;
        for (size_t j = 0; j < njobs; j++)
                draw_task(r, ntypes, &type[j], &load[j]);
        for (uint32_t t = 0; t < ntypes; t++) {
                bool seen = false;
                for (size_t j = 0; j < njobs && !seen; j++)
                        seen = type[j] == t;
                if (!seen)
                        add_missing(r, ntypes, njobs, type, load, t);
        }
        return 0;
}
