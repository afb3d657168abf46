/* fileio.c - small-file reads and writes. */
#include "fileio.h"
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SMALL_FILE_MAX (64 * 1024)

/* Read all of fd into buf (room for max + 1 bytes, so that a larger file shows as too large).
 * Returns the length or -errno; -EFBIG beyond max. */
static ssize_t read_all(int fd, char *buf, size_t max) {
        size_t len = 0;
        for (;;) {
                ssize_t n = read(fd, buf + len, max + 1 - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                if (n == 0)
                        return (ssize_t)len;
                len += (size_t)n;
                if (len > max)
                        return -EFBIG;
        }
}

/* The body of file_read_small, for an open fd. */
static int read_fd(int fd, int require_private, char **out) {
        struct stat st;
        if (fstat(fd, &st) < 0)
                return -errno;
        if (require_private && (st.st_mode & 077))
                return -EPERM;                  /* a secret others can read is no secret */
        char *buf = malloc(SMALL_FILE_MAX + 2); /* one byte to see an oversized file, one for the NUL */
        if (!buf)
                return -ENOMEM;
        ssize_t len = read_all(fd, buf, SMALL_FILE_MAX);
        if (len < 0) {
                free(buf);
                return (int)len;
        }
        while (len > 0 && isspace((unsigned char)buf[len - 1]))
                len--;
        buf[len] = '\0';
        /* secrets and pid files are tiny: do not keep 64 KiB for each */
        char *shrunk = realloc(buf, (size_t)len + 1);
        *out = shrunk ? shrunk : buf;
        return 0;
}

int file_read_small(const char *path, int require_private, char **out) {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        int r = read_fd(fd, require_private, out);
        close(fd);
        return r;
}

int file_write(const char *path, const char *data, mode_t mode) {
        int fd = open(path, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC | O_NOCTTY, mode);
        if (fd < 0)
                return -errno;
        size_t len = strlen(data);
        ssize_t n;
        /* a cgroup attribute takes its value from one write: never split it, only retry it whole */
        while ((n = write(fd, data, len)) < 0 && errno == EINTR)
                ;
        int r = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        return r;
}

int file_mkdir_p(const char *path, mode_t mode) {
        char buf[4096];
        size_t len = strlen(path);
        if (len == 0)
                return -EINVAL;
        if (len >= sizeof(buf))
                return -ENAMETOOLONG;
        memcpy(buf, path, len + 1);
        for (char *p = buf + 1;; p++) {
                if (*p != '/' && *p != '\0')
                        continue;
                char saved = *p;
                *p = '\0';
                if (mkdir(buf, mode) < 0 && errno != EEXIST)
                        return -errno;
                *p = saved;
                if (saved == '\0')
                        break;
        }
        struct stat st;
        if (stat(path, &st) < 0)
                return -errno;
        return S_ISDIR(st.st_mode) ? 0 : -ENOTDIR;
}
