/* test_arrivals.c - a dispatcher's pass over the arrivals alone (controller/core/pass.c,
 * "arrivals"): it places what a pass over the whole queue would, and looks at the arrivals and
 * at the jobs the dispatcher asks for, not at the queue. */
#include "check_main.h"
#include "rng.h"
#include "state.h"
#include "lotes_live.h"
#include <stdio.h>
#include <string.h>

#define MiB ((int64_t)1 << 20)

static char err[PROTO_ERRLEN];

/* The jobs launched, in order, and their nodes' indexes, for comparing two state machines. */
typedef struct launches {
        uint64_t id[1 << 14];
        size_t node[1 << 14];
        size_t n;
} launches;

static void note_launch(void *u, ctl_node *n, const job *j) {
        launches *l = u;
        ck_assert_uint_lt(l->n, sizeof(l->id) / sizeof(l->id[0]));
        l->id[l->n] = j->id;
        l->node[l->n++] = n->index;
}

static int persist_nothing(void *u, const job *j) {
        (void)u, (void)j;
        return 0;
}

static void no_cancel(void *u, ctl_node *n, const job *j, int grace_ms) { (void)u, (void)n, (void)j, (void)grace_ms; }

static void no_end(void *u, const job *j) { (void)u, (void)j; }

static const ctl_actions noted = { persist_nothing, note_launch, no_cancel, no_end, NULL, NULL, NULL };

/* The dispatchers the tests run, each reading waiting jobs by id (ops.by_id), so that a pass may
 * offer the arrivals alone. */
static const char *const policies[] = { "greedy", "tetris", "lotes", "coloc" };
#define NPOLICIES ((int)(sizeof(policies) / sizeof(policies[0])))

/* A state with the dispatcher called policy (seed 7) and nodes n0..n{count - 1}, of growing
 * cores and shrinking memory. */
static void make(ctl_state *st, const char *policy, int count, launches *log) {
        ctl_config cfg = { .policy = SCHED_FIRST_FIT,
                           .order = SCHED_STRICT_FIFO,
                           .max_pending = 100000,
                           .agent_timeout_usec = 5000000,
                           .node_lost_timeout_usec = 5000000 };
        if (strcmp(policy, "lotes") == 0) /* the controller's: first-fit until it learns a plan */
                ck_assert_int_eq(lotes_live_new(7, &cfg.dispatcher), 0);
        else
                ck_assert_int_eq(sched_dispatcher_new(policy, 7, &cfg.dispatcher), 0);
        ctl_init(st, &cfg, &noted, log);
        for (int m = 0; m < count; m++) {
                char name[8];
                ctl_node *out;
                snprintf(name, sizeof(name), "n%d", m);
                res_t cap = { .mcpu = 1000 * (m + 1), .mem = 512 * MiB * (count - m) };
                ck_assert_int_eq(ctl_node_up(st, name, cap, "v2", "/x", NULL, 0, (void *)1,
                                             (ctl_time){ .real_usec = 1, .mono_usec = 1 }, &out, err),
                                 0);
        }
}

/* Submit a job asking mcpu and mem, held or after job after (0: none), kept off node n0 when
 * picky; its id, 0 if refused. */
static uint64_t submit(ctl_state *st, int64_t mcpu, int64_t mem, bool hold, uint64_t after, bool picky, int64_t now) {
        char dep[32];
        snprintf(dep, sizeof(dep), "afterok:%llu", (unsigned long long)after);
        job_spec spec = { .argv = calloc(2, sizeof(char *)),
                          .cwd = strdup("/tmp"),
                          .name = strdup("j"),
                          .hold = hold,
                          .dependency = after ? strdup(dep) : NULL,
                          .exclude = picky ? strdup("n0") : NULL,
                          .req = { .mcpu = mcpu, .mem = mem } };
        spec.argv[0] = strdup("/bin/true");
        uint64_t id = 0;
        if (ctl_submit(st, 0, 0, "u", &spec, now, &id, err) < 0)
                id = 0;
        job_spec_free(&spec);
        return id;
}

/* The k-th job of st in state s (k modulo their number), or NULL when none is. */
static job *nth_in(ctl_state *st, job_state s, uint64_t k) {
        size_t n = 0;
        for (size_t i = 0; i < st->njobs; i++)
                n += st->jobs[i]->state == s;
        for (size_t i = 0; n && i < st->njobs; i++)
                if (st->jobs[i]->state == s && k-- % n == 0)
                        return st->jobs[i];
        return NULL;
}

