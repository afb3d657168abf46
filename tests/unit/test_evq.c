/* test_evq.c - the simulator's event queue (controller/sim/evq.h) against a reference that
 * scans for the earliest (time, order made): pushes and pops interleaved at random, with many
 * events at one time (whole seconds) and times spread over many orders of magnitude; times
 * before the last event taken refused, and -0 taken as 0. Leaks show in the ASan tree. */
#include "check_main.h"
#include "evq.h"
#include "rng.h"
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>

#define N 4000

typedef struct ref_event {
        double t;
        uint64_t made; /* the order of its push */
        bool taken;
} ref_event;

static ref_event ref[N];
static size_t nref;

/* The reference's earliest event not taken, by time then order made. */
static size_t ref_earliest(void) {
        size_t best = N;
        for (size_t i = 0; i < nref; i++)
                if (!ref[i].taken && (best == N || ref[i].t < ref[best].t))
                        best = i; /* ascending order made: an equal time keeps the first */
        return best;
}

/* A delay after now: 0 (ties with now), a whole number of seconds (ties among themselves), or
 * anything from a microsecond to days. */
static double delay(uint64_t *rng) {
        uint64_t x = sched_rng_next(rng);
        switch (x % 4) {
        case 0: return 0;
        case 1: return (double)(x >> 8 & 15);
        default: return ldexp(sched_rng_uniform(rng), (int)(x >> 8 & 31) - 20);
        }
}

static void check_random(uint64_t seed) {
        evq q = { 0 };
        uint64_t rng = seed;
        double now = 0;
        size_t popped = 0;
        nref = 0;
        while (popped < N) {
                bool push = nref < N && (q.n == 0 || sched_rng_next(&rng) % 3 != 0);
                if (push) {
                        double t = now + delay(&rng);
                        ck_assert_int_eq(evq_push(&q, (sim_event){ .t = t, .kind = EV_EXIT, .job = nref }), 0);
                        ref[nref] = (ref_event){ .t = t, .made = nref };
                        nref++;
                        continue;
                }
                sim_event e;
                ck_assert_int_eq(evq_pop(&q, &e), 0);
                size_t want = ref_earliest();
                ck_assert_msg(e.job == want, "seed %llu pop %zu: event %llu at %.17g, the earliest is %zu at %.17g",
                              (unsigned long long)seed, popped, (unsigned long long)e.job, e.t, want, ref[want].t);
                ref[want].taken = true;
                now = e.t;
                popped++;
        }
        ck_assert_uint_eq(q.n, 0);
        evq_free(&q);
}

START_TEST(test_random_against_reference) {
        for (uint64_t seed = 1; seed <= 5; seed++)
                check_random(seed);
}
END_TEST

START_TEST(test_before_last_refused) {
        evq q = { 0 };
        sim_event e;
        ck_assert_int_eq(evq_push(&q, (sim_event){ .t = 5, .job = 1 }), 0);
        ck_assert_int_eq(evq_push(&q, (sim_event){ .t = 7, .job = 2 }), 0);
        ck_assert_int_eq(evq_pop(&q, &e), 0);
        ck_assert_uint_eq(e.job, 1);
        ck_assert_int_eq(evq_push(&q, (sim_event){ .t = 4.999, .job = 3 }), -EINVAL);
        ck_assert_int_eq(evq_push(&q, (sim_event){ .t = NAN, .job = 3 }), -EINVAL);
        ck_assert_int_eq(evq_push(&q, (sim_event){ .t = -1, .job = 3 }), -EINVAL);
        ck_assert_uint_eq(q.n, 1);                                          /* unchanged */
        ck_assert_int_eq(evq_push(&q, (sim_event){ .t = 5, .job = 4 }), 0); /* the last time itself */
        ck_assert_int_eq(evq_pop(&q, &e), 0);
        ck_assert_uint_eq(e.job, 4);
        ck_assert_int_eq(evq_pop(&q, &e), 0);
        ck_assert_uint_eq(e.job, 2);
        evq_free(&q);
}
END_TEST

START_TEST(test_negative_zero) {
        evq q = { 0 };
        sim_event e;
        ck_assert_int_eq(evq_push(&q, (sim_event){ .t = 0.0, .job = 1 }), 0);
        ck_assert_int_eq(evq_push(&q, (sim_event){ .t = -0.0, .job = 2 }), 0);
        ck_assert_int_eq(evq_push(&q, (sim_event){ .t = 1e-300, .job = 3 }), 0);
        for (uint64_t want = 1; want <= 3; want++) {
                ck_assert_int_eq(evq_pop(&q, &e), 0);
                ck_assert_uint_eq(e.job, want); /* -0 is 0: made after job 1, taken after it */
        }
        evq_free(&q);
}
END_TEST

static Suite *evq_suite(void) {
        Suite *s = suite_create("evq");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_random_against_reference);
        tcase_add_test(tc, test_before_last_refused);
        tcase_add_test(tc, test_negative_zero);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(evq_suite)
