/* coloc_dispatch.c - the "coloc" dispatcher (see coloc_dispatch.h): each job where the largest
 * colocation cost among machines stays smallest. */
#include "coloc_dispatch.h"
#include "kept.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

typedef struct run {
        uint64_t id;
        char *type; /* owned; NULL for none */
        size_t t;   /* its index in the matrix, T when unknown */
        double p;
        size_t m;
} run;

typedef struct means {
        char *type; /* owned; NULL for jobs without a type */
        double sum;
        uint32_t n;
} means;

typedef struct coloc_d {
        sched_dispatcher base;
        size_t T; /* the matrix's types; index T is "unknown" */
        char **names;
        double *A;       /* (T + 1) x (T + 1): row and column T are 1 */
        size_t nm;       /* machines with per-type loads */
        double *load;    /* [m * (T + 1) + t]: the summed p of type t on m */
        uint32_t *count; /* [m * (T + 1) + t]: jobs of type t on m */
        run *runs;
        size_t nruns, cap;
        means *means; /* run times by type name, for jobs that give no estimate */
        size_t nmeans, means_cap;
        sched_kept waiting; /* the jobs up to the last arrival that wait (kept.h) */
} coloc_d;

static size_t type_of(const coloc_d *d, const char *name) {
        for (size_t t = 0; name && t < d->T; t++)
                if (strcmp(d->names[t], name) == 0)
                        return t;
        return d->T;
}

/* Machine m's cost, with a job of type add (load p) on it too when add <= T. */
static double cost_with(const coloc_d *d, size_t m, size_t add, double p) {
        size_t W = d->T + 1;
        const double *L = d->load + m * W;
        const uint32_t *C = d->count + m * W;
        double worst = 0;
        for (size_t b = 0; b < W; b++) {
                if (C[b] == 0 && b != add)
                        continue;
                double c = add < W ? p * d->A[add * W + b] : 0;
                for (size_t a = 0; a < W; a++)
                        c += L[a] * d->A[a * W + b];
                worst = fmax(worst, c);
        }
        return worst;
}

double coloc_dispatcher_cost(const sched_dispatcher *base, size_t m) {
        const coloc_d *d = (const coloc_d *)base;
        return m < d->nm ? cost_with(d, m, SIZE_MAX, 0) : 0;
}

/* Make room for the per-type loads of n machines. */
static int cover(coloc_d *d, size_t n) {
        if (n <= d->nm)
                return 0;
        size_t W = d->T + 1;
        double *load = realloc(d->load, n * W * sizeof(*load));
        if (load)
                d->load = load;
        uint32_t *count = realloc(d->count, n * W * sizeof(*count));
        if (count)
                d->count = count;
        if (!load || !count)
                return -ENOMEM;
        memset(d->load + d->nm * W, 0, (n - d->nm) * W * sizeof(*load));
        memset(d->count + d->nm * W, 0, (n - d->nm) * W * sizeof(*count));
        d->nm = n;
        return 0;
}

static bool same_type(const char *a, const char *b) { return a && b ? strcmp(a, b) == 0 : a == b; }

static means *means_of(const coloc_d *d, const char *type) {
        for (size_t i = 0; i < d->nmeans; i++)
                if (same_type(d->means[i].type, type))
                        return &d->means[i];
        return NULL;
}

static double load_of(const coloc_d *d, const sched_job *j) {
        const means *m = j->runtime > 0 ? NULL : means_of(d, j->type);
        return j->runtime > 0 ? j->runtime : m ? m->sum / m->n : 1;
}

int coloc_dispatcher_note_runtime(sched_dispatcher *base, const char *type, double seconds) {
        coloc_d *d = (coloc_d *)base;
        if (!(seconds > 0) || !isfinite(seconds))
                return 0;
        means *m = means_of(d, type);
        if (!m) {
                if (sched_grow(&d->means, &d->means_cap, d->nmeans + 1, sizeof(*d->means)) < 0)
                        return -ENOMEM;
                m = &d->means[d->nmeans];
                *m = (means){ 0 };
                if (type && !(m->type = strdup(type)))
                        return -ENOMEM;
                d->nmeans++;
        }
        m->sum += seconds;
        m->n++;
        return 0;
}

/* The machine for jobs[j] by the rule of coloc_dispatch.h, or -1 when it fits none. The
 * machine whose own cost after the job is smallest is also one where the cluster's largest
 * cost after is smallest: with m that machine and any other machine m', the cluster's maximum
 * after placing on m is either m's own cost, at most m''s own cost after placing there, or some
 * machine o's current cost, which is at most the maximum after placing on m' (o = m' included,
 * since alpha >= 0 makes a machine's cost grow with its jobs). So one pass over the machines. */
static long choose(const coloc_d *d, const sched_pass *p, size_t j) {
        size_t t = type_of(d, p->jobs[j].type);
        double pj = load_of(d, &p->jobs[j]), best_own = 0;
        long best = -1;
        for (size_t m = 0; m < p->nmachines; m++) {
                if (!sched_pass_fits(p, j, m))
                        continue;
                double own = cost_with(d, m, t, pj);
                if (best < 0 || own < best_own) {
                        best = (long)m;
                        best_own = own;
                }
        }
        return best;
}

static int place(coloc_d *d, sched_pass *p, size_t j, size_t m) {
        const sched_job *job = &p->jobs[j];
        if (sched_grow(&d->runs, &d->cap, d->nruns + 1, sizeof(*d->runs)) < 0)
                return -ENOMEM;
        run *r = &d->runs[d->nruns];
        *r = (run){ .id = job->id, .t = type_of(d, job->type), .p = load_of(d, job), .m = m };
        if (job->type && !(r->type = strdup(job->type)))
                return -ENOMEM;
        d->nruns++;
        sched_pass_assign(p, j, m);
        d->load[m * (d->T + 1) + r->t] += r->p;
        d->count[m * (d->T + 1) + r->t]++;
        return 0;
}

