/* pass.c - the scheduling pass (state.h, ctl_schedule): the view of the nodes kept between
 * passes, what a pass need not look at again, the placements and their launches. Part of the
 * state machine (state_int.h). */
#include "state_int.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --- the scheduling view: what a pass sees of the nodes, kept between passes ---------------- */

/* Whether jobs may be placed on n: its agent is connected and talks, it is not drained, and no
 * exclusive job holds it. */
static bool placeable(const ctl_node *n) { return n->up && !n->silent && !n->drain_reason && n->nexclusive == 0; }

/* What n has free: its capacity less its jobs' and its strays' requests. */
static res_t node_free(const ctl_node *n) { return res_sub(res_sub(n->capacity, n->used), n->stray_held); }

/* Make node n's entry of the view what n is now (after its use, capacity or state changed). */
void ctl_view_sync(ctl_state *st, const ctl_node *n) {
        sched_machine *m = &st->view.machines[n->index];
        sched_machine now = {
                .index = (uint32_t)n->index, .capacity = n->capacity, .free = node_free(n), .up = placeable(n)
        };
        if (res_equal(m->free, now.free) && res_equal(m->capacity, now.capacity) && m->up == now.up)
                return; /* a placement the pass already made there */
        *m = now;
        sched_index_update(&st->view, n->index);
        st->settled = false;
}

/* Node i's entry of the view as the node is, index included, whatever the entry held: a policy
 * that does not keep the index (a scan, a dispatcher) changed it without the index, or placed a
 * job there whose launch then failed. */
static void view_reset(ctl_state *st, size_t i) {
        const ctl_node *n = st->nodes[i];
        st->view.machines[i].free = node_free(n);
        sched_index_update(&st->view, i);
}

/* What the policies see of a job. */
sched_job ctl_sched_view(const job *j) {
        return (sched_job){ .id = j->id,
                            .req = j->spec.req,
                            .runtime = (double)j->spec.expected_usec / 1e6,
                            .type = j->spec.job_type,
                            .limit_usec = j->spec.time_limit_usec > 0 ? j->spec.time_limit_usec : 0 };
}

/* Room for every pending job in st->pass_jobs and as many assignments in st->pass_out.
 * Returns 0 or -ENOMEM. */
static int pass_room(ctl_state *st) {
        if (st->npending <= st->pass_cap)
                return 0;
        size_t cap = st->pass_cap;
        if (sched_grow(&st->pass_jobs, &cap, st->npending, sizeof(*st->pass_jobs)) < 0)
                return -ENOMEM;
        cap = st->pass_cap;
        if (sched_grow(&st->pass_out, &cap, st->npending, sizeof(*st->pass_out)) < 0)
                return -ENOMEM;
        st->pass_cap = cap;
        return 0;
}

/* Offer pending job j as the i-th of the pass's view. */
static void view_job(ctl_state *st, size_t i, const job *j) {
        st->pass_jobs[i] = ctl_sched_view(j);
        st->pass_selective += ctl_spec_selective(&j->spec);
        st->pass_visits++;
}

/* Of no job yet: res_min lowers the floor to the least request it is given. */
static const ctl_queue_traits no_traits = {
        .floor = { .mcpu = RES_MCPU_MAX, .mem = RES_MEM_MAX, .gpus = RES_GPUS_MAX },
};

static void traits_add(ctl_queue_traits *t, const job *j) {
        t->floor = res_min(t->floor, j->spec.req);
        t->throttle |= j->spec.array_throttle != 0;
        if (j->wait == JOB_WAIT_BEGIN)
                t->begin = ctl_earliest(t->begin, j->spec.begin_usec);
}

/* t becomes the traits of its jobs and of those of more. */
static void traits_merge(ctl_queue_traits *t, const ctl_queue_traits *more) {
        t->floor = res_min(t->floor, more->floor);
        t->throttle |= more->throttle;
        t->begin = ctl_earliest(t->begin, more->begin);
}

/* Every pending job went to traits_add: t is the queue's. Once the last job of a throttled
 * array has gone, passes read a window, or a job at a time, again. */
static void traits_found(ctl_state *st, const ctl_queue_traits *t) {
        st->pending_floor = t->floor;
        st->throttle_seen = t->throttle;
}

/* What a pass offers the policy of the n pending jobs from the first-th on, in st->pass_jobs,
 * with room for as many assignments in st->pass_out. Returns 0 or -ENOMEM. */
static int view_pending(ctl_state *st, size_t first, size_t n) {
        if (pass_room(st) < 0)
                return -ENOMEM;
        st->pass_selective = 0;
        bool whole = first == 0 && n == st->npending, singletons = false;
        ctl_queue_traits traits = no_traits;
        for (size_t i = first; i < first + n; i++) {
                view_job(st, i - first, st->pending[i]);
                if (whole) {
                        traits_add(&traits, st->pending[i]);
                        singletons |= st->pending[i]->singleton;
                }
        }
        if (whole) {
                traits_found(st, &traits);
                st->pending_choosy = singletons || st->pass_selective > 0;
        }
        return 0;
}

/* Jobs a strict-FIFO pass offers first (ctl_schedule): the window doubles while it is placed
 * whole, so that a pass that starts one or two jobs looks at few more. */
#define PASS_WINDOW 16

