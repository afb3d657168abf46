/* test_fit.c - the NetBatch heuristics, on the paper's own examples (001_*, Figs. 3, 4, 8, 9). */
#include "check_main.h"
#include "sched.h"
#include <math.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define GiB ((int64_t)1 << 30)

static sched_machine machine(uint32_t index, int64_t mcpu, int64_t mem) {
        res_t cap = { .mcpu = mcpu, .mem = mem };
        return (sched_machine){ .index = index, .capacity = cap, .free = cap, .up = 1 };
}

static sched_job job(uint64_t id, int64_t mcpu, int64_t mem) {
        return (sched_job){ .id = id, .req = { .mcpu = mcpu, .mem = mem } };
}

START_TEST(places_on_first_machine_that_fits) {
        sched_machine m[] = { machine(10, 1000, 4 * GiB), machine(20, 4000, 32 * GiB) };
        sched_job j[] = { job(1, 2000, GiB), job(2, 500, GiB), job(3, 500, GiB) };
        sched_assignment out[3];

        size_t n = sched_first_fit(m, 2, j, 3, SCHED_STRICT_FIFO, out);

        ck_assert_uint_eq(n, 3);
        ck_assert_uint_eq(out[0].job_id, 1);
        ck_assert_uint_eq(out[0].machine, 20);
        ck_assert_uint_eq(out[1].machine, 10);
        ck_assert_uint_eq(out[2].machine, 10);
        ck_assert_int_eq(m[0].free.mcpu, 0);
        ck_assert_int_eq(m[1].free.mcpu, 2000);
        ck_assert_int_eq(m[1].free.mem, 31 * GiB);
}
END_TEST

START_TEST(strict_fifo_never_lets_a_later_job_overtake) {
        sched_machine m[] = { machine(0, 2000, 8 * GiB) };
        sched_job j[] = { job(1, 1500, GiB), job(2, 1000, GiB), job(3, 500, GiB) };
        sched_assignment out[3];

        size_t n = sched_first_fit(m, 1, j, 3, SCHED_STRICT_FIFO, out);

        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(out[0].job_id, 1);
        ck_assert_int_eq(m[0].free.mcpu, 500);
}
END_TEST

START_TEST(backfill_places_later_jobs_that_fit) {
        sched_machine m[] = { machine(0, 2000, 8 * GiB) };
        sched_job j[] = { job(1, 1500, GiB), job(2, 1000, GiB), job(3, 500, GiB) };
        sched_assignment out[3];

        size_t n = sched_first_fit(m, 1, j, 3, SCHED_BACKFILL, out);

        ck_assert_uint_eq(n, 2);
        ck_assert_uint_eq(out[1].job_id, 3);
        ck_assert_int_eq(m[0].free.mcpu, 0);
}
END_TEST

START_TEST(down_machines_get_nothing) {
        sched_machine m[] = { machine(0, 4000, 8 * GiB), machine(1, 4000, 8 * GiB) };
        sched_job j[] = { job(1, 1000, GiB) };
        sched_assignment out[1];
        m[0].up = 0;

        ck_assert_uint_eq(sched_first_fit(m, 2, j, 1, SCHED_STRICT_FIFO, out), 1);
        ck_assert_uint_eq(out[0].machine, 1);
        ck_assert(!sched_can_ever_fit(m, 1, j[0].req));
}
END_TEST

START_TEST(memory_alone_can_block_a_job) {
        sched_machine m[] = { machine(0, 4000, 1 * GiB) };
        sched_job j[] = { job(1, 100, 2 * GiB) };
        sched_assignment out[1];

        ck_assert_uint_eq(sched_first_fit(m, 1, j, 1, SCHED_BACKFILL, out), 0);
        ck_assert(!sched_can_ever_fit(m, 1, j[0].req));
        ck_assert(sched_can_ever_fit(m, 1, (res_t){ .mcpu = 4000, .mem = GiB }));
}
END_TEST

/* The paper's two machines A and B: 4 cores and 32 GB each. */
static void two_netbatch_machines(sched_machine m[2]) {
        m[0] = machine(0, 4000, 32 * GiB);
        m[1] = machine(1, 4000, 32 * GiB);
}

static long place_fig3(sched_heuristic h) { /* 2 x (1 core, 16 GB) then 6 x (1 core, 4 GB) */
        sched_machine m[2];
        sched_job j[8];
        sched_assignment out[8];
        two_netbatch_machines(m);
        for (int i = 0; i < 8; i++)
                j[i] = job((uint64_t)i + 1, 1000, (i < 2 ? 16 : 4) * GiB);
        return sched_place(h, m, 2, j, 8, SCHED_BACKFILL, out);
}

