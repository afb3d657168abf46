/* userlimit.c - the running limits: how many jobs a user or a top-level department may run at
 * once, and how many CPUs a user's running jobs may hold (see state.h). */
#include "state.h"
#include <stdlib.h>

/* What a pass has kept so far of one tally's jobs, on top of what it runs. */
typedef struct kept {
        size_t jobs;
        int64_t mcpu;
} kept;

static kept *kept_of(const ctl_state *st, kept *k, const ctl_tally *t) { return t ? &k[t - st->tallies] : NULL; }

static void count(kept *k, const job *j) {
        if (k) {
                k->jobs++;
                k->mcpu += j->spec.req.mcpu;
        }
}

/* Why j, with the jobs kept before it, passes a limit: JOB_WAIT_NONE when it does not. */
static job_wait over(const ctl_config *c, const job *j, const ctl_tally *user, const kept *ku, const ctl_tally *dept,
                     const kept *kd) {
        size_t user_jobs = (user ? user->running : 0) + (ku ? ku->jobs : 0);
        int64_t user_mcpu = (user ? user->running_mcpu : 0) + (ku ? ku->mcpu : 0);
        if (c->max_running_per_user && user_jobs >= c->max_running_per_user)
                return JOB_WAIT_USER_LIMIT;
        if (c->max_mcpu_per_user && user_mcpu + j->spec.req.mcpu > c->max_mcpu_per_user)
                return JOB_WAIT_USER_LIMIT;
        if (c->max_running_per_dept && j->spec.group &&
            (dept ? dept->running : 0) + (kd ? kd->jobs : 0) >= c->max_running_per_dept)
                return JOB_WAIT_DEPT_CAP;
        return JOB_WAIT_NONE;
}

size_t ctl_user_limits(ctl_state *st, sched_job *jobs, size_t n) {
        const ctl_config *c = &st->cfg;
        if (!c->max_running_per_user && !c->max_running_per_dept && !c->max_mcpu_per_user)
                return n;
        kept *k = calloc(st->ntallies + 1, sizeof(*k));
        if (!k)
                return n; /* no memory: this pass may pass a limit */
        size_t keep = 0;
        for (size_t i = 0; i < n; i++) {
                job *j = ctl_find_job(st, jobs[i].id);
                ctl_tally *user = ctl_user_tally(st, j->uid), *dept = ctl_dept_tally(st, j->spec.group);
                kept *ku = kept_of(st, k, user), *kd = kept_of(st, k, dept);
                job_wait w = over(c, j, user, ku, dept, kd);
                if (w != JOB_WAIT_NONE) {
                        j->wait = w;
                        continue;
                }
                count(ku, j);
                count(kd, j);
                jobs[keep++] = jobs[i];
        }
        free(k);
        return keep;
}
