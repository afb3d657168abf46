/* test_family.c - job families through the controller's state (controller/core/family.h): the
 * jobs and arrays a dependency links, in either direction, are one family named by its first
 * unit; its counts, arrival, end and flow time, the flow time with unlimited machines on a small
 * instance computed by hand, and the same family after a restart. */
#include "check_main.h"
#include "ctl_noop.h"
#include "state.h"
#include <cjson/cJSON.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#define MiB ((int64_t)1 << 20)
#define S   1000000 /* a second, in microseconds */

static const ctl_config cfg = { .policy = SCHED_FIRST_FIT,
                                .order = SCHED_STRICT_FIFO,
                                .max_pending = 100000,
                                .agent_timeout_usec = 5000000,
                                .node_lost_timeout_usec = 5000000 };
static ctl_state st;
static ctl_node *n;
static char err[PROTO_ERRLEN];

static void setup(void) {
        ctl_init(&st, &cfg, &ctl_noop_actions, NULL);
        ck_assert_int_eq(ctl_node_up(&st, "a", (res_t){ .mcpu = 1000, .mem = 1024 * MiB }, "v1", "/x", NULL, 0, NULL,
                                     (ctl_time){ 1000, 1000 }, &n, err),
                         0);
}

static void teardown(void) { ctl_free(&st); }

/* Submit count jobs (0: one) of mcpu with dependency dep at now; returns the (first) id. */
static uint64_t submit(const char *dep, size_t count, int64_t mcpu, int64_t now) {
        job_spec spec = { .argv = calloc(2, sizeof(char *)),
                          .cwd = strdup("/tmp"),
                          .name = strdup("j"),
                          .req = { .mcpu = mcpu, .mem = MiB },
                          .dependency = dep ? strdup(dep) : NULL };
        spec.argv[0] = strdup("/bin/true");
        uint64_t id = 0;
        ck_assert_int_eq(ctl_submit_array(&st, 1, 1, "u", &spec, count, NULL, now, &id, err), 0);
        job_spec_free(&spec);
        return id;
}

/* Job id runs from start to end (seconds), completed. */
static void run(uint64_t id, int64_t start, int64_t end) {
        job_result res = { 0 };
        ck_assert_int_eq(ctl_job_started(&st, n, id, start * S), 0);
        ck_assert_int_eq(ctl_job_finished(&st, n, id, JOB_COMPLETED, &res, end * S), 0);
}

static cJSON *family_of(uint64_t id, int64_t now) {
        cJSON *f = NULL;
        ck_assert_int_eq(ctl_family_json(&st, ctl_find_job(&st, id), now, &f), 0);
        return f;
}

static double num(const cJSON *o, const char *key) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
        ck_assert_msg(cJSON_IsNumber(v), "no number %s", key);
        return v->valuedouble;
}

static double count(const cJSON *f, const char *state) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(f, "counts"), state);
        return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* Maps 1-3 (500 mcpu each: two at once on the node), reduces 4-5 after them all, an unrelated
 * job 6, and job 7 after the reduces. By hand: arrival 10 s, the last end 44 s, flow 34 s; with
 * unlimited machines the maps take their longest run (10 s), the reduces start then (after their
 * submit at 11 s) and take 7 s, job 7 takes 1 s more: 18 s. */
