/* test_lotes_live.c - LoTES on a live cluster (policies/lotes_live.h): class learning, drift,
 * the model, and plan swaps that keep the running jobs counted. */
#include "check_main.h"
#include "lotes_live.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>

#define MiB ((int64_t)1 << 20)
#define GiB ((int64_t)1 << 30)

/* n samples of request (mcpu, mem), jittered below the rounding steps, submitted at times
 * t0, t0 + dt, ..., each running runtime (or unknown when < 0). */
static size_t add(lotes_sample *s, size_t at, size_t n, int64_t mcpu, int64_t mem, double t0, double dt,
                  double runtime) {
        for (size_t i = 0; i < n; i++)
                s[at + i] = (lotes_sample){ .req = { .mcpu = mcpu + (int64_t)(i % 3) * 10 - 10,
                                                     .mem = mem + (int64_t)(i % 5) * MiB - 2 * MiB },
                                            .submit = t0 + (double)i * dt,
                                            .runtime = runtime };
        return at + n;
}

START_TEST(learns_one_class_per_request_profile) {
        lotes_sample s[200];
        size_t n = 0;
        n = add(s, n, 60, 500, 256 * MiB, 10, 1, 4);   /* 60 small jobs of 4 s */
        n = add(s, n, 20, 2000, 1 * GiB, 10, 3, 20);   /* 20 large jobs of 20 s */
        n = add(s, n, 10, 1000, 128 * MiB, 10, 6, -1); /* 10 jobs whose times are unknown */
        n = add(s, n, 30, 4000, 4 * GiB, -500, 1, 99); /* long before the window: ignored */
        lotes_mix m = { 0 };
        ck_assert_int_eq(lotes_learn(s, n, 100, 100, 8, &m), 0);
        ck_assert_uint_eq(m.n, 3);
        /* in request order: 0.5 cores, 1 core, 2 cores */
        ck_assert_int_eq(llabs(m.req[0].mcpu - 500) <= 10, 1);
        ck_assert_int_eq(llabs(m.req[1].mcpu - 1000) <= 10, 1);
        ck_assert_int_eq(llabs(m.req[2].mcpu - 2000) <= 10, 1);
        ck_assert_int_eq(llabs(m.req[0].mem - 256 * MiB) <= 2 * MiB, 1);
        ck_assert_double_eq_tol(m.rate[0], 60.0 / 100, 1e-12);
        ck_assert_double_eq_tol(m.rate[1], 10.0 / 100, 1e-12);
        ck_assert_double_eq_tol(m.rate[2], 20.0 / 100, 1e-12);
        ck_assert_double_eq_tol(m.runtime[0], 4, 1e-12);
        ck_assert_double_eq_tol(m.runtime[2], 20, 1e-12);
        ck_assert_double_eq_tol(m.runtime[1], (60 * 4 + 20 * 20) / 80.0, 1e-12); /* the window's mean */
        for (size_t k = 0; k < m.n; k++)
                ck_assert_ptr_null(m.name[k]);
        lotes_mix_free(&m);
}
END_TEST

START_TEST(merges_the_smallest_class_into_its_nearest) {
        lotes_sample s[100];
        size_t n = 0;
        n = add(s, n, 40, 500, 256 * MiB, 0, 1, 2);
        n = add(s, n, 30, 4000, 4 * GiB, 0, 1, 8);
        n = add(s, n, 5, 700, 320 * MiB, 0, 1, 3); /* close to the small ones */
        lotes_mix m = { 0 };
        ck_assert_int_eq(lotes_learn(s, n, 50, 100, 2, &m), 0);
        ck_assert_uint_eq(m.n, 2);
        ck_assert_double_eq_tol(m.rate[0], 45.0 / 100, 1e-12);
        ck_assert_double_eq_tol(m.rate[1], 30.0 / 100, 1e-12);
        ck_assert_double_eq_tol(m.runtime[0], (40 * 2 + 5 * 3) / 45.0, 1e-12);
        ck_assert(m.req[0].mcpu > 500 && m.req[0].mcpu < 700); /* the merged mean */
        lotes_mix_free(&m);
        ck_assert_int_eq(lotes_learn(s, n, 50, 0, 2, &m), -EINVAL);
        ck_assert_int_eq(lotes_learn(s, n, 50, 100, 0, &m), -EINVAL);
        ck_assert_int_eq(lotes_learn(s, n, 1000, 100, 2, &m), 0); /* nothing in the window */
        ck_assert_uint_eq(m.n, 0);
        lotes_mix_free(&m);
}
END_TEST