/* --- settled: what a pass need not look at again ---------------------------------------------
 * Free resources only shrink while nothing but submissions happens (placements take; whatever
 * gives back, changes the configuration or removes a pending job unsettles). So a job that
 * fitted on no node at the last pass fits on none now. A plain pass (a fit heuristic, no fair
 * order, no dispatcher, no reservations) offers jobs in submission order, and they interact only
 * through the resources they take (and the running limits, which count the jobs offered before
 * and so need them all): after backfill every job left fits nowhere or is held, and without
 * running limits the jobs submitted since can be offered alone, to the same result as a full
 * pass; after strict FIFO stopped at a job that fits nowhere, nothing submitted behind it can
 * start. Anything else (a fair order, whose ranks move with every submission; a dispatcher;
 * NetBatch reservations, which the unplaceable jobs make) settles only on a pass that placed
 * nothing, and the next submission unsettles it. */

static bool fair_order_on(const ctl_state *st) {
        return st->cfg.fairness >= 0 && !st->cfg.dispatcher && fairorder_has_depts(&st->fair);
}

/* EASY's reservation, like NetBatch's, comes from the jobs left unplaced: jobs submitted since
 * cannot be offered alone. */
static bool plain_pass(const ctl_state *st) {
        return !st->cfg.dispatcher && !fair_order_on(st) && st->cfg.order != SCHED_RESERVE && !st->npending_nice &&
               !ctl_easy_on(st);
}

/* The first pending job the next pass must offer: npending when it would place nothing. */
static size_t first_to_offer(const ctl_state *st) {
        const ctl_config *a = &st->cfg, *b = &st->settled_cfg;
        if (!st->settled || a->policy != b->policy || a->order != b->order || a->dispatcher != b->dispatcher ||
            a->scan != b->scan || a->fairness != b->fairness)
                return 0;
        if (st->npending == st->nsettled)
                return st->npending;
        if (!st->settled_incremental)
                return 0;
        if (b->order == SCHED_STRICT_FIFO && st->settled_blocked)
                return st->npending;
        /* A running limit counts each user's jobs offered before, placed or not: the jobs
         * submitted since, offered alone, would be counted without the older ones. */
        return ctl_running_limits_set(b) ? 0 : st->nsettled;
}

/* The nice buckets' heads are read again from their start (their jobs marked again). */
static void forget_nice_heads(ctl_state *st) {
        niceorder_forget_heads(&st->nice);
        st->nice_heads_begin = 0;
}

void ctl_schedule_dirty(ctl_state *st) {
        st->settled = false;
        st->disp_marked = false; /* a job's reason to wait may have changed */
        st->blocked_head = 0;
        forget_nice_heads(st);
        for (size_t d = 0; st->dept_jobs && d < st->fair.n; d++)
                if (st->dept_head[d].nblocked)
                        st->dept_head[d] = (ctl_dept_head){ 0 };
}

/* --- the blocked head ------------------------------------------------------------------------
 * Jobs held, or waiting for a dependency, at the queue's head cannot start, yet every pass that
 * reads from the head read them again: 50,000 held ahead of the rest made a job's end to the
 * next launch 5.6 ms. A pass that marks them so keeps them as the head it need not read again
 * (st->blocked_head), until an event may free one: ctl_schedule_dirty (a release, an update, a
 * begin time come, a reload) forgets it, ctl_job_unblocked (a dependency met) cuts it before
 * the job. Jobs waiting for their begin time join it too: its earliest begin time stays the
 * controller's next (st->next_begin_usec), whose tick forgets it. A singleton or a job choosing
 * its nodes ends it: a pass must see those (the jobs of a name, its runs). The head's traits are
 * kept (st->blocked_traits) for a pass that reads the rest whole. Strict FIFO's windows and the
 * passes that read a job at a time (EASY, reserve) start after it, and the fair order after each
 * leaf department's own (st->dept_head); the passes that take the whole list read it. */

static bool stays_blocked(const job *j) {
        return j->state == JOB_PENDING &&
               (j->wait == JOB_WAIT_HELD || j->wait == JOB_WAIT_DEPENDENCY || j->wait == JOB_WAIT_DEP_NEVER ||
                j->wait == JOB_WAIT_BEGIN) &&
               !j->singleton && !ctl_spec_selective(&j->spec);
}

/* A blocked head of *n jobs with traits *t takes in j, the next. */
static void head_take(size_t *n, ctl_queue_traits *t, const job *j) {
        if ((*n)++ == 0)
                *t = no_traits;
        traits_add(t, j);
}

/* Grow the blocked head over the jobs this pass has just marked, up to limit. */
static void blocked_head_grow(ctl_state *st, size_t limit) {
        while (st->blocked_head < limit && stays_blocked(st->pending[st->blocked_head]))
                head_take(&st->blocked_head, &st->blocked_traits, st->pending[st->blocked_head]);
}

void ctl_job_unblocked(ctl_state *st, const job *j) {
        st->settled = false;
        st->disp_marked = false;
        size_t at = st->pending_unsorted ? 0 : ctl_jobs_rank(st->pending, 0, st->blocked_head, j->id);
        if (at < st->blocked_head)
                st->blocked_head = at;
        forget_nice_heads(st);
        if (st->dept_jobs && j->fair_dept && st->dept_head[j->fair_dept - 1].nblocked)
                st->dept_head[j->fair_dept - 1] = (ctl_dept_head){ 0 }; /* read from its start */
}

/* Record the placement of j on n and send the launch. Returns 0 or -ENOMEM (j stays pending). */
static int dispatch(ctl_state *st, job *j, ctl_node *n) {
        char *node = strdup(n->name);
        if (!node)
                return -ENOMEM;
        free(j->node);
        j->node = node;
        ctl_set_state(st, j, JOB_RUNNING);
        ctl_tally_job(st, j, -1);
        ctl_charge(st, n, j);
        const char *policy =
                st->cfg.dispatcher ? sched_dispatcher_name(st->cfg.dispatcher) : sched_heuristic_name(st->cfg.policy);
        ctl_emit(st, j, n->name, "placed", policy);
        (void)st->act->persist(st->userdata, j);
        st->act->launch(st->userdata, n, j);
        ctl_family_moved(st, j, JOB_PENDING);
        depidx_changed(st, j, JOB_PENDING, st->clock_usec);
        return 0;
}

