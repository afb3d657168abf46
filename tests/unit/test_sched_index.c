/* test_sched_index.c - the indexed heuristics against the scan (sched_place, the reference), on
 * random clusters: the same assignments in the same order and the same machines after, pass
 * after pass, while machines fill, empty, go down and come back. */
#include "check_main.h"
#include "rng.h"
#include "sched_index.h"
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#define GiB          ((int64_t)1 << 30)
#define MAX_MACHINES 300
#define MAX_JOBS     60

static int64_t draw(uint64_t *seed, int64_t n) { return (int64_t)(sched_rng_next(seed) % (uint64_t)n); }

/* Few distinct values, so ties between machines are common: the tie rule is what is tested. */
static res_t random_free(uint64_t *seed, res_t cap) {
        res_t f = { .mcpu = 500 * draw(seed, cap.mcpu / 500 + 1), .mem = GiB * draw(seed, cap.mem / GiB + 1) };
        if (draw(seed, 20) == 0) /* over-committed: a node back with less than its jobs hold */
                f.mcpu = -500;
        return f;
}

static sched_machine random_machine(uint64_t *seed, uint32_t index) {
        res_t cap = { .mcpu = 2000 << draw(seed, 3), .mem = (4 * GiB) << draw(seed, 3) };
        return (sched_machine){
                .index = index, .capacity = cap, .free = random_free(seed, cap), .up = draw(seed, 8) != 0
        };
}

/* Some GPU jobs, some GPU machines (a third with 4 or 8 GPUs, partly free): the index prunes on
 * free GPUs and Best/Worst-Fit put the GPUs first (sched.h). */
static bool with_gpus;

static void random_gpus(uint64_t *seed, sched_machine *m) {
        if (!with_gpus || draw(seed, 3) != 0)
                return;
        m->capacity.gpus = 4 << draw(seed, 2);
        m->free.gpus = draw(seed, m->capacity.gpus + 1);
}

static size_t random_jobs(uint64_t *seed, sched_job *j, uint64_t first_id) {
        size_t n = 1 + (size_t)draw(seed, MAX_JOBS);
        for (size_t i = 0; i < n; i++)
                j[i] = (sched_job){ .id = first_id + i,
                                    .req = { .mcpu = 500 * (1 + draw(seed, 8)),
                                             .mem = GiB * (1 + draw(seed, 16)),
                                             .gpus = with_gpus && draw(seed, 2) ? 1 << draw(seed, 3) : 0 } };
        return n;
}

/* One pass of h in order on both: the scan on ref, the index on ix. Equal results or it fails. */
static void same_pass(sched_index *ix, sched_machine *ref, sched_heuristic h, sched_order order, const sched_job *j,
                      size_t nj) {
        sched_assignment want[MAX_JOBS], got[MAX_JOBS];
        long nw = sched_place(h, ref, ix->n, j, nj, order, want);
        long ng = sched_index_place(ix, h, j, nj, order, got);
        ck_assert_int_ge(nw, 0);
        ck_assert_msg(ng == nw, "%s, %s: the index placed %ld, the scan %ld", sched_heuristic_name(h),
                      sched_order_name(order), ng, nw);
        for (long a = 0; a < nw; a++) {
                ck_assert_uint_eq(got[a].job_id, want[a].job_id);
                ck_assert_uint_eq(got[a].machine, want[a].machine);
        }
        for (size_t m = 0; m < ix->n; m++) {
                ck_assert_int_eq(ix->machines[m].free.mcpu, ref[m].free.mcpu);
                ck_assert_int_eq(ix->machines[m].free.mem, ref[m].free.mem);
                ck_assert_int_eq(ix->machines[m].free.gpus, ref[m].free.gpus);
                ck_assert_int_eq(ix->machines[m].up, ref[m].up);
        }
}

/* Change a few machines on both sides, as jobs end and nodes come and go between passes. */
static void churn(uint64_t *seed, sched_index *ix, sched_machine *ref) {
        for (int k = draw(seed, 10); k >= 0; k--) {
                size_t m = (size_t)draw(seed, (int64_t)ix->n);
                if (draw(seed, 6) == 0)
                        ref[m].up = !ref[m].up;
                else
                        ref[m].free =
                                (res_t){ .mcpu = random_free(seed, ref[m].capacity).mcpu,
                                         .mem = random_free(seed, ref[m].capacity).mem,
                                         .gpus = ref[m].capacity.gpus ? draw(seed, ref[m].capacity.gpus + 1) : 0 };
                ix->machines[m] = ref[m];
                sched_index_update(ix, m);
        }
}

