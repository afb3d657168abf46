/* test_stats.c - what the HTTP side reports: histograms, the sample ring, cluster totals,
 * department shares and figures, the recently ended jobs. States built by hand. */
#include "check_main.h"
#include "stats.h"
#include <string.h>

static job jobs_v[8];
static job *jobs_p[8];
static ctl_node nodes_v[2];
static ctl_node *nodes_p[2];

/* A state holding the first n jobs of jobs_v (ids 1..n) and both nodes. */
static ctl_state state_of(size_t n) {
        for (size_t i = 0; i < n; i++) {
                jobs_v[i].id = i + 1;
                jobs_p[i] = &jobs_v[i];
        }
        for (size_t i = 0; i < 2; i++)
                nodes_p[i] = &nodes_v[i];
        return (ctl_state){ .jobs = jobs_p, .njobs = n, .nodes = nodes_p, .nnodes = 2 };
}

static void setup(void) {
        memset(jobs_v, 0, sizeof(jobs_v));
        memset(nodes_v, 0, sizeof(nodes_v));
}

START_TEST(histogram_buckets_are_cumulative) {
        static const double bounds[] = { 1, 2, 5 };
        stats_hist h;
        stats_hist_init(&h, bounds, 3);
        const double v[] = { 0.5, 1, 3, 10 };
        for (size_t i = 0; i < 4; i++)
                stats_observe(&h, v[i]);
        ck_assert_uint_eq(h.counts[0], 2); /* a bound is inclusive: le="1" holds 1 */
        ck_assert_uint_eq(h.counts[1], 2);
        ck_assert_uint_eq(h.counts[2], 3);
        ck_assert_uint_eq(h.count, 4); /* +Inf */
        ck_assert_double_eq(h.sum, 14.5);
}
END_TEST

START_TEST(waits_count_started_jobs_only) {
        ctl_state st = state_of(3);
        jobs_v[0] = (job){ .id = 1, .state = JOB_RUNNING, .submit_usec = 1000000, .start_usec = 1300000 };
        jobs_v[1] = (job){ .id = 2, .state = JOB_PENDING, .submit_usec = 1000000 };
        /* an agent's clock behind the controller's: a wait of 0, not a negative one */
        jobs_v[2] = (job){
                .id = 3, .state = JOB_COMPLETED, .submit_usec = 5000000, .start_usec = 4000000, .end_usec = 6000000
        };
        stats_hist h;
        stats_waits(&st, &h);
        ck_assert_uint_eq(h.count, 2);
        ck_assert_double_eq_tol(h.sum, 0.3, 1e-9);
        ck_assert_uint_eq(h.counts[0], 1); /* le=0.1: the clamped one */
        ck_assert_uint_eq(h.counts[1], 2); /* le=0.5 */
}
END_TEST

START_TEST(totals_count_capacity_of_up_nodes_and_all_charges) {
        ctl_state st = state_of(0);
        nodes_v[0] = (ctl_node){ .up = true,
                                 .capacity = { .mcpu = 4000, .mem = 1 << 30 },
                                 .used = { .mcpu = 1500, .mem = 1 << 20 },
                                 .running = 2 };
        /* down, its agent gone a moment ago: its job still runs and is charged, its capacity is not offered */
        nodes_v[1] = (ctl_node){ .up = false,
                                 .capacity = { .mcpu = 8000, .mem = 1 << 30 },
                                 .used = { .mcpu = 1000, .mem = 1 << 20 },
                                 .running = 1 };
        st.npending = 5;
        stats_sample s = stats_now(&st, 42);
        ck_assert_int_eq(s.time_usec, 42);
        ck_assert_int_eq(s.mcpu, 4000);
        ck_assert_int_eq(s.used_mcpu, 2500);
        ck_assert_int_eq(s.mem, 1 << 30);
        ck_assert_int_eq(s.used_mem, 2 << 20);
        ck_assert_uint_eq(s.nodes_up, 1);
        ck_assert_uint_eq(s.running, 3);
        ck_assert_uint_eq(s.pending, 5);
}
END_TEST

START_TEST(the_ring_keeps_the_last_hour_oldest_first) {
        static ctl_stats s;
        ctl_state st = state_of(0);
        stats_init(&s, 7);
        ck_assert_int_eq(s.start_usec, 7);
        ck_assert_uint_eq(s.ring_len, 0);
        stats_take_sample(&s, &st, 100);
        ck_assert_uint_eq(s.ring_len, 1);
        ck_assert_int_eq(stats_sample_at(&s, 0)->time_usec, 100);
        for (int64_t t = 1; t < STATS_SAMPLES + 3; t++)
                stats_take_sample(&s, &st, 100 + t);
        ck_assert_uint_eq(s.ring_len, STATS_SAMPLES);
        ck_assert_int_eq(stats_sample_at(&s, 0)->time_usec, 103);
        ck_assert_int_eq(stats_sample_at(&s, STATS_SAMPLES - 1)->time_usec, 100 + STATS_SAMPLES + 2);
        for (size_t i = 1; i < STATS_SAMPLES; i++)
                ck_assert_int_eq(stats_sample_at(&s, i)->time_usec, stats_sample_at(&s, i - 1)->time_usec + 1);
}
END_TEST

