/* launch.c - make a job's cgroup, start the job's process in it, and exec it as its user.
 *
 * The child is in the job's cgroup before it does anything, still as root, so that nothing the
 * job does is ever accounted elsewhere. It is started as posix_spawn starts one, sharing our
 * memory with us suspended until its exec (spawn.h). On cgroup v2 the kernel starts it inside
 * its cgroup (clone3 with CLONE_INTO_CGROUP, no migration, as systemd and crun do). Elsewhere
 * (v1, or a kernel that refuses that) it moves itself in through descriptors opened for it (v1
 * each hierarchy's tasks: through cgroup.procs the move waited for an RCU grace period of the
 * kernel when none was under way, 10 ms measured; cgroup-v1.c says more). The close-on-exec "error" pipe
 * carries a failed step back to the parent; end of file on it means the exec succeeded.
 *
 * Sharing the memory is what a launch saves most on: a fork of the shepherd (itself a fork of
 * the agent: 110 mappings) copied its page tables, the job's exec tore them down again, and the
 * copy-on-write faults of both fell on every page either touched (perf record -a of 1,000
 * launches: 25% of the shepherds' samples in clone, page faults and exec's unmapping).
 *
 * Between the start and exec the child only makes async-signal-safe calls, the ids' changes as
 * raw system calls (glibc's wrappers may signal threads of ours in a child sharing our memory):
 * user and group lookups (NSS; the shepherd's made before the go, usergroups.h) and every
 * message are prepared before. */
#include "launch.h"
#include "log.h"
#include "spawn.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/keyctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* What the child sends when a step fails. */
typedef struct child_error {
        int error;      /* errno */
        char what[240]; /* "chdir /nope" */
} child_error;

/* Everything the child needs, computed before the fork. */
typedef struct child_plan {
        const job_spec *spec;
        uid_t uid;
        gid_t gid;
        const gid_t *groups;
        size_t ngroups;
        char uid_text[16], gid_text[16];
        int err_fd, err_peer;              /* the child's end of the error pipe, and the parent's */
        int procs_fds[CG_MAX_HIERARCHIES]; /* cgroup.procs to write "0" to: the child moves itself */
        int nprocs;
        const char *cg_job;
        pid_t parent; /* who starts the child */
        int progress_fd;
        struct rlimit nofile;
        bool truncate_output;
        char **sh_argv; /* a batch script without "#!": /bin/sh, its copy's /dev/fd path, argv[1..] */
} child_plan;

/* Append s to the string buf of size bytes, truncating. Async-signal-safe. */
static void append(char *buf, size_t size, const char *s) {
        size_t l = strlen(buf), n = strlen(s);

        if (n > size - 1 - l)
                n = size - 1 - l;
        memcpy(buf + l, s, n);
        buf[l + n] = 0;
}

void launch_tell_step(int fd, const char *step, const char *arg) {
        launch_progress m = { 0 };

        if (fd <= 0)
                return;
        append(m.what, sizeof(m.what), step);
        append(m.what, sizeof(m.what), " ");
        append(m.what, sizeof(m.what), arg);
        (void)!write(fd, &m, sizeof(m));
}

/* Report step (and arg) with errno to the parent and end the child. */
static _Noreturn void child_fail(const child_plan *p, const char *step, const char *arg) {
        child_error e = { .error = errno };

        append(e.what, sizeof(e.what), step);
        if (arg) {
                append(e.what, sizeof(e.what), " ");
                append(e.what, sizeof(e.what), arg);
        }
        (void)!write(p->err_fd, &e, sizeof(e));
        _exit(127);
}

/* Open path as the job's user and put it on fd. O_NONBLOCK only while opening: a FIFO
 * without a reader fails (ENXIO) instead of hanging the agent, which waits for our report. */
static void child_redirect(const child_plan *p, const char *path, int flags, int fd) {
        int o;

        launch_tell_step(p->progress_fd, "open", path);
        o = open(path, flags | O_CLOEXEC | O_NONBLOCK, 0644);

        if (o < 0)
                child_fail(p, "open", path);
        if (fcntl(o, F_SETFL, flags & O_APPEND) < 0)
                child_fail(p, "fcntl", path);
        if (o == fd) {
                if (fcntl(fd, F_SETFD, 0) < 0)
                        child_fail(p, "fcntl", path);
        } else {
                if (dup2(o, fd) < 0) /* dup2 clears close-on-exec on fd */
                        child_fail(p, "dup2", path);
                close(o);
        }
}

