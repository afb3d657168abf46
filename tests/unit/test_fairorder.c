/* test_fairorder.c - the order in which pending jobs are offered: by how far each leaf
 * department is below the entitlement the fair code gives it, caps, the default department,
 * and the report `colony shares` prints. */
#include "check_main.h"
#include "fairorder.h"
#include <errno.h>
#include <string.h>

#define GB ((int64_t)1 << 30)
#define MB ((int64_t)1 << 20)

static const res_t slot = { .mcpu = 1000, .mem = 16 * MB };
static const res_t six = { .mcpu = 6000, .mem = 6 * GB };

/* A tree from paths, weights and caps (cap 0: none). */
static void tree(fairorder *fo, fair_algo algo, size_t n, const char *const *paths, const double *weights,
                 const double *caps) {
        dept v[16];
        for (size_t i = 0; i < n; i++)
                v[i] = (dept){ .path = (char *)paths[i], .weight = weights[i], .cap = caps && caps[i] ? caps[i] : 1 };
        depts d = { .v = v, .n = n };
        ck_assert_int_eq(fairorder_init(fo, &d, algo), 0);
}

/* k jobs of group appended to jobs (n so far), each asking req. */
static size_t add_jobs(const fairorder *fo, fairorder_job *jobs, size_t n, const char *group, size_t k, res_t req) {
        for (size_t i = 0; i < k; i++)
                jobs[n++] = (fairorder_job){ fairorder_dept(fo, group), req };
        return n;
}

/* How many of the first k offered jobs are of department dept. */
static size_t count_in_prefix(const fairorder_job *jobs, const uint32_t *order, size_t k, uint32_t dept) {
        size_t c = 0;
        for (size_t i = 0; i < k; i++)
                c += jobs[order[i]].dept == dept;
        return c;
}

START_TEST(weights_two_to_one_interleave_from_the_first_job) {
        static const char *const paths[] = { "a", "b" };
        static const double w[] = { 2, 1 };
        fairorder fo;
        fairorder_job jobs[40];
        uint32_t order[40];
        size_t kept, n = 0;
        tree(&fo, (fair_algo)_i, 2, paths, w, NULL);
        /* a floods first, b after: b must not wait for a's queue */
        n = add_jobs(&fo, jobs, n, "a", 20, slot);
        n = add_jobs(&fo, jobs, n, "b", 20, slot);
        ck_assert_int_eq(fairorder_rank(&fo, six, jobs, n, order, &kept, NULL), 0);
        ck_assert_uint_eq(kept, n);
        uint32_t a = fairorder_dept(&fo, "a"), b = fairorder_dept(&fo, "b");
        ck_assert_uint_eq(count_in_prefix(jobs, order, 6, a), 4);
        ck_assert_uint_eq(count_in_prefix(jobs, order, 6, b), 2);
        ck_assert_uint_eq(count_in_prefix(jobs, order, 30, a), 20); /* past the entitlement, still 2:1 */
        /* each department's jobs keep their submission order */
        for (size_t i = 1, last_a = 0, last_b = 0; i < n; i++) {
                size_t *last = jobs[order[i]].dept == a ? &last_a : &last_b;
                ck_assert_uint_ge(order[i], *last);
                *last = order[i];
        }
        fairorder_free(&fo);
}
END_TEST

START_TEST(running_jobs_count_against_their_department) {
        static const char *const paths[] = { "a", "b" };
        static const double w[] = { 1, 1 };
        fairorder fo;
        fairorder_job jobs[8];
        uint32_t order[8];
        size_t kept, n = 0;
        fairorder_share shares[4];
        fairorder_report rep = { .nodes = shares };
        tree(&fo, FAIR_MCH, 2, paths, w, NULL);
        uint32_t a = fairorder_dept(&fo, "a"), b = fairorder_dept(&fo, "b");
        for (int i = 0; i < 4; i++)
                fairorder_charge(&fo, a, slot, +1);
        n = add_jobs(&fo, jobs, n, "a", 4, slot);
        n = add_jobs(&fo, jobs, n, "b", 4, slot);
        ck_assert_int_eq(fairorder_rank(&fo, six, jobs, n, order, &kept, &rep), 0);
        /* a holds 4 of 6 slots against an entitlement of 3: b's jobs go first, all four of them */
        ck_assert_uint_eq(count_in_prefix(jobs, order, 4, b), 4);
        ck_assert_double_eq_tol(rep.nodes[a].entitled, 0.5, 1e-9);
        ck_assert_double_eq_tol(rep.nodes[a].share, 4.0 / 6, 1e-9);
        ck_assert_uint_eq(rep.nodes[a].running, 4);
        ck_assert_uint_eq(rep.nodes[b].pending, 4);
        ck_assert_uint_eq(rep.nodes[0].running, 4); /* the root sums its subtree */
        ck_assert_int_eq(rep.next, 4);
        ck_assert_uint_eq(rep.next_dept, b);
        char why[256];
        fairorder_why(&fo, &rep, why, sizeof(why));
        ck_assert_str_eq(why, "b is 0.50 below its entitlement (0.00 of 0.50)");
        /* they end: a is back to nothing */
        for (int i = 0; i < 4; i++)
                fairorder_charge(&fo, a, slot, -1);
        ck_assert_int_eq(fairorder_rank(&fo, six, jobs, n, order, &kept, &rep), 0);
        ck_assert_double_eq(rep.nodes[a].share, 0);
        ck_assert_int_eq(rep.next, 0); /* a tie: the older job */
        fairorder_free(&fo);
}
END_TEST

