/* fit.c - the NetBatch placement heuristics: First/Best/Worst-Fit on cores or memory, Mix-Fit,
 * and the Max-Jobs meta-heuristic. Source: the Intel NetBatch pool manager paper
 * (../shared/papers/001_*, sections 2-4); docs/policies.md.
 *
 * Each heuristic is a chooser: given the machines and one job, the index of the machine to use
 * or -1. A scan of every machine per job: O(machines) per decision. */
#include "sched.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* sched_machine.up of a machine reserved for a job during one pass (SCHED_RESERVE). */
#define RESERVED (-1)

typedef int (*chooser)(const sched_machine *machines, size_t n, res_t req);

static int fits(const sched_machine *m, res_t req) {
        return m->up > 0 && res_fits(req, m->free);
}

static int choose_first(const sched_machine *machines, size_t n, res_t req) {
        for (size_t i = 0; i < n; i++)
                if (fits(&machines[i], req))
                        return (int)i;
        return -1;
}

/* The machine the job fits with the least (sign = +1) or most (sign = -1) free cores or memory. */
static int choose_extreme(const sched_machine *machines, size_t n, res_t req, int by_mem, int sign) {
        int best = -1;
        int64_t best_key = 0;
        for (size_t i = 0; i < n; i++) {
                if (!fits(&machines[i], req))
                        continue;
                int64_t key = sign * (by_mem ? machines[i].free.mem : machines[i].free.mcpu);
                if (best < 0 || key < best_key) {
                        best = (int)i;
                        best_key = key;
                }
        }
        return best;
}

static int choose_best_cores(const sched_machine *m, size_t n, res_t r) { return choose_extreme(m, n, r, 0, +1); }
static int choose_best_mem(const sched_machine *m, size_t n, res_t r) { return choose_extreme(m, n, r, 1, +1); }
static int choose_worst_cores(const sched_machine *m, size_t n, res_t r) { return choose_extreme(m, n, r, 0, -1); }
static int choose_worst_mem(const sched_machine *m, size_t n, res_t r) { return choose_extreme(m, n, r, 1, -1); }

double sched_mix_fit_alpha(const sched_machine *m, res_t req) {
        if (!fits(m, req) || m->capacity.mcpu <= 0 || m->capacity.mem <= 0)
                return -1;
        /* Cores and memory normalised to a unit square; both lines start at its top-right corner. */
        double dx = (double)(m->capacity.mcpu - m->free.mcpu + req.mcpu) / (double)m->capacity.mcpu - 1.0;
        double dy = (double)(m->capacity.mem - m->free.mem + req.mem) / (double)m->capacity.mem - 1.0;
        /* atan2 of |cross| and dot against the diagonal direction (-1, -1): exact on the diagonal,
         * where acos would lose half the digits and break the paper's First-Fit tie-break. */
        return atan2(fabs(dy - dx), -(dx + dy));
}

static int choose_mix(const sched_machine *machines, size_t n, res_t req) {
        int best = -1;
        double best_alpha = 0;
        for (size_t i = 0; i < n; i++) {
                double alpha = sched_mix_fit_alpha(&machines[i], req);
                /* a margin, so that equal angles reached by different arithmetic still tie */
                if (alpha >= 0 && (best < 0 || alpha < best_alpha - 1e-12)) {
                        best = (int)i;
                        best_alpha = alpha;
                }
        }
        return best;
}

static const struct {
        const char *name;
        chooser choose;
} heuristics[_SCHED_HEURISTIC_MAX] = {
        [SCHED_FIRST_FIT] = { "first-fit", choose_first },
        [SCHED_BEST_FIT_CORES] = { "best-fit-cores", choose_best_cores },
        [SCHED_BEST_FIT_MEM] = { "best-fit-mem", choose_best_mem },
        [SCHED_WORST_FIT_CORES] = { "worst-fit-cores", choose_worst_cores },
        [SCHED_WORST_FIT_MEM] = { "worst-fit-mem", choose_worst_mem },
        [SCHED_MIX_FIT] = { "mix-fit", choose_mix },
        [SCHED_MAX_JOBS] = { "max-jobs", NULL },
};

const char *sched_heuristic_name(sched_heuristic h) {
        return h < _SCHED_HEURISTIC_MAX ? heuristics[h].name : NULL;
}

