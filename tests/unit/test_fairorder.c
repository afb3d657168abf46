/* test_fairorder.c - the order in which pending jobs are offered: by how far each leaf
 * department is below the entitlement the fair code gives it, caps, the default department,
 * and the report `colony shares` prints. */
#include "check_main.h"
#include "fairorder.h"
#include <stdbool.h>
#include <string.h>

#define GB ((int64_t)1 << 30)
#define MB ((int64_t)1 << 20)

static const res_t slot = { .mcpu = 1000, .mem = 16 * MB };
static const res_t six = { .mcpu = 6000, .mem = 6 * GB };

/* Each test's tree, pending jobs, order and report. */
static struct {
        fairorder fo;
        fairorder_job jobs[64];
        uint32_t order[64];
        size_t n, kept;
        fairorder_share shares[16];
        fairorder_report rep;
} fx;

static void setup(void) {
        memset(&fx, 0, sizeof(fx));
        fx.rep.nodes = fx.shares;
}

static void teardown(void) { fairorder_free(&fx.fo); }

/* The tree of paths, weights and caps (NULL or 0: none). */
static void tree(fair_algo algo, size_t n, const char *const *paths, const double *weights, const double *caps) {
        dept v[16];
        for (size_t i = 0; i < n; i++)
                v[i] = (dept){ .path = (char *)paths[i], .weight = weights[i], .cap = caps && caps[i] ? caps[i] : 1 };
        depts d = { .v = v, .n = n };
        ck_assert_int_eq(fairorder_init(&fx.fo, &d, algo), 0);
}

/* k more pending jobs of group, each asking req. */
static void add_jobs(const char *group, size_t k, res_t req) {
        for (size_t i = 0; i < k; i++)
                fx.jobs[fx.n++] = (fairorder_job){ .dept = fairorder_dept(&fx.fo, group), .req = req };
}

/* Rank the first n pending jobs on capacity, with the report or not. */
static void rank(res_t capacity, size_t n, bool report) {
        ck_assert_int_eq(fairorder_rank(&fx.fo, capacity, fx.jobs, n, fx.order, &fx.kept, report ? &fx.rep : NULL), 0);
}

/* How many of the first k offered jobs are of group. */
static size_t count_in_prefix(size_t k, const char *group) {
        size_t c = 0;
        for (size_t i = 0; i < k; i++)
                c += fx.jobs[fx.order[i]].dept == fairorder_dept(&fx.fo, group);
        return c;
}

START_TEST(weights_two_to_one_interleave_from_the_first_job) {
        static const char *const paths[] = { "a", "b" };
        static const double w[] = { 2, 1 };
        tree((fair_algo)_i, 2, paths, w, NULL);
        /* a floods first, b after: b must not wait for a's queue */
        add_jobs("a", 20, slot);
        add_jobs("b", 20, slot);
        rank(six, fx.n, false);
        ck_assert_uint_eq(fx.kept, fx.n);
        ck_assert_uint_eq(count_in_prefix(6, "a"), 4);
        ck_assert_uint_eq(count_in_prefix(6, "b"), 2);
        ck_assert_uint_eq(count_in_prefix(30, "a"), 20); /* past the entitlement, still 2:1 */
        /* each department's jobs keep their submission order */
        uint32_t a = fairorder_dept(&fx.fo, "a");
        for (size_t i = 1, last_a = 0, last_b = 0; i < fx.n; i++) {
                size_t *last = fx.jobs[fx.order[i]].dept == a ? &last_a : &last_b;
                ck_assert_uint_ge(fx.order[i], *last);
                *last = fx.order[i];
        }
}
END_TEST

