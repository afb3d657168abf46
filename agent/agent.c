/* agent.c - the job table and what the agent does with the controller's messages.
 *
 * A job is in the table from a successful launch (or its re-adoption after a restart) until
 * its shepherd has ended and its cgroup is gone; the shepherd's watch and the cancel timer hang
 * off the table entry and die with it. One agent-wide timer reports the usage of every running
 * job. Every report goes through the controller link as "reliable", so one produced while the
 * controller is away is sent after the next welcome; a "finished" report is also kept in the
 * state directory until the controller acknowledges it (it has stored the job's end), and is
 * sent again after every welcome until then, so that neither an agent restart nor a
 * controller killed with the report unread loses it (docs/architecture.md, "Restarts"). */
#include "agent.h"
#include "agent-state.h"
#include "ctlink.h"
#include "fileio.h"
#include "job.h"
#include "jobdir.h"
#include "jobfile.h"
#include "launch.h"
#include "log.h"
#include "proto.h"
#include "shepherd.h"
#include "units.h"
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/pidfd.h>
#include <sys/wait.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#define JOB_KILL_TIMEOUT_MS 5000
#define STOP_FLUSH_TIMEOUT_MS 2000
#define CANCEL_DEFAULT_GRACE_MS 10000
#define CANCEL_MAX_GRACE_MS (24 * 3600 * 1000)
#define START_FAILED_EXIT_CODE 127 /* what a shell reports for a command it could not run */
#define ERRLEN 512
#define USAGE_PERIOD_USEC (2 * 1000000) /* how often running jobs' usage is reported */

typedef struct agent_job {
        agent *agent;
        uint64_t id;
        uint32_t attempt;      /* the launch's, echoed in every report so that the controller can
                                * tell a report of an earlier run of a requeued job */
        char cgroup[JOBFILE_CGROUP_MAX]; /* cg_job_name: "job-<id>", "dept-a/job-<id>" */
        pid_t pid;             /* main process (the shepherd's child); 0 when re-adopted */
        pid_t shepherd;        /* our child, or a previous agent's when adopted */
        uint64_t shepherd_start; /* its start time, so that a reused pid is not taken for it */
        bool adopted;
        int64_t mem_limit;
        int64_t start_usec;
        bool cancelled;
        bool in_table;
        sd_event_source *watch; /* the shepherd's end: a child source, or its pidfd when adopted;
                                 * NULL for an adopted one without pidfd: the usage tick polls it */
        sd_event_source *grace; /* cancel: SIGKILL after the grace period */
        struct agent_job *prev, *next;
} agent_job;

struct agent {
        sd_event *event;
        agent_config cfg;
        cg_backend *cg;
        ctlink *link;
        agent_job *jobs; /* the job table */
        size_t njobs;
        sd_event_source *usage_timer;
        bool stopping; /* agent_stop: no ack will be waited for, a report written is done with */
};

/* Log prefix naming a job and its cgroup. */
#define JOB_FMT "job=%" PRIu64 " cgroup=%s/%s"
#define JOB_ARGS(j) (j)->id, cg_subtree_path((j)->agent->cg), (j)->cgroup

static int64_t now_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

static agent_job *agent_job_find(agent *a, uint64_t id) {
        for (agent_job *j = a->jobs; j; j = j->next)
                if (j->id == id)
                        return j;
        return NULL;
}

static void agent_job_insert(agent *a, agent_job *j) {
        j->next = a->jobs;
        if (a->jobs)
                a->jobs->prev = j;
        a->jobs = j;
        a->njobs++;
        j->in_table = true;
}

/* Unlink (if in the table) and free a job with its event sources. */
static void agent_job_free(agent_job *j) {
        agent *a = j->agent;

        if (j->in_table) {
                if (j->prev)
                        j->prev->next = j->next;
                else
                        a->jobs = j->next;
                if (j->next)
                        j->next->prev = j->prev;
                a->njobs--;
        }
        sd_event_source_disable_unref(j->watch);
        sd_event_source_disable_unref(j->grace);
        free(j);
}

/* Write the job's record to the state directory. Returns 0 or -errno (logged). */
static int save_record(agent_job *j) {
        jobfile_record rec = {.id = j->id, .shepherd = j->shepherd, .shepherd_start = j->shepherd_start,
                              .mem_limit = j->mem_limit, .start_usec = j->start_usec, .cancelled = j->cancelled,
                              .attempt = j->attempt};
        char *text;
        int r;

        snprintf(rec.cgroup, sizeof(rec.cgroup), "%s", j->cgroup);
        text = jobfile_record_format(&rec);
        r = text ? jobdir_write(j->agent->cfg.state_dir, j->id, JOBFILE_RECORD, text) : -ENOMEM;
        free(text);
        if (r < 0)
                log_errno(LOG_WARNING, r, JOB_FMT " dir=%s: cannot write the job's record", JOB_ARGS(j),
                          j->agent->cfg.state_dir);
        return r;
}

/* Queue a report; it survives a disconnect. A tracked one (finished) keeps its files in the
 * state directory until it has been written to the controller (on_report_written). */
static void send_report(agent *a, uint64_t id, cJSON *msg, bool built, bool tracked) {
        int r;

        if (!built) {
                log_error("job=%" PRIu64 ": out of memory building a report", id);
                return;
        }
        r = tracked ? ctlink_send_tracked(a->link, msg, id) : ctlink_send(a->link, msg, true);
        if (r < 0)
                log_errno(LOG_ERR, r, "job=%" PRIu64 " controller=%s: cannot queue the report", id,
                          a->cfg.controller);
        else if (!ctlink_is_ready(a->link))
                log_debug("job=%" PRIu64 " controller=%s: report kept until the controller is back",
                          id, a->cfg.controller);
}

