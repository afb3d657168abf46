/* launch_floor.c - the physical floor of a launch, for launch.sh: N times, make a fresh memory
 * cgroup, fork a child into it and exec /bin/true, timed from before the mkdir until the exec is
 * known to have succeeded (end of file on a close-on-exec pipe, as colony's launcher learns it).
 * The child goes in the cheapest way the kernel offers: on cgroup v2 clone3 with
 * CLONE_INTO_CGROUP, else it writes itself into the v1 memory hierarchy's tasks (a thread
 * moving itself takes no lock that waits for an RCU grace period; cgroup-v1.c says more).
 * The cgroups are made below our own (v2: our own must be the root, or hold no task), removed
 * after each run, outside the clock.
 *
 * With GAP_MS, the launches are that far apart, as a job's launches come one at a time: moving
 * a process through cgroup.procs takes the cgroup threadgroup lock for writing, which waits for
 * an RCU grace period unless another writer took it a moment before (back to back, the wait
 * is shared); through tasks, a thread moving itself does not.
 *
 * With "job", each launch makes the cgroups a colony job of one CPU and 16 MiB gets, with its
 * limits: on v1 one per hierarchy colony uses (cpu, cpuacct, memory, pids, freezer, cpuset,
 * devices: those mounted), which the child joins one by one; on v2 the one cgroup with cpu.max,
 * memory.max, memory.swap.max, pids.max and cpuset.cpus. That is the kernel's part of a colony
 * launch; the rest (agent, shepherd, user, output files, records, reports) is colony's.
 *
 *   launch_floor N [GAP_MS [job]]    prints N lines: milliseconds of each launch; the mode on stderr */
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

#define MAX_HIERARCHIES 8

/* Where the launches' cgroups go: one base directory per hierarchy (v2: one). */
typedef struct floor_setup {
        int v2, job, n;
        char base[MAX_HIERARCHIES][4160];
        char ctl[MAX_HIERARCHIES][64]; /* v1: the hierarchy's controllers ("cpu,cpuacct") */
} floor_setup;

static double now_us(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return ts.tv_sec * 1e6 + ts.tv_nsec / 1e3;
}

static _Noreturn void die(const char *what) {
        fprintf(stderr, "launch_floor: %s: %s\n", what, strerror(errno));
        exit(1);
}

