/* state.c - the controller's cluster state machine (see state.h). */
#include "state.h"
#include "arrays.h"
#include "state_int.h"
#include "log.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void ctl_init(ctl_state *st, const ctl_config *cfg, const ctl_actions *act, void *userdata) {
        *st = (ctl_state){ .next_id = 1,
                           .cfg = *cfg,
                           .act = act,
                           .userdata = userdata,
                           .pending_ids = { .state = JOB_PENDING },
                           .running_ids = { .state = JOB_RUNNING } };
        sched_index_init(&st->view);
}

static void dept_sets_free(ctl_state *st) {
        for (size_t i = 0; st->dept_jobs && i < st->fair.n; i++)
                ctl_idset_free(&st->dept_jobs[i]);
        free(st->dept_jobs);
        free(st->dept_head);
        free(st->dept_npend);
        free(st->dept_sum);
        free(st->dept_cap_from);
        st->dept_jobs = NULL;
        st->dept_head = NULL;
        st->dept_npend = NULL;
        st->dept_sum = NULL;
        st->dept_cap_from = NULL;
}

static void node_free(ctl_node *n) {
        free(n->features);
        free(n->gpu_type);
        free(n->drain_reason);
        free(n->unconfirmed);
        free(n->strays);
        free(n->name);
        free(n->cgroup_mode);
        free(n->cgroup_root);
        free(n);
}

/* The allocation the pending queue lies in (NULL before the first job): no offset is applied
 * to a null pointer. */
static job **pending_base(const ctl_state *st) { return st->pending ? st->pending - st->pending_head : NULL; }

void ctl_free(ctl_state *st) {
        depidx_free(&st->deps);
        famidx_free(&st->fam);
        for (size_t i = 0; i < st->njobs; i++)
                jobpool_release(&st->pool, st->jobs[i]);
        for (size_t i = 0; i < st->nnodes; i++)
                node_free(st->nodes[i]);
        for (size_t i = 0; i < st->ntallies; i++)
                free(st->tallies[i].dept);
        free(st->tallies);
        free(st->jobs);
        free(pending_base(st));
        free(st->nodes);
        free(st->by_name);
        sched_index_free(&st->view);
        free(st->pass_jobs);
        free(st->pass_out);
        free(st->run_v);
        free(st->run_jobs);
        dept_sets_free(st);
        niceorder_free(&st->nice);
        fairorder_free(&st->fair);
        sched_dispatcher_free(st->cfg.dispatcher);
        ctl_idset_free(&st->pending_ids);
        ctl_idset_free(&st->running_ids);
        for (size_t i = 0; i < st->nusers; i++)
                ctl_idset_free(&st->users[i].live);
        free(st->users);
        for (size_t i = 0; i < st->narecs; i++) {
                ctl_arec_free(st->arecs[i]);
                free(st->arecs[i]);
        }
        free(st->arecs);
        jobtable_free(&st->byid);
        jobpool_free(&st->pool);
        *st = (ctl_state){ 0 };
}

size_t ctl_first_job_from(const ctl_state *st, uint64_t id) {
        size_t lo = 0, hi = st->njobs; /* jobs are appended in id order */
        /* Ids grow by at least one from job to job, so id is no later than id - the first id,
         * and exactly there unless ids were skipped: one look in the common case. */
        if (hi > 0 && id >= st->jobs[0]->id && id - st->jobs[0]->id < hi) {
                hi = (size_t)(id - st->jobs[0]->id);
                if (st->jobs[hi]->id == id)
                        return hi;
        }
        return ctl_jobs_rank(st->jobs, lo, hi, id);
}

job *ctl_find_job(ctl_state *st, uint64_t id) { return jobtable_find(&st->byid, id); }

/* --- indexes: jobs by id per state and per user, for bulk cancels (idset.h, ctl_idset) ------ */

