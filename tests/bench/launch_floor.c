/* launch_floor.c - the physical floor of a launch, for launch.sh: N times, make a fresh memory
 * cgroup, fork a child into it and exec /bin/true, timed from before the mkdir until the exec is
 * known to have succeeded (end of file on a close-on-exec pipe, as colony's launcher learns it).
 * The child goes in the cheapest way the kernel offers: on cgroup v2 clone3 with
 * CLONE_INTO_CGROUP, else it writes itself into the v1 memory hierarchy's cgroup.procs.
 * The cgroups are made below our own (v2: our own must be the root, or hold no task), removed
 * after each run, outside the clock.
 *
 * With GAP_MS, the launches are that far apart, as a job's launches come one at a time: on v1
 * moving a task takes the cgroup threadgroup lock for writing, which waits for an RCU grace
 * period unless another writer took it a moment before (back to back, the wait is shared).
 *
 *   launch_floor N [GAP_MS]    prints N lines: milliseconds of each launch; the mode on stderr */
#include <errno.h>
#include <fcntl.h>
#include <linux/magic.h>
#include <linux/sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static double now_us(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static _Noreturn void die(const char *what) {
        fprintf(stderr, "launch_floor: %s: %s\n", what, strerror(errno));
        exit(1);
}

/* Our own cgroup's directory: v2's entry ("0::"), or v1's memory one, from /proc/self/cgroup. */
static void own_dir(int v2, char *buf, size_t len) {
        FILE *f = fopen("/proc/self/cgroup", "r");
        char line[4096];

        if (!f)
                die("/proc/self/cgroup");
        while (fgets(line, sizeof(line), f)) {
                char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':') : NULL;

                if (!path)
                        continue;
                *path++ = 0;
                path[strcspn(path, "\n")] = 0;
                if ((v2 && strcmp(ctl + 1, "") == 0 && strncmp(line, "0", 1) == 0) ||
                    (!v2 && strstr(ctl + 1, "memory"))) {
                        snprintf(buf, len, "/sys/fs/cgroup%s%s", v2 ? "" : "/memory", strcmp(path, "/") ? path : "");
                        fclose(f);
                        return;
                }
        }
        errno = ENOENT;
        die("our own cgroup");
}

static void write_file(const char *dir, const char *file, const char *value) {
        char path[8192];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", dir, file);
        if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0 || write(fd, value, strlen(value)) < 0)
                _exit(126);
        close(fd);
}

int main(int argc, char **argv) {
        int n = argc > 1 ? atoi(argv[1]) : 1000, gap_ms = argc > 2 ? atoi(argv[2]) : 0, v2;
        char own[4096], base[4160], dir[4200];
        struct statfs fs;

        if (statfs("/sys/fs/cgroup", &fs) < 0)
                die("statfs /sys/fs/cgroup");
        v2 = fs.f_type == CGROUP2_SUPER_MAGIC;
        own_dir(v2, own, sizeof(own));
        snprintf(base, sizeof(base), "%s/colony-floor-%d", own, (int)getpid());
        if (mkdir(base, 0755) < 0)
                die(base);
        if (v2) { /* the memory controller for the cgroups below base */
                int fd = open(strcat(strcpy(dir, base), "/cgroup.subtree_control"), O_WRONLY | O_CLOEXEC);

                if (fd < 0 || write(fd, "+memory", 7) < 0)
                        die("enable memory below our cgroup");
                close(fd);
        }
        fprintf(stderr, "launch_floor: %s, below %s\n",
                v2 ? "v2, clone3 into the cgroup" : "v1, the child writes itself in", base);
        for (int i = 0; i < n; i++) {
                int pipefd[2], cg = -1, placed = 0;
                char c;
                double t0;
                pid_t pid;

                if (gap_ms > 0)
                        usleep((useconds_t)gap_ms * 1000);
                snprintf(dir, sizeof(dir), "%s/t-%d", base, i);
                if (pipe2(pipefd, O_CLOEXEC) < 0)
                        die("pipe");
                t0 = now_us();
                if (mkdir(dir, 0755) < 0)
                        die(dir);
                if (v2) {
                        struct clone_args args = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD };

                        if ((cg = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
                                die(dir);
                        args.cgroup = (uint64_t)cg;
                        pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
                        placed = 1;
                } else
                        pid = fork();
                if (pid < 0)
                        die("fork");
                if (pid == 0) {
                        if (!placed)
                                write_file(dir, "cgroup.procs", "0");
                        execl("/bin/true", "true", (char *)NULL);
                        _exit(127);
                }
                close(pipefd[1]);
                if (read(pipefd[0], &c, 1) != 0)
                        die("the exec");
                printf("%.3f\n", (now_us() - t0) / 1000);
                close(pipefd[0]);
                if (cg >= 0)
                        close(cg);
                int st;
                if (waitpid(pid, &st, 0) < 0 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
                        errno = EIO;
                        die("the child did not run /bin/true in its cgroup");
                }
                while (rmdir(dir) < 0 && errno == EBUSY) /* the exited child's charge is leaving */
                        usleep(1000);
        }
        if (rmdir(base) < 0)
                die(base);
        return 0;
}
