/* lotes_dispatch.c - LoTES stage 3 (section 4.3): the dispatcher that makes each machine emulate
 * the bin the plan gave it. See lotes.h for the rules, dispatch.h for how the core drives it.
 *
 * Cost: an arrival looks at the machines of the configurations it tries (all of them only when
 * every configuration with Delta > 0 is full); an exit scans the queues of the classes that
 * configuration serves, kept between passes (kept.h), not rebuilt from the core's queue. */
#include "lotes.h"
#include "kept.h"
#include "rng.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct members {
        size_t *m;
        size_t n, cap;
} members;

typedef struct lotes_dispatcher {
        sched_dispatcher base;
        const lotes_problem *p;
        const lotes_plan *plan;
        size_t mapped;          /* machines given a configuration and a bin so far */
        long *config;           /* by machine: its configuration, -1 for a capacity the plan lacks */
        size_t *bin;            /* by machine: the bin it emulates, in its configuration's bins */
        uint32_t *kappa;        /* [m * nclasses + k]: jobs of class k it runs */
        members *machines;      /* by configuration */
        size_t *cursor, *given; /* by configuration: the bin the next machine gets, and how many have it */
        bool *tried;            /* by configuration: scratch for an arrival's roulette */
        /* The class queues, kept between passes (kept.h, each entry's tag its class): queue k
         * holds the waiting jobs of class k, queue nclasses those no class serves (class_queue). */
        sched_kept *queues;
} lotes_dispatcher;

long lotes_roulette(const lotes_plan *plan, size_t k, const bool *tried, uint64_t *rng) {
        double total = 0;
        for (size_t j = 0; j < plan->nconfigs; j++)
                if (!tried[j])
                        total += plan->slots[j * plan->nclasses + k];
        if (!(total > 0))
                return -1;
        double u = sched_rng_uniform(rng) * total, acc = 0;
        long last = -1;
        for (size_t j = 0; j < plan->nconfigs; j++) {
                double w = tried[j] ? 0 : plan->slots[j * plan->nclasses + k];
                if (w <= 0)
                        continue;
                last = (long)j;
                if (u <= (acc += w))
                        return last;
        }
        return last; /* u rounded past the total */
}

static double fraction_of_largest(const lotes_problem *p, res_t v, int cores) {
        double largest = 0;
        for (size_t j = 0; j < p->nconfigs; j++)
                largest = fmax(largest, (double)(cores ? p->configs[j].capacity.mcpu : p->configs[j].capacity.mem));
        return (double)(cores ? v.mcpu : v.mem) / largest;
}

size_t lotes_classify(const lotes_problem *p, const sched_job *j) {
        for (size_t k = 0; j->type && k < p->nclasses; k++)
                if (p->classes[k].name && strcmp(j->type, p->classes[k].name) == 0)
                        return k;
        size_t best = 0;
        double best_d = INFINITY;
        for (size_t k = 0; k < p->nclasses; k++) {
                double dc = fraction_of_largest(p, j->req, 1) - fraction_of_largest(p, p->classes[k].req, 1);
                double dm = fraction_of_largest(p, j->req, 0) - fraction_of_largest(p, p->classes[k].req, 0);
                /* a GPU job joins a class asking GPUs (and a CPU job one asking none) where there is one */
                double d = dc * dc + dm * dm + ((j->req.gpus > 0) != (p->classes[k].req.gpus > 0) ? 4 : 0);
                if (d < best_d) {
                        best = k;
                        best_d = d;
                }
        }
        return best;
}

static long config_of(const lotes_problem *p, res_t capacity) {
        for (size_t j = 0; j < p->nconfigs; j++)
                if (p->configs[j].capacity.mcpu == capacity.mcpu && p->configs[j].capacity.mem == capacity.mem &&
                    p->configs[j].capacity.gpus == capacity.gpus)
                        return (long)j;
        return -1;
}

/* The bin the next machine of configuration j emulates: each bin i for machines[i] machines,
 * in plan order, then around again. */
static size_t next_bin(lotes_dispatcher *d, size_t j) {
        const lotes_plan *plan = d->plan;
        const uint32_t *count = plan->machines + plan->first[j];
        size_t n = plan->bins[j].n;
        for (size_t tries = 0; tries <= n && d->given[j] >= count[d->cursor[j]]; tries++) {
                d->cursor[j] = (d->cursor[j] + 1) % n;
                d->given[j] = 0;
        }
        d->given[j]++;
        return d->cursor[j];
}

static int push_member(members *s, size_t m) {
        if (sched_grow(&s->m, &s->cap, s->n + 1, sizeof(*s->m)) < 0)
                return -ENOMEM;
        s->m[s->n++] = m;
        return 0;
}

static void *grow(void *v, size_t n, size_t elem) { return realloc(v, (n ? n : 1) * elem); }