/* Keep the report on disk until it is written to the controller: an agent killed meanwhile
 * leaves it for the next one to send. */
static void save_report(agent *a, uint64_t id, const cJSON *msg) {
        char *text = proto_print(msg);
        int r = text ? jobdir_write(a->cfg.state_dir, id, JOBFILE_DONE, text) : -ENOMEM;

        free(text);
        if (r < 0)
                log_errno(LOG_WARNING, r, "job=%" PRIu64 " dir=%s: cannot keep the report on disk", id,
                          a->cfg.state_dir);
}

static void send_finished(agent *a, uint64_t id, uint32_t attempt, job_state st, const job_result *r,
                          int64_t end_usec) {
        cJSON *m = proto_new("finished");
        bool ok = m && cJSON_AddNumberToObject(m, "id", (double)id) && cJSON_AddNumberToObject(m, "attempt", attempt) &&
                  cJSON_AddStringToObject(m, "state", job_state_name(st)) &&
                  job_result_to_json(r, m) == 0 &&
                  cJSON_AddNumberToObject(m, "end_usec", (double)end_usec);

        if (ok)
                save_report(a, id, m);
        send_report(a, id, m, ok, true);
        cJSON_Delete(m);
}

/* The job's report is done with: remove its files, or only the report when a later attempt of
 * the job runs here (its record is the new run's). */
static void forget_report(agent *a, uint64_t id) {
        int r = agent_job_find(a, id) ? jobdir_remove_kind(a->cfg.state_dir, id, JOBFILE_DONE)
                                      : jobdir_remove(a->cfg.state_dir, id);

        if (r < 0)
                log_errno(LOG_WARNING, r, "job=%" PRIu64 " dir=%s: cannot remove the job's files", id,
                          a->cfg.state_dir);
}

/* A report reached the controller's socket. Only a stopping agent, which will not read the
 * acknowledgement, is done with it then; otherwise the controller may die before reading it. */
static void on_report_written(uint64_t id, void *userdata) {
        agent *a = userdata;

        if (a->stopping)
                forget_report(a, id);
}

/* The attempt a kept report is about (1 when it does not say), or 0 when there is none. */
static uint32_t kept_report_attempt(agent *a, uint64_t id) {
        char *text = NULL, err[PROTO_ERRLEN];
        int64_t attempt = 1;
        cJSON *m = jobdir_read(a->cfg.state_dir, id, JOBFILE_DONE, &text) == 0 ? cJSON_Parse(text) : NULL;

        if (m && proto_get_int(m, "attempt", 1, UINT32_MAX, &attempt, err) == -EINVAL)
                attempt = 0;
        cJSON_Delete(m);
        free(text);
        return m ? (uint32_t)attempt : 0;
}

/* The controller has stored the end of this attempt of the job: its kept report may go. */
static void handle_ack(agent *a, const cJSON *msg) {
        static const char *const fields[] = {"id", "attempt", NULL};
        char err[PROTO_ERRLEN];
        int64_t id, attempt = 1;

        if (proto_check_fields(msg, fields, err) < 0 || proto_get_int(msg, "id", 1, INT64_MAX, &id, err) < 0 ||
            proto_get_int(msg, "attempt", 1, UINT32_MAX, &attempt, err) == -EINVAL) {
                log_warning("controller=%s: ack ignored: %s", a->cfg.controller, *err ? err : "no id");
                return;
        }
        if (kept_report_attempt(a, (uint64_t)id) == (uint32_t)attempt)
                forget_report(a, (uint64_t)id);
}

static void send_started(agent_job *j) {
        cJSON *m = proto_new("started");
        bool ok = m && cJSON_AddNumberToObject(m, "id", (double)j->id) &&
                  cJSON_AddNumberToObject(m, "attempt", j->attempt) && cJSON_AddNumberToObject(m, "pid", j->pid) &&
                  cJSON_AddNumberToObject(m, "start_usec", (double)j->start_usec);

        send_report(j->agent, j->id, m, ok, false);
        cJSON_Delete(m);
}

/* Report a job that never ran. */
static void send_start_failure(agent *a, uint64_t id, uint32_t attempt, const char *error) {
        job_result r = {.exit_code = START_FAILED_EXIT_CODE, .error = (char *)error};

        send_finished(a, id, attempt, JOB_FAILED, &r, now_usec());
}

/* The state and error of a job whose main process ended as ex says (NULL: unknown, its
 * shepherd died without saying); stopping says the agent itself ended it. A job whose end is
 * unknown is lost, as the controller calls a job its agent vanished with: its shepherd is
 * killed with a crashed agent (systemd's KillMode=mixed), and whether the next agent or the
 * controller's timeout tells the end first must not change it (nor whether it is requeued). */
static job_state judge_end(const agent_job *j, const jobfile_exit *ex, bool stopping, job_result *r,
                           char *ebuf, size_t len) {
        job_state st;

        if (stopping) {
                r->error = "agent stopped";
                return JOB_CANCELLED;
        }
        if (!ex) {
                snprintf(ebuf, len, "exit status lost: shepherd %d ended without recording it",
                         (int)j->shepherd);
                r->error = ebuf;
                return JOB_LOST;
        }
        st = agent_state_decide(r, j->cancelled);
        r->error = (char *)agent_state_error(st, r, j->mem_limit, ebuf, len);
        return st;
}

/* The cgroup's counters into a job's result. */
static void take_usage(job_result *r, const cg_usage *u) {
        r->cpu_usec = u->cpu_usec;
        r->mem_current = u->mem_current;
        r->mem_peak = u->mem_peak;
        r->oom_kills = u->oom_kills;
        r->io_rbytes = u->io_rbytes;
        r->io_wbytes = u->io_wbytes;
        r->psi = u->psi;
}

