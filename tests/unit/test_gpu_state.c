/* test_gpu_state.c - GPUs in the controller's state machine: a node's count and type, a job
 * refused for more than any node has, jobs waiting while the GPUs are held, the indexes an
 * agent gave kept until a requeue, a stray's GPUs held until it ends. */
#include "check_main.h"
#include "state.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MiB ((int64_t)1 << 20)

static ctl_state st;
static char err[PROTO_ERRLEN];
static int launched;

static int keep(void *u, const job *j) {
        (void)u;
        (void)j;
        return 0;
}
static void launch(void *u, ctl_node *n, const job *j) {
        (void)u;
        (void)n;
        (void)j;
        launched++;
}
static void cancel(void *u, ctl_node *n, const job *j, int grace_ms) {
        (void)u;
        (void)n;
        (void)j;
        (void)grace_ms;
}
static void ended(void *u, const job *j) {
        (void)u;
        (void)j;
}
static const ctl_actions actions = { .persist = keep, .launch = launch, .cancel = cancel, .terminal = ended };

static void setup(void) {
        ctl_config cfg = { .policy = SCHED_FIRST_FIT,
                           .order = SCHED_STRICT_FIFO,
                           .max_pending = 100,
                           .kill_grace_ms = 100,
                           .agent_timeout_usec = 5000000,
                           .node_lost_timeout_usec = 5000000 };
        launched = 0;
        ctl_init(&st, &cfg, &actions, NULL);
}

static void teardown(void) { ctl_free(&st); }

static uint64_t submit(int64_t gpus, bool requeue) {
        job_spec spec = { .argv = calloc(2, sizeof(char *)),
                          .cwd = strdup("/tmp"),
                          .name = strdup("g"),
                          .req = { .mcpu = 100, .mem = MiB, .gpus = gpus },
                          .requeue = requeue };
        spec.argv[0] = strdup("/bin/true");
        uint64_t id = 0;
        int r = ctl_submit(&st, 0, 0, "u", &spec, 1000, &id, err);
        job_spec_free(&spec);
        return r < 0 ? 0 : id;
}

START_TEST(gpus_are_a_pool_per_node_and_a_requeue_forgets_the_indexes) {
        ctl_node *n = NULL;
        ck_assert_int_eq(ctl_node_up(&st, "g1", (res_t){ .mcpu = 4000, .mem = 1024 * MiB, .gpus = 2 }, "v1", "/x", NULL,
                                     0, (void *)1, (ctl_time){ 1000, 1000 }, &n, err),
                         0);
        ck_assert_int_eq(ctl_node_set_gpu_type(&st, n, "ssd", "a100"), 0);
        ck_assert_str_eq(n->features, "ssd,a100");
        ck_assert_str_eq(n->gpu_type, "a100");
        ck_assert_int_eq(ctl_node_set_gpu_type(&st, n, "a100", "a100"), 0); /* named twice: once */
        ck_assert_str_eq(n->features, "a100");

        ck_assert_uint_eq(submit(3, false), 0);
        ck_assert_str_eq(err, "no node has 3 GPUs (largest: 2)");
        uint64_t a = submit(1, true), b = submit(1, false), c = submit(1, false);
        ck_assert(a && b && c);
        ck_assert_int_eq(ctl_schedule(&st), 2);
        ck_assert_int_eq(n->used.gpus, 2);
        ck_assert_int_eq(ctl_find_job(&st, c)->state, JOB_PENDING); /* cores and memory to spare */
        ck_assert_int_eq(ctl_find_job(&st, c)->wait, JOB_WAIT_RESOURCES);

        ck_assert_int_eq(ctl_job_set_gpus(&st, n, a, "1"), 0);
        ck_assert_int_eq(ctl_job_set_gpus(&st, n, c, "0"), -ENOENT); /* not running there */
        ck_assert_int_eq(ctl_job_started(&st, n, a, 2000), 0);
        ck_assert_str_eq(ctl_find_job(&st, a)->gpu_ids, "1");

        /* the node comes back without a: requeued, its indexes gone with the run */
        ctl_node_disconnected(&st, n);
        ctl_node *again = NULL;
        const uint64_t only_b[] = { b };
        ck_assert_int_eq(ctl_node_up(&st, "g1", (res_t){ .mcpu = 4000, .mem = 1024 * MiB, .gpus = 2 }, "v1", "/x",
                                     only_b, 1, (void *)1, (ctl_time){ 2000, 2000 }, &again, err),
                         0);
        (void)ctl_node_heard(&st, again, (ctl_time){ 2000 + 5000001, 2000 + 5000001 });
        ctl_check_silence(&st, (ctl_time){ 2000 + 5000001, 2000 + 5000001 });
        job *ja = ctl_find_job(&st, a);
        ck_assert_int_eq(ja->state, JOB_PENDING);
        ck_assert_ptr_null(ja->gpu_ids);
}
END_TEST

/* A node whose agent comes back still running a job the controller requeued (a stray) has that
 * run's GPUs assigned: no other GPU job is placed in their room until the stray's end is
 * reported, else the agent would refuse it for want of devices. */
START_TEST(a_stray_holds_its_gpus_until_it_ends) {
        const res_t cap = { .mcpu = 4000, .mem = 1024 * MiB, .gpus = 2 };
        ctl_node *n = NULL;
        ck_assert_int_eq(ctl_node_up(&st, "g1", cap, "v1", "/x", NULL, 0, (void *)1, (ctl_time){ 1000, 1000 }, &n, err),
                         0);
        uint64_t a = submit(2, true);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        ck_assert_int_eq(ctl_job_started(&st, n, a, 2000), 0);
        ctl_node_disconnected(&st, n);
        ctl_check_silence(&st, (ctl_time){ 1000 + 5000001, 1000 + 5000001 });
        ck_assert_int_eq(ctl_find_job(&st, a)->state, JOB_PENDING); /* requeued */

        const uint64_t still[] = { a };
        ck_assert_int_eq(ctl_node_up(&st, "g1", cap, "v1", "/x", still, 1, (void *)1,
                                     (ctl_time){ 1000 + 6000000, 1000 + 6000000 }, &n, err),
                         0);
        ck_assert_uint_eq(n->nstrays, 1);
        ck_assert_int_eq(n->stray_held.gpus, 2);
        uint64_t b = submit(1, false);
        ck_assert_int_eq(ctl_schedule(&st), 0); /* a is held; b would find no free device there */
        ck_assert_int_eq(ctl_find_job(&st, b)->wait, JOB_WAIT_RESOURCES);

        job_result res = { .signal = 15 };
        ck_assert_int_eq(ctl_job_finished(&st, n, a, JOB_CANCELLED, &res, 1000 + 6000001), -ENOENT);
        ck_assert_int_eq(n->stray_held.gpus, 0);
        ck_assert_int_eq(ctl_schedule(&st), 1); /* a again, in its place before b */
        ck_assert_int_eq(ctl_find_job(&st, a)->state, JOB_RUNNING);
        ck_assert_int_eq(ctl_find_job(&st, b)->state, JOB_PENDING);
}
END_TEST

static Suite *gpu_state_suite(void) {
        Suite *s = suite_create("gpu_state");
        TCase *tc = tcase_create("gpus");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, gpus_are_a_pool_per_node_and_a_requeue_forgets_the_indexes);
        tcase_add_test(tc, a_stray_holds_its_gpus_until_it_ends);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(gpu_state_suite)