/* Run the configured policy on the view, offering njobs of jobs, one run of a pass in runs
 * when run. Returns the number of assignments in out, or -ENOMEM. */
static long place(ctl_state *st, bool indexed, bool run, const sched_job *jobs, size_t njobs, sched_assignment *out) {
        const ctl_config *c = &st->cfg;
        sched_index *v = &st->view;
        if (c->dispatcher && run)
                return sched_dispatch_run(c->dispatcher, v->machines, v->n, jobs, njobs, out);
        if (c->dispatcher)
                return sched_dispatch(c->dispatcher, v->machines, v->n, jobs, njobs, out);
        if (indexed)
                return sched_index_place(v, c->policy, jobs, njobs, c->order, out);
        return sched_place(c->policy, v->machines, v->n, jobs, njobs, c->order, out);
}

/* A job that no connected, undrained node selects (ctl_job_selectable) waits for one without
 * holding back the jobs behind it, even in strict FIFO. */
bool ctl_job_selectable(const ctl_state *st, const job *j) {
        for (size_t i = 0; i < st->nnodes; i++)
                if (st->nodes[i]->up && !st->nodes[i]->drain_reason && ctl_node_selected(st->nodes[i], &j->spec))
                        return true;
        return !ctl_spec_selective(&j->spec);
}

/* Offer one job that may go only on some nodes: the others are hidden from the policy
 * (SCHED_HIDDEN in the view: a dispatcher takes them for neither down nor up again) for the
 * call, and the node an exclusive job takes is down for the rest of the pass (its charge then
 * keeps it so). Returns the number placed (0 or 1), -EAGAIN when no
 * node it selects can take it now (ctl_job_selectable), or -ENOMEM. */
static long place_selected(ctl_state *st, bool indexed, const sched_job *sj, sched_assignment *out) {
        const job *j = ctl_find_job(st, sj->id);
        if (!ctl_job_selectable(st, j))
                return -EAGAIN;
        bool *hidden = calloc(st->nnodes + 1, sizeof(*hidden));
        if (!hidden)
                return -ENOMEM;
        for (size_t i = 0; i < st->nnodes; i++) {
                sched_machine *m = &st->view.machines[i];
                bool idle = res_equal(m->free, m->capacity);
                if (m->up && (!ctl_node_selected(st->nodes[i], &j->spec) || (j->spec.exclusive && !idle))) {
                        hidden[i] = true;
                        m->up = SCHED_HIDDEN;
                        sched_index_update(&st->view, i);
                }
        }
        long placed = place(st, indexed, true, sj, 1, out);
        for (size_t i = 0; i < st->nnodes; i++) {
                bool taken = placed == 1 && j->spec.exclusive && out->machine == i;
                if (hidden[i] || taken) {
                        st->view.machines[i].up = !taken;
                        sched_index_update(&st->view, i);
                }
        }
        free(hidden);
        return placed;
}

/* Run the policy on the first njobs of st->pass_jobs: in one call when none of them chooses
 * its nodes; else the runs of jobs that do not, each in one call, and each job that does, alone
 * (place_selected), in order, strict FIFO stopping at the first job left unplaced but those that
 * no node could take now (*skipped counts them). Returns the number of assignments in
 * st->pass_out, or -ENOMEM. */
static long place_pass(ctl_state *st, bool indexed, size_t njobs, size_t *skipped) {
        *skipped = 0;
        if (st->pass_selective == 0 && ctl_easy_on(st))
                return ctl_easy_place(st, st->pass_jobs, njobs, st->pass_out);
        if (st->pass_selective == 0)
                return place(st, indexed, false, st->pass_jobs, njobs, st->pass_out);
        long placed = 0;
        for (size_t from = 0, n; from < njobs; from += n) {
                const sched_job *jobs = &st->pass_jobs[from];
                long r;
                for (n = 0; from + n < njobs && !ctl_spec_selective(&ctl_find_job(st, jobs[n].id)->spec); n++)
                        ;
                if (n == 0) {
                        n = 1;
                        r = place_selected(st, indexed, jobs, &st->pass_out[placed]);
                        if (r == -EAGAIN) {
                                (*skipped)++;
                                continue;
                        }
                } else
                        r = place(st, indexed, true, jobs, n, &st->pass_out[placed]);
                if (r < 0)
                        return placed ? placed : r;
                placed += r;
                if ((size_t)r < n && st->cfg.order == SCHED_STRICT_FIFO && !st->cfg.dispatcher)
                        break;
        }
        return placed;
}

/* The capacity of the up nodes. */
static res_t up_capacity(const ctl_state *st) {
        res_t capacity = { 0 };
        for (size_t i = 0; i < st->nnodes; i++)
                if (placeable(st->nodes[i]))
                        capacity = res_add(capacity, st->nodes[i]->capacity);
        return capacity;
}

/* The pending jobs as the fair order sees them (`colony shares`), those that may not start as
 * the last pass marked them. Returns the array (the caller frees it) or NULL. */
static fairorder_job *fair_view(ctl_state *st) {
        fairorder_job *v = malloc((st->npending + 1) * sizeof(*v));
        for (size_t i = 0; v && i < st->npending; i++) {
                job *j = st->pending[i];
                v[i] = (fairorder_job){ ctl_job_dept(st, j), j->spec.req, !ctl_wait_offerable(j) };
        }
        return v;
}

/* Whether a pass may offer its jobs a window at a time: strict FIFO stops at the first job
 * that fits nowhere, and a window placed whole leaves the next the nodes the whole list would
 * have. Not Max-Jobs, which keeps the heuristic that places most of the whole list, nor the
 * nice order, which reorders each user's jobs among those offered. */