/* The main process has ended as ex says (NULL: unknown): kill what is left, read the usage,
 * remove the cgroup, report, and drop the job. stopping says the agent itself is ending it. */
static void agent_job_end(agent_job *j, const jobfile_exit *ex, bool stopping) {
        agent *a = j->agent;
        char ebuf[ERRLEN], peak[32];
        job_result r = {.exit_code = ex ? ex->exit_code : 0, .signal = ex ? ex->signal : stopping ? SIGKILL : 0};
        cg_usage u = {0};
        job_state st;
        int k;

        k = cg_job_kill(a->cg, j->cgroup, JOB_KILL_TIMEOUT_MS);
        if (k < 0)
                log_errno(LOG_WARNING, k, JOB_FMT ": cannot kill what the job left behind", JOB_ARGS(j));
        /* Read after the kill, so that the usage covers every task the job ever had. */
        k = cg_job_usage(a->cg, j->cgroup, &u);
        if (k < 0)
                log_errno(LOG_WARNING, k, JOB_FMT ": cannot read the job's usage", JOB_ARGS(j));
        take_usage(&r, &u);
        st = judge_end(j, ex, stopping, &r, ebuf, sizeof(ebuf));
        k = cg_job_remove(a->cg, j->cgroup);
        if (k < 0)
                log_errno(LOG_WARNING, k, JOB_FMT ": cannot remove the job's cgroup", JOB_ARGS(j));
        log_info(JOB_FMT ": %s, exit code %d, signal %d, cpu %" PRIu64 " us, peak memory %s, "
                 "oom kills %" PRIu64 "%s%s",
                 JOB_ARGS(j), job_state_name(st), r.exit_code, r.signal, r.cpu_usec,
                 units_format_size((int64_t)r.mem_peak, peak, sizeof(peak)), r.oom_kills,
                 r.error ? ": " : "", r.error ? r.error : "");
        send_finished(a, j->id, j->attempt, st, &r, ex ? ex->end_usec : now_usec());
        agent_job_free(j);
}

/* Read the exit status the job's shepherd wrote. Returns 0 or -errno (logged). */
static int read_exit(agent *a, uint64_t id, jobfile_exit *ex) {
        char err[PROTO_ERRLEN], *text = NULL;
        int r = jobdir_read(a->cfg.state_dir, id, JOBFILE_EXIT, &text);

        if (r == 0 && (r = jobfile_exit_parse(text, ex, err)) < 0)
                log_warning("job=%" PRIu64 " dir=%s: bad exit file: %s", id, a->cfg.state_dir, err);
        else if (r < 0)
                log_errno(LOG_WARNING, r, "job=%" PRIu64 " dir=%s: no exit status", id, a->cfg.state_dir);
        free(text);
        return r;
}

/* The shepherd has ended: end the job as its exit file says. */
static void agent_job_reap(agent_job *j) {
        jobfile_exit ex;

        agent_job_end(j, read_exit(j->agent, j->id, &ex) == 0 ? &ex : NULL, false);
}

static int on_shepherd_exit(sd_event_source *s, const siginfo_t *si, void *userdata) {
        agent_job *j = userdata;
        (void)s;

        if (si->si_code != CLD_EXITED || si->si_status != 0)
                log_warning(JOB_FMT ": shepherd %d ended with %s %d", JOB_ARGS(j), (int)si->si_pid,
                            si->si_code == CLD_EXITED ? "status" : "signal", si->si_status);
        agent_job_reap(j);
        return 0;
}

/* An adopted shepherd's pidfd became readable: it has ended. */
static int on_shepherd_fd(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void)s;
        (void)fd;
        (void)revents;
        agent_job_reap(userdata);
        return 0;
}

/* A launch that got no further than its cgroup (or not even that): clean up and report. The
 * report's file in the state directory replaces the record when the two are removed. */
static void abandon_start(agent_job *j, bool created, const char *error) {
        agent *a = j->agent;
        int k;

        log_warning(JOB_FMT ": cannot start: %s", JOB_ARGS(j), error);
        if (j->shepherd > 0) {
                (void)cg_job_kill(a->cg, j->cgroup, JOB_KILL_TIMEOUT_MS);
                (void)shepherd_wait_gone(j->shepherd, j->shepherd_start, true, JOB_KILL_TIMEOUT_MS);
        }
        if (created && (k = cg_job_remove(a->cg, j->cgroup)) < 0)
                log_errno(LOG_WARNING, k, JOB_FMT ": cannot remove the job's cgroup", JOB_ARGS(j));
        send_start_failure(a, j->id, j->attempt, error);
        agent_job_free(j);
}

typedef struct launch_msg {
        uint64_t id;
        uint32_t attempt;
        double dept_weights[JOB_GROUP_LEVELS_MAX]; /* one per level of spec.group */
        size_t ndept_weights;
        uid_t uid;
        gid_t gid;
        const char *user;
        job_spec spec;
} launch_msg;

/* Fork the job's shepherd, record it, and let it launch the job: the record is on disk before
 * the job can start, so that a restarted agent finds every job that may have run. Returns 0
 * (j->pid set) or -errno with err; on failure the shepherd has been reaped. */
static int start_shepherd(agent_job *j, const launch_req *req, char *err, size_t errlen) {
        shepherd sh;
        int r = shepherd_spawn(req, j->id, j->agent->cfg.state_dir, &sh, err, errlen);

        if (r < 0)
                return r;
        j->shepherd = sh.pid;
        j->shepherd_start = sh.start;
        j->start_usec = now_usec();
        if ((r = save_record(j)) < 0) {
                snprintf(err, errlen, "cannot write the job's record in %s: %s", j->agent->cfg.state_dir,
                         strerror(-r));
                shepherd_abort(&sh);
        } else
                r = shepherd_go(&sh, &j->pid, err, errlen);
        if (r < 0)
                j->shepherd = 0; /* reaped */
        return r;
}

