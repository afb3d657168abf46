/* shepherd.c - fork a job's shepherd and run it (see shepherd.h).
 *
 * The agent's sync threads (jobsync.c) make system calls alone and hold no lock a
 * child could need, so the forked shepherd may allocate and format freely; it still never logs, since the log's sink
 * (stderr, the journal socket) is one of the descriptors it closes (shepherd_setup points the cgroup code's few
 * warnings at /dev/null). What it has to say goes to the agent over the report pipe, or into the exit file. */
#include "shepherd.h"
#include "clock.h"
#include "fileio.h"
#include "jobdir.h"
#include "jobfile.h"
#include "launchpack.h"
#include "log.h"
#include "proto.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/uio.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#define POLL_MS 5

/* A standby's first byte on its report pipe: it waits for its request now. The agent reads it
 * before it hands a request (shepherd_request), and the launch's records come after. */
static const char standby_ready = 'r';

/* Exit statuses of a shepherd, for the agent's log when one ends early. */
enum { SHEPHERD_OK, SHEPHERD_SETUP_FAILED, SHEPHERD_LAUNCH_FAILED, SHEPHERD_WRITE_FAILED };

/* A shepherd's ends of its three pipes: the agent's requests and go, its report to the agent
 * (a standby's byte, the launch's outcome), and the steps the launch begins. */
typedef struct shepherd_fds {
        int go, report, steps;
} shepherd_fds;

static int compare_fds(const void *a, const void *b) { return *(const int *)a - *(const int *)b; }

/* Close every descriptor from 3 up but fds's (each >= 3). */
static int close_all_but(const shepherd_fds *fds) {
        int keep[] = { fds->go, fds->report, fds->steps };
        unsigned from = 3;

        qsort(keep, sizeof(keep) / sizeof(keep[0]), sizeof(keep[0]), compare_fds);
        for (size_t i = 0; i < sizeof(keep) / sizeof(keep[0]); i++) {
                if ((unsigned)keep[i] > from && close_range(from, (unsigned)keep[i] - 1, 0) < 0)
                        return -errno;
                from = (unsigned)keep[i] + 1;
        }
        return close_range(from, ~0U, 0) < 0 ? -errno : 0;
}

/* Descriptors, session, reaping and signals of a shepherd; fds are moved above 2 first, in
 * case the agent was started with a standard descriptor closed. */