static bool windowed_order(const ctl_state *st) {
        return st->cfg.order == SCHED_STRICT_FIFO && st->cfg.policy != SCHED_MAX_JOBS && !st->npending_nice;
}

int ctl_fair_shares(ctl_state *st, fairorder_report *rep, uint64_t *next_id) {
        res_t capacity = up_capacity(st);
        ctl_tidy(st);
        size_t kept;
        fairorder_job *view = fair_view(st);
        uint32_t *order = malloc((st->npending + 1) * sizeof(*order));
        int r = view && order ? fairorder_rank(&st->fair, capacity, view, st->npending, order, &kept, rep) : -ENOMEM;
        *next_id = r == 0 && rep->next >= 0 ? st->pending[rep->next]->id : 0;
        free(view);
        free(order);
        return r;
}

/* --- arrivals: a dispatcher's pass bounded by what changed ----------------------------------
 * A dispatcher whose ops say by_id reads the arrivals and, on an exit, the waiting jobs it
 * queued, by id (dispatch.h): such a pass need not visit the whole queue. Every pending job's
 * reason to wait is what the last whole pass set, kept until something changes one
 * (ctl_schedule_dirty: holds, updates, dependencies met, begin times come; a requeue, an
 * array's tasks made from its record); the filters that look at the whole queue (strays, nice,
 * throttles, running limits, singletons, jobs choosing their nodes) are off; the dispatcher
 * wants no whole pass (a new plan); and the queue is in id order, so the arrivals are its
 * tail. Then a pass marks the arrivals alone, offers them, and answers the dispatcher's
 * lookups from the jobs' own records. */

/* Whether the configuration and the queue let a dispatcher's pass offer the arrivals alone. */
static bool arrivals_allowed(const ctl_state *st) {
        const ctl_config *c = &st->cfg;
        return c->dispatcher && c->dispatcher->ops->by_id && !c->dispatcher->want_whole && !st->npending_nice &&
               !st->throttle_seen && st->nstrays == 0 && !ctl_running_limits_set(c) && !st->pending_unsorted &&
               !st->disp_whole;
}

/* sched_find_fn of the core: pending job id, if it may be offered now. */
static int find_offerable(void *ctx, uint64_t id, sched_job *out) {
        ctl_state *st = ctx;
        const job *j = ctl_find_job(st, id);
        st->pass_visits++;
        if (!j || !ctl_wait_offerable(j))
                return 0;
        *out = ctl_sched_view(j);
        return 1;
}

/* After a dispatcher's whole pass that launched all it placed (else the jobs it dropped from
 * what it keeps are pending still): what the next pass may skip. O(pending), as the pass was. */
static void arrivals_after_whole(ctl_state *st, bool all_launched) {
        st->pending_unsorted = st->disp_whole = false;
        for (size_t i = 0; i < st->npending; i++) {
                const job *j = st->pending[i];
                st->pending_unsorted |= i > 0 && st->pending[i - 1]->id > j->id;
                st->disp_whole |= j->singleton || ctl_spec_selective(&j->spec);
        }
        /* a pass in runs (jobs choosing nodes) gave the dispatcher part of the queue at a time:
         * an exit in one run dropped the jobs it did not offer, which a whole pass offers again */
        st->disp_marked = arrivals_allowed(st) && st->pass_selective == 0 && all_launched;
}

/* Drop from the queue the jobs below id below that the pass launched (found by id). */
static void drop_started(ctl_state *st, uint64_t below, long launched) {
        for (long a = 0; a < launched; a++) {
                uint64_t id = st->pass_out[a].job_id;
                size_t at = ctl_jobs_rank(st->pending, 0, st->npending, id);
                if (id < below && at < st->npending && st->pending[at]->id == id)
                        ctl_compact_pending_range(st, at, 1);
        }
}

/* A dispatcher's pass over the arrivals alone (see above), as pass() for the whole queue.
 * Returns how many were launched, -EAGAIN when the pass must offer the whole queue, or
 * -ENOMEM. O(arrivals + machines + jobs found x log pending). */
static long pass_arrivals(ctl_state *st, size_t *offered, long *placed) {
        sched_dispatcher *d = st->cfg.dispatcher;
        size_t first = ctl_jobs_rank(st->pending, 0, st->npending, d->seen + 1), n = st->npending - first;
        for (size_t i = first; i < st->npending; i++)
                if (st->pending[i]->singleton || ctl_spec_selective(&st->pending[i]->spec))
                        return -EAGAIN;
        size_t waiting = ctl_wait_mark(st, first, n);
        if (view_pending(st, first, n) < 0)
                return -ENOMEM;
        *offered = waiting ? ctl_wait_drop(st, st->pass_jobs, n) : n;
        sched_index *v = &st->view;
        *placed = sched_dispatch_arrivals(d, v->machines, v->n, st->pass_jobs, *offered, find_offerable, st,
                                          st->pass_out);
        long launched = 0;
        if (*placed < 0) {
                for (size_t i = 0; i < st->nnodes; i++)
                        view_reset(st, i);
                st->disp_marked = false; /* what it keeps may have dropped jobs it placed */
                return *placed;
        }
        for (; launched < *placed; launched++)
                if (dispatch(st, ctl_find_job(st, st->pass_out[launched].job_id),
                             st->nodes[st->pass_out[launched].machine]) < 0)
                        break;
        st->disp_marked = launched == *placed;
        for (long a = 0; a < *placed; a++)
                view_reset(st, st->pass_out[a].machine);
        uint64_t first_id = first < st->npending ? st->pending[first]->id : UINT64_MAX;
        ctl_compact_pending_range(st, first, n);
        drop_started(st, first_id, launched);
        return launched;
}