/* Give the machines new since the last call their configuration and bin. */
static int map_machines(lotes_dispatcher *d, const sched_pass *pass) {
        size_t n = pass->nmachines, K = d->p->nclasses;
        if (n <= d->mapped)
                return 0;
        long *config = grow(d->config, n, sizeof(*config));
        if (config)
                d->config = config;
        size_t *bin = grow(d->bin, n, sizeof(*bin));
        if (bin)
                d->bin = bin;
        uint32_t *kappa = grow(d->kappa, n * K, sizeof(*kappa));
        if (kappa)
                d->kappa = kappa;
        if (!config || !bin || !kappa)
                return -ENOMEM;
        memset(d->kappa + d->mapped * K, 0, (n - d->mapped) * K * sizeof(*kappa));
        for (; d->mapped < n; d->mapped++) {
                long j = config_of(d->p, pass->machines[d->mapped].capacity);
                d->config[d->mapped] = j;
                if (j >= 0 && push_member(&d->machines[j], d->mapped) < 0)
                        return -ENOMEM;
                d->bin[d->mapped] = j >= 0 ? next_bin(d, (size_t)j) : 0;
        }
        return 0;
}

/* upsilon = N_ijk - kappa_jk on machine m: how many more jobs of class k its bin wants. */
static int64_t upsilon(const lotes_dispatcher *d, size_t m, size_t k) {
        size_t K = d->p->nclasses;
        if (d->config[m] < 0)
                return 0;
        const lotes_bins *b = &d->plan->bins[d->config[m]];
        return (int64_t)b->count[d->bin[m] * K + k] - (int64_t)d->kappa[m * K + k];
}

static void start(lotes_dispatcher *d, sched_pass *p, size_t j, size_t m, size_t k) {
        sched_pass_assign(p, j, m);
        d->kappa[m * d->p->nclasses + k]++;
}

/* The machine of configuration c with the largest upsilon for class k that jobs[j] fits, or -1. */
static long best_upsilon(const lotes_dispatcher *d, const sched_pass *p, size_t c, size_t k, size_t j) {
        long best = -1;
        int64_t best_u = 0;
        for (size_t i = 0; i < d->machines[c].n; i++) {
                size_t m = d->machines[c].m[i];
                if (!sched_pass_fits(p, j, m))
                        continue;
                int64_t u = upsilon(d, m, k);
                if (best < 0 || u > best_u) {
                        best = (long)m;
                        best_u = u;
                }
        }
        return best;
}

/* The queue a waiting job of class k joins: k, or, when the job fits no machine of the
 * configurations serving its class (Delta_jk > 0) even empty, queue nclasses: the paper's rule
 * would leave it waiting forever (a large job of a class planned on small machines), so any
 * machine may start it, after every class queue. */
static size_t class_queue(const lotes_dispatcher *d, const sched_job *j, size_t k) {
        for (size_t c = 0; c < d->p->nconfigs; c++)
                if (d->plan->slots[c * d->p->nclasses + k] > 0 && res_fits(j->req, d->p->configs[c].capacity))
                        return k;
        return d->p->nclasses;
}

static int lotes_arrival(sched_dispatcher *base, sched_pass *p, size_t j) {
        lotes_dispatcher *d = (lotes_dispatcher *)base;
        if (map_machines(d, p) < 0)
                return -ENOMEM;
        size_t k = lotes_classify(d->p, &p->jobs[j]);
        long c, m;
        memset(d->tried, 0, d->p->nconfigs * sizeof(*d->tried));
        while ((c = lotes_roulette(d->plan, k, d->tried, &base->rng)) >= 0) {
                d->tried[c] = true;
                if ((m = best_upsilon(d, p, (size_t)c, k, j)) >= 0) {
                        start(d, p, j, (size_t)m, k);
                        return 0;
                }
        }
        for (size_t any = 0; any < p->nmachines; any++) /* idle resources anywhere: take them */
                if (sched_pass_fits(p, j, any)) {
                        start(d, p, j, any, k);
                        return 0;
                }
        return sched_kept_push(&d->queues[class_queue(d, &p->jobs[j], k)], &p->jobs[j], k); /* it waits */
}

/* The class to serve first on machine m: the largest upsilon among those not done, the lowest
 * class on a tie; -1 when all are done. */
static long top_class(const lotes_dispatcher *d, size_t m, const bool *done) {
        long best = -1;
        int64_t best_u = 0;
        for (size_t k = 0; k < d->p->nclasses; k++)
                if (!done[k] && (best < 0 || upsilon(d, m, k) > best_u)) {
                        best = (long)k;
                        best_u = upsilon(d, m, k);
                }
        return best;
}

/* The class queues of a whole pass: its jobs up to the last arrival that they held (or that
 * lotes_live says were kept before a swap), in id order; a run changes none. */
static int lotes_whole(sched_dispatcher *base, const sched_pass *p) {
        lotes_dispatcher *d = (lotes_dispatcher *)base;
        for (size_t k = 0; k <= d->p->nclasses; k++)
                sched_kept_mark(&d->queues[k], p);
        if (p->run)
                return 0;
        for (size_t k = 0; k <= d->p->nclasses; k++)
                sched_kept_clear(&d->queues[k]);
        for (size_t j = 0; j < p->njobs; j++) {
                if (p->jobs[j].id > base->seen || !sched_pass_kept(p, j))
                        continue;
                size_t k = lotes_classify(d->p, &p->jobs[j]);
                if (sched_kept_push(&d->queues[class_queue(d, &p->jobs[j], k)], &p->jobs[j], k) < 0)
                        return -ENOMEM;
        }
        return 0;
}