static void child_reset_signals(const child_plan *p) {
        struct sigaction sa = { .sa_handler = SIG_DFL };
        const struct timespec now = { 0 };
        sigset_t none, broken_pipe;

        /* A step told to an agent gone since raised SIGPIPE, which the mask spawn_sharing gave
         * us keeps pending though the shepherd ignores it (Linux never discards a blocked
         * signal): drop it as that SIG_IGN would have, before SIG_DFL could kill the job. */
        sigemptyset(&broken_pipe);
        sigaddset(&broken_pipe, SIGPIPE);
        while (sigtimedwait(&broken_pipe, NULL, &now) > 0)
                ;

        /* Ignored signals stay ignored across exec, and the agent blocks some for sd-event. */
        for (int sig = 1; sig < NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP)
                        (void)sigaction(sig, &sa, NULL);
        sigemptyset(&none);
        if (sigprocmask(SIG_SETMASK, &none, NULL) < 0)
                child_fail(p, "sigprocmask", NULL);
}

/* A fresh session keyring of the job's own, as pam_keyinit gives a login: the agent's one would
 * be shared by every job of every user. Joined after setuid, so that the job's user owns it; the
 * user keyring is linked in so that the user's keys are still found. A kernel without keys has
 * nothing to share (ENOSYS). */
static void child_new_keyring(const child_plan *p) {
        if (syscall(SYS_keyctl, KEYCTL_JOIN_SESSION_KEYRING, NULL) < 0) {
                if (errno == ENOSYS)
                        return;
                child_fail(p, "join a new session keyring", NULL);
        }
        if (syscall(SYS_keyctl, KEYCTL_LINK, KEY_SPEC_USER_KEYRING, KEY_SPEC_SESSION_KEYRING) < 0)
                child_fail(p, "link the user keyring", NULL);
}

/* "/dev/fd/<fd>" into buf (32 bytes). Async-signal-safe. */
static void fd_path(int fd, char buf[32]) {
        char digits[12];
        int n = 0;

        do
                digits[n++] = (char)('0' + fd % 10);
        while ((fd /= 10) > 0);
        memcpy(buf, "/dev/fd/", 8);
        for (int i = 0; i < n; i++)
                buf[8 + i] = digits[n - 1 - i];
        buf[8 + n] = 0;
}

/* Run the batch script's stored copy, not the file it came from (which may have changed or
 * gone since the submit): its text in a memfd left open across exec, run by the kernel's "#!"
 * handling (the interpreter gets /dev/fd/N and argv[1..]), or by /bin/sh without a "#!" line,
 * as sbatch does. Returns only after a failure, with errno set. */
static void child_exec_script(const child_plan *p, char *const env[]) {
        const char *text = p->spec->script;
        size_t len = strlen(text), done = 0;
        int fd = memfd_create("colony-script", 0);
        char path[32];

        if (fd < 0)
                child_fail(p, "memfd_create", p->spec->argv[0]);
        while (done < len) {
                ssize_t w = write(fd, text + done, len - done);
                if (w < 0 && errno != EINTR)
                        child_fail(p, "write the script of", p->spec->argv[0]);
                done += w > 0 ? (size_t)w : 0;
        }
        if (strncmp(text, "#!", 2) == 0) {
                execveat(fd, "", p->spec->argv, env, AT_EMPTY_PATH);
                return;
        }
        fd_path(fd, path);
        p->sh_argv[1] = path;
        execve(p->sh_argv[0], p->sh_argv, env);
}

