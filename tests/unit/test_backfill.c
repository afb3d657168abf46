/* test_backfill.c - the EASY pass (backfill.h): hand-computed schedules, and the pass against a
 * slow reference on random small instances. The reference steps time one unit at a time from
 * now to find the reserved start (the first time and machine where the reserved job fits, each
 * machine's use at time t recounted from every job still running then), and lets a later job on
 * the reserved machine only when that machine's use recounted at the reserved start, the job
 * included, still leaves the reserved job its room. Machines are chosen by the scan (sched_place). */
#include "check_main.h"
#include "backfill.h"
#include "rng.h"
#include <errno.h>
#include <string.h>

#define GiB     ((int64_t)1 << 30)
#define CPU(n)  (1000 * (int64_t)(n))
#define R(c, m) ((res_t){ .mcpu = (c), .mem = (m) })

typedef struct given {
        const sched_running *v;
        size_t n;
        int asked;
} given;

static int give(void *arg, const sched_running **v, size_t *n) {
        given *g = arg;
        g->asked++;
        *v = g->v;
        *n = g->n;
        return 0;
}

/* sched_easy_place with these running jobs, the reserved start wanted or not. */
static long easy_want(sched_index *ix, sched_heuristic h, const sched_job *jobs, size_t njobs, const sched_running *run,
                      size_t nrun, int64_t now, sched_assignment *out, sched_reservation *r, bool want) {
        given g = { run, nrun, 0 };
        long n = sched_easy_place(ix, h, jobs, njobs, give, &g, want, now, out, r);
        ck_assert_int_le(g.asked, 1);
        return n;
}

static long easy(sched_index *ix, sched_heuristic h, const sched_job *jobs, size_t njobs, const sched_running *run,
                 size_t nrun, int64_t now, sched_assignment *out, sched_reservation *r) {
        return easy_want(ix, h, jobs, njobs, run, nrun, now, out, r, true);
}

static sched_index make_index(const sched_machine *m, size_t n) {
        sched_index ix;
        sched_index_init(&ix);
        for (size_t i = 0; i < n; i++)
                ck_assert_int_eq(sched_index_add(&ix, m[i]), 0);
        return ix;
}

/* One 2-CPU machine, one 1-CPU job running until 100: the wide job reserves time 100; a narrow
 * job whose limit runs past 100 would delay it and waits; one that ends by 60 goes now. */
START_TEST(wide_behind_narrow) {
        sched_machine m = { .index = 7, .capacity = R(CPU(2), 4 * GiB), .free = R(CPU(1), 3 * GiB), .up = 1 };
        sched_index ix = make_index(&m, 1);
        sched_running run = { 0, R(CPU(1), GiB), 100 };
        sched_job jobs[] = {
                { .id = 1, .req = R(CPU(2), GiB), .limit_usec = 10 },
                { .id = 2, .req = R(CPU(1), GiB), .limit_usec = 200 },
                { .id = 3, .req = R(CPU(1), GiB), .limit_usec = 60 },
                { .id = 4, .req = R(CPU(1), GiB), .limit_usec = 40 },
        };
        sched_assignment out[4];
        sched_reservation r;
        long n = easy(&ix, SCHED_FIRST_FIT, jobs, 4, &run, 1, 0, out, &r);
        ck_assert_int_eq(n, 1);
        ck_assert_uint_eq(out[0].job_id, 3);
        ck_assert_uint_eq(out[0].machine, 7);
        ck_assert_uint_eq(r.job_id, 1);
        ck_assert_uint_eq(r.machine, 7);
        ck_assert_int_eq(r.start_usec, 100);
        ck_assert_int_eq(ix.machines[0].free.mcpu, 0);
        ck_assert_int_eq(ix.machines[0].up, 1); /* the reserved machine is shown again */
        sched_index_free(&ix);
}
END_TEST

/* GPUs (issue 25): g has 2 GPUs, one held until 100 by a running job; c has none. The 2-GPU job
 * fits nowhere (not on c) and reserves g at 100; a 1-GPU job whose limit runs past 100 would keep
 * it from its second GPU and waits, one that ends by 60 goes now, and a job without GPUs still
 * fits beside them. */
