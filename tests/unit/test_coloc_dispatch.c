/* test_coloc_dispatch.c - the live colocation dispatcher (policies/coloc_dispatch.h): every
 * decision checked against an exhaustive search over the machines, with costs from coloc_cost
 * (coloc.h), which computes them from scratch. */
#include "check_main.h"
#include "coloc.h"
#include "coloc_dispatch.h"
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define MAXJ 64
#define GiB  ((int64_t)1 << 30)

static const char *const names[] = { "a", "b", "c" };

/* The jobs placed so far and still running, in coloc.h's terms. */
typedef struct world {
        size_t T, M, n;
        double alpha[16]; /* (T + 1) x (T + 1): the unknown type last, alpha 1 */
        uint32_t type[MAXJ], machine[MAXJ];
        double load[MAXJ];
        sched_job job[MAXJ];
        sched_machine ms[4];
} world;

static double max_cost(const world *w, size_t extra_type, double extra_load, uint32_t extra_machine) {
        uint32_t type[MAXJ + 1], machine[MAXJ + 1];
        double load[MAXJ + 1], max;
        memcpy(type, w->type, w->n * sizeof(*type));
        memcpy(machine, w->machine, w->n * sizeof(*machine));
        memcpy(load, w->load, w->n * sizeof(*load));
        type[w->n] = (uint32_t)extra_type, machine[w->n] = extra_machine, load[w->n] = extra_load;
        coloc_instance in = { w->T + 1, w->alpha, w->n + 1, type, load, w->M };
        ck_assert_int_eq(coloc_cost(&in, machine, NULL, &max), 0);
        return max;
}

static void machine_costs(const world *w, double *cost) {
        double max;
        coloc_instance in = { w->T + 1, w->alpha, w->n, w->type, w->load, w->M };
        ck_assert_int_eq(coloc_cost(&in, w->machine, cost, &max), 0);
}

static size_t type_index(const char *t) {
        for (size_t i = 0; t && i < 3; i++)
                if (strcmp(t, names[i]) == 0)
                        return i;
        return 3;
}

/* Offer job (id) alone; check the choice against every machine; record it. */
static void arrive(sched_dispatcher *d, world *w, sched_job job) {
        size_t t = type_index(job.type);
        double p = job.runtime > 0 ? job.runtime : 1, best = INFINITY;
        double after[4];
        for (uint32_t m = 0; m < w->M; m++) {
                after[m] = res_fits(job.req, w->ms[m].free) ? max_cost(w, t, p, m) : INFINITY;
                best = fmin(best, after[m]);
        }
        sched_assignment out[1];
        long placed = sched_dispatch(d, w->ms, w->M, &job, 1, out);
        if (isinf(best)) {
                ck_assert_int_eq(placed, 0);
                return;
        }
        ck_assert_int_eq(placed, 1);
        uint32_t m = out[0].machine;
        ck_assert_msg(fabs(after[m] - best) <= 1e-9 * fmax(1, best), "job %llu on %u: max cost %g, exhaustive %g",
                      (unsigned long long)job.id, m, after[m], best);
        w->type[w->n] = (uint32_t)t, w->machine[w->n] = m, w->load[w->n] = p, w->job[w->n] = job;
        w->n++;
}

static void leave(sched_dispatcher *d, world *w, size_t i) {
        sched_dispatch_exit(d, &w->job[i], w->machine[i]);
        w->ms[w->machine[i]].free = res_add(w->ms[w->machine[i]].free, w->job[i].req);
        w->n--;
        w->type[i] = w->type[w->n], w->machine[i] = w->machine[w->n], w->load[i] = w->load[w->n];
        w->job[i] = w->job[w->n];
}

static void check_costs(const sched_dispatcher *d, const world *w) {
        double cost[4];
        machine_costs(w, cost);
        for (size_t m = 0; m < w->M; m++)
                ck_assert_double_eq_tol(coloc_dispatcher_cost(d, m), cost[m], 1e-9 * fmax(1, cost[m]));
}

static void random_world(world *w, unsigned seed, size_t M, bool tight) {
        coloc_rng r;
        coloc_rng_seed(&r, seed);
        memset(w, 0, sizeof(*w));
        w->T = 3, w->M = M;
        for (size_t a = 0; a <= 3; a++)
                for (size_t b = 0; b <= 3; b++)
                        w->alpha[a * 4 + b] = a < 3 && b < 3 ? 3 * coloc_rng_uniform(&r) : 1;
        for (size_t m = 0; m < M; m++) {
                res_t cap = { .mcpu = tight ? 3000 : 64000, .mem = 64 * GiB };
                w->ms[m] = (sched_machine){ (uint32_t)m, cap, cap, 1 };
        }
}

