/* dispatch.c - what every event-driven policy shares (see dispatch.h): telling arrivals and
 * exits apart from the core's passes, and recording placements. */
#include "dispatch.h"
#include "coloc_dispatch.h"
#include "idrank.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int sched_tetris_new(uint64_t seed, sched_dispatcher **out);
int sched_greedy_new(uint64_t seed, sched_dispatcher **out);

int sched_dispatcher_new(const char *name, uint64_t seed, sched_dispatcher **out) {
        if (strcmp(name, "tetris") == 0)
                return sched_tetris_new(seed, out);
        if (strcmp(name, "greedy") == 0)
                return sched_greedy_new(seed, out);
        if (strcmp(name, "coloc") == 0)
                return coloc_dispatcher_new(out);
        return -EINVAL;
}

int sched_policy_new(const char *name, uint64_t seed, sched_heuristic *h, sched_dispatcher **d) {
        *d = NULL;
        return sched_heuristic_from_name(name, h) == 0 ? 0 : sched_dispatcher_new(name, seed, d);
}

void *sched_dispatcher_alloc(size_t size, const sched_dispatcher_ops *ops, uint64_t seed) {
        sched_dispatcher *d = calloc(1, size);
        if (d)
                *d = (sched_dispatcher){ .ops = ops, .rng = seed };
        return d;
}

const char *sched_dispatcher_name(const sched_dispatcher *d) { return d->ops->name; }

void sched_dispatcher_free(sched_dispatcher *d) {
        if (!d)
                return;
        free(d->freed);
        free(d->was_up);
        free(d->own_jobs);
        free(d->own_taken);
        free(d->kept_bits);
        d->ops->free(d);
}

int sched_grow(void *array, size_t *cap, size_t need, size_t elem) {
        if (need <= *cap)
                return 0;
        size_t cap2 = *cap ? *cap * 2 : 16;
        while (cap2 < need)
                cap2 *= 2;
        void *p = realloc(*(void **)array, cap2 * elem);
        if (!p)
                return -ENOMEM;
        *(void **)array = p;
        *cap = cap2;
        return 0;
}

void sched_pass_assign(sched_pass *p, size_t j, size_t m) {
        p->machines[m].free = res_sub(p->machines[m].free, p->jobs[j].req);
        p->taken[j] = true;
        p->out[p->placed++] = (sched_assignment){ .job_id = p->jobs[j].id, .machine = p->machines[m].index };
}

bool sched_pass_fits(const sched_pass *p, size_t j, size_t m) {
        return p->machines[m].up > 0 && res_fits(p->jobs[j].req, p->machines[m].free);
}

/* id_rank's key: the id of the pass's job i. */
static uint64_t pass_job_id(const void *v, size_t i) { return ((const sched_job *)v)[i].id; }

long sched_pass_find(const sched_pass *p, uint64_t id) {
        size_t lo = id_rank(p->jobs, 0, p->nsorted, id, pass_job_id);
        if (lo < p->nsorted && p->jobs[lo].id == id)
                return (long)lo;
        for (size_t j = p->nsorted; j < p->njobs; j++) /* found by id in this pass: few */
                if (p->jobs[j].id == id)
                        return (long)j;
        return -1;
}

void sched_pass_keep(const sched_pass *p, uint64_t id) {
        if (id >= p->kept_from && id <= p->kept_to)
                p->kept[(id - p->kept_from) / 64] |= (uint64_t)1 << ((id - p->kept_from) % 64);
}

bool sched_pass_kept(const sched_pass *p, size_t j) {
        uint64_t id = p->jobs[j].id;
        return id >= p->kept_from && id <= p->kept_to &&
               (p->kept[(id - p->kept_from) / 64] >> ((id - p->kept_from) % 64) & 1);
}

/* Make room for n jobs in d's arrays of a pass of the arrivals. Returns 0 or -ENOMEM. */
static int own_reserve(sched_dispatcher *d, size_t n) {
        size_t cap = d->own_cap;
        if (sched_grow(&d->own_jobs, &cap, n, sizeof(*d->own_jobs)) < 0)
                return -ENOMEM;
        cap = d->own_cap;
        if (sched_grow(&d->own_taken, &cap, n, sizeof(*d->own_taken)) < 0)
                return -ENOMEM;
        d->own_cap = cap;
        return 0;
}

long sched_pass_lookup(sched_pass *p, uint64_t id) {
        long j = sched_pass_find(p, id);
        sched_job found;
        if (j >= 0 || !p->find || !p->find(p->find_ctx, id, &found))
                return j;
        if (own_reserve(p->owner, p->njobs + 1) < 0)
                return -ENOMEM;
        p->jobs = p->owner->own_jobs; /* they may have moved */
        p->taken = p->owner->own_taken;
        p->owner->own_jobs[p->njobs] = found;
        p->taken[p->njobs] = false;
        return (long)p->njobs++;
}

/* Make room for the flags of n machines; machines new since the last pass, or up again, count
 * as freed: what waits may start there. A hidden machine keeps its flags. */
static int note_machines(sched_dispatcher *d, const sched_machine *machines, size_t n) {
        if (n > d->freed_cap) {
                bool *f = realloc(d->freed, n * sizeof(*f));
                if (f)
                        d->freed = f;
                bool *u = realloc(d->was_up, n * sizeof(*u));
                if (u)
                        d->was_up = u;
                if (!f || !u)
                        return -ENOMEM;
                memset(f + d->freed_cap, 0, (n - d->freed_cap) * sizeof(*f));
                memset(u + d->freed_cap, 0, (n - d->freed_cap) * sizeof(*u));
                d->freed_cap = n;
        }
        for (size_t m = 0; m < n; m++) {
                if (machines[m].up == SCHED_HIDDEN && m < d->known)
                        continue;
                if (m >= d->known || (machines[m].up > 0 && !d->was_up[m]))
                        d->freed[m] = true;
                d->was_up[m] = machines[m].up > 0;
        }
        if (n > d->known)
                d->known = n;
        return 0;
}

