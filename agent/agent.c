/* agent.c - the job table and what the agent does with the controller's messages.
 *
 * A job is in the table from its launch (or its re-adoption after a restart) until its shepherd
 * has ended and its cgroup is gone; the shepherd's watch, the launch's pipe and deadline, the
 * cancel timer and a kill under way hang off the table entry and die with it. Nothing here
 * waits on a job: launches (jobstart.c) and kills (cgkill.c) go on while the loop runs, so the
 * controller link's heartbeats flow whatever the jobs do. Reports are report.c's, the take-over
 * after a restart adopt.c's, the launch message's checks launchmsg.c's. */
#include "agent-internal.h"
#include "adopt.h"
#include "cgkill.h"
#include "jobstart.h"
#include "jobsync.h"
#include "launchmsg.h"
#include "outread.h"
#include "log.h"
#include "proto.h"
#include "report.h"
#include "shepherd.h"
#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

#define STOP_FLUSH_TIMEOUT_MS   2000
#define CANCEL_DEFAULT_GRACE_MS 10000
#define CANCEL_MAX_GRACE_MS     (24 * 3600 * 1000)

/* Unlink (if in the table) and free a job with its event sources. */
void agent_job_free(agent_job *j) {
        if (j->in_table)
                jobtab_remove(&j->agent->jobs, j);
        jobstart_unqueue(j);
        jobcores_release(j);
        jobgpus_release(j);
        sd_event_source_disable_unref(j->watch);
        sd_event_source_disable_unref(j->grace);
        sd_event_source_disable_unref(j->progress);
        if (j->steps_fd >= 0)
                close(j->steps_fd);
        sd_event_source_disable_unref(j->deadline);
        sd_event_source_disable_unref(j->kill);
        sd_event_source_disable_unref(j->limit);
        free(j);
}

/* Write the job's record to the state directory. Returns 0 or -errno (logged). */
int agent_job_save(agent_job *j) {
        jobfile_record rec = { .id = j->id,
                               .shepherd = j->shepherd,
                               .shepherd_start = j->shepherd_start,
                               .mem_limit = j->mem_limit,
                               .start_usec = j->start_usec,
                               .cancelled = j->cancelled,
                               .attempt = j->attempt,
                               .time_limit_usec = j->time_limit_usec,
                               .timed_out = j->timed_out };
        char *text;
        int r;

        snprintf(rec.cgroup, sizeof(rec.cgroup), "%s", j->cgroup);
        snprintf(rec.gpu_ids, sizeof(rec.gpu_ids), "%s", j->gpu_ids);
        text = jobfile_record_format(&rec);
        r = text ? jobsync_replace(j->agent->sync, j->id, JOBFILE_RECORD, text) : -ENOMEM;
        free(text);
        if (r < 0)
                log_errno(LOG_WARNING, r, JOB_FMT " dir=%s: cannot write the job's record", JOB_ARGS(j),
                          j->agent->cfg.state_dir);
        return r;
}

static void on_end_killed(int r, void *userdata) {
        agent_job *j = userdata;

        if (r < 0)
                log_errno(LOG_WARNING, r, JOB_FMT ": cannot kill what the job left behind", JOB_ARGS(j));
        report_job_end(j, false);
}

/* The shepherd has ended: kill what the job left in its cgroup, a round per turn of the loop,
 * then end the job as its exit file says. */
void agent_job_reap(agent_job *j) {
        agent *a = j->agent;
        int r;

        if (j->ending)
                return;
        j->ending = true;
        /* An adopted shepherd's pidfd stays readable: it has said what it had to. */
        (void)sd_event_source_set_enabled(j->watch, SD_EVENT_OFF);
        j->exit_known = report_read_exit(a, j->id, &j->exit) == 0;
        j->kill = sd_event_source_disable_unref(j->kill); /* a cancel's, superseded */
        /* The first round now: a job that left nothing behind (most do) ends in this turn,
         * not after a timer's turn. */
        if ((r = cg_job_kill(a->cg, j->cgroup, 0)) != -ETIMEDOUT) {
                on_end_killed(r, j);
                return;
        }
        r = cgkill_start(a->event, a->cg, j->cgroup, JOB_KILL_TIMEOUT_MS, true, on_end_killed, j, &j->kill);
        if (r < 0)
                on_end_killed(r, j);
}

