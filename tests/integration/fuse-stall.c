/* fuse-stall - mount a FUSE file system that never answers, for tests of paths that hang.
 *
 * Usage: fuse-stall DIR. Opens /dev/fuse, mounts it on DIR and never reads the descriptor: the
 * kernel's INIT is never answered, so every access below DIR blocks (killably) until the
 * connection is aborted or the mount goes. Prints "ready" once mounted and holds the descriptor
 * until killed; the caller unmounts DIR (umount -l). No libfuse: the mount is one system call. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mount.h>
#include <unistd.h>

int main(int argc, char **argv) {
        char opts[128];
        int fd;

        if (argc != 2) {
                fprintf(stderr, "usage: fuse-stall DIR\n");
                return 2;
        }
        if ((fd = open("/dev/fuse", O_RDWR | O_CLOEXEC)) < 0) {
                fprintf(stderr, "fuse-stall: open /dev/fuse: %s\n", strerror(errno));
                return 77;
        }
        snprintf(opts, sizeof(opts), "fd=%d,rootmode=40000,user_id=0,group_id=0,allow_other", fd);
        if (mount("colony-stall", argv[1], "fuse", MS_NOSUID | MS_NODEV, opts) < 0) {
                fprintf(stderr, "fuse-stall: mount %s: %s\n", argv[1], strerror(errno));
                return 77;
        }
        printf("ready\n");
        fflush(stdout);
        for (;;)
                pause();
}