static sched_job random_job(coloc_rng *r, uint64_t id) {
        static const char *const types[] = { "a", "b", "c", "zzz", NULL }; /* zzz, NULL: unknown */
        double u = coloc_rng_uniform(r);
        return (sched_job){ .id = id,
                            .req = { .mcpu = 1000, .mem = GiB },
                            .type = types[(size_t)(u * 5) % 5],
                            .runtime = coloc_rng_uniform(r) < 0.2 ? 0 : 1 + floor(9 * coloc_rng_uniform(r)) };
}

START_TEST(each_arrival_minimises_the_max_cost_like_exhaustive_search) {
        for (unsigned seed = 1; seed <= 40; seed++) {
                world w;
                size_t M = 2 + seed % 3;
                bool tight = seed % 2 == 0; /* 3 cores a machine: the best machine is often full */
                random_world(&w, seed, M, tight);
                sched_dispatcher *d;
                ck_assert_int_eq(coloc_dispatcher_new(&d), 0);
                double sub[9];
                for (size_t a = 0; a < 3; a++)
                        for (size_t b = 0; b < 3; b++)
                                sub[a * 3 + b] = w.alpha[a * 4 + b];
                ck_assert_int_eq(coloc_dispatcher_set_alpha(d, names, 3, sub), 0);
                coloc_rng r;
                coloc_rng_seed(&r, 1000 + seed);
                for (uint64_t id = 1; id <= 20; id++) {
                        arrive(d, &w, random_job(&r, id));
                        check_costs(d, &w);
                        if (w.n > 0 && coloc_rng_uniform(&r) < 0.3) {
                                leave(d, &w, (size_t)(coloc_rng_uniform(&r) * (double)w.n));
                                check_costs(d, &w);
                        }
                }
                sched_dispatcher_free(d);
        }
}
END_TEST

START_TEST(a_new_matrix_retypes_the_running_jobs) {
        world w;
        random_world(&w, 7, 3, false);
        for (size_t i = 0; i < 16; i++)
                w.alpha[i] = 1; /* no matrix yet: every alpha 1 */
        sched_dispatcher *d;
        ck_assert_int_eq(coloc_dispatcher_new(&d), 0);
        coloc_rng r;
        coloc_rng_seed(&r, 99);
        for (uint64_t id = 1; id <= 10; id++)
                arrive(d, &w, random_job(&r, id));
        check_costs(d, &w);
        const double m[9] = { 1, 4, 0.5, 4, 1, 0, 2, 0.1, 1 };
        ck_assert_int_eq(coloc_dispatcher_set_alpha(d, names, 3, m), 0);
        for (size_t a = 0; a < 3; a++)
                for (size_t b = 0; b < 3; b++)
                        w.alpha[a * 4 + b] = m[a * 3 + b];
        check_costs(d, &w);
        for (uint64_t id = 11; id <= 20; id++)
                arrive(d, &w, random_job(&r, id));
        check_costs(d, &w);
        sched_dispatcher_free(d);
}
END_TEST

START_TEST(clashing_types_are_kept_apart) {
        sched_dispatcher *d;
        ck_assert_int_eq(coloc_dispatcher_new(&d), 0);
        const char *const ab[] = { "A", "B" };
        const double clash[4] = { 1, 4, 4, 1 };
        ck_assert_int_eq(coloc_dispatcher_set_alpha(d, ab, 2, clash), 0);
        sched_machine ms[2];
        for (uint32_t m = 0; m < 2; m++)
                ms[m] = (sched_machine){ m, { .mcpu = 8000, .mem = 8 * GiB }, { .mcpu = 8000, .mem = 8 * GiB }, 1 };
        uint32_t on[2][2] = { { 0 } };
        for (uint64_t id = 1; id <= 8; id++) {
                sched_job j = { .id = id, .req = { .mcpu = 1000, .mem = GiB }, .type = ab[id % 2] };
                sched_assignment out[1];
                ck_assert_int_eq(sched_dispatch(d, ms, 2, &j, 1, out), 1);
                on[id % 2][out[0].machine]++;
        }
        ck_assert(on[0][0] == 4 || on[0][1] == 4); /* each type on one machine */
        ck_assert(on[1][0] == 4 || on[1][1] == 4);
        ck_assert(on[0][0] + on[1][0] == 4);
        sched_dispatcher_free(d);
}
END_TEST

