/* jobstart.c - start a job without waiting in the loop (see jobstart.h). */
#include "jobstart.h"
#include "clock.h"
#include "timelimit.h"
#include "jobenv.h"
#include "cgkill.h"
#include "report.h"
#include "fileio.h"
#include "jobdir.h"
#include "jobsync.h"
#include "log.h"
#include "proto.h"
#include "shepherd.h"
#include "units.h"
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <unistd.h>

/* The monotonic time of the loop's turn, in microseconds. */
static uint64_t turn_usec(agent *a) {
        uint64_t t = 0;

        (void)sd_event_now(a->event, CLOCK_MONOTONIC, &t);
        return t;
}

/* The launch is over, one way or another: stop watching its pipe and its deadline, and have
 * the next standby forked (on_standby_fork). Not sooner: forked while the launch went on, it
 * held the loop when the launch's outcome came (docs/benchmarks.md, "a standby"). */
static void launch_over(agent_job *j) {
        j->starting = false;
        j->progress = sd_event_source_disable_unref(j->progress);
        if (j->steps_fd >= 0)
                close(j->steps_fd);
        j->steps_fd = -1;
        j->deadline = sd_event_source_disable_unref(j->deadline);
        (void)sd_event_source_set_enabled(j->agent->standby_fork, SD_EVENT_ONESHOT);
}

/* The shepherd's word on the launch: the job runs, or it could not start, and then the
 * shepherd exits and its end reports the failure. */
static void launch_outcome(agent_job *j, const launch_progress *m) {
        launch_over(j);
        agent_dept_weights_recheck(j);
        if (m->error) {
                j->cgroup_foreign = m->foreign_cgroup;
                snprintf(j->start_error, sizeof(j->start_error), "%s", m->what);
                log_warning(JOB_FMT ": cannot start: %s", JOB_ARGS(j), j->start_error);
                return;
        }
        j->pid = m->pid;
        j->exec_usec = clock_real_usec();
        (void)timelimit_arm(j); /* from the exec: the launch was colony's time */
        log_info(JOB_FMT ": started pid %d (shepherd %d), %.2f ms after its launch message", JOB_ARGS(j), (int)j->pid,
                 (int)j->shepherd, (double)(turn_usec(j->agent) - j->launch_msg_usec) / 1000);
        report_started(j);
        /* A cancel's kill while the shepherd made the cgroup found none, or an empty one. */
        if (j->cancelled && (!j->grace || sd_event_source_get_enabled(j->grace, NULL) == 0))
                agent_job_kill(j);
}

/* The launch's report pipe: its outcome. */
static int on_progress(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        agent_job *j = userdata;
        launch_progress m;
        int r = 0;
        (void)s;
        (void)revents;

        while (j->starting && (r = shepherd_read_progress(fd, &m)) > 0)
                if (m.done)
                        launch_outcome(j, &m);
        /* End of file or a torn record: the shepherd's end tells the rest. */
        if (j->starting && r != -EAGAIN)
                (void)sd_event_source_set_enabled(j->progress, SD_EVENT_OFF);
        return 0;
}

/* Whether the job's launch is not over: the shepherd still makes its cgroup, or its process
 * has not exec'd yet; until then the shepherd bears SHEPHERD_LAUNCH_NAME (or, a standby that
 * has not read its request yet, SHEPHERD_STANDBY_NAME). For an adopted job, whose launch's
 * pipe went with the previous agent. */
static bool launch_unfinished(const agent_job *j) {
        char path[32], *comm = NULL;
        bool r;

        snprintf(path, sizeof(path), "/proc/%d/comm", (int)j->shepherd);
        r = file_read_small(path, 0, &comm) == 0 &&
            (strcmp(comm, SHEPHERD_LAUNCH_NAME) == 0 || strcmp(comm, SHEPHERD_STANDBY_NAME) == 0) &&
            shepherd_alive(j->shepherd, j->shepherd_start);
        free(comm);
        return r;
}

/* The launch has not exec'd in time: kill it (the step it hangs in waits killably, as a FUSE or
 * NFS request does), and fail the job naming that step, so that one dead file system costs the
 * job on it and nothing else. */
