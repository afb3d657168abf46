/* tetris.c - the Tetris scheduler as the LoTES paper runs it (section 5.1, after Grandl et al.):
 * a job's score on a machine is its packing alignment w = r . C (the job's request dotted with
 * the machine's free resources) minus its work g = p * (r . 1) (processing time times total
 * request), with equal weights. The resources are cores, memory and GPUs (a cluster without
 * GPUs adds 0 to both): a GPU job is drawn to the machine with the most free GPUs; a job
 * without GPUs gets nothing from them, so Tetris, as the paper has it, neither seeks nor avoids
 * a machine whose GPUs idle.
 *
 * Units, which equal weights make matter: resources are fractions of the largest capacity of
 * each resource in the cluster (the paper normalises to its largest machine), and p is in hours
 * (the unit of the paper's tables). p is the job's time on the machine scored: where times
 * depend on the machine (the paper's Omega experiments, section 5.4.3, p_z = w_z / mu_jk), the
 * caller says how (sched_tetris_set_runtime) and Tetris, which the paper gives the processing
 * time, prefers the machines where a job runs fast; else p is the job's runtime everywhere. On an
 * arrival the job goes to the fitting machine with the highest w - g; on an exit the machine
 * takes, again and again, the waiting job with the highest w - g that fits. O(machines) per
 * arrival, O(waiting jobs) per job started on an exit: the waiting jobs it keeps (kept.h), not the
 * core's queue. */
#include "dispatch.h"
#include "kept.h"
#include <errno.h>
#include <stdlib.h>

typedef struct tetris {
        sched_dispatcher base;
        sched_runtime_fn runtime_on; /* NULL: a job's runtime is the same on every machine */
        void *ctx;
        sched_kept waiting; /* the jobs up to the last arrival that wait (kept.h) */
} tetris;

static double share(int64_t x, int64_t largest) { return largest > 0 ? (double)x / (double)largest : 0; }

static double alignment(const sched_pass *p, const sched_job *job, size_t m) {
        res_t r = job->req, c = p->machines[m].free;
        return share(r.mcpu, p->largest.mcpu) * share(c.mcpu, p->largest.mcpu) +
               share(r.mem, p->largest.mem) * share(c.mem, p->largest.mem) +
               share(r.gpus, p->largest.gpus) * share(c.gpus, p->largest.gpus);
}

/* g of job on machine m. */
static double work(const tetris *t, const sched_pass *p, const sched_job *job, size_t m) {
        double runtime =
                t->runtime_on ? t->runtime_on(t->ctx, job->type, job->runtime, p->machines[m].index) : job->runtime;
        return runtime / 3600.0 *
               (share(job->req.mcpu, p->largest.mcpu) + share(job->req.mem, p->largest.mem) +
                share(job->req.gpus, p->largest.gpus));
}

static int tetris_arrival(sched_dispatcher *d, sched_pass *p, size_t j) {
        const tetris *t = (const tetris *)d;
        long best = -1;
        double best_score = 0;
        for (size_t m = 0; m < p->nmachines; m++) {
                if (!sched_pass_fits(p, j, m))
                        continue;
                /* without runtime_on, g is the same on every machine: alignment decides */
                double s = alignment(p, &p->jobs[j], m) - (t->runtime_on ? work(t, p, &p->jobs[j], m) : 0);
                if (best < 0 || s > best_score) {
                        best = (long)m;
                        best_score = s;
                }
        }
        if (best >= 0)
                sched_pass_assign(p, j, (size_t)best);
        return best >= 0 ? 0 : sched_kept_push(&((tetris *)d)->waiting, &p->jobs[j], 0);
}

/* The waiting jobs of a whole pass: those up to the last arrival. */
static int tetris_whole(sched_dispatcher *d, const sched_pass *p) {
        return sched_kept_whole(&((tetris *)d)->waiting, p, d->seen);
}

static int tetris_exit(sched_dispatcher *d, sched_pass *p, size_t m) {
        tetris *t = (tetris *)d;
        sched_kept *w = &t->waiting;
        sched_kept_tidy(w);
        for (;;) {
                long best = -1;
                double best_score = 0;
                for (size_t i = 0; i < w->n; i++) {
                        const sched_job *job = &w->v[i].job;
                        if (!job->id || p->machines[m].up <= 0 || !res_fits(job->req, p->machines[m].free))
                                continue;
                        double s = alignment(p, job, m) - work(t, p, job, m);
                        if (best < 0 || s > best_score) {
                                best = (long)i;
                                best_score = s;
                        }
                }
                if (best < 0)
                        return 0;
                long j = sched_kept_take(w, (size_t)best, p);
                if (j < -1)
                        return (int)j;
                if (j >= 0) /* else it no longer waits: the next best */
                        sched_pass_assign(p, (size_t)j, m);
        }
}

static void tetris_free(sched_dispatcher *d) {
        sched_kept_free(&((tetris *)d)->waiting);
        free(d);
}

static const sched_dispatcher_ops tetris_ops = {
        .name = "tetris",
        .on_exit = tetris_exit,
        .on_arrival = tetris_arrival,
        .free = tetris_free,
        .by_id = true,
        .on_whole = tetris_whole,
};

int sched_tetris_new(uint64_t seed, sched_dispatcher **out) {
        *out = sched_dispatcher_alloc(sizeof(tetris), &tetris_ops, seed);
        return *out ? 0 : -ENOMEM;
}

int sched_tetris_set_runtime(sched_dispatcher *d, sched_runtime_fn runtime_on, void *ctx) {
        if (!d || d->ops != &tetris_ops)
                return -EINVAL;
        ((tetris *)d)->runtime_on = runtime_on;
        ((tetris *)d)->ctx = ctx;
        return 0;
}
