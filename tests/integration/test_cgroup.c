/* test_cgroup - the cgroup backend and the launcher against this host's real cgroups.
 *
 * Usage: test_cgroup PATH-TO-colony-stress. Needs root and a usable cgroup setup (else exits
 * 77). Every test opens the backend as agent "test-<pid of this runner>", so its cgroups live
 * in colony-test-<pid> subtrees, and its teardown closes the backend with remove_subtree,
 * which kills and removes every job cgroup there, a failed test's included. Check ends a
 * failed or timed-out test's process without teardown or atexit handlers, so the runner
 * itself does that once more at the end, and owns the scratch directory: nothing stays
 * behind whichever test fails. */
#include "cgroup.h"
#include "cgroup-internal.h"
#include "launch.h"
#include "log.h"
#include "proto.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/sysmacros.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define SKIP   77
#define MiB    (1024 * 1024)
#define NOBODY 65534

static char *stress;                /* the colony-stress binary, absolute */
static char agent_name[32];         /* "test-<pid>" */
static cg_backend *cg;              /* the current test's backend */
static char tmpdir[64];             /* the runner's scratch directory, mode 0777 */
static char tmpfile_path[PATH_MAX]; /* test_user's output file in it */
/* Stand-ins for two GPUs' device nodes, made by test_devices in the scratch directory: char
 * devices of the mem driver (/dev/full's 1:7, /dev/zero's 1:5), which open without error where
 * access is allowed; a major with no driver would fail with ENXIO either way. */
static const cg_device gpu_dev[2] = { { 'c', 1, 7 }, { 'c', 1, 5 } };
static char gpu_path[2][PATH_MAX];