/* Every job of a in the same state, and every pending one waiting for the same reason, as in b. */
static void same_jobs(ctl_state *a, ctl_state *b) {
        ck_assert_uint_eq(a->njobs, b->njobs);
        ck_assert_uint_eq(a->npending, b->npending);
        for (size_t i = 0; i < a->njobs; i++) {
                ck_assert_uint_eq(a->jobs[i]->id, b->jobs[i]->id);
                ck_assert_int_eq(a->jobs[i]->state, b->jobs[i]->state);
                if (a->jobs[i]->state == JOB_PENDING)
                        ck_assert_int_eq(a->jobs[i]->wait, b->jobs[i]->wait);
        }
}

/* Submissions (some held, some after an earlier job, some kept off a node), ends, cancels, holds,
 * releases and passes in any sequence: st offers its dispatcher the arrivals alone, ref the whole queue at every
 * pass (ctl_schedule_dirty before each), and both launch the same jobs on the same nodes and
 * leave the same reasons to wait. */
START_TEST(a_pass_of_the_arrivals_places_what_a_whole_pass_would) {
        static launches got, want;
        ctl_state st, ref, *both[2] = { &st, &ref };
        make(&st, policies[_i], 4, &got);
        make(&ref, policies[_i], 4, &want);
        got.n = want.n = 0;
        uint64_t seed = 3 + (uint64_t)_i;
        size_t visits = 0, whole = 0;
        for (int step = 0; step < 3000; step++) {
                uint64_t r = sched_rng_next(&seed), what = r % 12;
                job *j = nth_in(&st, what <= 6 ? JOB_RUNNING : JOB_PENDING, r >> 20);
                if (what <= 4) {
                        job *dep = (r >> 12) % 5 == 0 ? nth_in(&st, (r >> 14) % 2 ? JOB_PENDING : JOB_RUNNING, r >> 24)
                                                      : NULL;
                        uint64_t id[2];
                        for (int k = 0; k < 2; k++)
                                id[k] = submit(both[k], 250 * (int64_t)(1 + (r >> 8) % 12),
                                               64 * MiB * (int64_t)(1 + (r >> 16) % 24), (r >> 11) % 7 == 0,
                                               dep ? dep->id : 0, (r >> 30) % 13 == 0, step);
                        ck_assert_uint_eq(id[0], id[1]);
                } else if (what <= 6 && j) {
                        uint64_t id = j->id;
                        job_state how = (r >> 10) % 4 == 0 ? JOB_FAILED : JOB_COMPLETED;
                        for (int k = 0; k < 2; k++) {
                                job_result res = { 0 };
                                job *same = ctl_find_job(both[k], id);
                                ck_assert_int_eq(ctl_job_finished(both[k], ctl_find_node(both[k], same->node), id, how,
                                                                  &res, step),
                                                 0);
                        }
                } else if (what == 7 && j) {
                        uint64_t id = j->id;
                        for (int k = 0; k < 2; k++)
                                ck_assert_int_eq(ctl_cancel(both[k], id, 0, step, err), 0);
                } else if (what == 8 && j) {
                        uint64_t id = j->id;
                        bool hold = !j->spec.hold;
                        for (int k = 0; k < 2; k++)
                                ck_assert_int_eq(ctl_hold(both[k], id, 0, hold, err), 0);
                } else {
                        size_t before = st.pass_visits;
                        ctl_schedule_dirty(&ref);
                        ck_assert_int_eq(ctl_schedule(&st), ctl_schedule(&ref));
                        same_jobs(&st, &ref);
                        visits += st.pass_visits - before;
                        whole += ref.npending;
                }
        }
        ck_assert_uint_gt(got.n, 200);
        ck_assert_uint_eq(got.n, want.n);
        ck_assert_mem_eq(got.id, want.id, got.n * sizeof(got.id[0]));
        ck_assert_mem_eq(got.node, want.node, got.n * sizeof(got.node[0]));
        ck_assert_uint_lt(visits, whole); /* the arrivals' passes did look at fewer jobs */
        ctl_free(&st);
        ctl_free(&ref);
}
END_TEST

/* 2,000 jobs queue behind one on a single node; each end starts the next: a pass looks at the
 * job the dispatcher's own queue names (Greedy's machine's, Tetris's waiting jobs), not at the
 * 2,000 in the core's. */
