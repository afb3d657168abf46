/* test_jobdir.c - the agent's state directory on a real (temporary) directory. */
#include "check_main.h"
#include "jobdir.h"
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static char dir[] = "/tmp/colony-test-jobdir-XXXXXX";

static void touch(const char *name) {
        char path[256];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        int fd = open(path, O_WRONLY | O_CREAT, 0600);
        ck_assert_int_ge(fd, 0);
        close(fd);
}

static bool exists(const char *name) {
        char path[256];
        snprintf(path, sizeof(path), "%s/%s", dir, name);
        return access(path, F_OK) == 0;
}

/* Found by the chaos test: an agent starting while a job's shepherd (which outlives agents) was
 * between writing its temporary exit file and renaming it removed that file, and the job ended
 * "exit status lost" although it had exited 0. */
START_TEST(listing_keeps_a_shepherds_exit_write_in_progress) {
        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_eq(jobdir_replace(dir, 7, JOBFILE_RECORD, "{}"), 0);
        touch(".tmp-job-7.exit"); /* the shepherd's, mid-write */
        touch(".tmp-job-8.json"); /* a dead agent's, cut short */
        uint64_t *ids;
        size_t n;
        ck_assert_int_eq(jobdir_list(dir, &ids, &n), 0);
        ck_assert_uint_eq(n, 1);
        ck_assert_uint_eq(ids[0], 7);
        free(ids);
        ck_assert(exists(".tmp-job-7.exit"));
        ck_assert(!exists(".tmp-job-8.json"));
        ck_assert_int_eq(jobdir_remove(dir, 7), 0);
        ck_assert(!exists(".tmp-job-7.exit"));
        ck_assert(!exists("job-7.json"));
        ck_assert_int_eq(jobdir_close(dir), 0);
}
END_TEST

static Suite *jobdir_suite(void) {
        Suite *s = suite_create("jobdir");
        TCase *tc = tcase_create("jobdir");
        tcase_add_test(tc, listing_keeps_a_shepherds_exit_write_in_progress);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(jobdir_suite)