static void agent_job_start(agent *a, launch_msg *m) {
        agent_job *j = calloc(1, sizeof(*j));
        char err[ERRLEN], cpus[32], mem[32];
        cg_limits lim = {.mcpu = m->spec.req.mcpu, .mem = m->spec.req.mem, .mem_high = m->spec.mem_high,
                         .pids = m->spec.req.pids ? m->spec.req.pids : a->cfg.default_pids};
        launch_req req = {.spec = &m->spec, .uid = m->uid, .gid = m->gid, .cg = a->cg};
        int r;

        if (!j) {
                send_start_failure(a, m->id, m->attempt, "agent out of memory");
                return;
        }
        *j = (agent_job){.agent = a, .id = m->id, .attempt = m->attempt, .mem_limit = lim.mem};
        if ((r = cg_job_name(m->spec.group, m->id, j->cgroup, sizeof(j->cgroup))) < 0) {
                snprintf(err, sizeof(err), "group \"%s\" cannot name a cgroup: %s", m->spec.group, strerror(-r));
                snprintf(j->cgroup, sizeof(j->cgroup), "job-%" PRIu64, m->id);
                abandon_start(j, false, err);
                return;
        }
        req.cg_job = j->cgroup;
        r = m->spec.group ? cg_dept_prepare(a->cg, m->spec.group, m->dept_weights, m->ndept_weights, err, sizeof(err))
                          : 0;
        if (r == 0)
                r = cg_job_create(a->cg, j->cgroup, &lim, err, sizeof(err));
        if (r < 0) {
                abandon_start(j, r != -EEXIST, err);
                return;
        }
        if (start_shepherd(j, &req, err, sizeof(err)) < 0) {
                abandon_start(j, true, err);
                return;
        }
        r = sd_event_add_child(a->event, &j->watch, j->shepherd, WEXITED, on_shepherd_exit, j);
        if (r < 0) {
                snprintf(err, sizeof(err), "cannot watch shepherd %d: %s", (int)j->shepherd, strerror(-r));
                abandon_start(j, true, err);
                return;
        }
        agent_job_insert(a, j);
        log_info(JOB_FMT " user=%s: started pid %d (shepherd %d): %s (cpus %s, mem %s, pids %" PRId64 ")",
                 JOB_ARGS(j), m->user, (int)j->pid, (int)j->shepherd, m->spec.argv[0],
                 units_format_cpus(lim.mcpu, cpus, sizeof(cpus)),
                 units_format_size(lim.mem, mem, sizeof(mem)), lim.pids);
        send_started(j);
}

/* proto_get_int for a field that must be present. */
static int require_int(const cJSON *msg, const char *field, int64_t min, int64_t max,
                       int64_t *out, char err[PROTO_ERRLEN]) {
        int r = proto_get_int(msg, field, min, max, out, err);

        if (r == -ENOENT) {
                snprintf(err, PROTO_ERRLEN, "missing field '%s'", field);
                return -EINVAL;
        }
        return r;
}

/* The group's weights: one positive number per level of spec.group; all 1 when absent. */
static int parse_dept_weights(const cJSON *msg, launch_msg *m, char err[PROTO_ERRLEN]) {
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(msg, "dept_weights"), *w;
        size_t levels = 0;

        for (const char *p = m->spec.group; p && *p; p++)
                levels += *p == '/';
        levels += m->spec.group != NULL;
        if (levels > JOB_GROUP_LEVELS_MAX) {
                snprintf(err, PROTO_ERRLEN, "group: more than %d levels", JOB_GROUP_LEVELS_MAX);
                return -EINVAL;
        }
        m->ndept_weights = levels;
        for (size_t i = 0; i < levels; i++)
                m->dept_weights[i] = 1.0;
        if (!arr)
                return 0;
        if (!cJSON_IsArray(arr) || (size_t)cJSON_GetArraySize(arr) != levels) {
                snprintf(err, PROTO_ERRLEN, "dept_weights: not an array of %zu numbers (one per level of the group)",
                         levels);
                return -EINVAL;
        }
        size_t i = 0;
        cJSON_ArrayForEach(w, arr) {
                if (!cJSON_IsNumber(w) || !(w->valuedouble > 0) || w->valuedouble > 1e4) {
                        snprintf(err, PROTO_ERRLEN, "dept_weights: entry %zu is not a number in (0, 10000]", i + 1);
                        return -EINVAL;
                }
                m->dept_weights[i++] = w->valuedouble;
        }
        return 0;
}

/* Validate a launch's fields other than id into m. Returns 0 or -EINVAL with err. */
static int parse_launch(const cJSON *msg, launch_msg *m, char err[PROTO_ERRLEN]) {
        static const char *allowed[64]; /* job_spec_fields, the six below, NULL */
        const size_t max_spec = sizeof(allowed) / sizeof(allowed[0]) - 7;
        int64_t uid, gid;
        size_t n = 0;
        int r;

        if (!allowed[0]) {
                for (const char *const *f = job_spec_fields; *f && n < max_spec; f++)
                        allowed[n++] = *f;
                allowed[n++] = "id", allowed[n++] = "uid", allowed[n++] = "gid", allowed[n++] = "user";
                allowed[n++] = "dept_weights", allowed[n++] = "attempt";
        }
        r = proto_check_fields(msg, allowed, err);
        if (r == 0)
                r = require_int(msg, "uid", 0, (int64_t)UINT32_MAX - 1, &uid, err);
        if (r == 0)
                r = require_int(msg, "gid", 0, (int64_t)UINT32_MAX - 1, &gid, err);
        if (r == 0 && (r = proto_get_str(msg, "user", &m->user, err)) == -ENOENT) {
                snprintf(err, PROTO_ERRLEN, "missing field 'user'");
                r = -EINVAL;
        }
        if (r == 0)
                r = job_spec_from_json(msg, &m->spec, err);
        if (r == 0)
                r = parse_dept_weights(msg, m, err);
        if (r < 0)
                return -EINVAL;
        m->uid = (uid_t)uid;
        m->gid = (gid_t)gid;
        return 0;
}