static int shepherd_setup(const char *name, shepherd_fds *fds) {
        int null;

        /* The name first, before the agent's descriptors close: among them is its lock on the
         * subtree (cg_lock_subtree), which a next agent waits for when this one died an instant
         * after the fork. Once it has the lock it must find this launch named as one, or it
         * takes it for finished and gives it no deadline (stall.sh saw a job hang so). */
        if (prctl(PR_SET_NAME, name) < 0)
                return -errno;
        if ((fds->go = fcntl(fds->go, F_DUPFD_CLOEXEC, 3)) < 0 ||
            (fds->report = fcntl(fds->report, F_DUPFD_CLOEXEC, 3)) < 0 ||
            (fds->steps = fcntl(fds->steps, F_DUPFD_CLOEXEC, 3)) < 0)
                return -errno;
        if (close_all_but(fds) < 0)
                return -errno;
        /* Not the agent's terminal or log pipe: they would stay open for the job's whole life. */
        if ((null = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
                return -errno;
        for (int fd = 0; fd < 3; fd++)
                if (dup2(null, fd) < 0)
                        return -errno;
        if (null > 2)
                close(null);
        /* The journal's socket is closed: what the cgroup code warns of goes to /dev/null. */
        log_open(SHEPHERD_NAME, NULL, LOG_WARNING);
        /* A report to an agent killed meanwhile must fail with EPIPE, not kill us. */
        if (signal(SIGPIPE, SIG_IGN) == SIG_ERR || setsid() < 0 || prctl(PR_SET_CHILD_SUBREAPER, 1) < 0)
                return -errno;
        return 0;
}

/* Reap until the job's main process is among the reaped (its orphans come by too). */
static int wait_main(pid_t job, int *status) {
        for (;;) {
                pid_t p = waitpid(-1, status, 0);

                if (p == job)
                        return 0;
                if (p < 0 && errno != EINTR)
                        return -errno;
        }
}

static int write_exit(const char *dir, uint64_t id, int status) {
        jobfile_exit e = { .end_usec = clock_real_usec() };
        char *text;
        int r;

        if (WIFEXITED(status))
                e.exit_code = WEXITSTATUS(status);
        else
                e.signal = WTERMSIG(status);
        if (!(text = jobfile_exit_format(&e)))
                return -ENOMEM;
        r = jobdir_replace(dir, id, JOBFILE_EXIT, text);
        free(text);
        return r;
}

/* Make the job's cgroup, off the agent's loop: a mkdir in cgroupfs took 341 ms on a loaded host
 * (perf trace). The step is told first, so that a launch stalled in it is named. */
static int make_cgroup(const launch_req *req, int steps, char *err, size_t errlen) {
        launch_tell_step(steps, "make cgroup", req->cg_job);
        return launch_cgroup(req, err, errlen);
}

/* The job user's groups into *groups: those looked up ahead while they are current, else
 * looked up now, the step told first (a name service that does not answer is named). On
 * failure *groups is left empty, and launch_job tries again and says why. */
static void job_groups(const launch_req *req, int steps, usergroups *groups) {
        char uid[16];

        if (usergroups_current(groups, req->uid, req->gid, clock_mono_ms()))
                return;
        usergroups_free(groups);
        snprintf(uid, sizeof(uid), "%u", (unsigned)req->uid);
        launch_tell_step(steps, "look up the groups of uid", uid);
        (void)usergroups_lookup(req->uid, req->gid, groups);
}

/* The launch up to its child's start: the job's cgroup (*cgroup: launch_cgroup's outcome) and
 * the user's groups, made before the go, while the agent writes the job's record: nothing runs
 * in the cgroup until then, and the two took turns on the launch's path (0.2 to 0.3 ms each,
 * strace). A change to the group database made before the launch came is seen: the groups
 * are those of the launch's request, or newer. Then the go. Returns whether it came; rep->error
 * says what failed. */
static bool shepherd_prepare(launch_req *lr, usergroups *groups, const shepherd_fds *fds, launch_progress *rep,
                             int *cgroup) {
        ssize_t n;
        char c;

        *cgroup = make_cgroup(lr, fds->steps, rep->what, sizeof(rep->what));
        rep->error = *cgroup < 0 ? -*cgroup : 0;
        rep->foreign_cgroup = rep->error == EEXIST;
        if (!rep->error) {
                job_groups(lr, fds->steps, groups);
                lr->groups = groups->list ? groups : NULL;
        }
        do
                n = read(fds->go, &c, 1);
        while (n < 0 && errno == EINTR);
        return n == 1;
}

/* The launch over (rep: its outcome): tell the agent, release what a launch ahead left (or
 * NULL), remove cgroup unused (a spare the job did not take, or NULL) of cg, then see the job to
 * its end. */
static _Noreturn void shepherd_finish(launch_progress *rep, uint64_t id, const char *dir, uint64_t spare,
                                      const shepherd_fds *fds, launch_ahead *ahead, cg_backend *cg,
                                      const char *unused) {
        int status = 0;

        (void)!write(fds->report, rep, sizeof(*rep));
        launch_ahead_release(ahead);
        close(fds->report);
        close(fds->steps);
        (void)prctl(PR_SET_NAME, SHEPHERD_NAME); /* the launch is over: see SHEPHERD_LAUNCH_NAME */
        if (unused)
                (void)cg_job_remove(cg, unused);
        /* After the go, when the record is on disk: the tmp exit file goes with the job's files
         * (jobdir_list), failed launch or not. A spare gone meanwhile: write_exit makes one. */
        if (spare)
                (void)jobdir_take_spare(dir, spare, id, JOBFILE_EXIT);
        if (rep->error)
                _exit(SHEPHERD_LAUNCH_FAILED);
        if (wait_main(rep->pid, &status) < 0 || write_exit(dir, id, status) < 0)
                _exit(SHEPHERD_WRITE_FAILED);
        _exit(SHEPHERD_OK);
}

/* Launch the job as req says, its shepherd set up already, and see it to its end. groups: the
 * user's looked up ahead (a standby's), or empty. */
static _Noreturn void shepherd_run(const launch_req *req, usergroups *groups, uint64_t id, const char *dir,
                                   uint64_t spare, const shepherd_fds *fds) {
        launch_progress rep = { .done = 1 };
        launch_req lr = *req;
        int cgroup;

        if (!shepherd_prepare(&lr, groups, fds, &rep, &cgroup)) { /* the agent gave up on this job */
                if (!rep.error)
                        (void)cg_job_remove(lr.cg, lr.cg_job); /* what it never learnt of goes */
                _exit(SHEPHERD_OK);
        }
        lr.progress_fd = fds->steps;
        if (!rep.error)
                rep.error = -launch_job(&lr, &rep.pid, rep.what, sizeof(rep.what));
        shepherd_finish(&rep, id, dir, spare, fds, NULL, NULL, NULL);
}

/* A job's request from the go pipe (launchpack.h), its length first, into *buf and u. */
static int read_request(int fd, char **buf, launch_unpacked *u) {
        uint32_t len;

        if (proto_read_exact(fd, &len, sizeof(len)) < 0)
                return -EPIPE;
        if (!(*buf = malloc(len ? len : 1)) || proto_read_exact(fd, *buf, len) < 0 || launch_unpack(*buf, len, u) < 0)
                return -EBADMSG;
        return 0;
}

/* A standby's launch ahead (launch.h): what its child, which runs on our memory, leaves us. */
typedef struct standby_ahead {
        launch_ahead la;
        cg_backend *cg;
        const shepherd_fds *fds;
        usergroups *groups;
        char spare_cg[JOBFILE_CGROUP_MAX];
        char *buf;
        launch_unpacked u;
        launch_req lr;
        launch_progress rep;
        int request; /* read_request's outcome; 1 before one */
        bool go;
        int cgroup; /* shepherd_prepare's: 0 the spare renamed the job's, 1 the job's made anew */
} standby_ahead;

/* launch_ahead's wait, in the child: as a standby without a child waits and prepares. */
static const launch_req *ahead_wait(void *arg) {
        standby_ahead *st = arg;

        if ((st->request = read_request(st->fds->go, &st->buf, &st->u)) < 0)
                return NULL;
        (void)prctl(PR_SET_NAME, SHEPHERD_LAUNCH_NAME);
        st->u.req.cg = st->cg;
        st->u.req.spare_cg = st->spare_cg;
        st->lr = st->u.req;
        st->go = shepherd_prepare(&st->lr, st->groups, st->fds, &st->rep, &st->cgroup);
        st->la.move = st->cgroup == 1;
        if (!st->go || st->rep.error)
                return NULL;
        st->lr.progress_fd = st->fds->steps;
        return &st->lr;
}

/* A standby whose job's process starts ahead (launch_job_ahead), in a spare cgroup beside the
 * last job's (its department's, which the next job most likely shares): that job's launch then
 * renames the spare instead of making seven cgroups and moving into them (v1; 0.3 and 0.15 ms
 * of a launch, launch_floor). Returns only when the spare could not be made or entered, with
 * nothing left of it; the caller then waits as a standby without one. */
static void standby_ahead_run(cg_backend *cg, const char *dir, const shepherd_user *last, const shepherd_fds *fds,
                              usergroups *groups) {
        standby_ahead st = { .cg = cg, .fds = fds, .groups = groups, .rep = { .done = 1 }, .request = 1 };
        int procs[CG_MAX_HIERARCHIES], n, r;
        char err[256];

        if (shepherd_spare_cgroup(last, getpid(), st.spare_cg, sizeof(st.spare_cg)) < 0 ||
            cg_spare_create(cg, st.spare_cg, err, sizeof(err)) < 0)
                return;
        if ((n = cg_job_procs_open(cg, st.spare_cg, procs, err, sizeof(err))) < 0) {
                (void)cg_job_remove(cg, st.spare_cg);
                return;
        }
        st.la = (launch_ahead){ .procs_fds = procs, .nprocs = n, .wait = ahead_wait, .arg = &st };
        r = launch_job_ahead(&st.la, &st.rep.pid, st.rep.what, sizeof(st.rep.what));
        while (n > 0)
                close(procs[--n]);
        if (r == 1 && !st.go) { /* no launch, nor a child in the spare (if ever it got in) */
                (void)cg_job_remove(cg, st.spare_cg);
                if (!st.la.entered)
                        return; /* the caller waits as a standby without a spare */
                /* the agent gone, or it gave up on the job */
                if (st.request == 0 && !st.rep.error)
                        (void)cg_job_remove(cg, st.lr.cg_job);
                _exit(st.request == -EBADMSG ? SHEPHERD_SETUP_FAILED : SHEPHERD_OK);
        }
        if (r == 1 && !st.rep.foreign_cgroup) /* the cgroup failed after the rename */
                (void)cg_job_remove(cg, st.lr.cg_job);
        if (r < 0)
                st.rep.error = -r;
        /* The spare, unless it is the job's now, goes once the agent is told. */
        shepherd_finish(&st.rep, st.u.id, dir, st.u.exit_spare, fds, &st.la, cg,
                        r == 0 && st.cgroup == 0 ? NULL : st.spare_cg);
}

/* A standby: wait for a job's request on the go pipe (launchpack.h), then run it. End of
 * file first (the agent stopped, or gave up on us) ends it quietly. Meanwhile it looks up the
 * groups of last, the user of the job before, which the next job's launch takes while they are
 * current (usergroups.h), and starts the job's process ahead where it can (standby_ahead_run). */
static _Noreturn void standby_main(cg_backend *cg, const char *dir, const shepherd_user *last, shepherd_fds fds) {
        usergroups ahead = { 0 };
        launch_unpacked u;
        char *buf;
        int r;

        if (shepherd_setup(SHEPHERD_STANDBY_NAME, &fds) < 0)
                _exit(SHEPHERD_SETUP_FAILED);
        if (last->known)
                (void)usergroups_lookup(last->uid, last->gid, &ahead); /* else the launch looks up */
        /* Ready before the spare: a request that comes while it is made waits in the pipe, where
         * a standby not ready yet had the loop fork a shepherd (96 launches of a drain of 500). */
        if (write(fds.report, &standby_ready, 1) != 1)
                _exit(SHEPHERD_OK); /* the agent is gone */
        standby_ahead_run(cg, dir, last, &fds, &ahead);
        if ((r = read_request(fds.go, &buf, &u)) < 0)
                _exit(r == -EPIPE ? SHEPHERD_OK : SHEPHERD_SETUP_FAILED);
        (void)prctl(PR_SET_NAME, SHEPHERD_LAUNCH_NAME);
        u.req.cg = cg;
        shepherd_run(&u.req, &ahead, u.id, dir, u.exit_spare, &fds);
}

static void reap(pid_t pid) {
        while (waitpid(pid, NULL, 0) < 0 && errno == EINTR)
                ;
}

static void close_pipes(shepherd *sh) {
        int *fds[] = { &sh->go_fd, &sh->go_peer, &sh->report_fd, &sh->steps_fd };

        for (size_t i = 0; i < sizeof(fds) / sizeof(fds[0]); i++)
                if (*fds[i] >= 0) {
                        close(*fds[i]);
                        *fds[i] = -1;
                }
}

/* What the fork server's child is to be: the first byte of its message, the rest a standby's
 * last user, or a launch's request packed (launchpack.h). */
enum { SERVED_STANDBY = 's', SERVED_LAUNCH = 'l' };

/* A forked shepherd's life: without req a standby for a job of last's, else req's shepherd
 * (id, spare as for shepherd_spawn), on its pipes' ends fds. */
static _Noreturn void shepherd_child(const shepherd_forker *s, const launch_req *req, uint64_t id, uint64_t spare,
                                     const shepherd_user *last, shepherd_fds fds) {
        usergroups none = { 0 };

        if (!req)
                standby_main(s->cg, s->state_dir, last, fds);
        if (shepherd_setup(SHEPHERD_LAUNCH_NAME, &fds) < 0)
                _exit(SHEPHERD_SETUP_FAILED);
        shepherd_run(req, &none, id, s->state_dir, spare, &fds);
}

/* A shepherd forked by the fork server (forkserver_child_fn): ctx is the agent's
 * shepherd_forker as the server has it, fds the ends of its pipes. */
static void served_child(void *ctx, const void *msg, size_t len, const int *fds, size_t nfds) {
        const shepherd_forker *s = ctx;
        const char *m = msg;
        shepherd_fds f = { .go = fds[0], .report = fds[1], .steps = fds[2] };
        launch_unpacked u;

        if (nfds != 3)
                _exit(SHEPHERD_SETUP_FAILED);
        if (m[0] == SERVED_STANDBY && len == 1 + sizeof(shepherd_user)) {
                shepherd_user last;

                memcpy(&last, m + 1, sizeof(last));
                shepherd_child(s, NULL, 0, 0, &last, f);
        }
        if (m[0] != SERVED_LAUNCH || launch_unpack(m + 1, len - 1, &u) < 0)
                _exit(SHEPHERD_SETUP_FAILED);
        u.req.cg = s->cg;
        shepherd_child(s, &u.req, u.id, u.exit_spare, NULL, f);
}

/* Have the fork server fork a shepherd: one that runs req (id, spare), or without req a
 * standby for a job of last's. Returns 0 with sh->pid, or -errno with err (-EMSGSIZE: req too
 * long for the server, -EPIPE: it has gone). */
static int fork_served(shepherd_forker *s, const launch_req *req, uint64_t id, uint64_t spare,
                       const shepherd_user *last, const int child_fds[3], shepherd *sh, char *err, size_t errlen) {
        char tag = req ? SERVED_LAUNCH : SERVED_STANDBY, *packed = NULL;
        struct iovec iov[] = { { .iov_base = &tag, .iov_len = 1 },
                               { .iov_base = (void *)last, .iov_len = sizeof(*last) } };
        int r = 0;

        if (req && (r = launch_pack(req, id, spare, &packed, &iov[1].iov_len)) < 0) {
                snprintf(err, errlen, "pack the launch request: %s", strerror(-r));
                return r;
        }
        if (req)
                iov[1].iov_base = packed;
        r = forkserver_fork(&s->server, req ? SHEPHERD_LAUNCH_NAME : SHEPHERD_STANDBY_NAME, iov, 2, child_fds, 3,
                            &sh->pid, err, errlen);
        free(packed);
        return r;
}

/* Fork a shepherd as fork_served does, from the agent itself. */
static int fork_own(shepherd_forker *s, const launch_req *req, uint64_t id, uint64_t spare, const shepherd_user *last,
                    const int child_fds[3], shepherd *sh, char *err, size_t errlen) {
        if ((sh->pid = fork()) == 0)
                shepherd_child(s, req, id, spare, last,
                               (shepherd_fds){ .go = child_fds[0], .report = child_fds[1], .steps = child_fds[2] });
        int e = errno;

        if (sh->pid > 0)
                return 0;
        snprintf(err, errlen, "fork: %s", strerror(e));
        return -e;
}

/* Fork a shepherd: one that runs req, or without req a standby that waits for one; through
 * forker's server where one runs and takes the request, else from the agent. */
static int fork_shepherd(const launch_req *req, uint64_t id, uint64_t spare, shepherd_forker *forker,
                         const shepherd_user *last, shepherd *sh, char *err, size_t errlen) {
        int go[2] = { -1, -1 }, rep[2] = { -1, -1 }, steps[2] = { -1, -1 }, cap = 0, r = 0;

        /* The agent's ends never wait: the go's takes a whole request (its capacity, read once,
         * says whether it can), the report's is read as the loop hears of it. The steps' pipe
         * does not wait at either end: a step told to a full pipe is dropped (a launch tells a
         * handful), and the agent reads them only should it need them (a launch's deadline). */
        if (pipe2(go, O_CLOEXEC) < 0 || pipe2(rep, O_CLOEXEC) < 0 || pipe2(steps, O_CLOEXEC | O_NONBLOCK) < 0 ||
            fcntl(go[1], F_SETFL, O_NONBLOCK) < 0 || fcntl(rep[0], F_SETFL, O_NONBLOCK) < 0 ||
            (cap = fcntl(go[1], F_GETPIPE_SZ)) < 0)
                r = -errno;
        *sh = (shepherd){ .go_fd = go[1], .go_peer = go[0], .report_fd = rep[0], .steps_fd = steps[0], .go_cap = cap };
        if (r < 0) {
                snprintf(err, errlen, "pipe: %s", strerror(-r));
                if (rep[1] >= 0)
                        close(rep[1]);
                if (steps[1] >= 0)
                        close(steps[1]);
                close_pipes(sh);
                return r;
        }
        int child_fds[] = { go[0], rep[1], steps[1] };
        pid_t server = forker->server.pid;

        if (server > 0 && (r = fork_served(forker, req, id, spare, last, child_fds, sh, err, errlen)) == -EPIPE)
                forker->lost = server;
        if (forker->server.pid <= 0 || r == -EMSGSIZE)
                r = fork_own(forker, req, id, spare, last, child_fds, sh, err, errlen);
        close(rep[1]);
        close(steps[1]);
        if (r == 0 && (r = shepherd_proc_start(sh->pid, &sh->start)) < 0) {
                snprintf(err, errlen, "read /proc/%d/stat of the shepherd: %s", (int)sh->pid, strerror(-r));
                shepherd_abort(sh);
        }
        if (r < 0)
                close_pipes(sh);
        return r;
}

int shepherd_spawn(shepherd_forker *s, const launch_req *req, uint64_t id, uint64_t spare, shepherd *sh, char *err,
                   size_t errlen) {
        return fork_shepherd(req, id, spare, s, NULL, sh, err, errlen);
}

int shepherd_forker_start(shepherd_forker *s, char *err, size_t errlen) {
        return forkserver_start(&s->server, SHEPHERD_FORKER_NAME, served_child, s, err, errlen);
}

void shepherd_forker_stop(shepherd_forker *s) { forkserver_stop(&s->server); }

int shepherd_spawn_standby(shepherd_forker *s, const shepherd_user *last, shepherd *sh, char *err, size_t errlen) {
        char ignored[128];

        if (s->lost) { /* off a launch's path: the fork of another server costs no launch */
                (void)shepherd_forker_start(s, ignored, sizeof(ignored));
                s->lost = 0;
        }
        return fork_shepherd(NULL, 0, 0, s, last, sh, err, errlen);
}

int shepherd_spare_cgroup(const shepherd_user *last, pid_t pid, char *buf, size_t len) {
        return cg_spare_name(last->known ? last->cgroup : "job-0", pid, buf, len);
}

int shepherd_request(shepherd *sh, const launch_req *req, uint64_t id, uint64_t spare, char **msg, size_t *len) {
        int r;
        char c;

        /* Its report pipe says both whether it waits and whether it lives: its byte once, then
         * nothing while it lives, end of file once it has gone (killed meanwhile, its pipe would
         * take the request all the same). No read of /proc/PID/stat: five system calls fewer
         * on the launch's path; the standby is our child, unreaped, so its pid is its own. */
        for (;;) {
                ssize_t n = read(sh->report_fd, &c, 1);

                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0 && errno == EAGAIN && sh->ready)
                        break;
                if (n < 0)
                        return errno == EAGAIN ? -EBUSY : -errno;
                if (n == 0 || sh->ready || c != standby_ready)
                        return -ESRCH;
                sh->ready = true;
        }
        /* The pipe is empty and must take the whole request at once, its length and the go's
         * byte after it: the loop never waits for a standby to read (64 KiB: a long script
         * with a large environment does not fit). */
        if ((r = launch_pack(req, id, spare, msg, len)) < 0)
                return r;
        if (sizeof(uint32_t) + *len + 1 > (size_t)sh->go_cap) {
                free(*msg);
                *msg = NULL;
                return -EMSGSIZE;
        }
        return 0;
}

int shepherd_hand(shepherd *sh, char *msg, size_t len, char *err, size_t errlen) {
        uint32_t len32 = (uint32_t)len;
        struct iovec iov[] = { { .iov_base = &len32, .iov_len = sizeof(len32) }, { .iov_base = msg, .iov_len = len } };
        ssize_t n = writev(sh->go_fd, iov, 2);
        int r = n < 0 ? -errno : (size_t)n < sizeof(len32) + len ? -EMSGSIZE : 0;

        free(msg);
        if (r < 0) {
                snprintf(err, errlen, "hand its job to standby shepherd %d: %s", (int)sh->pid, strerror(-r));
                shepherd_abort(sh); /* a torn request ends it */
        }
        return r;
}

int shepherd_go(shepherd *sh, char *err, size_t errlen) {
        int r = 0;

        /* go_peer is still open here, so a dead shepherd cannot make this write raise SIGPIPE. */
        if (write(sh->go_fd, "g", 1) != 1) {
                r = -errno;
                snprintf(err, errlen, "start shepherd %d: %s", (int)sh->pid, strerror(errno));
        }
        close(sh->go_fd);
        close(sh->go_peer);
        sh->go_fd = sh->go_peer = -1;
        if (r < 0)
                reap(sh->pid);
        return r;
}

int shepherd_read_progress(int fd, launch_progress *m) {
        ssize_t n;

        do
                n = read(fd, m, sizeof(*m));
        while (n < 0 && errno == EINTR);
        if (n < 0)
                return -errno;
        if (n == 0)
                return 0;
        if (n != (ssize_t)sizeof(*m))
                return -EIO;
        m->what[sizeof(m->what) - 1] = 0;
        return 1;
}

void shepherd_abort(shepherd *sh) {
        close_pipes(sh); /* end of file on the go pipe: the shepherd exits */
        reap(sh->pid);
}

int shepherd_proc_start(pid_t pid, uint64_t *start) {
        char path[32], *text = NULL, state;
        int r;

        snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
        r = file_read_small(path, 0, &text);
        if (r == -ENOENT)
                return -ESRCH;
        if (r == 0)
                r = jobfile_stat_parse(text, &state, start);
        free(text);
        if (r == 0 && (state == 'Z' || state == 'X'))
                r = -ESRCH;
        return r;
}

bool shepherd_alive(pid_t pid, uint64_t start) {
        uint64_t now;

        return shepherd_proc_start(pid, &now) == 0 && now == start;
}

int shepherd_wait_gone(pid_t pid, uint64_t start, bool our_child, int timeout_ms) {
        int64_t deadline = clock_mono_usec() + (int64_t)timeout_ms * 1000;

        while (shepherd_alive(pid, start)) {
                if (clock_mono_usec() >= deadline)
                        return -ETIMEDOUT;
                nanosleep(&(struct timespec){ .tv_nsec = POLL_MS * 1000000 }, NULL);
        }
        if (our_child)
                (void)waitpid(pid, NULL, WNOHANG);
        return 0;
}
