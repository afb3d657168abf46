/* test_dispatch.c - the LoTES paper's baselines (policies/dispatch.h): Tetris and Greedy, and how
 * a dispatcher tells arrivals from exits. */
#include "check_main.h"
#include "dispatch.h"
#include "lotes_live.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define GiB ((int64_t)1 << 30)

static sched_machine machine(uint32_t index, int64_t mcpu, int64_t mem) {
        res_t cap = { .mcpu = mcpu, .mem = mem };
        return (sched_machine){ .index = index, .capacity = cap, .free = cap, .up = 1 };
}

static sched_job job(uint64_t id, int64_t mcpu, int64_t mem, double runtime) {
        return (sched_job){ .id = id, .req = { .mcpu = mcpu, .mem = mem }, .runtime = runtime };
}

static sched_dispatcher *make(const char *name) {
        sched_dispatcher *d;
        ck_assert_int_eq(sched_dispatcher_new(name, 1, &d), 0);
        return d;
}

START_TEST(names) {
        sched_dispatcher *d;
        ck_assert_int_eq(sched_dispatcher_new("first-fit", 1, &d), -EINVAL);
        d = make("tetris");
        ck_assert_str_eq(sched_dispatcher_name(d), "tetris");
        sched_dispatcher_free(d);
        sched_dispatcher_free(NULL);
}
END_TEST

START_TEST(tetris_sends_an_arrival_to_the_best_aligned_machine) {
        /* a memory-heavy job: the machine with most free memory aligns best, not the first */
        sched_machine m[] = { machine(0, 8000, 8 * GiB), machine(1, 4000, 32 * GiB) };
        sched_job j = job(1, 1000, 4 * GiB, 60);
        sched_assignment out[1];
        sched_dispatcher *d = make("tetris");
        ck_assert_int_eq(sched_dispatch(d, m, 2, &j, 1, out), 1);
        ck_assert_uint_eq(out[0].machine, 1);
        sched_dispatcher_free(d);
}
END_TEST

/* Job 1 fills the one machine m; after it exits, d starts job 3 before job 2 (both fit). Frees d. */
static void exit_starts_3_then_2(sched_dispatcher *d, sched_machine *m, const sched_job *j) {
        sched_assignment out[3];
        ck_assert_int_eq(sched_dispatch(d, m, 1, j, 3, out), 1);
        m[0].free = m[0].capacity;
        sched_dispatch_exit(d, &j[0], 0);
        ck_assert_int_eq(sched_dispatch(d, m, 1, j + 1, 2, out), 2);
        ck_assert_uint_eq(out[0].job_id, 3);
        ck_assert_uint_eq(out[1].job_id, 2);
        sched_dispatcher_free(d);
}

START_TEST(tetris_starts_the_least_work_first_on_an_exit) {
        sched_machine m[] = { machine(0, 4000, 4 * GiB) };
        sched_job j[] = { job(1, 4000, 4 * GiB, 60), job(2, 2000, 2 * GiB, 36000), job(3, 2000, 2 * GiB, 60) };
        /* both wait with the same alignment; job 3 has a hundredth of job 2's work */
        exit_starts_3_then_2(make("tetris"), m, j);
}
END_TEST

/* Jobs of type "slow" take 10x their runtime on machine 0; every job takes its runtime elsewhere. */
static double slow_on_machine_0(void *ctx, const char *type, double runtime, size_t machine) {
        (void)ctx;
        return type && strcmp(type, "slow") == 0 && machine == 0 ? 10 * runtime : runtime;
}