static _Noreturn void child_run(const child_plan *p) {
        const job_spec *s = p->spec;
        char *const empty_env[] = { NULL };
        const char *out = s->stdout_path ? s->stdout_path : "/dev/null";
        /* without --error stderr shares stdout's open file, so both keep their order */
        const char *errp = s->stderr_path ? s->stderr_path : out;
        /* O_APPEND even when truncated: a process of the job that opens the file again
         * (/proc/self/fd/1, a log rotated by name) writes at its end, not over the rest. */
        const int wflags = O_WRONLY | O_CREAT | O_APPEND | (p->truncate_output ? O_TRUNC : 0);

        close(p->err_peer);
        /* Until it is in the job's cgroup it is out of reach of the agent's kill: it dies with
         * its parent (a stalled launch's shepherd is killed). Cleared once in: the job is the
         * cgroup's to end from then on, and a root job's setuid(0) would not clear it. */
        if (p->nprocs > 0 && (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != p->parent))
                _exit(127);
        for (int i = 0; i < p->nprocs; i++)
                if (write(p->procs_fds[i], "0", 1) != 1)
                        child_fail(p, "move into cgroup", p->cg_job);
        if (p->nprocs > 0 && prctl(PR_SET_PDEATHSIG, 0) < 0)
                child_fail(p, "prctl", "PR_SET_PDEATHSIG");
        if (setsid() < 0)
                child_fail(p, "setsid", NULL);
        if (syscall(SYS_setgroups, p->ngroups, p->groups) < 0)
                child_fail(p, "setgroups", NULL);
        if (syscall(SYS_setgid, p->gid) < 0)
                child_fail(p, "setgid", p->gid_text);
        if (syscall(SYS_setuid, p->uid) < 0)
                child_fail(p, "setuid", p->uid_text);
        child_new_keyring(p);
        umask((mode_t)s->umask); /* the submitter's, before the output files are made */
        launch_tell_step(p->progress_fd, "chdir", s->cwd ? s->cwd : "/");
        if (chdir(s->cwd ? s->cwd : "/") < 0)
                child_fail(p, "chdir", s->cwd ? s->cwd : "/");
        child_redirect(p, "/dev/null", O_RDONLY, STDIN_FILENO);
        child_redirect(p, out, wflags, STDOUT_FILENO);
        if (strcmp(out, errp) == 0) {
                if (dup2(STDOUT_FILENO, STDERR_FILENO) < 0)
                        child_fail(p, "dup2", errp);
        } else
                child_redirect(p, errp, wflags, STDERR_FILENO);
        /* The agent took the hard limit for its own descriptors; the job gets the soft limit
         * a login would give (select() breaks on descriptors past 1024). */
        if (p->nofile.rlim_max && setrlimit(RLIMIT_NOFILE, &p->nofile) < 0)
                child_fail(p, "setrlimit", "RLIMIT_NOFILE");
        /* Before the signals are reset: SIGPIPE stays ignored should the agent have gone. */
        launch_tell_step(p->progress_fd, "execve", s->argv[0]);
        child_reset_signals(p);
        /* Close-on-exec rather than close: the error pipe must stay open until execve. */
        if (close_range(3, ~0U, CLOSE_RANGE_CLOEXEC) < 0)
                child_fail(p, "close_range", NULL);
        if (s->script)
                child_exec_script(p, s->env ? s->env : empty_env);
        else
                execve(s->argv[0], s->argv, s->env ? s->env : empty_env);
        child_fail(p, "execve", s->argv[0]);
}

/* Read the child's report: 0 when the exec succeeded (end of file), else -errno with err. */
static int read_child_error(int fd, char *err, size_t errlen) {
        child_error e;
        ssize_t n;

        do
                n = read(fd, &e, sizeof(e));
        while (n < 0 && errno == EINTR);
        if (n == 0)
                return 0;
        if (n != (ssize_t)sizeof(e)) {
                snprintf(err, errlen, "read the child's report: %s", n < 0 ? strerror(errno) : "short read");
                return n < 0 ? -errno : -EIO;
        }
        e.what[sizeof(e.what) - 1] = 0;
        snprintf(err, errlen, "%s: %s", e.what, strerror(e.error));
        return e.error > 0 ? -e.error : -EIO;
}

static void reap(pid_t pid) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
}

/* The argv that runs a batch script without "#!": /bin/sh, a slot for its copy's path (the
 * child fills it), the script's arguments. Returns 0 or -ENOMEM. */
static int script_sh_argv(const job_spec *s, char ***out) {
        size_t n = 0;

        while (s->argv[n])
                n++;
        if (!(*out = calloc(n + 2, sizeof(char *))))
                return -ENOMEM;
        (*out)[0] = (char *)"/bin/sh";
        for (size_t i = 1; i < n; i++)
                (*out)[i + 1] = s->argv[i];
        return 0;
}

/* The stack of a child that shares our memory until its exec. child_run's frames take about
 * 2 KiB; the rest is for the libc calls it makes. */