START_TEST(caps_hold_jobs_and_bound_the_entitlement) {
        static const char *const paths[] = { "a", "b" };
        static const double w[] = { 3, 1 }, caps[] = { 0.5, 0 };
        fairorder fo;
        fairorder_job jobs[16];
        uint32_t order[16];
        size_t kept, n = 0;
        fairorder_share shares[4];
        fairorder_report rep = { .nodes = shares };
        tree(&fo, FAIR_MCH, 2, paths, w, caps);
        uint32_t a = fairorder_dept(&fo, "a"), b = fairorder_dept(&fo, "b");
        fairorder_charge(&fo, a, slot, +1);
        fairorder_charge(&fo, a, slot, +1);
        n = add_jobs(&fo, jobs, n, "a", 6, slot);
        n = add_jobs(&fo, jobs, n, "b", 6, slot);
        ck_assert_int_eq(fairorder_rank(&fo, six, jobs, n, order, &kept, &rep), 0);
        /* a runs 2 of 6 CPUs under a cap of 3: one more job of a, the other five held */
        ck_assert_uint_eq(kept, 7);
        ck_assert_uint_eq(count_in_prefix(jobs, order, kept, a), 1);
        for (size_t i = kept; i < n; i++)
                ck_assert_uint_eq(jobs[order[i]].dept, a);
        for (size_t i = kept + 1; i < n; i++)
                ck_assert_uint_gt(order[i], order[i - 1]); /* held in submission order */
        ck_assert(rep.nodes[a].held);
        ck_assert(!rep.nodes[b].held);
        /* weight 3 would give a 0.75; the cap keeps it at half */
        ck_assert_double_eq_tol(rep.nodes[a].entitled, 0.5, 1e-9);
        ck_assert_double_eq_tol(rep.nodes[b].entitled, 0.5, 1e-9);
        /* a single department under a cap is held too, without solving for order */
        ck_assert_int_eq(fairorder_rank(&fo, six, jobs, 6, order, &kept, NULL), 0);
        ck_assert_uint_eq(kept, 1);
        fairorder_free(&fo);
}
END_TEST

START_TEST(the_hierarchy_splits_a_departments_share) {
        static const char *const paths[] = { "physics", "physics/astro", "physics/hep", "cs" };
        static const double w[] = { 1, 1, 1, 1 };
        fairorder fo;
        fairorder_job jobs[40];
        uint32_t order[40];
        size_t kept, n = 0;
        fairorder_share shares[8];
        fairorder_report rep = { .nodes = shares };
        const res_t eight = { .mcpu = 8000, .mem = 8 * GB };
        tree(&fo, (fair_algo)_i, 4, paths, w, NULL);
        n = add_jobs(&fo, jobs, n, "physics/astro", 10, slot);
        n = add_jobs(&fo, jobs, n, "physics/hep", 10, slot);
        n = add_jobs(&fo, jobs, n, "cs", 10, slot);
        ck_assert_int_eq(fairorder_rank(&fo, eight, jobs, n, order, &kept, &rep), 0);
        uint32_t astro = fairorder_dept(&fo, "physics/astro"), cs = fairorder_dept(&fo, "cs");
        ck_assert_double_eq_tol(rep.nodes[astro].entitled, 0.25, 1e-9);
        ck_assert_double_eq_tol(rep.nodes[fairorder_dept(&fo, "physics/hep")].entitled, 0.25, 1e-9);
        ck_assert_double_eq_tol(rep.nodes[cs].entitled, 0.5, 1e-9);
        ck_assert_uint_eq(count_in_prefix(jobs, order, 8, cs), 4);
        ck_assert_uint_eq(count_in_prefix(jobs, order, 8, astro), 2);
        fairorder_free(&fo);
}
END_TEST