START_TEST(gpus_reserve_and_backfill) {
        sched_machine m[] = {
                { .index = 0,
                  .capacity = { .mcpu = CPU(16), .mem = 64 * GiB, .gpus = 2 },
                  .free = { .mcpu = CPU(15), .mem = 63 * GiB, .gpus = 1 },
                  .up = 1 },
                { .index = 1, .capacity = R(CPU(16), 64 * GiB), .free = R(CPU(16), 64 * GiB), .up = 1 },
        };
        sched_index ix = make_index(m, 2);
        sched_running run = { 0, { .mcpu = CPU(1), .mem = GiB, .gpus = 1 }, 100 };
        sched_job jobs[] = {
                { .id = 1, .req = { .mcpu = CPU(1), .mem = GiB, .gpus = 2 }, .limit_usec = 10 },
                { .id = 2, .req = { .mcpu = CPU(1), .mem = GiB, .gpus = 1 }, .limit_usec = 200 },
                { .id = 3, .req = { .mcpu = CPU(1), .mem = GiB, .gpus = 1 }, .limit_usec = 60 },
                { .id = 4, .req = R(CPU(8), GiB), .limit_usec = 1000 },
        };
        sched_assignment out[4];
        sched_reservation r;
        const uint64_t placed[] = { 3, 4 }; /* 3 on g, before the reserved start; 4 anywhere */
        ck_assert_int_eq(easy(&ix, SCHED_FIRST_FIT, jobs, 4, &run, 1, 0, out, &r), 2);
        for (size_t i = 0; i < 2; i++)
                ck_assert_uint_eq(out[i].job_id, placed[i]);
        ck_assert(out[0].machine == 0 && ix.machines[0].free.gpus == 0);
        ck_assert_msg(r.job_id == 1 && r.machine == 0 && r.start_usec == 100, "reserved job %llu on %u at %lld",
                      (unsigned long long)r.job_id, r.machine, (long long)r.start_usec);
        sched_index_free(&ix);
}
END_TEST

/* The hand-computed schedule of that cluster, pass after pass with each job running to its
 * limit: t=0 job 3 backfills (ends 60); t=60 job 4 backfills (ends 100); t=100 the wide job
 * starts as reserved, the narrow job 2 after it at 110. Plain backfill would start 2 at 60 and
 * hold the wide job until 260. */
START_TEST(hand_schedule) {
        sched_job jobs[] = {
                { .id = 1, .req = R(CPU(2), GiB), .limit_usec = 10 },
                { .id = 2, .req = R(CPU(1), GiB), .limit_usec = 200 },
                { .id = 3, .req = R(CPU(1), GiB), .limit_usec = 60 },
                { .id = 4, .req = R(CPU(1), GiB), .limit_usec = 40 },
        };
        int64_t want_start[] = { 100, 110, 0, 60 }, start[4] = { -1, -1, -1, -1 };
        sched_machine m = { .capacity = R(CPU(2), 4 * GiB), .free = R(CPU(1), 3 * GiB), .up = 1 };
        sched_index ix = make_index(&m, 1);
        sched_running run[5] = { { 0, R(CPU(1), GiB), 100 } };
        size_t nrun = 1;
        for (int64_t now = 0; now <= 400; now++) {
                for (size_t i = 0; i < nrun;) /* the jobs ending now leave */
                        if (run[i].end_usec == now) {
                                ix.machines[0].free = res_add(ix.machines[0].free, run[i].req);
                                run[i] = run[--nrun];
                        } else
                                i++;
                sched_index_update(&ix, 0);
                sched_job pend[4];
                size_t np = 0;
                for (size_t j = 0; j < 4; j++)
                        if (start[j] < 0)
                                pend[np++] = jobs[j];
                sched_assignment out[4];
                sched_reservation r;
                long n = easy(&ix, SCHED_FIRST_FIT, pend, np, run, nrun, now, out, &r);
                for (long a = 0; a < n; a++) {
                        size_t j = out[a].job_id - 1;
                        start[j] = now;
                        run[nrun++] = (sched_running){ 0, jobs[j].req, now + jobs[j].limit_usec };
                }
        }
        for (size_t j = 0; j < 4; j++)
                ck_assert_int_eq(start[j], want_start[j]);
        sched_index_free(&ix);
}
END_TEST

