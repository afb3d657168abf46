/* jobdir.c - the agent's state directory on disk (see jobdir.h).
 *
 * What each write must survive, and so what it costs: a process crash (the agent killed, an
 * upgrade), which the page cache outlives, so that a write and a rename (jobdir_replace) are
 * enough; never a machine crash, which no file here needs to outlive:
 *
 *   job-N.json  the record. It exists so that a restarted agent finds every job that may have
 *               run. A machine crash ends every job with the machine.
 *   job-N.exit  how the main process ended, written by the shepherd: it serves a restarted
 *               agent as the record does. Its two fsyncs (file, directory) were between the
 *               job's exit and the agent hearing of it: 1 to 224 ms each on a loaded host.
 *   job-N.done  the "finished" report until the controller acknowledges it, written by the
 *               loop before it sends the report, so that an agent killed before the `ack` leaves
 *               it to the next, which sends it again. It is not fsynced either: the
 *               controller's log makes the job's end durable (its fdatasync) before anything
 *               acts on it (the controller holds every message out, the `ack` and the next
 *               launch included, until then), so a machine crash before that loses an end
 *               nobody has seen, as it loses the jobs running then. Its two fsyncs (the report,
 *               the directory) on the agent's sync thread were 15-16 ms of every job's end.
 *   removals    after an acknowledgement, on the sync thread (jobsync.h): nothing waits for them.
 *               The files are renamed to spares there, and the next job's are spares renamed
 *               into place (jobdir.h): on ext4 without a journal each inode made scans those its
 *               group freed in the last 30 s, three a job on main (docs/architecture.md).
 *
 * So no file is ever fsynced; the loop's writes are a rename, an open, a write, a close and a
 * rename of a few hundred bytes. */
#include "jobdir.h"
#include "fileio.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* Written under this prefix, then renamed: jobfile_name_parse never accepts such a name. */
#define TMP_PREFIX ".tmp-"
/* A spare file (jobdir.h); jobfile_name_parse never accepts such a name either. */
#define SPARE_PREFIX ".spare-"

static void file_name(char *buf, size_t len, uint64_t id, jobfile_kind kind, bool tmp) {
        snprintf(buf, len, "%sjob-%" PRIu64 ".%s", tmp ? TMP_PREFIX : "", id, jobfile_suffix(kind));
}

int jobdir_open(const char *dir, char *err, size_t errlen) {
        struct stat st;
        int r = file_mkdir_p(dir, 0755);

        if (r == 0 && lstat(dir, &st) < 0)
                r = -errno;
        /* Records name pids the agent will signal and cgroups it will kill: only root's own
         * directory may hold them. */
        if (r == 0 && (!S_ISDIR(st.st_mode) || st.st_uid != geteuid()))
                r = -EPERM;
        if (r == 0 && chmod(dir, 0700) < 0)
                r = -errno;
        if (r < 0)
                snprintf(err, errlen, "state directory %s: %s", dir,
                         r == -EPERM ? "not a directory owned by the agent's user" : strerror(-r));
        return r;
}

/* Write text to the temporary name in dfd: a spare taken there (jobdir_take_spare) is written
 * over and cut to the text's length, not truncated first, since ext4 flushes a file truncated to
 * nothing when it is closed (auto_da_alloc): a block write per file. */
static int write_tmp(int dfd, const char *tmp, const char *text) {
        int fd = openat(dfd, tmp, O_WRONLY | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0600);
        size_t len = strlen(text);
        int r;

        if (fd < 0)
                return -errno;
        /* write(2), not proto_write_all's send(2), which fails with ENOTSOCK on a file before it
         * writes (a system call more for every record, exit file and report). A short write to a
         * file is a full disk. */
        ssize_t n = write(fd, text, len);
        r = n == (ssize_t)len ? 0 : n < 0 ? -errno : -ENOSPC;
        if (r == 0 && ftruncate(fd, (off_t)len) < 0)
                r = -errno;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        return r;
}

int jobdir_replace(const char *dir, uint64_t id, jobfile_kind kind, const char *text) {
        char tmp[64], name[64];
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r;

        if (dfd < 0)
                return -errno;
        file_name(tmp, sizeof(tmp), id, kind, true);
        file_name(name, sizeof(name), id, kind, false);
        r = write_tmp(dfd, tmp, text);
        if (r == 0 && renameat(dfd, tmp, dfd, name) < 0)
                r = -errno;
        if (r < 0)
                (void)unlinkat(dfd, tmp, 0);
        close(dfd);
        return r;
}

int jobdir_read(const char *dir, uint64_t id, jobfile_kind kind, char **text) {
        char name[64], path[4096];

        file_name(name, sizeof(name), id, kind, false);
        if (snprintf(path, sizeof(path), "%s/%s", dir, name) >= (int)sizeof(path))
                return -ENAMETOOLONG;
        return file_read_small(path, 0, text);
}

static void spare_name(char *buf, size_t len, uint64_t n) { snprintf(buf, len, SPARE_PREFIX "%" PRIu64, n); }

/* Take name in dfd away: to spare number *next while below limit (next NULL: none), else
 * unlinked. Returns 0 (a missing file too) or -errno. */
