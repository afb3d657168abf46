/* lotes_lp.c - LoTES stages 1 and 2 (see lotes.h): the allocation LP, the machine-assignment LP
 * and its rounding, on GLPK. Rows and columns follow the paper's numbering in the comments. */
#include "lotes.h"
#include <errno.h>
#include <glpk.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define R   LOTES_NRES
#define EPS 1e-9 /* a delta or x below this is the solver's zero */

static int fail(int r, char *err, size_t errlen, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static int fail(int r, char *err, size_t errlen, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, errlen, fmt, ap);
        va_end(ap);
        return r;
}

static double amount(res_t v, int l) { return l == 0 ? (double)v.mcpu : (double)v.mem; }

/* Resource l of v as a fraction of the largest configuration's (the LPs' unit). */
static double share(const lotes_problem *p, res_t v, int l) {
        double largest = 0;
        for (size_t j = 0; j < p->nconfigs; j++)
                largest = fmax(largest, amount(p->configs[j].capacity, l));
        return amount(v, l) / largest;
}

static double mu(const lotes_problem *p, size_t j, size_t k) { return p->mu[j * p->nclasses + k]; }

/* Class k can be given a share of configuration j: it runs there, and its expected request fits. */
static bool can_serve(const lotes_problem *p, size_t j, size_t k) {
        return mu(p, j, k) > 0 && res_fits(p->classes[k].req, p->configs[j].capacity);
}

int lotes_check(const lotes_problem *p, char *err, size_t errlen) {
        double alphas = 0;
        if (p->nconfigs == 0 || p->nclasses == 0)
                return fail(-EINVAL, err, errlen, "LoTES needs at least one configuration and one class");
        for (size_t j = 0; j < p->nconfigs; j++)
                if (p->configs[j].count == 0 || p->configs[j].capacity.mcpu <= 0 || p->configs[j].capacity.mem <= 0)
                        return fail(-EINVAL, err, errlen, "configuration %zu: needs machines, cores and memory", j + 1);
        for (size_t k = 0; k < p->nclasses; k++) {
                const lotes_class *c = &p->classes[k];
                if (!(c->alpha >= 0) || c->req.mcpu <= 0 || c->req.mem <= 0)
                        return fail(-EINVAL, err, errlen, "class %s: alpha must be >= 0, cores and memory > 0",
                                    c->name);
                bool somewhere = false;
                for (size_t j = 0; j < p->nconfigs; j++) {
                        if (!(mu(p, j, k) >= 0) || !isfinite(mu(p, j, k)))
                                return fail(-EINVAL, err, errlen,
                                            "class %s: rate on configuration %zu is not a rate >= 0", c->name, j + 1);
                        somewhere |= can_serve(p, j, k);
                }
                if (c->alpha > 0 && !somewhere)
                        return fail(-EINVAL, err, errlen, "class %s: no configuration can run it, so lambda* = 0",
                                    c->name);
                alphas += c->alpha;
        }
        if (!(alphas > 0) || !isfinite(alphas))
                return fail(-EINVAL, err, errlen, "the class proportions (alpha) must sum to more than 0");
        return 0;
}

/* A sparse constraint matrix in GLPK's 1-based triplets. */
typedef struct triplets {
        int *ia, *ja;
        double *ar;
        size_t n, cap;
} triplets;

static int put(triplets *t, int row, int col, double v) {
        size_t need = t->n + 2, ci = t->cap, cj = t->cap, ca = t->cap; /* GLPK's arrays start at 1 */
        if (sched_grow(&t->ia, &ci, need, sizeof(int)) < 0 || sched_grow(&t->ja, &cj, need, sizeof(int)) < 0 ||
            sched_grow(&t->ar, &ca, need, sizeof(double)) < 0)
                return -ENOMEM;
        t->cap = ca;
        t->n++;
        t->ia[t->n] = row, t->ja[t->n] = col, t->ar[t->n] = v;
        return 0;
}

