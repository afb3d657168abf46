/* lotes_live.c - LoTES with a plan that changes while jobs run (see lotes_live.h): the model a
 * plan is solved on, and the dispatcher that swaps plans.
 *
 * The dispatcher keeps a record of every job it placed that is still running (id, request,
 * type, machine), so that a new plan's kappa can count them: kappa is what makes a machine
 * follow its bin, and a plan that started from zero would overfill every bin with what already
 * runs. The record is a plain array: O(running jobs) per exit, fine for a lab's cluster. */
#include "lotes_live.h"
#include "kept.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the model ---- */

void lotes_model_free(lotes_model *m) {
        if (!m)
                return;
        for (size_t k = 0; m->classes && k < m->mix.n; k++)
                free((char *)m->classes[k].name);
        lotes_plan_free(&m->plan);
        lotes_alloc_free(&m->alloc);
        lotes_mix_free(&m->mix);
        free(m->configs);
        free(m->classes);
        free(m->mu);
        free(m->machines);
        free(m);
}

/* Group the up machines by capacity into m's configurations, and keep their capacities. */
static int add_configs(lotes_model *m, const sched_machine *machines, size_t n) {
        if (!(m->configs = calloc(n ? n : 1, sizeof(*m->configs))) || !(m->machines = calloc(n ? n : 1, sizeof(res_t))))
                return -ENOMEM;
        for (size_t i = 0; i < n; i++) {
                if (machines[i].up <= 0)
                        continue;
                res_t cap = { .mcpu = machines[i].capacity.mcpu,
                              .mem = machines[i].capacity.mem,
                              .gpus = machines[i].capacity.gpus };
                m->machines[m->nmachines++] = cap;
                size_t j = 0;
                while (j < m->problem.nconfigs && !res_equal(m->configs[j].capacity, cap))
                        j++;
                if (j == m->problem.nconfigs)
                        m->configs[m->problem.nconfigs++].capacity = cap;
                m->configs[j].count++;
        }
        return 0;
}

/* The classes: alpha_k the share of arrivals, a name for every class (learned ones "~CPUc/MEMM",
 * which no job's type is likely to be), and mu where the class fits. */
static int add_classes(lotes_model *m) {
        size_t K = m->mix.n, J = m->problem.nconfigs;
        double total = 0;
        if (!(m->classes = calloc(K, sizeof(*m->classes))) || !(m->mu = calloc(J * K, sizeof(*m->mu))))
                return -ENOMEM;
        for (size_t k = 0; k < K; k++)
                total += m->mix.rate[k];
        for (size_t k = 0; k < K; k++) {
                lotes_class *c = &m->classes[k];
                char *name = NULL;
                if (m->mix.name[k] ? !(name = strdup(m->mix.name[k]))
                                   : asprintf(&name, "~%.1fc/%lldM", (double)m->mix.req[k].mcpu / 1000,
                                              (long long)(m->mix.req[k].mem >> 20)) < 0)
                        return -ENOMEM;
                c->name = name;
                c->req = m->mix.req[k];
                bool fits = false;
                for (size_t j = 0; j < J; j++)
                        if (res_fits(c->req, m->configs[j].capacity)) {
                                m->mu[j * K + k] = 1 / m->mix.runtime[k];
                                fits = true;
                        }
                c->alpha = fits && total > 0 ? m->mix.rate[k] / total : 0;
        }
        return 0;
}

int lotes_model_new(const sched_machine *machines, size_t nmachines, const lotes_mix *mix, lotes_model **out, char *err,
                    size_t errlen) {
        lotes_model *m = calloc(1, sizeof(*m));
        int r = m ? 0 : -ENOMEM;
        if (r == 0 && (r = lotes_mix_copy(&m->mix, mix)) == 0 && (r = add_configs(m, machines, nmachines)) == 0)
                r = add_classes(m);
        if (r == 0 && (m->problem.nconfigs == 0 || mix->n == 0)) {
                snprintf(err, errlen, "%s", mix->n ? "no machine is up" : "no job class yet");
                r = -EINVAL;
        }
        if (r < 0) {
                if (r == -ENOMEM)
                        snprintf(err, errlen, "out of memory");
                lotes_model_free(m);
                return r;
        }
        m->problem.configs = m->configs;
        m->problem.classes = m->classes;
        m->problem.nclasses = mix->n;
        m->problem.mu = m->mu;
        *out = m;
        return 0;
}

