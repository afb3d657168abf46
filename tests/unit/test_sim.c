/* test_sim.c - the simulator's figures beyond the whole run's: each department's waits,
 * responses and CPU share, every job as each_job sees it, on a stream small enough to work
 * out by hand; and the table of names departments are interned in. */
#include "check_main.h"
#include "log.h"
#include "trace.h"
#include "sim.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define GIB ((int64_t)1 << 30)

typedef struct array_source {
        const sim_job *jobs;
        size_t n, next;
} array_source;

static int array_next(void *source, sim_job *j) {
        array_source *s = source;
        if (s->next == s->n)
                return 0;
        *j = s->jobs[s->next++];
        return 1;
}

/* One machine of 2 cores, strict FIFO first-fit:
 *   job 1, physics: 2 cores, 0 to 10
 *   job 2, cs: 1 core, arrives at 1, waits until 10, ends at 15
 *   job 3, physics: 1 core, arrives at 2, waits until 10, ends at 15
 *   a cs job of 4 cores, refused
 * physics: waits 0 and 8, responses 10 and 13, 2 x 10 + 1 x 5 = 25 core-seconds;
 * cs: wait 9, response 14, 5 core-seconds, one refused; "idle" has no job. */
static const sim_job stream[] = {
        { .arrival = 0, .runtime = 10, .req = { .mcpu = 2000, .mem = GIB }, .dept = 0 },
        { .arrival = 1, .runtime = 5, .req = { .mcpu = 1000, .mem = GIB }, .dept = 1 },
        { .arrival = 2, .runtime = 5, .req = { .mcpu = 1000, .mem = GIB }, .dept = 0 },
        { .arrival = 3, .runtime = 5, .req = { .mcpu = 4000, .mem = GIB }, .dept = 1 },
};
static const char *const dept_names[] = { "physics", "cs", "idle" };
static const res_t one_machine[] = { { .mcpu = 2000, .mem = 8 * GIB } };

static sim_job_record seen[8];
static char seen_dept[8][16], seen_machine[8][16]; /* the record's strings live only during the call */
static size_t nseen;

static int remember(void *data, const sim_job_record *r) {
        (void)data;
        ck_assert_uint_lt(nseen, 8);
        snprintf(seen_dept[nseen], sizeof(seen_dept[nseen]), "%s", r->dept);
        snprintf(seen_machine[nseen], sizeof(seen_machine[nseen]), "%s", r->machine);
        seen[nseen++] = *r;
        return 0;
}

static int refuse_all(void *data, const sim_job_record *r) {
        (void)data, (void)r;
        return -EIO;
}

static sim_config config(array_source *src) {
        *src = (array_source){ .jobs = stream, .n = 4 };
        return (sim_config){ .machines = one_machine,
                             .nmachines = 1,
                             .next_job = array_next,
                             .source = src,
                             .policy = SCHED_FIRST_FIT,
                             .order = SCHED_STRICT_FIFO,
                             .dept_names = dept_names,
                             .ndepts = 3 };
}

START_TEST(each_department_gets_its_own_waits_and_share) {
        array_source src;
        sim_config cfg = config(&src);
        sim_result r;
        char err[256];
        ck_assert_int_eq(sim_run(&cfg, &r, err, sizeof(err)), 0);
        ck_assert_uint_eq(r.refused, 1);
        ck_assert_uint_eq(r.ndepts, 2); /* idle had no job */
        const sim_dept *physics = &r.depts[0], *cs = &r.depts[1];
        ck_assert_str_eq(physics->name, "physics");
        ck_assert_uint_eq(physics->jobs, 2);
        ck_assert_uint_eq(physics->refused, 0);
        ck_assert(physics->wait.mean == 4 && physics->wait.max == 8);
        ck_assert(physics->response.mean == 11.5);
        ck_assert(physics->cpu_seconds == 25);
        ck_assert_str_eq(cs->name, "cs");
        ck_assert_uint_eq(cs->jobs, 2);
        ck_assert_uint_eq(cs->refused, 1);
        ck_assert(cs->wait.mean == 9 && cs->wait.p95 == 9 && cs->response.mean == 14);
        ck_assert(fabs(physics->cpu_share - 25.0 / 30) < 1e-12 && fabs(cs->cpu_share - 5.0 / 30) < 1e-12);
        /* the whole run's figures are still over every accepted job */
        ck_assert(fabs(r.wait.mean - 17.0 / 3) < 1e-12);
        sim_result_free(&r);
}
END_TEST