/* The first member of s with an id >= id, or NULL; *visits counts the entries looked at. */
static job *idset_next(const ctl_idset *s, uint64_t id, size_t *visits) {
        for (size_t i = ctl_idset_rank(s, id); i < s->n; i++) {
                ++*visits;
                if (ctl_idset_member(s, s->v[i]))
                        return s->v[i];
        }
        return NULL;
}

static int uid_cmp(const void *key, const void *elem) {
        uid_t a = *(const uid_t *)key, b = ((const ctl_user_jobs *)elem)->uid;
        return a < b ? -1 : a > b;
}

/* The live jobs of uid, added empty when add is set and they are missing. NULL when missing
 * (or out of memory). O(log users) to find; adding a user is O(users). */
ctl_idset *ctl_user_jobs_of(ctl_state *st, uid_t uid, bool add) {
        ctl_user_jobs *u = st->nusers ? bsearch(&uid, st->users, st->nusers, sizeof(*u), uid_cmp) : NULL;
        if (u || !add)
                return u ? &u->live : NULL;
        ctl_user_jobs *grown = realloc(st->users, (st->nusers + 1) * sizeof(*grown));
        if (!grown)
                return NULL;
        st->users = grown;
        size_t i = st->nusers;
        for (; i > 0 && grown[i - 1].uid > uid; i--) /* in its place: users are few, new ones rare */
                grown[i] = grown[i - 1];
        grown[i] = (ctl_user_jobs){ .uid = uid, .live = { .state = -1 } };
        st->nusers++;
        return &grown[i].live;
}

/* The index of the jobs in state, or NULL when it has none (a terminal state). */
static ctl_idset *state_ids(ctl_state *st, job_state state) {
        return state == JOB_PENDING ? &st->pending_ids : state == JOB_RUNNING ? &st->running_ids : NULL;
}

void ctl_dept_pending(ctl_state *st, job *j, int sign) {
        if (!st->dept_jobs)
                return;
        uint32_t d = ctl_job_dept(st, j);
        ctl_idset *s = &st->dept_jobs[d];
        if (sign < 0) {
                st->dept_npend[d]--;
                st->dept_sum[d] = res_sub(st->dept_sum[d], j->spec.req);
                if (st->dept_walking) { /* the walk holds places in the set: ctl_dept_walked compacts */
                        s->nstale++;
                        return;
                }
                /* a cancel in its blocked head (a start is never there), or a compaction */
                if (st->dept_head[d].nblocked && ctl_idset_rank(s, j->id) < st->dept_head[d].at)
                        st->dept_head[d] = (ctl_dept_head){ 0 };
                ctl_idset_leave(s);
                if (s->nstale == 0)
                        st->dept_head[d] = (ctl_dept_head){ 0 };
                return;
        }
        if (ctl_idset_join(s, j) < 0) {
                log_error("job=%llu out of memory queueing it in its department: the fair order misses it",
                          (unsigned long long)j->id);
                return;
        }
        size_t at = s->v[s->n - 1] == j ? s->n - 1 : ctl_idset_rank(s, j->id);
        if (at < st->dept_head[d].at)
                st->dept_head[d] = (ctl_dept_head){ 0 }; /* a requeue, back in its id's place */
        st->dept_npend[d]++;
        st->dept_sum[d] = res_add(st->dept_sum[d], j->spec.req);
}

void ctl_dept_walked(ctl_state *st) {
        st->dept_walking = false;
        for (size_t d = 0; d < st->fair.n; d++)
                if (st->dept_jobs[d].nstale * 2 > st->dept_jobs[d].n) {
                        ctl_idset_compact(&st->dept_jobs[d]);
                        st->dept_head[d] = (ctl_dept_head){ 0 };
                }
}

void ctl_dept_request_changed(ctl_state *st, job *j, res_t was) {
        if (st->dept_jobs && j->state == JOB_PENDING) {
                uint32_t d = ctl_job_dept(st, j);
                st->dept_sum[d] = res_add(res_sub(st->dept_sum[d], was), j->spec.req);
        }
}