START_TEST(every_heuristic_and_order_decides_as_the_scan) {
        uint64_t seed = 7 + (uint64_t)_i;
        with_gpus = _i == 1;
        static sched_machine ref[MAX_MACHINES];
        sched_job j[MAX_JOBS];
        for (int round = 0; round < 400; round++) {
                sched_index ix;
                sched_index_init(&ix);
                size_t n = 1 + (size_t)draw(&seed, round % 4 == 0 ? MAX_MACHINES : 12);
                for (size_t m = 0; m < n; m++) {
                        ref[m] = random_machine(&seed, (uint32_t)(1000 + m)); /* handles are not positions */
                        random_gpus(&seed, &ref[m]);
                        ck_assert_int_eq(sched_index_add(&ix, ref[m]), 0);
                }
                sched_heuristic h = (sched_heuristic)(round % _SCHED_HEURISTIC_MAX);
                sched_order order = (sched_order)((round / _SCHED_HEURISTIC_MAX) % 3);
                uint64_t id = 1;
                for (int pass = 0; pass < 6; pass++) {
                        size_t nj = random_jobs(&seed, j, id);
                        id += nj;
                        same_pass(&ix, ref, h, order, j, nj);
                        churn(&seed, &ix, ref);
                }
                sched_index_free(&ix);
        }
}
END_TEST

/* sched_index_place_from places what sched_index_place places over the whole list, and leaves
 * the machines alike, in every order, though it stops reading where nothing as small as the
 * list's least request fits (some rounds do). */
START_TEST(a_list_read_a_job_at_a_time_places_as_the_whole_list) {
        uint64_t seed = 41 + (uint64_t)_i;
        with_gpus = _i == 1;
        static sched_machine machines[MAX_MACHINES];
        sched_job j[MAX_JOBS];
        size_t stopped_early = 0;
        for (int round = 0; round < 600; round++) {
                sched_index whole, from;
                sched_index_init(&whole);
                sched_index_init(&from);
                size_t n = 1 + (size_t)draw(&seed, round % 4 == 0 ? MAX_MACHINES : 12);
                for (size_t m = 0; m < n; m++) {
                        machines[m] = random_machine(&seed, (uint32_t)m);
                        random_gpus(&seed, &machines[m]);
                        ck_assert_int_eq(sched_index_add(&whole, machines[m]), 0);
                        ck_assert_int_eq(sched_index_add(&from, machines[m]), 0);
                }
                sched_heuristic h = (sched_heuristic)(round % SCHED_MAX_JOBS);
                sched_order order = (sched_order)((round / SCHED_MAX_JOBS) % 3);
                size_t nj = random_jobs(&seed, j, 1);
                res_t floor = j[0].req;
                for (size_t i = 1; i < nj; i++)
                        floor = res_min(floor, j[i].req);
                sched_assignment want[MAX_JOBS], got[MAX_JOBS];
                sched_job_array r = { j, nj, 0 };
                long nw = sched_index_place(&whole, h, j, nj, order, want);
                long ng = sched_index_place_from(&from, h, &(sched_job_list){ sched_job_array_next, &r, nj, floor },
                                                 order, got);
                ck_assert_msg(ng == nw, "%s, %s: %ld placed a job at a time, %ld whole", sched_heuristic_name(h),
                              sched_order_name(order), ng, nw);
                for (long a = 0; a < nw; a++) {
                        ck_assert_uint_eq(got[a].job_id, want[a].job_id);
                        ck_assert_uint_eq(got[a].machine, want[a].machine);
                }
                for (size_t m = 0; m < n; m++) {
                        ck_assert(res_equal(from.machines[m].free, whole.machines[m].free));
                        ck_assert_int_eq(from.machines[m].up, whole.machines[m].up);
                }
                stopped_early += order != SCHED_STRICT_FIFO && r.next < nj; /* FIFO stops anyway */
                sched_index_free(&whole);
                sched_index_free(&from);
        }
        ck_assert_uint_gt(stopped_early, 20);
}
END_TEST