START_TEST(running_jobs_count_against_their_department) {
        static const char *const paths[] = { "a", "b" };
        static const double w[] = { 1, 1 };
        char why[256];
        tree(FAIR_MCH, 2, paths, w, NULL);
        uint32_t a = fairorder_dept(&fx.fo, "a"), b = fairorder_dept(&fx.fo, "b");
        for (int i = 0; i < 4; i++)
                fairorder_charge(&fx.fo, a, slot, +1);
        add_jobs("a", 4, slot);
        add_jobs("b", 4, slot);
        rank(six, fx.n, true);
        /* a holds 4 of 6 slots against an entitlement of 3: b's jobs go first, all four of them */
        ck_assert_uint_eq(count_in_prefix(4, "b"), 4);
        ck_assert_double_eq_tol(fx.rep.nodes[a].entitled, 0.5, 1e-9);
        ck_assert_double_eq_tol(fx.rep.nodes[a].share, 4.0 / 6, 1e-9);
        ck_assert_uint_eq(fx.rep.nodes[a].running, 4);
        ck_assert_uint_eq(fx.rep.nodes[b].pending, 4);
        ck_assert_uint_eq(fx.rep.nodes[0].running, 4); /* the root sums its subtree */
        ck_assert_int_eq(fx.rep.next, 4);
        ck_assert_uint_eq(fx.rep.next_dept, b);
        fairorder_why(&fx.fo, &fx.rep, why, sizeof(why));
        ck_assert_str_eq(why, "b is 0.50 below its entitlement (0.00 of 0.50)");
        /* they end: a is back to nothing, and the tie goes to the older job */
        for (int i = 0; i < 4; i++)
                fairorder_charge(&fx.fo, a, slot, -1);
        rank(six, fx.n, true);
        ck_assert_double_eq(fx.rep.nodes[a].share, 0);
        ck_assert_int_eq(fx.rep.next, 0);
}
END_TEST

START_TEST(caps_hold_jobs_and_bound_the_entitlement) {
        static const char *const paths[] = { "a", "b" };
        static const double w[] = { 3, 1 }, caps[] = { 0.5, 0 };
        tree(FAIR_MCH, 2, paths, w, caps);
        uint32_t a = fairorder_dept(&fx.fo, "a"), b = fairorder_dept(&fx.fo, "b");
        fairorder_charge(&fx.fo, a, slot, +1);
        fairorder_charge(&fx.fo, a, slot, +1);
        add_jobs("a", 6, slot);
        add_jobs("b", 6, slot);
        rank(six, fx.n, true);
        /* a runs 2 of 6 CPUs under a cap of 3: one more job of a, the other five held */
        ck_assert_uint_eq(fx.kept, 7);
        ck_assert_uint_eq(count_in_prefix(fx.kept, "a"), 1);
        for (size_t i = fx.kept; i < fx.n; i++)
                ck_assert_uint_eq(fx.jobs[fx.order[i]].dept, a);
        for (size_t i = fx.kept + 1; i < fx.n; i++)
                ck_assert_uint_gt(fx.order[i], fx.order[i - 1]); /* held in submission order */
        ck_assert(fx.rep.nodes[a].held);
        ck_assert(!fx.rep.nodes[b].held);
        /* weight 3 would give a 0.75; the cap keeps it at half */
        ck_assert_double_eq_tol(fx.rep.nodes[a].entitled, 0.5, 1e-9);
        ck_assert_double_eq_tol(fx.rep.nodes[b].entitled, 0.5, 1e-9);
        /* a single department under a cap is held too, without solving for order */
        rank(six, 6, false);
        ck_assert_uint_eq(fx.kept, 1);
}
END_TEST

START_TEST(the_hierarchy_splits_a_departments_share) {
        static const char *const paths[] = { "physics", "physics/astro", "physics/hep", "cs" };
        static const double w[] = { 1, 1, 1, 1 };
        tree((fair_algo)_i, 4, paths, w, NULL);
        add_jobs("physics/astro", 10, slot);
        add_jobs("physics/hep", 10, slot);
        add_jobs("cs", 10, slot);
        rank((res_t){ .mcpu = 8000, .mem = 8 * GB }, fx.n, true);
        ck_assert_double_eq_tol(fx.rep.nodes[fairorder_dept(&fx.fo, "physics/astro")].entitled, 0.25, 1e-9);
        ck_assert_double_eq_tol(fx.rep.nodes[fairorder_dept(&fx.fo, "physics/hep")].entitled, 0.25, 1e-9);
        ck_assert_double_eq_tol(fx.rep.nodes[fairorder_dept(&fx.fo, "cs")].entitled, 0.5, 1e-9);
        ck_assert_uint_eq(count_in_prefix(8, "cs"), 4);
        ck_assert_uint_eq(count_in_prefix(8, "physics/astro"), 2);
}
END_TEST