static double now_s(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_s(double s) {
        struct timespec ts = { .tv_sec = (time_t)s, .tv_nsec = (long)((s - (double)(time_t)s) * 1e9) };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

/* Kill and remove every job and cgroup of the subtree; safe to run more than once. */
static void cleanup(void) {
        if (cg) {
                cg_close(cg, true);
                cg = NULL;
        }
        while (waitpid(-1, NULL, WNOHANG) > 0)
                ;
}

static void setup(void) {
        char err[512], **left = NULL;

        cleanup(); /* what a failed test left in this process when not forking (CK_FORK=no) */
        /* Orphaned grandchildren come to us, so that we can reap them and see them gone. */
        ck_assert_int_eq(prctl(PR_SET_CHILD_SUBREAPER, 1), 0);
        ck_assert_msg(cg_open(agent_name, &cg, err, sizeof(err)) == 0, "cg_open: %s", err);
        /* A failed test ends without its teardown (Check forks each test): the jobs it left go
         * here, so that one failure does not fail the tests after it too. */
        ck_assert_int_eq(cg_list_jobs(cg, &left), 0);
        for (char **job = left; job && *job; job++) {
                (void)cg_job_kill(cg, *job, 5000);
                (void)cg_job_remove(cg, *job);
        }
        strv_free(left);
}

/* Create job's cgroup with lim and launch argv in it as uid/gid; returns launch_job's result. */
static int start(const char *job, const cg_limits *lim, char **argv, uid_t uid, const char *cwd, const char *out,
                 pid_t *pid, char *err, size_t errlen) {
        job_spec spec = { .argv = argv, .cwd = (char *)cwd, .stdout_path = (char *)out, .stderr_path = (char *)out };
        launch_req req = { .spec = &spec, .uid = uid, .gid = (gid_t)uid, .cg = cg, .cg_job = job };
        int r = cg_job_create(cg, job, lim, err, errlen);

        ck_assert_msg(r == 0, "cg_job_create %s: %s", job, err);
        return launch_job(&req, pid, err, errlen);
}

/* Reaps PID within TIMEOUT_S and returns its wait status; its rusage into RU when not NULL. */
static int wait_exit_rusage(pid_t pid, double timeout_s, struct rusage *ru) {
        double end = now_s() + timeout_s;
        int status;

        for (;;) {
                pid_t r = wait4(pid, &status, WNOHANG, ru);

                ck_assert_msg(r >= 0, "waitpid %d: %s", (int)pid, strerror(errno));
                if (r == pid)
                        return status;
                ck_assert_msg(now_s() < end, "process %d still runs after %.0f s", (int)pid, timeout_s);
                sleep_s(0.02);
        }
}

static int wait_exit(pid_t pid, double timeout_s) { return wait_exit_rusage(pid, timeout_s, NULL); }

/* The pids in the job's cgroup (read from the subtree cg_subtree_path names). */
static size_t job_pids(const char *job, pid_t *pids, size_t max) {
        char path[PATH_MAX];
        size_t n = 0;
        long p;
        FILE *f;

        snprintf(path, sizeof(path), "%s/%s/cgroup.procs", cg_subtree_path(cg), job);
        f = fopen(path, "re");
        ck_assert_msg(f != NULL, "open %s: %s", path, strerror(errno));
        while (n < max && fscanf(f, "%ld", &p) == 1)
                pids[n++] = (pid_t)p;
        fclose(f);
        return n;
}

/* Field 22 of /proc/PID/stat (start time), so that a reused pid is not taken for the same
 * process; 0 when there is no such process. */
static unsigned long long start_time(pid_t pid) {
        char path[64], buf[1024], *p;
        unsigned long long t = 0;
        ssize_t n;
        int fd;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
                return 0;
        n = read(fd, buf, sizeof(buf) - 1);
        close(fd);
        if (n <= 0)
                return 0;
        buf[n] = 0;
        if (!(p = strrchr(buf, ')')))
                return 0;
        /* Fields 3 (state) and on follow ")"; stop at the space before field 22. */
        for (int field = 3; field <= 22 && p; field++)
                p = strchr(p + 1, ' ');
        if (p)
                t = strtoull(p + 1, NULL, 10);
        return t;
}

static void read_file(const char *path, char *buf, size_t len) {
        int fd = open(path, O_RDONLY | O_CLOEXEC);
        ssize_t n;

        ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
        n = read(fd, buf, len - 1);
        close(fd);
        ck_assert_msg(n >= 0, "read %s: %s", path, strerror(errno));
        buf[n] = 0;
}

START_TEST(test_cpu_limit) {
        cg_limits lim = { .mcpu = 500, .mem = 256 * MiB, .pids = 64 };
        char *argv[] = { stress, "cpu", "4", NULL }, err[512];
        cg_usage u0, u1;
        double t0, t1, rate, own_usec;
        struct rusage ru;
        pid_t pid;
        int st;

        ck_assert_msg(start("job-cpu", &lim, argv, 0, "/", "/dev/null", &pid, err, sizeof(err)) == 0, "launch: %s",
                      err);
        sleep_s(0.5);
        ck_assert_int_eq(cg_job_usage(cg, "job-cpu", &u0), 0);
        t0 = now_s();
        sleep_s(3);
        ck_assert_int_eq(cg_job_usage(cg, "job-cpu", &u1), 0);
        t1 = now_s();
        rate = (double)(u1.cpu_usec - u0.cpu_usec) / 1e6 / (t1 - t0);
        printf("cpu: 500 mcpu job used %.3f CPU-s per wall second over %.2f s\n", rate, t1 - t0);
        ck_assert_msg(rate <= 0.55, "CPU rate %.3f exceeds the 0.5 limit", rate);
        /* How much CPU the loop gets depends on the host's load; what the cgroup accounts must
         * match what the kernel charged the process itself, whatever that was. */
        st = wait_exit_rusage(pid, 10, &ru);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "cpu job ended with status 0x%x", st);
        ck_assert_int_eq(cg_job_usage(cg, "job-cpu", &u1), 0);
        own_usec = (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) * 1e6 + ru.ru_utime.tv_usec + ru.ru_stime.tv_usec;
        printf("cpu: cgroup accounted %.3f CPU-s, the process's rusage %.3f\n", u1.cpu_usec / 1e6, own_usec / 1e6);
        ck_assert_msg(own_usec > 0 && u1.cpu_usec > 0,
                      "the busy loop is not being accounted (cgroup %.3f s, rusage %.3f s)", u1.cpu_usec / 1e6,
                      own_usec / 1e6);
        ck_assert_msg(fabs((double)u1.cpu_usec - own_usec) <= 0.1 * own_usec + 20000,
                      "cgroup accounted %.3f CPU-s, the process used %.3f", u1.cpu_usec / 1e6, own_usec / 1e6);
        ck_assert_int_eq(cg_job_remove(cg, "job-cpu"), 0);
}
END_TEST

/* A job's own cores: its tasks' affinity is what cpuset.cpus says, read back as a restarted
 * agent reads it, and follows a rewrite. Skipped (passes, says so) without the cpuset
 * controller or with fewer than 2 CPUs allowed. */
START_TEST(test_cpuset) {
        cg_limits lim = { .mcpu = 1000, .mem = 64 * MiB, .pids = 64, .cpus = "0" };
        char *argv[] = { stress, "sleep", "10", NULL }, err[512], *cpus = NULL;
        cpu_set_t set;
        int64_t mcpu;
        pid_t pid, pids[8];
        int st;

        ck_assert_int_eq(sched_getaffinity(0, sizeof(set), &set), 0);
        if (!CPU_ISSET(0, &set) || !CPU_ISSET(1, &set)) {
                printf("cpuset: skipped, CPUs 0 and 1 are not both ours\n");
                return;
        }
        ck_assert_msg(start("job-cpuset", &lim, argv, 0, "/", "/dev/null", &pid, err, sizeof(err)) == 0, "launch: %s",
                      err);
        if (cg_job_cpus(cg, "job-cpuset", &cpus, &mcpu) == -EOPNOTSUPP) {
                printf("cpuset: skipped, no cpuset controller here\n");
        } else {
                ck_assert_str_eq(cpus, "0");
                ck_assert_int_eq(mcpu, 1000);
                ck_assert_uint_eq(job_pids("job-cpuset", pids, 8), 1);
                ck_assert_int_eq(sched_getaffinity(pids[0], sizeof(set), &set), 0);
                ck_assert(CPU_ISSET(0, &set) && !CPU_ISSET(1, &set));
                ck_assert_msg(cg_job_set_cpus(cg, "job-cpuset", "1", err, sizeof(err)) == 0, "set cpus: %s", err);
                ck_assert_int_eq(sched_getaffinity(pids[0], sizeof(set), &set), 0);
                ck_assert(!CPU_ISSET(0, &set) && CPU_ISSET(1, &set));
        }
        free(cpus);
        ck_assert_int_eq(cg_job_kill(cg, "job-cpuset", 5000), 0);
        st = wait_exit(pid, 10);
        ck_assert(WIFSIGNALED(st) || WIFEXITED(st));
        ck_assert_int_eq(cg_job_remove(cg, "job-cpuset"), 0);
}
END_TEST

START_TEST(test_oom) {
        cg_limits lim = { .mcpu = 1000, .mem = 64 * MiB, .pids = 64 };
        char *argv[] = { stress, "mem", "256M", "5", NULL }, err[512];
        cg_usage u;
        pid_t pid;
        int st;

        ck_assert_msg(start("job-oom", &lim, argv, 0, "/", "/dev/null", &pid, err, sizeof(err)) == 0, "launch: %s",
                      err);
        st = wait_exit(pid, 30);
        ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "mem job ended with status 0x%x, want SIGKILL", st);
        ck_assert_int_eq(cg_job_usage(cg, "job-oom", &u), 0);
        printf("oom: killed by SIGKILL, oom_kills=%llu, peak=%llu bytes (limit %d)\n", (unsigned long long)u.oom_kills,
               (unsigned long long)u.mem_peak, 64 * MiB);
        ck_assert_uint_ge(u.oom_kills, 1);
        ck_assert_uint_le(u.mem_peak, 64 * MiB);
        ck_assert_uint_gt(u.mem_peak, 0);
        ck_assert_int_eq(cg_job_is_empty(cg, "job-oom"), 1);
        ck_assert_int_eq(cg_job_remove(cg, "job-oom"), 0);
}
END_TEST