START_TEST(drift_is_a_new_class_or_a_moved_mix) {
        lotes_sample s[300];
        size_t a = add(s, 0, 50, 500, 256 * MiB, 0, 1, 2);
        a = add(s, a, 50, 2000, 1 * GiB, 0, 1, 10);
        lotes_mix old = { 0 }, cur = { 0 };
        ck_assert_int_eq(lotes_learn(s, a, 60, 100, 4, &old), 0);
        size_t b = add(s, a, 5, 500, 256 * MiB, 60, 1, 2); /* 55:50, shares move by 0.05 */
        ck_assert_int_eq(lotes_learn(s, b, 65, 100, 4, &cur), 0);
        ck_assert(!lotes_drifted(&old, &cur, 0.2));
        b = add(s, a, 40, 500, 256 * MiB, 60, 1, 2); /* 90:50, shares move by 2 x 0.143 */
        ck_assert_int_eq(lotes_learn(s, b, 100, 200, 4, &cur), 0);
        ck_assert(lotes_drifted(&old, &cur, 0.2));
        b = add(s, a, 1, 8000, 8 * GiB, 60, 1, 2); /* a new profile */
        ck_assert_int_eq(lotes_learn(s, b, 61, 100, 4, &cur), 0);
        ck_assert(lotes_drifted(&old, &cur, 0.2));
        b = add(s, 0, 50, 500, 256 * MiB, 0, 1, 2);
        b = add(s, b, 50, 2000, 1 * GiB, 0, 1, 15); /* the large jobs run 50% longer */
        ck_assert_int_eq(lotes_learn(s, b, 60, 100, 4, &cur), 0);
        ck_assert(lotes_drifted(&old, &cur, 0.2));
        ck_assert(!lotes_drifted(&old, &old, 0));
        lotes_mix_free(&old);
        lotes_mix_free(&cur);
}
END_TEST

/* Two configurations: two machines of (4 cores, 4 GiB), one of (8 cores, 8 GiB), and one down. */
static sched_machine machines[] = {
        { 0, { .mcpu = 4000, .mem = 4 * GiB }, { .mcpu = 4000, .mem = 4 * GiB }, 1 },
        { 1, { .mcpu = 8000, .mem = 8 * GiB }, { .mcpu = 8000, .mem = 8 * GiB }, 1 },
        { 2, { .mcpu = 4000, .mem = 4 * GiB }, { .mcpu = 4000, .mem = 4 * GiB }, 1 },
        { 3, { .mcpu = 16000, .mem = 16 * GiB }, { .mcpu = 16000, .mem = 16 * GiB }, 0 },
};

/* Two classes: small (1 core, 1 GiB, 2 s) three times as frequent as large (4 cores, 2 GiB, 10 s). */
static void two_classes(lotes_mix *m) {
        ck_assert_int_eq(lotes_mix_alloc(m, 2), 0);
        m->req[0] = (res_t){ .mcpu = 1000, .mem = 1 * GiB };
        m->rate[0] = 3;
        m->runtime[0] = 2;
        m->req[1] = (res_t){ .mcpu = 4000, .mem = 2 * GiB };
        m->rate[1] = 1;
        m->runtime[1] = 10;
}

static lotes_model *solved(const sched_machine *ms, size_t n) {
        lotes_mix mix = { 0 };
        lotes_model *m;
        char err[256];
        two_classes(&mix);
        ck_assert_int_eq(lotes_model_new(ms, n, &mix, &m, err, sizeof(err)), 0);
        ck_assert_int_eq(lotes_model_solve(m, err, sizeof(err)), 0);
        lotes_mix_free(&mix);
        return m;
}