/* --- EASY, NetBatch's reservations and a nice order, a job at a time ------------------------
 * EASY's pass (backfill.h) stops taking jobs once it holds its reservation and nothing as small
 * as the least request pending (st->pending_floor) fits any node: a pass after an end that made
 * room for one job reads the queue's head, not its tail. NetBatch's (order = reserve: a job that
 * fits nowhere reserves a node for the rest of the pass) stops once nothing as small fits a node
 * left unreserved (sched_index_place_from). The queue is handed to them a job at a
 * time, each marked as it is read; where the pass stops, the jobs behind keep the reason the
 * last pass that read them gave (they could not start: none fits now). The arrays' throttles
 * and the running limits are counted as the jobs are read (ctl_array_admit, ctl_limit_admit),
 * in that order, as the whole list's filters count them. While a pending job has a nice value,
 * strict FIFO is read so too, since a window of the queue cannot hold a user's reordered jobs:
 * each place a job takes goes to its owner's next job by nice value (st->nice), as
 * ctl_wait_nice reorders a whole list between the throttles and the running limits. The place
 * goes to a job the throttle leaves: the whole list's throttle counts an array's tasks in the
 * queue's order before the reordering, that is its first ones by id that may start
 * (ctl_array_within). Whatever else filters the whole offered list (strays' earlier attempts)
 * or needs the jobs choosing nodes apart (pending_choosy) takes the whole queue as before, and
 * so does the fair order with a nice value and a department's cap: a cap counts the jobs the
 * walk hands out, and the whole list's nice order permutes those alone. */

static bool a_job_at_a_time(const ctl_state *st) {
        const ctl_config *c = &st->cfg;
        bool indexed = c->policy != SCHED_MAX_JOBS && !c->dispatcher && !c->scan;
        if (st->pending_choosy || st->nstrays > 0)
                return false;
        if (st->npending_nice)
                return indexed && st->nice.on && (!fair_order_on(st) || !fairorder_has_caps(&st->fair));
        return ctl_easy_on(st) || (c->order == SCHED_RESERVE && indexed);
}

/* What a pass read a job at a time counts of the jobs it offered so far, for the arrays'
 * throttles and the running limits; all zero: off (offer() filters a whole list). */
typedef struct read_filters {
        ctl_state *st;
        ctl_array_loads loads;
        ctl_limit_counts *limits;
        bool on;        /* place_over reads through them */
        bool reordered; /* a nice order gave a place to another job: maybe one not read yet */
} read_filters;

/* Whether j may start now (marked as a pass marks it). */
static bool mark_offerable(void *arg, job *j) { return !ctl_wait_mark_job(arg, j); }

/* ctl_array_within's nth: the k-th task that may start of j's array, by id (of any nice value:
 * the nice index holds them). */
static uint64_t nth_offerable_task(void *arg, const job *j, size_t k) {
        ctl_state *st = arg;
        return niceorder_array_nth(&st->nice, j, k, mark_offerable, st, &st->pass_visits);
}

/* niceorder_next's take: whether j may start now, and is within its array's throttle as the
 * whole list's filter counts it, in the queue's order, before the nice order permutes (a place
 * goes to a job the throttle left, as in ctl_wait_nice's list). */
static bool may_take_place(void *arg, job *j) {
        read_filters *f = arg;
        return mark_offerable(f->st, j) && ctl_array_within(&f->loads, j, nth_offerable_task, f->st);
}

/* niceorder_next's stays: j, refused, stays blocked until ctl_schedule_dirty or
 * ctl_job_unblocked (forget_nice_heads). A job waiting for its begin time too, its time kept
 * (st->nice_heads_begin) for each pass's st->next_begin_usec, whose tick forgets the heads. */
static bool stays_out(void *arg, const job *j) {
        read_filters *f = arg;
        if (!stays_blocked(j))
                return false;
        if (j->wait == JOB_WAIT_BEGIN)
                f->st->nice_heads_begin = ctl_earliest(f->st->nice_heads_begin, j->spec.begin_usec);
        return true;
}

/* The job to offer for j, read next, through the whole list's filters in their order: the
 * throttles; in a nice order, j's place then goes to its owner's next job by nice value (none
 * only if the index lost a job to memory: none is offered twice); that one, the running
 * limits. NULL: the place is passed over. */
static job *filters_admit(ctl_state *st, read_filters *f, job *j) {
        if (!ctl_array_admit(&f->loads, j))
                return NULL;
        if (st->npending_nice && f->on) { /* else offer() reorders the whole list */
                job *taker = niceorder_next(&st->nice, j, may_take_place, stays_out, f, &st->pass_visits);
                f->reordered |= taker != j;
                if (!(j = taker))
                        return NULL;
        }
        return ctl_limit_admit(st, f->limits, j) ? j : NULL;
}

/* The queue read a job at a time (sched_job_list): the next pending job that may start, viewed
 * into st->pass_jobs; traits: of every job read, blocked or not. */
typedef struct queue_reader {
        ctl_state *st;
        read_filters filters;
        size_t next, offered;
        ctl_queue_traits traits;
} queue_reader;

static int read_queue(void *arg, sched_job *out) {
        queue_reader *q = arg;
        ctl_state *st = q->st;
        while (q->next < st->npending) {
                size_t at = q->next++;
                job *j = st->pending[at];
                traits_add(&q->traits, j);
                if (ctl_wait_mark_job(st, j)) { /* held, a dependency, a begin time */
                        blocked_head_grow(st, at + 1);
                        continue;
                }
                if (!(j = filters_admit(st, &q->filters, j)))
                        continue; /* a throttle, a running limit */
                view_job(st, q->offered, j);
                *out = st->pass_jobs[q->offered++];
                return 1;
        }
        return 0;
}

