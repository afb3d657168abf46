/* test_events.c - the event ring (events.h) and the events table of the job store. */
#include "check_main.h"
#include "events.h"
#include "jobstore.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static ev_record make(uint64_t job, const char *what) {
        ev_record e;
        ev_record_set(&e, 1000 + (int64_t)job, job, job ? "n1" : NULL, what, NULL);
        return e;
}

START_TEST(the_ring_numbers_events_and_keeps_the_newest) {
        ev_ring r;
        ck_assert_int_eq(ev_ring_init(&r, 3, 1), 0);
        ck_assert_uint_eq(ev_ring_oldest(&r), 1);
        for (uint64_t j = 1; j <= 5; j++) {
                ev_record e = make(j, "submitted");
                ck_assert_uint_eq(ev_ring_push(&r, &e)->seq, j);
        }
        ck_assert_uint_eq(r.len, 3);
        ck_assert_uint_eq(ev_ring_oldest(&r), 3);
        ck_assert_ptr_null(ev_ring_get(&r, 2)); /* dropped */
        ck_assert_uint_eq(ev_ring_get(&r, 4)->job, 4);
        ck_assert_ptr_null(ev_ring_get(&r, 6)); /* not yet */
        const ev_record *last[5];
        ck_assert_uint_eq(ev_last(&r, 2, last), 2);
        ck_assert_uint_eq(last[0]->seq, 4);
        ck_assert_uint_eq(last[1]->seq, 5);
        ck_assert_uint_eq(ev_last(&r, 5, last), 3); /* no more than it holds */
        ck_assert_uint_eq(last[0]->seq, 3);
        ev_ring_free(&r);
        ck_assert_int_eq(ev_ring_init(&r, 0, 1), -EINVAL);
}
END_TEST

START_TEST(restored_events_keep_their_numbers_and_gaps) {
        ev_ring r;
        ck_assert_int_eq(ev_ring_init(&r, 8, 1), 0);
        uint64_t seqs[] = { 3, 4, 7 }; /* 5 and 6: writes that failed */
        for (size_t i = 0; i < 3; i++) {
                ev_record e = make(i + 1, "placed");
                e.seq = seqs[i];
                ev_ring_restore(&r, &e);
        }
        ck_assert_uint_eq(r.next_seq, 8);
        ck_assert_uint_eq(ev_ring_get(&r, 7)->job, 3);
        ck_assert_uint_eq(ev_ring_get(&r, 4)->job, 2);
        ck_assert_ptr_null(ev_ring_get(&r, 5));
        ev_record e = make(9, "started");
        ck_assert_uint_eq(ev_ring_push(&r, &e)->seq, 8);
        ev_ring_free(&r);
}
END_TEST

START_TEST(json_round_trip_and_bad_input) {
        ev_record e, back;
        char err[PROTO_ERRLEN];
        ev_record_set(&e, 1767225600000000, 7, "lab3", "requeued", "attempt 1 requeued: agent lab3 timed out");
        e.seq = 42;
        cJSON *o = ev_to_json(&e);
        ck_assert_int_eq(ev_from_json(o, &back, err), 0);
        ck_assert_mem_eq(&e, &back, sizeof(e));
        cJSON_Delete(o);
        ev_record_set(&e, 5, 0, NULL, "node-up", NULL); /* no node, no reason: the fields are absent */
        e.seq = 1;
        o = ev_to_json(&e);
        ck_assert_ptr_null(cJSON_GetObjectItem(o, "reason"));
        ck_assert_int_eq(ev_from_json(o, &back, err), 0);
        ck_assert_str_eq(back.node, "");
        cJSON_Delete(o);
        const char *bad[] = { "[]", "{\"seq\":1,\"time_usec\":1}", "{\"seq\":0,\"time_usec\":1,\"what\":\"x\"}",
                              "{\"seq\":1,\"time_usec\":1,\"what\":\"x\",\"extra\":1}",
                              "{\"seq\":1,\"time_usec\":1,\"what\":\"x\",\"job\":-1}" };
        for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
                o = cJSON_Parse(bad[i]);
                ck_assert_msg(ev_from_json(o, &back, err) == -EINVAL, "accepted %s", bad[i]);
                ck_assert(err[0] != '\0');
                cJSON_Delete(o);
        }
}
END_TEST