START_TEST(tetris_scores_the_time_on_each_machine) {
        /* the LoTES paper's Omega runs: two machines alike, but the job runs 10x longer on machine 0 */
        sched_machine m[] = { machine(0, 8000, 8 * GiB), machine(1, 8000, 8 * GiB) };
        sched_job j = job(1, 1000, GiB, 3600);
        j.type = "slow";
        sched_assignment out[1];
        sched_dispatcher *d = make("tetris");
        ck_assert_int_eq(sched_tetris_set_runtime(d, slow_on_machine_0, NULL), 0);
        ck_assert_int_eq(sched_dispatch(d, m, 2, &j, 1, out), 1);
        ck_assert_uint_eq(out[0].machine, 1);
        sched_dispatcher_free(d);
        /* on an exit of machine 0: job 2's drawn time is a fifth of job 3's, but twice it there */
        sched_machine one[] = { machine(0, 4000, 4 * GiB) };
        sched_job w[] = { job(1, 4000, 4 * GiB, 60), job(2, 2000, 2 * GiB, 600), job(3, 2000, 2 * GiB, 3000) };
        w[1].type = "slow";
        d = make("tetris");
        ck_assert_int_eq(sched_tetris_set_runtime(d, slow_on_machine_0, NULL), 0);
        exit_starts_3_then_2(d, one, w);
        d = make("greedy");
        ck_assert_int_eq(sched_tetris_set_runtime(d, slow_on_machine_0, NULL), -EINVAL);
        sched_dispatcher_free(d);
}
END_TEST

START_TEST(greedy_first_fit_else_the_shortest_queue_first_come_first_served) {
        sched_machine m[] = { machine(0, 2000, 8 * GiB), machine(1, 2000, 8 * GiB) };
        sched_job j[] = { job(1, 2000, GiB, 0), job(2, 2000, GiB, 0), job(3, 1000, GiB, 0), job(4, 1000, GiB, 0),
                          job(5, 1000, GiB, 0) };
        sched_assignment out[5];
        sched_dispatcher *d = make("greedy");
        ck_assert_int_eq(sched_dispatch(d, m, 2, j, 5, out), 2); /* 1 -> m0, 2 -> m1, 3 4 5 queue */
        ck_assert_uint_eq(out[0].machine, 0);
        ck_assert_uint_eq(out[1].machine, 1);
        /* the queues were 0 and 0, then 1 and 0 (or 0 and 1), then 1 and 1: one machine has two */
        m[0].free = m[0].capacity;
        sched_dispatch_exit(d, &j[0], 0);
        long n = sched_dispatch(d, m, 2, j + 2, 3, out);
        ck_assert_int_ge(n, 1);
        for (long a = 0; a < n; a++) {
                ck_assert_uint_eq(out[a].machine, 0); /* queued jobs start only on their own machine */
                ck_assert(a == 0 || out[a].job_id > out[a - 1].job_id); /* in arrival order */
        }
        sched_dispatcher_free(d);
}
END_TEST

START_TEST(greedy_queues_only_where_the_job_can_ever_fit) {
        sched_machine m[] = { machine(0, 1000, GiB), machine(1, 4000, 8 * GiB) };
        sched_job j[] = { job(1, 4000, GiB, 0), job(2, 2000, GiB, 0), job(3, 2000, GiB, 0) };
        sched_assignment out[3];
        sched_dispatcher *d = make("greedy");
        ck_assert_int_eq(sched_dispatch(d, m, 2, j, 3, out), 1);
        m[1].free = m[1].capacity;
        sched_dispatch_exit(d, &j[0], 1);
        ck_assert_int_eq(sched_dispatch(d, m, 2, j + 1, 2, out), 2); /* both queued on machine 1 */
        ck_assert_uint_eq(out[0].job_id, 2);
        ck_assert_uint_eq(out[1].job_id, 3);
        sched_dispatcher_free(d);
}
END_TEST

/* GPUs (issue 25) count in Tetris's alignment: a 1-GPU job goes to the machine with half its GPUs
 * free rather than to the one with more free cores and 1 GPU of 8 left (cores alone would pick
 * it). Greedy queues a GPU job only on a machine with GPUs, however short the others' queues. */