/* Two machines: the wide job reserves the one free first (m1 at 30, not m0 at 50), so a long
 * narrow job still starts now on m0, beside nothing it could delay. Memory counts as cores do. */
START_TEST(two_machines_and_memory) {
        sched_machine m[] = {
                { .index = 0, .capacity = R(CPU(2), 4 * GiB), .free = R(CPU(1), 3 * GiB), .up = 1 },
                { .index = 1, .capacity = R(CPU(2), 4 * GiB), .free = R(CPU(2), 0), .up = 1 },
        };
        sched_index ix = make_index(m, 2);
        sched_running run[] = { { 0, R(CPU(1), GiB), 50 }, { 1, R(0, 4 * GiB), 30 } };
        sched_job jobs[] = {
                { .id = 1, .req = R(CPU(2), 2 * GiB), .limit_usec = 10 },
                { .id = 2, .req = R(CPU(1), GiB) }, /* no limit: runs "forever" */
        };
        sched_assignment out[2];
        sched_reservation r;
        ck_assert_int_eq(easy(&ix, SCHED_FIRST_FIT, jobs, 2, run, 2, 0, out, &r), 1);
        ck_assert_uint_eq(out[0].job_id, 2);
        ck_assert_uint_eq(out[0].machine, 0);
        ck_assert_uint_eq(r.job_id, 1);
        ck_assert_uint_eq(r.machine, 1);
        ck_assert_int_eq(r.start_usec, 30);
        sched_index_free(&ix);
}
END_TEST

/* Only a job without a limit stands in the way: the reservation is "forever" on the first machine
 * that can hold the job; jobs with limits go, a job without one only beside it, and there is
 * nothing beside it: the reserved job needs cores the unlimited job holds. */
START_TEST(forever) {
        sched_machine m = { .capacity = R(CPU(4), 4 * GiB), .free = R(CPU(2), 2 * GiB), .up = 1 };
        sched_index ix = make_index(&m, 1);
        sched_running run = { 0, R(CPU(2), 2 * GiB), SCHED_FOREVER };
        sched_job jobs[] = {
                { .id = 1, .req = R(CPU(3), GiB) },
                { .id = 2, .req = R(CPU(1), GiB) },                        /* would delay it further: waits */
                { .id = 3, .req = R(CPU(1), GiB), .limit_usec = 1000000 }, /* ends before forever: goes */
        };
        sched_assignment out[3];
        sched_reservation r;
        ck_assert_int_eq(easy(&ix, SCHED_FIRST_FIT, jobs, 3, &run, 1, 5, out, &r), 1);
        ck_assert_uint_eq(r.job_id, 1);
        ck_assert_int_eq(r.start_usec, SCHED_FOREVER);
        ck_assert_uint_eq(out[0].job_id, 3);
        sched_index_free(&ix);
}
END_TEST

/* --- the reference --------------------------------------------------------------------------- */

#define NM 4
#define NJ 10
#define NR 8

typedef struct inst {
        sched_machine m[NM];
        size_t nm;
        sched_running run[NR + NJ]; /* the running jobs, then those the reference places */
        size_t nrun;
        sched_job jobs[NJ];
        size_t nj;
        int64_t now;
} inst;

static int64_t draw(uint64_t *seed, int64_t n) { return (int64_t)(sched_rng_next(seed) % (uint64_t)n); }

static void random_inst(uint64_t *seed, inst *in) {
        memset(in, 0, sizeof(*in));
        in->now = draw(seed, 5);
        in->nm = 1 + (size_t)draw(seed, NM);
        for (size_t i = 0; i < in->nm; i++) {
                res_t cap = R(CPU(1 + draw(seed, 4)), GiB * (1 + draw(seed, 4)));
                in->m[i] = (sched_machine){
                        .index = (uint32_t)(10 + i), .capacity = cap, .free = cap, .up = draw(seed, 6) != 0
                };
        }
        in->nrun = (size_t)draw(seed, NR + 1);
        for (size_t i = 0; i < in->nrun; i++) {
                size_t m = (size_t)draw(seed, (int64_t)in->nm);
                res_t req = R(500 * (1 + draw(seed, 4)), GiB / 2 * (1 + draw(seed, 4)));
                if (!res_fits(req, in->m[m].free)) {
                        i--, in->nrun--;
                        continue;
                }
                in->m[m].free = res_sub(in->m[m].free, req);
                int64_t end = draw(seed, 8) == 0 ? SCHED_FOREVER : in->now + 1 + draw(seed, 30);
                in->run[i] = (sched_running){ m, req, end };
        }
        in->nj = 1 + (size_t)draw(seed, NJ);
        for (size_t j = 0; j < in->nj; j++)
                in->jobs[j] = (sched_job){ .id = j + 1,
                                           .req = R(500 * (1 + draw(seed, 8)), GiB / 2 * (1 + draw(seed, 8))),
                                           .limit_usec = draw(seed, 5) == 0 ? 0 : 1 + draw(seed, 40) };
}