START_TEST(model_groups_the_up_machines_into_configurations) {
        lotes_model *m = solved(machines, 4);
        ck_assert_uint_eq(m->problem.nconfigs, 2);
        ck_assert_uint_eq(m->configs[0].count, 2);
        ck_assert_uint_eq(m->configs[1].count, 1);
        ck_assert_double_eq_tol(m->classes[0].alpha, 0.75, 1e-12);
        ck_assert_double_eq_tol(m->mu[0 * 2 + 1], 0.1, 1e-12);
        ck_assert(m->plan.lambda > 0);
        ck_assert(lotes_model_same_machines(m, machines, 4));
        sched_machine other[4];
        for (size_t i = 0; i < 4; i++)
                other[i] = machines[i];
        other[3].up = 1; /* the large machine joins */
        ck_assert(!lotes_model_same_machines(m, other, 4));
        other[3].up = 0;
        other[0] = machines[1], other[1] = machines[0]; /* the same multiset in another order */
        ck_assert(lotes_model_same_machines(m, other, 4));
        lotes_model_free(m);

        lotes_mix empty = { 0 };
        char err[256];
        ck_assert_int_eq(lotes_model_new(machines, 4, &empty, &m, err, sizeof(err)), -EINVAL);
}
END_TEST

/* A pass over jobs with ids from `first`, alternating small and large. */
static long pass(sched_dispatcher *d, sched_machine *ms, uint64_t first, size_t n, sched_assignment *out) {
        sched_job jobs[32];
        for (size_t i = 0; i < n; i++)
                jobs[i] = (sched_job){ .id = first + i,
                                       .req = i % 2 ? (res_t){ .mcpu = 4000, .mem = 2 * GiB }
                                                    : (res_t){ .mcpu = 1000, .mem = 1 * GiB } };
        return sched_dispatch(d, ms, 4, jobs, n, out);
}

static sched_machine *fresh(sched_machine *ms) {
        for (size_t i = 0; i < 4; i++)
                ms[i] = machines[i];
        return ms;
}

/* kappa summed over both classes on machine m equals the jobs running there. */
static void check_kappa(sched_dispatcher *d, const size_t running[4]) {
        for (size_t m = 0; m < 4; m++)
                ck_assert_uint_eq(lotes_live_kappa(d, m, 0) + lotes_live_kappa(d, m, 1), running[m]);
}

START_TEST(first_fit_until_a_plan_then_swaps_keep_kappa) {
        sched_dispatcher *d;
        sched_machine ms[4];
        sched_assignment out[32];
        size_t running[4] = { 0 };
        ck_assert_int_eq(lotes_live_new(7, &d), 0);
        ck_assert_str_eq(sched_dispatcher_name(d), "lotes");
        ck_assert_ptr_null(lotes_live_model(d));
        /* no plan: first-fit; machine 0 (4 cores) takes the small jobs, the large ones do not fit
         * beside them and fill machine 1 (8 cores), then machine 2 */
        long n = pass(d, fresh(ms), 1, 6, out);
        ck_assert_int_eq(n, 6);
        const uint32_t want[] = { 0, 1, 0, 1, 0, 2 };
        for (size_t a = 0; a < 6; a++)
                ck_assert_uint_eq(out[a].machine, want[a]);
        for (long a = 0; a < n; a++)
                running[out[a].machine]++;

        ck_assert_int_eq(lotes_live_swap(d, solved(machines, 4)), 0);
        ck_assert_ptr_nonnull(lotes_live_model(d));
        /* the next pass counts what runs under the new plan, by class */
        ck_assert_int_ge(pass(d, ms, 7, 0, out), 0);
        check_kappa(d, running);
        ck_assert_uint_eq(lotes_live_kappa(d, 1, 1), 2); /* jobs 2 and 4, large, on machine 1 */
        ck_assert_uint_eq(lotes_live_kappa(d, 0, 0), 3); /* jobs 1, 3, 5, small, on machine 0 */

        /* an exit is uncounted; new arrivals are counted */
        sched_job two = { .id = 2, .req = { .mcpu = 4000, .mem = 2 * GiB } };
        sched_dispatch_exit(d, &two, 1);
        ms[1].free = res_add(ms[1].free, two.req);
        running[1]--;
        ck_assert_uint_eq(lotes_live_kappa(d, 1, 1), 1);
        n = pass(d, ms, 7, 4, out);
        for (long a = 0; a < n; a++)
                running[out[a].machine]++;
        check_kappa(d, running);

        /* a second swap counts the same jobs again, from zero */
        ck_assert_int_eq(lotes_live_swap(d, solved(machines, 4)), 0);
        ck_assert_int_ge(pass(d, ms, 11, 0, out), 0);
        check_kappa(d, running);
        sched_dispatcher_free(d);
}
END_TEST

