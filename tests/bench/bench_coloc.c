/* bench_coloc.c - how long each colocation algorithm (policies/coloc.h) and the lower bound
 * take on the paper's largest instances: n = 5000 jobs, m = 100 machines, 4 types, one instance
 * per coefficient regime drawn as colony coloc --experiment draws them. Not run by ctest.
 *
 *   build/bin/bench_coloc [REPETITIONS] [SEED]      (prints JSON on stdout)
 *
 * Each figure is the median CPU time of REPETITIONS runs (default 5), in milliseconds. */
#include "coloc.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define N        5000
#define M        100
#define TYPES    4
#define MAX_REPS 101

/* CPU time of this process: the algorithms are single-threaded, and on a shared host it
 * counts what they use rather than what the neighbours do. */
static double now_ms(void) {
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static int by_value(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

/* Median time of reps runs of algorithm a, or of the bound when a is _COLOC_ALGO_MAX. */
static int time_one(const coloc_instance *in, int a, int reps, uint32_t *machine_of, double *median) {
        double t[MAX_REPS];
        char err[256];
        for (int k = 0; k < reps; k++) {
                coloc_bound b;
                double start = now_ms();
                int r = a == _COLOC_ALGO_MAX ? coloc_lower_bound(in, &b, err, sizeof(err))
                                             : coloc_run((coloc_algo)a, in, machine_of);
                t[k] = now_ms() - start;
                if (r < 0) {
                        fprintf(stderr, "bench_coloc: %s: %s\n", a == _COLOC_ALGO_MAX ? "bound" : coloc_algo_name(a),
                                strerror(-r));
                        return r;
                }
        }
        qsort(t, (size_t)reps, sizeof(t[0]), by_value);
        *median = t[reps / 2];
        return 0;
}

int main(int argc, char **argv) {
        int reps = argc > 1 ? atoi(argv[1]) : 5;
        unsigned long long seed = argc > 2 ? strtoull(argv[2], NULL, 10) : 1;
        static uint32_t type[N], machine_of[N];
        static double load[N], alpha[TYPES * TYPES];
        coloc_instance in = { .ntypes = TYPES, .alpha = alpha, .njobs = N, .type = type, .load = load, .nmachines = M };
        coloc_rng r;
        if (reps < 1 || reps > MAX_REPS) {
                fprintf(stderr, "usage: bench_coloc [REPETITIONS 1..%d] [SEED]\n", MAX_REPS);
                return 2;
        }
        coloc_rng_seed(&r, seed);
        printf("{\"n\": %d, \"m\": %d, \"types\": %d, \"repetitions\": %d, \"seed\": %llu, \"median_cpu_ms\": {", N, M,
               TYPES, reps, seed);
        for (int g = 0; g < _COLOC_REGIME_MAX; g++) {
                coloc_gen_alpha(&r, (coloc_regime)g, TYPES, alpha);
                if (coloc_gen_jobs(&r, TYPES, N, type, load) < 0)
                        return 1;
                printf("%s\n  \"%s\": {", g ? "," : "", coloc_regime_name((coloc_regime)g));
                for (int a = 0; a <= _COLOC_ALGO_MAX; a++) {
                        double ms;
                        if (time_one(&in, a, reps, machine_of, &ms) < 0)
                                return 1;
                        printf("%s\"%s\": %.3f", a ? ", " : "",
                               a == _COLOC_ALGO_MAX ? "lower_bound" : coloc_algo_name(a), ms);
                }
                printf("}");
        }
        printf("\n}}\n");
        return 0;
}