static bool running_at(const sched_running *r, int64_t t) { return r->end_usec == SCHED_FOREVER || r->end_usec > t; }

/* Machine m's free resources at time t: its capacity less every job still running then. */
static res_t free_at(const inst *in, size_t m, int64_t t) {
        res_t f = in->m[m].capacity;
        for (size_t i = 0; i < in->nrun; i++)
                if (in->run[i].machine == m && running_at(&in->run[i], t))
                        f = res_sub(f, in->run[i].req);
        return f;
}

/* The scan's choice for one job on the machines, with machine hide (or none: NM) hidden. */
static long scan_choose(const inst *in, sched_heuristic h, res_t req, size_t hide) {
        sched_machine copy[NM];
        memcpy(copy, in->m, sizeof(copy));
        if (hide < NM)
                copy[hide].up = 0;
        sched_job one = { .id = 1, .req = req };
        sched_assignment a;
        if (sched_place(h, copy, in->nm, &one, 1, SCHED_BACKFILL, &a) != 1)
                return -1;
        return (long)a.machine - 10;
}

static long reference(inst *in, sched_heuristic h, sched_assignment *out, sched_reservation *resv) {
        long placed = 0;
        bool reserved = false;
        size_t rm = 0;
        int64_t shadow = 0;
        *resv = (sched_reservation){ 0 };
        for (size_t j = 0; j < in->nj; j++) {
                const sched_job *job = &in->jobs[j];
                int64_t end = job->limit_usec ? in->now + job->limit_usec : SCHED_FOREVER;
                long m;
                if (!reserved)
                        m = scan_choose(in, h, job->req, NM);
                else {
                        /* may it go on the reserved machine? gone by the reserved start, or that
                         * machine recounted then, the job included, still holds the reserved job */
                        in->run[in->nrun] = (sched_running){ rm, job->req, end };
                        bool ok = !running_at(&in->run[in->nrun], shadow);
                        in->nrun++;
                        ok = ok || res_fits(in->jobs[resv->job_id - 1].req, free_at(in, rm, shadow));
                        in->nrun--;
                        m = scan_choose(in, h, job->req, ok ? NM : rm);
                }
                if (m < 0) {
                        if (reserved)
                                continue;
                        int64_t last = in->now; /* the last end with a limit: nothing changes after it */
                        for (size_t i = 0; i < in->nrun; i++)
                                if (in->run[i].end_usec != SCHED_FOREVER && in->run[i].end_usec > last)
                                        last = in->run[i].end_usec;
                        for (int64_t t = in->now; t <= last && !reserved; t++) /* step time */
                                for (size_t k = 0; k < in->nm && !reserved; k++)
                                        if (in->m[k].up && res_fits(job->req, free_at(in, k, t)))
                                                reserved = true, rm = k, shadow = t;
                        for (size_t k = 0; k < in->nm && !reserved; k++)
                                if (in->m[k].up && res_fits(job->req, in->m[k].capacity))
                                        reserved = true, rm = k, shadow = SCHED_FOREVER;
                        if (reserved)
                                *resv = (sched_reservation){ job->id, in->m[rm].index, shadow };
                        continue;
                }
                in->m[m].free = res_sub(in->m[m].free, job->req);
                in->run[in->nrun++] = (sched_running){ (size_t)m, job->req, end };
                out[placed++] = (sched_assignment){ job->id, in->m[m].index };
        }
        return placed;
}

