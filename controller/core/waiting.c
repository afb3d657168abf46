/* waiting.c - when pending jobs may start: their reasons to wait as a pass sees them, the filter
 * of the jobs that may not start (held, dependency, begin time), the nice order within a user's
 * own jobs, and holds and updates of pending jobs (see state.h). */
#include "state.h"
#include "state_int.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Why j may not start now, or JOB_WAIT_NONE when it may. */
static job_wait blocked_by(ctl_state *st, const job *j) {
        if (j->spec.hold)
                return JOB_WAIT_HELD;
        if (j->deps_never)
                return JOB_WAIT_DEP_NEVER;
        if (j->deps_unmet || (j->singleton && depidx_singleton_busy(st, j)))
                return JOB_WAIT_DEPENDENCY;
        if (j->spec.begin_usec > st->clock_usec)
                return JOB_WAIT_BEGIN;
        return JOB_WAIT_NONE;
}

static bool is_blocked(job_wait w) {
        return w == JOB_WAIT_HELD || w == JOB_WAIT_DEP_NEVER || w == JOB_WAIT_DEPENDENCY || w == JOB_WAIT_BEGIN;
}

void ctl_wait_tick(ctl_state *st, int64_t now) {
        st->clock_usec = now;
        if (st->next_begin_usec && now >= st->next_begin_usec) {
                st->next_begin_usec = 0;
                ctl_schedule_dirty(st);
        }
}

/* What a job that may start waits for until a pass says more: under strict FIFO all but the first
 * that fits nowhere wait behind it (ctl_wait_blocker). */
static job_wait eligible_wait(const ctl_state *st) {
        return !st->cfg.dispatcher && st->cfg.order == SCHED_STRICT_FIFO ? JOB_WAIT_PRIORITY : JOB_WAIT_RESOURCES;
}

typedef struct name_pos {
        uint64_t key;
        size_t pos;
} name_pos;

static int by_name_then_pos(const void *x, const void *y) {
        const name_pos *a = x, *b = y;
        if (a->key != b->key)
                return a->key < b->key ? -1 : 1;
        return (a->pos > b->pos) - (a->pos < b->pos);
}

/* Among the jobs of [first, first + n) that may start, a singleton behind another job of its
 * user and name waits: one pass starts the first of them only. Returns how many now wait.
 * O(n log n); the caller calls it only when a singleton is among them. */
static size_t singletons_behind(ctl_state *st, size_t first, size_t n) {
        name_pos *v = malloc((n + 1) * sizeof(*v));
        size_t m = 0, behind = 0;
        for (size_t i = first; i < first + n; i++)
                if (st->pending[i]->state == JOB_PENDING && !is_blocked(st->pending[i]->wait) && v)
                        v[m++] = (name_pos){ depidx_name_key(st->pending[i]), i };
        if (!v)
                return 0; /* no memory: this pass may start two of a name */
        if (v)
                qsort(v, m, sizeof(*v), by_name_then_pos);
        for (size_t k = 1; k < m; k++) {
                job *j = st->pending[v[k].pos];
                if (v[k].key == v[k - 1].key && j->singleton) {
                        j->wait = JOB_WAIT_DEPENDENCY;
                        behind++;
                }
        }
        free(v);
        return behind;
}

bool ctl_wait_mark_job(ctl_state *st, job *j) {
        j->wait = blocked_by(st, j);
        if (j->wait == JOB_WAIT_BEGIN)
                st->next_begin_usec = ctl_earliest(st->next_begin_usec, j->spec.begin_usec);
        if (j->wait != JOB_WAIT_NONE)
                return true;
        j->wait = eligible_wait(st);
        return false;
}

size_t ctl_wait_mark(ctl_state *st, size_t first, size_t n) {
        size_t blocked = 0;
        bool singletons = false;
        for (size_t i = first; i < first + n; i++) {
                job *j = st->pending[i];
                if (j->state != JOB_PENDING)
                        continue;
                bool b = ctl_wait_mark_job(st, j);
                singletons |= j->singleton && !b;
                blocked += b;
        }
        return blocked + (singletons ? singletons_behind(st, first, n) : 0);
}