START_TEST(a_machine_up_again_starts_waiting_jobs) {
        sched_dispatcher *d;
        sched_machine ms[4];
        sched_assignment out[32];
        ck_assert_int_eq(lotes_live_new(1, &d), 0);
        fresh(ms);
        for (size_t i = 0; i < 3; i++)
                ms[i].up = 0;
        sched_job big = { .id = 1, .req = { .mcpu = 10000, .mem = 10 * GiB } }; /* only machine 3 holds it, down */
        ck_assert_int_eq(sched_dispatch(d, ms, 4, &big, 1, out), 0);
        ck_assert_int_eq(sched_dispatch(d, ms, 4, &big, 1, out), 0);
        ms[3].up = 1;
        ck_assert_int_eq(sched_dispatch(d, ms, 4, &big, 1, out), 1);
        ck_assert_uint_eq(out[0].machine, 3);
        sched_dispatcher_free(d);
}
END_TEST

/* GPUs (issue 25): jobs asking a GPU form classes of their own, whatever their cores and memory,
 * with their GPU count; merging down to 2 classes joins the two CPU profiles, not the small GPU
 * one with its nearest CPU one. A GPU job joins the GPU class. */
START_TEST(gpu_jobs_learn_classes_of_their_own) {
        lotes_sample s[100];
        size_t n = 0;
        n = add(s, n, 5, 2000, 1 * GiB, 10, 1, 4); /* GPU jobs, 1 GPU each (below) */
        for (size_t i = 0; i < 5; i++)
                s[i].req.gpus = 1;
        n = add(s, n, 30, 2000, 1 * GiB, 10, 1, 4); /* the same cores and memory, no GPU */
        n = add(s, n, 20, 8000, 2 * GiB, 10, 1, 4);
        lotes_mix m = { 0 };
        ck_assert_int_eq(lotes_learn(s, n, 100, 100, 8, &m), 0);
        ck_assert_uint_eq(m.n, 3);
        lotes_mix_free(&m);
        ck_assert_int_eq(lotes_learn(s, n, 100, 100, 2, &m), 0);
        ck_assert_uint_eq(m.n, 2);
        size_t g = m.req[0].gpus > 0 ? 0 : 1;
        ck_assert_int_eq(m.req[g].gpus, 1);
        ck_assert_double_eq_tol(m.rate[g], 5.0 / 100, 1e-12);
        ck_assert_int_eq(m.req[1 - g].gpus, 0);
        ck_assert_double_eq_tol(m.rate[1 - g], 50.0 / 100, 1e-12);
        lotes_mix_free(&m);
}
END_TEST

static Suite *lotes_live_suite(void) {
        Suite *s = suite_create("lotes_live");
        TCase *learn = tcase_create("learn");
        tcase_add_test(learn, learns_one_class_per_request_profile);
        tcase_add_test(learn, gpu_jobs_learn_classes_of_their_own);
        tcase_add_test(learn, merges_the_smallest_class_into_its_nearest);
        tcase_add_test(learn, drift_is_a_new_class_or_a_moved_mix);
        suite_add_tcase(s, learn);
        TCase *plan = tcase_create("plan");
        tcase_add_test(plan, model_groups_the_up_machines_into_configurations);
        tcase_add_test(plan, first_fit_until_a_plan_then_swaps_keep_kappa);
        tcase_add_test(plan, a_machine_up_again_starts_waiting_jobs);
        suite_add_tcase(s, plan);
        return s;
}

COLONY_CHECK_MAIN(lotes_live_suite)