START_TEST(a_waiting_job_starts_when_room_frees) {
        sched_dispatcher *d;
        ck_assert_int_eq(sched_dispatcher_new("coloc", 1, &d), 0);
        ck_assert_str_eq(sched_dispatcher_name(d), "coloc");
        sched_machine ms[1] = { { 0, { .mcpu = 1000, .mem = GiB }, { .mcpu = 1000, .mem = GiB }, 1 } };
        sched_job jobs[2] = { { .id = 1, .req = { .mcpu = 1000, .mem = GiB } },
                              { .id = 2, .req = { .mcpu = 1000, .mem = GiB } } };
        sched_assignment out[2];
        ck_assert_int_eq(sched_dispatch(d, ms, 1, jobs, 2, out), 1);
        ck_assert_int_eq(sched_dispatch(d, ms, 1, jobs + 1, 1, out), 0);
        sched_dispatch_exit(d, &jobs[0], 0);
        ms[0].free = ms[0].capacity;
        ck_assert_double_eq(coloc_dispatcher_cost(d, 0), 0);
        ck_assert_int_eq(sched_dispatch(d, ms, 1, jobs + 1, 1, out), 1);
        ck_assert_uint_eq(out[0].job_id, 2);
        sched_dispatcher_free(d);
}
END_TEST

START_TEST(a_job_without_an_estimate_counts_its_types_mean_run_time) {
        sched_dispatcher *d;
        ck_assert_int_eq(coloc_dispatcher_new(&d), 0);
        const char *const ab[] = { "A", "B" };
        const double m[4] = { 2, 0, 0, 1 };
        ck_assert_int_eq(coloc_dispatcher_set_alpha(d, ab, 2, m), 0);
        ck_assert_int_eq(coloc_dispatcher_note_runtime(d, "A", 10), 0);
        ck_assert_int_eq(coloc_dispatcher_note_runtime(d, "A", 20), 0);
        ck_assert_int_eq(coloc_dispatcher_note_runtime(d, "A", -1), 0); /* ignored */
        ck_assert_int_eq(coloc_dispatcher_note_runtime(d, NULL, 4), 0); /* jobs without a type */
        sched_machine ms[3];
        for (uint32_t i = 0; i < 3; i++)
                ms[i] = (sched_machine){
                        i, { .mcpu = 1000, .mem = GiB }, { .mcpu = 1000, .mem = GiB }, 1
                }; /* one job each */
        sched_job jobs[3] = { { .id = 1, .req = { .mcpu = 1000, .mem = GiB }, .type = "A" },
                              { .id = 2, .req = { .mcpu = 1000, .mem = GiB }, .type = "A", .runtime = 3 },
                              { .id = 3, .req = { .mcpu = 1000, .mem = GiB } } };
        sched_assignment out[3];
        ck_assert_int_eq(sched_dispatch(d, ms, 3, jobs, 3, out), 3);
        ck_assert_double_eq_tol(coloc_dispatcher_cost(d, out[0].machine), 15 * 2, 1e-12); /* the mean of 10 and 20 */
        ck_assert_double_eq_tol(coloc_dispatcher_cost(d, out[1].machine), 3 * 2, 1e-12);  /* its own estimate */
        ck_assert_double_eq_tol(coloc_dispatcher_cost(d, out[2].machine), 4, 1e-12);      /* unknown type, alpha 1 */
        sched_dispatcher_free(d);
}
END_TEST

static Suite *coloc_dispatch_suite(void) {
        Suite *s = suite_create("coloc_dispatch");
        TCase *tc = tcase_create("dispatch");
        tcase_add_test(tc, each_arrival_minimises_the_max_cost_like_exhaustive_search);
        tcase_add_test(tc, a_new_matrix_retypes_the_running_jobs);
        tcase_add_test(tc, clashing_types_are_kept_apart);
        tcase_add_test(tc, a_waiting_job_starts_when_room_frees);
        tcase_add_test(tc, a_job_without_an_estimate_counts_its_types_mean_run_time);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(coloc_dispatch_suite)
