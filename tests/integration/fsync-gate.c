/* fsync-gate.c - an LD_PRELOAD shim for sync_order.sh: every fsync or fdatasync of a file whose
 * name ends in "-wal" (SQLite's write-ahead log) waits while $FSYNC_GATE_DIR/closed exists,
 * after creating $FSYNC_GATE_DIR/waiting, so that a test can hold the controller's log sync
 * as long as it likes and look at what the controller says meanwhile; and fails with EIO while
 * $FSYNC_GATE_DIR/fail exists. Each such sync also adds a line to $FSYNC_GATE_DIR/syncs, so
 * that a test can count them (sync_per_job.sh). */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* One line more in dir/syncs. */
static void count(const char *dir) {
        char syncs[PATH_MAX];
        snprintf(syncs, sizeof(syncs), "%s/syncs", dir);
        int fd = open(syncs, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
        if (fd >= 0) {
                (void)!write(fd, "sync\n", 5);
                close(fd);
        }
}

/* When fd is a write-ahead log and the gate is set up: -EIO while it fails, else wait while it
 * is closed; 0 when the sync may go on. */
static int gate(int fd) {
        const char *dir = getenv("FSYNC_GATE_DIR");
        char link[64], path[PATH_MAX], closed[PATH_MAX], waiting[PATH_MAX], fail[PATH_MAX];
        if (!dir)
                return 0;
        snprintf(link, sizeof(link), "/proc/self/fd/%d", fd);
        ssize_t n = readlink(link, path, sizeof(path) - 1);
        if (n < 4 || memcmp(path + n - 4, "-wal", 4) != 0)
                return 0;
        snprintf(closed, sizeof(closed), "%s/closed", dir);
        snprintf(waiting, sizeof(waiting), "%s/waiting", dir);
        snprintf(fail, sizeof(fail), "%s/fail", dir);
        count(dir);
        if (access(fail, F_OK) == 0)
                return -EIO;
        if (access(closed, F_OK) != 0)
                return 0;
        int w = open(waiting, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
        if (w >= 0)
                close(w);
        while (access(closed, F_OK) == 0)
                usleep(10000);
        return 0;
}

/* The libc function name, after the gate; *real caches it. */
static int gated(const char *name, int (**real)(int), int fd) {
        if (!*real)
                *real = (int (*)(int))dlsym(RTLD_NEXT, name);
        int r = gate(fd);
        if (r < 0) {
                errno = -r;
                return -1;
        }
        return (*real)(fd);
}

int fdatasync(int fd) {
        static int (*real)(int);
        return gated("fdatasync", &real, fd);
}

int fsync(int fd) {
        static int (*real)(int);
        return gated("fsync", &real, fd);
}