START_TEST(each_job_sees_every_accepted_job_in_id_order) {
        array_source src;
        sim_config cfg = config(&src);
        sim_result r;
        char err[256];
        cfg.each_job = remember;
        nseen = 0;
        ck_assert_int_eq(sim_run(&cfg, &r, err, sizeof(err)), 0);
        ck_assert_uint_eq(nseen, 3);
        static const double start[] = { 0, 10, 10 }, end[] = { 10, 15, 15 };
        for (size_t i = 0; i < 3; i++) {
                ck_assert_uint_eq(seen[i].id, i + 1);
                ck_assert_str_eq(seen_dept[i], dept_names[stream[i].dept]);
                ck_assert_str_eq(seen_machine[i], "m1");
                ck_assert(seen[i].arrival == stream[i].arrival && seen[i].start == start[i] && seen[i].end == end[i]);
                ck_assert_int_eq(seen[i].req.mcpu, stream[i].req.mcpu);
        }
        sim_result_free(&r);
        cfg = config(&src);
        cfg.each_job = refuse_all; /* its error ends the run */
        ck_assert_int_eq(sim_run(&cfg, &r, err, sizeof(err)), -EIO);
        ck_assert_ptr_null(r.depts);
}
END_TEST

/* Two MapReduce jobs on one machine of 2 cores, a core per task, strict FIFO first-fit:
 *   family 1 at 0: maps of 3, 5 and 4 s, reduces of 2 and 6 s
 *   family 2 at 1: a map of 1 s, a reduce of 1 s
 * maps 3 s and 5 s run 0-3 and 0-5; the 4 s map 3-7; family 2's map waits behind it (FIFO)
 * and runs 5-6, its reduce 6-7; family 1's reduces are let go at 7 and run 7-9 and 7-13.
 * Flow times 13 and 6; ideal ones (longest map + longest reduce) 5 + 6 = 11 and 1 + 1 = 2. */
#define TASK(fam, at, secs, nmaps, ntasks, red)                                                                        \
        {                                                                                                              \
                .arrival = at, .runtime = secs, .req = { .mcpu = 1000, .mem = GIB }, .family = fam,                    \
                .family_maps = nmaps, .family_tasks = ntasks, .reduce = red                                            \
        }
static const sim_job mapreduce_stream[] = {
        TASK(1, 0, 3, 3, 5, false), TASK(1, 0, 5, 3, 5, false), TASK(1, 0, 4, 3, 5, false), TASK(1, 0, 2, 3, 5, true),
        TASK(1, 0, 6, 3, 5, true),  TASK(2, 1, 1, 1, 2, false), TASK(2, 1, 1, 1, 2, true),
};