START_TEST(test_kill_tree) {
        cg_limits lim = { .mcpu = 500, .mem = 64 * MiB, .pids = 64 };
        char *argv[] = { stress, "tree", "3", "60", NULL }, err[512];
        pid_t pid, pids[16];
        unsigned long long starts[16];
        size_t n = 0;
        double end;
        int st;

        ck_assert_msg(start("job-tree", &lim, argv, 0, "/", "/dev/null", &pid, err, sizeof(err)) == 0, "launch: %s",
                      err);
        for (end = now_s() + 5; (n = job_pids("job-tree", pids, 16)) < 7 && now_s() < end;)
                sleep_s(0.05);
        ck_assert_msg(n == 7, "%zu processes in the job's cgroup, want 7 (parent, 3 children, 3 grandchildren)", n);
        for (size_t i = 0; i < n; i++) {
                starts[i] = start_time(pids[i]);
                ck_assert_uint_ne(starts[i], 0);
        }

        ck_assert_int_eq(cg_job_signal(cg, "job-tree", SIGTERM), 0);
        sleep_s(0.3);
        for (size_t i = 0; i < n; i++)
                ck_assert_msg(start_time(pids[i]) == starts[i], "pid %d died of SIGTERM it ignores", (int)pids[i]);
        ck_assert_int_eq(cg_job_is_empty(cg, "job-tree"), 0);

        ck_assert_int_eq(cg_job_kill(cg, "job-tree", 5000), 0);
        ck_assert_int_eq(cg_job_is_empty(cg, "job-tree"), 1);
        st = wait_exit(pid, 5);
        ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "tree parent status 0x%x", st);
        /* The children and grandchildren were re-parented to us (subreaper): reap them. */
        for (end = now_s() + 5; waitpid(-1, NULL, WNOHANG) >= 0 && now_s() < end;)
                sleep_s(0.01);
        for (size_t i = 0; i < n; i++)
                ck_assert_msg(start_time(pids[i]) != starts[i], "pid %d survived the kill", (int)pids[i]);
        ck_assert_int_eq(cg_job_remove(cg, "job-tree"), 0);
        printf("tree: %zu processes ignored SIGTERM, all gone after cg_job_kill\n", n);
}
END_TEST

START_TEST(test_user) {
        cg_limits lim = { .mcpu = 500, .mem = 64 * MiB, .pids = 16 };
        char *argv[] = { stress, "id", NULL }, err[512], got[64];
        struct stat sb;
        pid_t pid;
        int st;

        ck_assert_msg(start("job-user", &lim, argv, NOBODY, tmpdir, tmpfile_path, &pid, err, sizeof(err)) == 0,
                      "launch: %s", err);
        st = wait_exit(pid, 10);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "id job ended with status 0x%x", st);
        read_file(tmpfile_path, got, sizeof(got));
        ck_assert_str_eq(got, "65534 65534\n");
        ck_assert_int_eq(stat(tmpfile_path, &sb), 0);
        ck_assert_uint_eq(sb.st_uid, NOBODY); /* opened as the user, not as root */
        ck_assert_int_eq(cg_job_remove(cg, "job-user"), 0);
}
END_TEST

START_TEST(test_launch_errors) {
        cg_limits lim = { .mcpu = 500, .mem = 64 * MiB, .pids = 16 };
        char *missing[] = { "/nonexistent/colony-no-such-program", NULL };
        char *id[] = { stress, "id", NULL }, err[512] = "";
        pid_t pid = 0;
        int r;

        r = start("job-missing", &lim, missing, 0, "/", "/dev/null", &pid, err, sizeof(err));
        ck_assert_int_eq(r, -ENOENT);
        ck_assert_msg(strstr(err, "No such file"), "error \"%s\" does not say No such file", err);
        ck_assert_str_eq(err, "execve /nonexistent/colony-no-such-program: No such file or directory");
        ck_assert_int_eq(pid, 0);
        ck_assert_int_eq(cg_job_is_empty(cg, "job-missing"), 1);
        ck_assert_int_eq(cg_job_remove(cg, "job-missing"), 0);

        r = start("job-nocwd", &lim, id, NOBODY, "/nonexistent-cwd", "/dev/null", &pid, err, sizeof(err));
        ck_assert_int_eq(r, -ENOENT);
        ck_assert_str_eq(err, "chdir /nonexistent-cwd: No such file or directory");
        ck_assert_int_eq(cg_job_remove(cg, "job-nocwd"), 0);
        printf("launch errors: \"%s\"\n", err);
}
END_TEST

/* Launch argv in job's cgroup as root from a child forked here whose clone3 fails with ENOSYS
 * (a seccomp filter, as some container runtimes install): the job's pid, read back from that
 * child, which then waits for the job. On v2 the launch must fall back to the move through
 * cgroup.procs, as it always does on v1. */
static pid_t launch_without_clone3(const char *job, char **argv, pid_t *launcher) {
        struct sock_filter deny_clone3[] = {
                BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
                BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, SYS_clone3, 0, 1),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS),
                BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
        };
        struct sock_fprog prog = { .len = sizeof(deny_clone3) / sizeof(deny_clone3[0]), .filter = deny_clone3 };
        job_spec spec = { .argv = argv, .cwd = "/", .stdout_path = "/dev/null", .stderr_path = "/dev/null" };
        launch_req req = { .spec = &spec, .cg = cg, .cg_job = job };
        int res[2];
        pid_t pid = 0;
        char err[512];

        ck_assert_int_eq(pipe2(res, O_CLOEXEC), 0);
        *launcher = fork();
        ck_assert_int_ge(*launcher, 0);
        if (*launcher == 0) {
                if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0 ||
                    prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) < 0 || syscall(SYS_clone3, NULL, 0) != -1 ||
                    errno != ENOSYS)
                        _exit(2);
                if (launch_job(&req, &pid, err, sizeof(err)) < 0) {
                        fprintf(stderr, "launch without clone3: %s\n", err);
                        _exit(3);
                }
                _exit(write(res[1], &pid, sizeof(pid)) == sizeof(pid) && waitpid(pid, NULL, 0) == pid ? 0 : 4);
        }
        close(res[1]);
        if (read(res[0], &pid, sizeof(pid)) != sizeof(pid))
                pid = 0;
        close(res[0]);
        return pid;
}