static int on_launch_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        agent_job *j = userdata;
        launch_progress m;
        (void)s;
        (void)usec;

        /* Its outcome may be in the pipe, ready in the same turn as this timer. */
        if (j->progress)
                on_progress(j->progress, sd_event_source_get_io_fd(j->progress), EPOLLIN, j);
        if (!j->starting)
                return 0;
        while (j->steps_fd >= 0 && shepherd_read_progress(j->steps_fd, &m) > 0) /* the last one begun */
                snprintf(j->step, sizeof(j->step), "%s", m.what);
        if (j->ending || (j->adopted && !launch_unfinished(j))) { /* it ended, or exec'd unheard */
                launch_over(j);
                if (!j->ending)
                        report_started(j);
                return 0;
        }
        snprintf(j->start_error, sizeof(j->start_error), "launch stalled for %g s at: %s",
                 j->agent->cfg.launch_timeout_ms / 1000.0, j->step[0] ? j->step : "its first step");
        log_warning(JOB_FMT ": %s; killing it", JOB_ARGS(j), j->start_error);
        launch_over(j);
        /* A launch stuck before its process joined the cgroup (making the cgroup, the user's
         * lookup in NSS, in the shepherd itself) is out of the cgroup's reach: end the shepherd
         * too. Ours unreaped, its pid is still its own; an adopted one's pidfd is its own. A
         * child it started and not yet in the cgroup dies with it (launch.c). */
        if (!j->adopted && j->shepherd > 0)
                (void)kill(j->shepherd, SIGKILL);
        else if (j->adopted && j->watch)
                (void)pidfd_send_signal(sd_event_source_get_io_fd(j->watch), SIGKILL, NULL, 0);
        agent_job_kill(j);
        return 0;
}

static int on_shepherd_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        agent_job *j = userdata;
        (void)s;

        if (si->si_code != CLD_EXITED || si->si_status != 0)
                log_warning(JOB_FMT ": shepherd %d ended with %s %d", JOB_ARGS(j), (int)si->si_pid,
                            si->si_code == CLD_EXITED ? "status" : "signal", si->si_status);
        /* Killed (a launch past its deadline, or from outside), a standby left its spare: the
         * job's now (gone by that name), or one shepherd_finish had yet to remove. */
        if (si->si_code != CLD_EXITED && j->standby_spare[0] &&
            jobsync_remove_cgroup(j->agent->sync, j->agent->cg, 0, j->standby_spare) < 0)
                log_warning(JOB_FMT ": out of memory removing cgroup %s", JOB_ARGS(j), j->standby_spare);
        /* What it wrote before it went may not have been read yet. */
        if (j->progress)
                on_progress(j->progress, sd_event_source_get_io_fd(j->progress), EPOLLIN, j);
        if (j->starting) {
                snprintf(j->start_error, sizeof(j->start_error), "shepherd %d ended before it could start the job",
                         (int)j->shepherd);
                launch_over(j);
        }
        if (j->cgroup_foreign) { /* nothing ran; the cgroup of that name is not the job's */
                report_not_run(j->agent, j->id, j->attempt, JOB_FAILED, j->start_error);
                agent_job_free(j);
                return 0;
        }
        agent_job_reap(j);
        return 0;
}

/* A launch that got no further than its shepherd's fork (no shepherd running, no cgroup left):
 * report it. The report's file in the state directory replaces the record when the two are
 * removed. */
static void abandon_start(agent_job *j, const char *error) {
        log_warning(JOB_FMT ": cannot start: %s", JOB_ARGS(j), error);
        report_not_run(j->agent, j->id, j->attempt, JOB_FAILED, error);
        agent_job_free(j);
}

/* Watch a launch: its report pipe (the source's from now on), its deadline, and the
 * shepherd's end; the job keeps its steps pipe. Returns 0 or -errno. */