static void triplets_free(triplets *t) {
        free(t->ia);
        free(t->ja);
        free(t->ar);
}

/* Load t, solve lp (column 1 is lambda, maximised), and check the outcome. Returns 0, -ENOMEM
 * or -EDOM with the reason in err. */
static int solve(glp_prob *lp, triplets *t, int failed, const char *what, char *err, size_t errlen) {
        if (failed < 0)
                return fail(-ENOMEM, err, errlen, "out of memory building the %s", what);
        glp_set_obj_dir(lp, GLP_MAX);
        glp_set_obj_coef(lp, 1, 1.0);
        glp_load_matrix(lp, (int)t->n, t->ia, t->ja, t->ar);
        glp_smcp parm;
        glp_init_smcp(&parm);
        parm.msg_lev = GLP_MSG_OFF;
        parm.presolve = GLP_ON;
        int was = glp_term_out(GLP_OFF); /* glp_scale_prob prints whatever msg_lev says */
        glp_scale_prob(lp, GLP_SF_AUTO);
        int r = glp_simplex(lp, &parm);
        glp_term_out(was);
        int status = glp_get_status(lp);
        if (r == GLP_ENOPFS || status == GLP_NOFEAS || status == GLP_INFEAS)
                return fail(-EDOM, err, errlen, "the %s is infeasible", what);
        if (r == GLP_ENODFS || status == GLP_UNBND)
                return fail(-EDOM, err, errlen, "the %s is unbounded", what);
        if (r != 0 || status != GLP_OPT)
                return fail(-EDOM, err, errlen, "GLPK could not solve the %s (glp_simplex %d, status %d)", what, r,
                            status);
        if (!(glp_get_obj_val(lp) > EPS))
                return fail(-EDOM, err, errlen, "the %s gives lambda* = 0: no class can be served", what);
        return 0;
}

static int delta_col(const lotes_problem *p, size_t j, size_t k, int l) {
        return 2 + (int)((j * p->nclasses + k) * R + (size_t)l);
}

/* (4) for the GPUs of each configuration with some: by (3) a class's GPU share of j is its core
 * share delta_jk1 times (c_j1 / r_k1) (r_kg / c_jg), the jobs its cores hold times their GPUs
 * over j's, so the GPUs add one row per configuration and no column: sum_k that <= 1. Classes
 * without GPUs take none; a configuration without GPUs serves no class asking some (can_serve). */
static int gpu_rows(const lotes_problem *p, glp_prob *lp, triplets *t) {
        int r = 0;
        for (size_t j = 0; j < p->nconfigs && r == 0; j++) {
                res_t c = p->configs[j].capacity;
                if (c.gpus <= 0)
                        continue;
                int row = glp_add_rows(lp, 1);
                glp_set_row_bnds(lp, row, GLP_UP, 0, 1);
                for (size_t k = 0; k < p->nclasses && r == 0; k++) {
                        res_t q = p->classes[k].req;
                        if (q.gpus > 0 && can_serve(p, j, k))
                                r = put(t, row, delta_col(p, j, k, 0),
                                        (double)c.mcpu / (double)q.mcpu * (double)q.gpus / (double)c.gpus);
                }
        }
        return r;
}

