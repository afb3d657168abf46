/* family.c - MapReduce families in the simulator (family.h). */
#include "family.h"
#include "dispatch.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct sim_family {
        double arrival, end;
        double longest_map, longest_reduce; /* seconds, as run */
        uint32_t maps_left;                 /* maps not yet ended; the reduces wait for 0 */
        uint32_t tasks_left;                /* tasks not yet ended */
        bool refused;                       /* a task fits no machine: the family never ends whole */
        sim_job *held;                      /* reduces waiting for the barrier */
        size_t nheld, heldcap;
};

static sim_family *family(const sim_families *f, uint64_t n) { return n >= 1 && n <= f->n ? &f->v[n - 1] : NULL; }

int fam_task_arrives(sim_families *f, const sim_job *j, double now, bool *held) {
        *held = false;
        if (j->family == f->n + 1) { /* a new family: its tasks come together, maps first */
                int r = sched_grow(&f->v, &f->cap, f->n + 1, sizeof(*f->v));
                if (r < 0)
                        return r;
                f->v[f->n++] =
                        (sim_family){ .arrival = now, .maps_left = j->family_maps, .tasks_left = j->family_tasks };
        }
        sim_family *fam = family(f, j->family);
        if (!fam || j->family != f->n)
                return -EINVAL;
        if (!j->reduce || fam->maps_left == 0)
                return 0;
        int r = sched_grow(&fam->held, &fam->heldcap, fam->nheld + 1, sizeof(*fam->held));
        if (r == 0) {
                fam->held[fam->nheld++] = *j;
                *held = true;
        }
        return r;
}

int fam_task_accepted(sim_families *f, uint64_t id, const sim_job *t) {
        size_t had = f->of_job_cap;
        int r = sched_grow(&f->of_job, &f->of_job_cap, id, sizeof(*f->of_job));
        if (r < 0)
                return r;
        /* the ids between are lone jobs, or refused: no family */
        memset(f->of_job + had, 0, (f->of_job_cap - had) * sizeof(*f->of_job));
        f->of_job[id - 1] = t->family << 1 | (t->reduce ? 1 : 0);
        return 0;
}

uint64_t fam_of_job(const sim_families *f, uint64_t id) {
        return id >= 1 && id <= f->of_job_cap ? f->of_job[id - 1] >> 1 : 0;
}

bool fam_is_reduce(const sim_families *f, uint64_t id) {
        return id >= 1 && id <= f->of_job_cap && (f->of_job[id - 1] & 1);
}

/* One more task of fam is over (ended, or refused); a map may release the held reduces. */
static void task_over(sim_family *fam, bool reduce, double now, double ran, sim_job **release, size_t *nrelease) {
        *nrelease = 0;
        if (--fam->tasks_left == 0)
                fam->end = now;
        if (reduce) {
                fam->longest_reduce = fmax(fam->longest_reduce, ran);
                return;
        }
        fam->longest_map = fmax(fam->longest_map, ran);
        if (--fam->maps_left == 0) {
                *release = fam->held;
                *nrelease = fam->nheld;
                fam->nheld = 0;
        }
}

void fam_task_ended(sim_families *f, uint64_t id, double now, double ran, sim_job **release, size_t *nrelease) {
        sim_family *fam = family(f, fam_of_job(f, id));
        *nrelease = 0;
        if (fam)
                task_over(fam, fam_is_reduce(f, id), now, ran, release, nrelease);
}

void fam_task_refused(sim_families *f, const sim_job *t, double now, sim_job **release, size_t *nrelease) {
        sim_family *fam = family(f, t->family);
        *nrelease = 0;
        if (!fam)
                return;
        fam->refused = true;
        task_over(fam, t->reduce, now, 0, release, nrelease);
}

int fam_figures(const sim_families *f, sim_result *out) {
        double *flow = malloc((f->n + 1) * sizeof(*flow)), *ideal = malloc((f->n + 1) * sizeof(*ideal));
        size_t n = 0;
        if (!flow || !ideal) {
                free(flow);
                free(ideal);
                return -ENOMEM;
        }
        for (size_t i = 0; i < f->n; i++) {
                const sim_family *fam = &f->v[i];
                if (fam->refused || fam->tasks_left > 0)
                        continue;
                flow[n] = fam->end - fam->arrival;
                ideal[n++] = fam->longest_map + fam->longest_reduce;
        }
        out->families = f->n;
        out->families_whole = n;
        out->flow = sim_summarize(flow, n);
        out->ideal_flow = sim_summarize(ideal, n);
        free(flow);
        free(ideal);
        return 0;
}

void fam_free(sim_families *f) {
        for (size_t i = 0; i < f->n; i++)
                free(f->v[i].held);
        free(f->v);
        free(f->of_job);
        *f = (sim_families){ 0 };
}