START_TEST(groups_that_are_not_leaves_go_to_the_default_department) {
        static const char *const paths[] = { "physics", "physics/astro", "physics-x", "physics.y" };
        static const double w[] = { 1, 1, 1, 1 };
        fairorder fo;
        tree(&fo, FAIR_MCH, 4, paths, w, NULL);
        uint32_t deflt = (uint32_t)fo.n - 1;
        ck_assert_str_eq(fo.nodes[deflt].name, FAIRORDER_DEFAULT);
        ck_assert_uint_eq(fairorder_dept(&fo, NULL), deflt);
        ck_assert_uint_eq(fairorder_dept(&fo, "chemistry"), deflt);
        ck_assert_uint_eq(fairorder_dept(&fo, "physics"), deflt); /* has a sub-department */
        ck_assert_uint_eq(fairorder_dept(&fo, ""), deflt);       /* the root */
        ck_assert_str_eq(fo.nodes[fairorder_dept(&fo, "physics/astro")].name, "physics/astro");
        ck_assert_str_eq(fo.nodes[fairorder_dept(&fo, "physics-x")].name, "physics-x");
        ck_assert_str_eq(fo.nodes[fairorder_dept(&fo, "physics.y")].name, "physics.y");
        fairorder_free(&fo);
        depts none = { 0 };
        ck_assert_int_eq(fairorder_init(&fo, &none, FAIR_MCH), 0); /* no departments: one default */
        ck_assert_uint_eq(fo.n, 2);
        ck_assert_uint_eq(fairorder_dept(&fo, "cs"), 1);
        fairorder_free(&fo);
}
END_TEST

START_TEST(one_department_keeps_submission_order) {
        fairorder fo;
        fairorder_job jobs[8];
        uint32_t order[8];
        size_t kept, n = 0;
        depts none = { 0 };
        ck_assert_int_eq(fairorder_init(&fo, &none, FAIR_MCH), 0);
        n = add_jobs(&fo, jobs, n, NULL, 5, slot);
        n = add_jobs(&fo, jobs, n, NULL, 3, (res_t){ .mcpu = 500, .mem = GB });
        ck_assert_int_eq(fairorder_rank(&fo, six, jobs, n, order, &kept, NULL), 0);
        ck_assert_uint_eq(kept, n);
        for (size_t i = 0; i < n; i++)
                ck_assert_uint_eq(order[i], i);
        /* nothing up: submission order, nothing held */
        ck_assert_int_eq(fairorder_rank(&fo, (res_t){ 0 }, jobs, n, order, &kept, NULL), 0);
        ck_assert_uint_eq(kept, n);
        fairorder_free(&fo);
}
END_TEST

START_TEST(a_job_larger_than_its_entitlement_is_not_left_for_last) {
        static const char *const paths[] = { "a", "big" };
        static const double w[] = { 5, 1 };
        fairorder fo;
        fairorder_job jobs[24];
        uint32_t order[24];
        size_t kept, n = 0;
        tree(&fo, FAIR_MCH, 2, paths, w, NULL);
        n = add_jobs(&fo, jobs, n, "a", 20, slot);
        n = add_jobs(&fo, jobs, n, "big", 1, (res_t){ .mcpu = 4000, .mem = GB }); /* 4 of 6 CPUs, weight 1 of 6 */
        ck_assert_int_eq(fairorder_rank(&fo, six, jobs, n, order, &kept, NULL), 0);
        size_t at = 0;
        while (jobs[order[at]].dept != fairorder_dept(&fo, "big"))
                at++;
        ck_assert_uint_lt(at, 10); /* one job's worth of entitlement at least: it comes before a's tail */
        fairorder_free(&fo);
}
END_TEST

static Suite *fairorder_suite(void) {
        Suite *s = suite_create("fairorder");
        TCase *tc = tcase_create("fairorder");
        /* every algorithm agrees on these flat and two-level trees of identical jobs */
        tcase_add_loop_test(tc, weights_two_to_one_interleave_from_the_first_job, FAIR_DRF + 1, _FAIR_ALGO_MAX);
        tcase_add_loop_test(tc, the_hierarchy_splits_a_departments_share, FAIR_HDRF, FAIR_MCH + 1);
        tcase_add_test(tc, running_jobs_count_against_their_department);
        tcase_add_test(tc, caps_hold_jobs_and_bound_the_entitlement);
        tcase_add_test(tc, groups_that_are_not_leaves_go_to_the_default_department);
        tcase_add_test(tc, one_department_keeps_submission_order);
        tcase_add_test(tc, a_job_larger_than_its_entitlement_is_not_left_for_last);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(fairorder_suite)