/* Rows (2), (3) and (4) of the allocation LP, into lp's row bounds and t. */
static int allocation_rows(const lotes_problem *p, glp_prob *lp, triplets *t) {
        int row, r = 0;
        for (size_t k = 0; k < p->nclasses; k++)
                for (int l = 0; l < R && r == 0; l++) { /* (2) sum_j delta c n mu - lambda alpha r >= 0 */
                        row = glp_add_rows(lp, 1);
                        glp_set_row_bnds(lp, row, GLP_LO, 0, 0);
                        r = put(t, row, 1, -p->classes[k].alpha * share(p, p->classes[k].req, l));
                        for (size_t j = 0; j < p->nconfigs && r == 0; j++)
                                r = put(t, row, delta_col(p, j, k, l),
                                        share(p, p->configs[j].capacity, l) * (double)p->configs[j].count *
                                                mu(p, j, k));
                }
        for (size_t j = 0; j < p->nconfigs; j++)
                for (size_t k = 0; k < p->nclasses; k++)
                        for (int l = 1; l < R && r == 0; l++) { /* (3) times r_kl r_k1: no division by a request */
                                row = glp_add_rows(lp, 1);
                                glp_set_row_bnds(lp, row, GLP_FX, 0, 0);
                                r = put(t, row, delta_col(p, j, k, l),
                                        share(p, p->configs[j].capacity, l) * share(p, p->classes[k].req, 0));
                                if (r == 0)
                                        r = put(t, row, delta_col(p, j, k, 0),
                                                -share(p, p->configs[j].capacity, 0) * share(p, p->classes[k].req, l));
                        }
        for (size_t j = 0; j < p->nconfigs; j++)
                for (int l = 0; l < R && r == 0; l++) { /* (4) sum_k delta <= 1 */
                        row = glp_add_rows(lp, 1);
                        glp_set_row_bnds(lp, row, GLP_UP, 0, 1);
                        for (size_t k = 0; k < p->nclasses && r == 0; k++)
                                r = put(t, row, delta_col(p, j, k, l), 1.0);
                }
        return r < 0 ? r : gpu_rows(p, lp, t);
}

int lotes_allocate(const lotes_problem *p, lotes_alloc *out, char *err, size_t errlen) {
        *out = (lotes_alloc){ 0 };
        int r = lotes_check(p, err, errlen);
        if (r < 0)
                return r;
        size_t ndelta = p->nconfigs * p->nclasses * R;
        glp_prob *lp = glp_create_prob();
        triplets t = { 0 };
        glp_add_cols(lp, 1 + (int)ndelta);
        glp_set_col_bnds(lp, 1, GLP_LO, 0, 0);   /* lambda */
        for (size_t j = 0; j < p->nconfigs; j++) /* (5), and no share where the class cannot run */
                for (size_t k = 0; k < p->nclasses; k++)
                        for (int l = 0; l < R; l++)
                                glp_set_col_bnds(lp, delta_col(p, j, k, l), can_serve(p, j, k) ? GLP_LO : GLP_FX, 0, 0);
        r = solve(lp, &t, allocation_rows(p, lp, &t), "allocation LP", err, errlen);
        if (r == 0 && !(out->delta = calloc(ndelta, sizeof(double))))
                r = fail(-ENOMEM, err, errlen, "out of memory");
        if (r == 0) {
                out->lambda = glp_get_obj_val(lp);
                for (size_t i = 0; i < ndelta; i++)
                        out->delta[i] = glp_get_col_prim(lp, 2 + (int)i);
        }
        glp_delete_prob(lp);
        triplets_free(&t);
        return r;
}

void lotes_alloc_free(lotes_alloc *a) {
        free(a->delta);
        a->delta = NULL;
}

bool lotes_alloc_uses(const lotes_problem *p, const lotes_alloc *a, size_t j, size_t k) {
        return a->delta[(j * p->nclasses + k) * R] > EPS;
}

static size_t nbins_total(const lotes_plan *plan) { return plan->first[plan->nconfigs]; }

static int x_col(const lotes_problem *p, const lotes_plan *plan, size_t j, size_t i) {
        return 2 + (int)(p->nconfigs * p->nclasses * R + plan->first[j] + i);
}

static uint32_t bin_count(const lotes_plan *plan, size_t j, size_t i, size_t k) {
        return plan->bins[j].count[i * plan->nclasses + k];
}