START_TEST(single_choices_match_on_a_large_cluster) {
        uint64_t seed = 11;
        static sched_machine ref[MAX_MACHINES];
        sched_index ix;
        sched_index_init(&ix);
        for (size_t m = 0; m < MAX_MACHINES; m++) {
                ref[m] = random_machine(&seed, (uint32_t)m);
                ck_assert_int_eq(sched_index_add(&ix, ref[m]), 0);
        }
        for (int k = 0; k < 3000; k++) {
                sched_job j[MAX_JOBS];
                random_jobs(&seed, j, 1);
                sched_job one = j[0];
                one.req.mcpu *= 1 + draw(&seed, 3); /* some fit nowhere */
                for (int h = 0; h < SCHED_MAX_JOBS; h++) {
                        sched_assignment a;
                        sched_machine copy[MAX_MACHINES];
                        memcpy(copy, ref, sizeof(copy));
                        long placed = sched_place((sched_heuristic)h, copy, MAX_MACHINES, &one, 1, SCHED_BACKFILL, &a);
                        ck_assert_int_eq(sched_index_choose(&ix, (sched_heuristic)h, one.req),
                                         placed ? (long)a.machine : -1);
                }
                churn(&seed, &ix, ref);
        }
        ck_assert_int_eq(sched_index_choose(&ix, SCHED_MAX_JOBS, ref[0].free), -EINVAL);
        sched_index_free(&ix);
}
END_TEST

START_TEST(an_empty_index_places_nothing) {
        sched_index ix;
        sched_index_init(&ix);
        sched_job one = { .id = 1, .req = { .mcpu = 1, .mem = 1 } };
        sched_assignment a;
        for (int h = 0; h < _SCHED_HEURISTIC_MAX; h++)
                ck_assert_int_eq(sched_index_place(&ix, (sched_heuristic)h, &one, 1, SCHED_RESERVE, &a), 0);
        ck_assert_int_eq(sched_index_roomiest(&ix), -1);
        ck_assert_int_eq(sched_index_place(&ix, _SCHED_HEURISTIC_MAX, &one, 1, SCHED_BACKFILL, &a), -EINVAL);
        sched_index_free(&ix);
}
END_TEST

/* First-Fit's corner bound (the least of cores and memory at 4 GiB a core) prunes only subtrees
 * without a fit: machines with complementary leftovers (many cores and little memory beside
 * the reverse, which a weighted sum of both could not prune), negative amounts included, against
 * a plain first fit over the array. */
START_TEST(first_fit_corner_bound_never_prunes_a_fit) {
        uint64_t seed = 23;
        static sched_machine ref[MAX_MACHINES];
        for (size_t m = 0; m < MAX_MACHINES; m++) {
                bool cores = draw(&seed, 2);
                res_t f = { .mcpu = cores ? 1000 * draw(&seed, 16) : draw(&seed, 600) - 100,
                            .mem = cores ? draw(&seed, 3 * GiB) - GiB : GiB * draw(&seed, 64) };
                ref[m] = (sched_machine){
                        .index = (uint32_t)m, .capacity = { .mcpu = 16000, .mem = 64 * GiB }, .free = f, .up = 1
                };
        }
        sched_index ix;
        sched_index_init(&ix);
        for (size_t m = 0; m < MAX_MACHINES; m++)
                ck_assert_int_eq(sched_index_add(&ix, ref[m]), 0);
        for (int k = 0; k < 20000; k++) {
                res_t req = { .mcpu = draw(&seed, 8000) - 200, .mem = draw(&seed, 16 * GiB) - GiB / 4 };
                long want = -1;
                for (size_t m = 0; m < MAX_MACHINES && want < 0; m++)
                        if (ref[m].free.mcpu >= req.mcpu && ref[m].free.mem >= req.mem)
                                want = (long)m;
                ck_assert_msg(sched_index_first_fit(&ix, req) == want,
                              "request of %" PRId64 " mcpu, %" PRId64 " B: want machine %ld", req.mcpu, req.mem, want);
        }
        sched_index_free(&ix);
}
END_TEST

static Suite *sched_index_suite(void) {
        Suite *s = suite_create("sched_index");
        TCase *tc = tcase_create("core");
        tcase_set_timeout(tc, 60);
        tcase_add_loop_test(tc, every_heuristic_and_order_decides_as_the_scan, 0, 2); /* 1: with GPUs */
        tcase_add_loop_test(tc, a_list_read_a_job_at_a_time_places_as_the_whole_list, 0, 2);
        tcase_add_test(tc, single_choices_match_on_a_large_cluster);
        tcase_add_test(tc, an_empty_index_places_nothing);
        tcase_add_test(tc, first_fit_corner_bound_never_prunes_a_fit);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(sched_index_suite)