size_t ctl_wait_drop(ctl_state *st, sched_job *jobs, size_t n) {
        size_t kept = 0;
        for (size_t i = 0; i < n; i++) {
                const job *j = ctl_find_job(st, jobs[i].id);
                if (j && !is_blocked(j->wait))
                        jobs[kept++] = jobs[i];
        }
        return kept;
}

bool ctl_wait_offerable(const job *j) { return j->state == JOB_PENDING && !is_blocked(j->wait); }

void ctl_wait_capped(ctl_state *st, job *j, bool marked) {
        if (marked ? !is_blocked(j->wait) : !ctl_wait_mark_job(st, j))
                j->wait = JOB_WAIT_DEPT_CAP;
}

job_wait ctl_wait_shown(const ctl_state *st, const job *j) {
        if (j->state != JOB_PENDING || is_blocked(j->wait) || !st->dept_cap_from || !j->fair_dept)
                return j->wait;
        uint64_t from = st->dept_cap_from[j->fair_dept - 1];
        return from && j->id >= from ? JOB_WAIT_DEPT_CAP : j->wait;
}

void ctl_wait_blocker(ctl_state *st, const sched_job *jobs, size_t offered, long placed) {
        if (placed < 0 || (size_t)placed >= offered || st->cfg.order != SCHED_STRICT_FIFO)
                return;
        job *j = ctl_find_job(st, jobs[placed].id);
        if (j && j->state == JOB_PENDING)
                j->wait = JOB_WAIT_RESOURCES;
}

/* --- nice ------------------------------------------------------------------------------------ */

typedef struct nice_entry {
        const job *j;
        size_t pos;
} nice_entry;

static int same_owner_cmp(const nice_entry *a, const nice_entry *b) {
        if (a->j->uid != b->j->uid)
                return a->j->uid < b->j->uid ? -1 : 1;
        const char *ga = a->j->spec.group ? a->j->spec.group : "", *gb = b->j->spec.group ? b->j->spec.group : "";
        return strcmp(ga, gb);
}

/* By owner, then place: the places each user's jobs in a group hold. */
static int by_place(const void *x, const void *y) {
        const nice_entry *a = x, *b = y;
        int c = same_owner_cmp(a, b);
        return c ? c : (a->pos > b->pos) - (a->pos < b->pos);
}

/* By owner, then nice, then id: who takes those places. */
static int by_nice(const void *x, const void *y) {
        const nice_entry *a = x, *b = y;
        int c = same_owner_cmp(a, b);
        if (c)
                return c;
        if (a->j->spec.nice != b->j->spec.nice)
                return a->j->spec.nice < b->j->spec.nice ? -1 : 1;
        return (a->j->id > b->j->id) - (a->j->id < b->j->id);
}

int ctl_wait_nice(ctl_state *st, sched_job *jobs, size_t n) {
        nice_entry *places = malloc((n + 1) * sizeof(*places)), *takers = malloc((n + 1) * sizeof(*takers));
        sched_job *copy = malloc((n + 1) * sizeof(*copy));
        int r = places && takers && copy ? 0 : -ENOMEM;
        for (size_t i = 0; r == 0 && i < n; i++) {
                places[i] = (nice_entry){ ctl_find_job(st, jobs[i].id), i };
                if (!places[i].j)
                        r = -ENOENT; /* cannot be: every offered job is known */
        }
        if (r == 0) {
                memcpy(takers, places, n * sizeof(*takers));
                memcpy(copy, jobs, n * sizeof(*copy));
                qsort(places, n, sizeof(*places), by_place);
                qsort(takers, n, sizeof(*takers), by_nice);
                for (size_t k = 0; k < n; k++) /* the k-th of both lists is of the same owner */
                        jobs[places[k].pos] = copy[takers[k].pos];
        }
        free(places);
        free(takers);
        free(copy);
        return r == -ENOENT ? 0 : r;
}