START_TEST(tetris_aligns_on_gpus_and_greedy_queues_gpu_jobs_on_gpu_machines) {
        sched_machine m[] = { machine(0, 32000, 256 * GiB), machine(1, 32000, 256 * GiB) };
        m[0].capacity.gpus = 8, m[0].free.gpus = 1;
        m[1].capacity.gpus = m[1].free.gpus = 4;
        m[1].free.mcpu = 8000;
        sched_job j = job(1, 1000, GiB, 60);
        j.req.gpus = 1;
        sched_assignment out[1];
        sched_dispatcher *d = make("tetris");
        ck_assert_int_eq(sched_dispatch(d, m, 2, &j, 1, out), 1);
        ck_assert_uint_eq(out[0].machine, 1);
        sched_dispatcher_free(d);

        sched_machine g[] = { machine(0, 4000, 8 * GiB), machine(1, 4000, 8 * GiB) };
        g[1].capacity.gpus = 1; /* its GPU is taken: free.gpus 0 */
        d = make("greedy");
        ck_assert_int_eq(sched_dispatch(d, g, 2, &j, 1, out), 0);
        g[1].free.gpus = 1;
        sched_dispatch_exit(d, &j, 1); /* an exit on machine 1 starts its queue */
        ck_assert_int_eq(sched_dispatch(d, g, 2, &j, 1, out), 1);
        ck_assert_uint_eq(out[0].machine, 1);
        sched_dispatcher_free(d);
}
END_TEST

/* The dispatcher of policies[i]: lotes_live for "lotes" (first-fit until it learns a plan). */
static sched_dispatcher *make_any(const char *policy) {
        sched_dispatcher *d;
        if (strcmp(policy, "lotes") != 0)
                return make(policy);
        ck_assert_int_eq(lotes_live_new(1, &d), 0);
        return d;
}

static const char *const policies[] = { "greedy", "tetris", "lotes", "coloc" };
#define NPOLICIES ((int)(sizeof(policies) / sizeof(policies[0])))

/* A job offered late: job 1 held (not offered) while job 2 arrives and runs, then released.
 * Its id is below every id offered before, yet it must start: on an idle cluster no exit ever
 * comes. Without fresh jobs, Greedy never started it and Tetris, LoTES and coloc only at an exit. */
START_TEST(a_job_offered_late_starts_on_an_idle_machine) {
        sched_machine m[] = { machine(0, 4000, 4 * GiB) };
        sched_job j[] = { job(1, 1000, GiB, 60), job(2, 1000, GiB, 60) };
        sched_assignment out[2];
        sched_dispatcher *d = make_any(policies[_i]);
        ck_assert_int_eq(sched_dispatch(d, m, 1, &j[1], 1, out), 1);
        m[0].free = m[0].capacity; /* job 2 ended: the machine is idle */
        sched_dispatch_exit(d, &j[1], 0);
        ck_assert_int_eq(sched_dispatch(d, m, 1, NULL, 0, out), 0);
        ck_assert_int_eq(sched_dispatch(d, m, 1, &j[0], 1, out), 1); /* job 1 released */
        ck_assert_uint_eq(out[0].job_id, 1);
        ck_assert_int_eq(sched_dispatch(d, m, 1, NULL, 0, out), 0);
        /* a job kept waiting is no arrival again: offered twice, job 3 waits for an exit */
        sched_job big = job(3, 4000, GiB, 60);
        ck_assert_int_eq(sched_dispatch(d, m, 1, &big, 1, out), 0);
        ck_assert_int_eq(sched_dispatch(d, m, 1, &big, 1, out), 0);
        m[0].free = m[0].capacity;
        sched_dispatch_exit(d, &j[0], 0);
        ck_assert_int_eq(sched_dispatch(d, m, 1, &big, 1, out), 1);
        sched_dispatcher_free(d);
}
END_TEST

/* A pass in runs (sched_dispatch_run): machine 0, hidden from one run, is neither down nor up
 * again after it, so its queue starts at an exit alone, as ever (resources that free without one,
 * a stray's end, wait for it); an exit there while it is hidden waits for a run that sees it. On
 * main, hidden meant down: every hidden machine counted as freed in the next run. */