static void handle_launch(agent *a, const cJSON *msg) {
        char err[PROTO_ERRLEN];
        launch_msg m = {0};
        int64_t id, attempt = 1;

        if (require_int(msg, "id", 1, INT64_MAX, &id, err) < 0 ||
            proto_get_int(msg, "attempt", 1, UINT32_MAX, &attempt, err) == -EINVAL) {
                log_warning("controller=%s: launch ignored: %s", a->cfg.controller, err);
                return;
        }
        m.id = (uint64_t)id;
        m.attempt = (uint32_t)attempt;
        agent_job *old = agent_job_find(a, m.id);
        if (old && old->attempt == m.attempt) {
                log_warning("job=%" PRIu64 ": launch ignored, the job is already running", m.id);
                return;
        }
        if (!old && kept_report_attempt(a, m.id) == m.attempt) { /* a launch sent again after a reconnect */
                log_info("job=%" PRIu64 ": launch ignored, attempt %" PRIu32 " already ran here (its report is kept)",
                         m.id, m.attempt);
                return;
        }
        if (old) { /* never two runs of one job at once: this one fails rather than start */
                snprintf(err, sizeof(err), "attempt %" PRIu32 " of the job still runs here", old->attempt);
                log_warning("job=%" PRIu64 ": launch of attempt %" PRIu32 " refused: %s", m.id, m.attempt, err);
                send_start_failure(a, m.id, m.attempt, err);
                return;
        }
        if (parse_launch(msg, &m, err) < 0) {
                log_warning("job=%" PRIu64 ": bad launch: %s", m.id, err);
                send_start_failure(a, m.id, m.attempt, err);
                return;
        }
        agent_job_start(a, &m);
        job_spec_free(&m.spec);
}

static int on_grace(sd_event_source *s, uint64_t usec, void *userdata) {
        agent_job *j = userdata;
        int k;
        (void)s;
        (void)usec;

        log_info(JOB_FMT ": grace period over, killing the whole cgroup", JOB_ARGS(j));
        k = cg_job_kill(j->agent->cg, j->cgroup, JOB_KILL_TIMEOUT_MS);
        if (k < 0)
                log_errno(LOG_WARNING, k, JOB_FMT ": cannot kill the job", JOB_ARGS(j));
        return 0;
}

static void handle_cancel(agent *a, const cJSON *msg) {
        static const char *const fields[] = {"id", "grace_ms", NULL};
        char err[PROTO_ERRLEN];
        int64_t id, grace_ms = CANCEL_DEFAULT_GRACE_MS;
        agent_job *j;
        int k;

        if (proto_check_fields(msg, fields, err) < 0 ||
            require_int(msg, "id", 1, INT64_MAX, &id, err) < 0 ||
            proto_get_int(msg, "grace_ms", 0, CANCEL_MAX_GRACE_MS, &grace_ms, err) == -EINVAL) {
                log_warning("controller=%s: cancel ignored: %s", a->cfg.controller, err);
                return;
        }
        j = agent_job_find(a, (uint64_t)id);
        if (!j) {
                log_warning("job=%" PRId64 ": cancel ignored, no such job here", id);
                return;
        }
        if (j->cancelled) {
                log_debug(JOB_FMT ": already being cancelled", JOB_ARGS(j));
                return;
        }
        j->cancelled = true;
        (void)save_record(j); /* so that an agent restarted meanwhile still calls it cancelled */
        log_info(JOB_FMT ": cancelled, SIGTERM now, SIGKILL in %" PRId64 " ms", JOB_ARGS(j), grace_ms);
        k = cg_job_signal(a->cg, j->cgroup, SIGTERM);
        if (k < 0)
                log_errno(LOG_WARNING, k, JOB_FMT ": cannot send SIGTERM", JOB_ARGS(j));
        k = sd_event_add_time_relative(a->event, &j->grace, CLOCK_MONOTONIC,
                                       (uint64_t)grace_ms * 1000, 0, on_grace, j);
        if (k < 0) {
                log_errno(LOG_WARNING, k, JOB_FMT ": no grace timer, killing now", JOB_ARGS(j));
                on_grace(NULL, 0, j);
        }
}

/* The departments' weights after a reload of the controller: the department cgroups this host
 * has take them now, with their jobs running on. */
static void handle_weights(agent *a, const cJSON *msg) {
        static const char *const fields[] = { "depts", NULL }, *const entry_fields[] = { "group", "dept_weights", NULL };
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(msg, "depts"), *e;
        char err[PROTO_ERRLEN] = "not an array";
        const char *group = NULL;

        if (proto_check_fields(msg, fields, err) < 0 || !cJSON_IsArray(arr)) {
                log_warning("controller=%s: bad weights message: depts: %s", a->cfg.controller, err);
                return;
        }
        cJSON_ArrayForEach(e, arr) {
                launch_msg m = { 0 };
                int r = proto_check_fields(e, entry_fields, err);
                if (r == 0 && (proto_get_str(e, "group", &group, err) != 0 || !job_group_ok(group))) {
                        snprintf(err, sizeof(err), "group: not a department path");
                        r = -EINVAL;
                }
                m.spec.group = (char *)group; /* borrowed: m is only parsed into */
                if (r == 0 && (r = parse_dept_weights(e, &m, err)) == 0)
                        r = cg_dept_reweight(a->cg, group, m.dept_weights, m.ndept_weights, err, sizeof(err));
                if (r < 0)
                        log_warning("controller=%s: department weights: %s", a->cfg.controller, err);
        }
}