START_TEST(a_mapreduce_family_counts_and_flow_times) {
        ck_assert_uint_eq(submit(NULL, 3, 500, 10 * S), 1);
        ck_assert_uint_eq(submit("afterok:1", 2, 500, 11 * S), 4);
        ck_assert_uint_eq(submit(NULL, 0, 1, 11 * S), 6);
        ck_assert_uint_eq(submit("afterany:4", 0, 500, 12 * S), 7);
        ck_assert_uint_eq(ctl_family_id(&st, ctl_find_job(&st, 5)), 1);
        ck_assert_uint_eq(ctl_family_id(&st, ctl_find_job(&st, 7)), 1);
        ck_assert_uint_eq(ctl_family_id(&st, ctl_find_job(&st, 2)), 1);
        ck_assert_uint_eq(ctl_family_id(&st, ctl_find_job(&st, 6)), 0);
        cJSON *none = NULL;
        ck_assert_int_eq(ctl_family_json(&st, ctl_find_job(&st, 6), 0, &none), 0);
        ck_assert_ptr_null(none);

        ck_assert_int_eq(ctl_schedule(&st), 2);
        run(1, 20, 25);
        run(2, 20, 30);
        ck_assert_int_eq(ctl_schedule(&st), 2); /* map 3 and job 6 */
        run(3, 31, 34);
        run(6, 31, 32);
        ck_assert_int_eq(ctl_schedule(&st), 2);
        ck_assert_int_eq(ctl_job_started(&st, n, 4, 35 * S), 0);
        cJSON *f = family_of(4, 36 * S); /* the reduces run, job 7 waits */
        ck_assert_int_eq(num(f, "id"), 1);
        ck_assert_int_eq(num(f, "members"), 6);
        ck_assert_int_eq(count(f, "completed"), 3);
        ck_assert_int_eq(count(f, "running"), 2);
        ck_assert_int_eq(count(f, "pending"), 1);
        ck_assert(cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(f, "ended")));
        ck_assert_int_eq(num(f, "flow_usec"), 26 * S); /* so far */
        ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(f, "unlimited_flow_usec"));
        const cJSON *units = cJSON_GetObjectItemCaseSensitive(f, "units");
        ck_assert_int_eq(cJSON_GetArraySize(units), 3);
        ck_assert_int_eq(num(cJSON_GetArrayItem(units, 1), "id"), 4);
        ck_assert_int_eq(num(cJSON_GetArrayItem(units, 1), "members"), 2);
        ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(units, 1), "dependency")->valuestring,
                         "afterok:1");
        cJSON_Delete(f);

        job_result res = { 0 };
        ck_assert_int_eq(ctl_job_finished(&st, n, 4, JOB_COMPLETED, &res, 40 * S), 0);
        run(5, 35, 42);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        run(7, 43, 44);
        f = family_of(1, 50 * S);
        ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "ended")));
        ck_assert_int_eq(count(f, "completed"), 6);
        ck_assert_int_eq(num(f, "arrival_usec"), 10 * S);
        ck_assert_int_eq(num(f, "end_usec"), 44 * S);
        ck_assert_int_eq(num(f, "flow_usec"), 34 * S);
        ck_assert_int_eq(num(f, "unlimited_flow_usec"), 18 * S);
        cJSON_Delete(f);
}
END_TEST

/* Two families joined by a job that waits on both become one, named by the older; a family
 * whose reduces never run has no flow time with unlimited machines. */
START_TEST(families_join_and_a_cancelled_member_leaves_out_the_unlimited_flow) {
        ck_assert_uint_eq(submit(NULL, 2, 500, 1 * S), 1);
        ck_assert_uint_eq(submit(NULL, 0, 500, 1 * S), 3);
        ck_assert_uint_eq(submit("afterany:3", 0, 500, 1 * S), 4);
        ck_assert_uint_eq(ctl_family_id(&st, ctl_find_job(&st, 4)), 3);
        ck_assert_uint_eq(submit("afterok:1", 0, 500, 2 * S), 5);
        ck_assert_uint_eq(submit("afterok:5,afterany:4", 0, 500, 2 * S), 6);
        for (uint64_t id = 1; id <= 6; id++)
                ck_assert_uint_eq(ctl_family_id(&st, ctl_find_job(&st, id)), 1);
        ck_assert_int_eq(ctl_schedule(&st), 2);
        job_result res = { 0 };
        ck_assert_int_eq(ctl_job_started(&st, n, 1, 3 * S), 0);
        ck_assert_int_eq(ctl_job_finished(&st, n, 1, JOB_FAILED, &res, 4 * S), 0); /* 5 and 6 never run */
        run(2, 3, 5);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        run(3, 6, 7);
        ck_assert_int_eq(ctl_schedule(&st), 1);
        run(4, 8, 9);
        cJSON *f = family_of(6, 10 * S);
        ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "ended")));
        ck_assert_int_eq(num(f, "members"), 6);
        ck_assert_int_eq(count(f, "cancelled"), 2);
        ck_assert_int_eq(count(f, "failed"), 1);
        ck_assert_int_eq(count(f, "completed"), 3);
        ck_assert_int_eq(num(f, "flow_usec"), 9 * S - 1 * S); /* the cancels came at 4 s */
        ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(f, "unlimited_flow_usec"));
        cJSON_Delete(f);
}
END_TEST

/* A restarted controller reads the jobs back in id order, whatever their state: the family is
 * the same. */
