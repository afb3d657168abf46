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

int file_read_small(const char *path, int require_private, char **out) {
        int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOCTTY);
        if (fd < 0)
                return -errno;
        struct stat st;
        int r = 0;
        if (fstat(fd, &st) < 0)
                r = -errno;
        else if (require_private && (st.st_mode & 077))
                r = -EPERM; /* a secret others can read is no secret */
        if (r < 0) {
                close(fd);
                return r;
        }
        char *buf = malloc(SMALL_FILE_MAX + 1);
        if (!buf) {
                close(fd);
                return -ENOMEM;
        }
        size_t len = 0;
        for (;;) {
                ssize_t n = read(fd, buf + len, SMALL_FILE_MAX - len);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        int r = -errno;
                        free(buf);
                        close(fd);
                        return r;
                }
                if (n == 0)
                        break;
                len += (size_t)n;
                if (len == SMALL_FILE_MAX) {
                        free(buf);
                        close(fd);
                        return -EFBIG;
                }
        }
        close(fd);
        while (len > 0 && isspace((unsigned char)buf[len - 1]))
                len--;
        buf[len] = '\0';
        *out = buf;
        return 0;
}

int file_write(const char *path, const char *data, mode_t mode) {
        int fd = open(path, O_WRONLY | O_TRUNC | O_CREAT | O_CLOEXEC | O_NOCTTY, mode);
        if (fd < 0)
                return -errno;
        size_t len = strlen(data);
        ssize_t n = write(fd, data, len);
        int r = n < 0 ? -errno : (size_t)n != len ? -EIO : 0;
        if (close(fd) < 0 && r == 0)
                r = -errno;
        return r;
}

int file_mkdir_p(const char *path, mode_t mode) {
        char buf[4096];
        size_t len = strlen(path);
        if (len == 0 || len >= sizeof(buf))
                return -ENAMETOOLONG;
        memcpy(buf, path, len + 1);
        for (char *p = buf + 1; ; p++) {
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
