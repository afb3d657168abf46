/* state_int.h - what the state machine's own files share (state.c, submit.c, pass.c, nodes.c,
 * arrec.c): helpers internal to it, not for its callers (state.h is theirs). */
#pragma once
#include "arrays.h"
#include "state.h"
#include <sys/types.h>

/* The earlier of two begin times, 0 for none (st->next_begin_usec, the blocked heads'). */
static inline int64_t ctl_earliest(int64_t a, int64_t b) { return !a ? b : !b ? a : a < b ? a : b; }

/* --- state.c --- */

/* The live jobs of uid, added empty when add is set and they are missing; NULL when missing. */
ctl_idset *ctl_user_jobs_of(ctl_state *st, uid_t uid, bool add);
/* Count delta jobs of uid in group (NULL: none) in or out of the pending tallies. */
void ctl_tally_by(ctl_state *st, uid_t uid, const char *group, ssize_t delta);
/* The tally of uid (dept NULL) or of department dept[0..deptlen), added when add is set. */
ctl_tally *ctl_tally_find(ctl_state *st, uid_t uid, const char *dept, size_t deptlen, bool add);
/* The length of group's top-level department ("physics" of "physics/theory"). */
size_t ctl_top_dept_len(const char *group);
/* Add j to st->jobs in its id's place. Returns 0 or -ENOMEM. */
int ctl_append_job(ctl_state *st, job *j);
/* Queue pending job j behind the others, counted in its tallies. Returns 0 or -ENOMEM. */
int ctl_queue_pending(ctl_state *st, job *j);
/* Make room for n more jobs behind the pending queue, reclaiming the slots before its head
 * when they are at least as many as the queue holds. Returns 0 or -ENOMEM. */
int ctl_pending_reserve(ctl_state *st, size_t n);
/* Index j, a job new to the state. Returns 0 or -ENOMEM. */
int ctl_index_add(ctl_state *st, job *j);
/* Move j to state to, and its entries in the indexes with it. */
void ctl_set_state(ctl_state *st, job *j, job_state to);
/* Count j in (sign +1) or out of (-1) the pending tallies of its user and department. */
void ctl_tally_job(ctl_state *st, const job *j, int sign);
/* j joins the pending queue, or its request changed: lower st->pending_floor to it, and note
 * whether it chooses its nodes or is a singleton (st->pending_choosy) or belongs to a throttled
 * array (st->throttle_seen). Every pending job passes here: nothing else sets the two. */
void ctl_pending_noted(ctl_state *st, const job *j);
/* j joins (sign +1) or leaves (-1) the pending jobs, st->pending_ids not yet told: the count of
 * those with a nice value (st->npending_nice) and its owner's jobs in nice order follow (st->nice,
 * built when the first job with a nice value comes). */
void ctl_nice_pending(ctl_state *st, job *j, int sign);
/* Pending job j's nice value was was: the count and its place in st->nice follow. */
void ctl_nice_changed(ctl_state *st, job *j, int was);
/* j joins (sign +1) or leaves (-1) the pending jobs of its leaf department (st->dept_jobs). */
void ctl_dept_pending(ctl_state *st, job *j, int sign);
/* j joins (sign +1) or leaves (-1) the pending jobs: the indexes that follow them ahead of
 * st->pending_ids (its department's, its owner's nice order) follow. */
void ctl_pending_indexed(ctl_state *st, job *j, int sign);
/* A fair pass's walk of the departments' sets ended (it set st->dept_walking, which keeps the
 * sets' entries in place): compact those half stale. */
void ctl_dept_walked(ctl_state *st);
/* Pending job j's request changed from was: its department's sum follows. */
void ctl_dept_request_changed(ctl_state *st, job *j, res_t was);
/* j's department in the fair order's tree (fairorder_dept of its group), looked up once. */
uint32_t ctl_job_dept(ctl_state *st, job *j);
/* j starts running on n: charge its resources, tallies and the running array. */
void ctl_charge(ctl_state *st, ctl_node *n, job *j);
/* Tell the event log (when there is one) about a transition of j (NULL: of node). */
void ctl_emit(ctl_state *st, const job *j, const char *node, const char *what, const char *reason);
/* Tell the event hook (stored, when set: e->job names the job) or the log hook (when not) about e. */
void ctl_report(ctl_state *st, const ctl_event *e, bool stored);
/* The job left n: free its resources, and tell an event-driven policy. */
void ctl_release(ctl_state *st, ctl_node *n, job *j);
/* Move a job to a terminal state, persist it and tell whoever waits. */
void ctl_finish(ctl_state *st, job *j, job_state state, int64_t now, const char *reason);
/* Queue a job that was pending before (a requeued one) in its id's place. Returns 0 or -ENOMEM. */
int ctl_requeue_pending(ctl_state *st, job *j);
/* Drop from the queue's [first, first + n) the jobs no longer pending, keeping the order. */
void ctl_compact_pending_range(ctl_state *st, size_t first, size_t n);

/* --- submit.c: submissions --- */

/* Make j's default output path when none was given. Returns 0 or -ENOMEM. */
int ctl_default_output(job *j);
/* Store the n jobs made with their "submitted" events. Returns 0 or -errno. */
int ctl_persist_jobs(ctl_state *st, job **made, size_t n);
/* Make room for n more pending jobs of uid and their index entries. Returns 0 or -ENOMEM. */
int ctl_reserve_jobs(ctl_state *st, uid_t uid, size_t n);
/* The reservation of n jobs of a ends (made, or never to be). */
void ctl_unreserve(ctl_state *st, const ctl_array *a, size_t n);
/* Make, persist and queue up to max more jobs of a (ctl_array_more without the record). */
int ctl_make_slice(ctl_state *st, ctl_array *a, size_t max, char err[PROTO_ERRLEN]);

/* --- nodes.c: the nodes and their agents --- */

/* Keep, in order, the offered jobs no node still runs an earlier attempt of; returns how many. */
size_t ctl_drop_held(const ctl_state *st, sched_job *jobs, size_t njobs);

/* --- pass.c: the scheduling pass --- */

/* Make node n's entry of the scheduling view what n is now. */
void ctl_view_sync(ctl_state *st, const ctl_node *n);
/* What the policies see of a job. */
sched_job ctl_sched_view(const job *j);

/* --- waiting.c --- */

/* Whether pending job j may be offered by its reason to wait as the last pass set it. */
bool ctl_wait_offerable(const job *j);

/* --- arrec.c: arrays as one record while their tasks wait --- */

/* Keep each record's window of tasks made and pending, before a pass. */
void ctl_arecs_topup(ctl_state *st);
/* Whether a record has tasks left but none made and pending: the pass took them all. */
bool ctl_arecs_exhausted(const ctl_state *st);
/* The first task of a restored record is restored: it owns it, and it counts against the caps. */
void ctl_arec_attach(ctl_state *st, ctl_arec *a, job *owner);
/* ctl_array_more for an array of more than ARRAY_WINDOW tasks: its first slice, then its record. */
int ctl_array_record(ctl_state *st, ctl_array *a, size_t max, char err[PROTO_ERRLEN]);
/* The tasks not made yet that bulk cancel f names end, out of their records, counted in counts. */
void ctl_cancel_unmade(ctl_state *st, const ctl_cancel_filter *f, uid_t uid, int64_t now, ctl_cancel_counts *counts);