START_TEST(a_pass_of_the_arrivals_looks_at_what_changed_not_at_the_queue) {
        static launches log;
        ctl_state st;
        log.n = 0;
        make(&st, policies[_i], 1, &log);
        uint64_t first = submit(&st, 1000, MiB, false, 0, false, 1);
        for (int i = 0; i < 2000; i++)
                ck_assert_uint_ne(submit(&st, 1000, MiB, false, 0, false, 1), 0);
        ck_assert_int_eq(ctl_schedule(&st), 1); /* a whole pass: the first */
        ck_assert_int_eq(ctl_schedule(&st), 0);
        for (uint64_t id = first; id < first + 50; id++) {
                job_result res = { 0 };
                ck_assert_int_eq(ctl_job_finished(&st, st.nodes[0], id, JOB_COMPLETED, &res, 2), 0);
                size_t before = st.pass_visits;
                ck_assert_int_eq(ctl_schedule(&st), 1);
                ck_assert_int_eq(ctl_find_job(&st, id + 1)->state, JOB_RUNNING);
                ck_assert_uint_le(st.pass_visits - before, 2);
                ck_assert_uint_eq(st.npending, 1999 - (id - first));
        }
        ctl_free(&st);
}
END_TEST

/* A job held while it waits, then released, and one whose dependency is met: each change makes
 * the next pass whole, so that the policy's own list of waiting jobs has them again and a freed
 * node starts them. */
START_TEST(a_release_or_a_dependency_met_brings_a_job_back_to_the_dispatcher) {
        static launches log;
        ctl_state st;
        log.n = 0;
        make(&st, "tetris", 1, &log);
        uint64_t a = submit(&st, 1000, MiB, false, 0, false, 1), b = submit(&st, 1000, MiB, false, 0, false, 1);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_hold(&st, b, 0, true, err), 0);
        uint64_t c = submit(&st, 1000, MiB, false, a, false, 1); /* after a, which runs */
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_int_eq(ctl_hold(&st, b, 0, false, err), 0);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_int_eq(ctl_find_job(&st, b)->wait, JOB_WAIT_RESOURCES);
        job_result res = { 0 };
        ck_assert_int_eq(ctl_job_finished(&st, st.nodes[0], a, JOB_COMPLETED, &res, 2), 0);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_find_job(&st, b)->state, JOB_RUNNING);
        ck_assert_int_eq(ctl_find_job(&st, c)->wait, JOB_WAIT_RESOURCES); /* its dependency met */
        ck_assert_int_eq(ctl_job_finished(&st, st.nodes[0], b, JOB_COMPLETED, &res, 3), 0);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_find_job(&st, c)->state, JOB_RUNNING);
        ctl_free(&st);
}
END_TEST

/* Job a held while job b arrives, runs and ends on the one node; released, a starts on the idle
 * node at the next pass (it used to wait for an exit that never came: for ever under Greedy, which
 * never had it in a queue, and until the next end under Tetris, LoTES and coloc). */
START_TEST(a_job_released_on_an_idle_cluster_starts) {
        static launches log;
        ctl_state st;
        log.n = 0;
        make(&st, policies[_i], 1, &log);
        uint64_t a = submit(&st, 1000, MiB, true, 0, false, 1), b = submit(&st, 1000, MiB, false, 0, false, 1);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        job_result res = { 0 };
        ck_assert_int_eq(ctl_job_finished(&st, st.nodes[0], b, JOB_COMPLETED, &res, 2), 0);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_int_eq(ctl_hold(&st, a, 0, false, err), 0);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_find_job(&st, a)->state, JOB_RUNNING);
        ctl_free(&st);
}
END_TEST

/* Job a, which asked to be requeued, runs on the one node; the node goes down and comes back: a
 * is pending again, below the last arrival, and starts again at the next pass (Greedy, which no
 * queue of its had it in, never started it). */
START_TEST(a_job_requeued_starts_again) {
        static launches log;
        ctl_state st;
        ctl_node *n;
        log.n = 0;
        make(&st, policies[_i], 1, &log);
        uint64_t a = submit(&st, 1000, MiB, false, 0, false, 1);
        ctl_find_job(&st, a)->spec.requeue = true;
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ctl_node_down(&st, st.nodes[0], "test", 2);
        ck_assert_int_eq(ctl_find_job(&st, a)->state, JOB_PENDING);
        ck_assert_int_eq(ctl_node_up(&st, "n0", (res_t){ .mcpu = 1000, .mem = 512 * MiB }, "v2", "/x", NULL, 0,
                                     (void *)1, (ctl_time){ .real_usec = 3, .mono_usec = 3 }, &n, err),
                         0);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_find_job(&st, a)->state, JOB_RUNNING);
        ctl_free(&st);
}
END_TEST

/* A pass in runs (job s chooses its nodes: it is offered alone, the others around it): node n1's
 * end is the dispatcher's exit in s's run, where s starts; job b, queued behind s on n1, is not
 * offered in that run. It waits still and starts at s's end (Greedy dropped it from n1's queue
 * for good: "not pending"). */