void ctl_pending_indexed(ctl_state *st, job *j, int sign) {
        ctl_dept_pending(st, j, sign);
        ctl_nice_pending(st, j, sign);
}

/* Index j, a job new to the state (submitted, or restored from the store). Returns 0 or -ENOMEM. */
int ctl_index_add(ctl_state *st, job *j) {
        ctl_idset *s = state_ids(st, j->state), *u;
        if (!s)
                return 0;
        if (j->state == JOB_PENDING)
                ctl_pending_indexed(st, j, +1);
        if (ctl_idset_join(s, j) < 0 || !(u = ctl_user_jobs_of(st, j->uid, true)) || ctl_idset_join(u, j) < 0)
                return -ENOMEM;
        return 0;
}

static void nice_index_failed(const job *j) {
        log_error("job=%llu out of memory indexing it by nice value: its user's places go to their other jobs",
                  (unsigned long long)j->id);
}

/* One more (sign +1) or one fewer (-1) pending job with a nice value; never below zero. */
static void nice_count(ctl_state *st, int sign) {
        st->npending_nice = sign > 0 ? st->npending_nice + 1 : st->npending_nice ? st->npending_nice - 1 : 0;
}

void ctl_nice_pending(ctl_state *st, job *j, int sign) {
        int r = 0;
        if (j->spec.nice != 0)
                nice_count(st, sign);
        if (st->nice.on)
                r = niceorder_pending(&st->nice, j, sign);
        else if (sign > 0 && j->spec.nice != 0) /* the first: the pending jobs, then j */
                r = niceorder_build(&st->nice, &st->pending_ids) < 0 ? -ENOMEM : niceorder_pending(&st->nice, j, +1);
        if (r < 0)
                nice_index_failed(j);
}

void ctl_nice_changed(ctl_state *st, job *j, int was) {
        if ((was != 0) != (j->spec.nice != 0))
                nice_count(st, was == 0 ? +1 : -1);
        if (j->spec.nice != was &&
            (st->nice.on ? niceorder_renice(&st->nice, j, was) : niceorder_build(&st->nice, &st->pending_ids)) < 0)
                nice_index_failed(j);
}

/* Move j to state to, and its entries in the indexes with it. */
void ctl_set_state(ctl_state *st, job *j, job_state to) {
        ctl_idset *from = state_ids(st, j->state), *into = state_ids(st, to), *u;
        bool was_pending = j->state == JOB_PENDING;
        j->state = to;
        if (was_pending != (to == JOB_PENDING))
                ctl_pending_indexed(st, j, was_pending ? -1 : +1);
        if (from == into)
                return;
        if (from)
                ctl_idset_leave(from);
        if (into && ctl_idset_join(into, j) < 0)
                log_error("job=%llu out of memory indexing it: bulk cancels by state miss it",
                          (unsigned long long)j->id);
        if (from && !into && (u = ctl_user_jobs_of(st, j->uid, false)))
                ctl_idset_leave(u);
}

void ctl_emit(ctl_state *st, const job *j, const char *node, const char *what, const char *reason) {
        ctl_report(st, &(ctl_event){ .job_id = j ? j->id : 0, .node = node, .what = what, .reason = reason, .job = j },
                   true);
}

void ctl_report(ctl_state *st, const ctl_event *e, bool stored) {
        void (*hook)(void *, const ctl_event *) = stored ? st->act->event : st->act->log;
        if (hook) /* the daemon logs it; the simulator installs neither */
                hook(st->userdata, e);
}

/* The tally of uid (dept NULL) or of the department dept[0..deptlen), added when add is set
 * and it is missing. NULL when missing (or out of memory). O(tallies). */