START_TEST(departments_share_by_weight_and_hold_their_subgroups) {
        dept v[] = { { .path = "physics", .weight = 3, .cap = 1 },
                     { .path = "physics/astro", .weight = 1, .cap = 1, .leaf = true },
                     { .path = "physics/hep", .weight = 3, .cap = 1, .leaf = true },
                     { .path = "cs", .weight = 1, .cap = 1, .leaf = true } };
        depts d = { v, 4 };
        stats_dept out[4];
        ctl_state st = state_of(5);
        jobs_v[0].state = JOB_RUNNING;
        jobs_v[0].spec = (job_spec){ .group = "physics/astro", .req = { .mcpu = 1000, .mem = 100 } };
        jobs_v[1].state = JOB_PENDING;
        jobs_v[1].spec = (job_spec){ .group = "physics/hep", .req = { .mcpu = 4000, .mem = 100 } };
        jobs_v[2].state = JOB_RUNNING;
        jobs_v[2].spec = (job_spec){ .group = "cs", .req = { .mcpu = 2000, .mem = 300 } };
        jobs_v[3].state = JOB_COMPLETED; /* ended: counts for nothing */
        jobs_v[3].spec = (job_spec){ .group = "physics", .req = { .mcpu = 1000, .mem = 100 } };
        jobs_v[4].state = JOB_RUNNING; /* no group */
        jobs_v[4].spec = (job_spec){ .req = { .mcpu = 1000, .mem = 100 } };
        stats_depts(&st, &d, out);
        ck_assert_str_eq(out[0].path, "physics");
        ck_assert_double_eq_tol(out[0].share, 0.75, 1e-12);
        ck_assert_double_eq_tol(out[1].share, 0.75 * 0.25, 1e-12);
        ck_assert_double_eq_tol(out[2].share, 0.75 * 0.75, 1e-12);
        ck_assert_double_eq_tol(out[3].share, 0.25, 1e-12);
        ck_assert_uint_eq(out[0].running, 1); /* astro's job is physics's too */
        ck_assert_uint_eq(out[0].pending, 1);
        ck_assert_int_eq(out[0].used_mcpu, 1000);
        ck_assert_uint_eq(out[1].running, 1);
        ck_assert_uint_eq(out[1].pending, 0);
        ck_assert_uint_eq(out[2].pending, 1);
        ck_assert_int_eq(out[2].used_mcpu, 0);
        ck_assert_uint_eq(out[3].running, 1);
        ck_assert_int_eq(out[3].used_mcpu, 2000);
        ck_assert_int_eq(out[3].used_mem, 300);
        ck_assert_double_eq(out[3].weight, 1);
}
END_TEST

START_TEST(recent_finished_newest_first) {
        const int64_t ends[] = { 5, 1, 9, 0, 3, 7 }; /* the 0: still running */
        ctl_state st = state_of(6);
        for (size_t i = 0; i < 6; i++) {
                jobs_v[i].state = ends[i] ? JOB_COMPLETED : JOB_RUNNING;
                jobs_v[i].end_usec = ends[i];
        }
        const job *out[8];
        ck_assert_uint_eq(stats_recent_finished(&st, out, 3), 3);
        ck_assert_int_eq(out[0]->end_usec, 9);
        ck_assert_int_eq(out[1]->end_usec, 7);
        ck_assert_int_eq(out[2]->end_usec, 5);
        ck_assert_uint_eq(stats_recent_finished(&st, out, 8), 5);
        const int64_t want[] = { 9, 7, 5, 3, 1 };
        for (size_t i = 0; i < 5; i++)
                ck_assert_int_eq(out[i]->end_usec, want[i]);
        ck_assert_uint_eq(stats_recent_finished(&st, out, 0), 0);
}
END_TEST

START_TEST(job_states_are_counted) {
        uint64_t counts[_JOB_STATE_MAX];
        ctl_state st = state_of(4);
        jobs_v[0].state = JOB_PENDING;
        jobs_v[1].state = JOB_LOST;
        jobs_v[2].state = JOB_LOST;
        jobs_v[3].state = JOB_OOM_KILLED;
        stats_job_states(&st, counts);
        ck_assert_uint_eq(counts[JOB_PENDING], 1);
        ck_assert_uint_eq(counts[JOB_RUNNING], 0);
        ck_assert_uint_eq(counts[JOB_LOST], 2);
        ck_assert_uint_eq(counts[JOB_OOM_KILLED], 1);
}
END_TEST

static Suite *stats_suite(void) {
        Suite *s = suite_create("stats");
        TCase *tc = tcase_create("stats");
        tcase_add_checked_fixture(tc, setup, NULL);
        tcase_add_test(tc, histogram_buckets_are_cumulative);
        tcase_add_test(tc, waits_count_started_jobs_only);
        tcase_add_test(tc, totals_count_capacity_of_up_nodes_and_all_charges);
        tcase_add_test(tc, the_ring_keeps_the_last_hour_oldest_first);
        tcase_add_test(tc, departments_share_by_weight_and_hold_their_subgroups);
        tcase_add_test(tc, recent_finished_newest_first);
        tcase_add_test(tc, job_states_are_counted);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(stats_suite)