static int watch_launch(agent_job *j, shepherd *sh) {
        agent *a = j->agent;
        int r = sd_event_add_io(a->event, &j->progress, sh->report_fd, EPOLLIN, on_progress, j);

        if (r == 0) {
                (void)sd_event_source_set_io_fd_own(j->progress, true);
                sh->report_fd = -1;
                j->steps_fd = sh->steps_fd;
                sh->steps_fd = -1;
        }
        if (r == 0)
                r = sd_event_add_time_relative(a->event, &j->deadline, CLOCK_MONOTONIC,
                                               (uint64_t)a->cfg.launch_timeout_ms * 1000, 0, on_launch_deadline, j);
        if (r == 0)
                r = sd_event_add_child(a->event, &j->watch, sh->pid, WEXITED, on_shepherd_exit, j);
        return r;
}

/* The standby shepherd ended before it got a job: launches fork their own until the next
 * launch has the next standby forked. */
static int on_standby_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        agent *a = userdata;
        (void)s;

        log_warning("host=%s: standby shepherd %d ended with %s %d before it got a job", a->cfg.name, (int)si->si_pid,
                    si->si_code == CLD_EXITED ? "status" : "signal", si->si_status);
        a->standby_watch = sd_event_source_disable_unref(a->standby_watch);
        shepherd_abort(&a->standby);
        a->standby.pid = 0;
        /* Killed, it left its spare cgroup behind (where it made one); its child, in there,
         * dies with it. */
        if (jobsync_remove_cgroup(a->sync, a->cg, 0, a->standby_spare) < 0)
                log_warning("host=%s: out of memory removing cgroup %s", a->cfg.name, a->standby_spare);
        return 0;
}

/* Once a launch is over and no other waits: fork the shepherd of the next one ahead, so that
 * its fork (0.3 ms here, 5 ms in a TCG guest) is off that launch's path. */
static int on_standby_fork(sd_event_source *s, void *userdata) {
        agent *a = userdata;
        char err[ERRLEN];
        int r;
        (void)s;

        if (a->standby.pid > 0 || a->stopping)
                return 0;
        pid_t lost = a->forker.lost;

        r = shepherd_spawn_standby(&a->forker, &a->last_user, &a->standby, err, sizeof(err));
        if (lost)
                log_warning("host=%s: the shepherds' fork server %d had gone; %s", a->cfg.name, (int)lost,
                            a->forker.server.pid > 0 ? "started another" : "the agent forks them");
        if (r < 0) {
                a->standby.pid = 0;
                log_warning("host=%s: cannot fork a standby shepherd: %s", a->cfg.name, err);
                return 0;
        }
        (void)shepherd_spare_cgroup(&a->last_user, a->standby.pid, a->standby_spare, sizeof(a->standby_spare));
        if ((r = sd_event_add_child(a->event, &a->standby_watch, a->standby.pid, WEXITED, on_standby_exit, a)) < 0) {
                log_errno(LOG_WARNING, r, "host=%s: cannot watch standby shepherd %d", a->cfg.name,
                          (int)a->standby.pid);
                shepherd_abort(&a->standby);
                a->standby.pid = 0;
        }
        return 0;
}

/* The job's shepherd: the standby, handed the job, when there is one that can take it; else
 * one forked now. Either makes the job's cgroup while the loop writes the record. Returns 0,
 * or -errno with err. */
static int get_shepherd(agent_job *j, const launch_req *req, shepherd *sh, char *err, size_t errlen) {
        agent *a = j->agent;
        uint64_t spare = jobsync_take_spare(a->sync);
        pid_t standby = a->standby.pid;
        char *msg = NULL;
        size_t len = 0;
        int r = standby > 0 ? shepherd_request(&a->standby, req, j->id, spare, &msg, &len) : -ENOENT;

        if (r == 0 || r == -ESRCH) {
                a->standby_watch = sd_event_source_disable_unref(a->standby_watch);
                *sh = a->standby;
                a->standby.pid = 0;
        }
        if (r == 0 && (r = shepherd_hand(sh, msg, len, err, errlen)) == 0) {
                snprintf(j->standby_spare, sizeof(j->standby_spare), "%s", a->standby_spare);
                return 0;
        }
        if (r == -ESRCH)
                shepherd_abort(sh); /* reaps it */
        if (r == -EBUSY)
                log_debug(JOB_FMT ": standby shepherd %d is not waiting yet; forking its own", JOB_ARGS(j),
                          (int)standby);
        else if (r != -ENOENT)
                log_warning(JOB_FMT ": standby shepherd %d cannot take it (%s); forking its own", JOB_ARGS(j),
                            (int)standby, strerror(-r));
        return shepherd_spawn(&a->forker, req, j->id, spare, sh, err, errlen);
}

