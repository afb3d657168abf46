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
 * A standby shepherd starts its next job's child ahead, in a spare cgroup (launch_job_ahead,
 * v1): the child moves itself in, then waits for its job, whose cgroup is the spare renamed;
 * until then it runs the standby's code, on its memory, the standby waiting in a read.
 *
 * Between the start and exec the child only makes async-signal-safe calls, the ids' changes as
 * raw system calls (glibc's wrappers may signal threads of ours in a child sharing our memory):
 * user and group lookups (NSS; the shepherd's made before the go, usergroups.h) and every
 * message are prepared before. */
#include "launch.h"
#include "log.h"
#include "schedslice.h"
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
        bool ahead;   /* started before its job (launch_job_ahead): it dies with its parent until in */
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

/* Report error and what failed ("step arg") on fd to the parent and end the child. */
static _Noreturn void child_report(int fd, int error, const char *step, const char *arg) {
        child_error e = { .error = error };

        append(e.what, sizeof(e.what), step);
        if (arg) {
                append(e.what, sizeof(e.what), " ");
                append(e.what, sizeof(e.what), arg);
        }
        (void)!write(fd, &e, sizeof(e));
        _exit(127);
}

/* Report step (and arg) with errno to the parent and end the child. */
static _Noreturn void child_fail(const child_plan *p, const char *step, const char *arg) {
        child_report(p->err_fd, errno, step, arg);
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

/* Every signal's disposition but SIGPIPE's to the default: ignored signals stay ignored across
 * exec. The child's signals are all blocked (spawn.h), so none is acted on before the exec. */
static void child_default_dispositions(void) {
        struct sigaction sa = { .sa_handler = SIG_DFL };

        for (int sig = 1; sig < NSIG; sig++)
                if (sig != SIGKILL && sig != SIGSTOP && sig != SIGPIPE)
                        (void)sigaction(sig, &sa, NULL);
}

/* The signals as a login gives them: dispositions default and nothing blocked (a child started
 * ahead had its dispositions but SIGPIPE's reset before it waited: ahead_entry). */
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
        (void)sigaction(SIGPIPE, &sa, NULL);
        if (!p->ahead)
                child_default_dispositions();
        /* the agent blocks some for sd-event */
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
        if ((p->nprocs > 0 || p->ahead) && prctl(PR_SET_PDEATHSIG, 0) < 0)
                child_fail(p, "prctl", "PR_SET_PDEATHSIG");
        if (setsid() < 0)
                child_fail(p, "setsid", NULL);
        /* The job schedules as any process does, not with the shepherd's short slice. Where
         * that cannot be asked (a seccomp filter, a policy not the fair one's), the agent could
         * not ask for its own either, and the job has the slice it would have had. */
        (void)sched_slice_set(0);
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

/* The child's report of n bytes in e: 0 when there is none (its exec succeeded: end of file
 * first), else -errno with err. */
static int child_error_outcome(child_error *e, size_t n, char *err, size_t errlen) {
        if (n == 0)
                return 0;
        if (n != sizeof(*e)) {
                snprintf(err, errlen, "read the child's report: short read");
                return -EIO;
        }
        e->what[sizeof(e->what) - 1] = 0;
        snprintf(err, errlen, "%s: %s", e->what, strerror(e->error));
        return e->error > 0 ? -e->error : -EIO;
}

/* Read the child's report: 0 when the exec succeeded (end of file), else -errno with err. */
static int read_child_error(int fd, char *err, size_t errlen) {
        child_error e;
        ssize_t n;

        do
                n = read(fd, &e, sizeof(e));
        while (n < 0 && errno == EINTR);
        if (n < 0) {
                snprintf(err, errlen, "read the child's report: %s", strerror(errno));
                return -errno;
        }
        return child_error_outcome(&e, (size_t)n, err, errlen);
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

/* The job's cgroup: the spare renamed, or (none, or *anew once it could not be) made. */
static int job_cgroup(const launch_req *req, bool *anew, char *err, size_t errlen) {
        int r;

        if (req->spare_cg && !*anew) {
                if ((r = cg_job_from_spare(req->cg, req->spare_cg, req->cg_job, req->lim, err, errlen)) != -EXDEV)
                        return r;
                *anew = true;
        }
        return cg_job_create(req->cg, req->cg_job, req->lim, err, errlen);
}

int launch_cgroup(const launch_req *req, char *err, size_t errlen) {
        bool anew = false;
        int r;

        /* Two tries per level at least: a prune can only undo a level made just before it. The
         * sync thread prunes a department whose last job ended while this shepherd finds its
         * cgroup there: a path under it is gone (ENOENT), or a file of the dying cgroup answers
         * ENODEV (v1 cpuset: its cpus read to fill the job's). Either way, make it again. */
        for (int tries = 0;; tries++) {
                r = req->dept ? cg_dept_prepare(req->cg, req->dept, req->dept_weights, req->ndept_weights, err, errlen)
                              : 0;
                if (r == 0)
                        r = job_cgroup(req, &anew, err, errlen);
                if ((r != -ENOENT && r != -ENODEV) || !req->dept || tries >= 8)
                        return r == 0 && anew ? 1 : r;
        }
}

/* The plan of req's child but its pipe and cgroup files: the user's groups (req's, else
 * looked up into *looked_up), a batch script's argv, the ids as text. Returns 0, or -errno with
 * err and nothing left to free. */
static int plan_init(const launch_req *req, child_plan *p, usergroups *looked_up, char *err, size_t errlen) {
        const job_spec *s = req->spec;
        const usergroups *groups = looked_up;
        int r;

        *p = (child_plan){ .spec = s,
                           .uid = req->uid,
                           .gid = req->gid,
                           .progress_fd = req->progress_fd,
                           .nofile = req->nofile,
                           .truncate_output = req->truncate_output,
                           .cg_job = req->cg_job,
                           .err_fd = -1,
                           .err_peer = -1 };
        if (!s || !s->argv || !s->argv[0]) {
                snprintf(err, errlen, "no program to start");
                return -EINVAL;
        }
        if (req->groups)
                groups = req->groups;
        else if ((r = usergroups_lookup(req->uid, req->gid, looked_up)) < 0) {
                snprintf(err, errlen, "groups of uid %u: %s", (unsigned)req->uid, strerror(-r));
                return r;
        }
        p->groups = groups->list;
        p->ngroups = groups->n;
        if (s->script && script_sh_argv(s, &p->sh_argv) < 0) {
                usergroups_free(looked_up);
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        snprintf(p->uid_text, sizeof(p->uid_text), "%u", (unsigned)req->uid);
        snprintf(p->gid_text, sizeof(p->gid_text), "%u", (unsigned)req->gid);
        return 0;
}

static void plan_free(child_plan *p, usergroups *looked_up) {
        usergroups_free(looked_up);
        free(p->sh_argv);
        p->sh_argv = NULL;
}

/* The error pipe into p: the child's end and ours. Returns 0, or -errno with err. */
static int plan_pipe(child_plan *p, char *err, size_t errlen) {
        int ep[2];

        if (pipe2(ep, O_CLOEXEC) < 0) {
                snprintf(err, errlen, "pipe: %s", strerror(errno));
                return -errno;
        }
        p->err_fd = ep[1];
        p->err_peer = ep[0];
        return 0;
}

/* After the child's start (pid, or -errno): its end of the error pipe closed, its report read
 * (0: it exec'd, and *pid is set), ours closed; a child that failed is reaped. */
static int plan_outcome(child_plan *p, pid_t child, pid_t *pid, char *err, size_t errlen) {
        int r;

        close(p->err_fd);
        r = child < 0 ? child : read_child_error(p->err_peer, err, errlen);
        if (r == 0)
                *pid = child;
        else if (child > 0)
                reap(child);
        close(p->err_peer);
        return r;
}

int launch_job(const launch_req *req, pid_t *pid, char *err, size_t errlen) {
        usergroups looked_up = { 0 };
        child_plan p;
        int r = plan_init(req, &p, &looked_up, err, errlen);

        if (r < 0)
                return r;
        if ((r = plan_pipe(&p, err, errlen)) == 0) {
                p.parent = getpid();
                r = plan_outcome(&p, start_child(req, &p, err, errlen), pid, err, errlen);
        }
        plan_free(&p, &looked_up);
        return r;
}

/* What launch_job_ahead's child and its parent share (the child runs on our memory). */
typedef struct ahead_child {
        launch_ahead *a;
        child_plan plan;
        usergroups looked_up;
        bool ran; /* wait gave it a job */
} ahead_child;

static int ahead_entry(void *arg) {
        ahead_child *c = arg;
        launch_ahead *a = c->a;
        const launch_req *req;
        char what[sizeof(((child_error *)0)->what)];
        int err_fd = c->plan.err_fd, err_peer = c->plan.err_peer, r;

        /* Out of the kill of any job's cgroup until its job's is this one: it dies with the
         * shepherd, which a stalled launch's kill ends too. Cleared once in (child_run). */
        if (prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != c->plan.parent)
                _exit(1);
        for (int i = 0; i < a->nprocs; i++)
                if (write(a->procs_fds[i], "0", 1) != 1)
                        _exit(1);
        a->entered = true;
        /* 61 system calls off the job's launch (0.12 ms on a PVM guest) */
        child_default_dispositions();
        if (!(req = a->wait(a->arg)))
                _exit(0);
        c->ran = true;
        if ((r = plan_init(req, &c->plan, &c->looked_up, what, sizeof(what))) < 0)
                child_report(err_fd, -r, what, NULL);
        c->plan.err_fd = err_fd; /* plan_init's fresh plan has none */
        c->plan.err_peer = err_peer;
        c->plan.ahead = true;
        c->plan.parent = getppid();
        if (a->move &&
            (c->plan.nprocs = cg_job_procs_open(req->cg, req->cg_job, c->plan.procs_fds, what, sizeof(what))) < 0)
                child_report(err_fd, -c->plan.nprocs, what, NULL);
        child_run(&c->plan);
}

/* The child waits for its job on this stack, and makes the job's cgroup there (PATH_MAX buffers
 * a call). */
#define AHEAD_CHILD_STACK (256 * 1024)

int launch_job_ahead(launch_ahead *a, pid_t *pid, char *err, size_t errlen) {
        ahead_child c = { .a = a };
        child_error e;
        size_t n = 0;
        pid_t child;
        int r = plan_pipe(&c.plan, err, errlen), err_peer;

        if (r < 0)
                return r;
        c.plan.parent = getpid();
        a->entered = a->move = false;
        err_peer = c.plan.err_peer; /* the child rewrites c.plan as we wait */
        child = spawn_sharing_memory_waiting(AHEAD_CHILD_STACK, ahead_entry, &c, c.plan.err_fd, err_peer, &e, sizeof(e),
                                             &n, &a->stack);
        if (child < 0) {
                r = -errno;
                snprintf(err, errlen, "start a process ahead of its job: %s", strerror(errno));
        } else
                r = child_error_outcome(&e, n, err, errlen);
        close(err_peer);
        /* The child's descriptors (its cgroup files) were its own, closed at its exec; what it
         * allocated is ours to free. */
        plan_free(&c.plan, &c.looked_up);
        if (child > 0 && (r < 0 || !c.ran))
                reap(child);
        if (r < 0 || !c.ran) /* no launch to tell of first */
                launch_ahead_release(a);
        if (r == 0 && !c.ran) /* without a job the child said nothing and ended */
                return 1;
        if (r == 0)
                *pid = child;
        return r;
}

void launch_ahead_release(launch_ahead *a) {
        if (a && a->stack) {
                munmap(a->stack, AHEAD_CHILD_STACK);
                a->stack = NULL;
        }
}