START_TEST(a_pass_in_runs_keeps_the_jobs_a_run_does_not_offer) {
        static launches log;
        ctl_state st;
        log.n = 0;
        make(&st, policies[_i], 2, &log); /* n0: 1 core, n1: 2 cores */
        job_result res = { 0 };
        uint64_t a = submit(&st, 2000, 256 * MiB, false, 0, false, 1);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        uint64_t s = submit(&st, 2000, 256 * MiB, false, 0, true, 1); /* kept off n0 */
        ck_assert_int_eq(ctl_schedule(&st), 0);
        uint64_t b = submit(&st, 2000, 256 * MiB, false, 0, false, 1);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_int_eq(ctl_job_finished(&st, st.nodes[1], a, JOB_COMPLETED, &res, 2), 0);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_find_job(&st, s)->state, JOB_RUNNING);
        ck_assert_int_eq(ctl_job_finished(&st, st.nodes[1], s, JOB_COMPLETED, &res, 3), 0);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_find_job(&st, b)->state, JOB_RUNNING);
        ctl_free(&st);
}
END_TEST

/* A job dropped by an exit in a later run of its pass: s, kept off n0, waits for n1, which b
 * fills; c waits for n0, which a fills. a's end is an exit on n0, hidden from s's run: the
 * dispatcher meets it in c's run, where its list's s (it fits n0's free resources; Tetris, LoTES
 * and coloc try it first) is not offered and is dropped, fresh at the next whole pass. That
 * needs an event, and the drop loses nothing: n0, hidden from s's run, is a node s cannot take
 * (not chosen, or busy for an exclusive job), and a node it can take frees by an event (an end,
 * a node up) that makes the next pass, where s arrives. With heartbeats' passes in between, the
 * first offers s as an arrival, which waits again; either way b's end starts it. */
static void dropped_by_a_later_run(const char *policy, int heartbeats) {
        static launches log;
        ctl_state st;
        log.n = 0;
        make(&st, policy, 2, &log); /* n0: 1 core, 1 GiB; n1: 2 cores, 512 MiB */
        job_result res = { 0 };
        uint64_t a = submit(&st, 1000, 600 * MiB, false, 0, false, 1),
                 b = submit(&st, 2000, 256 * MiB, false, 0, false, 1);
        ck_assert_int_eq(ctl_schedule(&st), 2);
        ck_assert_str_eq(ctl_find_job(&st, a)->node, "n0");
        uint64_t s = submit(&st, 1000, 512 * MiB, false, 0, true, 1);
        uint64_t c = submit(&st, 500, 600 * MiB, false, 0, false, 1);
        ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_int_eq(ctl_job_finished(&st, st.nodes[0], a, JOB_COMPLETED, &res, 2), 0);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_find_job(&st, c)->state, JOB_RUNNING);
        for (int beat = 0; beat < heartbeats; beat++)
                ck_assert_int_eq(ctl_schedule(&st), 0);
        ck_assert_int_eq(ctl_find_job(&st, s)->state, JOB_PENDING);
        ck_assert_int_eq(ctl_job_finished(&st, st.nodes[1], b, JOB_COMPLETED, &res, 3), 0);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_find_job(&st, s)->state, JOB_RUNNING);
        ck_assert_str_eq(ctl_find_job(&st, s)->node, "n1");
        ctl_free(&st);
}

START_TEST(a_job_dropped_by_a_later_run_starts_when_a_node_it_takes_frees) {
        dropped_by_a_later_run(policies[_i], 0);
        dropped_by_a_later_run(policies[_i], 3);
}
END_TEST

static Suite *arrivals_suite(void) {
        Suite *s = suite_create("arrivals");
        TCase *tc = tcase_create("arrivals");
        tcase_add_loop_test(tc, a_pass_of_the_arrivals_places_what_a_whole_pass_would, 0, NPOLICIES);
        tcase_add_loop_test(tc, a_pass_of_the_arrivals_looks_at_what_changed_not_at_the_queue, 0, NPOLICIES);
        tcase_add_test(tc, a_release_or_a_dependency_met_brings_a_job_back_to_the_dispatcher);
        tcase_add_loop_test(tc, a_job_released_on_an_idle_cluster_starts, 0, NPOLICIES);
        tcase_add_loop_test(tc, a_job_requeued_starts_again, 0, NPOLICIES);
        tcase_add_loop_test(tc, a_pass_in_runs_keeps_the_jobs_a_run_does_not_offer, 0, NPOLICIES);
        tcase_add_loop_test(tc, a_job_dropped_by_a_later_run_starts_when_a_node_it_takes_frees, 0, NPOLICIES);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(arrivals_suite)