int lotes_model_solve(lotes_model *m, char *err, size_t errlen) {
        int r = lotes_allocate(&m->problem, &m->alloc, err, errlen);
        return r < 0 ? r : lotes_assign(&m->problem, &m->alloc, &m->plan, err, errlen);
}

static int cmp_res(const void *a, const void *b) {
        const res_t *x = a, *y = b;
        if (x->mcpu != y->mcpu)
                return x->mcpu < y->mcpu ? -1 : 1;
        if (x->mem != y->mem)
                return x->mem < y->mem ? -1 : 1;
        return x->gpus < y->gpus ? -1 : x->gpus > y->gpus;
}

bool lotes_model_same_machines(const lotes_model *m, const sched_machine *machines, size_t nmachines) {
        size_t up = 0;
        for (size_t i = 0; i < nmachines; i++)
                up += machines[i].up > 0;
        if (up != m->nmachines)
                return false;
        res_t *a = malloc((up ? up : 1) * sizeof(*a)), *b = malloc((up ? up : 1) * sizeof(*b));
        bool same = a && b;
        for (size_t i = 0, n = 0; same && i < nmachines; i++)
                if (machines[i].up > 0)
                        a[n++] = (res_t){ .mcpu = machines[i].capacity.mcpu,
                                          .mem = machines[i].capacity.mem,
                                          .gpus = machines[i].capacity.gpus };
        if (same) {
                memcpy(b, m->machines, up * sizeof(*b));
                qsort(a, up, sizeof(*a), cmp_res);
                qsort(b, up, sizeof(*b), cmp_res);
                same = memcmp(a, b, up * sizeof(*a)) == 0;
        }
        free(a);
        free(b);
        return same;
}

/* ---- the dispatcher ---- */

typedef struct placed {
        sched_job job; /* type owned */
        size_t machine;
} placed;

typedef struct live {
        sched_dispatcher base;
        lotes_model *model;
        sched_dispatcher *inner; /* LoTES on model's plan, or NULL: first-fit */
        bool adopt;              /* inner has not counted the running jobs yet */
        placed *running;
        size_t nrunning, cap;
        sched_kept waiting; /* first-fit's waiting jobs, up to the last arrival (kept.h) */
} live;

/* Record the jobs placed since out[from]: each was taken from p->jobs for p->machines. */
static int remember(live *d, const sched_pass *p, size_t from) {
        for (size_t a = from; a < p->placed; a++) {
                long j = sched_pass_find(p, p->out[a].job_id);
                size_t m = 0;
                while (m < p->nmachines && p->machines[m].index != p->out[a].machine)
                        m++;
                if (j < 0 || m == p->nmachines)
                        continue; /* only if the core broke dispatch.h and offered jobs out of id order */
                if (sched_grow(&d->running, &d->cap, d->nrunning + 1, sizeof(*d->running)) < 0)
                        return -ENOMEM;
                placed *r = &d->running[d->nrunning];
                r->job = p->jobs[j];
                r->machine = m;
                if (r->job.type && !(r->job.type = strdup(r->job.type)))
                        return -ENOMEM;
                d->nrunning++;
        }
        return 0;
}

/* Count the running jobs in a new plan's kappa, before its first decision. */
static int adopt_running(live *d, const sched_pass *p) {
        if (!d->adopt)
                return 0;
        for (size_t i = 0; i < d->nrunning; i++)
                if (lotes_dispatcher_adopt(d->inner, p, &d->running[i].job, d->running[i].machine) < 0)
                        return -ENOMEM;
        d->adopt = false;
        return 0;
}

static int first_fit_arrival(live *d, sched_pass *p, size_t j) {
        for (size_t m = 0; m < p->nmachines; m++)
                if (sched_pass_fits(p, j, m)) {
                        sched_pass_assign(p, j, m);
                        return 0;
                }
        return sched_kept_push(&d->waiting, &p->jobs[j], 0);
}