/* Scan queue k on machine m: 1 when a start demoted class k below another (done: NULL for the
 * queue of jobs no class serves, which has no rank), else 0, or -ENOMEM. */
static int serve_queue(lotes_dispatcher *d, sched_pass *p, size_t m, size_t k, const bool *done) {
        sched_kept *q = &d->queues[k];
        sched_kept_tidy(q);
        for (size_t i = 0; i < q->n; i++) {
                const sched_kept_job *e = &q->v[i];
                if (!e->job.id || p->machines[m].up <= 0 || !res_fits(e->job.req, p->machines[m].free))
                        continue;
                size_t cls = e->tag;
                long j = sched_kept_take(q, i, p);
                if (j < -1)
                        return (int)j;
                if (j < 0)
                        continue; /* no longer waiting */
                start(d, p, (size_t)j, m, cls);
                if (done && top_class(d, m, done) != (long)k)
                        return 1;
        }
        return 0;
}

static int lotes_exit(sched_dispatcher *base, sched_pass *p, size_t m) {
        lotes_dispatcher *d = (lotes_dispatcher *)base;
        if (map_machines(d, p) < 0)
                return -ENOMEM;
        if (d->config[m] < 0)
                return 0;
        size_t K = d->p->nclasses, c = (size_t)d->config[m];
        bool *done = calloc(K, sizeof(*done));
        int r = done ? 0 : -ENOMEM;
        for (size_t k = 0; k < K && r == 0; k++) /* a class with Delta_jk = 0 never starts from a queue */
                done[k] = !(d->plan->slots[c * K + k] > 0);
        long k;
        while (r == 0 && (k = top_class(d, m, done)) >= 0)
                if ((r = serve_queue(d, p, m, (size_t)k, done)) == 0)
                        done[k] = true; /* nothing more of it fits: what frees up here only shrinks */
                else if (r > 0)
                        r = 0;
        if (r == 0)
                r = serve_queue(d, p, m, K, NULL);
        free(done);
        return r;
}

int lotes_dispatcher_adopt(sched_dispatcher *base, const sched_pass *p, const sched_job *job, size_t m) {
        lotes_dispatcher *d = (lotes_dispatcher *)base;
        if (map_machines(d, p) < 0)
                return -ENOMEM;
        if (m < d->mapped)
                d->kappa[m * d->p->nclasses + lotes_classify(d->p, job)]++;
        return 0;
}

uint32_t lotes_dispatcher_kappa(const sched_dispatcher *base, size_t m, size_t k) {
        const lotes_dispatcher *d = (const lotes_dispatcher *)base;
        return m < d->mapped && k < d->p->nclasses ? d->kappa[m * d->p->nclasses + k] : 0;
}

static void lotes_release(sched_dispatcher *base, const sched_job *job, size_t m) {
        lotes_dispatcher *d = (lotes_dispatcher *)base;
        size_t k = lotes_classify(d->p, job);
        if (m < d->mapped && d->kappa[m * d->p->nclasses + k] > 0) /* 0: it ran before this dispatcher */
                d->kappa[m * d->p->nclasses + k]--;
}

static void lotes_free(sched_dispatcher *base) {
        lotes_dispatcher *d = (lotes_dispatcher *)base;
        for (size_t j = 0; d->machines && j < d->p->nconfigs; j++)
                free(d->machines[j].m);
        free(d->machines);
        free(d->config);
        free(d->bin);
        free(d->kappa);
        free(d->cursor);
        free(d->given);
        free(d->tried);
        for (size_t k = 0; d->queues && k <= d->p->nclasses; k++)
                sched_kept_free(&d->queues[k]);
        free(d->queues);
        free(d);
}

static const sched_dispatcher_ops lotes_ops = {
        .name = "lotes",
        .on_exit = lotes_exit,
        .on_arrival = lotes_arrival,
        .on_release = lotes_release,
        .free = lotes_free,
        .by_id = true,
        .on_whole = lotes_whole,
};

int lotes_dispatcher_new(const lotes_problem *p, const lotes_plan *plan, uint64_t seed, sched_dispatcher **out) {
        lotes_dispatcher *d = sched_dispatcher_alloc(sizeof(*d), &lotes_ops, seed);
        if (!d)
                return -ENOMEM;
        d->p = p;
        d->plan = plan;
        d->machines = calloc(p->nconfigs, sizeof(*d->machines));
        d->cursor = calloc(p->nconfigs, sizeof(*d->cursor));
        d->given = calloc(p->nconfigs, sizeof(*d->given));
        d->tried = calloc(p->nconfigs, sizeof(*d->tried));
        d->queues = calloc(p->nclasses + 1, sizeof(*d->queues));
        if (!d->machines || !d->cursor || !d->given || !d->tried || !d->queues) {
                lotes_free(&d->base);
                return -ENOMEM;
        }
        *out = &d->base;
        return 0;
}