START_TEST(test_launch_without_clone3) {
        cg_limits lim = { .mcpu = 500, .mem = 64 * MiB, .pids = 16 };
        char *argv[] = { stress, "sleep", "60", NULL }, err[512];
        pid_t pid, launcher, in_job[4];
        size_t n = 0;
        int st;

        ck_assert_msg(cg_job_create(cg, "job-noclone3", &lim, err, sizeof(err)) == 0, "cg_job_create: %s", err);
        pid = launch_without_clone3("job-noclone3", argv, &launcher);
        if (pid == 0) {
                st = wait_exit(launcher, 10);
                ck_abort_msg("the launch without clone3 failed: status 0x%x", st);
        }
        for (double end = now_s() + 5; (n = job_pids("job-noclone3", in_job, 4)) == 0 && now_s() < end;)
                sleep_s(0.05);
        ck_assert_msg(n == 1 && in_job[0] == pid, "%zu processes in the job's cgroup, want its pid %d alone", n,
                      (int)pid);
        /* In its cgroup, the root job no longer dies with the process that started it (a dead
         * job would be a zombie of ours, with its start time, out of the cgroup's list). */
        ck_assert_int_eq(kill(launcher, SIGKILL), 0);
        st = wait_exit(launcher, 10);
        ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the launcher ended with status 0x%x", st);
        sleep_s(0.2);
        n = job_pids("job-noclone3", in_job, 4);
        ck_assert_msg(n == 1 && in_job[0] == pid, "job %d died with the process that launched it", (int)pid);
        ck_assert_int_eq(cg_job_kill(cg, "job-noclone3", 5000), 0);
        st = wait_exit(pid, 10); /* ours now: we are the subreaper its parent's death gave it to */
        ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "the job ended with status 0x%x", st);
        ck_assert_int_eq(cg_job_remove(cg, "job-noclone3"), 0);
}
END_TEST

/* An agent started again at once after its predecessor's death: a shepherd the dead agent forked
 * just before still shares its lock on the subtree until its first steps close it (here a
 * child that keeps the inherited descriptor 0.3 s, on a scratch directory). The next lock
 * waits for it instead of taking it for a live agent of the same name. */
START_TEST(test_lock_waits_for_an_inherited_holder) {
        cg_backend dead = { .lock_fd = -1 }, next = { .lock_fd = -1 };
        char err[512];
        pid_t holder;
        int st;

        ck_assert_msg(cg_lock_subtree(&dead, tmpdir, err, sizeof(err)) == 0, "lock %s: %s", tmpdir, err);
        holder = fork();
        ck_assert_int_ge(holder, 0);
        if (holder == 0) {
                sleep_s(0.3);
                _exit(0);
        }
        close(dead.lock_fd); /* the agent's death: its shepherd's copy alone holds the lock */
        ck_assert_msg(cg_lock_subtree(&next, tmpdir, err, sizeof(err)) == 0, "lock %s again: %s", tmpdir, err);
        close(next.lock_fd);
        st = wait_exit(holder, 10);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "the lock's holder ended with status 0x%x", st);
}
END_TEST

/* Count directories named name below dir, at most depth levels deep. */
static int count_dirs(const char *dir, const char *name, int depth) {
        DIR *d = opendir(dir);
        struct dirent *e;
        int n = 0;

        if (!d)
                return 0;
        while ((e = readdir(d))) {
                char sub[PATH_MAX];

                if (e->d_type != DT_DIR || e->d_name[0] == '.')
                        continue;
                if (strcmp(e->d_name, name) == 0) {
                        fprintf(stderr, "found: %s/%s\n", dir, e->d_name);
                        n++;
                }
                if (depth > 1 && snprintf(sub, sizeof(sub), "%s/%s", dir, e->d_name) < (int)sizeof(sub))
                        n += count_dirs(sub, name, depth - 1);
        }
        closedir(d);
        return n;
}

/* Our cgroup in the hierarchy that has the cpu controller (v2: the one), from /proc/self/cgroup,
 * into path: "/" or "/a/b". */
static void self_cpu_cgroup(bool v2, char *path, size_t len) {
        char line[PATH_MAX], ctl[256], at[PATH_MAX];
        FILE *f = fopen("/proc/self/cgroup", "re");

        ck_assert_ptr_nonnull(f);
        *path = 0;
        while (!*path && fgets(line, sizeof(line), f)) {
                if (v2 && sscanf(line, "0::%4095s", at) == 1)
                        snprintf(path, len, "%s", at);
                else if (!v2 && sscanf(line, "%*d:%255[^:]:%4095s", ctl, at) == 2 && cg_list_has(ctl, "cpu", ","))
                        snprintf(path, len, "%s", at);
        }
        fclose(f);
        ck_assert_msg(*path, "no cpu cgroup in /proc/self/cgroup");
}

/* The agent lives in its leaf <subtree>/agent of the cpu hierarchy, whose weight puts it, and the
 * shepherds it forks, before the jobs (CG_AGENT_WEIGHT); test_close_removes_all sees it leave. */
START_TEST(test_agent_leaf) {
        bool v2 = cg_get_mode(cg) == CG_MODE_V2;
        char path[PATH_MAX], want[96], dir[PATH_MAX + 32];
        uint64_t weight = 0, expected = v2 ? cg_weight_v2(CG_AGENT_WEIGHT) : cg_shares_v1(CG_AGENT_WEIGHT);
        size_t n;

        self_cpu_cgroup(v2, path, sizeof(path));
        snprintf(want, sizeof(want), "/colony-%s/%s", agent_name, CG_AGENT_LEAF);
        n = strlen(path);
        ck_assert_msg(n >= strlen(want) && strcmp(path + n - strlen(want), want) == 0,
                      "our cpu cgroup is %s, not ...%s", path, want);
        snprintf(dir, sizeof(dir), "/sys/fs/cgroup%s%s", v2 ? "" : "/cpu", path);
        ck_assert_int_eq(cg_read_u64(dir, v2 ? "cpu.weight" : "cpu.shares", &weight), 0);
        ck_assert_uint_eq(weight, expected);
        ck_assert_uint_gt(expected, v2 ? 100 : 1024); /* above a job's default */
        printf("agent leaf: %s, %s %" PRIu64 "\n", dir, v2 ? "cpu.weight" : "cpu.shares", weight);
}
END_TEST