/* Rows (7), (8) and (9) of the machine-assignment LP, into lp's row bounds and t. */
static int assignment_rows(const lotes_problem *p, const lotes_plan *plan, glp_prob *lp, triplets *t) {
        int row, r = 0;
        for (size_t k = 0; k < p->nclasses; k++)
                for (int l = 0; l < R && r == 0; l++) { /* (7) sum_j Delta mu - lambda alpha r >= 0 */
                        row = glp_add_rows(lp, 1);
                        glp_set_row_bnds(lp, row, GLP_LO, 0, 0);
                        r = put(t, row, 1, -p->classes[k].alpha * share(p, p->classes[k].req, l));
                        for (size_t j = 0; j < p->nconfigs && r == 0; j++)
                                r = put(t, row, delta_col(p, j, k, l), mu(p, j, k));
                }
        for (size_t j = 0; j < p->nconfigs; j++)
                for (size_t k = 0; k < p->nclasses; k++)
                        for (int l = 0; l < R && r == 0; l++) { /* (8) sum_i N r x - Delta = 0 */
                                row = glp_add_rows(lp, 1);
                                glp_set_row_bnds(lp, row, GLP_FX, 0, 0);
                                r = put(t, row, delta_col(p, j, k, l), -1.0);
                                for (size_t i = 0; i < plan->bins[j].n && r == 0; i++)
                                        if (bin_count(plan, j, i, k))
                                                r = put(t, row, x_col(p, plan, j, i),
                                                        bin_count(plan, j, i, k) * share(p, p->classes[k].req, l));
                        }
        for (size_t j = 0; j < p->nconfigs && r == 0; j++) { /* (9) sum_i x = n_j */
                row = glp_add_rows(lp, 1);
                glp_set_row_bnds(lp, row, GLP_FX, (double)p->configs[j].count, (double)p->configs[j].count);
                for (size_t i = 0; i < plan->bins[j].n && r == 0; i++)
                        r = put(t, row, x_col(p, plan, j, i), 1.0);
        }
        return r;
}

static int solve_assignment(const lotes_problem *p, lotes_plan *plan, char *err, size_t errlen) {
        size_t ndelta = p->nconfigs * p->nclasses * R, nx = nbins_total(plan);
        glp_prob *lp = glp_create_prob();
        triplets t = { 0 };
        glp_add_cols(lp, 1 + (int)(ndelta + nx));
        for (size_t c = 1; c <= 1 + ndelta + nx; c++) /* lambda, Delta and (10) x: all >= 0 */
                glp_set_col_bnds(lp, (int)c, GLP_LO, 0, 0);
        int r = solve(lp, &t, assignment_rows(p, plan, lp, &t), "machine-assignment LP", err, errlen);
        if (r == 0) {
                plan->lambda_lp = glp_get_obj_val(lp);
                for (size_t j = 0; j < p->nconfigs; j++)
                        for (size_t i = 0; i < plan->bins[j].n; i++)
                                plan->x[plan->first[j] + i] = fmax(0, glp_get_col_prim(lp, x_col(p, plan, j, i)));
        }
        glp_delete_prob(lp);
        triplets_free(&t);
        return r;
}

typedef struct fractional {
        double part; /* x - floor(x) */
        size_t bin;
} fractional;

static int by_fraction(const void *a, const void *b) {
        const fractional *x = a, *y = b;
        if (x->part != y->part)
                return x->part < y->part ? 1 : -1;
        return x->bin < y->bin ? -1 : 1; /* ties: the earlier bin first */
}

/* The paper's rounding for configuration j: q_j = sum of the fractional parts of its x_ij; the
 * q_j largest parts round up, the others down, so that the machines still add up to n_j. */
static int round_config(lotes_plan *plan, size_t j) {
        size_t n = plan->bins[j].n, first = plan->first[j];
        fractional *f = malloc((n + 1) * sizeof(*f));
        if (!f)
                return -ENOMEM;
        double q = 0;
        for (size_t i = 0; i < n; i++) {
                f[i] = (fractional){ plan->x[first + i] - floor(plan->x[first + i]), i };
                q += f[i].part;
                plan->machines[first + i] = (uint32_t)floor(plan->x[first + i]);
        }
        qsort(f, n, sizeof(*f), by_fraction);
        for (size_t i = 0; i < (size_t)llround(q) && i < n; i++)
                plan->machines[first + f[i].bin]++;
        free(f);
        return 0;
}