static void on_message(const cJSON *msg, void *userdata) {
        agent *a = userdata;
        const char *type = proto_type(msg);

        if (strcmp(type, "launch") == 0)
                handle_launch(a, msg);
        else if (strcmp(type, "cancel") == 0)
                handle_cancel(a, msg);
        else if (strcmp(type, "weights") == 0)
                handle_weights(a, msg);
        else if (strcmp(type, "ack") == 0)
                handle_ack(a, msg);
        else
                log_warning("controller=%s: ignoring a '%s' message", a->cfg.controller, type);
}

static cJSON *build_hello(void *userdata) {
        agent *a = userdata;
        cJSON *m = proto_new("hello"), *running;
        bool ok = m && cJSON_AddStringToObject(m, "name", a->cfg.name) &&
                  cJSON_AddNumberToObject(m, "mcpu", (double)a->cfg.capacity.mcpu) &&
                  cJSON_AddNumberToObject(m, "mem", (double)a->cfg.capacity.mem) &&
                  cJSON_AddNumberToObject(m, "pids", (double)a->cfg.capacity.pids) &&
                  cJSON_AddStringToObject(m, "cgroup_mode", cg_get_mode(a->cg) == CG_MODE_V2 ? "v2" : "v1") &&
                  cJSON_AddStringToObject(m, "cgroup_root", cg_subtree_path(a->cg)) &&
                  (running = cJSON_AddArrayToObject(m, "running"));

        for (agent_job *j = a->jobs; ok && j; j = j->next) {
                cJSON *n = cJSON_CreateNumber((double)j->id);
                ok = n && cJSON_AddItemToArray(running, n);
        }
        if (!ok) {
                cJSON_Delete(m);
                return NULL;
        }
        return m;
}

/* Send the report a previous agent kept for job id (text) but may not have delivered. */
static void resend_report(agent *a, uint64_t id, const char *text) {
        cJSON *m = cJSON_Parse(text);
        const char *type = m ? proto_type(m) : NULL;

        if (!type || strcmp(type, "finished") != 0) {
                log_warning("job=%" PRIu64 " dir=%s: dropping a kept report that is not a finished message", id,
                            a->cfg.state_dir);
                (void)jobdir_remove(a->cfg.state_dir, id);
        } else {
                log_info("job=%" PRIu64 ": sending the report a previous agent kept", id);
                send_report(a, id, m, true, true);
        }
        cJSON_Delete(m);
}

/* Send again every report the controller has not acknowledged: it may have died with one
 * written to its socket but unread. A report still queued goes twice; the controller takes the
 * first and acknowledges both. */
static void resend_kept_reports(agent *a) {
        uint64_t *ids = NULL;
        size_t n = 0;
        int r = jobdir_list(a->cfg.state_dir, &ids, &n);

        if (r < 0)
                log_errno(LOG_WARNING, r, "dir=%s: cannot list the state directory", a->cfg.state_dir);
        for (size_t i = 0; i < n; i++) {
                char *text = NULL;

                if (jobdir_read(a->cfg.state_dir, ids[i], JOBFILE_DONE, &text) == 0)
                        resend_report(a, ids[i], text);
                free(text);
        }
        free(ids);
}

static void on_ready(void *userdata) {
        agent *a = userdata;

        resend_kept_reports(a);

        sd_notifyf(0, "STATUS=connected to controller %s, %zu jobs running", a->cfg.controller,
                   a->njobs);
}

static void on_fatal(const char *reason, void *userdata) {
        agent *a = userdata;

        log_error("controller=%s: giving up: %s", a->cfg.controller, reason);
        sd_event_exit(a->event, 1);
}

static const ctlink_ops link_ops = {
        .hello = build_hello,
        .ready = on_ready,
        .message = on_message,
        .fatal = on_fatal,
        .written = on_report_written,
};

/* Whether a job of a's table (none when a is NULL) lives in cgroup name. */
static bool cgroup_held(const agent *a, const char *name) {
        for (agent_job *j = a ? a->jobs : NULL; j; j = j->next)
                if (strcmp(j->cgroup, name) == 0)
                        return true;
        return false;
}

/* Kill and remove the job cgroups that no job of a's table (none when a is NULL) lives in:
 * those no record claims. Returns how many were removed, or -errno when the subtree cannot be
 * listed. */
static int clear_strays(cg_backend *cg, const agent *a) {
        char **names = NULL;
        int r, n = 0;

        r = cg_list_jobs(cg, &names);
        if (r < 0)
                return r;
        for (char **name = names; *name; name++) {
                if (cgroup_held(a, *name))
                        continue;
                log_warning("cgroup=%s/%s: removing a job cgroup no record claims, with every process in it",
                            cg_subtree_path(cg), *name);
                r = cg_job_kill(cg, *name, JOB_KILL_TIMEOUT_MS);
                if (r >= 0)
                        r = cg_job_remove(cg, *name);
                if (r < 0)
                        log_errno(LOG_WARNING, r, "cgroup=%s/%s: cannot remove it",
                                  cg_subtree_path(cg), *name);
                else
                        n++;
        }
        strv_free(names);
        return n;
}