START_TEST(a_restart_keeps_the_family) {
        ck_assert_uint_eq(submit(NULL, 3, 500, 10 * S), 1);
        ck_assert_uint_eq(submit("afterok:1", 2, 500, 11 * S), 4);
        ck_assert_int_eq(ctl_schedule(&st), 2);
        run(1, 20, 25);
        ctl_state again;
        ctl_init(&again, &cfg, &ctl_noop_actions, NULL);
        for (size_t i = 0; i < st.njobs; i++) {
                cJSON *o = job_to_json(st.jobs[i]);
                job *j = calloc(1, sizeof(*j));
                ck_assert_int_eq(job_from_json(o, j, err), 0);
                ck_assert_int_eq(ctl_restore(&again, j, (ctl_time){ 30 * S, 30 * S }), 0);
                cJSON_Delete(o);
        }
        ck_assert_uint_eq(ctl_family_id(&again, ctl_find_job(&again, 5)), 1);
        cJSON *f = NULL;
        ck_assert_int_eq(ctl_family_json(&again, ctl_find_job(&again, 2), 30 * S, &f), 0);
        ck_assert_int_eq(num(f, "members"), 5);
        ck_assert_int_eq(count(f, "completed"), 1);
        ck_assert_int_eq(count(f, "running"), 1);
        ck_assert_int_eq(count(f, "pending"), 3);
        cJSON_Delete(f);
        ctl_free(&again);
}
END_TEST

/* An array beyond the window has most of its tasks in its record, not made: counted pending
 * once the family is asked about, then cancelled with the array (made ones one by one, the
 * others at once), and the reduce after it with them; the counts move without a recount. */
START_TEST(an_array_record_counts_its_tasks_not_made_yet) {
        ck_assert_uint_eq(submit(NULL, 1000, 500, 1 * S), 1);
        ck_assert_uint_eq(submit("afterok:1", 0, 500, 2 * S), 1001);
        ck_assert_uint_lt(st.njobs, 1001); /* the record holds the rest */
        cJSON *f = family_of(1001, 3 * S);
        ck_assert_int_eq(num(f, "members"), 1001);
        ck_assert_int_eq(count(f, "pending"), 1001);
        cJSON_Delete(f);
        ck_assert_int_eq(ctl_schedule(&st), 2);
        ctl_cancel_counts counts = { 0 };
        uint64_t cursor = 0;
        ctl_cancel_filter filter = { .uid = -1, .array = 1, .state = -1 };
        ck_assert_int_ge(ctl_cancel_some(&st, &filter, 0, 4 * S, &cursor, SIZE_MAX, &counts), 0);
        job_result res = { 0 };
        ck_assert_int_eq(ctl_job_finished(&st, n, 1, JOB_CANCELLED, &res, 5 * S), 0);
        ck_assert_int_eq(ctl_job_finished(&st, n, 2, JOB_CANCELLED, &res, 5 * S), 0);
        f = family_of(1, 6 * S);
        ck_assert_int_eq(num(f, "members"), 1001);
        ck_assert_int_eq(count(f, "cancelled"), 1001);
        ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "ended")));
        ck_assert_int_eq(num(f, "end_usec"), 5 * S);
        cJSON_Delete(f);
}
END_TEST

/* An array made a slice at a time (a turn of the controller's loop each): the jobs made after
 * the family was first counted are counted as they come. */
START_TEST(an_array_made_in_slices_is_counted_whole) {
        ck_assert_uint_eq(submit(NULL, 0, 500, 1 * S), 1);
        job_spec spec = { .argv = calloc(2, sizeof(char *)),
                          .cwd = strdup("/tmp"),
                          .name = strdup("j"),
                          .req = { .mcpu = 500, .mem = MiB },
                          .dependency = strdup("afterany:1") };
        spec.argv[0] = strdup("/bin/true");
        ctl_array a;
        ck_assert_int_eq(ctl_array_begin(&st, 1, 1, "u", &spec, 100, 2 * S, &a, err), 0);
        ck_assert_int_eq(ctl_array_more(&st, &a, 10, err), 0);
        cJSON *f = family_of(1, 3 * S);
        ck_assert_int_eq(num(f, "members"), 11);
        cJSON_Delete(f);
        ck_assert_int_eq(ctl_array_more(&st, &a, SIZE_MAX, err), 1);
        ctl_array_free(&a);
        job_spec_free(&spec);
        f = family_of(1, 3 * S);
        ck_assert_int_eq(num(f, "members"), 101);
        ck_assert_int_eq(count(f, "pending"), 101);
        cJSON_Delete(f);
}
END_TEST

static Suite *family_suite(void) {
        Suite *s = suite_create("family");
        TCase *tc = tcase_create("core");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, a_mapreduce_family_counts_and_flow_times);
        tcase_add_test(tc, families_join_and_a_cancelled_member_leaves_out_the_unlimited_flow);
        tcase_add_test(tc, a_restart_keeps_the_family);
        tcase_add_test(tc, an_array_record_counts_its_tasks_not_made_yet);
        tcase_add_test(tc, an_array_made_in_slices_is_counted_whole);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(family_suite)