static int drop(int dfd, const char *name, uint64_t *next, uint64_t limit) {
        if (next && *next < limit) {
                char spare[64];

                spare_name(spare, sizeof(spare), *next);
                /* NOREPLACE: a spare of that number left by an earlier agent stays whole. */
                if (renameat2(dfd, name, dfd, spare, RENAME_NOREPLACE) == 0) {
                        (*next)++;
                        return 0;
                }
                if (errno == ENOENT)
                        return 0;
        }
        return unlinkat(dfd, name, 0) < 0 && errno != ENOENT ? -errno : 0;
}

/* Take the job's files of kinds [from, to) away (drop). Returns 0 or the first -errno. */
static int remove_kinds(const char *dir, uint64_t id, int from, int to, uint64_t *next, uint64_t limit) {
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = 0;

        if (dfd < 0)
                return errno == ENOENT ? 0 : -errno;
        for (int k = from; k < to; k++) {
                char name[64];
                int e;

                file_name(name, sizeof(name), id, (jobfile_kind)k, false);
                if ((e = drop(dfd, name, next, limit)) < 0 && r == 0)
                        r = e;
                /* a write cut short, or the spare a shepherd took for its exit file */
                file_name(name, sizeof(name), id, (jobfile_kind)k, true);
                (void)drop(dfd, name, next, limit);
        }
        close(dfd);
        return r;
}

int jobdir_remove(const char *dir, uint64_t id) { return remove_kinds(dir, id, 0, _JOBFILE_KIND_MAX, NULL, 0); }

int jobdir_remove_kind(const char *dir, uint64_t id, jobfile_kind kind) {
        return remove_kinds(dir, id, (int)kind, (int)kind + 1, NULL, 0);
}

int jobdir_retire(const char *dir, uint64_t id, bool all, uint64_t *next, uint64_t limit) {
        return all ? remove_kinds(dir, id, 0, _JOBFILE_KIND_MAX, next, limit)
                   : remove_kinds(dir, id, JOBFILE_DONE, JOBFILE_DONE + 1, next, limit);
}

int jobdir_take_spare(const char *dir, uint64_t n, uint64_t id, jobfile_kind kind) {
        char spare[64], tmp[64];
        int dfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = 0;

        if (dfd < 0)
                return -errno;
        spare_name(spare, sizeof(spare), n);
        file_name(tmp, sizeof(tmp), id, kind, true);
        if (renameat(dfd, spare, dfd, tmp) < 0)
                r = -errno;
        close(dfd);
        return r;
}

int jobdir_clear_spares(const char *dir) {
        DIR *d = opendir(dir);
        struct dirent *e;
        int r = 0;

        if (!d)
                return errno == ENOENT ? 0 : -errno;
        while ((e = readdir(d)))
                if (strncmp(e->d_name, SPARE_PREFIX, strlen(SPARE_PREFIX)) == 0 &&
                    unlinkat(dirfd(d), e->d_name, 0) < 0 && errno != ENOENT && r == 0)
                        r = -errno;
        closedir(d);
        return r;
}

static int cmp_id(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

        return x < y ? -1 : x > y;
}

/* Append id unless it is there already: a host holds tens of jobs, so a linear scan will do. */
static int add_id(uint64_t **ids, size_t *n, size_t *cap, uint64_t id) {
        for (size_t i = 0; i < *n; i++)
                if ((*ids)[i] == id)
                        return 0;
        if (*n == *cap) {
                uint64_t *v = realloc(*ids, (*cap = *cap ? *cap * 2 : 16) * sizeof(*v));

                if (!v)
                        return -ENOMEM;
                *ids = v;
        }
        (*ids)[(*n)++] = id;
        return 0;
}

int jobdir_list(const char *dir, uint64_t **ids, size_t *n) {
        DIR *d = opendir(dir);
        struct dirent *e;
        size_t cap = 0;
        int r = 0;

        *ids = NULL;
        *n = 0;
        if (!d)
                return errno == ENOENT ? 0 : -errno;
        while (r == 0 && (e = readdir(d))) {
                jobfile_kind kind;
                uint64_t id;

                /* A temporary exit file may be a live shepherd's write in progress (it outlives
                 * agents): it goes with the job's other files. The agent's own are stale. */
                if (strncmp(e->d_name, TMP_PREFIX, strlen(TMP_PREFIX)) == 0) {
                        if (jobfile_name_parse(e->d_name + strlen(TMP_PREFIX), &id, &kind) < 0 || kind != JOBFILE_EXIT)
                                (void)unlinkat(dirfd(d), e->d_name, 0);
                } else if (jobfile_name_parse(e->d_name, &id, &kind) == 0)
                        r = add_id(ids, n, &cap, id);
        }
        closedir(d);
        if (r < 0) {
                free(*ids);
                *ids = NULL;
                *n = 0;
                return r;
        }
        if (*n)
                qsort(*ids, *n, sizeof(**ids), cmp_id);
        return 0;
}

int jobdir_close(const char *dir) {
        int r = jobdir_clear_spares(dir);

        return r < 0 ? r : rmdir(dir) < 0 && errno != ENOENT ? -errno : 0;
}