START_TEST(long_strings_are_cut_not_overflowed) {
        char node[200], reason[1000];
        memset(node, 'n', sizeof(node) - 1);
        node[sizeof(node) - 1] = '\0';
        memset(reason, 'r', sizeof(reason) - 1);
        reason[sizeof(reason) - 1] = '\0';
        ev_record e;
        ev_record_set(&e, 1, 1, node, "lost", reason);
        ck_assert_uint_eq(strlen(e.node), EV_NODE_MAX - 1);
        ck_assert_uint_eq(strlen(e.reason), EV_REASON_MAX - 1);
}
END_TEST

static void collect(void *userdata, const ev_record *e) {
        char *out = userdata;
        snprintf(out + strlen(out), 256 - strlen(out), "%llu:%llu ", (unsigned long long)e->seq,
                 (unsigned long long)e->job);
}

static int stored_state(void *userdata, job *j) {
        *(job_state *)userdata = j->state;
        job_free(j);
        free(j);
        return 0;
}

/* Events go in with their job in one transaction, and come back by job, after a seq, or newest. */
START_TEST(the_store_keeps_events_with_their_job) {
        char path[] = "/tmp/colony-test-events-XXXXXX", err[256], out[256] = "";
        int fd = mkstemp(path);
        ck_assert_int_ge(fd, 0);
        close(fd);
        jobstore *s;
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        job j = { .id = 1, .state = JOB_PENDING, .spec = { .cwd = "/", .req = { .mcpu = 1000, .mem = 1 << 20 } } };
        ev_record evs[3] = { make(1, "submitted"), make(2, "submitted"), make(1, "placed") };
        for (int i = 0; i < 3; i++)
                evs[i].seq = (uint64_t)i + 1;
        ck_assert_int_eq(jobstore_put_events(s, &j, evs, 3), 0);
        ck_assert_int_eq(jobstore_events(s, 0, 1, 10, false, collect, out), 2);
        ck_assert_str_eq(out, "1:1 3:1 ");
        out[0] = '\0';
        ck_assert_int_eq(jobstore_events(s, 1, 0, 10, false, collect, out), 2);
        ck_assert_str_eq(out, "2:2 3:1 ");
        out[0] = '\0';
        ck_assert_int_eq(jobstore_events(s, 0, 0, 2, true, collect, out), 2);
        ck_assert_str_eq(out, "2:2 3:1 ");
        /* a seq used twice fails the whole transaction: the job's new state is not stored either */
        j.state = JOB_RUNNING;
        ck_assert_int_eq(jobstore_put_events(s, &j, evs, 1), -EIO);
        jobstore_close(s);
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        out[0] = '\0';
        ck_assert_int_eq(jobstore_events(s, 0, 0, 10, false, collect, out), 3);
        job_state stored = JOB_LOST;
        ck_assert_int_eq(jobstore_load(s, stored_state, &stored), 0);
        ck_assert_int_eq(stored, JOB_PENDING);
        jobstore_close(s);
        unlink(path);
        char side[sizeof(path) + 8];
        snprintf(side, sizeof(side), "%s-wal", path);
        unlink(side);
        snprintf(side, sizeof(side), "%s-shm", path);
        unlink(side);
}
END_TEST

static Suite *events_suite(void) {
        Suite *s = suite_create("events");
        TCase *tc = tcase_create("events");
        tcase_add_test(tc, the_ring_numbers_events_and_keeps_the_newest);
        tcase_add_test(tc, restored_events_keep_their_numbers_and_gaps);
        tcase_add_test(tc, json_round_trip_and_bad_input);
        tcase_add_test(tc, long_strings_are_cut_not_overflowed);
        tcase_add_test(tc, the_store_keeps_events_with_their_job);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(events_suite)