START_TEST(test_close_removes_all) {
        cg_limits lim = { .mcpu = 500, .mem = 64 * MiB, .pids = 16 };
        char *argv[] = { stress, "sleep", "60", NULL }, err[512], dirname[64], path[PATH_MAX], **jobs = NULL;
        cg_mode mode = cg_get_mode(cg);
        pid_t pid;
        int st;

        ck_assert_msg(start("job-left", &lim, argv, 0, "/", "/dev/null", &pid, err, sizeof(err)) == 0, "launch: %s",
                      err);
        /* A department no job holds, as an agent that died between its mkdir and the job's
         * leaves it: the subtree goes all the same. */
        ck_assert_msg(cg_dept_prepare(cg, "left/over", (double[]){ 1.0, 2.0 }, 2, err, sizeof(err)) == 0,
                      "department: %s", err);
        /* And one a prune left in some hierarchies only (v1): not in the one the subtree's
         * path names, which an agent's stop once listed alone, leaving the subtree busy. */
        ck_assert_msg(cg_dept_prepare(cg, "half", (double[]){ 1.0 }, 1, err, sizeof(err)) == 0, "department: %s", err);
        if (mode == CG_MODE_V1) {
                snprintf(path, sizeof(path), "%s/dept-half", cg_subtree_path(cg));
                ck_assert_int_eq(rmdir(path), 0);
                ck_assert_int_ge(count_dirs("/sys/fs/cgroup", "dept-half", 8), 1);
        }
        ck_assert_int_eq(cg_list_jobs(cg, &jobs), 0);
        ck_assert_ptr_nonnull(jobs[0]);
        ck_assert_str_eq(jobs[0], "job-left");
        ck_assert_ptr_null(jobs[1]);
        strv_free(jobs);

        cg_close(cg, true);
        cg = NULL;
        st = wait_exit(pid, 5);
        ck_assert_msg(WIFSIGNALED(st) && WTERMSIG(st) == SIGKILL, "sleep job status 0x%x, want SIGKILL", st);
        snprintf(dirname, sizeof(dirname), "colony-%s", agent_name);
        ck_assert_int_eq(count_dirs("/sys/fs/cgroup", dirname, 8), 0);
        self_cpu_cgroup(mode == CG_MODE_V2, path, sizeof(path));
        ck_assert_msg(!strstr(path, dirname), "still in %s after the subtree's removal", path);
}
END_TEST

/* Open path for reading in a child forked here that first moves itself into job's cgroup, as a
 * job's process does (cg_job_procs_open): its errno, or 0 when it opened. */
static int open_in_job(const char *job, const char *path) {
        int res[2], procs[CG_MAX_HIERARCHIES], nprocs, e[2] = { -1, -1 }; /* the move's errno, the open's */
        char err[512];
        pid_t pid;

        nprocs = cg_job_procs_open(cg, job, procs, err, sizeof(err));
        ck_assert_msg(nprocs > 0, "cgroup.procs of %s: %s", job, err);
        ck_assert_int_eq(pipe2(res, O_CLOEXEC), 0);
        pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
                int fd;

                e[0] = 0;
                for (int i = 0; i < nprocs && !e[0]; i++)
                        if (write(procs[i], "0", 1) != 1)
                                e[0] = errno;
                fd = e[0] ? -1 : open(path, O_RDONLY | O_CLOEXEC);
                e[1] = fd < 0 ? errno : 0;
                _exit(write(res[1], e, sizeof(e)) == sizeof(e) ? 0 : 1);
        }
        for (int i = 0; i < nprocs; i++)
                close(procs[i]);
        close(res[1]);
        ck_assert_int_eq(read(res[0], e, sizeof(e)), sizeof(e));
        close(res[0]);
        ck_assert_int_eq(wait_exit(pid, 10), 0);
        ck_assert_msg(e[0] == 0, "move into %s: %s", job, strerror(e[0]));
        return e[1];
}

/* The stand-ins' nodes, made afresh (main removes them). */
static void make_gpu_nodes(void) {
        for (int i = 0; i < 2; i++) {
                (void)unlink(gpu_path[i]);
                ck_assert_msg(mknod(gpu_path[i], S_IFCHR | 0600, makedev(gpu_dev[i].major, gpu_dev[i].minor)) == 0,
                              "mknod %s: %s", gpu_path[i], strerror(errno));
        }
}

/* A job denied gpu0 gets EPERM opening gpu0's node and opens gpu1's; a job beside it in the same
 * department, denied nothing, opens both (a denial is the job's, not its department's); a bad
 * device is refused before any cgroup is made. */
START_TEST(test_devices) {
        cg_limits denied = { .pids = 16, .deny = &gpu_dev[0], .ndeny = 1 }, open_all = { .pids = 16 };
        cg_device bad = { 'x', 1, 7 };
        cg_limits bad_lim = { .pids = 16, .deny = &bad, .ndeny = 1 };
        char err[512], job[64], other[64], **jobs = NULL;
        double w = 1.0;

        make_gpu_nodes();
        ck_assert_int_eq(cg_job_name("lab", 1, job, sizeof(job)), 0);
        ck_assert_int_eq(cg_job_name("lab", 2, other, sizeof(other)), 0);
        ck_assert_msg(cg_dept_prepare(cg, "lab", &w, 1, err, sizeof(err)) == 0, "department lab: %s", err);
        ck_assert_msg(cg_job_create(cg, job, &denied, err, sizeof(err)) == 0, "create %s: %s", job, err);
        ck_assert_msg(cg_job_create(cg, other, &open_all, err, sizeof(err)) == 0, "create %s: %s", other, err);

        ck_assert_int_eq(open_in_job(job, gpu_path[0]), EPERM);
        ck_assert_int_eq(open_in_job(job, gpu_path[1]), 0);
        ck_assert_int_eq(open_in_job(other, gpu_path[0]), 0);
        ck_assert_int_eq(open_in_job(other, gpu_path[1]), 0);
        printf("devices: %s denied c 1:7 got EPERM on it and opened c 1:5; %s opened both\n", job, other);

        ck_assert_int_eq(cg_job_create(cg, "job-bad", &bad_lim, err, sizeof(err)), -EINVAL);
        ck_assert_str_eq(err, "job job-bad: bad device to deny: type 'x' (want c or b), 1:7");
        ck_assert_int_eq(cg_list_jobs(cg, &jobs), 0);
        for (char **j = jobs; *j; j++)
                ck_assert_str_ne(*j, "job-bad");
        strv_free(jobs);

        ck_assert_int_eq(cg_job_remove(cg, job), 0);
        ck_assert_int_eq(cg_job_remove(cg, other), 0);
}
END_TEST

/* Write value to dir/file, as a host's administrator would. */
static void write_file(const char *dir, const char *file, const char *value) {
        char path[PATH_MAX];
        int fd;

        snprintf(path, sizeof(path), "%s/%s", dir, file);
        fd = open(path, O_WRONLY | O_CLOEXEC);
        ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
        ck_assert_msg(write(fd, value, strlen(value)) == (ssize_t)strlen(value), "write %s to %s: %s", value, path,
                      strerror(errno));
        close(fd);
}