/* Get the job's shepherd, record it, watch it, and let it launch the job: the record is on
 * disk before the job can start, so that a restarted agent finds every job that may have run.
 * The loop never waits for the launch: on_progress hears how it went. Returns 0, or -errno with
 * err and the shepherd reaped. */
static int start_shepherd(agent_job *j, const launch_req *req, char *err, size_t errlen) {
        agent *a = j->agent;
        shepherd sh;
        int r = get_shepherd(j, req, &sh, err, errlen);

        if (r < 0)
                return r;
        a->last_user.known = true;
        a->last_user.uid = req->uid;
        a->last_user.gid = req->gid;
        snprintf(a->last_user.cgroup, sizeof(a->last_user.cgroup), "%s", req->cg_job);
        j->shepherd = sh.pid;
        j->shepherd_start = sh.start;
        j->start_usec = clock_real_usec();
        j->starting = true;
        if ((r = agent_job_save(j)) < 0)
                snprintf(err, errlen, "cannot write the job's record in %s: %s", a->cfg.state_dir, strerror(-r));
        else if ((r = watch_launch(j, &sh)) < 0)
                snprintf(err, errlen, "cannot watch shepherd %d: %s", (int)sh.pid, strerror(-r));
        if (r < 0) {
                launch_over(j);
                j->watch = sd_event_source_disable_unref(j->watch);
                shepherd_abort(&sh);
        } else if ((r = shepherd_go(&sh, err, errlen)) < 0) {
                launch_over(j);
                j->watch = sd_event_source_disable_unref(j->watch);
        }
        if (r < 0)
                j->shepherd = 0; /* reaped */
        return r;
}

/* Start the job's shepherd, which makes its cgroup and launches it as its queued launch says:
 * the loop never waits on cgroupfs. */
static void start_queued(agent_job *j) {
        agent *a = j->agent;
        launch_msg *m = j->queued;
        char err[ERRLEN], cpus[32], mem[32], cores[CORES_LIST_MAX];
        cg_device deny[GPUS_MAX];
        cg_limits lim = { .mcpu = m->spec.req.mcpu,
                          .mem = m->spec.req.mem,
                          .mem_high = m->spec.mem_high,
                          .pids = m->spec.req.pids ? m->spec.req.pids : a->cfg.default_pids,
                          .cpus = jobcores_take(j, m->spec.share_cores ? 0 : m->spec.req.mcpu, cores, sizeof(cores)) };
        launch_req req = { .spec = &m->spec,
                           .uid = m->uid,
                           .gid = m->gid,
                           .cg = a->cg,
                           .cg_job = j->cgroup,
                           .nofile = a->cfg.job_nofile,
                           .truncate_output = job_output_truncates(m->spec.open_mode, m->array_first, m->attempt),
                           .lim = &lim,
                           .dept = m->spec.group,
                           .dept_weights = m->dept_weights,
                           .ndept_weights = m->ndept_weights };

        j->queued = NULL;
        lim.deny = deny;
        if (jobgpus_take(j, m->spec.req.gpus, deny, &lim.ndeny, err, sizeof(err)) < 0 ||
            jobenv_prepare(m, a->cfg.name, err, sizeof(err)) < 0 || jobenv_gpus(m, j->gpu_ids, err, sizeof(err)) < 0 ||
            start_shepherd(j, &req, err, sizeof(err)) < 0)
                abandon_start(j, err);
        else {
                log_info(JOB_FMT " user=%s: launching %s (shepherd %d, cpus %s, mem %s, pids %" PRId64 "%s%s)",
                         JOB_ARGS(j), j->user, m->spec.argv[0], (int)j->shepherd,
                         units_format_cpus(lim.mcpu, cpus, sizeof(cpus)), units_format_size(lim.mem, mem, sizeof(mem)),
                         lim.pids, j->gpu_ids[0] ? ", gpus " : "", j->gpu_ids);
        }
        job_spec_free(&m->spec);
        free(m);
}