START_TEST(no_reduce_starts_before_its_familys_last_map_ends) {
        array_source src = { .jobs = mapreduce_stream, .n = 7 };
        sim_config cfg = { .machines = one_machine,
                           .nmachines = 1,
                           .next_job = array_next,
                           .source = &src,
                           .policy = SCHED_FIRST_FIT,
                           .order = SCHED_STRICT_FIFO,
                           .each_job = remember };
        sim_result r;
        char err[256];
        nseen = 0;
        ck_assert_int_eq(sim_run(&cfg, &r, err, sizeof(err)), 0);
        ck_assert_uint_eq(nseen, 7);
        double last_map_end[3] = { 0 };
        for (size_t i = 0; i < nseen; i++)
                if (!seen[i].reduce)
                        last_map_end[seen[i].family] = fmax(last_map_end[seen[i].family], seen[i].end);
        ck_assert(last_map_end[1] == 7 && last_map_end[2] == 6);
        size_t reduces = 0;
        for (size_t i = 0; i < nseen; i++) {
                ck_assert_uint_ge(seen[i].family, 1);
                if (!seen[i].reduce)
                        continue;
                reduces++;
                ck_assert_msg(seen[i].start >= last_map_end[seen[i].family], "reduce %llu of family %llu at %g",
                              (unsigned long long)seen[i].id, (unsigned long long)seen[i].family, seen[i].start);
                ck_assert(seen[i].arrival == last_map_end[seen[i].family]); /* let go by the barrier */
        }
        ck_assert_uint_eq(reduces, 3);
        ck_assert_uint_eq(r.families, 2);
        ck_assert_uint_eq(r.families_whole, 2);
        ck_assert(r.flow.max == 13 && r.flow.p50 == 6 && r.flow.mean == 9.5);
        ck_assert(r.ideal_flow.max == 11 && r.ideal_flow.mean == 6.5);
        ck_assert(r.makespan == 13);
        sim_result_free(&r);
}
/* What the progress hook was told, in order. */
static size_t progress_seen[16], nprogress;

static void remember_progress(void *arg, size_t done) {
        (void)arg;
        ck_assert_uint_lt(nprogress, 16);
        progress_seen[nprogress++] = done;
}

/* Run the stream of config() to its end, with each_job remembering the jobs, and these. */
static void run_with(void (*progress)(void *, size_t), const char *const *machine_names) {
        array_source src;
        sim_config cfg = config(&src);
        sim_result r;
        char err[256];
        cfg.each_job = remember;
        cfg.progress = progress;
        cfg.machine_names = machine_names;
        nseen = nprogress = 0;
        ck_assert_int_eq(sim_run(&cfg, &r, err, sizeof(err)), 0);
        ck_assert_uint_eq(nseen, 3);
        sim_result_free(&r);
}

/* Progress counts arrivals and leaves: while jobs 2 and 3 queue behind job 1, their arrivals
 * are work done (a count of ends alone stood at 1, the refusal, until time 10). */
START_TEST(progress_counts_arrivals_and_ends) {
        run_with(remember_progress, NULL);
        /* arrivals at 0, 1, 2 and 3 (refused: it leaves at once), ends at 10, 15 and 15 */
        ck_assert_uint_eq(nprogress, 8);
        for (size_t i = 0; i < nprogress; i++)
                ck_assert_uint_eq(progress_seen[i], i + 1);
}
END_TEST

/* The machines keep the names the configuration gives them. */
START_TEST(machines_keep_their_names) {
        static const char *const names[] = { "node07" };
        run_with(NULL, names);
        ck_assert_str_eq(seen_machine[0], "node07");
}
END_TEST

START_TEST(a_job_of_no_department_stops_the_run) {
        array_source src;
        sim_config cfg = config(&src);
        sim_result r;
        char err[256];
        cfg.ndepts = 1; /* cs is not a department any more */
        ck_assert_int_eq(sim_run(&cfg, &r, err, sizeof(err)), -EINVAL);
        ck_assert_msg(strstr(err, "of no department"), "%s", err);
}
END_TEST

START_TEST(names_are_numbered_once_in_first_seen_order) {
        sim_names t = { 0 };
        uint32_t idx;
        char name[32];
        for (uint32_t i = 0; i < 1000; i++) { /* enough to double the slots several times */
                snprintf(name, sizeof(name), "g%u", i);
                ck_assert_int_eq(sim_names_intern(&t, name, &idx), 0);
                ck_assert_uint_eq(idx, i);
        }
        for (uint32_t i = 0; i < 1000; i += 7) {
                snprintf(name, sizeof(name), "g%u", i);
                ck_assert_int_eq(sim_names_intern(&t, name, &idx), 0);
                ck_assert_uint_eq(idx, i);
        }
        ck_assert_uint_eq(t.n, 1000);
        ck_assert_str_eq(t.v[999], "g999");
        sim_names_free(&t);
        ck_assert_uint_eq(t.n, 0);
}
END_TEST