/* v1 below a devices cgroup that allows listed devices only (a container's): a deny takes out an
 * exact entry, so a job denied gpu0 gets EPERM on it and opens gpu1; but a range holding gpu0
 * ("c 1:* rwm") would survive the deny, and the job is refused with the reason, never started
 * with access. The subtree's devices cgroup stands in for the container's. Skipped on v2. */
START_TEST(test_devices_allow_list) {
        cg_limits denied = { .pids = 16, .deny = &gpu_dev[0], .ndeny = 1 };
        char own[PATH_MAX] = "", sub[PATH_MAX], line[PATH_MAX], err[512] = "", **jobs = NULL;
        FILE *f = fopen("/proc/self/cgroup", "re");

        ck_assert_ptr_nonnull(f);
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "%*d:devices:%4095s", own) == 1)
                        break;
        fclose(f);
        snprintf(sub, sizeof(sub), "/sys/fs/cgroup/devices%s/colony-%s", strcmp(own, "/") ? own : "", agent_name);
        if (cg_get_mode(cg) != CG_MODE_V1 || access(sub, F_OK) < 0) {
                printf("devices allow list: skipped, no v1 devices hierarchy here\n");
                return;
        }
        make_gpu_nodes();
        write_file(sub, "devices.deny", "a");
        write_file(sub, "devices.allow", "c 1:* rwm");
        ck_assert_int_eq(cg_job_create(cg, "job-range", &denied, err, sizeof(err)), -EPERM);
        ck_assert_msg(strstr(err, "a range of them still holds c 1:7"), "error: %s", err);
        ck_assert_int_eq(cg_list_jobs(cg, &jobs), 0);
        ck_assert_ptr_null(jobs[0]);
        strv_free(jobs);
        printf("devices allow list: \"%s\"\n", err);

        write_file(sub, "devices.deny", "c 1:* rwm");
        write_file(sub, "devices.allow", "c 1:7 rwm");
        write_file(sub, "devices.allow", "c 1:5 rwm");
        ck_assert_msg(cg_job_create(cg, "job-exact", &denied, err, sizeof(err)) == 0, "create: %s", err);
        ck_assert_int_eq(open_in_job("job-exact", gpu_path[0]), EPERM);
        ck_assert_int_eq(open_in_job("job-exact", gpu_path[1]), 0);
        ck_assert_int_eq(cg_job_remove(cg, "job-exact"), 0);
}
END_TEST

/* How many lines of /proc/PID/cgroup name a cgroup of our subtree, and whether each ends in
 * "/<job>". */
static int in_job_cgroups(pid_t pid, const char *job, bool *all) {
        char path[64], line[PATH_MAX], sub[64], tail[PATH_MAX];
        FILE *f;
        int n = 0;

        snprintf(path, sizeof(path), "/proc/%d/cgroup", (int)pid);
        snprintf(sub, sizeof(sub), "/colony-%s/", agent_name);
        snprintf(tail, sizeof(tail), "/%s\n", job);
        ck_assert_ptr_nonnull(f = fopen(path, "re"));
        *all = true;
        while (fgets(line, sizeof(line), f))
                if (strstr(line, sub)) {
                        size_t l = strlen(line), t = strlen(tail);

                        n++;
                        *all = *all && l >= t && strcmp(line + l - t, tail) == 0;
                }
        fclose(f);
        return n;
}

/* A job for launch_job_ahead: its cgroup from the spare (launch_cgroup) once the child is in it,
 * or no job at all. */
typedef struct ahead_case {
        launch_ahead la;
        launch_req req;
        job_spec spec;
        const char *out; /* the job's output file; NULL: /dev/null */
        bool give;
        int cgroup; /* launch_cgroup's outcome */
        char err[512];
} ahead_case;

static const launch_req *ahead_case_wait(void *arg) {
        ahead_case *c = arg;

        if (!c->give)
                return NULL;
        c->cgroup = launch_cgroup(&c->req, c->err, sizeof(c->err));
        c->la.move = c->cgroup == 1;
        return c->cgroup < 0 ? NULL : &c->req;
}

/* Start argv ahead in spare for job (of department dept, or none) with lim: launch_job_ahead's
 * outcome, the pid in *pid. */
static int run_ahead(ahead_case *c, const char *spare, const char *job, const char *dept, const cg_limits *lim,
                     char **argv, pid_t *pid) {
        static const double weights[] = { 1.0 };
        int procs[CG_MAX_HIERARCHIES], n = cg_job_procs_open(cg, spare, procs, c->err, sizeof(c->err)), r;

        ck_assert_msg(n > 0, "tasks of %s: %s", spare, c->err);
        const char *out = c->out ? c->out : "/dev/null";

        c->spec = (job_spec){ .argv = argv, .cwd = "/", .stdout_path = (char *)out, .stderr_path = (char *)out };
        c->req = (launch_req){ .spec = &c->spec,
                               .cg = cg,
                               .cg_job = job,
                               .lim = lim,
                               .spare_cg = spare,
                               .dept = dept,
                               .dept_weights = weights,
                               .ndept_weights = dept ? 1 : 0 };
        c->la = (launch_ahead){ .procs_fds = procs, .nprocs = n, .wait = ahead_case_wait, .arg = c };
        r = launch_job_ahead(&c->la, pid, c->err, sizeof(c->err));
        launch_ahead_release(&c->la);
        while (n > 0)
                close(procs[--n]);
        return r;
}

/* Kill and remove the job of pid, ours. */
static void end_job(const char *job, pid_t pid) {
        ck_assert_int_eq(cg_job_kill(cg, job, 5000), 0);
        (void)wait_exit(pid, 10);
        ck_assert_int_eq(cg_job_remove(cg, job), 0);
}

/* A job's process started ahead in a spare cgroup (v1; v2 cannot rename a cgroup, and refuses
 * a spare): renamed, the spare is the job's cgroup in every hierarchy, with the job's limits;
 * no job leaves the child ended and the spare for its owner to remove; a job of another
 * department gets its cgroup made anew, its process moved there; a job whose cgroup exists,
 * whole or in one hierarchy only (a crash's leftover), fails with the spare left whole. */
