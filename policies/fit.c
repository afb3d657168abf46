/* fit.c - the NetBatch placement heuristics: First/Best/Worst-Fit on cores or memory, Mix-Fit,
 * and the Max-Jobs meta-heuristic. Source: Shai, Shmueli and Feitelson,
 * "Heuristics for resource matching in Intel's compute farm" (JSSPP 2013), sections 2-4;
 * docs/policies.md.
 *
 * Each heuristic is a chooser, given the machines and one job, the index of the machine to use
 * or -1, in two forms: a scan of every machine, O(machines) per decision, the reference; and
 * the same question asked of a sched_index, O(log machines). One pass loop drives either. */
#include "sched.h"
#include "sched_index.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* sched_machine.up of a machine reserved for a job during one pass (SCHED_RESERVE). */
#define RESERVED (-1)

typedef int (*chooser)(const sched_machine *machines, size_t n, res_t req);
typedef long (*index_chooser)(sched_index *ix, res_t req);

static int fits(const sched_machine *m, res_t req) { return m->up > 0 && res_fits(req, m->free); }

static int choose_first(const sched_machine *machines, size_t n, res_t req) {
        for (size_t i = 0; i < n; i++)
                if (fits(&machines[i], req))
                        return (int)i;
        return -1;
}

/* The machine the job fits with the least (sign = +1) or most (sign = -1) free cores or memory,
 * among those that would have the fewest GPUs left idle: a GPU job packs the GPUs, and a job
 * without GPUs takes a machine whose GPUs are idle only where nothing else fits. req by pointer:
 * by value, with req.gpus read in the loop, gcc copied it for res_fits through a stack slot it
 * had just written in halves, a stalled store forward per machine that halved the scan's speed
 * (bench_fit, perf annotate). */
static int choose_extreme(const sched_machine *machines, size_t n, const res_t *req, int by_mem, int sign) {
        int best = -1;
        int64_t best_key = 0, best_gpus = 0;
        for (size_t i = 0; i < n; i++) {
                if (!fits(&machines[i], *req))
                        continue;
                int64_t key = sign * (by_mem ? machines[i].free.mem : machines[i].free.mcpu);
                int64_t gpus = machines[i].free.gpus - req->gpus;
                if (best < 0 || gpus < best_gpus || (gpus == best_gpus && key < best_key)) {
                        best = (int)i;
                        best_key = key;
                        best_gpus = gpus;
                }
        }
        return best;
}

static int choose_best_cores(const sched_machine *m, size_t n, res_t r) { return choose_extreme(m, n, &r, 0, +1); }
static int choose_best_mem(const sched_machine *m, size_t n, res_t r) { return choose_extreme(m, n, &r, 1, +1); }
static int choose_worst_cores(const sched_machine *m, size_t n, res_t r) { return choose_extreme(m, n, &r, 0, -1); }
static int choose_worst_mem(const sched_machine *m, size_t n, res_t r) { return choose_extreme(m, n, &r, 1, -1); }

/* On a machine with GPUs, the angle in the cube of cores, memory and GPUs, against its diagonal
 * (-1, -1, -1): the norm of the cross product is sqrt of the sum of (d_i - d_j)^2 over the pairs
 * (Lagrange's identity), 0 on the diagonal as in the square. A job without GPUs on a machine
 * whose GPUs idle moves away from the diagonal, so Mix-Fit prefers a machine without them. */
static double mix_fit_alpha3(const sched_machine *m, res_t req, double dx, double dy) {
        double dz = (double)(m->capacity.gpus - m->free.gpus + req.gpus) / (double)m->capacity.gpus - 1.0;
        double cross = sqrt((dx - dy) * (dx - dy) + (dx - dz) * (dx - dz) + (dy - dz) * (dy - dz));
        return atan2(cross, -(dx + dy + dz));
}