START_TEST(department_keys_by_name) {
        sim_dept_key k;
        for (k = SIM_DEPT_NONE; k <= SIM_DEPT_CLASS; k++) {
                sim_dept_key back;
                ck_assert_int_eq(sim_dept_key_from_name(sim_dept_key_name(k), &back), 0);
                ck_assert_int_eq(back, k);
        }
        ck_assert_int_eq(sim_dept_key_from_name("team", &k), -EINVAL);
}
END_TEST

/* GPUs (issue 25) on one machine of 2 cores, 8 GiB and 2 GPUs, strict FIFO:
 *   job 1, physics: 1 core, 2 GPUs, 0 to 10
 *   job 2, cs: 1 core, 1 GPU, arrives at 1, waits for the GPUs until 10, ends at 14
 *   job 3, cs: 1 core, no GPU, arrives at 2, waits behind job 2 until 10, ends at 15
 * GPU-seconds: physics 20, cs 4; the GPUs are 24 of 2 x 15 busy. */
static const sim_job gpu_stream[] = {
        { .arrival = 0, .runtime = 10, .req = { .mcpu = 1000, .mem = GIB, .gpus = 2 }, .dept = 0 },
        { .arrival = 1, .runtime = 4, .req = { .mcpu = 1000, .mem = GIB, .gpus = 1 }, .dept = 1 },
        { .arrival = 2, .runtime = 5, .req = { .mcpu = 1000, .mem = GIB }, .dept = 1 },
};
static const res_t gpu_machine[] = { { .mcpu = 2000, .mem = 8 * GIB, .gpus = 2 } };

START_TEST(gpu_seconds_and_utilization) {
        array_source src;
        sim_config cfg = config(&src);
        src.jobs = gpu_stream, src.n = 3;
        cfg.machines = gpu_machine;
        cfg.sample_seconds = 2.5;
        sim_result r;
        char err[256];
        ck_assert_int_eq(sim_run(&cfg, &r, err, sizeof(err)), 0);
        ck_assert_int_eq(r.gpus, 2);
        ck_assert_double_eq_tol(r.makespan, 15, 1e-9);
        ck_assert_double_eq_tol(r.mean_gpu, 24.0 / 30, 1e-12);
        ck_assert_double_eq_tol(r.samples[2].gpu, 1, 1e-12);   /* at 5: job 1's 2 GPUs */
        ck_assert_double_eq_tol(r.samples[5].gpu, 0.5, 1e-12); /* at 12.5: job 2's 1 */
        ck_assert_double_eq_tol(r.depts[0].gpu_seconds, 20, 1e-9);
        ck_assert_double_eq_tol(r.depts[1].gpu_seconds, 4, 1e-9);
        ck_assert_double_eq_tol(r.depts[0].gpu_share, 20.0 / 24, 1e-12);
        sim_result_free(&r);
        cfg.machines = one_machine; /* the same jobs without GPUs: none runs a GPU job, so none is placed */
        src.next = 0;
        ck_assert_int_eq(sim_run(&cfg, &r, err, sizeof(err)), 0);
        ck_assert_int_eq(r.gpus, 0);
        ck_assert_uint_eq(r.refused, 2);
        ck_assert_double_eq(r.mean_gpu, 0);
        sim_result_free(&r);
}
END_TEST

/* --fair: one machine of 4 cores and 2 GPUs, strict FIFO. cs runs 1 core + 2 GPUs (0 to 10),
 * physics 2 cores (0 to 20); at 1 cs's next (1 core, 1 GPU) waits for a GPU, at 2 physics's next
 * (1 core) arrives. In submission order cs's job blocks it until 10; under DRF, which counts the
 * GPUs, cs holds all of them (a dominant share of 1, half the cores' 0.5 of physics), so
 * physics's job goes first and starts at once. */