static long place_fig4(sched_heuristic h, sched_assignment out[4]) { /* 3 x (1 core, 8 GB), 1 x (1, 32 GB) */
        sched_machine m[2];
        sched_job j[4];
        two_netbatch_machines(m);
        for (int i = 0; i < 4; i++)
                j[i] = job((uint64_t)i + 1, 1000, (i < 3 ? 8 : 32) * GiB);
        return sched_place(h, m, 2, j, 4, SCHED_BACKFILL, out);
}

START_TEST(fig3_worst_fit_memory_places_all_eight_best_fit_six) {
        ck_assert_int_eq(place_fig3(SCHED_WORST_FIT_MEM), 8);
        ck_assert_int_eq(place_fig3(SCHED_BEST_FIT_MEM), 6);
        ck_assert_int_eq(place_fig3(SCHED_MIX_FIT), 8); /* Fig. 9: same end result as Worst-Fit */
        ck_assert_int_eq(place_fig3(SCHED_MAX_JOBS), 8);
}
END_TEST

START_TEST(fig4_best_fit_places_all_four_worst_fit_misses_the_32gb_job) {
        sched_assignment out[4];
        ck_assert_int_eq(place_fig4(SCHED_BEST_FIT_MEM, out), 4);
        ck_assert_int_eq(place_fig4(SCHED_WORST_FIT_MEM, out), 3);
        for (int i = 0; i < 3; i++)
                ck_assert_uint_ne(out[i].job_id, 4);
        ck_assert_int_eq(place_fig4(SCHED_MIX_FIT, out), 4); /* Fig. 10: same as Best-Fit */
        ck_assert_uint_eq(out[3].job_id, 4);
        ck_assert_uint_eq(out[3].machine, 1);
        ck_assert_int_eq(place_fig4(SCHED_MAX_JOBS, out), 4);
}
END_TEST

START_TEST(fig8_mix_fit_picks_the_machine_on_the_diagonal) {
        /* A holds 1 core / 24 GB; B two jobs of 1 core / 8 GB; C 2 cores / 4 GB + 1 core / 4 GB. */
        sched_machine m[3] = { machine(0, 4000, 32 * GiB), machine(1, 4000, 32 * GiB), machine(2, 4000, 32 * GiB) };
        m[0].free = (res_t){ .mcpu = 3000, .mem = 8 * GiB };
        m[1].free = (res_t){ .mcpu = 2000, .mem = 16 * GiB };
        m[2].free = (res_t){ .mcpu = 1000, .mem = 24 * GiB };
        res_t next = { .mcpu = 1000, .mem = 8 * GiB };

        ck_assert_double_eq_tol(sched_mix_fit_alpha(&m[0], next), M_PI / 4, 1e-9);
        ck_assert_double_eq_tol(sched_mix_fit_alpha(&m[1], next), 0, 1e-9);
        ck_assert_double_eq_tol(sched_mix_fit_alpha(&m[2], next), M_PI / 4, 1e-9);

        sched_job j[] = { { .id = 1, .req = next } };
        sched_assignment out[1];
        ck_assert_int_eq(sched_place(SCHED_MIX_FIT, m, 3, j, 1, SCHED_BACKFILL, out), 1);
        ck_assert_uint_eq(out[0].machine, 1);
}
END_TEST

/* A small deterministic generator, so the property below sees many different queues. */
static uint64_t next_random(uint64_t *state) {
        *state = *state * 6364136223846793005ULL + 1442695040888963407ULL;
        return *state >> 33;
}

START_TEST(max_jobs_never_places_fewer_than_any_single_heuristic) {
        uint64_t seed = 42;
        for (int round = 0; round < 500; round++) {
                sched_machine base[6], m[6];
                sched_job j[24];
                sched_assignment out[24];
                size_t nm = 1 + next_random(&seed) % 6, nj = 1 + next_random(&seed) % 24;
                for (size_t i = 0; i < nm; i++)
                        base[i] = machine((uint32_t)i, 1000 * (1 + (int64_t)(next_random(&seed) % 8)),
                                          GiB * (1 + (int64_t)(next_random(&seed) % 64)));
                for (size_t i = 0; i < nj; i++)
                        j[i] = job(i + 1, 1000 * (1 + (int64_t)(next_random(&seed) % 3)),
                                   GiB * (1 + (int64_t)(next_random(&seed) % 24)));
                memcpy(m, base, sizeof(base));
                long best = sched_place(SCHED_MAX_JOBS, m, nm, j, nj, SCHED_BACKFILL, out);
                for (int h = 0; h < SCHED_MAX_JOBS; h++) {
                        memcpy(m, base, sizeof(base));
                        ck_assert_int_ge(best, sched_place((sched_heuristic)h, m, nm, j, nj, SCHED_BACKFILL, out));
                }
        }
}
END_TEST