START_TEST(test_spare_ahead) {
        cg_limits lim = { .mcpu = 500, .mem = 64 * MiB, .pids = 16 };
        char *argv[] = { stress, "sleep", "60", NULL }, err[512], path[PATH_MAX], value[64];
        ahead_case c = { .give = true };
        bool all;
        pid_t pid = 0;
        int r, hierarchies;

        if (cg_get_mode(cg) == CG_MODE_V2) {
                ck_assert_int_eq(cg_spare_create(cg, "spare-t1", err, sizeof(err)), -EOPNOTSUPP);
                return;
        }
        ck_assert_msg(cg_spare_create(cg, "spare-t1", err, sizeof(err)) == 0, "spare: %s", err);
        hierarchies = count_dirs("/sys/fs/cgroup", "spare-t1", 8);
        ck_assert_int_ge(hierarchies, 5);
        r = run_ahead(&c, "spare-t1", "job-ahead", NULL, &lim, argv, &pid);
        ck_assert_msg(r == 0 && c.cgroup == 0, "launch ahead: %d, cgroup %d: %s", r, c.cgroup, c.err);
        ck_assert_int_eq(in_job_cgroups(pid, "job-ahead", &all), hierarchies);
        ck_assert_msg(all, "job %d is not in job-ahead in every hierarchy", (int)pid);
        ck_assert_int_eq(count_dirs("/sys/fs/cgroup", "spare-t1", 8), 0);
        snprintf(path, sizeof(path), "%s/job-ahead/memory.limit_in_bytes", cg_subtree_path(cg));
        read_file(path, value, sizeof(value));
        ck_assert_int_eq(strtoll(value, NULL, 10), 64 * MiB);
        end_job("job-ahead", pid);

        ck_assert_int_eq(cg_spare_create(cg, "spare-t2", err, sizeof(err)), 0);
        c = (ahead_case){ .give = false };
        ck_assert_int_eq(run_ahead(&c, "spare-t2", "job-none", NULL, &lim, argv, &pid), 1);
        ck_assert(c.la.entered);
        ck_assert_int_eq(cg_job_is_empty(cg, "spare-t2"), 1);
        ck_assert_int_eq(cg_job_remove(cg, "spare-t2"), 0);

        ck_assert_int_eq(cg_spare_create(cg, "spare-t3", err, sizeof(err)), 0);
        c = (ahead_case){ .give = true };
        r = run_ahead(&c, "spare-t3", "dept-x/job-moved", "x", &lim, argv, &pid);
        ck_assert_msg(r == 0 && c.cgroup == 1, "launch ahead: %d, cgroup %d: %s", r, c.cgroup, c.err);
        ck_assert_int_eq(in_job_cgroups(pid, "dept-x/job-moved", &all), hierarchies);
        ck_assert_msg(all, "job %d is not in dept-x/job-moved in every hierarchy", (int)pid);
        ck_assert_int_eq(cg_job_is_empty(cg, "spare-t3"), 1);
        ck_assert_int_eq(cg_job_remove(cg, "spare-t3"), 0);
        end_job("dept-x/job-moved", pid);

        ck_assert_int_eq(cg_spare_create(cg, "spare-t4", err, sizeof(err)), 0);
        ck_assert_int_eq(cg_job_create(cg, "job-there", &lim, err, sizeof(err)), 0);
        ck_assert_int_eq(cg_job_from_spare(cg, "spare-t4", "job-there", &lim, err, sizeof(err)), -EEXIST);
        ck_assert_int_eq(count_dirs("/sys/fs/cgroup", "spare-t4", 8), hierarchies);
        snprintf(path, sizeof(path), "%s/job-half", cg_subtree_path(cg)); /* the memory hierarchy's */
        ck_assert_int_eq(mkdir(path, 0755), 0);
        ck_assert_int_eq(cg_job_from_spare(cg, "spare-t4", "job-half", &lim, err, sizeof(err)), -EEXIST);
        ck_assert_int_eq(count_dirs("/sys/fs/cgroup", "spare-t4", 8), hierarchies);
        ck_assert_int_eq(count_dirs("/sys/fs/cgroup", "job-half", 8), 1);
        ck_assert_int_eq(cg_job_from_spare(cg, "spare-t4", "dept-x/job-t4", &lim, err, sizeof(err)), -EXDEV);
        ck_assert_int_eq(rmdir(path), 0);
        ck_assert_int_eq(cg_job_remove(cg, "job-there"), 0);
        ck_assert_int_eq(cg_job_remove(cg, "spare-t4"), 0);
}
END_TEST

static void ignore_signal(int sig) { (void)sig; }

static void empty_file(const char *path) {
        int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);

        ck_assert_msg(fd >= 0, "open %s: %s", path, strerror(errno));
        close(fd);
}

/* The job's "SigIgn:" and "SigBlk:" lines of /proc/self/status, as grep found them in out. */
static void expect_signals_as_a_login(const char *out, const char *how) {
        char got[256];

        read_file(out, got, sizeof(got));
        ck_assert_msg(strcmp(got, "SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n") == 0,
                      "%s: the job's signals: %s", how, got);
}

/* A job's signals are a login's whatever its shepherd's (ignored, caught, blocked): ignored
 * ones stay ignored across exec, and the mask is inherited. Started ahead too, where all but
 * SIGPIPE are reset before the child waits for its job. */
