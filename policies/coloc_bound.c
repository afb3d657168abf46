/* coloc_bound.c - a lower bound on the optimal colocation cost, to report normalized costs.
 *
 * The paper (Sec. 7.1.3) bounds by max(p_max, QCP), where the QCP gives each type a fraction of
 * its total load W(t) on each machine and charges type t's cost on a machine only where t has
 * load (binary u_{t,k}); it needs Gurobi and sometimes 15 minutes. We keep its divisible-load
 * idea and drop the binaries in the one way that stays a linear program and a valid bound:
 *
 *  f(y) = max over types b with y_b > 0 of sum_a y_a alpha[a][b]   (the cost of a machine
 *         holding load y_a of each type a: Eq. 1, positively homogeneous)
 *  h    = the largest convex function below f, i.e. the supremum of the linear functions a.y
 *         with a.y <= f(y) for every y >= 0 (every "valid" a).
 *
 * Any schedule puts loads y_k on the machines, sum_k y_k = W, and costs max_k f(y_k) >=
 * max_k h(y_k) >= (1/m) sum_k h(y_k) >= h(W / m) = h(W) / m (h is convex and homogeneous). So
 * OPT >= max { a.W : a valid } / m. Validity is a condition per support S (the set of types on
 * the machine): a.y <= max_{b in S} (y^T alpha)_b for all y >= 0 on S holds, by the minimax
 * theorem, iff some lambda in the simplex over S has a_t <= sum_{b in S} alpha[t][b] lambda_b for
 * every t in S. Hence the LP, over the P types that have jobs:
 *
 *   maximise  sum_t W(t)/m a_t
 *   s.t.      for each nonempty S:  sum_{b in S} lambda^S_b = 1,
 *                                   a_t - sum_{b in S} alpha[t][b] lambda^S_b <= 0  (t in S)
 *             a, lambda >= 0          (a >= 0 loses nothing: every W(t) >= 0)
 *
 * with 2^P - 1 blocks. For two compatible types it is the divisible-load optimum (W1/m +
 * alpha W2/m when W1 >= W2); for incompatible ones it is W/m, weaker than the QCP, whose
 * binaries count whole machines (incompatible types on few machines): so our normalized costs
 * there are higher than the paper's (docs/policies.md). */
#include "coloc_internal.h"
#include <errno.h>
#include <glpk.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

/* The LP's coefficient triplets, GLPK style (1-based: entry 0 unused). */
typedef struct triplets {
        int *row, *col;
        double *val;
        int n;
} triplets;

static void put(triplets *t, int row, int col, double val) {
        ++t->n;
        t->row[t->n] = row;
        t->col[t->n] = col;
        t->val[t->n] = val;
}

/* Columns 1..P are a; then each support S in increasing mask order has one column per member.
 * Rows: per S, the simplex row, then one row per member t. */
static void build(glp_prob *lp, const coloc_instance *in, const uint32_t *present, int P, const double *w,
                  triplets *t) {
        size_t T = in->ntypes;
        int row = 0, col = P;
        glp_set_obj_dir(lp, GLP_MAX);
        glp_add_cols(lp, P);
        for (int i = 0; i < P; i++) {
                glp_set_col_bnds(lp, i + 1, GLP_LO, 0, 0);
                glp_set_obj_coef(lp, i + 1, w[i] / (double)in->nmachines);
        }
        for (unsigned S = 1; S < (1u << P); S++) {
                int k = __builtin_popcount(S), first = col + 1;
                glp_add_cols(lp, k);
                glp_add_rows(lp, 1 + k);
                glp_set_row_bnds(lp, ++row, GLP_FX, 1, 1);
                for (int c = first; c < first + k; c++) {
                        glp_set_col_bnds(lp, c, GLP_LO, 0, 0);
                        put(t, row, c, 1);
                }
                for (int i = 0; i < P; i++) {
                        if (!(S & (1u << i)))
                                continue;
                        glp_set_row_bnds(lp, ++row, GLP_UP, 0, 0);
                        put(t, row, i + 1, 1);
                        for (int b = 0, c = first; b < P; b++)
                                if (S & (1u << b))
                                        put(t, row, c++, -in->alpha[present[i] * T + present[b]]);
                }
                col += k;
        }
        glp_load_matrix(lp, t->n, t->row, t->col, t->val);
}

/* Solve with the primal simplex, GLPK's LP presolver on (it scales the presolved problem with
 * GLP_SF_AUTO itself), and no terminal output: policies print nothing. */
static int solve(glp_prob *lp, double *value, char *err, size_t errlen) {
        glp_smcp parm;
        glp_init_smcp(&parm);
        parm.msg_lev = GLP_MSG_OFF;
        parm.presolve = GLP_ON;
        int r = glp_simplex(lp, &parm);
        if (r != 0) {
                snprintf(err, errlen, "lower bound: GLPK glp_simplex failed (code %d)", r);
                return -EIO;
        }
        if (glp_get_status(lp) != GLP_OPT) {
                snprintf(err, errlen, "lower bound: GLPK found no optimum (status %d)", glp_get_status(lp));
                return -EIO;
        }
        *value = glp_get_obj_val(lp);
        return 0;
}

static int relaxation(const coloc_instance *in, const uint32_t *present, int P, const double *w, double *value,
                      char *err, size_t errlen) {
        /* nonzeros: per S of size k, k (simplex row) + k (a_t) + k^2 (lambda): below 2^P (P^2 + 2P) */
        size_t cap = ((size_t)1 << P) * (size_t)(P * P + 2 * P) + 1;
        triplets t = { malloc(cap * sizeof(int)), malloc(cap * sizeof(int)), malloc(cap * sizeof(double)), 0 };
        glp_prob *lp = NULL;
        int r = t.row && t.col && t.val ? 0 : -ENOMEM;
        if (r == 0) {
                lp = glp_create_prob();
                build(lp, in, present, P, w, &t);
                r = solve(lp, value, err, errlen);
                glp_delete_prob(lp);
        }
        free(t.row);
        free(t.col);
        free(t.val);
        return r;
}

int coloc_lower_bound(const coloc_instance *in, coloc_bound *out, char *err, size_t errlen) {
        size_t T = in->ntypes;
        double *w = calloc(T, sizeof(*w));
        uint32_t *present = calloc(T, sizeof(*present));
        bool *has = calloc(T, sizeof(*has));
        int P = 0, r = w && present && has ? 0 : -ENOMEM;
        *out = (coloc_bound){ 0 };
        for (size_t j = 0; r == 0 && j < in->njobs; j++) {
                uint32_t a = in->type[j];
                out->p_max = fmax(out->p_max, in->load[j] * in->alpha[a * T + a]);
                w[a] += in->load[j];
                has[a] = true;
        }
        for (size_t a = 0; r == 0 && a < T; a++)
                if (has[a]) {
                        w[P] = w[a]; /* P <= a: compacting in place reads nothing overwritten */
                        present[P++] = (uint32_t)a;
                }
        if (r == 0 && P > COLOC_BOUND_MAX_TYPES) {
                snprintf(err, errlen, "lower bound: %d types have jobs, at most %d supported", P,
                         COLOC_BOUND_MAX_TYPES);
                r = -E2BIG;
        }
        if (r == 0 && P > 0)
                r = relaxation(in, present, P, w, &out->relaxation, err, errlen);
        out->value = fmax(out->p_max, out->relaxation);
        free(w);
        free(present);
        free(has);
        return r;
}