/* Write value to dir/file in one write. Returns 0 or -1 with errno. */
static int write_file(const char *dir, const char *file, const char *value) {
        char path[8192];
        int fd, ok;

        snprintf(path, sizeof(path), "%s/%s", dir, file);
        if ((fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
                return -1;
        ok = write(fd, value, strlen(value)) == (ssize_t)strlen(value);
        close(fd);
        return ok ? 0 : -1;
}

static void must_write(const char *dir, const char *file, const char *value) {
        if (write_file(dir, file, value) < 0)
                die(file);
}

/* Copy file from the parent of dir into dir (a v1 cpuset's cpus and mems). */
static void inherit(const char *dir, const char *file) {
        char path[8192], value[4096];
        int fd;
        ssize_t n;

        snprintf(path, sizeof(path), "%s/../%s", dir, file);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0 || (n = read(fd, value, sizeof(value) - 1)) < 0)
                die(path);
        close(fd);
        value[n] = 0;
        must_write(dir, file, value);
}

/* Whether the comma-separated list of controllers ctl has controller c. The agent's
 * cg_list_has says the same, but this program links nothing of colony's: linking its library
 * maps libcjson in too, and the mappings of the process that forks are part of what a fork
 * costs, so the floor would be measured dearer than a plain one. */
static int has(const char *ctl, const char *c) {
        size_t l = strlen(c);

        for (const char *p = ctl; (p = strstr(p, c)); p += l)
                if ((p == ctl || p[-1] == ',') && (p[l] == ',' || p[l] == 0))
                        return 1;
        return 0;
}

/* Whether the v1 hierarchy of controllers ctl is one a job of colony's (or, with memory_only,
 * of the plain floor) joins. */
static int wanted(const char *ctl, int memory_only) {
        static const char *const colony[] = { "cpu", "cpuacct", "memory", "pids", "freezer", "cpuset", "devices" };

        if (memory_only)
                return has(ctl, "memory");
        for (size_t i = 0; i < sizeof(colony) / sizeof(colony[0]); i++)
                if (has(ctl, colony[i]))
                        return 1;
        return 0;
}

/* Our own cgroups from /proc/self/cgroup: v2's entry ("0::"), or the v1 hierarchies wanted;
 * a base directory made below each. */
static void setup(floor_setup *s) {
        FILE *f = fopen("/proc/self/cgroup", "r");
        char line[4096];

        if (!f)
                die("/proc/self/cgroup");
        while (fgets(line, sizeof(line), f) && s->n < MAX_HIERARCHIES) {
                char *ctl = strchr(line, ':'), *path = ctl ? strchr(ctl + 1, ':') : NULL;

                if (!path)
                        continue;
                *ctl++ = 0;
                *path++ = 0;
                path[strcspn(path, "\n")] = 0;
                if (s->v2 ? strcmp(line, "0") != 0 || *ctl : !*ctl || !wanted(ctl, !s->job))
                        continue;
                snprintf(s->ctl[s->n], sizeof(s->ctl[s->n]), "%s", ctl);
                snprintf(s->base[s->n], sizeof(s->base[s->n]), "/sys/fs/cgroup%s%s%s/colony-floor-%d", s->v2 ? "" : "/",
                         ctl, strcmp(path, "/") ? path : "", (int)getpid());
                if (mkdir(s->base[s->n], 0755) < 0)
                        die(s->base[s->n]);
                if (!s->v2 && has(ctl, "cpuset")) { /* as colony's subtree: cpus for the jobs below */
                        inherit(s->base[s->n], "cpuset.cpus");
                        inherit(s->base[s->n], "cpuset.mems");
                        must_write(s->base[s->n], "cgroup.clone_children", "1");
                }
                s->n++;
        }
        fclose(f);
        if (s->n == 0) {
                errno = ENOENT;
                die("our own cgroup");
        }
        if (s->v2) { /* the controllers for the cgroups below base */
                must_write(s->base[0], "cgroup.subtree_control", s->job ? "+memory +cpu +pids" : "+memory");
                if (s->job)
                        (void)write_file(s->base[0], "cgroup.subtree_control", "+cpuset");
        }
}

/* A colony job's limits for one CPU and 16 MiB in the new cgroup dir of hierarchy i. */
static void write_limits(const floor_setup *s, int i, const char *dir) {
        const char *ctl = s->ctl[i];

        if (s->v2) {
                must_write(dir, "cpu.max", "100000 100000");
                must_write(dir, "memory.max", "16777216");
                (void)write_file(dir, "memory.swap.max", "0");
                must_write(dir, "pids.max", "4096");
                (void)write_file(dir, "cpuset.cpus", "0"); /* where cpuset is enabled */
                return;
        }
        if (has(ctl, "cpu")) {
                must_write(dir, "cpu.cfs_period_us", "100000");
                must_write(dir, "cpu.cfs_quota_us", "100000");
        }
        if (has(ctl, "memory")) {
                must_write(dir, "memory.limit_in_bytes", "16777216");
                (void)write_file(dir, "memory.memsw.limit_in_bytes", "16777216"); /* where swap is accounted */
        }
        if (has(ctl, "pids"))
                must_write(dir, "pids.max", "4096");
        if (has(ctl, "cpuset"))
                must_write(dir, "cpuset.cpus", "0");
}

int main(int argc, char **argv) {
        int n = argc > 1 ? atoi(argv[1]) : 1000, gap_ms = argc > 2 ? atoi(argv[2]) : 0;
        floor_setup s = { .job = argc > 3 && strcmp(argv[3], "job") == 0 };
        char dir[MAX_HIERARCHIES][4200];
        struct statfs fs;

        if (statfs("/sys/fs/cgroup", &fs) < 0)
                die("statfs /sys/fs/cgroup");
        s.v2 = fs.f_type == CGROUP2_SUPER_MAGIC;
        setup(&s);
        fprintf(stderr, "launch_floor: %s, %s, below %s\n",
                s.v2 ? "v2, clone3 into the cgroup" : "v1, the child writes itself in",
                s.job ? "a colony job's cgroups and limits" : "a memory cgroup", s.base[0]);
        for (int i = 0; i < n; i++) {
                int pipefd[2], cg = -1;
                char c;
                double t0;
                pid_t pid;

                if (gap_ms > 0)
                        usleep((useconds_t)gap_ms * 1000);
                for (int h = 0; h < s.n; h++)
                        snprintf(dir[h], sizeof(dir[h]), "%s/t-%d", s.base[h], i);
                if (pipe2(pipefd, O_CLOEXEC) < 0)
                        die("pipe");
                t0 = now_us();
                for (int h = 0; h < s.n; h++) {
                        if (mkdir(dir[h], 0755) < 0)
                                die(dir[h]);
                        if (s.job)
                                write_limits(&s, h, dir[h]);
                }
                if (s.v2) {
                        struct clone_args args = { .flags = CLONE_INTO_CGROUP, .exit_signal = SIGCHLD };

                        if ((cg = open(dir[0], O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0)
                                die(dir[0]);
                        args.cgroup = (uint64_t)cg;
                        pid = (pid_t)syscall(SYS_clone3, &args, sizeof(args));
                } else
                        pid = fork();
                if (pid < 0)
                        die("fork");
                if (pid == 0) {
                        for (int h = 0; !s.v2 && h < s.n; h++)
                                if (write_file(dir[h], "tasks", "0") < 0)
                                        _exit(126);
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
                        die("the child did not run /bin/true in its cgroups");
                }
                for (int h = 0; h < s.n; h++)
                        while (rmdir(dir[h]) < 0 && errno == EBUSY) /* the exited child's charge is leaving */
                                usleep(1000);
        }
        for (int h = 0; h < s.n; h++)
                if (rmdir(s.base[h]) < 0)
                        die(s.base[h]);
        return 0;
}