#define SHARED_CHILD_STACK (64 * 1024)

static int child_entry(void *plan) { child_run(plan); }

/* Start the child in the job's cgroup: on v2 forked there, else with the cgroup.procs it
 * writes itself into. Returns the pid, or -errno with err. */
static pid_t start_child(const launch_req *req, child_plan *p, char *err, size_t errlen) {
        int cg_fd = cg_job_open(req->cg, req->cg_job), e = 0;
        pid_t pid = -1;

        if (cg_fd >= 0) {
                pid = spawn_sharing_memory(cg_fd, SHARED_CHILD_STACK, child_entry, p);
                e = pid < 0 ? errno : 0;
                close(cg_fd);
        }
        if (cg_fd < 0 || (pid < 0 && spawn_into_cgroup_refused(e))) {
                if ((p->nprocs = cg_job_procs_open(req->cg, req->cg_job, p->procs_fds, err, errlen)) < 0)
                        return p->nprocs;
                pid = spawn_sharing_memory(-1, SHARED_CHILD_STACK, child_entry, p);
                e = pid < 0 ? errno : 0;
                for (int i = 0; i < p->nprocs; i++)
                        close(p->procs_fds[i]);
        }
        if (pid < 0) {
                snprintf(err, errlen, "start a process in cgroup %s: %s", req->cg_job, strerror(e));
                return -e;
        }
        return pid;
}

int launch_cgroup(const launch_req *req, char *err, size_t errlen) {
        int r;

        /* Two tries per level at least: a prune can only undo a level made just before it. The
         * sync thread prunes a department whose last job ended while this shepherd finds its
         * cgroup there: a path under it is gone (ENOENT), or a file of the dying cgroup answers
         * ENODEV (v1 cpuset: its cpus read to fill the job's). Either way, make it again. */
        for (int tries = 0;; tries++) {
                r = req->dept ? cg_dept_prepare(req->cg, req->dept, req->dept_weights, req->ndept_weights, err, errlen)
                              : 0;
                if (r == 0)
                        r = cg_job_create(req->cg, req->cg_job, req->lim, err, errlen);
                if ((r != -ENOENT && r != -ENODEV) || !req->dept || tries >= 8)
                        return r;
        }
}

int launch_job(const launch_req *req, pid_t *pid, char *err, size_t errlen) {
        const job_spec *s = req->spec;
        child_plan p = { .spec = s,
                         .uid = req->uid,
                         .gid = req->gid,
                         .progress_fd = req->progress_fd,
                         .nofile = req->nofile,
                         .truncate_output = req->truncate_output };
        usergroups looked_up = { 0 };
        const usergroups *groups = &looked_up;
        int ep[2], r;
        pid_t child;

        if (!s || !s->argv || !s->argv[0]) {
                snprintf(err, errlen, "no program to start");
                return -EINVAL;
        }
        if (req->groups)
                groups = req->groups;
        else if ((r = usergroups_lookup(req->uid, req->gid, &looked_up)) < 0) {
                snprintf(err, errlen, "groups of uid %u: %s", (unsigned)req->uid, strerror(-r));
                return r;
        }
        p.groups = groups->list;
        p.ngroups = groups->n;
        if (s->script && (r = script_sh_argv(s, &p.sh_argv)) < 0) {
                usergroups_free(&looked_up);
                snprintf(err, errlen, "out of memory");
                return r;
        }
        snprintf(p.uid_text, sizeof(p.uid_text), "%u", (unsigned)req->uid);
        snprintf(p.gid_text, sizeof(p.gid_text), "%u", (unsigned)req->gid);
        if (pipe2(ep, O_CLOEXEC) < 0) {
                r = -errno;
                snprintf(err, errlen, "pipe: %s", strerror(errno));
                usergroups_free(&looked_up);
                free(p.sh_argv);
                return r;
        }
        p.err_fd = ep[1];
        p.err_peer = ep[0];
        p.cg_job = req->cg_job;
        p.parent = getpid();
        child = start_child(req, &p, err, errlen);
        close(ep[1]);
        r = child < 0 ? child : read_child_error(ep[0], err, errlen);
        if (r == 0)
                *pid = child;
        else if (child > 0)
                reap(child);
        close(ep[0]);
        usergroups_free(&looked_up);
        free(p.sh_argv);
        return r;
}