static void on_killed(int r, void *userdata) {
        agent_job *j = userdata;

        /* Done: a later cancel may kill again (what the job started since, say). */
        j->kill = sd_event_source_unref(j->kill);
        if (r < 0)
                log_errno(LOG_WARNING, r, JOB_FMT ": cannot kill the job", JOB_ARGS(j));
}

/* Kill every task of the job, without waiting in the loop; its shepherd's end then ends it. */
void agent_job_kill(agent_job *j) {
        int r;

        if (j->kill || j->ending || j->cgroup_foreign)
                return;
        r = cgkill_start(j->agent->event, j->agent->cg, j->cgroup, JOB_KILL_TIMEOUT_MS, false, on_killed, j, &j->kill);
        if (r < 0)
                on_killed(r, j);
}

/* An adopted shepherd's pidfd became readable: it has ended. */
int agent_on_shepherd_fd(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void)s;
        (void)fd;
        (void)revents;
        agent_job_reap(userdata);
        return 0;
}

static void handle_launch(agent *a, const cJSON *msg) {
        char err[PROTO_ERRLEN];
        launch_msg m = { 0 };
        int64_t id, attempt = 1;

        if (launchmsg_require_int(msg, "id", 1, INT64_MAX, &id, err) < 0 ||
            proto_get_int(msg, "attempt", 1, UINT32_MAX, &attempt, err) == -EINVAL) {
                log_warning("controller=%s: launch ignored: %s", a->cfg.controller, err);
                return;
        }
        m.id = (uint64_t)id;
        m.attempt = (uint32_t)attempt;
        agent_job *old = jobtab_find(&a->jobs, m.id);
        if (old && old->attempt == m.attempt) {
                log_warning("job=%" PRIu64 ": launch ignored, the job is already running", m.id);
                return;
        }
        if (!old && report_kept_attempt(a, m.id) == m.attempt) { /* a launch sent again after a reconnect */
                log_info("job=%" PRIu64 ": launch ignored, attempt %" PRIu32 " already ran here (its report is kept)",
                         m.id, m.attempt);
                return;
        }
        if (old) { /* never two runs of one job at once: this one fails rather than start */
                snprintf(err, sizeof(err), "attempt %" PRIu32 " of the job still runs here", old->attempt);
                log_warning("job=%" PRIu64 ": launch of attempt %" PRIu32 " refused: %s", m.id, m.attempt, err);
                report_not_run(a, m.id, m.attempt, JOB_FAILED, err);
                return;
        }
        if (launchmsg_parse(msg, &m, err) < 0) {
                log_warning("job=%" PRIu64 ": bad launch: %s", m.id, err);
                report_not_run(a, m.id, m.attempt, JOB_FAILED, err);
                job_spec_free(&m.spec); /* parsed before a later field failed */
                return;
        }
        jobstart_queue(a, &m);
        job_spec_free(&m.spec);
}

static int on_grace(sd_event_source *s, uint64_t usec, void *userdata) {
        agent_job *j = userdata;
        (void)s;
        (void)usec;

        log_info(JOB_FMT ": grace period over, killing the whole cgroup", JOB_ARGS(j));
        agent_job_kill(j);
        return 0;
}

void agent_job_terminate(agent_job *j, int64_t grace_ms) {
        int k = cg_job_signal(j->agent->cg, j->cgroup, SIGTERM);
        if (k < 0)
                log_errno(LOG_WARNING, k, JOB_FMT ": cannot send SIGTERM", JOB_ARGS(j));
        j->grace = sd_event_source_disable_unref(j->grace);
        k = sd_event_add_time_relative(j->agent->event, &j->grace, CLOCK_MONOTONIC, (uint64_t)grace_ms * 1000, 0,
                                       on_grace, j);
        if (k < 0) {
                log_errno(LOG_WARNING, k, JOB_FMT ": no grace timer, killing now", JOB_ARGS(j));
                on_grace(NULL, 0, j);
        }
}