static int coloc_arrival(sched_dispatcher *base, sched_pass *p, size_t j) {
        coloc_d *d = (coloc_d *)base;
        if (cover(d, p->nmachines) < 0)
                return -ENOMEM;
        long m = choose(d, p, j);
        return m < 0 ? sched_kept_push(&d->waiting, &p->jobs[j], 0) : place(d, p, j, (size_t)m);
}

/* The waiting jobs of a whole pass: those it kept up to the last arrival; the others are fresh
 * (dispatch.h), arrivals after the exits. */
static int coloc_whole(sched_dispatcher *base, const sched_pass *p) {
        return sched_kept_whole(&((coloc_d *)base)->waiting, p, base->seen);
}

static int coloc_exit(sched_dispatcher *base, sched_pass *p, size_t freed) {
        coloc_d *d = (coloc_d *)base;
        if (cover(d, p->nmachines) < 0)
                return -ENOMEM;
        sched_kept *w = &d->waiting;
        sched_kept_tidy(w);
        for (size_t i = 0; i < w->n; i++) {
                const sched_job *job = &w->v[i].job;
                if (!job->id || !res_fits(job->req, p->machines[freed].free))
                        continue;
                long j = sched_kept_take(w, i, p);
                if (j < -1)
                        return (int)j;
                long m = j >= 0 ? choose(d, p, (size_t)j) : -1; /* else it no longer waits */
                if (m >= 0 && place(d, p, (size_t)j, (size_t)m) < 0)
                        return -ENOMEM;
        }
        return 0;
}

static void unload(coloc_d *d, const run *r) {
        size_t i = r->m * (d->T + 1) + r->t;
        d->load[i] = d->count[i] > 1 ? d->load[i] - r->p : 0; /* the last one leaves no rounding behind */
        d->count[i]--;
}

static void coloc_release(sched_dispatcher *base, const sched_job *job, size_t m) {
        coloc_d *d = (coloc_d *)base;
        (void)m;
        for (size_t i = 0; i < d->nruns; i++)
                if (d->runs[i].id == job->id) {
                        unload(d, &d->runs[i]);
                        free(d->runs[i].type);
                        d->runs[i] = d->runs[--d->nruns];
                        return;
                }
}

static void free_matrix(char **names, size_t T, double *A) {
        for (size_t t = 0; names && t < T; t++)
                free(names[t]);
        free(names);
        free(A);
}

static void coloc_free(sched_dispatcher *base) {
        coloc_d *d = (coloc_d *)base;
        for (size_t i = 0; i < d->nruns; i++)
                free(d->runs[i].type);
        free(d->runs);
        for (size_t i = 0; i < d->nmeans; i++)
                free(d->means[i].type);
        free(d->means);
        free_matrix(d->names, d->T, d->A);
        free(d->load);
        free(d->count);
        sched_kept_free(&d->waiting);
        free(d);
}

static const sched_dispatcher_ops coloc_ops = {
        .name = "coloc",
        .on_exit = coloc_exit,
        .on_arrival = coloc_arrival,
        .on_release = coloc_release,
        .free = coloc_free,
        .by_id = true,
        .on_whole = coloc_whole,
};

int coloc_dispatcher_set_alpha(sched_dispatcher *base, const char *const *types, size_t T, const double *alpha) {
        coloc_d *d = (coloc_d *)base;
        size_t W = T + 1, nm = d->nm;
        char **names = calloc(T + 1, sizeof(*names));
        double *A = malloc(W * W * sizeof(*A)), *load = calloc(nm * W + 1, sizeof(*load));
        uint32_t *count = calloc(nm * W + 1, sizeof(*count));
        bool ok = names && A && load && count;
        for (size_t t = 0; ok && t < T; t++)
                ok = (names[t] = strdup(types[t])) != NULL;
        if (!ok) {
                free_matrix(names, T, A);
                free(load);
                free(count);
                return -ENOMEM;
        }
        for (size_t a = 0; a < W; a++)
                for (size_t b = 0; b < W; b++)
                        A[a * W + b] = a < T && b < T ? alpha[a * T + b] : 1;
        free_matrix(d->names, d->T, d->A);
        free(d->load);
        free(d->count);
        *d = (coloc_d){ .base = d->base,
                        .T = T,
                        .names = names,
                        .A = A,
                        .nm = nm,
                        .load = load,
                        .count = count,
                        .runs = d->runs,
                        .nruns = d->nruns,
                        .cap = d->cap,
                        .means = d->means,
                        .nmeans = d->nmeans,
                        .means_cap = d->means_cap,
                        .waiting = d->waiting };
        for (size_t i = 0; i < d->nruns; i++) {
                run *r = &d->runs[i];
                r->t = type_of(d, r->type);
                d->load[r->m * W + r->t] += r->p;
                d->count[r->m * W + r->t]++;
        }
        return 0;
}

int coloc_dispatcher_new(sched_dispatcher **out) {
        coloc_d *d = sched_dispatcher_alloc(sizeof(*d), &coloc_ops, 0);
        if (!d)
                return -ENOMEM;
        if (coloc_dispatcher_set_alpha(&d->base, NULL, 0, NULL) < 0) {
                free(d);
                return -ENOMEM;
        }
        *out = &d->base;
        return 0;
}