static res_t largest_capacity(const sched_machine *machines, size_t n) {
        res_t l = { 0 };
        for (size_t m = 0; m < n; m++) {
                if (machines[m].capacity.mcpu > l.mcpu)
                        l.mcpu = machines[m].capacity.mcpu;
                if (machines[m].capacity.mem > l.mem)
                        l.mem = machines[m].capacity.mem;
                if (machines[m].capacity.gpus > l.gpus)
                        l.gpus = machines[m].capacity.gpus;
        }
        return l;
}

/* Exits first (waiting jobs on each freed machine), then the arrivals among p's first nsorted
 * jobs, the fresh ones with them. Returns 0 or -ENOMEM. */
static int run_pass(sched_dispatcher *d, sched_pass *p) {
        int r = 0;
        for (size_t m = 0; m < p->nmachines && r == 0; m++)
                if (d->freed[m] && p->machines[m].up != SCHED_HIDDEN) {
                        d->freed[m] = false;
                        if (p->machines[m].up > 0)
                                r = d->ops->on_exit(d, p, m);
                }
        for (size_t j = 0; j < p->nsorted && r == 0; j++)
                if (p->jobs[j].id > d->seen) {
                        d->seen = p->jobs[j].id;
                        r = d->ops->on_arrival(d, p, j);
                } else if (p->kept && !sched_pass_kept(p, j)) {
                        r = d->ops->on_arrival(d, p, j);
                }
        return r;
}

/* Clear p's bits of the jobs the policy kept, over the ids of p's jobs up to the last arrival:
 * a bit each, as the pending jobs' ids run, whatever their order. Returns 0 or -ENOMEM. */
static int kept_range(sched_dispatcher *d, sched_pass *p) {
        p->kept_from = d->seen + 1;
        for (size_t j = 0; j < p->njobs; j++)
                if (p->jobs[j].id < p->kept_from)
                        p->kept_from = p->jobs[j].id;
        p->kept_to = d->seen;
        size_t words = p->kept_from <= d->seen ? (size_t)((d->seen - p->kept_from) / 64 + 1) : 1;
        if (sched_grow(&d->kept_bits, &d->kept_cap, words, sizeof(*d->kept_bits)) < 0)
                return -ENOMEM;
        memset(d->kept_bits, 0, words * sizeof(*d->kept_bits));
        p->kept = d->kept_bits;
        return 0;
}

/* sched_dispatch, or sched_dispatch_run when run. */
static long dispatch_whole(sched_dispatcher *d, sched_machine *machines, size_t nmachines, const sched_job *jobs,
                           size_t njobs, sched_assignment *out, bool run) {
        if (note_machines(d, machines, nmachines) < 0)
                return -ENOMEM;
        sched_pass p = { .machines = machines,
                         .nmachines = nmachines,
                         .jobs = jobs,
                         .njobs = njobs,
                         .out = out,
                         .taken = calloc(njobs + 1, sizeof(bool)),
                         .largest = largest_capacity(machines, nmachines),
                         .nsorted = njobs,
                         .run = run };
        if (!p.taken || (d->ops->on_whole && kept_range(d, &p) < 0)) {
                free(p.taken);
                return -ENOMEM;
        }
        int r = d->ops->on_whole ? d->ops->on_whole(d, &p) : 0;
        d->want_whole = r < 0;
        if (r == 0)
                r = run_pass(d, &p);
        free(p.taken);
        return r < 0 ? r : (long)p.placed;
}

long sched_dispatch(sched_dispatcher *d, sched_machine *machines, size_t nmachines, const sched_job *jobs, size_t njobs,
                    sched_assignment *out) {
        return dispatch_whole(d, machines, nmachines, jobs, njobs, out, false);
}

long sched_dispatch_run(sched_dispatcher *d, sched_machine *machines, size_t nmachines, const sched_job *jobs,
                        size_t njobs, sched_assignment *out) {
        return dispatch_whole(d, machines, nmachines, jobs, njobs, out, true);
}

long sched_dispatch_arrivals(sched_dispatcher *d, sched_machine *machines, size_t nmachines, const sched_job *arrivals,
                             size_t narrivals, sched_find_fn find, void *ctx, sched_assignment *out) {
        if (note_machines(d, machines, nmachines) < 0 || own_reserve(d, narrivals + 1) < 0)
                return -ENOMEM;
        if (narrivals)
                memcpy(d->own_jobs, arrivals, narrivals * sizeof(*arrivals));
        memset(d->own_taken, 0, narrivals * sizeof(*d->own_taken));
        sched_pass p = { .machines = machines,
                         .nmachines = nmachines,
                         .jobs = d->own_jobs,
                         .njobs = narrivals,
                         .out = out,
                         .taken = d->own_taken,
                         .largest = largest_capacity(machines, nmachines),
                         .nsorted = narrivals,
                         .find = find,
                         .find_ctx = ctx,
                         .owner = d };
        int r = run_pass(d, &p);
        return r < 0 ? r : (long)p.placed;
}

void sched_dispatch_exit(sched_dispatcher *d, const sched_job *j, size_t m) {
        if (m < d->freed_cap)
                d->freed[m] = true;
        if (d->ops->on_release)
                d->ops->on_release(d, j, m);
}

void sched_dispatch_rescan(sched_dispatcher *d) {
        for (size_t m = 0; m < d->known; m++)
                d->freed[m] = true;
}
