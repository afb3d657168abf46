/* report.c - reports to the controller, kept until acknowledged (see report.h). */
#include "report.h"
#include "clock.h"
#include "adopt.h"
#include "agent-state.h"
#include "fileio.h"
#include "jobdir.h"
#include "jobsync.h"
#include "log.h"
#include "outread.h"
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
#include <sys/wait.h>
#include <unistd.h>

/* A report kept in the state directory until the controller acknowledges it (idmap's key
 * first), and which attempt it is about: known without its file, which a launch (an open that
 * failed) and an acknowledgement (an open, two reads and a parse) each read for it. */
typedef struct kept_report {
        uint64_t id;
        uint32_t attempt;
} kept_report;

/* Remember that the report of job id's attempt is kept. Out of memory it is not (logged): a
 * launch of that attempt sent again would run it again, as when its file cannot be written. */
static void remember_kept(agent *a, uint64_t id, uint32_t attempt) {
        kept_report *k = idmap_find(&a->kept, id);

        if (!k && (k = malloc(sizeof(*k)))) {
                k->id = id;
                if (idmap_add(&a->kept, k) < 0) {
                        free(k);
                        k = NULL;
                }
        }
        if (k)
                k->attempt = attempt;
        else
                log_error("job=%" PRIu64 ": out of memory remembering its kept report", id);
}

/* Queue a report; it survives a disconnect. A tracked one (finished) keeps its files in the
 * state directory until it has been written to the controller (report_written). */
static void send_report(agent *a, uint64_t id, cJSON *msg, bool built, bool tracked) {
        int r;

        if (!built) {
                log_error("job=%" PRIu64 ": out of memory building a report", id);
                return;
        }
        r = tracked ? ctlink_send_tracked(a->link, msg, id) : ctlink_send(a->link, msg, true);
        if (r < 0)
                log_errno(LOG_ERR, r, "job=%" PRIu64 " controller=%s: cannot queue the report", id, a->cfg.controller);
        else if (!ctlink_is_ready(a->link))
                log_debug("job=%" PRIu64 " controller=%s: report kept until the controller is back", id,
                          a->cfg.controller);
}

/* Keep the report in the state directory until the controller acknowledges it, so that a
 * restarted agent sends it again, and send it at once: the controller's log makes it durable
 * before anything acts on it (jobdir.c). A report that cannot be kept goes all the same. */
static void send_finished(agent *a, uint64_t id, uint32_t attempt, job_state st, const job_result *r,
                          int64_t start_usec, int64_t end_usec) {
        cJSON *m = proto_new("finished");
        bool ok = m && cJSON_AddNumberToObject(m, "id", (double)id) && cJSON_AddNumberToObject(m, "attempt", attempt) &&
                  cJSON_AddStringToObject(m, "state", job_state_name(st)) && job_result_to_json(r, m) == 0 &&
                  (!start_usec || cJSON_AddNumberToObject(m, "start_usec", (double)start_usec)) &&
                  cJSON_AddNumberToObject(m, "end_usec", (double)end_usec);
        char *text = ok ? proto_print(m) : NULL;
        int k = text ? jobsync_replace(a->sync, id, JOBFILE_DONE, text) : -ENOMEM;

        free(text);
        if (k == 0)
                remember_kept(a, id, attempt);
        else if (ok)
                log_errno(LOG_WARNING, k, "job=%" PRIu64 " dir=%s: cannot keep the report on disk, sending it now", id,
                          a->cfg.state_dir);
        send_report(a, id, m, ok, true);
        cJSON_Delete(m);
}

/* The job's report is done with: remove its files, or only the report when a later attempt of
 * the job runs here (its record is the new run's). */
static void forget_report(agent *a, uint64_t id) {
        int r = jobsync_remove(a->sync, id, !jobtab_find(&a->jobs, id));

        free(idmap_remove(&a->kept, id));

        if (r < 0)
                log_errno(LOG_WARNING, r, "job=%" PRIu64 " dir=%s: cannot queue the removal of the job's files", id,
                          a->cfg.state_dir);
}