START_TEST(groups_that_are_not_leaves_go_to_the_default_department) {
        static const char *const paths[] = { "physics", "physics/astro", "physics-x", "physics.y" };
        static const double w[] = { 1, 1, 1, 1 };
        tree(FAIR_MCH, 4, paths, w, NULL);
        const fairorder *fo = &fx.fo;
        ck_assert(fairorder_has_depts(fo));
        uint32_t deflt = (uint32_t)fo->n - 1;
        ck_assert_str_eq(fo->nodes[deflt].name, FAIRORDER_DEFAULT);
        ck_assert_uint_eq(fairorder_dept(fo, NULL), deflt);
        ck_assert_uint_eq(fairorder_dept(fo, "chemistry"), deflt);
        ck_assert_uint_eq(fairorder_dept(fo, "physics"), deflt); /* has a sub-department */
        ck_assert_uint_eq(fairorder_dept(fo, ""), deflt);        /* the root */
        ck_assert_str_eq(fo->nodes[fairorder_dept(fo, "physics/astro")].name, "physics/astro");
        ck_assert_str_eq(fo->nodes[fairorder_dept(fo, "physics-x")].name, "physics-x");
        ck_assert_str_eq(fo->nodes[fairorder_dept(fo, "physics.y")].name, "physics.y");
}
END_TEST

START_TEST(one_department_keeps_submission_order) {
        tree(FAIR_MCH, 0, NULL, NULL, NULL); /* no departments: everything in the default one */
        ck_assert_uint_eq(fx.fo.n, 2);
        ck_assert(!fairorder_has_depts(&fx.fo)); /* so the controller skips the ranking */
        add_jobs("cs", 5, slot);
        add_jobs(NULL, 3, (res_t){ .mcpu = 500, .mem = GB });
        rank(six, fx.n, false);
        ck_assert_uint_eq(fx.kept, fx.n);
        for (size_t i = 0; i < fx.n; i++)
                ck_assert_uint_eq(fx.order[i], i);
        rank((res_t){ 0 }, fx.n, false); /* nothing up: submission order, nothing held */
        ck_assert_uint_eq(fx.kept, fx.n);
}
END_TEST

START_TEST(a_job_larger_than_its_entitlement_is_not_left_for_last) {
        static const char *const paths[] = { "a", "big" };
        static const double w[] = { 5, 1 };
        tree(FAIR_MCH, 2, paths, w, NULL);
        add_jobs("a", 20, slot);
        add_jobs("big", 1, (res_t){ .mcpu = 4000, .mem = GB }); /* 4 of 6 CPUs, weight 1 of 6 */
        rank(six, fx.n, false);
        size_t at = 0;
        while (fx.jobs[fx.order[at]].dept != fairorder_dept(&fx.fo, "big"))
                at++;
        ck_assert_uint_lt(at, 10); /* one job's worth of entitlement at least: it comes before a's tail */
}
END_TEST

/* The docs' finite-demand tree (docs/policies.md): n2/c wants one job, so MCH keeps n2/b at half
 * n1/a's weight and entitles n2 to 0.4; H-DRF, the default, gives n2 its guaranteed 0.5, and
 * the report carries MCH's figure beside it for `colony shares`. */
START_TEST(the_report_says_where_mch_and_hdrf_part) {
        static const char *const paths[] = { "n1", "n1/a", "n2", "n2/b", "n2/c" };
        static const double w[] = { 1, 1, 1, 1, 1 };
        static const res_t one = { .mcpu = 1000, .mem = GB }, ten = { .mcpu = 10000, .mem = 10 * GB };
        tree(FAIR_DEFAULT, 5, paths, w, NULL);
        add_jobs("n1/a", 20, one);
        add_jobs("n2/b", 20, one);
        add_jobs("n2/c", 1, one);
        rank(ten, fx.n, true);
        size_t n2 = 0;
        for (size_t i = 0; i < fx.fo.n; i++)
                n2 = strcmp(fx.fo.nodes[i].name, "n2") == 0 ? i : n2;
        ck_assert_int_eq(fairorder_other_algo(&fx.fo), FAIR_MCH);
        ck_assert_double_eq_tol(fx.rep.nodes[n2].entitled, 0.5, 1e-9);
        ck_assert_double_eq_tol(fx.rep.nodes[n2].entitled_other, 0.4, 1e-9);
}
END_TEST