/* sched_easy_place_from over in's jobs with their least request, resource by resource, as the
 * floor; *taken: how many jobs it took before it stopped. */
static long easy_from(sched_index *ix, sched_heuristic h, inst *in, bool want, sched_assignment *out,
                      sched_reservation *r, size_t *taken) {
        given g = { in->run, in->nrun, 0 };
        sched_job_array c = { in->jobs, in->nj, 0 };
        sched_job_list list = { sched_job_array_next, &c, in->nj, in->jobs[0].req };
        for (size_t j = 1; j < in->nj; j++)
                list.floor = res_min(list.floor, in->jobs[j].req);
        long n = sched_easy_place_from(ix, h, &list, give, &g, want, in->now, out, r);
        ck_assert_int_le(g.asked, 1);
        *taken = c.next;
        return n;
}

/* Rounds alternate the reserved start wanted or not, and the whole array or the list with its
 * floor, which must stop early in some rounds and decide as the reference in all. */
static void compare(uint64_t seed0, sched_heuristic h) {
        uint64_t seed = seed0;
        size_t stopped_early = 0;
        for (int round = 0; round < 3000; round++) {
                inst in, ref;
                random_inst(&seed, &in);
                ref = in;
                sched_index ix = make_index(in.m, in.nm);
                sched_assignment got[NJ], want[NJ];
                sched_reservation rg, rw;
                bool want_start = round % 2 == 0;
                size_t taken = in.nj;
                long ng = round % 4 < 2
                                  ? easy_want(&ix, h, in.jobs, in.nj, in.run, in.nrun, in.now, got, &rg, want_start)
                                  : easy_from(&ix, h, &in, want_start, got, &rg, &taken);
                stopped_early += taken < in.nj;
                long nw = reference(&ref, h, want, &rw);
                ck_assert_int_eq(ng, nw);
                for (long a = 0; a < nw; a++) {
                        ck_assert_uint_eq(got[a].job_id, want[a].job_id);
                        ck_assert_uint_eq(got[a].machine, want[a].machine);
                }
                if (want_start || rg.job_id)
                        ck_assert_uint_eq(rg.job_id, rw.job_id);
                if (rg.job_id) {
                        ck_assert_uint_eq(rg.machine, rw.machine);
                        ck_assert_int_eq(rg.start_usec, rw.start_usec);
                }
                for (size_t k = 0; k < in.nm; k++) {
                        ck_assert(res_equal(ix.machines[k].free, ref.m[k].free));
                        ck_assert_int_eq(ix.machines[k].up, in.m[k].up);
                }
                sched_index_free(&ix);
        }
        ck_assert_uint_gt(stopped_early, 0);
}

START_TEST(against_reference_first_fit) { compare(1, SCHED_FIRST_FIT); }
END_TEST
START_TEST(against_reference_best_fit) { compare(2, SCHED_BEST_FIT_CORES); }
END_TEST
START_TEST(against_reference_worst_fit_mem) { compare(3, SCHED_WORST_FIT_MEM); }
END_TEST
START_TEST(against_reference_mix_fit) { compare(4, SCHED_MIX_FIT); }
END_TEST

START_TEST(max_jobs_refused) {
        sched_index ix;
        sched_index_init(&ix);
        sched_reservation r;
        ck_assert_int_eq(sched_easy_place(&ix, SCHED_MAX_JOBS, NULL, 0, give, NULL, true, 0, NULL, &r), -EINVAL);
        sched_index_free(&ix);
}
END_TEST

static Suite *suite(void) {
        Suite *s = suite_create("backfill");
        TCase *tc = tcase_create("core");
        tcase_set_timeout(tc, 120);
        tcase_add_test(tc, wide_behind_narrow);
        tcase_add_test(tc, gpus_reserve_and_backfill);
        tcase_add_test(tc, hand_schedule);
        tcase_add_test(tc, two_machines_and_memory);
        tcase_add_test(tc, forever);
        tcase_add_test(tc, against_reference_first_fit);
        tcase_add_test(tc, against_reference_best_fit);
        tcase_add_test(tc, against_reference_worst_fit_mem);
        tcase_add_test(tc, against_reference_mix_fit);
        tcase_add_test(tc, max_jobs_refused);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(suite)
