/* coloc_cli.h - what colony coloc's two modes share: one instance file (coloc_cli.c) and the
 * paper's experiment regenerated (coloc_experiment.c). */
#pragma once
#include "cli.h"
#include "coloc.h"
#include <math.h>
#include <stdint.h>

/* The largest cost over its lower bound; 1 when both are 0, NAN when only the bound is. */
static inline double coloc_normalized(double max_cost, double bound) {
        return bound > 0 ? max_cost / bound : max_cost == 0 ? 1 : NAN;
}

/* colony coloc --experiment small|large: generate the paper's grid of instances from seed,
 * per_combination instances of each, run its algorithms on each regime and print the mean
 * normalized costs beside the paper's (a table, or JSON with c->json). Returns an exit status. */
int coloc_experiment(const cli *c, const char *size, uint64_t seed, size_t per_combination);