/* GPUs are a resource of the share where the cluster has some: on <64 cores, 512 GiB, 8 GPUs>,
 * ml's job (1 GPU, 2 cores) is 1/8 of the GPUs, as physics' (8 cores) is 1/8 of the cores: ml is
 * entitled to the 8 GPUs (16 cores), physics to 6 jobs (48 cores), and the first 14 offered are
 * those. Counted on cores alone, ml's job would be 1/32 and ml would get 9 of the first 14. A
 * cap of 1/2 on ml holds its jobs past the 4th GPU, of a cluster with GPUs. */
static const res_t lab = { .mcpu = 64000, .mem = 512 * GB, .gpus = 8 };
static const res_t gpu_job = { .mcpu = 2000, .mem = GB, .gpus = 1 }, cpu_job = { .mcpu = 8000, .mem = GB };

/* ml and physics, ml capped at cap (0: none), 10 jobs pending each, ml's first. */
static void ml_and_physics(fair_algo algo, double cap) {
        static const char *const paths[] = { "ml", "physics" };
        static const double w[] = { 1, 1 };
        const double caps[] = { cap, 0 };
        fairorder_free(&fx.fo);
        fx.n = 0;
        tree(algo, 2, paths, w, caps);
        add_jobs("ml", 10, gpu_job);
        add_jobs("physics", 10, cpu_job);
}

START_TEST(gpus_count_in_the_dominant_share) {
        ml_and_physics((fair_algo)_i, 0);
        rank(lab, fx.n, true);
        ck_assert_uint_eq(fx.kept, fx.n);
        ck_assert_uint_eq(count_in_prefix(14, "ml"), 8);
        ck_assert_uint_eq(count_in_prefix(14, "physics"), 6);
        fairorder_charge(&fx.fo, fairorder_dept(&fx.fo, "ml"), gpu_job, +1);
        rank(lab, fx.n, true);
        ck_assert_double_eq_tol(fx.shares[fairorder_dept(&fx.fo, "ml")].share, 1.0 / 8, 1e-12);

        ml_and_physics((fair_algo)_i, 0.5);
        rank(lab, fx.n, false);
        ck_assert_uint_eq(count_in_prefix(fx.kept, "ml"), 4);
        ck_assert_uint_eq(fx.kept, 14);
        /* with the GPU nodes down the cap says nothing of GPUs: the jobs wait for a node, not the cap */
        rank((res_t){ .mcpu = 64000, .mem = 512 * GB }, fx.n, false);
        ck_assert_uint_eq(fx.kept, fx.n);
}
END_TEST

static fairorder_walk *walk_of_jobs(res_t capacity) {
        fairorder_walk *walk;
        ck_assert_int_eq(fairorder_walk_jobs(&fx.fo, capacity, fx.jobs, fx.n, &walk), 0);
        return walk;
}

/* A pass that stops early walks the order a window at a time: windows of any size, laid end
 * to end, are fairorder_rank's order, and the jobs held on the way are its held ones. Three
 * departments of weights 3, 2, 1, the first capped at a third and running one job already. */
START_TEST(windows_of_the_walk_are_the_ranked_order) {
        static const char *const paths[] = { "a", "b", "c" };
        static const double w[] = { 3, 2, 1 }, caps[] = { 1.0 / 3, 0, 0 };
        tree((fair_algo)_i, 3, paths, w, caps);
        fairorder_charge(&fx.fo, fairorder_dept(&fx.fo, "a"), slot, +1);
        for (size_t round = 0; round < 4; round++) { /* interleaved submissions */
                add_jobs("a", 4, slot);
                add_jobs("b", 3, (res_t){ .mcpu = 500, .mem = 32 * MB });
                add_jobs("c", 2, slot);
        }
        rank(six, fx.n, false);
        ck_assert_uint_lt(fx.kept, fx.n); /* the cap held some of a's */
        for (size_t window = 1; window <= fx.n; window++) {
                fairorder_walk *walk = walk_of_jobs(six);
                fairorder_pick got[64];
                size_t n = 0, k;
                while ((k = fairorder_walk_next(walk, &got[n], window)) > 0)
                        n += k;
                ck_assert_uint_eq(n, fx.kept);
                for (size_t i = 0; i < n; i++) {
                        ck_assert_uint_eq(got[i].at, fx.order[i]);
                        ck_assert_uint_eq(got[i].leaf, fx.jobs[fx.order[i]].dept);
                }
                const fairorder_pick *held;
                ck_assert_uint_eq(fairorder_walk_stop(walk, &held), fx.n - fx.kept);
                for (size_t i = 0; i < fx.n - fx.kept; i++)
                        ck_assert_uint_eq(held[i].at, fx.order[fx.kept + i]);
                fairorder_walk_free(walk);
        }
}
END_TEST