int sched_heuristic_from_name(const char *name, sched_heuristic *out) {
        for (int h = 0; h < _SCHED_HEURISTIC_MAX; h++)
                if (strcmp(name, heuristics[h].name) == 0) {
                        *out = (sched_heuristic)h;
                        return 0;
                }
        return -EINVAL;
}

static const char *const order_names[] = {
        [SCHED_STRICT_FIFO] = "fifo", [SCHED_BACKFILL] = "backfill", [SCHED_RESERVE] = "reserve",
};

const char *sched_order_name(sched_order o) {
        return o <= SCHED_RESERVE ? order_names[o] : NULL;
}

int sched_order_from_name(const char *name, sched_order *out) {
        for (int o = 0; o <= SCHED_RESERVE; o++)
                if (strcmp(name, order_names[o]) == 0) {
                        *out = (sched_order)o;
                        return 0;
                }
        return -EINVAL;
}

/* The up machine with the most free memory, or -1. */
static int most_free_memory(const sched_machine *machines, size_t n) {
        int best = -1;
        for (size_t i = 0; i < n; i++)
                if (machines[i].up > 0 && (best < 0 || machines[i].free.mem > machines[best].free.mem))
                        best = (int)i;
        return best;
}

static size_t place_with(chooser choose, sched_machine *machines, size_t nmachines, const sched_job *jobs,
                         size_t njobs, sched_order order, sched_assignment *out) {
        size_t placed = 0;
        for (size_t j = 0; j < njobs; j++) {
                int m = choose(machines, nmachines, jobs[j].req);
                if (m < 0) {
                        if (order == SCHED_STRICT_FIFO)
                                break;
                        if (order == SCHED_RESERVE && (m = most_free_memory(machines, nmachines)) >= 0)
                                machines[m].up = RESERVED; /* no other job goes there this pass */
                        continue;
                }
                machines[m].free = res_sub(machines[m].free, jobs[j].req);
                out[placed++] = (sched_assignment){ .job_id = jobs[j].id, .machine = machines[m].index };
        }
        for (size_t i = 0; i < nmachines; i++) /* the reservations last one pass */
                if (machines[i].up == RESERVED)
                        machines[i].up = 1;
        return placed;
}

/* Max-Jobs: every heuristic on its own copy of the machines; the schedule placing most wins. */
static long place_max_jobs(sched_machine *machines, size_t nmachines, const sched_job *jobs, size_t njobs,
                           sched_order order, sched_assignment *out) {
        sched_machine *trial = malloc(nmachines * sizeof(*trial) + 1);
        sched_machine *best_machines = malloc(nmachines * sizeof(*best_machines) + 1);
        sched_assignment *trial_out = malloc(njobs * sizeof(*trial_out) + 1);
        long best = -1;

        if (!trial || !best_machines || !trial_out) {
                best = -ENOMEM;
                goto out;
        }
        for (int h = 0; h < SCHED_MAX_JOBS; h++) {
                memcpy(trial, machines, nmachines * sizeof(*trial));
                size_t n = place_with(heuristics[h].choose, trial, nmachines, jobs, njobs, order, trial_out);
                if ((long)n > best) {
                        best = (long)n;
                        memcpy(out, trial_out, n * sizeof(*out));
                        memcpy(best_machines, trial, nmachines * sizeof(*trial));
                }
        }
        memcpy(machines, best_machines, nmachines * sizeof(*machines));
out:
        free(trial);
        free(best_machines);
        free(trial_out);
        return best;
}

long sched_place(sched_heuristic h, sched_machine *machines, size_t nmachines, const sched_job *jobs,
                 size_t njobs, sched_order order, sched_assignment *out) {
        if (h >= _SCHED_HEURISTIC_MAX)
                return -EINVAL;
        if (h == SCHED_MAX_JOBS)
                return place_max_jobs(machines, nmachines, jobs, njobs, order, out);
        return (long)place_with(heuristics[h].choose, machines, nmachines, jobs, njobs, order, out);
}

size_t sched_first_fit(sched_machine *machines, size_t nmachines, const sched_job *jobs, size_t njobs,
                       sched_order order, sched_assignment *out) {
        return place_with(choose_first, machines, nmachines, jobs, njobs, order, out);
}

int sched_can_ever_fit(const sched_machine *machines, size_t nmachines, res_t req) {
        for (size_t i = 0; i < nmachines; i++)
                if (machines[i].up > 0 && res_fits(req, machines[i].capacity))
                        return 1;
        return 0;
}