/* Read and check job id's record. Returns 0 or -errno (logged). */
static int load_record(const char *dir, uint64_t id, jobfile_record *rec) {
        char err[PROTO_ERRLEN], *text = NULL;
        int r = jobdir_read(dir, id, JOBFILE_RECORD, &text);

        if (r == 0 && (r = jobfile_record_parse(text, rec, err)) == 0 && rec->id != id) {
                snprintf(err, sizeof(err), "it names job %" PRIu64, rec->id);
                r = -EINVAL;
        }
        if (r == -EINVAL)
                log_warning("job=%" PRIu64 " dir=%s: bad record: %s", id, dir, err);
        else if (r < 0)
                log_errno(LOG_WARNING, r, "job=%" PRIu64 " dir=%s: no record", id, dir);
        free(text);
        return r;
}

/* Kill a recorded job and wait for its shepherd, which writes its exit file as it goes. */
static void kill_recorded(cg_backend *cg, const char *dir, uint64_t id) {
        jobfile_record rec;
        int k;

        if (load_record(dir, id, &rec) < 0)
                return; /* its cgroup, if any, goes as a stray */
        log_warning("job=%" PRIu64 " cgroup=%s/%s: killing a job a previous agent left", id, cg_subtree_path(cg),
                    rec.cgroup);
        k = cg_job_kill(cg, rec.cgroup, JOB_KILL_TIMEOUT_MS);
        if (k == 0)
                k = shepherd_wait_gone(rec.shepherd, rec.shepherd_start, false, JOB_KILL_TIMEOUT_MS);
        if (k < 0)
                log_errno(LOG_WARNING, k, "job=%" PRIu64 " cgroup=%s/%s: cannot kill it", id, cg_subtree_path(cg),
                          rec.cgroup);
}

int agent_clear_leftovers(cg_backend *cg, const char *state_dir) {
        uint64_t *ids = NULL;
        size_t n = 0;
        int r = jobdir_list(state_dir, &ids, &n), k;

        for (size_t i = 0; i < n; i++) {
                kill_recorded(cg, state_dir, ids[i]);
                if ((k = jobdir_remove(state_dir, ids[i])) < 0)
                        log_errno(LOG_WARNING, k, "job=%" PRIu64 " dir=%s: cannot remove its files", ids[i], state_dir);
        }
        free(ids);
        k = clear_strays(cg, NULL);
        if (r == 0)
                r = jobdir_close(state_dir);
        return r < 0 ? r : k;
}

/* Watch an adopted job's shepherd, or end the job when it is gone already. The pidfd is
 * opened before the start time is checked: if it still matches then, the pidfd is the
 * shepherd's and not a later process's that reused its pid. */
static void adopt_watch(agent_job *j) {
        int fd = (int)pidfd_open(j->shepherd, 0), r = fd < 0 ? -errno : 0;

        if (!shepherd_alive(j->shepherd, j->shepherd_start)) {
                log_info(JOB_FMT ": ended while no agent watched it", JOB_ARGS(j));
                if (fd >= 0)
                        close(fd);
                agent_job_reap(j);
                return;
        }
        if (r == 0 && (r = sd_event_add_io(j->agent->event, &j->watch, fd, EPOLLIN, on_shepherd_fd, j)) < 0)
                close(fd);
        if (r == 0)
                (void)sd_event_source_set_io_fd_own(j->watch, true);
        else
                log_errno(LOG_NOTICE, r, JOB_FMT ": cannot watch shepherd %d, polling it instead", JOB_ARGS(j),
                          (int)j->shepherd);
        log_info(JOB_FMT ": re-adopted, shepherd %d still runs it%s", JOB_ARGS(j), (int)j->shepherd,
                 j->cancelled ? " (cancelled)" : "");
        /* The cancel's grace period began before the restart. */
        if (j->cancelled)
                on_grace(NULL, 0, j);
}

/* Take job id over from the record a previous agent left. */
static void adopt_record(agent *a, uint64_t id) {
        jobfile_record rec;
        agent_job *j;

        if (load_record(a->cfg.state_dir, id, &rec) < 0) {
                (void)jobdir_remove(a->cfg.state_dir, id); /* its cgroup, if any, goes as a stray */
                return;
        }
        if (!(j = calloc(1, sizeof(*j)))) {
                log_error("job=%" PRIu64 ": out of memory re-adopting it", id);
                return;
        }
        *j = (agent_job){.agent = a, .id = id, .attempt = rec.attempt, .shepherd = rec.shepherd,
                         .shepherd_start = rec.shepherd_start,
                         .adopted = true, .mem_limit = rec.mem_limit, .start_usec = rec.start_usec,
                         .cancelled = rec.cancelled};
        snprintf(j->cgroup, sizeof(j->cgroup), "%s", rec.cgroup);
        agent_job_insert(a, j);
        adopt_watch(j);
}

int agent_adopt(agent *a) {
        uint64_t *ids = NULL;
        size_t n = 0;
        int r = jobdir_list(a->cfg.state_dir, &ids, &n);

        if (r < 0)
                return log_errno(LOG_ERR, r, "dir=%s: cannot list the state directory", a->cfg.state_dir);
        for (size_t i = 0; i < n; i++) {
                char *text = NULL;

                if (jobdir_read(a->cfg.state_dir, ids[i], JOBFILE_DONE, &text) == 0)
                        resend_report(a, ids[i], text);
                else
                        adopt_record(a, ids[i]);
                free(text);
        }
        free(ids);
        r = clear_strays(a->cg, a);
        return r < 0 ? r : 0;
}