static long launch_placed(ctl_state *st, bool indexed, long placed);

/* EASY, or NetBatch's reservations, over the jobs next(arg) hands out through *filters (counted
 * for the pass), which it views into st->pass_jobs (*viewed of them), and the launches of what it
 * placed. Returns how many were launched, or -ENOMEM; *offered, *placed as pass(). */
static long place_over(ctl_state *st, int (*next)(void *, sched_job *), void *arg, read_filters *filters,
                       const size_t *viewed, size_t *offered, long *placed) {
        const sched_job_list list = { next, arg, st->npending, st->pending_floor };
        bool easy = ctl_easy_on(st);
        st->pass_selective = 0;
        filters->st = st;
        ctl_array_loads_start(st, &filters->loads);
        filters->limits = ctl_limit_counts_new(st);
        filters->on = true;
        niceorder_begin(&st->nice);
        *placed = easy ? ctl_easy_place_from(st, &list, st->pass_out)
                       : sched_index_place_from(&st->view, st->cfg.policy, &list, st->cfg.order, st->pass_out);
        ctl_array_loads_free(&filters->loads);
        free(filters->limits);
        *filters = (read_filters){ .reordered = filters->reordered };
        *offered = *viewed;
        if (*placed < 0) {
                for (size_t i = 0; i < st->nnodes; i++)
                        view_reset(st, i);
                return *placed;
        }
        if (easy)
                ctl_easy_held_back(st, st->pass_jobs, *viewed, st->pass_out, *placed);
        ctl_wait_blocker(st, st->pass_jobs, *viewed, *placed); /* strict FIFO's, read in a nice order */
        return launch_placed(st, true, *placed);
}

/* The jobs of st->pass_out[0..launched) leave the queue. */
static void leave_queue(ctl_state *st, long launched) {
        if (st->pending_unsorted)
                ctl_compact_pending_range(st, 0, st->npending);
        else
                drop_started(st, UINT64_MAX, launched);
}

/* A whole-queue pass reading the queue as far as it can place. Returns how many were launched,
 * or -ENOMEM; *offered, *placed as pass(). */
static long pass_reading(ctl_state *st, size_t *offered, long *placed) {
        size_t head = st->blocked_head; /* read from there on */
        queue_reader q = { .st = st, .next = head, .traits = head ? st->blocked_traits : no_traits };
        /* the marks find an earlier one; the nice buckets' heads are not read */
        st->next_begin_usec = ctl_earliest(q.traits.begin, st->nice_heads_begin);
        if (pass_room(st) < 0)
                return -ENOMEM;
        long launched = place_over(st, read_queue, &q, &q.filters, &q.offered, offered, placed);
        if (launched < 0)
                return launched;
        if (q.next == st->npending)
                traits_found(st, &q.traits); /* read whole, the blocked head's traits kept */
        ctl_compact_pending_range(st, head, q.next - head);
        if (q.filters.reordered) /* jobs launched from behind where it read leave too */
                leave_queue(st, launched);
        return launched;
}

/* Offer the policy the first *offered jobs of st->pass_jobs, less those that may not start
 * now, and launch what it placed: *offered becomes how many it was offered, *placed how many
 * it placed. waiting: whether the pass's marks found jobs that may not start. Returns how many
 * were launched, or -ENOMEM. */
static long offer(ctl_state *st, size_t waiting, size_t *offered, long *placed) {
        *offered = ctl_drop_held(st, st->pass_jobs, *offered); /* after the fair order: it ranks by position */
        if (waiting)
                *offered = ctl_wait_drop(st, st->pass_jobs, *offered);
        *offered = ctl_array_throttle(st, st->pass_jobs, *offered);
        if (st->npending_nice && ctl_wait_nice(st, st->pass_jobs, *offered) < 0)
                return -ENOMEM;
        *offered = ctl_user_limits(st, st->pass_jobs, *offered);
        bool indexed = !st->cfg.dispatcher && !st->cfg.scan; /* the index follows the placements */
        size_t skipped;
        *placed = place_pass(st, indexed, *offered, &skipped);
        *offered -= skipped; /* they wait for a node, blocking nothing */
        if (*placed < 0) {   /* a dispatcher may have placed some before it failed */
                for (size_t i = 0; i < st->nnodes; i++)
                        view_reset(st, i);
                st->disp_marked = false; /* and dropped them from what it keeps */
                return *placed;
        }
        ctl_wait_blocker(st, st->pass_jobs, *offered, *placed);
        return launch_placed(st, indexed, *placed);
}

/* Launch the placed jobs of st->pass_out[0..placed); the view follows what was not launched
 * (indexed) or every placement (not). Returns how many were launched. */
static long launch_placed(ctl_state *st, bool indexed, long placed) {
        const sched_assignment *out = st->pass_out;
        long launched = 0;
        for (; launched < placed; launched++)
                if (dispatch(st, ctl_find_job(st, out[launched].job_id), st->nodes[out[launched].machine]) < 0)
                        break;
        for (long a = indexed ? launched : 0; a < placed; a++)
                view_reset(st, out[a].machine);
        return launched;
}

/* --- the fair order, read as far as a pass places -------------------------------------------
 * A pass in the fair order walks it (fairorder.h) over each leaf department's pending jobs,
 * which the state keeps as they come and go (st->dept_jobs): the jobs are marked and viewed as
 * the walk hands them out, those that may not start (held, a dependency, a begin time) passed
 * over, so that a strict-FIFO pass that starts a few jobs, or an EASY pass that stops where
 * nothing more fits, reads a few more. As in the queue's passes, the jobs no pass reaches keep
 * the reason the last pass that read them gave. */