/* Tree paths (a first, capped at a third) under algo, a running its third of six CPUs: a. */
static uint32_t a_at_its_cap(fair_algo algo, size_t n, const char *const *paths, const double *w, const double *caps) {
        tree(algo, n, paths, w, caps);
        uint32_t a = fairorder_dept(&fx.fo, "a");
        fairorder_charge(&fx.fo, a, slot, +1);
        fairorder_charge(&fx.fo, a, slot, +1);
        return a;
}

/* A walk stopped after its first job still holds a department its cap holds now, so that its
 * jobs wait for the cap rather than behind the job that stopped the pass; a department whose
 * next job would fit under its cap is not held. */
START_TEST(a_walk_stopped_early_holds_the_departments_at_their_cap) {
        static const char *const paths[] = { "a", "b", "c" };
        static const double w[] = { 1, 1, 1 }, caps[] = { 1.0 / 3, 0, 0.5 };
        uint32_t a = a_at_its_cap((fair_algo)_i, 3, paths, w, caps);
        add_jobs("a", 3, slot);
        add_jobs("b", 3, slot);
        add_jobs("c", 3, slot);
        fairorder_walk *walk = walk_of_jobs(six);
        fairorder_pick got[1];
        ck_assert_uint_eq(fairorder_walk_next(walk, got, 1), 1);
        ck_assert_uint_ne(got[0].leaf, a);
        const fairorder_pick *held;
        ck_assert_uint_eq(fairorder_walk_stop(walk, &held), 3);
        for (size_t i = 0; i < 3; i++)
                ck_assert_uint_eq(held[i].at, i); /* a's three, in submission order */
        fairorder_walk_free(walk);
}
END_TEST

/* A job that may not start takes no turn: department a's five held jobs do not put its one
 * runnable job behind b's, which ranks them last; they count in a's demand all the same (the
 * same entitlements as without them). */
START_TEST(jobs_that_wait_take_no_turn_and_rank_last) {
        static const char *const paths[] = { "a", "b" };
        static const double w[] = { 1, 1 };
        tree((fair_algo)_i, 2, paths, w, NULL);
        add_jobs("a", 5, slot);
        for (size_t i = 0; i < 5; i++)
                fx.jobs[i].waits = true;
        add_jobs("a", 1, slot);
        add_jobs("b", 3, slot);
        rank(six, fx.n, true);
        ck_assert_uint_eq(fx.kept, 4);
        ck_assert_uint_eq(fx.order[0], 5); /* a's runnable job, first by its place */
        ck_assert_int_eq(fx.rep.next, 5);
        ck_assert_uint_eq(fx.order[1], 6);
        for (size_t i = 0; i < 5; i++)
                ck_assert_uint_eq(fx.order[fx.kept + i], i); /* the waiting, last, in submission order */
        double entitled = fx.shares[fairorder_dept(&fx.fo, "a")].entitled;
        for (size_t i = 0; i < 5; i++)
                fx.jobs[i].waits = false;
        rank(six, fx.n, true);
        ck_assert_uint_eq(fx.order[0], 0);
        ck_assert_double_eq_tol(fx.shares[fairorder_dept(&fx.fo, "a")].entitled, entitled, 1e-12);
}
END_TEST

/* fx.jobs as a walk's source, each leaf's list in submission order, counting the reads of each
 * leaf's list. */
static uint32_t reads[16];

static uint32_t counted_next(void *arg, uint32_t leaf, uint32_t after, uint64_t *seq, res_t *req) {
        (void)arg;
        reads[leaf]++;
        for (uint32_t j = after == UINT32_MAX ? 0 : after + 1; j < fx.n; j++)
                if (fx.jobs[j].dept == leaf) {
                        *seq = j;
                        *req = fx.jobs[j].req;
                        return j;
                }
        return UINT32_MAX;
}

/* Walk fx.jobs whole on six CPUs, holding heads or not: the picks into got (*ngot), the held
 * ones' places into held (returns how many). */
