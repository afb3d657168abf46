/* test_lotes_google.c - lambda* of the lotes-google workload (controller/sim/workload.c) against
 * the allocation LP of the LoTES paper (Tran, Padmanabhan, Zhang, Li, Down and Beck,
 * "Multi-stage resource-aware scheduling for data centers with heterogeneous servers",
 * section 4.1, LP (1)-(5)), solved here independently with GLPK from the paper's Tables 1 and 2
 * as printed: capacities and requests in hundredths of the largest machine, times in hours.
 *
 * The reference is written in other variables than policies/lotes_lp.c: t_jk, the jobs of
 * class k configuration j holds in the fluid model. delta_jkl = t_jk r_kl / (n_j c_jl) meets
 * (3) by construction, and (2), (4) become
 *   sum_j t_jk mu_jk >= lambda alpha_k            for each class k,
 *   sum_k t_jk r_kl <= n_j c_jl                   for each configuration j and resource l,
 * with t_jk fixed at 0 where a class's mean request exceeds the configuration, decided on the
 * table's hundredths (so class 4, 0.20 x 0.06, fits configuration 10, 1.00 x 0.06, exactly). */
#include "check_main.h"
#include "lotes.h"
#include "workload.h"
#include <glpk.h>
#include <math.h>

#define NCONFIGS 10
#define NCLASSES 4

/* Table 1: machines, cores, memory (hundredths of the largest machine). */
static const int table1[NCONFIGS][3] = {
        { 6732, 50, 50 }, { 3863, 50, 25 }, { 1001, 50, 75 }, { 795, 100, 100 }, { 126, 25, 25 },
        { 52, 50, 12 },   { 5, 50, 3 },     { 5, 50, 97 },    { 3, 100, 50 },    { 1, 100, 6 },
};
/* Table 2: average time (hours), cores, memory (hundredths), proportion. */
static const double table2[NCLASSES][4] = {
        { 0.03, 2, 1, 0.23 },
        { 0.04, 2, 3, 0.46 },
        { 0.04, 7, 3, 0.30 },
        { 0.03, 20, 6, 0.01 },
};

/* lambda* in jobs per second, by the t_jk formulation above. */
static double reference_lambda(void) {
        glp_prob *lp = glp_create_prob();
        int ia[1 + 64 + 80], ja[1 + 64 + 80], n = 0;
        double ar[1 + 64 + 80];
        glp_set_obj_dir(lp, GLP_MAX);
        glp_add_cols(lp, 1 + NCONFIGS * NCLASSES); /* column 1: lambda; 2 + j * NCLASSES + k: t_jk */
        glp_set_col_bnds(lp, 1, GLP_LO, 0, 0);
        glp_set_obj_coef(lp, 1, 1);
        for (int j = 0; j < NCONFIGS; j++)
                for (int k = 0; k < NCLASSES; k++) {
                        bool fits = table2[k][1] <= table1[j][1] && table2[k][2] <= table1[j][2];
                        glp_set_col_bnds(lp, 2 + j * NCLASSES + k, fits ? GLP_LO : GLP_FX, 0, 0);
                }
        for (int k = 0; k < NCLASSES; k++) {
                int row = glp_add_rows(lp, 1);
                glp_set_row_bnds(lp, row, GLP_LO, 0, 0);
                n++, ia[n] = row, ja[n] = 1, ar[n] = -table2[k][3];
                for (int j = 0; j < NCONFIGS; j++)
                        n++, ia[n] = row, ja[n] = 2 + j * NCLASSES + k, ar[n] = 1 / (table2[k][0] * 3600);
        }
        for (int j = 0; j < NCONFIGS; j++)
                for (int l = 0; l < 2; l++) {
                        int row = glp_add_rows(lp, 1);
                        glp_set_row_bnds(lp, row, GLP_UP, 0, table1[j][0] * table1[j][1 + l] / 100.0);
                        for (int k = 0; k < NCLASSES; k++)
                                n++, ia[n] = row, ja[n] = 2 + j * NCLASSES + k, ar[n] = table2[k][1 + l] / 100.0;
                }
        glp_load_matrix(lp, n, ia, ja, ar);
        glp_smcp parm;
        glp_init_smcp(&parm);
        parm.msg_lev = GLP_MSG_OFF;
        ck_assert_int_eq(glp_simplex(lp, &parm), 0);
        ck_assert_int_eq(glp_get_status(lp), GLP_OPT);
        double lambda = glp_get_obj_val(lp);
        glp_delete_prob(lp);
        return lambda;
}

START_TEST(lambda_star_equals_the_papers_lp) {
        wl_generated gen;
        const wl_spec *w = wl_find("lotes-google", 1, &gen);
        ck_assert_ptr_nonnull(w);
        wl_lotes in;
        wl_lotes_problem(w, 6732, &in); /* scale 6732: Table 1's counts, 12,583 machines */
        lotes_alloc a;
        char err[256];
        ck_assert_msg(lotes_allocate(&in.problem, &a, err, sizeof(err)) == 0, "%s", err);
        double want = reference_lambda();
        ck_assert_msg(fabs(a.lambda - want) <= 1e-6 * want, "lambda* %.1f jobs/h, the paper's LP %.1f jobs/h",
                      a.lambda * 3600, want * 3600);
        lotes_alloc_free(&a);
        lotes_thread_done();
}
END_TEST

/* The class the rounding barred: its mean request fits configuration 10 in bytes and milli-cores. */
START_TEST(class_4_fits_configuration_10) {
        wl_generated gen;
        wl_lotes in;
        wl_lotes_problem(wl_find("lotes-google", 1, &gen), 6732, &in);
        ck_assert(res_fits(in.classes[3].req, in.configs[9].capacity));
        ck_assert_int_eq(in.classes[3].req.mem, in.configs[9].capacity.mem);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("lotes_google");
        TCase *tc = tcase_create("lp");
        tcase_add_test(tc, lambda_star_equals_the_papers_lp);
        tcase_add_test(tc, class_4_fits_configuration_10);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(suite)