static void handle_cancel(agent *a, const cJSON *msg) {
        static const char *const fields[] = { "id", "grace_ms", NULL };
        char err[PROTO_ERRLEN];
        int64_t id, grace_ms = CANCEL_DEFAULT_GRACE_MS;
        agent_job *j;

        if (proto_check_fields(msg, fields, err) < 0 || launchmsg_require_int(msg, "id", 1, INT64_MAX, &id, err) < 0 ||
            proto_get_int(msg, "grace_ms", 0, CANCEL_MAX_GRACE_MS, &grace_ms, err) == -EINVAL) {
                log_warning("controller=%s: cancel ignored: %s", a->cfg.controller, err);
                return;
        }
        j = jobtab_find(&a->jobs, (uint64_t)id);
        if (!j) {
                log_warning("job=%" PRId64 ": cancel ignored, no such job here", id);
                return;
        }
        if (j->cancelled) {
                log_debug(JOB_FMT ": already being cancelled", JOB_ARGS(j));
                return;
        }
        if (j->queued) { /* nothing of it exists yet */
                log_info(JOB_FMT ": cancelled before it started", JOB_ARGS(j));
                report_not_run(a, j->id, j->attempt, JOB_CANCELLED, "cancelled before it started");
                agent_job_free(j);
                return;
        }
        j->cancelled = true;
        (void)agent_job_save(j); /* so that an agent restarted meanwhile still calls it cancelled */
        log_info(JOB_FMT ": cancelled, SIGTERM now, SIGKILL in %" PRId64 " ms", JOB_ARGS(j), grace_ms);
        agent_job_terminate(j, grace_ms);
}

/* The departments' weights after a reload of the controller: the department cgroups this host
 * has take them now, with their jobs running on. */
static void apply_weights(agent *a, const cJSON *msg) {
        static const char *const fields[] = { "depts", NULL }, *const entry_fields[] = { "group", "dept_weights",
                                                                                         NULL };
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
                if (r == 0 && (r = launchmsg_dept_weights(e, &m, err)) == 0)
                        r = cg_dept_reweight(a->cg, group, m.dept_weights, m.ndept_weights, err, sizeof(err));
                if (r < 0)
                        log_warning("controller=%s: department weights: %s", a->cfg.controller, err);
        }
}

/* Kept for the shepherds still making cgroups with the weights their launch said: each
 * gives them these again once it is done (agent_dept_weights_recheck). */
static void handle_weights(agent *a, const cJSON *msg) {
        cJSON *copy = cJSON_Duplicate(msg, true);

        apply_weights(a, msg);
        a->weights_seq++;
        cJSON_Delete(a->weights);
        a->weights = copy;
        if (!copy)
                log_warning("controller=%s: department weights: out of memory to keep them for the launches under way",
                            a->cfg.controller);
}

void agent_dept_weights_recheck(agent_job *j) {
        agent *a = j->agent;

        if (j->weights_seq == a->weights_seq || !a->weights)
                return;
        j->weights_seq = a->weights_seq;
        apply_weights(a, a->weights);
}
/* A read of a job that has already ended here does not wait for new bytes: its end, which
 * wakes the reads in flight (outread_job_ended), is over. */
static void handle_read_output(agent *a, const cJSON *msg) {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
        bool gone = cJSON_IsNumber(id) && id->valuedouble >= 1 && !jobtab_find(&a->jobs, (uint64_t)id->valuedouble);

        outread_handle(a->outread, msg, gone);
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
                report_handle_ack(a, msg);
        else if (strcmp(type, "read_output") == 0)
                handle_read_output(a, msg);
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
                  (running = cJSON_AddArrayToObject(m, "running")) &&
                  (!a->cfg.features || cJSON_AddStringToObject(m, "features", a->cfg.features)) &&
                  (!a->cfg.gpus.n || cJSON_AddNumberToObject(m, "gpus", (double)a->cfg.gpus.n)) &&
                  (!a->cfg.gpu_type || cJSON_AddStringToObject(m, "gpu_type", a->cfg.gpu_type));

        for (agent_job *j = jobtab_first(&a->jobs); ok && j; j = j->next) {
                cJSON *n = cJSON_CreateNumber((double)j->id);
                ok = n && cJSON_AddItemToArray(running, n);
        }
        if (!ok) {
                cJSON_Delete(m);
                return NULL;
        }
        return m;
}