static size_t walk_counted(bool heads, fairorder_pick *got, size_t *ngot, uint32_t *held_at) {
        uint32_t npend[16] = { 0 };
        res_t sum[16] = { 0 };
        for (size_t i = 0; i < fx.n; i++) {
                npend[fx.jobs[i].dept]++;
                sum[fx.jobs[i].dept] = res_add(sum[fx.jobs[i].dept], fx.jobs[i].req);
        }
        memset(reads, 0, sizeof(reads));
        fairorder_source src = { npend, sum, counted_next, NULL };
        fairorder_walk *walk;
        ck_assert_int_eq(fairorder_walk_start(&fx.fo, six, &src, &walk), 0);
        if (heads)
                fairorder_walk_hold_heads(walk);
        *ngot = fairorder_walk_next(walk, got, 64);
        const fairorder_pick *held;
        size_t nheld = fairorder_walk_stop(walk, &held);
        for (size_t i = 0; i < nheld; i++)
                held_at[i] = held[i].at;
        fairorder_walk_free(walk);
        return nheld;
}

/* A walk that holds heads (a pass reading as far as it places) reads a department its cap holds
 * no further than that department's next job, which it alone names as held; the order of the
 * jobs it hands out is the whole walk's. */
START_TEST(a_walk_holding_heads_reads_a_capped_department_to_its_next_job) {
        static const char *const paths[] = { "a", "b" };
        static const double w[] = { 1, 1 }, caps[] = { 1.0 / 3, 0 };
        uint32_t a = a_at_its_cap((fair_algo)_i, 2, paths, w, caps);
        add_jobs("b", 2, slot);
        add_jobs("a", 40, slot);
        add_jobs("b", 3, slot);
        fairorder_pick whole[64], heads[64];
        uint32_t held_whole[64], held_heads[64];
        size_t nwhole, nheads;
        ck_assert_uint_eq(walk_counted(false, whole, &nwhole, held_whole), 40);
        ck_assert_uint_eq(reads[a], 41); /* each of a's jobs, and its end */
        ck_assert_uint_eq(walk_counted(true, heads, &nheads, held_heads), 1);
        ck_assert_uint_eq(reads[a], 1);
        ck_assert_uint_eq(held_heads[0], held_whole[0]);
        ck_assert_uint_eq(held_heads[0], 2); /* a's first */
        ck_assert_uint_eq(nheads, 5);
        ck_assert_uint_eq(nwhole, 5);
        for (size_t i = 0; i < nheads; i++)
                ck_assert_uint_eq(heads[i].at, whole[i].at);
}
END_TEST

static Suite *fairorder_suite(void) {
        Suite *s = suite_create("fairorder");
        TCase *tc = tcase_create("fairorder");
        tcase_add_checked_fixture(tc, setup, teardown);
        /* every algorithm agrees on these flat and two-level trees of identical jobs */
        tcase_add_loop_test(tc, weights_two_to_one_interleave_from_the_first_job, FAIR_DRF + 1, _FAIR_ALGO_MAX);
        tcase_add_test(tc, the_report_says_where_mch_and_hdrf_part);
        tcase_add_loop_test(tc, the_hierarchy_splits_a_departments_share, FAIR_HDRF, FAIR_MCH + 1);
        tcase_add_test(tc, running_jobs_count_against_their_department);
        tcase_add_test(tc, caps_hold_jobs_and_bound_the_entitlement);
        tcase_add_test(tc, groups_that_are_not_leaves_go_to_the_default_department);
        tcase_add_test(tc, one_department_keeps_submission_order);
        tcase_add_test(tc, a_job_larger_than_its_entitlement_is_not_left_for_last);
        tcase_add_loop_test(tc, gpus_count_in_the_dominant_share, FAIR_HDRF, FAIR_MCH + 1);
        tcase_add_loop_test(tc, windows_of_the_walk_are_the_ranked_order, FAIR_DRF + 1, _FAIR_ALGO_MAX);
        tcase_add_loop_test(tc, a_walk_stopped_early_holds_the_departments_at_their_cap, FAIR_HDRF, FAIR_MCH + 1);
        tcase_add_loop_test(tc, jobs_that_wait_take_no_turn_and_rank_last, FAIR_HDRF, FAIR_MCH + 1);
        tcase_add_loop_test(tc, a_walk_holding_heads_reads_a_capped_department_to_its_next_job, FAIR_HDRF,
                            FAIR_MCH + 1);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(fairorder_suite)