START_TEST(test_job_signals_default) {
        cg_limits lim = { .mcpu = 500, .mem = 64 * MiB, .pids = 16 };
        char *argv[] = { "/bin/grep", "-E", "^Sig(Ign|Blk)", "/proc/self/status", NULL }, err[512];
        struct sigaction caught = { .sa_handler = ignore_signal };
        ahead_case c = { .give = true, .out = tmpfile_path };
        sigset_t term, mask;
        pid_t pid;
        int st;

        ck_assert(signal(SIGPIPE, SIG_IGN) != SIG_ERR && signal(SIGINT, SIG_IGN) != SIG_ERR &&
                  signal(SIGHUP, SIG_IGN) != SIG_ERR && sigaction(SIGUSR1, &caught, NULL) == 0);
        sigemptyset(&term);
        sigaddset(&term, SIGTERM);
        ck_assert_int_eq(sigprocmask(SIG_BLOCK, &term, &mask), 0);

        empty_file(tmpfile_path);
        ck_assert_msg(start("job-signals", &lim, argv, 0, "/", tmpfile_path, &pid, err, sizeof(err)) == 0, "launch: %s",
                      err);
        st = wait_exit(pid, 10);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "grep ended with status 0x%x", st);
        expect_signals_as_a_login(tmpfile_path, "launched");
        ck_assert_int_eq(cg_job_remove(cg, "job-signals"), 0);
        if (cg_get_mode(cg) == CG_MODE_V1) { /* v2 has no spares */
                ck_assert_msg(cg_spare_create(cg, "spare-sig", err, sizeof(err)) == 0, "spare: %s", err);
                empty_file(tmpfile_path);
                st = run_ahead(&c, "spare-sig", "job-signals-ahead", NULL, &lim, argv, &pid);
                ck_assert_msg(st == 0 && c.cgroup == 0, "launch ahead: %d, cgroup %d: %s", st, c.cgroup, c.err);
                st = wait_exit(pid, 10);
                ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "grep ahead ended with status 0x%x", st);
                expect_signals_as_a_login(tmpfile_path, "started ahead");
                ck_assert_int_eq(cg_job_remove(cg, "job-signals-ahead"), 0);
        }
        /* as they were, for the tests after this one when Check does not fork (CK_FORK=no) */
        ck_assert(signal(SIGPIPE, SIG_DFL) != SIG_ERR && signal(SIGINT, SIG_DFL) != SIG_ERR &&
                  signal(SIGHUP, SIG_DFL) != SIG_ERR && signal(SIGUSR1, SIG_DFL) != SIG_ERR);
        ck_assert_int_eq(sigprocmask(SIG_SETMASK, &mask, NULL), 0);
}
END_TEST

/* v1: a department busy in one hierarchy (a child cgroup of it there) goes from every other
 * once it went from one; before, the prune stopped at the busy hierarchy, and those after it
 * (cpuacct and cpu) kept it, which an agent's stop then found. Busy where it is tried first, it
 * is in use: nothing is removed. */
START_TEST(test_dept_remove_goes_on) {
        char err[512], path[PATH_MAX];

        if (cg_get_mode(cg) == CG_MODE_V2)
                return;
        ck_assert_msg(cg_dept_prepare(cg, "go", (double[]){ 1.0 }, 1, err, sizeof(err)) == 0, "department: %s", err);
        int hierarchies = count_dirs("/sys/fs/cgroup", "dept-go", 8);
        ck_assert_int_ge(hierarchies, 5);
        snprintf(path, sizeof(path), "%s/dept-go/busy", cg_subtree_path(cg)); /* the memory hierarchy's */
        ck_assert_int_eq(mkdir(path, 0755), 0);
        ck_assert_int_eq(cg->ops->dept_remove(cg, "dept-go"), -EBUSY);
        ck_assert_int_eq(count_dirs("/sys/fs/cgroup", "dept-go", 8), 1);
        ck_assert_int_eq(rmdir(path), 0);
        ck_assert_int_eq(cg->ops->dept_remove(cg, "dept-go"), 0);
        ck_assert_int_eq(count_dirs("/sys/fs/cgroup", "dept-go", 8), 0);
}
END_TEST

static Suite *cgroup_suite(void) {
        Suite *s = suite_create("cgroup");
        TCase *tc = tcase_create("real");

        tcase_add_checked_fixture(tc, setup, cleanup);
        tcase_set_timeout(tc, 60);
        tcase_add_test(tc, test_cpu_limit);
        tcase_add_test(tc, test_cpuset);
        tcase_add_test(tc, test_oom);
        tcase_add_test(tc, test_kill_tree);
        tcase_add_test(tc, test_user);
        tcase_add_test(tc, test_launch_errors);
        tcase_add_test(tc, test_launch_without_clone3);
        tcase_add_test(tc, test_agent_leaf);
        tcase_add_test(tc, test_close_removes_all);
        tcase_add_test(tc, test_lock_waits_for_an_inherited_holder);
        tcase_add_test(tc, test_devices);
        tcase_add_test(tc, test_devices_allow_list);
        tcase_add_test(tc, test_spare_ahead);
        tcase_add_test(tc, test_job_signals_default);
        tcase_add_test(tc, test_dept_remove_goes_on);
        suite_add_tcase(s, tc);
        return s;
}

/* Whether this host can run the tests at all: exits 77 when not, with the reason. */
static void check_usable(void) {
        char err[512];
        int r;

        if (geteuid() != 0) {
                printf("SKIP: needs root (cgroups, other users)\n");
                exit(SKIP);
        }
        r = cg_open(agent_name, &cg, err, sizeof(err));
        if (r == -EOPNOTSUPP || r == -EROFS || r == -EACCES || r == -EPERM) {
                printf("SKIP: no usable cgroups: %s\n", err);
                exit(SKIP);
        }
        if (r < 0) {
                fprintf(stderr, "cg_open: %s\n", err);
                exit(EXIT_FAILURE);
        }
        cleanup();
}

int main(int argc, char **argv) {
        SRunner *sr;
        int failed;

        /* Absolute: the jobs run in other directories. */
        if (argc != 2 || access(argv[1], X_OK) < 0 || !(stress = realpath(argv[1], NULL))) {
                fprintf(stderr, "usage: test_cgroup PATH-TO-colony-stress\n");
                return EXIT_FAILURE;
        }
        snprintf(agent_name, sizeof(agent_name), "test-%d", (int)getpid());
        log_open("test_cgroup", NULL, LOG_INFO);
        check_usable();
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/colony-test-XXXXXX");
        if (!mkdtemp(tmpdir) || chmod(tmpdir, 0777) < 0) {
                perror("scratch directory");
                return EXIT_FAILURE;
        }
        snprintf(tmpfile_path, sizeof(tmpfile_path), "%s/id.out", tmpdir);
        for (int i = 0; i < 2; i++)
                snprintf(gpu_path[i], sizeof(gpu_path[i]), "%s/gpu%d", tmpdir, i);
        sr = srunner_create(cgroup_suite());
        srunner_run_all(sr, CK_NORMAL);
        failed = srunner_ntests_failed(sr);
        srunner_free(sr);
        free(stress);
        /* Whatever a failed or timed-out test left behind. */
        if (cg_open(agent_name, &cg, (char[256]){ 0 }, 256) == 0)
                cleanup();
        (void)unlink(tmpfile_path);
        for (int i = 0; i < 2; i++)
                (void)unlink(gpu_path[i]);
        (void)rmdir(tmpdir);
        return failed ? EXIT_FAILURE : EXIT_SUCCESS;
}