/* slots_jk of the rounded plan, and the lambda that constraint (7) allows with them. */
static void rounded_rates(const lotes_problem *p, lotes_plan *plan) {
        plan->lambda = INFINITY;
        for (size_t k = 0; k < p->nclasses; k++) {
                double rate = 0;
                for (size_t j = 0; j < p->nconfigs; j++) {
                        double slots = 0;
                        for (size_t i = 0; i < plan->bins[j].n; i++)
                                slots += (double)bin_count(plan, j, i, k) * plan->machines[plan->first[j] + i];
                        plan->slots[j * p->nclasses + k] = slots;
                        rate += slots * mu(p, j, k);
                }
                if (p->classes[k].alpha > 0) /* (7): Delta_jkl = slots r_kl, so r_kl cancels */
                        plan->lambda = fmin(plan->lambda, rate / p->classes[k].alpha);
        }
}

/* Enumerate every configuration's bins over the classes stage 1 gave it. */
static int enumerate_all(const lotes_problem *p, const lotes_alloc *a, lotes_plan *plan, char *err, size_t errlen) {
        bool *use = calloc(p->nclasses, sizeof(*use));
        int r = use ? 0 : -ENOMEM;
        for (size_t j = 0; j < p->nconfigs && r == 0; j++) {
                for (size_t k = 0; k < p->nclasses; k++)
                        use[k] = lotes_alloc_uses(p, a, j, k);
                r = lotes_enumerate_bins(p, j, use, &plan->bins[j]);
                plan->first[j + 1] = plan->first[j] + plan->bins[j].n;
                if (r == -E2BIG)
                        fail(r, err, errlen, "configuration %zu: more than %d non-dominated bins", j + 1,
                             LOTES_MAX_BINS);
        }
        free(use);
        return r == -ENOMEM ? fail(r, err, errlen, "out of memory enumerating bins") : r;
}

int lotes_assign(const lotes_problem *p, const lotes_alloc *a, lotes_plan *out, char *err, size_t errlen) {
        *out = (lotes_plan){ .nconfigs = p->nconfigs, .nclasses = p->nclasses };
        out->bins = calloc(p->nconfigs, sizeof(*out->bins));
        out->first = calloc(p->nconfigs + 1, sizeof(*out->first));
        out->slots = calloc(p->nconfigs * p->nclasses, sizeof(*out->slots));
        int r = out->bins && out->first && out->slots ? enumerate_all(p, a, out, err, errlen)
                                                      : fail(-ENOMEM, err, errlen, "out of memory");
        if (r == 0) {
                out->x = calloc(nbins_total(out) + 1, sizeof(*out->x));
                out->machines = calloc(nbins_total(out) + 1, sizeof(*out->machines));
                r = out->x && out->machines ? solve_assignment(p, out, err, errlen)
                                            : fail(-ENOMEM, err, errlen, "out of memory");
        }
        for (size_t j = 0; j < p->nconfigs && r == 0; j++)
                if ((r = round_config(out, j)) < 0)
                        fail(r, err, errlen, "out of memory");
        if (r == 0)
                rounded_rates(p, out);
        else
                lotes_plan_free(out);
        return r;
}

void lotes_plan_free(lotes_plan *plan) {
        for (size_t j = 0; plan->bins && j < plan->nconfigs; j++)
                lotes_bins_free(&plan->bins[j]);
        free(plan->bins);
        free(plan->first);
        free(plan->x);
        free(plan->machines);
        free(plan->slots);
        *plan = (lotes_plan){ 0 };
}

void lotes_thread_done(void) { glp_free_env(); }