/* A job set aside for its earlier run's cgroup has waited the launch's deadline: cgroupfs does
 * not answer the sync thread's removal. It fails, as a launch stalled as long would. */
static int on_await_deadline(sd_event_source *s, uint64_t usec, void *userdata) {
        agent_job *j = userdata;
        char err[ERRLEN];
        (void)s;
        (void)usec;

        snprintf(err, sizeof(err), "its earlier run's cgroup was still being removed after %g s",
                 j->agent->cfg.launch_timeout_ms / 1000.0);
        abandon_start(j, err); /* takes it out of the set-aside list */
        return 0;
}

/* A turn for the queue's first job. At idle priority: heartbeats, reports and ended jobs go
 * first, so that a burst of launches, each a few milliseconds of cgroup writes and fsyncs,
 * never holds the loop for the whole burst in one turn. A job back on this host the moment its
 * earlier run ended waits aside until the sync thread has removed that run's cgroup
 * (jobstart_removals_done), at most the launch's deadline: its shepherd makes the job's cgroup
 * as soon as it has the job, and would find the old one (EEXIST: not the job's). */
static int on_launch_turn(sd_event_source *s, void *userdata) {
        agent *a = userdata;
        agent_job *j = a->queue;
        int r;

        if (j) {
                if (!(a->queue = j->queue_next))
                        a->queue_tail = &a->queue;
                j->queue_next = NULL;
                if (jobsync_cgroup_pending(a->sync, j->id)) {
                        log_info(JOB_FMT ": waits for its earlier run's cgroup to be removed", JOB_ARGS(j));
                        j->queue_next = a->awaiting;
                        a->awaiting = j;
                        r = sd_event_add_time_relative(a->event, &j->deadline, CLOCK_MONOTONIC,
                                                       (uint64_t)a->cfg.launch_timeout_ms * 1000, 0, on_await_deadline,
                                                       j);
                        if (r < 0)
                                log_errno(LOG_WARNING, r, JOB_FMT ": cannot time its wait", JOB_ARGS(j));
                } else
                        start_queued(j);
        }
        return a->queue ? 0 : sd_event_source_set_enabled(s, SD_EVENT_OFF);
}

void jobstart_removals_done(void *agent_) {
        agent *a = agent_;
        agent_job **p = &a->awaiting;

        while (*p) {
                agent_job *j = *p;

                if (jobsync_cgroup_pending(a->sync, j->id)) {
                        p = &j->queue_next;
                        continue;
                }
                *p = j->queue_next; /* first in the queue again: it had its turn */
                j->deadline = sd_event_source_disable_unref(j->deadline); /* its launch arms its own */
                if (!(j->queue_next = a->queue))
                        a->queue_tail = &j->queue_next;
                a->queue = j;
                (void)sd_event_source_set_enabled(a->launcher, SD_EVENT_ON);
        }
}

int jobstart_init(agent *a) {
        char err[ERRLEN];
        int r;

        a->forker = (shepherd_forker){ .cg = a->cg, .state_dir = a->cfg.state_dir };
        if ((r = shepherd_forker_start(&a->forker, err, sizeof(err))) < 0)
                log_warning("host=%s: no fork server for the shepherds, the agent forks them: %s", a->cfg.name, err);
        r = sd_event_add_defer(a->event, &a->launcher, on_launch_turn, a);

        a->queue_tail = &a->queue;
        if (r >= 0)
                r = sd_event_source_set_priority(a->launcher, SD_EVENT_PRIORITY_IDLE);
        if (r >= 0)
                r = sd_event_source_set_enabled(a->launcher, SD_EVENT_OFF);
        /* After the launcher's turns: a standby forked while launches wait would only delay them. */
        if (r >= 0)
                r = sd_event_add_defer(a->event, &a->standby_fork, on_standby_fork, a);
        if (r >= 0)
                r = sd_event_source_set_priority(a->standby_fork, SD_EVENT_PRIORITY_IDLE + 1);
        if (r >= 0)
                r = sd_event_source_set_enabled(a->standby_fork, SD_EVENT_ONESHOT);
        if (r < 0)
                jobstart_free(a);
        return r < 0 ? r : 0;
}