ctl_tally *ctl_tally_find(ctl_state *st, uid_t uid, const char *dept, size_t deptlen, bool add) {
        for (size_t i = 0; i < st->ntallies; i++) {
                ctl_tally *t = &st->tallies[i];
                if (dept ? t->dept && strlen(t->dept) == deptlen && strncmp(t->dept, dept, deptlen) == 0
                         : !t->dept && t->uid == uid)
                        return t;
        }
        ctl_tally *grown = add ? realloc(st->tallies, (st->ntallies + 1) * sizeof(*grown)) : NULL;
        if (!grown)
                return NULL;
        st->tallies = grown;
        ctl_tally *t = &grown[st->ntallies];
        *t = (ctl_tally){ .uid = uid, .dept = dept ? strndup(dept, deptlen) : NULL };
        if (dept && !t->dept)
                return NULL;
        st->ntallies++;
        return t;
}

/* The length of group's top-level department ("physics" of "physics/theory"). */
size_t ctl_top_dept_len(const char *group) { return strcspn(group, "/"); }

/* Count j in (sign +1) or out of (-1) the pending jobs of its user and of its department. A tally
 * that could not be made counts nothing, and never goes below zero. */
static void tally_count(ctl_tally *t, ssize_t delta) {
        if (t)
                t->pending = delta >= 0 || t->pending >= (size_t)-delta ? t->pending + (size_t)delta : 0;
}

/* Count delta jobs of uid in group (NULL: none) in (delta > 0) or out of the pending jobs of
 * the user and of the department. */
void ctl_tally_by(ctl_state *st, uid_t uid, const char *group, ssize_t delta) {
        /* One after the other: adding the department's tally may move the user's (realloc). */
        tally_count(ctl_tally_find(st, uid, NULL, 0, delta > 0), delta);
        if (group)
                tally_count(ctl_tally_find(st, 0, group, ctl_top_dept_len(group), delta > 0), delta);
}

void ctl_tally_job(ctl_state *st, const job *j, int sign) { ctl_tally_by(st, j->uid, j->spec.group, sign); }

/* Count j in (sign +1) or out of (-1) the running jobs of its user and of its department. */
static void tally_running(ctl_state *st, const job *j, int sign) {
        ctl_tally *t = ctl_tally_find(st, j->uid, NULL, 0, sign > 0);
        for (int i = 0; i < 2 && t; i++) {
                t->running = sign > 0 ? t->running + 1 : t->running ? t->running - 1 : 0;
                t->running_mcpu += sign * j->spec.req.mcpu;
                t = j->spec.group && i == 0
                            ? ctl_tally_find(st, 0, j->spec.group, ctl_top_dept_len(j->spec.group), sign > 0)
                            : NULL;
        }
}

ctl_tally *ctl_user_tally(ctl_state *st, uid_t uid) { return ctl_tally_find(st, uid, NULL, 0, false); }

ctl_tally *ctl_dept_tally(ctl_state *st, const char *group) {
        return group ? ctl_tally_find(st, 0, group, ctl_top_dept_len(group), false) : NULL;
}

/* Add j to st->jobs in its id's place: the end, but for the later slices of an array whose
 * ids were reserved before the jobs submitted meanwhile (O(those jobs)). */
int ctl_append_job(ctl_state *st, job *j) {
        if (sched_grow(&st->jobs, &st->jobs_cap, st->njobs + 1, sizeof(*st->jobs)) < 0 ||
            jobtable_reserve(&st->byid, 1) < 0)
                return -ENOMEM;
        (void)jobtable_add(&st->byid, j); /* room reserved */
        size_t i = st->njobs > 0 && st->jobs[st->njobs - 1]->id > j->id ? ctl_first_job_from(st, j->id) : st->njobs;
        memmove(&st->jobs[i + 1], &st->jobs[i], (st->njobs - i) * sizeof(*st->jobs));
        st->jobs[i] = j;
        st->njobs++;
        if (j->id >= st->next_id)
                st->next_id = j->id + 1;
        return 0;
}

