/* test_lotes.c - LoTES (policies/lotes.h) on instances small enough to solve by hand. */
#include "check_main.h"
#include "lotes.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define GiB      ((int64_t)1 << 30)
#define CORES(n) (1000 * (int64_t)(n))

/* The hand-solved case. Rates mu_jk = 1 job/s everywhere.
 *   configuration 1: 1 machine of (4 cores, 8 GiB); configuration 2: 2 machines of (8 cores, 4 GiB)
 *   class c1: alpha 1/2, (1 core, 2 GiB), memory-heavy; class c2: alpha 1/2, (2 cores, 1 GiB)
 * Write t_jk for the class-k jobs configuration j holds in the fluid model, so that
 * delta_jkl = t_jk r_kl / (n_j c_jl) ((3) holds by construction), (2) reads
 * t_1k + t_2k >= lambda / 2 and (4) reads, per configuration and resource:
 *   t11 + 2 t12 <= 4, 2 t11 + t12 <= 8;  t21 + 2 t22 <= 16, 2 t21 + t22 <= 8.
 * Adding the two memory rows: 2 (t11 + t21) + (t12 + t22) <= 16, so 3 lambda / 2 <= 16 and
 * lambda* <= 32/3; it is reached with both memory rows tight and t11 + t21 = t12 + t22 = 16/3.
 * Then 2 t11 + t12 = 8 with t11 + 2 t12 <= 4 forces t11 = 4, t12 = 0, and so t21 = 4/3,
 * t22 = 16/3 (cores of configuration 2: 4/3 + 32/3 = 12 <= 16). The optimum is unique:
 *   delta_1,c1 = (4/4, 8/8) = (1, 1), delta_1,c2 = 0,
 *   delta_2,c1 = ((4/3)/16, (8/3)/8) = (1/12, 1/3), delta_2,c2 = ((32/3)/16, (16/3)/8) = (2/3, 2/3).
 * Stage 2: configuration 1 over {c1} has one bin, {4 x c1}; configuration 2 over {c1, c2} has
 * {2 c1}, {1 c1, 2 c2} and {4 c2} (x + 2y <= 8 cores, 2x + y <= 4 GiB, maximal). Its LP reaches
 * lambda* = 32/3 as well, since these bins fill their machines exactly. */
static const lotes_config hand_configs[] = { { 1, { .mcpu = CORES(4), .mem = 8 * GiB } },
                                             { 2, { .mcpu = CORES(8), .mem = 4 * GiB } } };
static const lotes_class hand_classes[] = { { "c1", 0.5, { .mcpu = CORES(1), .mem = 2 * GiB } },
                                            { "c2", 0.5, { .mcpu = CORES(2), .mem = 1 * GiB } } };
static const double ones[] = { 1, 1, 1, 1 };
static const lotes_problem hand = { hand_configs, 2, hand_classes, 2, ones };

static double delta(const lotes_alloc *a, size_t j, size_t k, int l) {
        return a->delta[(j * 2 + k) * LOTES_NRES + (size_t)l];
}

START_TEST(allocation_lp_matches_the_hand_solution) {
        lotes_alloc a;
        char err[256];
        ck_assert_int_eq(lotes_allocate(&hand, &a, err, sizeof(err)), 0);
        ck_assert_double_eq_tol(a.lambda, 32.0 / 3, 1e-9);
        const double want[2][2][2] = { { { 1, 1 }, { 0, 0 } }, { { 1.0 / 12, 1.0 / 3 }, { 2.0 / 3, 2.0 / 3 } } };
        for (size_t j = 0; j < 2; j++)
                for (size_t k = 0; k < 2; k++)
                        for (int l = 0; l < 2; l++)
                                ck_assert_double_eq_tol(delta(&a, j, k, l), want[j][k][l], 1e-9);
        ck_assert(lotes_alloc_uses(&hand, &a, 0, 0) && !lotes_alloc_uses(&hand, &a, 0, 1));
        lotes_alloc_free(&a);
}
END_TEST

