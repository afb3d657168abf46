/* bench_dispatch.c - what a dispatcher's whole pass (sched_dispatch, dispatch.h) costs over a long
 * queue of waiting jobs: the pass that takes the waiting jobs from the core's queue again (after
 * a hold, a dependency met, or at every pass when a filter needs the whole queue), and the pass
 * after a release, whose one job comes back fresh. Prints one line per policy.
 *
 *   build/bin/bench_dispatch [JOBS [MACHINES]]   (defaults: 100000, 100)
 *
 * Machines of 8 cores and 8 GiB; jobs of 1 to 4 cores and 1 to 2 GiB, in id order, job 1 held:
 * the first pass offers the others and fills the cluster, the rest wait (Greedy in its machines'
 * queues, Tetris in its list). Then 20 whole passes offer the waiting jobs again, nothing having
 * changed, and one more offers job 1 with them. Times are this process's CPU time. */
#include "dispatch.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static double cpu_ms(void) {
        struct timespec t;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
        return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

static int run(const char *policy, size_t njobs, size_t nmachines) {
        sched_machine *m = calloc(nmachines, sizeof(*m));
        sched_job *jobs = calloc(njobs + 1, sizeof(*jobs)), *queue = calloc(njobs + 1, sizeof(*queue));
        sched_assignment *out = calloc(njobs + 1, sizeof(*out));
        bool *placed = calloc(njobs + 2, sizeof(*placed));
        sched_dispatcher *d = NULL;
        if (!m || !jobs || !queue || !out || !placed || sched_dispatcher_new(policy, 1, &d) < 0)
                return 1;
        for (size_t i = 0; i < nmachines; i++) {
                res_t cap = { .mcpu = 8000, .mem = (int64_t)8 << 30 };
                m[i] = (sched_machine){ .index = (uint32_t)i, .capacity = cap, .free = cap, .up = 1 };
        }
        for (size_t i = 0; i < njobs; i++)
                jobs[i] = (sched_job){ .id = i + 1,
                                       .req = { .mcpu = 1000 + (int64_t)(i % 7) * 500,
                                                .mem = ((int64_t)1 << 30) + (int64_t)(i % 5) * (256 << 20) },
                                       .runtime = 60 + (double)(i % 100) };
        long first = sched_dispatch(d, m, nmachines, jobs + 1, njobs - 1, out);
        for (long a = 0; a < first; a++)
                placed[out[a].job_id] = true;
        size_t n = 1; /* queue[0] is job 1, offered at the last pass only */
        queue[0] = jobs[0];
        for (size_t i = 1; i < njobs; i++)
                if (!placed[jobs[i].id])
                        queue[n++] = jobs[i];
        int reps = 20;
        double t0 = cpu_ms();
        for (int r = 0; r < reps; r++)
                sched_dispatch(d, m, nmachines, queue + 1, n - 1, out);
        double t1 = cpu_ms();
        long released = sched_dispatch(d, m, nmachines, queue, n, out);
        double t2 = cpu_ms();
        printf("%s: %zu jobs, %zu machines, %zu waiting: whole pass %.2f ms, the release's %.2f ms (%ld placed)\n",
               policy, njobs, nmachines, n - 1, (t1 - t0) / reps, t2 - t1, released);
        sched_dispatcher_free(d);
        free(m), free(jobs), free(queue), free(out), free(placed);
        return 0;
}

int main(int argc, char **argv) {
        size_t njobs = argc > 1 ? strtoul(argv[1], NULL, 10) : 100000;
        size_t nmachines = argc > 2 ? strtoul(argv[2], NULL, 10) : 100;
        if (njobs < 2 || nmachines < 1) {
                fprintf(stderr, "usage: bench_dispatch [JOBS >= 2 [MACHINES >= 1]]\n");
                return 2;
        }
        return run("greedy", njobs, nmachines) || run("tetris", njobs, nmachines);
}