int ctl_pending_reserve(ctl_state *st, size_t n) {
        if (st->pending_head + st->npending + n <= st->pending_cap)
                return 0;
        job **base = pending_base(st);
        if (st->pending_head > 0 && st->pending_head >= st->npending) { /* paid for by the starts that freed them */
                memmove(base, st->pending, st->npending * sizeof(*st->pending));
                st->pending = base;
                st->pending_head = 0;
        }
        size_t cap = st->pending_cap;
        if (sched_grow(&base, &cap, st->pending_head + st->npending + n, sizeof(*base)) < 0)
                return -ENOMEM;
        st->pending = base + st->pending_head;
        st->pending_cap = cap;
        return 0;
}

void ctl_pending_noted(ctl_state *st, const job *j) {
        st->pending_floor = res_min(st->pending_floor, j->spec.req);
        st->pending_choosy |= j->singleton || ctl_spec_selective(&j->spec);
        st->throttle_seen |= j->spec.array_throttle != 0;
}

int ctl_queue_pending(ctl_state *st, job *j) {
        if (ctl_pending_reserve(st, 1) < 0)
                return -ENOMEM;
        ctl_pending_noted(st, j);
        /* an array's slice, or a requeued job before it moves: a dispatcher's whole pass rechecks */
        st->pending_unsorted |= st->npending > 0 && st->pending[st->npending - 1]->id > j->id;
        st->pending[st->npending++] = j; /* behind the settled ones: first_to_offer */
        ctl_tally_job(st, j, +1);
        return 0;
}

/* Queue a job that was pending before (a requeued one) in its submission (id) place. O(pending). */
int ctl_requeue_pending(ctl_state *st, job *j) {
        if (ctl_queue_pending(st, j) < 0)
                return -ENOMEM;
        size_t i = st->npending - 1;
        for (; i > 0 && st->pending[i - 1]->id > j->id; i--)
                st->pending[i] = st->pending[i - 1];
        st->pending[i] = j;
        st->settled = false; /* among the settled ones */
        if (i < st->blocked_head)
                st->blocked_head = i; /* no longer all blocked before it */
        /* its reason to wait is the next pass's to set */
        st->disp_marked = false;
        return 0;
}

/* Drop from the pending queue the jobs of its [first, first + n) that are no longer pending,
 * keeping the order, when the jobs before first are fewer than those behind the range: the
 * kept ones go to the range's end, the jobs before it move up, and the head follows. Returns
 * false (nothing done) otherwise. O(n + first). */
static bool compact_toward_tail(ctl_state *st, size_t first, size_t n) {
        if (first > st->npending - first - n)
                return false;
        size_t kept = first + n;
        for (size_t i = first + n; i-- > first;)
                if (st->pending[i]->state == JOB_PENDING)
                        st->pending[--kept] = st->pending[i];
        size_t gone = kept - first;
        if (gone == 0)
                return true;
        memmove(&st->pending[gone], &st->pending[0], first * sizeof(*st->pending));
        st->pending += gone;
        st->pending_head += gone;
        st->npending -= gone;
        st->settled = false; /* the job that held the queue or a reservation may be gone */
        return true;
}

/* Drop from the pending queue the jobs of its [first, first + n) that are no longer pending,
 * keeping the order. O(n), and a move of the shorter of the jobs before the range and those
 * behind it. */
void ctl_compact_pending_range(ctl_state *st, size_t first, size_t n) {
        /* the blocked head loses its entries that leave (cancelled jobs); the others keep their
         * order at its start */
        size_t end = first + n < st->blocked_head ? first + n : st->blocked_head, gone = 0;
        for (size_t i = first; i < end; i++)
                gone += st->pending[i]->state != JOB_PENDING;
        st->blocked_head -= gone;
        if (compact_toward_tail(st, first, n))
                return;
        size_t kept = first;
        for (size_t i = first; i < first + n; i++)
                if (st->pending[i]->state == JOB_PENDING)
                        st->pending[kept++] = st->pending[i];
        if (kept == first + n)
                return;
        memmove(&st->pending[kept], &st->pending[first + n], (st->npending - first - n) * sizeof(*st->pending));
        st->npending -= first + n - kept;
        st->settled = false; /* the job that held the queue or a reservation may be gone */
}