static int first_fit_exit(live *d, sched_pass *p, size_t m) {
        sched_kept_tidy(&d->waiting);
        for (size_t i = 0; i < d->waiting.n; i++) {
                const sched_job *job = &d->waiting.v[i].job;
                if (!job->id || p->machines[m].up <= 0 || !res_fits(job->req, p->machines[m].free))
                        continue;
                long j = sched_kept_take(&d->waiting, i, p);
                if (j < -1)
                        return (int)j;
                if (j >= 0) /* else it no longer waits */
                        sched_pass_assign(p, (size_t)j, m);
        }
        return 0;
}

/* Run one event through the plan (or first-fit) and remember what it placed. */
static int event(live *d, sched_pass *p, size_t what, bool arrival) {
        size_t from = p->placed;
        int r = 0;
        if (d->inner) {
                d->inner->seen = d->base.seen; /* LoTES's queues hold the jobs up to the last arrival */
                if ((r = adopt_running(d, p)) == 0)
                        r = arrival ? d->inner->ops->on_arrival(d->inner, p, what)
                                    : d->inner->ops->on_exit(d->inner, p, what);
        } else
                r = arrival ? first_fit_arrival(d, p, what) : first_fit_exit(d, p, what);
        return r < 0 ? r : remember(d, p, from);
}

/* A whole pass: first-fit's waiting jobs, or the plan's dispatcher's class queues, from it. A
 * plan just swapped in keeps every job up to the last arrival: they waited before it (a run
 * would leave them in no queue: they arrive to it instead). */
static int live_whole(sched_dispatcher *base, const sched_pass *p) {
        live *d = (live *)base;
        if (!d->inner)
                return sched_kept_whole(&d->waiting, p, base->seen);
        for (size_t j = 0; d->adopt && !p->run && j < p->njobs; j++)
                sched_pass_keep(p, p->jobs[j].id);
        d->inner->seen = d->base.seen;
        return d->inner->ops->on_whole(d->inner, p);
}

static int live_arrival(sched_dispatcher *base, sched_pass *p, size_t j) { return event((live *)base, p, j, true); }

static int live_exit(sched_dispatcher *base, sched_pass *p, size_t m) { return event((live *)base, p, m, false); }

static void live_release(sched_dispatcher *base, const sched_job *job, size_t m) {
        live *d = (live *)base;
        for (size_t i = 0; i < d->nrunning; i++)
                if (d->running[i].job.id == job->id) {
                        free((char *)d->running[i].job.type);
                        d->running[i] = d->running[--d->nrunning];
                        /* adopt pending: the new plan never counted it, so there is nothing to undo */
                        if (d->inner && !d->adopt)
                                d->inner->ops->on_release(d->inner, job, m);
                        return;
                }
}

static void live_free(sched_dispatcher *base) {
        live *d = (live *)base;
        for (size_t i = 0; i < d->nrunning; i++)
                free((char *)d->running[i].job.type);
        free(d->running);
        sched_kept_free(&d->waiting);
        sched_dispatcher_free(d->inner);
        lotes_model_free(d->model);
        free(d);
}

static const sched_dispatcher_ops live_ops = {
        .name = "lotes",
        .on_exit = live_exit,
        .on_arrival = live_arrival,
        .on_release = live_release,
        .free = live_free,
        .by_id = true,
        .on_whole = live_whole,
};

int lotes_live_new(uint64_t seed, sched_dispatcher **out) {
        *out = sched_dispatcher_alloc(sizeof(live), &live_ops, seed);
        return *out ? 0 : -ENOMEM;
}

int lotes_live_swap(sched_dispatcher *base, lotes_model *m) {
        live *d = (live *)base;
        sched_dispatcher *inner;
        if (lotes_dispatcher_new(&m->problem, &m->plan, base->rng, &inner) < 0) {
                lotes_model_free(m);
                return -ENOMEM;
        }
        sched_dispatcher_free(d->inner);
        lotes_model_free(d->model);
        d->inner = inner;
        d->model = m;
        d->adopt = true;
        sched_dispatch_rescan(base);
        base->want_whole = true; /* the new plan's class queues come from a whole pass */
        return 0;
}

const lotes_model *lotes_live_model(const sched_dispatcher *base) { return ((const live *)base)->model; }

uint32_t lotes_live_kappa(const sched_dispatcher *base, size_t m, size_t k) {
        const live *d = (const live *)base;
        return d->inner && !d->adopt ? lotes_dispatcher_kappa(d->inner, m, k) : 0;
}