/* The earlier LoTES report (section 6) schedules MapReduce jobs by multiplying each class's
 * requirement by its expected tasks per job in the allocation LP. With the same factor T for
 * every class, the solver must return lambda* / T and the same delta, which is why colony sim
 * divides lambda* instead (a literal 300-task requirement would exceed every machine, and a
 * class gets no share of a configuration it does not fit). T = 1.5 keeps who fits where. */
START_TEST(a_requirement_scaled_by_tasks_per_job_divides_lambda_and_keeps_delta) {
        const double tasks = 1.5;
        lotes_class scaled[2];
        for (size_t k = 0; k < 2; k++) {
                scaled[k] = hand_classes[k];
                scaled[k].req.mcpu = (int64_t)llround((double)scaled[k].req.mcpu * tasks);
                scaled[k].req.mem = (int64_t)llround((double)scaled[k].req.mem * tasks);
        }
        const lotes_problem p = { hand_configs, 2, scaled, 2, ones };
        lotes_alloc a, b;
        char err[256];
        ck_assert_int_eq(lotes_allocate(&hand, &a, err, sizeof(err)), 0);
        ck_assert_int_eq(lotes_allocate(&p, &b, err, sizeof(err)), 0);
        ck_assert_double_eq_tol(b.lambda, a.lambda / tasks, 1e-9);
        for (size_t i = 0; i < 2 * 2 * LOTES_NRES; i++)
                ck_assert_double_eq_tol(b.delta[i], a.delta[i], 1e-9);
        lotes_alloc_free(&a);
        lotes_alloc_free(&b);
}
END_TEST

START_TEST(machine_assignment_lp_and_rounding) {
        lotes_alloc a;
        lotes_plan plan;
        char err[256];
        ck_assert_int_eq(lotes_allocate(&hand, &a, err, sizeof(err)), 0);
        ck_assert_int_eq(lotes_assign(&hand, &a, &plan, err, sizeof(err)), 0);
        ck_assert_uint_eq(plan.bins[0].n, 1);
        ck_assert_uint_eq(plan.bins[0].count[0], 4);
        ck_assert_uint_eq(plan.bins[1].n, 3);
        ck_assert_double_eq_tol(plan.lambda_lp, 32.0 / 3, 1e-9);
        for (size_t j = 0; j < 2; j++) { /* (9) after rounding: every machine emulates one bin */
                uint32_t machines = 0;
                for (size_t i = 0; i < plan.bins[j].n; i++)
                        machines += plan.machines[plan.first[j] + i];
                ck_assert_uint_eq(machines, hand_configs[j].count);
        }
        /* The LP is degenerate on configuration 2 (any 6 x1 + 3 x2 = 4): the two vertices round
         * to lambda 8 ({2 c1} + {4 c2}) or 10 ({1 c1, 2 c2} + {4 c2}). */
        ck_assert(fabs(plan.lambda - 8) < 1e-9 || fabs(plan.lambda - 10) < 1e-9);
        ck_assert_double_eq_tol(plan.slots[0 * 2 + 0], 4, 1e-9);
        ck_assert_double_eq_tol(plan.slots[0 * 2 + 1], 0, 1e-9);
        lotes_plan_free(&plan);
        lotes_alloc_free(&a);
}
END_TEST

/* Brute force: every (n1, n2, n3) that fits and to which no job of a used class can be added. */
static size_t brute_force_bins(const lotes_problem *p, size_t j, const bool *use, uint32_t (*out)[3]) {
        size_t n = 0;
        res_t cap = p->configs[j].capacity;
        for (uint32_t a = 0; a <= (use[0] ? 20 : 0); a++)
                for (uint32_t b = 0; b <= (use[1] ? 20 : 0); b++)
                        for (uint32_t c = 0; c <= (use[2] ? 20 : 0); c++) {
                                uint32_t v[3] = { a, b, c };
                                res_t used = { 0 };
                                for (size_t k = 0; k < 3; k++)
                                        used = res_add(used, (res_t){ .mcpu = v[k] * p->classes[k].req.mcpu,
                                                                      .mem = v[k] * p->classes[k].req.mem });
                                if (!res_fits(used, cap))
                                        continue;
                                bool maximal = true;
                                for (size_t k = 0; k < 3; k++)
                                        maximal &= !use[k] || !res_fits(res_add(used, p->classes[k].req), cap);
                                if (maximal)
                                        memcpy(out[n++], v, sizeof(v));
                        }
        return n;
}

