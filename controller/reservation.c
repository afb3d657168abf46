/* reservation.c - EASY backfill in the live controller: the running jobs' ends for the pure pass
 * (policies/backfill.h), and what it reserved, for users (see state.h). */
#include "state.h"
#include "backfill.h"
#include <errno.h>
#include <stdlib.h>

bool ctl_easy_on(const ctl_state *st) {
        return st->cfg.order == SCHED_BACKFILL && !st->cfg.dispatcher && st->cfg.policy != SCHED_MAX_JOBS;
}

/* What the pass asks for the running jobs: the state, and the array made for it. */
typedef struct running_ctx {
        ctl_state *st;
        sched_running *v;
} running_ctx;

/* The running jobs on the view's nodes and when their limits end them (sched_running_fn). A job
 * whose agent has not said it started yet starts about now; one past its limit is being killed:
 * it ends now, too. O(running). */
static int running_view(void *arg, const sched_running **out, size_t *n) {
        running_ctx *c = arg;
        ctl_state *st = c->st;
        const ctl_idset *ids = &st->running_ids;
        sched_running *v = c->v = malloc((ids->n + 1) * sizeof(*v));
        int64_t now = st->clock_usec;
        *n = 0;
        *out = v;
        for (size_t i = 0; v && i < ids->n; i++) {
                const job *j = ids->v[i];
                if (j->state != JOB_RUNNING)
                        continue; /* a stale entry of the index */
                int64_t start = j->start_usec ? j->start_usec : now, limit = j->spec.time_limit_usec;
                int64_t end = limit <= 0 || limit > SCHED_FOREVER - start ? SCHED_FOREVER : start + limit;
                v[(*n)++] = (sched_running){ j->node_index, j->spec.req, end > now ? end : now };
        }
        return v ? 0 : -ENOMEM;
}

/* The jobs behind the reserved one that were not placed but fit a node now wait for it. */
static void mark_held_back(ctl_state *st, const sched_job *jobs, size_t njobs, const sched_assignment *out,
                           long placed, uint64_t reserved) {
        bool behind = false;
        long a = 0;
        for (size_t i = 0; i < njobs; i++) {
                if (a < placed && out[a].job_id == jobs[i].id) { /* placed: out is in the jobs' order */
                        a++;
                        continue;
                }
                if (behind && sched_index_choose(&st->view, st->cfg.policy, jobs[i].req) >= 0) {
                        job *j = ctl_find_job(st, jobs[i].id);
                        if (j)
                                j->wait = JOB_WAIT_PRIORITY;
                }
                behind |= jobs[i].id == reserved;
        }
}

long ctl_easy_place(ctl_state *st, const sched_job *jobs, size_t njobs, sched_assignment *out) {
        running_ctx ctx = { st, NULL };
        sched_reservation r;
        long placed = sched_easy_place(&st->view, st->cfg.policy, jobs, njobs, running_view, &ctx,
                                       !st->cfg.skip_reserved_start, st->clock_usec, out, &r);
        free(ctx.v);
        if (placed < 0)
                return placed;
        job *was = st->reserved_id ? ctl_find_job(st, st->reserved_id) : NULL;
        if (was)
                was->reserved_start_usec = 0;
        job *now = r.job_id ? ctl_find_job(st, r.job_id) : NULL;
        st->reserved_id = now ? now->id : 0;
        if (now)
                now->reserved_start_usec = r.start_usec == SCHED_FOREVER ? JOB_RESERVED_UNKNOWN : r.start_usec;
        if (now)
                mark_held_back(st, jobs, njobs, out, placed, r.job_id);
        return placed;
}