static void compact_pending(ctl_state *st) {
        ctl_compact_pending_range(st, 0, st->npending);
        st->nstale = 0;
}

uint32_t ctl_job_dept(ctl_state *st, job *j) {
        if (!j->fair_dept)
                j->fair_dept = fairorder_dept(&st->fair, j->spec.group) + 1;
        return j->fair_dept - 1;
}

/* What each department runs, for the fair order (empty before ctl_set_depts). */
static void dept_charge(ctl_state *st, job *j, int sign) {
        if (st->fair.n)
                fairorder_charge(&st->fair, ctl_job_dept(st, j), j->spec.req, sign);
}

void ctl_charge(ctl_state *st, ctl_node *n, job *j) {
        j->node_index = (uint32_t)n->index + 1;
        n->used = res_add(n->used, j->spec.req);
        n->running++;
        n->nexclusive += j->spec.exclusive;
        dept_charge(st, j, +1);
        tally_running(st, j, +1);
        ctl_running_add(st, j, n->index);
        ctl_view_sync(st, n);
}

/* The job left n: free its resources, and tell an event-driven policy. */
void ctl_release(ctl_state *st, ctl_node *n, job *j) {
        n->used = res_sub(n->used, j->spec.req);
        n->running--;
        n->nexclusive -= j->spec.exclusive;
        dept_charge(st, j, -1);
        tally_running(st, j, -1);
        ctl_running_remove(st, j);
        ctl_view_sync(st, n);
        if (st->cfg.dispatcher) {
                sched_job v = ctl_sched_view(j);
                sched_dispatch_exit(st->cfg.dispatcher, &v, n->index);
        }
}

/* Move a job to a terminal state, persist it and tell whoever waits. */
void ctl_finish(ctl_state *st, job *j, job_state state, int64_t now, const char *reason) {
        job_state was = j->state;
        ctl_set_state(st, j, state);
        j->end_usec = now;
        if (reason && !j->result.error)
                j->result.error = strdup(reason);
        ctl_emit(st, j, j->node, job_state_name(state), j->result.error);
        (void)st->act->persist(st->userdata, j);
        st->act->terminal(st->userdata, j);
        ctl_family_moved(st, j, was);
        depidx_changed(st, j, was, now);
}

int ctl_restore(ctl_state *st, job *j, ctl_time now) {
        if (ctl_append_job(st, j) < 0 || ctl_index_add(st, j) < 0)
                return -ENOMEM;
        ctl_arec *a = ctl_arec_of(st, j->id);
        if (a && a->first == j->id && !a->owner)
                ctl_arec_attach(st, a, j);
        if (ctl_family_link(st, j) < 0)
                return -ENOMEM;
        if (j->state == JOB_PENDING)
                return ctl_queue_pending(st, j) < 0 || depidx_add(st, j) < 0 ? -ENOMEM : 0;
        if (j->state != JOB_RUNNING)
                return 0;
        ctl_node *n = ctl_find_node(st, j->node);
        if (!n && !(n = ctl_node_create(st, j->node)))
                return -ENOMEM;
        n->last_heard_mono_usec = now.mono_usec; /* the timeout starts with this controller */
        ctl_charge(st, n, j);
        depidx_changed(st, j, JOB_PENDING, now.real_usec); /* it runs: a singleton of its name waits */
        return 0;
}

/* The pending jobs of each leaf department of st->fair, from the queue. Returns 0 or -ENOMEM. */
static int dept_sets_build(ctl_state *st) {
        size_t m = st->fair.n;
        st->dept_jobs = calloc(m, sizeof(*st->dept_jobs));
        st->dept_head = calloc(m, sizeof(*st->dept_head));
        st->dept_npend = calloc(m, sizeof(*st->dept_npend));
        st->dept_sum = calloc(m, sizeof(*st->dept_sum));
        st->dept_cap_from = calloc(m, sizeof(*st->dept_cap_from));
        if (!st->dept_jobs || !st->dept_head || !st->dept_npend || !st->dept_sum || !st->dept_cap_from) {
                dept_sets_free(st);
                return -ENOMEM;
        }
        for (size_t i = 0; i < m; i++)
                st->dept_jobs[i].state = JOB_PENDING;
        for (size_t i = 0; i < st->pending_ids.n; i++)
                if (st->pending_ids.v[i]->state == JOB_PENDING)
                        ctl_dept_pending(st, st->pending_ids.v[i], +1);
        return 0;
}