static bool listed(const lotes_bins *b, const uint32_t *v) {
        for (size_t i = 0; i < b->n; i++)
                if (memcmp(&b->count[i * 3], v, 3 * sizeof(*v)) == 0)
                        return true;
        return false;
}

START_TEST(non_dominated_bins_equal_brute_force) {
        static const lotes_config configs[] = { { 1, { .mcpu = CORES(10), .mem = 12 * GiB } } };
        static const lotes_class classes[] = { { "a", 1, { .mcpu = CORES(1), .mem = 3 * GiB } },
                                               { "b", 1, { .mcpu = CORES(2), .mem = 1 * GiB } },
                                               { "c", 1, { .mcpu = CORES(3), .mem = 2 * GiB } } };
        const lotes_problem p = { configs, 1, classes, 3, (const double[]){ 1, 1, 1 } };
        const bool uses[][3] = { { true, true, true }, { true, false, true }, { false, true, false } };
        uint32_t want[512][3];
        for (size_t u = 0; u < 3; u++) {
                lotes_bins b;
                ck_assert_int_eq(lotes_enumerate_bins(&p, 0, uses[u], &b), 0);
                size_t n = brute_force_bins(&p, 0, uses[u], want);
                ck_assert_uint_eq(b.n, n);
                for (size_t i = 0; i < n; i++)
                        ck_assert(listed(&b, want[i]));
                lotes_bins_free(&b);
        }
}
END_TEST

START_TEST(paper_fig5_bins) {
        /* Fig. 5: one resource of 7, classes of 2 and 3: the non-dominated bins are (3, 0), (2, 1)
         * and (0, 2); (1, 1) leaves room for one more of the first. Memory is never short here. */
        static const lotes_config configs[] = { { 1, { .mcpu = CORES(7), .mem = 64 * GiB } } };
        static const lotes_class classes[] = { { "a", 1, { .mcpu = CORES(2), .mem = GiB } },
                                               { "b", 1, { .mcpu = CORES(3), .mem = GiB } } };
        const lotes_problem p = { configs, 1, classes, 2, ones };
        lotes_bins b;
        ck_assert_int_eq(lotes_enumerate_bins(&p, 0, (const bool[]){ true, true }, &b), 0);
        ck_assert_uint_eq(b.n, 3);
        const uint32_t want[3][2] = { { 3, 0 }, { 2, 1 }, { 0, 2 } };
        for (size_t i = 0; i < 3; i++)
                ck_assert(memcmp(&b.count[i * 2], want[i], sizeof(want[i])) == 0);
        lotes_bins_free(&b);
}
END_TEST