void jobstart_free(agent *a) {
        a->launcher = sd_event_source_disable_unref(a->launcher);
        a->standby_fork = sd_event_source_disable_unref(a->standby_fork);
        a->standby_watch = sd_event_source_disable_unref(a->standby_watch);
        if (a->standby.pid > 0)
                shepherd_abort(&a->standby);
        a->standby.pid = 0;
        shepherd_forker_stop(&a->forker);
}

void jobstart_queue(agent *a, launch_msg *m) {
        agent_job *j = calloc(1, sizeof(*j));
        launch_msg *q = j ? malloc(sizeof(*q)) : NULL;
        char err[ERRLEN];
        int r;

        if (!q || jobtab_reserve(&a->jobs) < 0) {
                free(q);
                free(j);
                report_not_run(a, m->id, m->attempt, JOB_FAILED, "agent out of memory");
                return;
        }
        *j = (agent_job){ .agent = a,
                          .id = m->id,
                          .attempt = m->attempt,
                          .mem_limit = m->spec.req.mem,
                          .queued = q,
                          .time_limit_usec = m->spec.time_limit_usec > 0 ? m->spec.time_limit_usec : 0,
                          .launch_msg_usec = turn_usec(a),
                          .steps_fd = -1,
                          .weights_seq = a->weights_seq };
        *q = *m;
        m->spec = (job_spec){ 0 }; /* moved into q */
        snprintf(j->user, sizeof(j->user), "%s", m->user ? m->user : "?");
        q->user = j->user;
        (void)jobtab_insert(&a->jobs, j); /* cannot fail: room reserved, and on_launch refused its id if held */
        if ((r = cg_job_name(q->spec.group, q->id, j->cgroup, sizeof(j->cgroup))) < 0) {
                snprintf(err, sizeof(err), "group \"%s\" cannot name a cgroup: %s", q->spec.group, strerror(-r));
                snprintf(j->cgroup, sizeof(j->cgroup), "job-%" PRIu64, q->id);
                abandon_start(j, err);
                return;
        }
        *a->queue_tail = j;
        a->queue_tail = &j->queue_next;
        if ((r = sd_event_source_set_enabled(a->launcher, SD_EVENT_ON)) < 0) {
                log_errno(LOG_WARNING, r, JOB_FMT ": cannot queue the launch, starting it now", JOB_ARGS(j));
                on_launch_turn(a->launcher, a);
        }
}

void jobstart_adopted(agent_job *j) {
        agent *a = j->agent;
        int64_t left = j->start_usec + (int64_t)a->cfg.launch_timeout_ms * 1000 - clock_real_usec();
        int r;

        if (j->ending || !launch_unfinished(j))
                return;
        snprintf(j->step, sizeof(j->step), "a step begun before the agent restarted");
        r = sd_event_add_time_relative(a->event, &j->deadline, CLOCK_MONOTONIC, left > 0 ? (uint64_t)left : 0, 0,
                                       on_launch_deadline, j);
        if (r < 0) {
                log_errno(LOG_WARNING, r, JOB_FMT ": cannot time its unfinished launch", JOB_ARGS(j));
                return;
        }
        j->starting = true;
        log_info(JOB_FMT ": its launch has not exec'd yet; it fails in %" PRId64 " ms unless it does", JOB_ARGS(j),
                 left > 0 ? left / 1000 : 0);
}

void jobstart_unqueue(agent_job *j) {
        agent *a = j->agent;
        agent_job **p = &a->queue;

        if (!j->queued)
                return;
        while (*p && *p != j)
                p = &(*p)->queue_next;
        if (*p) {
                *p = j->queue_next;
                if (a->queue_tail == &j->queue_next)
                        a->queue_tail = p;
        }
        for (p = &a->awaiting; *p; p = &(*p)->queue_next)
                if (*p == j) {
                        *p = j->queue_next;
                        break;
                }
        job_spec_free(&j->queued->spec);
        free(j->queued);
        j->queued = NULL;
}