/* --- holds and updates ----------------------------------------------------------------------- */

/* Pending job id, if uid may change it. Returns it, or NULL with err set and *r = -errno. */
static job *pending_job(ctl_state *st, uint64_t id, uid_t uid, const char *what, int *r, char err[PROTO_ERRLEN]) {
        job *j = ctl_job_named(st, id);
        *r = 0;
        if (!j) {
                snprintf(err, PROTO_ERRLEN, "no job %llu", (unsigned long long)id);
                *r = -ENOENT;
        } else if (uid != 0 && uid != j->uid) {
                snprintf(err, PROTO_ERRLEN, "job %llu belongs to %s: only its owner or root may %s it",
                         (unsigned long long)id, j->user ? j->user : "another user", what);
                *r = -EPERM;
        } else if (j->state != JOB_PENDING) {
                snprintf(err, PROTO_ERRLEN, "job %llu is %s: only a pending job can be %s", (unsigned long long)id,
                         job_state_name(j->state), strcmp(what, "update") == 0 ? "updated" : "held or released");
                *r = -EBUSY;
        }
        return *r ? NULL : j;
}

/* Store j's change and let the next pass look at the whole queue again. */
static void changed(ctl_state *st, job *j, const char *what, uid_t uid) {
        ctl_report(st, &(ctl_event){ .job_id = j->id, .what = what, .job = j, .uid = uid }, true);
        (void)st->act->persist(st->userdata, j);
        ctl_schedule_dirty(st);
}

int ctl_hold(ctl_state *st, uint64_t id, uid_t uid, bool hold, char err[PROTO_ERRLEN]) {
        int r;
        job *j = pending_job(st, id, uid, hold ? "hold" : "release", &r, err);
        if (!j)
                return r;
        if (j->spec.hold == hold) {
                snprintf(err, PROTO_ERRLEN, "job %llu is %s", (unsigned long long)id,
                         hold ? "held already" : "not held");
                return -EALREADY;
        }
        j->spec.hold = hold;
        j->wait = hold ? JOB_WAIT_HELD : JOB_WAIT_NONE;
        changed(st, j, hold ? "held" : "released", uid);
        return 0;
}

int ctl_update(ctl_state *st, uint64_t id, uid_t uid, const ctl_update_req *u, char err[PROTO_ERRLEN]) {
        int r;
        job *j = pending_job(st, id, uid, "update", &r, err);
        if (!j)
                return r;
        res_t req = j->spec.req;
        if (u->mcpu >= 0)
                req.mcpu = u->mcpu;
        if (u->mem >= 0)
                req.mem = u->mem;
        if (u->gpus >= 0)
                req.gpus = u->gpus;
        if (j->spec.mem_high > req.mem) {
                snprintf(err, PROTO_ERRLEN, "job %llu has a soft memory limit above that memory",
                         (unsigned long long)id);
                return -EINVAL;
        }
        if (u->nice != INT_MIN && u->nice < 0 && uid != 0) {
                snprintf(err, PROTO_ERRLEN, "nice: only root may give a negative value (%d)", u->nice);
                return -EPERM;
        }
        int64_t limit = u->time_limit_usec == INT64_MIN ? j->spec.time_limit_usec : u->time_limit_usec;
        if ((r = ctl_request_feasible(st, req, err)) < 0 ||
            (u->time_limit_usec != INT64_MIN &&
             (r = depts_time_limit(st->cfg.depts, j->spec.group, st->cfg.default_time_usec, st->cfg.max_time_usec,
                                   &limit, err, PROTO_ERRLEN)) < 0))
                return r;
        res_t was = j->spec.req;
        j->spec.req = req;
        ctl_dept_request_changed(st, j, was);
        j->spec.time_limit_usec = limit;
        int nice_was = j->spec.nice;
        if (u->nice != INT_MIN)
                j->spec.nice = u->nice;
        ctl_nice_changed(st, j, nice_was);
        ctl_pending_noted(st, j);
        changed(st, j, "updated", uid);
        return 0;
}