int ctl_set_depts(ctl_state *st, int fairness) {
        static const depts none;
        dept_sets_free(st);
        fairorder_free(&st->fair);
        st->cfg.fairness = fairness;
        ctl_schedule_dirty(st); /* new weights, caps or users reorder the queue */
        int r = fairorder_init(&st->fair, st->cfg.depts ? st->cfg.depts : &none,
                               fairness >= 0 ? fairness : FAIR_DEFAULT);
        for (size_t i = 0; i < st->njobs; i++)
                st->jobs[i]->fair_dept = 0; /* the tree's nodes are numbered anew */
        if (r == 0)
                r = dept_sets_build(st);
        for (size_t i = 0; r == 0 && i < st->njobs; i++)
                if (st->jobs[i]->state == JOB_RUNNING)
                        dept_charge(st, st->jobs[i], +1);
        return r;
}

void ctl_end_pending(ctl_state *st, job *j, int64_t now, const char *reason) {
        ctl_tally_job(st, j, -1);
        ctl_finish(st, j, JOB_CANCELLED, now, reason);
        st->nstale++;
        st->settled = false;
}

/* Cancel j on behalf of uid: a pending job ends now (the queue drops it at the next pass), a
 * running one is cancelled by its agent. Returns 0 (ended), 1 (its agent was told), -EPERM,
 * -EALREADY or -EHOSTDOWN (its node is down). */
static int cancel_job(ctl_state *st, job *j, uid_t uid, int64_t now) {
        if (uid != 0 && uid != j->uid)
                return -EPERM;
        if (job_state_is_terminal(j->state))
                return -EALREADY;
        if (j->state == JOB_PENDING) {
                ctl_end_pending(st, j, now, NULL);
                return 0;
        }
        ctl_node *n = ctl_find_node(st, j->node);
        if (!n || !n->up)
                return -EHOSTDOWN;
        ctl_report(st,
                   &(ctl_event){ .job_id = j->id, .node = n->name, .what = "cancel-requested", .job = j, .uid = uid },
                   false);
        st->act->cancel(st->userdata, n, j, st->cfg.kill_grace_ms);
        return 1;
}

int ctl_cancel(ctl_state *st, uint64_t id, uid_t uid, int64_t now, char err[PROTO_ERRLEN]) {
        job *j = ctl_job_named(st, id);
        if (!j) {
                snprintf(err, PROTO_ERRLEN, "no job %llu", (unsigned long long)id);
                return -ENOENT;
        }
        int r = cancel_job(st, j, uid, now);
        if (r == -EPERM)
                snprintf(err, PROTO_ERRLEN, "job %llu belongs to %s: only its owner or root may cancel it",
                         (unsigned long long)id, j->user ? j->user : "another user");
        else if (r == -EALREADY)
                snprintf(err, PROTO_ERRLEN, "job %llu already %s", (unsigned long long)id, job_state_name(j->state));
        else if (r == -EHOSTDOWN)
                snprintf(err, PROTO_ERRLEN,
                         "job %llu runs on %s, which is down: it will be cancelled or lost when "
                         "the node returns or times out",
                         (unsigned long long)id, j->node);
        return r < 0 ? r : 0;
}

/* Whether f names j, a job it has reached. */
static bool cancel_matches(const ctl_cancel_filter *f, const job *j) {
        return !job_state_is_terminal(j->state) && (f->state < 0 || (int)j->state == f->state) &&
               (f->uid < 0 || j->uid == (uid_t)f->uid) && (!f->array || j->array_first == f->array);
}