static void on_ready(void *userdata) {
        agent *a = userdata;
        int r = report_resend_kept(a, NULL);

        if (r < 0)
                log_errno(LOG_WARNING, r, "dir=%s: cannot list the state directory", a->cfg.state_dir);
        report_started_again(a);

        sd_notifyf(0, "STATUS=connected to controller %s, %zu jobs running", a->cfg.controller, jobtab_count(&a->jobs));
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
        .written = report_written,
};

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
                r = sd_event_add_time_relative(e, &a->usage_timer, CLOCK_MONOTONIC, USAGE_PERIOD_USEC, 0,
                                               report_usage_tick, a);
        if (r == 0)
                r = jobstart_init(a);
        if (r == 0 && (r = jobsync_new(e, cfg->state_dir, &a->sync)) == 0)
                jobsync_on_done(a->sync, jobstart_removals_done, a);
        if (r == 0)
                r = jobcores_init(a);
        if (r == 0)
                r = outread_new(e, a->link, &a->outread);
        if (r < 0) {
                sd_event_source_disable_unref(a->usage_timer);
                jobstart_free(a);
                ctlink_free(a->link);
                free(a);
                return r;
        }
        *out = a;
        return 0;
}

/* Kill the job's cgroup, let its shepherd record the end, and report it cancelled. */
static void stop_job(agent_job *j) {
        int k;

        if (j->queued) {
                report_not_run(j->agent, j->id, j->attempt, JOB_CANCELLED, "agent stopped");
                agent_job_free(j);
                return;
        }
        k = cg_job_kill(j->agent->cg, j->cgroup, JOB_KILL_TIMEOUT_MS);

        if (j->ending) { /* it ended on its own: only its leftovers' kill was under way */
                report_job_end(j, false);
                return;
        }
        /* Once the cgroup is empty the shepherd only has its exit file to write; if the kill
         * failed, do not wait on a job that may be stuck. */
        if (k == 0)
                k = shepherd_wait_gone(j->shepherd, j->shepherd_start, !j->adopted, JOB_KILL_TIMEOUT_MS);
        j->exit_known = k == 0 && report_read_exit(j->agent, j->id, &j->exit) == 0;
        report_job_end(j, true);
}

size_t agent_stop(agent *a) {
        int r;

        a->stopping = true;
        if (a->cfg.stop_jobs_on_exit)
                while (jobtab_first(&a->jobs))
                        stop_job(jobtab_first(&a->jobs));
        else if (jobtab_count(&a->jobs))
                log_info("host=%s dir=%s: leaving %zu jobs running for the next agent to re-adopt", a->cfg.name,
                         a->cfg.state_dir, jobtab_count(&a->jobs));
        jobsync_drain(a->sync); /* the cgroups of the jobs just stopped gone, or the failure logged */
        if (!ctlink_is_ready(a->link))
                return jobtab_count(&a->jobs);
        r = ctlink_flush(a->link, STOP_FLUSH_TIMEOUT_MS);
        if (r < 0)
                log_errno(LOG_WARNING, r, "controller=%s: last reports not all sent", a->cfg.controller);
        else
                report_forget_written(a);
        return jobtab_count(&a->jobs);
}

void agent_free(agent *a) {
        if (!a)
                return;
        free(a->cores); /* first: the jobs it leaves running keep the cores they have */
        a->cores = NULL;
        while (jobtab_first(&a->jobs))
                agent_job_free(jobtab_first(&a->jobs));
        jobtab_free(&a->jobs);
        report_free_kept(a);
        sd_event_source_disable_unref(a->usage_timer);
        jobstart_free(a);
        jobsync_free(a->sync);
        outread_free(a->outread);
        ctlink_free(a->link);
        cJSON_Delete(a->weights);
        free(a);
}
