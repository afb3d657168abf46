/* test_jobdir.c - the agent's state directory on a real (temporary) directory. */
#include "check_main.h"
#include "jobdir.h"
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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

static ino_t inode(const char *name) {
        char path[256];
        struct stat st;

        snprintf(path, sizeof(path), "%s/%s", dir, name);
        ck_assert_int_eq(stat(path, &st), 0);
        return st.st_ino;
}

/* A retired job's files become spares and the next job's files are those very inodes, written
 * over to the new text's length (a spare longer than it leaves nothing behind); a spare gone
 * is made anew; past the limit a file is removed; the last close removes the spares. */
START_TEST(retired_files_come_back_as_the_next_jobs) {
        char *text = NULL;
        uint64_t next = 1, *ids;
        size_t n;

        ck_assert_ptr_nonnull(mkdtemp(dir));
        ck_assert_int_eq(jobdir_replace(dir, 3, JOBFILE_RECORD, "{\"a long old record\":true}"), 0);
        ck_assert_int_eq(jobdir_replace(dir, 3, JOBFILE_DONE, "{}"), 0);
        ino_t rec = inode("job-3.json"), done = inode("job-3.done");
        ck_assert_int_eq(jobdir_retire(dir, 3, true, &next, 100), 0);
        ck_assert_uint_eq(next, 3); /* two files, two spares */
        ck_assert(!exists("job-3.json") && !exists("job-3.done"));
        ck_assert_uint_eq(inode(".spare-1"), rec);
        ck_assert_int_eq(jobdir_list(dir, &ids, &n), 0); /* spares are no job's */
        ck_assert_uint_eq(n, 0);
        free(ids);
        ck_assert_int_eq(jobdir_take_spare(dir, 1, 4, JOBFILE_RECORD), 0);
        ck_assert_int_eq(jobdir_replace(dir, 4, JOBFILE_RECORD, "{}"), 0);
        ck_assert_uint_eq(inode("job-4.json"), rec);
        ck_assert_int_eq(jobdir_read(dir, 4, JOBFILE_RECORD, &text), 0);
        ck_assert_str_eq(text, "{}");
        free(text);
        ck_assert_int_eq(jobdir_take_spare(dir, 1, 4, JOBFILE_DONE), -ENOENT); /* taken already */
        ck_assert_int_eq(jobdir_take_spare(dir, 2, 4, JOBFILE_EXIT), 0);       /* a shepherd's */
        ck_assert_int_eq(jobdir_replace(dir, 4, JOBFILE_EXIT, "{}"), 0);
        ck_assert_uint_eq(inode("job-4.exit"), done);
        next = 7;
        ck_assert_int_eq(jobdir_retire(dir, 4, true, &next, 8), 0); /* room for one */
        ck_assert_uint_eq(next, 8);
        ck_assert(exists(".spare-7") && !exists("job-4.json") && !exists("job-4.exit"));
        ck_assert_int_eq(jobdir_close(dir), 0);
}
END_TEST

static Suite *jobdir_suite(void) {
        Suite *s = suite_create("jobdir");
        TCase *tc = tcase_create("jobdir");
        tcase_add_test(tc, listing_keeps_a_shepherds_exit_write_in_progress);
        tcase_add_test(tc, retired_files_come_back_as_the_next_jobs);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(jobdir_suite)