START_TEST(reserve_keeps_the_roomiest_machine_for_a_job_that_matched_nothing) {
        /* Worst-Fit-Memory would put the small job on B; B is reserved for the big one. */
        sched_machine m[] = { machine(0, 2000, 8 * GiB), machine(1, 4000, 16 * GiB) };
        sched_job j[] = { job(1, 4000, 32 * GiB), job(2, 1000, GiB) };
        sched_assignment out[2];

        ck_assert_int_eq(sched_place(SCHED_WORST_FIT_MEM, m, 2, j, 2, SCHED_BACKFILL, out), 1);
        ck_assert_uint_eq(out[0].machine, 1);
        m[1].free = m[1].capacity;
        ck_assert_int_eq(sched_place(SCHED_WORST_FIT_MEM, m, 2, j, 2, SCHED_RESERVE, out), 1);
        ck_assert_uint_eq(out[0].job_id, 2);
        ck_assert_uint_eq(out[0].machine, 0);
        ck_assert_int_eq(m[1].up, 1); /* the reservation ends with the pass */
        ck_assert_int_eq(m[1].free.mem, 16 * GiB);
        sched_order o;
        ck_assert_int_eq(sched_order_from_name("reserve", &o), 0);
        ck_assert_int_eq(o, SCHED_RESERVE);
        ck_assert_str_eq(sched_order_name(SCHED_STRICT_FIFO), "fifo");
        ck_assert_int_eq(sched_order_from_name("lifo", &o), -EINVAL);
}
END_TEST

START_TEST(heuristic_names_round_trip) {
        for (int h = 0; h < _SCHED_HEURISTIC_MAX; h++) {
                sched_heuristic back;
                ck_assert_int_eq(sched_heuristic_from_name(sched_heuristic_name((sched_heuristic)h), &back), 0);
                ck_assert_int_eq(back, h);
        }
        sched_heuristic unused;
        ck_assert_int_eq(sched_heuristic_from_name("fastest-fit", &unused), -EINVAL);
}
END_TEST

/* GPUs (issue 25): m0 a CPU machine, m1 4 GPUs, m2 8 GPUs, all 32 cores and 256 GiB. No heuristic
 * puts a GPU job on m0; Best- and Worst-Fit pack the GPUs (the fewest left idle first) and keep a
 * job without GPUs off a machine whose GPUs idle while another fits; First-Fit stays the first. */
static void gpu_lab(sched_machine m[3]) {
        m[0] = machine(0, 32000, 256 * GiB);
        m[1] = machine(1, 32000, 256 * GiB);
        m[2] = machine(2, 32000, 256 * GiB);
        m[1].capacity.gpus = m[1].free.gpus = 4;
        m[2].capacity.gpus = m[2].free.gpus = 8;
}

START_TEST(gpu_jobs_go_only_where_gpus_are_free) {
        for (sched_heuristic h = 0; h < _SCHED_HEURISTIC_MAX; h++) {
                sched_machine m[3];
                gpu_lab(m);
                sched_job j[6];
                for (uint64_t i = 0; i < 6; i++)
                        j[i] = (sched_job){ .id = i + 1, .req = { .mcpu = 1000, .mem = GiB, .gpus = 2 } };
                sched_assignment out[6];
                ck_assert_int_eq(sched_place(h, m, 3, j, 6, SCHED_BACKFILL, out), 6); /* 2 + 4 of 2 GPUs */
                for (int i = 0; i < 6; i++)
                        ck_assert_msg(out[i].machine != 0, "%s put job %d on the CPU machine", sched_heuristic_name(h),
                                      i + 1);
                ck_assert_int_eq(m[1].free.gpus, 0);
                ck_assert_int_eq(m[2].free.gpus, 0);
                sched_job more = { .id = 7, .req = { .mcpu = 1000, .mem = GiB, .gpus = 1 } };
                ck_assert_int_eq(sched_place(h, m, 3, &more, 1, SCHED_BACKFILL, out), 0);
        }
}
END_TEST

