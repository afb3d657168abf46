/* spin_threads - THREADS threads, each doing UNITS of integer arithmetic in registers, for
 * tests/bench/cpuset.sh: prints the wall time from the first thread's start to the last one's
 * end, in seconds. A fixed amount of work, so that where it ran shows as a longer or shorter
 * run, not as less progress. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static long units;

static void *spin(void *arg) {
        uint64_t x = (uintptr_t)arg + 1;
        for (long u = 0; u < units; u++)
                for (int i = 0; i < 1000000; i++)
                        x = x * 6364136223846793005u + 1442695040888963407u;
        return (void *)(uintptr_t)(x & 1); /* kept, so that the loop is not optimised away */
}

int main(int argc, char **argv) {
        struct timespec a, b;
        long n = argc == 3 ? strtol(argv[1], NULL, 10) : 0;
        units = argc == 3 ? strtol(argv[2], NULL, 10) : 0;
        if (n < 1 || n > 256 || units < 1) {
                fprintf(stderr, "usage: spin_threads THREADS UNITS\n");
                return 2;
        }
        pthread_t *t = calloc((size_t)n, sizeof(*t));
        if (!t)
                return 1;
        clock_gettime(CLOCK_MONOTONIC, &a);
        for (long i = 0; i < n; i++)
                if (pthread_create(&t[i], NULL, spin, (void *)(uintptr_t)i) != 0)
                        return 1;
        for (long i = 0; i < n; i++)
                pthread_join(t[i], NULL);
        clock_gettime(CLOCK_MONOTONIC, &b);
        printf("%.3f\n", (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9);
        free(t);
        return 0;
}