/* Adopted jobs that no pidfd watches: end those whose shepherd has gone. */
static void poll_adopted(agent *a) {
        agent_job *next;

        for (agent_job *j = a->jobs; j; j = next) {
                next = j->next;
                if (j->adopted && !j->watch && !shepherd_alive(j->shepherd, j->shepherd_start))
                        agent_job_reap(j);
        }
}

/* One usage entry: the job's cgroup counters now. NULL when they cannot be read (it is ending). */
static cJSON *usage_entry(agent_job *j) {
        cg_usage u;
        job_result sample = {0};
        cJSON *o;
        if (cg_job_usage(j->agent->cg, j->cgroup, &u) < 0 || !(o = cJSON_CreateObject()))
                return NULL;
        take_usage(&sample, &u);
        if (!cJSON_AddNumberToObject(o, "id", (double)j->id) || !cJSON_AddNumberToObject(o, "attempt", j->attempt) ||
            !cJSON_AddNumberToObject(o, "mem_current", (double)u.mem_current) || job_usage_to_json(&sample, o) < 0) {
                cJSON_Delete(o);
                return NULL;
        }
        return o;
}

/* The host's pressure, from /proc/pressure. Returns 0 or -errno (no PSI in this kernel). */
static int host_pressure(psi_stats *out) {
        static const char *const files[] = { "/proc/pressure/cpu", "/proc/pressure/memory", "/proc/pressure/io" };
        psi_resource *dst[] = { &out->cpu, &out->memory, &out->io };
        *out = (psi_stats){0};
        for (size_t i = 0; i < 3; i++) {
                char *text = NULL;
                int r = file_read_small(files[i], 0, &text);
                if (r == 0)
                        r = psi_parse(text, dst[i]);
                free(text);
                if (r < 0)
                        return r;
        }
        out->known = true;
        return 0;
}

/* Report the host's pressure and every running job's usage: a sample, so it is dropped, not
 * queued, while the controller is away. */
static int on_usage_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        agent *a = userdata;
        poll_adopted(a);
        cJSON *msg = ctlink_is_ready(a->link) ? proto_new("usage") : NULL;
        cJSON *jobs = msg ? cJSON_AddArrayToObject(msg, "jobs") : NULL;
        psi_stats host;

        if (jobs && host_pressure(&host) == 0)
                (void)psi_to_json(&host, msg);
        for (agent_job *j = jobs ? a->jobs : NULL; j; j = j->next) {
                cJSON *e = usage_entry(j);
                if (e)
                        cJSON_AddItemToArray(jobs, e);
        }
        if (jobs)
                (void)ctlink_send(a->link, msg, false);
        cJSON_Delete(msg);
        /* A time source is one-shot: re-arm it, or it never fires again. */
        int r = sd_event_source_set_time(s, usec + USAGE_PERIOD_USEC);
        return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

int agent_new(sd_event *e, const agent_config *cfg, cg_backend *cg, agent **out) {
        agent *a = calloc(1, sizeof(*a));
        int r;

        if (!a)
                return -ENOMEM;
        a->event = e;
        a->cfg = *cfg;
        a->cg = cg;
        r = ctlink_new(e, cfg->controller, cfg->name, cfg->secret, cfg->tls, cfg->tls_server_name, &link_ops, a,
                       &a->link);
        if (r == 0)
                r = sd_event_add_time_relative(e, &a->usage_timer, CLOCK_MONOTONIC, USAGE_PERIOD_USEC, 0, on_usage_tick,
                                               a);
        if (r < 0) {
                ctlink_free(a->link);
                free(a);
                return r;
        }
        *out = a;
        return 0;
}

/* Kill the job's cgroup, let its shepherd record the end, and report it cancelled. */
static void stop_job(agent_job *j) {
        jobfile_exit ex;
        int k = cg_job_kill(j->agent->cg, j->cgroup, JOB_KILL_TIMEOUT_MS);

        /* Once the cgroup is empty the shepherd only has its exit file to write; if the kill
         * failed, do not wait on a job that may be stuck. */
        if (k == 0)
                k = shepherd_wait_gone(j->shepherd, j->shepherd_start, !j->adopted, JOB_KILL_TIMEOUT_MS);
        agent_job_end(j, k == 0 && read_exit(j->agent, j->id, &ex) == 0 ? &ex : NULL, true);
}

/* Every kept report has been written to the controller's socket: forget them all, since no
 * acknowledgement will be read any more. */
static void forget_written_reports(agent *a) {
        uint64_t *ids = NULL;
        size_t n = 0;

        if (jobdir_list(a->cfg.state_dir, &ids, &n) < 0)
                return;
        for (size_t i = 0; i < n; i++)
                if (kept_report_attempt(a, ids[i]) > 0)
                        forget_report(a, ids[i]);
        free(ids);
}

size_t agent_stop(agent *a) {
        int r;

        a->stopping = true;
        if (a->cfg.stop_jobs_on_exit)
                while (a->jobs)
                        stop_job(a->jobs);
        else if (a->jobs)
                log_info("host=%s dir=%s: leaving %zu jobs running for the next agent to re-adopt", a->cfg.name,
                         a->cfg.state_dir, a->njobs);
        if (!ctlink_is_ready(a->link))
                return a->njobs;
        r = ctlink_flush(a->link, STOP_FLUSH_TIMEOUT_MS);
        if (r < 0)
                log_errno(LOG_WARNING, r, "controller=%s: last reports not all sent", a->cfg.controller);
        else
                forget_written_reports(a);
        return a->njobs;
}

void agent_free(agent *a) {
        if (!a)
                return;
        while (a->jobs)
                agent_job_free(a->jobs);
        sd_event_source_disable_unref(a->usage_timer);
        ctlink_free(a->link);
        free(a);
}
