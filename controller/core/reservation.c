/* reservation.c - EASY backfill in the live controller: the running jobs' ends for the pure pass
 * (policies/backfill.h), and what it reserved, for users (see state.h). */
#include "state.h"
#include "backfill.h"
#include <errno.h>
#include <stdint.h>

bool ctl_easy_on(const ctl_state *st) {
        return st->cfg.order == SCHED_BACKFILL && !st->cfg.dispatcher && st->cfg.policy != SCHED_MAX_JOBS;
}

/* When j, running, ends by its limit: a job whose agent has not said it started yet starts
 * about now. */
static int64_t end_of(const ctl_state *st, const job *j) {
        int64_t start = j->start_usec ? j->start_usec : st->clock_usec, limit = j->spec.time_limit_usec;
        return limit <= 0 || limit > SCHED_FOREVER - start ? SCHED_FOREVER : start + limit;
}

void ctl_running_add(ctl_state *st, job *j, size_t node) {
        j->running_pos = SIZE_MAX;
        size_t cap = st->run_cap;
        if (sched_grow(&st->run_v, &cap, st->nrun + 1, sizeof(*st->run_v)) < 0)
                return;
        cap = st->run_cap;
        if (sched_grow(&st->run_jobs, &cap, st->nrun + 1, sizeof(*st->run_jobs)) < 0)
                return;
        st->run_cap = cap;
        st->run_v[st->nrun] = (sched_running){ node, j->spec.req, end_of(st, j) };
        st->run_jobs[st->nrun] = j;
        j->running_pos = st->nrun++;
}

void ctl_running_started(ctl_state *st, job *j) {
        if (j->running_pos < st->nrun)
                st->run_v[j->running_pos].end_usec = end_of(st, j);
}

void ctl_running_remove(ctl_state *st, job *j) {
        size_t i = j->running_pos;
        if (i >= st->nrun)
                return;
        st->nrun--; /* the last entry takes its place */
        st->run_v[i] = st->run_v[st->nrun];
        st->run_jobs[i] = st->run_jobs[st->nrun];
        st->run_jobs[i]->running_pos = i;
        j->running_pos = SIZE_MAX;
}

/* The running jobs (sched_running_fn): the array kept as they start and end. O(1). */
static int running_view(void *arg, const sched_running **out, size_t *n) {
        const ctl_state *st = arg;
        *out = st->run_v;
        *n = st->nrun;
        return 0;
}

void ctl_easy_held_back(ctl_state *st, const sched_job *jobs, size_t njobs, const sched_assignment *out, long placed) {
        bool behind = false;
        long a = 0;
        for (size_t i = 0; st->reserved_id && i < njobs; i++) {
                if (a < placed && out[a].job_id == jobs[i].id) { /* placed: out is in the jobs' order */
                        a++;
                        continue;
                }
                if (behind && sched_index_choose(&st->view, st->cfg.policy, jobs[i].req) >= 0) {
                        job *j = ctl_find_job(st, jobs[i].id);
                        if (j)
                                j->wait = JOB_WAIT_PRIORITY;
                }
                behind |= jobs[i].id == st->reserved_id;
        }
}

/* What an EASY pass reserved: the start on the job (and none on the one reserved before). */
static void note_reservation(ctl_state *st, const sched_reservation *r) {
        job *was = st->reserved_id ? ctl_find_job(st, st->reserved_id) : NULL;
        if (was)
                was->reserved_start_usec = 0;
        job *now = r->job_id ? ctl_find_job(st, r->job_id) : NULL;
        st->reserved_id = now ? now->id : 0;
        if (now)
                now->reserved_start_usec = r->start_usec == SCHED_FOREVER ? JOB_RESERVED_UNKNOWN : r->start_usec;
}

long ctl_easy_place_from(ctl_state *st, const sched_job_list *list, sched_assignment *out) {
        sched_reservation r;
        long placed = sched_easy_place_from(&st->view, st->cfg.policy, list, running_view, st, !st->cfg.unwatched,
                                            st->clock_usec, out, &r);
        if (placed >= 0)
                note_reservation(st, &r);
        return placed;
}

long ctl_easy_place(ctl_state *st, const sched_job *jobs, size_t njobs, sched_assignment *out) {
        sched_reservation r;
        long placed = sched_easy_place(&st->view, st->cfg.policy, jobs, njobs, running_view, st, !st->cfg.unwatched,
                                       st->clock_usec, out, &r);
        if (placed < 0)
                return placed;
        note_reservation(st, &r);
        ctl_easy_held_back(st, jobs, njobs, out, placed);
        return placed;
}
