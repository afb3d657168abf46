/* fileio.h - small-file reads and writes: secrets, pid files, cgroup attribute files. */
#pragma once
#include <stddef.h>
#include <sys/types.h>

/* Read a whole small file (at most 64 KiB) into a NUL-terminated malloc'ed string with
 * trailing whitespace removed. When require_private, fail with -EPERM if group or others
 * may read or write it. Returns 0 or -errno. */
int file_read_small(const char *path, int require_private, char **out);
/* Write data to path (O_WRONLY|O_TRUNC, created with mode if absent), in one write(2) as
 * cgroup files require. Returns 0 or -errno. */
int file_write(const char *path, const char *data, mode_t mode);
/* Create a directory and its missing parents with mode. Returns 0 (also if it exists) or -errno. */
int file_mkdir_p(const char *path, mode_t mode);