START_TEST(a_machine_hidden_from_a_run_is_neither_down_nor_up_again) {
        sched_machine m[] = { machine(0, 4000, 4 * GiB), machine(1, 1000, GiB) };
        sched_job j[] = { job(1, 4000, GiB, 60), job(2, 4000, GiB, 60), job(3, 1000, GiB, 60) };
        sched_assignment out[3];
        sched_dispatcher *d = make_any(policies[_i]);
        ck_assert_int_eq(sched_dispatch(d, m, 2, j, 2, out), 1); /* 1 runs on machine 0, 2 waits */
        m[0].free = m[0].capacity;                               /* freed without an exit */
        m[0].up = SCHED_HIDDEN;
        ck_assert_int_eq(sched_dispatch_run(d, m, 2, &j[2], 1, out), 1); /* 3 chooses machine 1 */
        m[0].up = 1;
        ck_assert_int_eq(sched_dispatch_run(d, m, 2, &j[1], 1, out), 0);
        sched_dispatch_exit(d, &j[0], 0);
        m[0].up = SCHED_HIDDEN;
        ck_assert_int_eq(sched_dispatch_run(d, m, 2, NULL, 0, out), 0);
        m[0].up = 1;
        ck_assert_int_eq(sched_dispatch_run(d, m, 2, &j[1], 1, out), 1);
        ck_assert_uint_eq(out[0].job_id, 2);
        sched_dispatcher_free(d);
}
END_TEST

/* A run leaves alone the waiting jobs it does not offer: job 2, waiting, is no fresh job in the
 * next run (Tetris and LoTES took their lists from each run's jobs: every waiting job came back
 * fresh in its own run, an arrival's O(machines) each, at every pass in runs). */
START_TEST(a_run_keeps_the_waiting_jobs_it_does_not_offer) {
        sched_machine m[] = { machine(0, 4000, 4 * GiB), machine(1, 1000, GiB) };
        sched_job j[] = { job(1, 4000, GiB, 60), job(2, 4000, GiB, 60), job(3, 1000, GiB, 60) };
        sched_assignment out[3];
        sched_dispatcher *d = make_any(policies[_i]);
        ck_assert_int_eq(sched_dispatch(d, m, 2, j, 2, out), 1); /* 1 runs on machine 0, 2 waits */
        ck_assert_int_eq(sched_dispatch_run(d, m, 2, &j[2], 1, out), 1);
        m[0].free = m[0].capacity; /* freed without an exit: only an arrival would start 2 */
        ck_assert_int_eq(sched_dispatch_run(d, m, 2, &j[1], 1, out), 0);
        sched_dispatch_exit(d, &j[0], 0);
        ck_assert_int_eq(sched_dispatch_run(d, m, 2, &j[1], 1, out), 1);
        sched_dispatcher_free(d);
}
END_TEST

static Suite *dispatch_suite(void) {
        Suite *s = suite_create("dispatch");
        TCase *tc = tcase_create("baselines");
        tcase_add_test(tc, names);
        tcase_add_test(tc, tetris_sends_an_arrival_to_the_best_aligned_machine);
        tcase_add_test(tc, tetris_starts_the_least_work_first_on_an_exit);
        tcase_add_test(tc, tetris_scores_the_time_on_each_machine);
        tcase_add_test(tc, greedy_first_fit_else_the_shortest_queue_first_come_first_served);
        tcase_add_test(tc, greedy_queues_only_where_the_job_can_ever_fit);
        tcase_add_test(tc, tetris_aligns_on_gpus_and_greedy_queues_gpu_jobs_on_gpu_machines);
        tcase_add_loop_test(tc, a_job_offered_late_starts_on_an_idle_machine, 0, NPOLICIES);
        tcase_add_loop_test(tc, a_machine_hidden_from_a_run_is_neither_down_nor_up_again, 0, NPOLICIES);
        tcase_add_loop_test(tc, a_run_keeps_the_waiting_jobs_it_does_not_offer, 0, NPOLICIES);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(dispatch_suite)
