/* userlimit.c - the running limits: how many jobs a user or a top-level department may run at
 * once, and how many CPUs a user's running jobs may hold (see state.h). */
#include "state.h"
#include <stdlib.h>

/* What a pass has kept so far of one tally's jobs, on top of what it runs. */
typedef struct kept {
        size_t jobs;
        int64_t mcpu;
} kept;

struct ctl_limit_counts {
        size_t n; /* the tallies when the pass began: one made since counts nothing */
        kept k[];
};

static kept *kept_of(const ctl_state *st, ctl_limit_counts *c, const ctl_tally *t) {
        return t && (size_t)(t - st->tallies) < c->n ? &c->k[t - st->tallies] : NULL;
}

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

bool ctl_running_limits_set(const ctl_config *c) {
        return c->max_running_per_user || c->max_running_per_dept || c->max_mcpu_per_user;
}

ctl_limit_counts *ctl_limit_counts_new(const ctl_state *st) {
        if (!ctl_running_limits_set(&st->cfg))
                return NULL;
        ctl_limit_counts *counts = calloc(1, sizeof(ctl_limit_counts) + st->ntallies * sizeof(kept));
        if (counts)
                counts->n = st->ntallies;
        return counts;
}

bool ctl_limit_admit(ctl_state *st, ctl_limit_counts *counts, job *j) {
        if (!counts)
                return true;
        ctl_tally *user = ctl_user_tally(st, j->uid), *dept = ctl_dept_tally(st, j->spec.group);
        kept *ku = kept_of(st, counts, user), *kd = kept_of(st, counts, dept);
        job_wait w = over(&st->cfg, j, user, ku, dept, kd);
        if (w != JOB_WAIT_NONE) {
                j->wait = w;
                return false;
        }
        count(ku, j);
        count(kd, j);
        return true;
}

size_t ctl_user_limits(ctl_state *st, sched_job *jobs, size_t n) {
        ctl_limit_counts *counts = ctl_limit_counts_new(st);
        if (!counts)
                return n; /* no limit set, or no memory: this pass may pass a limit */
        size_t keep = 0;
        for (size_t i = 0; i < n; i++)
                if (ctl_limit_admit(st, counts, ctl_find_job(st, jobs[i].id)))
                        jobs[keep++] = jobs[i];
        free(counts);
        return keep;
}
