/* cpuwin.h - CPU time per department over a sliding window, from the agents' usage reports:
 * CPUWIN_BUCKETS buckets of CPUWIN_BUCKET_SECONDS each, per group path. Pure (the caller passes
 * the time); a few groups, so a linear table. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define CPUWIN_BUCKETS        60
#define CPUWIN_BUCKET_SECONDS 10
#define CPUWIN_SECONDS        (CPUWIN_BUCKETS * CPUWIN_BUCKET_SECONDS)

typedef struct cpuwin_group {
        char *group;                   /* "" for jobs of no group */
        int64_t epoch[CPUWIN_BUCKETS]; /* which bucket-length period each bucket holds */
        int64_t usec[CPUWIN_BUCKETS];
} cpuwin_group;

typedef struct cpuwin {
        cpuwin_group *v;
        size_t n;
} cpuwin;

/* Count usec of CPU time used by a job of group (NULL: none) at now_usec. Returns 0 or -ENOMEM. */
int cpuwin_add(cpuwin *w, const char *group, int64_t usec, int64_t now_usec);
/* CPU time of g's jobs in the CPUWIN_SECONDS up to now_usec. */
int64_t cpuwin_sum(const cpuwin_group *g, int64_t now_usec);
/* Free the table. */
void cpuwin_free(cpuwin *w);