/* A report reached the controller's socket. Only a stopping agent, which will not read the
 * acknowledgement, is done with it then; otherwise the controller may die before reading it. */
void report_written(uint64_t id, void *userdata) {
        agent *a = userdata;

        if (a->stopping)
                forget_report(a, id);
}

/* The attempt a kept report is about (1 when it does not say), or 0 when there is none. */
uint32_t report_kept_attempt(agent *a, uint64_t id) {
        const kept_report *k = idmap_find(&a->kept, id);

        return k ? k->attempt : 0;
}

void report_free_kept(agent *a) {
        for (size_t i = 0; i < a->kept.cap; i++)
                free(a->kept.slots[i]);
        idmap_free(&a->kept);
}

/* The controller has stored the end of this attempt of the job: its kept report may go. */
void report_handle_ack(agent *a, const cJSON *msg) {
        static const char *const fields[] = { "id", "attempt", NULL };
        char err[PROTO_ERRLEN];
        int64_t id, attempt = 1;

        if (proto_check_fields(msg, fields, err) < 0 || proto_get_int(msg, "id", 1, INT64_MAX, &id, err) < 0 ||
            proto_get_int(msg, "attempt", 1, UINT32_MAX, &attempt, err) == -EINVAL) {
                log_warning("controller=%s: ack ignored: %s", a->cfg.controller, *err ? err : "no id");
                return;
        }
        if (report_kept_attempt(a, (uint64_t)id) == (uint32_t)attempt)
                forget_report(a, (uint64_t)id);
}

/* The start time is the record's (start_shepherd writes it before the job may start), so a
 * restarted agent reports the same one; an adopted job's pid is not kept: it goes without. */
void report_started(agent_job *j) {
        cJSON *m = proto_new("started");
        bool ok = m && cJSON_AddNumberToObject(m, "id", (double)j->id) &&
                  cJSON_AddNumberToObject(m, "attempt", j->attempt) &&
                  (!j->pid || cJSON_AddNumberToObject(m, "pid", j->pid)) &&
                  cJSON_AddNumberToObject(m, "start_usec", (double)j->start_usec) &&
                  (!j->gpu_ids[0] || cJSON_AddStringToObject(m, "gpu_ids", j->gpu_ids));

        send_report(j->agent, j->id, m, ok, false);
        cJSON_Delete(m);
}

/* Report again the start of every job whose launch is over and which runs: the first report
 * may have died unread with the previous agent or controller; the controller keeps the first
 * it reads. */
void report_started_again(agent *a) {
        for (agent_job *j = jobtab_first(&a->jobs); j; j = j->next)
                if (!j->queued && !j->starting && !j->ending && !j->start_error[0])
                        report_started(j);
}

/* Report a job that never ran. */
void report_not_run(agent *a, uint64_t id, uint32_t attempt, job_state st, const char *error) {
        job_result r = { .exit_code = st == JOB_FAILED ? START_FAILED_EXIT_CODE : 0, .error = (char *)error };

        send_finished(a, id, attempt, st, &r, 0, clock_real_usec());
}

/* A job ended by its time limit: timeout, however its main process took the SIGTERM (as Slurm). */
static job_state judge_timeout(const agent_job *j, job_result *r, char *ebuf, size_t len) {
        char limit[32], how[64];
        const char *sig = agent_state_error(JOB_FAILED, r, 0, how, sizeof(how));

        snprintf(ebuf, len, "time limit %s reached%s%s", units_format_time(j->time_limit_usec, limit, sizeof(limit)),
                 sig ? ": " : "", sig ? sig : "");
        r->error = ebuf;
        return JOB_TIMEOUT;
}