/* A pass's reading of the fair order: the walk, and whether the whole queue was marked before
 * (singletons: their marks compare jobs with each other). */
typedef struct fair_reader {
        ctl_state *st;
        fairorder_walk *walk;
        read_filters filters; /* counted while read a job at a time (fair_reading) */
        bool marked;
        size_t offered;          /* jobs viewed into st->pass_jobs */
        size_t picked, total;    /* jobs the walk handed out, of those pending when it started */
        size_t passed_over;      /* jobs that may not start, read and passed over */
        size_t in_heads;         /* the jobs in the departments' blocked heads when it started */
        ctl_queue_traits traits; /* of the jobs it read, held, or found in a blocked head */
} fair_reader;

/* Leaf's next pending job that may start after its entry after (UINT32_MAX: its first) in
 * st->dept_jobs: its entry, or UINT32_MAX (fairorder_source.next). The jobs that may not start
 * (held, a dependency, a begin time) are marked and passed over: they take no turn in the
 * order. Read from the leaf's head on (st->dept_head), which takes in the stale entries and
 * the blocked jobs it meets first (the queue's blocked head, above). */
static uint32_t dept_next(void *arg, uint32_t leaf, uint32_t after, uint64_t *seq, res_t *req) {
        fair_reader *r = arg;
        ctl_state *st = r->st;
        const ctl_idset *s = &st->dept_jobs[leaf];
        ctl_dept_head *head = &st->dept_head[leaf];
        size_t from = after == UINT32_MAX ? head->at : (size_t)after + 1;
        bool at_head = from == head->at; /* all before it stale or blocked */
        for (size_t i = from; i < s->n; i++) {
                job *j = s->v[i];
                if (j->state != JOB_PENDING)
                        continue;
                if (r->marked ? !ctl_wait_offerable(j) : ctl_wait_mark_job(st, j)) {
                        r->passed_over++;
                        traits_add(&r->traits, j);
                        if (at_head && stays_blocked(j)) {
                                head_take(&head->nblocked, &head->blocked, j);
                                head->at = i + 1;
                        } else if (at_head) {
                                head->at = i;
                                at_head = false;
                        }
                        continue;
                }
                if (at_head)
                        head->at = i;
                *seq = j->id;
                *req = j->spec.req;
                return (uint32_t)i;
        }
        if (at_head)
                head->at = s->n;
        return UINT32_MAX;
}

/* The next job of the order that may start, viewed into st->pass_jobs: 1, or 0 at the end. */
static int read_fair(void *arg, sched_job *out) {
        fair_reader *r = arg;
        ctl_state *st = r->st;
        fairorder_pick pick;
        while (fairorder_walk_next(r->walk, &pick, 1) == 1) {
                job *j = st->dept_jobs[pick.leaf].v[pick.at];
                r->picked++;
                traits_add(&r->traits, j);
                if (!(j = filters_admit(st, &r->filters, j)))
                        continue; /* a throttle, a running limit (dept_next passed over the rest) */
                view_job(st, r->offered, j);
                *out = st->pass_jobs[r->offered++];
                return 1;
        }
        return 0;
}

/* The jobs held by the walk's caps wait for them, and so do the later jobs of their departments
 * (st->dept_cap_from), listed or not; a walk that handed out or held every pending job not in a
 * blocked head found the queue's traits again. */
static void wait_for_caps(ctl_state *st, fair_reader *r) {
        const fairorder_pick *held;
        size_t nheld = fairorder_walk_stop(r->walk, &held);
        for (size_t i = 0; i < nheld; i++) {
                job *j = st->dept_jobs[held[i].leaf].v[held[i].at];
                if (!st->dept_cap_from[held[i].leaf])
                        st->dept_cap_from[held[i].leaf] = j->id; /* a department's first */
                traits_add(&r->traits, j);
                ctl_wait_capped(st, j, r->marked);
        }
        if (r->picked + r->passed_over + nheld + r->in_heads >= r->total) /* all read, or in a blocked head */
                traits_found(st, &r->traits);
}

/* Offer the order a window at a time while each is placed whole (windowed_order), else whole.
 * Returns how many were launched, or -ENOMEM. */
static long offer_fair(ctl_state *st, fair_reader *r, size_t *offered, long *placed) {
        long launched = 0;
        sched_job job;
        for (size_t window = windowed_order(st) ? PASS_WINDOW : SIZE_MAX;; window *= 2) {
                long pl = 0;
                r->offered = 0;
                st->pass_selective = 0;
                while (r->offered < window && read_fair(r, &job) == 1)
                        ;
                size_t off = r->offered;
                if (off == 0)
                        break;
                long got = offer(st, 0, &off, &pl);
                if (got < 0)
                        return launched ? launched : got;
                leave_queue(st, got);
                launched += got;
                *offered += off;
                *placed += pl;
                if (got < pl || (size_t)pl < off || window == SIZE_MAX)
                        break;
        }
        return launched;
}

/* EASY, NetBatch's reservations, or strict FIFO in a nice order (a_job_at_a_time), over the
 * order, reading it as far as something can still be
 * placed (pass_reading). Returns how many were launched, or -ENOMEM. */
static long fair_reading(ctl_state *st, fair_reader *r, size_t *offered, long *placed) {
        long launched = place_over(st, read_fair, r, &r->filters, &r->offered, offered, placed);
        if (launched >= 0)
                leave_queue(st, launched);
        return launched;
}

/* A pass in the fair order. Returns how many were launched, -EAGAIN when the fair code refused
 * the tree or its departments' queues are missing (the pass then goes in submission order), or
 * -ENOMEM. */