/* The first id from id on that f may name, or 0 when none. */
static uint64_t cancel_next_id(const ctl_cancel_filter *f, uint64_t id) {
        if (f->array && id < f->array)
                id = f->array;
        for (size_t r = 0; f->ranges && r < f->nranges; r++)
                if (id <= f->ranges[2 * r + 1])
                        return id < f->ranges[2 * r] ? f->ranges[2 * r] : id;
        return f->ranges ? 0 : id;
}

/* The first live job from id on in the index that holds uid's jobs (when uid >= 0), else
 * state's (JOB_PENDING, JOB_RUNNING), else both states', or NULL: with a uid, it may be in
 * another state. O(log n) and the stale entries passed, which *visits counts with it. */
static job *index_next(ctl_state *st, int64_t uid, int state, uint64_t id, size_t *visits) {
        if (uid >= 0) {
                ctl_idset *u = ctl_user_jobs_of(st, (uid_t)uid, false);
                return u ? idset_next(u, id, visits) : NULL;
        }
        job *p = state != JOB_RUNNING ? idset_next(&st->pending_ids, id, visits) : NULL;
        job *r = state != JOB_PENDING ? idset_next(&st->running_ids, id, visits) : NULL;
        return !p ? r : !r ? p : p->id < r->id ? p : r;
}

job *ctl_next_live(ctl_state *st, int64_t uid, uint64_t id) {
        size_t visits = 0;
        return index_next(st, uid, -1, id, &visits);
}

int ctl_cancel_some(ctl_state *st, const ctl_cancel_filter *f, uid_t uid, int64_t now, uint64_t *cursor, size_t max,
                    ctl_cancel_counts *counts) {
        if (*cursor <= 1)
                ctl_cancel_unmade(st, f, uid, now, counts);
        for (size_t seen = 0; seen < max; seen++) {
                uint64_t id = cancel_next_id(f, *cursor);
                job *j = id ? index_next(st, f->uid, f->state, id, &st->cancel_visits) : NULL;
                if (!j)
                        return 1;
                *cursor = j->id + 1;
                if (id < j->id && cancel_next_id(f, j->id) != j->id)
                        continue; /* j is past the range; look again from the next */
                if (f->array && j->array_first != f->array)
                        return 1; /* an array's ids are consecutive */
                if (!cancel_matches(f, j))
                        continue;
                int r = cancel_job(st, j, uid, now);
                if (r == 0)
                        counts->cancelled++;
                else if (r == 1)
                        counts->stopping++;
                else if (r == -EPERM)
                        counts->refused++;
                else if (r == -EHOSTDOWN)
                        counts->unreachable++;
        }
        return 0;
}

void ctl_tidy(ctl_state *st) {
        if (st->nstale)
                compact_pending(st);
}

/* --- forgetting ended jobs (the simulator's) ---------------------------------------------------- */

void ctl_forget_ended(ctl_state *st) {
        ctl_tidy(st); /* the queue's cancelled entries name ended jobs */
        ctl_idset_compact(&st->pending_ids);
        ctl_idset_compact(&st->running_ids);
        niceorder_compact(&st->nice);
        for (size_t i = 0; i < st->nusers; i++)
                ctl_idset_compact(&st->users[i].live);
        for (size_t i = 0; st->dept_jobs && i < st->fair.n; i++) {
                ctl_idset_compact(&st->dept_jobs[i]);
                st->dept_head[i] = (ctl_dept_head){ 0 };
        }
        size_t kept = 0;
        for (size_t i = 0; i < st->njobs; i++) {
                job *j = st->jobs[i];
                if (!job_state_is_terminal(j->state)) {
                        st->jobs[kept++] = j;
                        continue;
                }
                jobtable_remove(&st->byid, j->id);
                jobpool_release(&st->pool, j);
        }
        st->njobs = kept;
        (void)jobtable_fit(&st->byid); /* else the table stays as large as it was: lookups are right either way */
}
