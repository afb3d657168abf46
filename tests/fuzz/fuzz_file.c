/* fuzz_file.c - fuzz inputs as files (see fuzz_file.h). */
#include "fuzz_file.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

const char *fuzz_file(const uint8_t *data, size_t size) {
        static int fd = -1;
        static char path[64];
        if (fd < 0) {
                if ((fd = memfd_create("colony-fuzz", MFD_CLOEXEC)) < 0)
                        abort();
                snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
        }
        /* opening /proc/self/fd/N of a memfd starts a new read at offset 0 */
        if (ftruncate(fd, 0) < 0)
                abort();
        for (size_t off = 0; off < size;) {
                ssize_t n = pwrite(fd, data + off, size - off, (off_t)off);
                if (n <= 0)
                        abort();
                off += (size_t)n;
        }
        return path;
}

char *fuzz_string(const uint8_t *data, size_t size) {
        char *s = malloc(size + 1);
        if (s) {
                memcpy(s, data, size);
                s[size] = '\0';
        }
        return s;
}
