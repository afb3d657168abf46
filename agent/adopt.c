/* adopt.c - take over what a previous agent left (see adopt.h). */
#include "adopt.h"
#include "timelimit.h"
#include "jobstart.h"
#include "report.h"
#include <sys/pidfd.h>
#include "fileio.h"
#include "jobdir.h"
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
#include <sys/wait.h>
#include <unistd.h>

/* Whether a job of a's table (none when a is NULL) lives in cgroup name. */
static bool cgroup_held(const agent *a, const char *name) {
        for (agent_job *j = a ? jobtab_first(&a->jobs) : NULL; j; j = j->next)
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
                if (cg_is_spare(*name))
                        log_info("cgroup=%s/%s: removing a spare cgroup a standby shepherd left", cg_subtree_path(cg),
                                 *name);
                else
                        log_warning("cgroup=%s/%s: removing a job cgroup no record claims, with every process in it",
                                    cg_subtree_path(cg), *name);
                r = cg_job_kill(cg, *name, JOB_KILL_TIMEOUT_MS);
                if (r >= 0)
                        r = cg_job_remove(cg, *name);
                if (r < 0)
                        log_errno(LOG_WARNING, r, "cgroup=%s/%s: cannot remove it", cg_subtree_path(cg), *name);
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
        if (r == 0 && (r = sd_event_add_io(j->agent->event, &j->watch, fd, EPOLLIN, agent_on_shepherd_fd, j)) < 0)
                close(fd);
        if (r == 0)
                (void)sd_event_source_set_io_fd_own(j->watch, true);
        else
                log_errno(LOG_NOTICE, r, JOB_FMT ": cannot watch shepherd %d, polling it instead", JOB_ARGS(j),
                          (int)j->shepherd);
        log_info(JOB_FMT ": re-adopted, shepherd %d still runs it%s", JOB_ARGS(j), (int)j->shepherd,
                 j->cancelled ? " (cancelled)" : "");
        /* The cancel's (or time limit's) grace period began before the restart: it is over. */
        if (j->cancelled || j->timed_out)
                agent_job_kill(j);
        else
                (void)timelimit_arm(j);
        jobstart_adopted(j);
}

/* Take job id over from the record a previous agent left. */
static void adopt_record(agent *a, uint64_t id) {
        jobfile_record rec;
        agent_job *j;

        if (load_record(a->cfg.state_dir, id, &rec) < 0) {
                (void)jobdir_remove(a->cfg.state_dir, id); /* its cgroup, if any, goes as a stray */
                return;
        }
        if (!(j = calloc(1, sizeof(*j))) || jobtab_reserve(&a->jobs) < 0) {
                free(j);
                log_error("job=%" PRIu64 ": out of memory re-adopting it", id);
                return;
        }
        *j = (agent_job){ .agent = a,
                          .steps_fd = -1,
                          .id = id,
                          .attempt = rec.attempt,
                          .shepherd = rec.shepherd,
                          .shepherd_start = rec.shepherd_start,
                          .adopted = true,
                          .mem_limit = rec.mem_limit,
                          .start_usec = rec.start_usec,
                          .cancelled = rec.cancelled,
                          .time_limit_usec = rec.time_limit_usec,
                          .timed_out = rec.timed_out };
        snprintf(j->cgroup, sizeof(j->cgroup), "%s", rec.cgroup);
        (void)jobtab_insert(&a->jobs, j); /* cannot fail: room reserved, and a record per id */
        jobcores_adopt(j);
        jobgpus_adopt(j, rec.gpu_ids);
        adopt_watch(j);
}

int agent_adopt(agent *a) {
        int r = report_resend_kept(a, adopt_record);

        if (r < 0)
                return log_errno(LOG_ERR, r, "dir=%s: cannot list the state directory", a->cfg.state_dir);
        r = clear_strays(a->cg, a);
        return r < 0 ? r : 0;
}

/* Adopted jobs that no pidfd watches: end those whose shepherd has gone. */
void adopt_poll(agent *a) {
        agent_job *next;

        for (agent_job *j = jobtab_first(&a->jobs); j; j = next) {
                next = j->next;
                if (j->adopted && !j->watch && !shepherd_alive(j->shepherd, j->shepherd_start))
                        agent_job_reap(j);
        }
}