/* The state and error of a job whose main process ended as ex says (NULL: unknown, its
 * shepherd died without saying); stopping says the agent itself ended it. A job whose end is
 * unknown is lost, as the controller calls a job its agent vanished with: its shepherd is
 * killed with a crashed agent (systemd's KillMode=mixed), and whether the next agent or the
 * controller's timeout tells the end first must not change it (nor whether it is requeued). */
static job_state judge_end(const agent_job *j, const jobfile_exit *ex, bool stopping, job_result *r, char *ebuf,
                           size_t len) {
        job_state st;

        if (stopping) {
                r->error = "agent stopped";
                return JOB_CANCELLED;
        }
        if (j->start_error[0]) {
                r->exit_code = START_FAILED_EXIT_CODE;
                r->signal = 0;
                r->error = (char *)j->start_error;
                return JOB_FAILED;
        }
        if (!ex) {
                snprintf(ebuf, len, "exit status lost: shepherd %d ended without recording it", (int)j->shepherd);
                r->error = ebuf;
                return JOB_LOST;
        }
        if (j->timed_out)
                return judge_timeout(j, r, ebuf, len);
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

/* The job's cgroup is empty, or could not be emptied (logged): read the usage, queue the
 * cgroup's removal (jobsync.h), report how the main process ended (j->exit, when known), and drop the job. stopping
 * says the agent itself is ending it. */
void report_job_end(agent_job *j, bool stopping) {
        agent *a = j->agent;
        const jobfile_exit *ex = j->exit_known ? &j->exit : NULL;
        char ebuf[ERRLEN], peak[32];
        job_result r = { .exit_code = ex ? ex->exit_code : 0, .signal = ex ? ex->signal : stopping ? SIGKILL : 0 };
        cg_usage u = { 0 };
        job_state st;
        int k;

        /* Read after the kill, so that the usage covers every task the job ever had. */
        k = cg_job_usage(a->cg, j->cgroup, &u);
        if (k < 0)
                log_errno(LOG_WARNING, k, JOB_FMT ": cannot read the job's usage", JOB_ARGS(j));
        take_usage(&r, &u);
        cg_job_forget(a->cg, j->cgroup);
        st = judge_end(j, ex, stopping, &r, ebuf, sizeof(ebuf));
        /* Off the loop: one rmdir per v1 hierarchy and the departments' pruning, retried while
         * killed tasks leave, took up to 0.5 s in a turn. */
        k = jobsync_remove_cgroup(a->sync, a->cg, j->id, j->cgroup);
        if (k < 0)
                log_errno(LOG_WARNING, k, JOB_FMT ": cannot queue the removal of the job's cgroup", JOB_ARGS(j));
        log_info(JOB_FMT ": %s, exit code %d, signal %d, cpu %" PRIu64 " us, peak memory %s, "
                         "oom kills %" PRIu64 "%s%s",
                 JOB_ARGS(j), job_state_name(st), r.exit_code, r.signal, r.cpu_usec,
                 units_format_size((int64_t)r.mem_peak, peak, sizeof(peak)), r.oom_kills, r.error ? ": " : "",
                 r.error ? r.error : "");
        /* The start goes with the end when the job is known to have exec'd (its shepherd writes
         * an exit file only then): its own report may have died unread with an earlier agent. */
        send_finished(a, j->id, j->attempt, st, &r, ex || j->pid > 0 ? j->start_usec : 0,
                      ex ? ex->end_usec : clock_real_usec());
        outread_job_ended(a->outread, j->id); /* after the report: the controller knows the end first */
        agent_job_free(j);
}

/* Read the exit status the job's shepherd wrote. Returns 0 or -errno (logged). */
int report_read_exit(agent *a, uint64_t id, jobfile_exit *ex) {
        char err[PROTO_ERRLEN], *text = NULL;
        int r = jobdir_read(a->cfg.state_dir, id, JOBFILE_EXIT, &text);

        if (r == 0 && (r = jobfile_exit_parse(text, ex, err)) < 0)
                log_warning("job=%" PRIu64 " dir=%s: bad exit file: %s", id, a->cfg.state_dir, err);
        else if (r < 0)
                log_errno(LOG_WARNING, r, "job=%" PRIu64 " dir=%s: no exit status", id, a->cfg.state_dir);
        free(text);
        return r;
}

/* Send the report a previous agent kept for job id (text) but may not have delivered. */
static void report_resend(agent *a, uint64_t id, const char *text) {
        cJSON *m = cJSON_Parse(text);
        const char *type = m ? proto_type(m) : NULL;
        char err[PROTO_ERRLEN];
        int64_t attempt = 1;

        if (!type || strcmp(type, "finished") != 0) {
                log_warning("job=%" PRIu64 " dir=%s: dropping a kept report that is not a finished message", id,
                            a->cfg.state_dir);
                (void)jobdir_remove(a->cfg.state_dir, id);
        } else {
                log_info("job=%" PRIu64 ": sending its kept report again", id);
                if (proto_get_int(m, "attempt", 1, UINT32_MAX, &attempt, err) == -EINVAL)
                        attempt = 0; /* kept, and sent, but about no attempt a launch names */
                remember_kept(a, id, (uint32_t)attempt);
                send_report(a, id, m, true, true);
        }
        cJSON_Delete(m);
}

/* Send again every report kept in the state directory: the controller may have died with one
 * written to its socket but unread. A report still queued goes twice; the controller takes the
 * first and acknowledges both. A job with no kept report goes to other, when not NULL. */
int report_resend_kept(agent *a, void (*other)(agent *a, uint64_t id)) {
        uint64_t *ids = NULL;
        size_t n = 0;
        int r = jobdir_list(a->cfg.state_dir, &ids, &n);

        if (r < 0)
                return r;
        for (size_t i = 0; i < n; i++) {
                char *text = NULL;

                if (jobsync_pending(a->sync, ids[i])) /* acknowledged, being forgotten */
                        continue;
                if (jobdir_read(a->cfg.state_dir, ids[i], JOBFILE_DONE, &text) == 0)
                        report_resend(a, ids[i], text);
                else if (other)
                        other(a, ids[i]);
                free(text);
        }
        free(ids);
        return 0;
}

/* Every kept report has been written to the controller's socket: forget them all, since no
 * acknowledgement will be read any more. */
void report_forget_written(agent *a) {
        uint64_t *ids = NULL;
        size_t n = 0;

        if (jobdir_list(a->cfg.state_dir, &ids, &n) < 0)
                return;
        for (size_t i = 0; i < n; i++)
                if (report_kept_attempt(a, ids[i]) > 0)
                        forget_report(a, ids[i]);
        free(ids);
}

/* One usage entry: the job's cgroup counters now. NULL when they cannot be read (it is ending)
 * or there is no cgroup yet (it is queued: no use looking). */
static cJSON *usage_entry(agent_job *j) {
        cg_usage u;
        job_result sample = { 0 };
        cJSON *o;
        if (j->queued || cg_job_usage(j->agent->cg, j->cgroup, &u) < 0 || !(o = cJSON_CreateObject()))
                return NULL;
        take_usage(&sample, &u);
        if (j->agent->cfg.nvml && j->gpu_ids[0])
                sample.gpu_known = nvml_read(j->agent->cfg.nvml, &j->agent->cfg.gpus, j->gpu_ids, &sample.gpu_util,
                                             &sample.gpu_mem) == 0;
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
        *out = (psi_stats){ 0 };
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
int report_usage_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        agent *a = userdata;
        adopt_poll(a);
        cJSON *msg = ctlink_is_ready(a->link) ? proto_new("usage") : NULL;
        cJSON *jobs = msg ? cJSON_AddArrayToObject(msg, "jobs") : NULL;
        psi_stats host;

        if (jobs && host_pressure(&host) == 0)
                (void)psi_to_json(&host, msg);
        for (agent_job *j = jobs ? jobtab_first(&a->jobs) : NULL; j; j = j->next) {
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