START_TEST(best_and_worst_fit_pack_gpus_and_spare_them) {
        static const sched_heuristic packing[] = { SCHED_BEST_FIT_CORES, SCHED_BEST_FIT_MEM, SCHED_WORST_FIT_CORES,
                                                   SCHED_WORST_FIT_MEM };
        for (size_t k = 0; k < 4; k++) {
                sched_machine m[3];
                gpu_lab(m);
                m[0].free.mcpu = 2000; /* the CPU machine is nearly full: Worst-Fit would leave it */
                sched_job one = { .id = 1, .req = { .mcpu = 1000, .mem = GiB, .gpus = 1 } };
                sched_job cpu = { .id = 2, .req = { .mcpu = 1000, .mem = GiB } };
                sched_assignment out[1];
                ck_assert_int_eq(sched_place(packing[k], m, 3, &one, 1, SCHED_BACKFILL, out), 1);
                ck_assert_uint_eq(out[0].machine, 1); /* 3 GPUs left idle, not 7 */
                ck_assert_int_eq(sched_place(packing[k], m, 3, &cpu, 1, SCHED_BACKFILL, out), 1);
                ck_assert_uint_eq(out[0].machine, 0); /* the one machine without idle GPUs */
                m[0].free.mcpu = 0;
                ck_assert_int_eq(sched_place(packing[k], m, 3, &cpu, 1, SCHED_BACKFILL, out), 1);
                ck_assert_uint_eq(out[0].machine, 1); /* then the fewest idle GPUs */
        }
        sched_machine m[3];
        gpu_lab(m);
        sched_job cpu = { .id = 1, .req = { .mcpu = 1000, .mem = GiB } };
        sched_assignment out[1];
        ck_assert_int_eq(sched_place(SCHED_FIRST_FIT, m, 3, &cpu, 1, SCHED_BACKFILL, out), 1);
        ck_assert_uint_eq(out[0].machine, 0);
}
END_TEST

/* Mix-Fit in the cube: on a machine with GPUs the third coordinate counts, so a job without GPUs
 * on an idle 8-GPU machine is off the diagonal, and a CPU machine at the same cores and memory
 * is preferred; a job of 1 core, 8 GiB and 2 GPUs on a 4-core, 32 GiB, 8-GPU machine lies on it. */
START_TEST(mix_fit_counts_the_gpus) {
        sched_machine m[3];
        gpu_lab(m);
        res_t cpu = { .mcpu = 8000, .mem = 64 * GiB };
        ck_assert_double_eq_tol(sched_mix_fit_alpha(&m[0], cpu), 0, 1e-12);
        ck_assert_double_gt(sched_mix_fit_alpha(&m[2], cpu), 0.1);
        sched_job j = { .id = 1, .req = cpu };
        sched_assignment out[1];
        ck_assert_int_eq(sched_place(SCHED_MIX_FIT, &m[1], 2, &j, 1, SCHED_BACKFILL, out), 1);
        ck_assert_uint_eq(out[0].machine, 1); /* 4 idle GPUs bend the angle less than 8 */
        sched_machine g = machine(0, 4000, 32 * GiB);
        g.capacity.gpus = g.free.gpus = 8;
        ck_assert_double_eq_tol(sched_mix_fit_alpha(&g, (res_t){ .mcpu = 1000, .mem = 8 * GiB, .gpus = 2 }), 0, 1e-12);
        ck_assert_double_eq(sched_mix_fit_alpha(&g, (res_t){ .mcpu = 1000, .mem = 8 * GiB, .gpus = 9 }), -1);
}
END_TEST

static Suite *fit_suite(void) {
        Suite *s = suite_create("fit");
        TCase *tc = tcase_create("first_fit");
        tcase_add_test(tc, places_on_first_machine_that_fits);
        tcase_add_test(tc, strict_fifo_never_lets_a_later_job_overtake);
        tcase_add_test(tc, backfill_places_later_jobs_that_fit);
        tcase_add_test(tc, down_machines_get_nothing);
        tcase_add_test(tc, memory_alone_can_block_a_job);
        suite_add_tcase(s, tc);
        TCase *paper = tcase_create("netbatch_paper");
        tcase_add_test(paper, fig3_worst_fit_memory_places_all_eight_best_fit_six);
        tcase_add_test(paper, fig4_best_fit_places_all_four_worst_fit_misses_the_32gb_job);
        tcase_add_test(paper, fig8_mix_fit_picks_the_machine_on_the_diagonal);
        tcase_add_test(paper, max_jobs_never_places_fewer_than_any_single_heuristic);
        tcase_add_test(paper, reserve_keeps_the_roomiest_machine_for_a_job_that_matched_nothing);
        tcase_add_test(paper, heuristic_names_round_trip);
        tcase_add_test(paper, gpu_jobs_go_only_where_gpus_are_free);
        tcase_add_test(paper, best_and_worst_fit_pack_gpus_and_spare_them);
        tcase_add_test(paper, mix_fit_counts_the_gpus);
        suite_add_tcase(s, paper);
        return s;
}

COLONY_CHECK_MAIN(fit_suite)