static long pass_fair(ctl_state *st, size_t *offered, long *placed) {
        fair_reader r = { .st = st, .marked = st->pending_choosy, .total = st->npending, .traits = no_traits };
        fairorder_source src = { st->dept_npend, st->dept_sum, dept_next, &r };
        *offered = 0;
        *placed = 0;
        if (!st->dept_jobs)
                return -EAGAIN;
        for (size_t d = 0; d < st->fair.n; d++)
                if (st->dept_head[d].nblocked) { /* not read: what they are is kept */
                        r.in_heads += st->dept_head[d].nblocked;
                        traits_merge(&r.traits, &st->dept_head[d].blocked);
                }
        /* the heads' earliest (the departments', the nice buckets'); the walk's marks find earlier */
        st->next_begin_usec = ctl_earliest(r.traits.begin, st->nice_heads_begin);
        /* nothing as small as the least pending request fits a node: the pass would place
         * nothing, whatever the order, and where nobody reads the reasons it would leave, the
         * order's solve (fair_run, O(tasks the cluster holds)) is spared */
        if (st->cfg.unwatched && sched_index_choose(&st->view, SCHED_FIRST_FIT, st->pending_floor) < 0)
                return 0;
        if (pass_room(st) < 0)
                return -ENOMEM;
        if (r.marked) /* before the walk starts: it reads each department's first job */
                (void)ctl_wait_mark(st, 0, st->npending);
        int e = fairorder_walk_start(&st->fair, up_capacity(st), &src, &r.walk);
        if (e < 0)
                return e == -ENOMEM ? -ENOMEM : -EAGAIN;
        bool reading = a_job_at_a_time(st);
        if (reading || windowed_order(st)) /* reads as far as it places: not a capped department's every job */
                fairorder_walk_hold_heads(r.walk);
        st->dept_walking = true;
        long launched = reading ? fair_reading(st, &r, offered, placed) : offer_fair(st, &r, offered, placed);
        wait_for_caps(st, &r);
        fairorder_walk_free(r.walk);
        ctl_dept_walked(st);
        return launched;
}

/* One pass over the n pending jobs from the first-th on (in the fair order when first is 0):
 * *offered is how many the policy was offered, *placed how many it placed. Returns how many
 * were launched, or -ENOMEM. */
static long pass(ctl_state *st, size_t first, size_t n, size_t *offered, long *placed) {
        *offered = n;
        if (first == 0 && st->disp_marked && arrivals_allowed(st)) {
                long r = pass_arrivals(st, offered, placed);
                if (r != -EAGAIN)
                        return r;
        }
        if (first == 0)
                st->next_begin_usec = 0;     /* the whole queue: mark finds the earliest again */
        if (first == 0 && st->dept_cap_from) /* a fair pass finds the capped departments again */
                memset(st->dept_cap_from, 0, st->fair.n * sizeof(*st->dept_cap_from));
        if (first == 0 && fair_order_on(st)) {
                long r = pass_fair(st, offered, placed);
                if (r != -EAGAIN)
                        return r;
        } else if (first == 0 && a_job_at_a_time(st))
                return pass_reading(st, offered, placed);
        size_t waiting = ctl_wait_mark(st, first, n);
        *offered = n;
        if (view_pending(st, first, n) < 0)
                return -ENOMEM;
        long launched = offer(st, waiting, offered, placed);
        if (launched < 0)
                return launched;
        ctl_compact_pending_range(st, first, n);
        if (first == 0 && st->cfg.dispatcher && st->cfg.dispatcher->ops->by_id)
                arrivals_after_whole(st, launched == *placed);
        return launched;
}

/* One scheduling pass over the queue as it is (ctl_schedule). */
static long schedule_queue(ctl_state *st) {
        ctl_tidy(st);
        size_t first = first_to_offer(st), offered = 0;
        if (st->npending == 0 || st->nnodes == 0 || first == st->npending)
                return 0;
        /* Strict FIFO stops at the first job that fits nowhere: offered a window at a time, a
         * long queue behind it is not copied into the view (a pass over 100,000 pending jobs
         * took 12-60 ms); a window placed whole is followed by the next, twice as long. */
        bool windowed = plain_pass(st) && windowed_order(st);
        long launched = 0, placed = 0, total = 0;
        if (windowed && first < st->blocked_head) {
                first = st->blocked_head;
                st->next_begin_usec = st->blocked_traits.begin; /* as pass() from the head; marks find earlier */
        }
        for (size_t from = first, window = PASS_WINDOW;; window *= 2) {
                size_t n = st->npending - from;
                if (windowed && n > window)
                        n = window;
                long r = pass(st, from, n, &offered, &placed);
                if (r < 0)
                        return r;
                if (windowed && from == st->blocked_head)
                        blocked_head_grow(st, from + n - (size_t)r); /* the window, compacted */
                launched += r;
                total += placed;
                from += n - (size_t)r; /* the launched left the queue */
                if (!windowed || r < placed || (size_t)placed < offered || from >= st->npending)
                        break;
        }
        st->settled_incremental = plain_pass(st);
        st->settled = launched == total && (total == 0 || st->settled_incremental);
        st->settled_blocked = (size_t)placed < offered;
        st->nsettled = st->npending;
        st->settled_cfg = st->cfg;
        return launched;
}

long ctl_schedule(ctl_state *st) {
        long launched = 0, r;
        /* An array's record makes its tasks a window ahead of the pass; a pass that took them all
         * may have room for more, before the jobs queued behind the array. */
        do {
                ctl_arecs_topup(st);
                if ((r = schedule_queue(st)) < 0)
                        return launched ? launched : r;
                launched += r;
        } while (r > 0 && ctl_arecs_exhausted(st));
        return launched;
}