static const sim_job fair_stream[] = {
        { .arrival = 0, .runtime = 10, .req = { .mcpu = 1000, .mem = GIB, .gpus = 2 }, .dept = 1 },
        { .arrival = 0, .runtime = 20, .req = { .mcpu = 2000, .mem = GIB }, .dept = 0 },
        { .arrival = 1, .runtime = 5, .req = { .mcpu = 1000, .mem = GIB, .gpus = 1 }, .dept = 1 },
        { .arrival = 2, .runtime = 5, .req = { .mcpu = 1000, .mem = GIB }, .dept = 0 },
};
static const res_t fair_machine[] = { { .mcpu = 4000, .mem = 8 * GIB, .gpus = 2 } };

START_TEST(fair_order_counts_the_gpus) {
        for (int fair = 0; fair < 2; fair++) {
                array_source src;
                sim_config cfg = config(&src);
                src.jobs = fair_stream, src.n = 4;
                cfg.machines = fair_machine;
                cfg.each_job = remember;
                cfg.fair = fair, cfg.fair_algo = FAIR_DRF;
                nseen = 0;
                sim_result r;
                char err[256];
                ck_assert_int_eq(sim_run(&cfg, &r, err, sizeof(err)), 0);
                ck_assert_uint_eq(nseen, 4);
                ck_assert_double_eq_tol(seen[3].start, (fair ? 2 : 10), 1e-9);
                sim_result_free(&r);
        }
}
END_TEST

static int ascending(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

/* sim_summarize sorts by the doubles' bits: negative and positive values, every exponent from
 * 2^-60 to 2^60, repeats, zero; the values come back in qsort's order, the figures read there. */
START_TEST(summaries_sort_negative_tiny_huge_and_repeated_values) {
        enum { N = 5000 };
        static double v[N], ref[N];
        unsigned seed = 7;
        for (size_t i = 0; i < N; i++) {
                double mag = ldexp((double)(rand_r(&seed) % 1000 + 1), rand_r(&seed) % 121 - 60);
                v[i] = i % 7 == 0 ? 0 : i % 11 == 0 ? v[i / 2] : rand_r(&seed) % 3 == 0 ? -mag : mag;
                ref[i] = v[i];
        }
        qsort(ref, N, sizeof(*ref), ascending);
        sim_stats st = sim_summarize(v, N);
        for (size_t i = 0; i < N; i++)
                ck_assert_msg(v[i] == ref[i], "value %zu: %g, qsort's %g", i, v[i], ref[i]);
        ck_assert(st.p50 == ref[(N - 1) / 2] && st.max == ref[N - 1]);
        ck_assert(st.p99 == ref[(size_t)((double)(N - 1) * 0.99)]);
}
END_TEST

static Suite *sim_suite(void) {
        log_open("test_sim", NULL, LOG_WARNING); /* the core logs every transition */
        Suite *s = suite_create("sim");
        TCase *tc = tcase_create("sim");
        tcase_add_test(tc, each_department_gets_its_own_waits_and_share);
        tcase_add_test(tc, each_job_sees_every_accepted_job_in_id_order);
        tcase_add_test(tc, a_job_of_no_department_stops_the_run);
        tcase_add_test(tc, no_reduce_starts_before_its_familys_last_map_ends);
        tcase_add_test(tc, progress_counts_arrivals_and_ends);
        tcase_add_test(tc, machines_keep_their_names);
        tcase_add_test(tc, names_are_numbered_once_in_first_seen_order);
        tcase_add_test(tc, department_keys_by_name);
        tcase_add_test(tc, gpu_seconds_and_utilization);
        tcase_add_test(tc, fair_order_counts_the_gpus);
        tcase_add_test(tc, summaries_sort_negative_tiny_huge_and_repeated_values);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(sim_suite)