START_TEST(bad_inputs_are_refused_with_a_reason) {
        char err[256];
        lotes_alloc a;
        static const lotes_class huge[] = { { "huge", 1, { .mcpu = CORES(64), .mem = GiB } } };
        lotes_problem p = { hand_configs, 2, huge, 1, ones };
        ck_assert_int_eq(lotes_allocate(&p, &a, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err, "class huge: no configuration can run it, so lambda* = 0");
        static const lotes_class idle[] = { { "idle", 0, { .mcpu = CORES(1), .mem = GiB } } };
        p = (lotes_problem){ hand_configs, 2, idle, 1, ones };
        ck_assert_int_eq(lotes_allocate(&p, &a, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err, "the class proportions (alpha) must sum to more than 0");
        static const lotes_config none[] = { { 0, { .mcpu = CORES(4), .mem = GiB } } };
        p = (lotes_problem){ none, 1, hand_classes, 2, ones };
        ck_assert_int_eq(lotes_allocate(&p, &a, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err, "configuration 1: needs machines, cores and memory");
        const double nan_rate[] = { NAN, 1, 1, 1 };
        p = (lotes_problem){ hand_configs, 2, hand_classes, 2, nan_rate };
        ck_assert_int_eq(lotes_allocate(&p, &a, err, sizeof(err)), -EINVAL);
        const double no_rate[] = { 0, 0, 0, 0 }; /* nothing runs anywhere */
        p = (lotes_problem){ hand_configs, 2, hand_classes, 2, no_rate };
        ck_assert_int_eq(lotes_allocate(&p, &a, err, sizeof(err)), -EINVAL);
}
END_TEST

START_TEST(roulette_draws_in_proportion_and_skips_tried) {
        lotes_plan plan = { .nconfigs = 3, .nclasses = 1, .slots = (double[]){ 1, 0, 3 } };
        bool tried[3] = { false, false, false };
        uint64_t rng = 42;
        size_t hits[3] = { 0 };
        for (int i = 0; i < 40000; i++)
                hits[lotes_roulette(&plan, 0, tried, &rng)]++;
        ck_assert_uint_eq(hits[1], 0); /* Delta = 0: never */
        ck_assert_double_eq_tol((double)hits[2] / 40000, 0.75, 0.01);
        tried[2] = true;
        ck_assert_int_eq(lotes_roulette(&plan, 0, tried, &rng), 0);
        tried[0] = true;
        ck_assert_int_eq(lotes_roulette(&plan, 0, tried, &rng), -1);
}
END_TEST

/* The hand case's cluster for the dispatcher: machine 0 of configuration 1, 1 and 2 of 2. */
typedef struct cluster {
        lotes_alloc a;
        lotes_plan plan;
        sched_dispatcher *d;
        sched_machine m[3];
        sched_assignment out[16];
} cluster;

static void cluster_init(cluster *c, uint64_t seed) {
        char err[256];
        ck_assert_int_eq(lotes_allocate(&hand, &c->a, err, sizeof(err)), 0);
        ck_assert_int_eq(lotes_assign(&hand, &c->a, &c->plan, err, sizeof(err)), 0);
        ck_assert_int_eq(lotes_dispatcher_new(&hand, &c->plan, seed, &c->d), 0);
        for (uint32_t i = 0; i < 3; i++) {
                res_t cap = hand_configs[i == 0 ? 0 : 1].capacity;
                c->m[i] = (sched_machine){ .index = i, .capacity = cap, .free = cap, .up = 1 };
        }
}

static void cluster_free(cluster *c) {
        sched_dispatcher_free(c->d);
        lotes_plan_free(&c->plan);
        lotes_alloc_free(&c->a);
}

static sched_job job(uint64_t id, const char *cls) {
        return (sched_job){ .id = id, .req = hand_classes[cls[1] - '1'].req, .type = cls };
}

START_TEST(dispatch_fills_what_fits_and_never_overcommits) {
        cluster c;
        cluster_init(&c, 7);
        sched_job jobs[12];
        for (uint64_t i = 0; i < 12; i++)
                jobs[i] = job(i + 1, i % 2 ? "c2" : "c1");
        long n = sched_dispatch(c.d, c.m, 3, jobs, 12, c.out);
        ck_assert_int_ge(n, 1);
        for (size_t i = 0; i < 3; i++) /* never more than a machine holds */
                ck_assert(c.m[i].free.mcpu >= 0 && c.m[i].free.mem >= 0);
        res_t placed = { 0 };
        for (long a = 0; a < n; a++)
                placed = res_add(placed, jobs[c.out[a].job_id - 1].req);
        for (size_t i = 0; i < 3; i++) /* what was charged is what was placed */
                placed = res_add(placed, c.m[i].free);
        ck_assert_int_eq(placed.mcpu, CORES(4 + 8 + 8));
        ck_assert_int_eq(placed.mem, 8 * GiB + 4 * GiB + 4 * GiB);
        /* an arrival that fits somewhere is never left waiting */
        bool waiting[12] = { false };
        for (size_t i = 0; i < 12; i++)
                waiting[i] = true;
        for (long a = 0; a < n; a++)
                waiting[c.out[a].job_id - 1] = false;
        for (size_t i = 0; i < 12; i++)
                for (size_t m = 0; waiting[i] && m < 3; m++)
                        ck_assert(!res_fits(jobs[i].req, c.m[m].free));
        cluster_free(&c);
}
END_TEST

START_TEST(an_exit_never_starts_a_class_the_configuration_does_not_serve) {
        cluster c;
        cluster_init(&c, 1);
        /* fill the cluster with c1 jobs, then queue one c2 job */
        sched_job jobs[16];
        size_t n = 0;
        long placed;
        do {
                jobs[n] = job(n + 1, "c1");
                n++;
                placed = sched_dispatch(c.d, c.m, 3, jobs + n - 1, 1, c.out);
        } while (placed == 1);
        ck_assert_uint_eq(n - 1, 4 + 2 + 2); /* configuration 1 holds 4, each machine of 2 holds 2 */
        sched_job wait = job(100, "c2");
        ck_assert_int_eq(sched_dispatch(c.d, c.m, 3, &wait, 1, c.out), 0);
        /* a c1 job leaves machine 0 (configuration 1, where Delta_c2 = 0): c2 fits, yet waits */
        c.m[0].free = res_add(c.m[0].free, hand_classes[0].req);
        c.m[0].free = res_add(c.m[0].free, hand_classes[0].req);
        sched_dispatch_exit(c.d, &jobs[0], 0);
        sched_dispatch_exit(c.d, &jobs[1], 0);
        ck_assert(res_fits(wait.req, c.m[0].free));
        ck_assert_int_eq(sched_dispatch(c.d, c.m, 3, &wait, 1, c.out), 0);
        /* two c1 jobs leave machine 1 (configuration 2 serves c2): it starts there */
        c.m[1].free = res_add(c.m[1].free, res_add(hand_classes[0].req, hand_classes[0].req));
        sched_dispatch_exit(c.d, &jobs[2], 1);
        ck_assert_int_eq(sched_dispatch(c.d, c.m, 3, &wait, 1, c.out), 1);
        ck_assert_uint_eq(c.out[0].job_id, 100);
        ck_assert_uint_eq(c.out[0].machine, 1);
        cluster_free(&c);
}
END_TEST

/* Job 1 held (not offered) while job 2 arrives and runs, then released on an idle cluster: its
 * id is below every id offered before, yet it starts at once, with no exit to wait for. */
START_TEST(a_job_offered_late_starts_on_an_idle_cluster) {
        cluster c;
        cluster_init(&c, 1);
        sched_job jobs[] = { job(1, "c1"), job(2, "c1") };
        ck_assert_int_eq(sched_dispatch(c.d, c.m, 3, &jobs[1], 1, c.out), 1);
        size_t on = c.out[0].machine;
        c.m[on].free = c.m[on].capacity;
        sched_dispatch_exit(c.d, &jobs[1], on);
        ck_assert_int_eq(sched_dispatch(c.d, c.m, 3, NULL, 0, c.out), 0);
        ck_assert_int_eq(sched_dispatch(c.d, c.m, 3, &jobs[0], 1, c.out), 1);
        ck_assert_uint_eq(c.out[0].job_id, 1);
        cluster_free(&c);
}
END_TEST

START_TEST(the_same_seed_gives_the_same_dispatch) {
        sched_job jobs[10];
        for (uint64_t i = 0; i < 10; i++)
                jobs[i] = job(i + 1, i % 3 ? "c1" : "c2");
        cluster a, b;
        cluster_init(&a, 99);
        cluster_init(&b, 99);
        long na = sched_dispatch(a.d, a.m, 3, jobs, 10, a.out), nb = sched_dispatch(b.d, b.m, 3, jobs, 10, b.out);
        ck_assert_int_eq(na, nb);
        for (long i = 0; i < na; i++) {
                ck_assert_uint_eq(a.out[i].job_id, b.out[i].job_id);
                ck_assert_uint_eq(a.out[i].machine, b.out[i].machine);
        }
        cluster_free(&a);
        cluster_free(&b);
}
END_TEST

START_TEST(classify_by_type_else_nearest_profile) {
        sched_job j = { .id = 1, .req = { .mcpu = CORES(2), .mem = GiB }, .type = "c1" };
        ck_assert_uint_eq(lotes_classify(&hand, &j), 0); /* the declared class wins */
        j.type = "other";
        ck_assert_uint_eq(lotes_classify(&hand, &j), 1);
        j.type = NULL;
        j.req = (res_t){ .mcpu = CORES(1), .mem = 3 * GiB };
        ck_assert_uint_eq(lotes_classify(&hand, &j), 0);
}
END_TEST

/* GPUs (issue 25): one machine of 64 cores, 256 GiB and 2 GPUs, one without GPUs; class g asks
 * 1 core, 1 GiB and 1 GPU, class c the same without the GPU, half the arrivals each, 1 s each.
 * On cores alone g could have the whole GPU machine (lambda* = 128: each class 64 jobs/s); its 2
 * GPUs hold 2 jobs, 2 jobs/s = lambda* / 2, so lambda* = 4, with delta_1,g = 2/64 of the cores.
 * c has no share of the GPUs. No bin of the GPU machine holds more than 2 g. A job asking a GPU
 * joins g, one asking none c, though their cores and memory are equally near both. */
START_TEST(gpus_bound_lambda_and_the_bins) {
        static const lotes_config configs[] = { { 1, { .mcpu = CORES(64), .mem = 256 * GiB, .gpus = 2 } },
                                                { 1, { .mcpu = CORES(64), .mem = 256 * GiB } } };
        static const lotes_class classes[] = { { "g", 0.5, { .mcpu = CORES(1), .mem = GiB, .gpus = 1 } },
                                               { "c", 0.5, { .mcpu = CORES(1), .mem = GiB } } };
        const lotes_problem p = { configs, 2, classes, 2, ones };
        lotes_alloc a;
        char err[256];
        ck_assert_int_eq(lotes_allocate(&p, &a, err, sizeof(err)), 0);
        ck_assert_double_eq_tol(a.lambda, 4, 1e-9);
        ck_assert_double_eq_tol(delta(&a, 0, 0, 0), 2.0 / 64, 1e-9);
        ck_assert_double_eq_tol(delta(&a, 1, 0, 0), 0, 1e-12);
        lotes_alloc_free(&a);
        lotes_bins b;
        const bool both[] = { true, true };
        ck_assert_int_eq(lotes_enumerate_bins(&p, 0, both, &b), 0);
        ck_assert_uint_gt(b.n, 0);
        for (size_t i = 0; i < b.n; i++)
                ck_assert_uint_le(b.count[i * 2], 2);
        lotes_bins_free(&b);
        sched_job gpu_job = { .id = 1, .req = classes[0].req }, cpu_job = { .id = 2, .req = classes[1].req };
        gpu_job.req.mcpu = cpu_job.req.mcpu = CORES(2); /* neither is exactly a class: classified by request */
        ck_assert_uint_eq(lotes_classify(&p, &gpu_job), 0);
        ck_assert_uint_eq(lotes_classify(&p, &cpu_job), 1);
}
END_TEST

static Suite *lotes_suite(void) {
        Suite *s = suite_create("lotes");
        TCase *offline = tcase_create("offline");
        tcase_add_test(offline, allocation_lp_matches_the_hand_solution);
        tcase_add_test(offline, gpus_bound_lambda_and_the_bins);
        tcase_add_test(offline, a_requirement_scaled_by_tasks_per_job_divides_lambda_and_keeps_delta);
        tcase_add_test(offline, machine_assignment_lp_and_rounding);
        tcase_add_test(offline, non_dominated_bins_equal_brute_force);
        tcase_add_test(offline, paper_fig5_bins);
        tcase_add_test(offline, bad_inputs_are_refused_with_a_reason);
        suite_add_tcase(s, offline);
        TCase *online = tcase_create("dispatch");
        tcase_add_test(online, roulette_draws_in_proportion_and_skips_tried);
        tcase_add_test(online, dispatch_fills_what_fits_and_never_overcommits);
        tcase_add_test(online, an_exit_never_starts_a_class_the_configuration_does_not_serve);
        tcase_add_test(online, the_same_seed_gives_the_same_dispatch);
        tcase_add_test(online, a_job_offered_late_starts_on_an_idle_cluster);
        tcase_add_test(online, classify_by_type_else_nearest_profile);
        suite_add_tcase(s, online);
        return s;
}

COLONY_CHECK_MAIN(lotes_suite)