double sched_mix_fit_alpha(const sched_machine *m, res_t req) {
        if (!fits(m, req) || m->capacity.mcpu <= 0 || m->capacity.mem <= 0)
                return -1;
        /* Cores and memory normalised to a unit square; both lines start at its top-right corner. */
        double dx = (double)(m->capacity.mcpu - m->free.mcpu + req.mcpu) / (double)m->capacity.mcpu - 1.0;
        double dy = (double)(m->capacity.mem - m->free.mem + req.mem) / (double)m->capacity.mem - 1.0;
        if (m->capacity.gpus > 0)
                return mix_fit_alpha3(m, req, dx, dy);
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

static long index_first(sched_index *ix, res_t r) { return sched_index_first_fit(ix, r); }
/* Best- and Worst-Fit through the treaps, or by the scan where GPUs come first (sched_index.h)
 * or are asked (the treaps know cores and memory only). */
static long index_extreme(sched_index *ix, res_t r, bool by_mem, bool most) {
        if (ix->gpus || r.gpus > 0)
                return choose_extreme(ix->machines, ix->n, &r, by_mem, most ? -1 : +1);
        return sched_index_extreme(ix, r, by_mem, most);
}

static long index_best_cores(sched_index *ix, res_t r) { return index_extreme(ix, r, false, false); }
static long index_best_mem(sched_index *ix, res_t r) { return index_extreme(ix, r, true, false); }
static long index_worst_cores(sched_index *ix, res_t r) { return index_extreme(ix, r, false, true); }
static long index_worst_mem(sched_index *ix, res_t r) { return index_extreme(ix, r, true, true); }
static long index_mix(sched_index *ix, res_t r) { return choose_mix(ix->machines, ix->n, r); }

static const struct {
        const char *name;
        chooser choose;
        index_chooser choose_indexed;
} heuristics[_SCHED_HEURISTIC_MAX] = {
        [SCHED_FIRST_FIT] = { "first-fit", choose_first, index_first },
        [SCHED_BEST_FIT_CORES] = { "best-fit-cores", choose_best_cores, index_best_cores },
        [SCHED_BEST_FIT_MEM] = { "best-fit-mem", choose_best_mem, index_best_mem },
        [SCHED_WORST_FIT_CORES] = { "worst-fit-cores", choose_worst_cores, index_worst_cores },
        [SCHED_WORST_FIT_MEM] = { "worst-fit-mem", choose_worst_mem, index_worst_mem },
        [SCHED_MIX_FIT] = { "mix-fit", choose_mix, index_mix },
        [SCHED_MAX_JOBS] = { "max-jobs", NULL, NULL },
};

const char *sched_heuristic_name(sched_heuristic h) { return h < _SCHED_HEURISTIC_MAX ? heuristics[h].name : NULL; }

int sched_heuristic_from_name(const char *name, sched_heuristic *out) {
        for (int h = 0; h < _SCHED_HEURISTIC_MAX; h++)
                if (strcmp(name, heuristics[h].name) == 0) {
                        *out = (sched_heuristic)h;
                        return 0;
                }
        return -EINVAL;
}

static const char *const order_names[] = {
        [SCHED_STRICT_FIFO] = "fifo",
        [SCHED_BACKFILL] = "backfill",
        [SCHED_RESERVE] = "reserve",
};

const char *sched_order_name(sched_order o) { return o <= SCHED_RESERVE ? order_names[o] : NULL; }

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

/* What one pass places on: the machines, and the index over them when there is one. */
typedef struct pass_machines {
        sched_machine *v;
        size_t n;
        sched_index *ix; /* NULL: scan v */
} pass_machines;

static long pick(const pass_machines *pm, sched_heuristic h, res_t req) {
        return pm->ix ? heuristics[h].choose_indexed(pm->ix, req) : heuristics[h].choose(pm->v, pm->n, req);
}

static void changed(const pass_machines *pm, size_t m) {
        if (pm->ix)
                sched_index_update(pm->ix, m);
}

/* Reserve the roomiest machine for the rest of the pass (SCHED_RESERVE). */
static void reserve(const pass_machines *pm) {
        long m = pm->ix ? sched_index_roomiest(pm->ix) : most_free_memory(pm->v, pm->n);
        if (m < 0)
                return;
        pm->v[m].up = RESERVED; /* no other job goes there this pass */
        changed(pm, (size_t)m);
        if (pm->ix)
                pm->ix->reserved[pm->ix->nreserved++] = (size_t)m;
}

/* The reservations last one pass. */
static void end_reservations(const pass_machines *pm) {
        if (!pm->ix) {
                for (size_t i = 0; i < pm->n; i++)
                        if (pm->v[i].up == RESERVED)
                                pm->v[i].up = 1;
                return;
        }
        for (; pm->ix->nreserved > 0; pm->ix->nreserved--) {
                size_t m = pm->ix->reserved[pm->ix->nreserved - 1];
                pm->v[m].up = 1;
                changed(pm, m);
        }
}

/* Place job on the machine h picks into *out, or, where none fits, reserve one (SCHED_RESERVE).
 * Returns whether it was placed. */
static bool place_one(const pass_machines *pm, sched_heuristic h, const sched_job *job, sched_order order,
                      sched_assignment *out) {
        long m = pick(pm, h, job->req);
        if (m < 0) {
                if (order == SCHED_RESERVE)
                        reserve(pm);
                return false;
        }
        pm->v[m].free = res_sub(pm->v[m].free, job->req);
        changed(pm, (size_t)m);
        *out = (sched_assignment){ .job_id = job->id, .machine = pm->v[m].index };
        return true;
}

static size_t place_with(const pass_machines *pm, sched_heuristic h, const sched_job *jobs, size_t njobs,
                         sched_order order, sched_assignment *out) {
        size_t placed = 0;
        for (size_t j = 0; j < njobs; j++) {
                if (place_one(pm, h, &jobs[j], order, &out[placed]))
                        placed++;
                else if (order == SCHED_STRICT_FIFO)
                        break;
        }
        end_reservations(pm);
        return placed;
}

/* Max-Jobs: every heuristic on its own copy of the machines; the schedule placing most wins.
 * Its machines replace those of pm that differ, which keeps pm's index in step. */
static long place_max_jobs(const pass_machines *pm, const sched_job *jobs, size_t njobs, sched_order order,
                           sched_assignment *out) {
        if (pm->n == 0)
                return 0; /* no machine, no schedule (and no array to copy) */
        sched_machine *trial = malloc(pm->n * sizeof(*trial) + 1);
        sched_machine *best_machines = malloc(pm->n * sizeof(*best_machines) + 1);
        sched_assignment *trial_out = malloc(njobs * sizeof(*trial_out) + 1);
        long best = -1;

        if (!trial || !best_machines || !trial_out) {
                best = -ENOMEM;
                goto out;
        }
        for (int h = 0; h < SCHED_MAX_JOBS; h++) {
                memcpy(trial, pm->v, pm->n * sizeof(*trial));
                size_t n = place_with(&(pass_machines){ trial, pm->n, NULL }, (sched_heuristic)h, jobs, njobs, order,
                                      trial_out);
                if ((long)n > best) {
                        best = (long)n;
                        memcpy(out, trial_out, n * sizeof(*out));
                        memcpy(best_machines, trial, pm->n * sizeof(*trial));
                }
        }
        for (size_t m = 0; m < pm->n; m++)
                if (!res_equal(pm->v[m].free, best_machines[m].free) || pm->v[m].up != best_machines[m].up) {
                        pm->v[m] = best_machines[m];
                        changed(pm, m);
                }
out:
        free(trial);
        free(best_machines);
        free(trial_out);
        return best;
}

long sched_place(sched_heuristic h, sched_machine *machines, size_t nmachines, const sched_job *jobs, size_t njobs,
                 sched_order order, sched_assignment *out) {
        if (h >= _SCHED_HEURISTIC_MAX)
                return -EINVAL;
        pass_machines pm = { machines, nmachines, NULL };
        if (h == SCHED_MAX_JOBS)
                return place_max_jobs(&pm, jobs, njobs, order, out);
        return (long)place_with(&pm, h, jobs, njobs, order, out);
}

size_t sched_first_fit(sched_machine *machines, size_t nmachines, const sched_job *jobs, size_t njobs,
                       sched_order order, sched_assignment *out) {
        return place_with(&(pass_machines){ machines, nmachines, NULL }, SCHED_FIRST_FIT, jobs, njobs, order, out);
}

long sched_index_choose(sched_index *ix, sched_heuristic h, res_t req) {
        if (h >= SCHED_MAX_JOBS)
                return -EINVAL;
        return heuristics[h].choose_indexed(ix, req);
}

long sched_index_place(sched_index *ix, sched_heuristic h, const sched_job *jobs, size_t njobs, sched_order order,
                       sched_assignment *out) {
        if (h >= _SCHED_HEURISTIC_MAX)
                return -EINVAL;
        pass_machines pm = { ix->machines, ix->n, ix };
        if (h == SCHED_MAX_JOBS)
                return place_max_jobs(&pm, jobs, njobs, order, out);
        return (long)place_with(&pm, h, jobs, njobs, order, out);
}

int sched_job_array_next(void *arg, sched_job *out) {
        sched_job_array *a = arg;
        if (a->next >= a->n)
                return 0;
        *out = a->jobs[a->next++];
        return 1;
}

long sched_index_place_from(sched_index *ix, sched_heuristic h, const sched_job_list *list, sched_order order,
                            sched_assignment *out) {
        if (h >= SCHED_MAX_JOBS)
                return -EINVAL;
        pass_machines pm = { ix->machines, ix->n, ix };
        size_t placed = 0;
        sched_job job;
        for (size_t k = 0; k < list->max && list->next(list->arg, &job) == 1; k++) {
                if (place_one(&pm, h, &job, order, &out[placed]))
                        placed++;
                else if (order == SCHED_STRICT_FIFO)
                        break;
                /* no job behind asks less than the floor: none of them could be placed */
                if (heuristics[SCHED_FIRST_FIT].choose_indexed(ix, list->floor) < 0)
                        break;
        }
        end_reservations(&pm);
        return (long)placed;
}

int sched_can_ever_fit(const sched_machine *machines, size_t nmachines, res_t req) {
        for (size_t i = 0; i < nmachines; i++)
                if (machines[i].up > 0 && res_fits(req, machines[i].capacity))
                        return 1;
        return 0;
}
