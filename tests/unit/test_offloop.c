/* test_offloop.c - a call on a thread of its own, reported on a real sd-event loop: fn runs off
 * the loop's thread, done gets its result on the loop, a second start while one is in flight is
 * refused, and offloop_free waits for the call started. */
#include "check_main.h"
#include "offloop.h"
#include <errno.h>
#include <stdatomic.h>
#include <threads.h>
#include <unistd.h>

typedef struct call {
        atomic_bool release; /* the call returns once this is set */
        atomic_bool ran;
        thrd_t thread; /* the thread it ran on */
        int result;    /* what it returns */
} call;

typedef struct reports {
        int n, last;
} reports;

static int fn(void *arg) {
        call *c = arg;
        c->thread = thrd_current();
        while (!atomic_load(&c->release))
                usleep(1000);
        atomic_store(&c->ran, true);
        return c->result;
}

static void done(void *userdata, int r) {
        reports *rep = userdata;
        rep->n++;
        rep->last = r;
}

/* Run the loop until n reports or about 10 s of idle turns (a busy host may be slow). */
static void run_until(sd_event *e, const reports *rep, int n) {
        for (int i = 0; i < 100 && rep->n < n; i++)
                ck_assert_int_ge(sd_event_run(e, 100000), 0);
        ck_assert_int_eq(rep->n, n);
}

START_TEST(a_call_runs_off_the_loop_and_reports_on_it) {
        sd_event *e;
        offloop *o;
        reports rep = { 0 };
        call c = { .result = -EIO };
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(offloop_new(e, "test", fn, done, &rep, &o), 0);
        ck_assert(!offloop_busy(o));
        ck_assert_int_eq(offloop_start(o, &c), 0);
        ck_assert(offloop_busy(o));
        ck_assert_int_eq(offloop_start(o, &c), -EBUSY);
        ck_assert_int_ge(sd_event_run(e, 0), 0); /* the loop goes on while the call waits */
        ck_assert_int_eq(rep.n, 0);
        atomic_store(&c.release, true);
        run_until(e, &rep, 1);
        ck_assert_int_eq(rep.last, -EIO);
        ck_assert(!thrd_equal(c.thread, thrd_current()));
        ck_assert(!offloop_busy(o));
        call again = { .result = 0 };
        atomic_store(&again.release, true);
        ck_assert_int_eq(offloop_start(o, &again), 0);
        run_until(e, &rep, 2);
        ck_assert_int_eq(rep.last, 0);
        offloop_free(o);
        sd_event_unref(e);
}
END_TEST

static int release_later(void *arg) {
        usleep(50000);
        atomic_store(&((call *)arg)->release, true);
        return 0;
}

START_TEST(free_waits_for_the_call_started) {
        sd_event *e;
        offloop *o;
        thrd_t releaser;
        reports rep = { 0 };
        call c = { .result = 0 };
        ck_assert_int_ge(sd_event_new(&e), 0);
        ck_assert_int_eq(offloop_new(e, "test", fn, done, &rep, &o), 0);
        ck_assert_int_eq(offloop_start(o, &c), 0);
        ck_assert_int_eq(thrd_create(&releaser, release_later, &c), thrd_success);
        offloop_free(o); /* returns once fn has, whenever the releaser lets it */
        ck_assert(atomic_load(&c.ran));
        ck_assert_int_eq(rep.n, 0); /* done does not run after free */
        thrd_join(releaser, NULL);
        sd_event_unref(e);
}
END_TEST

static Suite *offloop_suite(void) {
        Suite *s = suite_create("offloop");
        TCase *tc = tcase_create("core");
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, a_call_runs_off_the_loop_and_reports_on_it);
        tcase_add_test(tc, free_waits_for_the_call_started);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(offloop_suite)
