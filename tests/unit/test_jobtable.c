/* test_jobtable.c - the jobs by id (controller/core/jobtable.h) through the state: the simulator's
 * ctl_forget_ended, ended jobs freed, live ones found and cancellable, new ids never old ones. The
 * table itself is an idmap: test_idmap has its insert, lookup, removal, growth and shrinking. */
#include "check_main.h"
#include "ctl_noop.h"
#include "jobtable.h"
#include "state.h"
#include <stdlib.h>
#include <string.h>

/* --- ctl_forget_ended through the state ------------------------------------------------------- */

static uint64_t submit(ctl_state *st) {
        char err[PROTO_ERRLEN];
        job_spec spec = { .req = { .mcpu = 1000, .mem = 1 << 20 },
                          .cwd = strdup("/"),
                          .argv = calloc(1, sizeof(char *)) };
        uint64_t id = 0;
        ck_assert_int_eq(ctl_submit(st, 1000, 1000, "u", &spec, 1, &id, err), 0);
        return id;
}

START_TEST(test_forget_ended) {
        ctl_state st;
        ctl_config cfg = { .max_pending = 100000,
                           .agent_timeout_usec = INT64_MAX,
                           .node_lost_timeout_usec = INT64_MAX };
        ctl_init(&st, &cfg, &ctl_noop_actions, NULL);
        char err[PROTO_ERRLEN];
        ctl_node *n;
        ck_assert_int_eq(ctl_node_up(&st, "h", (res_t){ .mcpu = 4000, .mem = 1 << 30 }, "sim", "", NULL, 0, NULL,
                                     (ctl_time){ 0 }, &n, err),
                         0);
        for (int i = 0; i < 10; i++)
                submit(&st); /* 1..10: 1..4 run, 5..10 wait */
        ck_assert_int_eq(ctl_schedule(&st), 4);
        for (uint64_t id = 1; id <= 3; id++) {
                job_result res = { 0 };
                ck_assert_int_eq(ctl_job_finished(&st, n, id, JOB_COMPLETED, &res, 2), 0);
        }
        ck_assert_int_eq(ctl_cancel(&st, 10, 1000, 3, err), 0); /* pending, ended: the queue keeps it till a pass */
        ctl_forget_ended(&st);
        ck_assert_uint_eq(st.njobs, 6);
        ck_assert_uint_eq(st.byid.n, 6); /* no entry left naming a freed job */
        ck_assert_uint_eq(st.npending, 5);
        for (uint64_t id = 1; id <= 10; id++) {
                job *j = ctl_find_job(&st, id);
                bool ended = id <= 3 || id == 10;
                ck_assert_msg(ended ? !j : j && j->id == id, "job %llu after forgetting", (unsigned long long)id);
        }
        /* what remains is whole: passes place the queue, bulk cancels reach live jobs only */
        ck_assert_int_eq(ctl_schedule(&st), 3);
        ck_assert_ptr_eq(ctl_next_live(&st, 1000, 1), ctl_find_job(&st, 4));
        ck_assert_uint_eq(submit(&st), 11); /* forgotten ids are never given again */
        ctl_free(&st);
}
END_TEST

static Suite *jobtable_suite(void) {
        Suite *s = suite_create("jobtable");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_forget_ended);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(jobtable_suite)
