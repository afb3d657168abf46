/* test_jobsync.c - the state directory's sync thread, on a real (temporary) directory and a real
 * event loop. */
#include "check_main.h"
#include "cgroup-internal.h"
#include "jobdir.h"
#include "jobsync.h"
#include <errno.h>
#include <inttypes.h>
#include <semaphore.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

static char dir[64];
static sd_event *event;
static jobsync *sync_;

static void setup(void) {
        snprintf(dir, sizeof(dir), "/tmp/colony-test-jobsync-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_ge(sd_event_new(&event), 0);
        ck_assert_int_eq(jobsync_new(event, dir, &sync_), 0);
}

static void teardown(void) {
        jobsync_free(sync_);
        sd_event_unref(event);
        for (uint64_t id = 1; id < 10; id++)
                (void)jobdir_remove(dir, id);
        ck_assert_int_eq(jobdir_close(dir), 0);
}

static bool has(uint64_t id, jobfile_kind kind, const char *want) {
        char *text = NULL;
        bool r = jobdir_read(dir, id, kind, &text) == 0 && strcmp(text, want) == 0;

        free(text);
        return r;
}

/* A job back on this host the moment its earlier report was acknowledged: its new record is
 * written after the removal of the old files, never removed by it. */
START_TEST(record_written_after_a_queued_removal) {
        ck_assert_int_eq(jobdir_replace(dir, 9, JOBFILE_RECORD, "old"), 0);
        ck_assert_int_eq(jobdir_replace(dir, 9, JOBFILE_DONE, "{}"), 0);
        ck_assert_int_eq(jobsync_remove(sync_, 9, true), 0);
        ck_assert_int_eq(jobsync_replace(sync_, 9, JOBFILE_RECORD, "new"), 0);
        jobsync_drain(sync_);
        ck_assert(has(9, JOBFILE_RECORD, "new"));
        ck_assert(!has(9, JOBFILE_DONE, "{}"));
}
END_TEST

/* Only the report goes when a later attempt runs here. */
START_TEST(removal_of_the_report_alone) {
        ck_assert_int_eq(jobdir_replace(dir, 4, JOBFILE_RECORD, "rec"), 0);
        ck_assert_int_eq(jobdir_replace(dir, 4, JOBFILE_DONE, "{}"), 0);
        ck_assert_int_eq(jobsync_remove(sync_, 4, false), 0);
        jobsync_drain(sync_);
        ck_assert(has(4, JOBFILE_RECORD, "rec"));
        ck_assert(!has(4, JOBFILE_DONE, "{}"));
}
END_TEST

/* A cgroup backend whose removal blocks until the test lets it go, as an rmdir retried while
 * killed tasks leave does (up to 0.5 s), or one stuck on the kernel's cgroup mutex. */
static sem_t rm_entered, rm_release;
static volatile int rm_done;

static int blocking_remove(cg_backend *cg, const char *job) {
        (void)cg;
        (void)job;
        sem_post(&rm_entered);
        sem_wait(&rm_release);
        rm_done = 1;
        return 0;
}

static const cg_ops blocking_ops = { .job_remove = blocking_remove };

static int hook_calls;
static void count_hook(void *userdata) {
        (void)userdata;
        hook_calls++;
}

/* The loop writes an ended job's report, and a new run's record, while the thread still
 * removes its cgroup, without waiting for it: the new run's launch waits instead, until
 * jobsync_cgroup_pending says the removal is done, which the loop hears of through the hook. */
START_TEST(a_cgroup_removal_is_pending_until_done_and_the_loop_is_told) {
        cg_backend cg = { .ops = &blocking_ops, .subtree = "/fake" };

        sem_init(&rm_entered, 0, 0);
        sem_init(&rm_release, 0, 0);
        rm_done = 0;
        hook_calls = 0;
        jobsync_on_done(sync_, count_hook, NULL);
        ck_assert_int_eq(jobsync_remove_cgroup(sync_, &cg, 7, "job-7"), 0);
        ck_assert(jobsync_cgroup_pending(sync_, 7)); /* queued */
        sem_wait(&rm_entered);
        ck_assert(jobsync_cgroup_pending(sync_, 7)); /* under way */
        ck_assert(!jobsync_cgroup_pending(sync_, 8));
        ck_assert(!jobsync_pending(sync_, 7)); /* a removal of files is another thing */
        ck_assert_int_eq(jobsync_replace(sync_, 7, JOBFILE_DONE, "{\"id\":7}"), 0);
        ck_assert_int_eq(jobsync_replace(sync_, 7, JOBFILE_RECORD, "{}"), 0);
        ck_assert_int_eq(rm_done, 0); /* neither waited for the removal */
        ck_assert(has(7, JOBFILE_DONE, "{\"id\":7}") && has(7, JOBFILE_RECORD, "{}"));
        ck_assert_int_eq(hook_calls, 0);
        sem_post(&rm_release);
        while (hook_calls == 0)
                ck_assert_int_ge(sd_event_run(event, 5 * 1000000), 0);
        ck_assert_int_eq(rm_done, 1);
        ck_assert(!jobsync_cgroup_pending(sync_, 7));
        sem_destroy(&rm_entered);
        sem_destroy(&rm_release);
}
END_TEST

/* Only an acknowledged report's removal makes a job pending, so that a reconnect sends again
 * the report of a job whose cgroup the thread still removes: that report went out before the
 * removal, maybe on the connection that broke. The files have a lane of their own: with the
 * cgroups' held by a removal that does not return (a cgroupfs that does not answer), the
 * acknowledged report is removed, and the next attempt's written after it, without waiting
 * for the cgroup. */
START_TEST(files_go_on_beside_a_held_cgroup) {
        cg_backend cg = { .ops = &blocking_ops, .subtree = "/fake" };

        sem_init(&rm_entered, 0, 0);
        sem_init(&rm_release, 0, 0);
        rm_done = 0;
        ck_assert_int_eq(jobsync_remove_cgroup(sync_, &cg, 3, "job-3"), 0);
        sem_wait(&rm_entered);
        ck_assert(!jobsync_pending(sync_, 3));
        ck_assert_int_eq(jobsync_replace(sync_, 3, JOBFILE_DONE, "{\"attempt\":1}"), 0);
        ck_assert_int_eq(jobsync_remove(sync_, 3, false), 0); /* acknowledged */
        ck_assert_int_eq(jobsync_replace(sync_, 3, JOBFILE_DONE, "{\"attempt\":2}"), 0);
        ck_assert_int_eq(rm_done, 0); /* the cgroup's removal still held */
        ck_assert(has(3, JOBFILE_DONE, "{\"attempt\":2}"));
        ck_assert(!jobsync_pending(sync_, 3));
        ck_assert(!jobsync_pending(sync_, 4));
        ck_assert(jobsync_cgroup_pending(sync_, 3));
        sem_post(&rm_release);
        jobsync_drain(sync_);
        ck_assert_int_eq(rm_done, 1);
        ck_assert(!jobsync_cgroup_pending(sync_, 3));
        sem_destroy(&rm_entered);
        sem_destroy(&rm_release);
}
END_TEST

static ino_t inode(uint64_t id, jobfile_kind kind) {
        char path[128];
        struct stat st;

        snprintf(path, sizeof(path), "%s/job-%" PRIu64 ".%s", dir, id, jobfile_suffix(kind));
        ck_assert_int_eq(stat(path, &st), 0);
        return st.st_ino;
}

/* An acknowledged job's files become the next job's: its record and report in the loop's
 * writes, its exit file in the spare the next shepherd is given. No inode is made for them. */
START_TEST(the_next_jobs_files_are_the_last_ones) {
        ino_t old[3], now[3];
        uint64_t n;

        ck_assert_int_eq(jobsync_replace(sync_, 1, JOBFILE_RECORD, "{\"id\":1}"), 0);
        ck_assert_int_eq(jobdir_replace(dir, 1, JOBFILE_EXIT, "{}"), 0);
        ck_assert_int_eq(jobsync_replace(sync_, 1, JOBFILE_DONE, "{}"), 0);
        for (int k = 0; k < 3; k++)
                old[k] = inode(1, (jobfile_kind)k);
        ck_assert_int_eq(jobsync_remove(sync_, 1, true), 0);
        jobsync_drain(sync_);
        ck_assert_int_eq(jobsync_replace(sync_, 2, JOBFILE_RECORD, "{\"id\":2}"), 0);
        ck_assert_uint_ne(n = jobsync_take_spare(sync_), 0);
        ck_assert_int_eq(jobdir_take_spare(dir, n, 2, JOBFILE_EXIT), 0);
        ck_assert_int_eq(jobdir_replace(dir, 2, JOBFILE_EXIT, "{}"), 0);
        ck_assert_int_eq(jobsync_replace(sync_, 2, JOBFILE_DONE, "{}"), 0);
        ck_assert_uint_eq(jobsync_take_spare(sync_), 0); /* all three in use again */
        for (int k = 0; k < 3; k++)
                now[k] = inode(2, (jobfile_kind)k);
        /* the same three inodes, in the order they were retired */
        ck_assert_uint_eq(now[JOBFILE_RECORD], old[JOBFILE_RECORD]);
        ck_assert_uint_eq(now[JOBFILE_EXIT], old[JOBFILE_EXIT]);
        ck_assert_uint_eq(now[JOBFILE_DONE], old[JOBFILE_DONE]);
        ck_assert(has(2, JOBFILE_RECORD, "{\"id\":2}"));
}
END_TEST

static Suite *jobsync_suite(void) {
        Suite *s = suite_create("jobsync");
        TCase *tc = tcase_create("jobsync");
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, record_written_after_a_queued_removal);
        tcase_add_test(tc, removal_of_the_report_alone);
        tcase_add_test(tc, a_cgroup_removal_is_pending_until_done_and_the_loop_is_told);
        tcase_add_test(tc, files_go_on_beside_a_held_cgroup);
        tcase_add_test(tc, the_next_jobs_files_are_the_last_ones);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(jobsync_suite)
