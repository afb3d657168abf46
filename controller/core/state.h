/* state.h - the controller's cluster state machine: jobs, nodes, the queue, and scheduling.
 *
 * Pure logic: no sockets, no clock, no SQLite. Everything that must leave the state machine
 * (a launch for an agent, a record to persist, a waiter to answer) goes through ctl_actions,
 * so unit tests drive it with plain structs. Times are passed in (CLOCK_REALTIME usec). */
#pragma once
#include "depindex.h"
#include "family.h"
#include "depts.h"
#include "fairorder.h"
#include "idset.h"
#include "niceorder.h"
#include "job.h"
#include "jobtable.h"
#include "jobpool.h"
#include "arrayspec.h"
#include "dispatch.h"
#include "sched_index.h"
#include "backfill.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Now, on both clocks: job times are wall-clock for users; liveness is measured on the monotonic
 * clock, so that setting the system clock cannot mark every agent down. Microseconds. */
typedef struct ctl_time {
        int64_t real_usec;
        int64_t mono_usec;
} ctl_time;

typedef struct ctl_node {
        char *name;
        size_t index; /* position in ctl_state.nodes, which never changes */
        res_t capacity;
        res_t used;                   /* sum of the requests of the jobs running on it */
        bool up;                      /* its agent is connected */
        bool silent;                  /* up, but not heard from for agent_timeout_usec: not-responding, so
                                       * offered no job; its jobs run on until node_lost_timeout_usec */
        int64_t last_heard_usec;      /* wall clock, for display */
        int64_t last_heard_mono_usec; /* for the silence timeouts; moved on by the controller's own
                                       * stalls (ctl_credit_stall), never past now */
        psi_stats psi;                /* the host's pressure at the agent's last usage report */
        char *cgroup_mode;            /* "v1" / "v2", as the agent said */
        char *cgroup_root;
        size_t running;
        void *link;            /* the caller's connection while up; NULL when down */
        uint64_t *unconfirmed; /* after a reconnect: jobs the agent did not list */
        size_t nunconfirmed;
        uint64_t *strays; /* jobs its agent listed as running that are not running here (told
                           * to stop): held pending until it reports their end */
        size_t nstrays;
        int64_t confirm_by_mono_usec; /* ...which are lost unless they end before this */
        char *features;               /* its agent's features (nodesel.h list), NULL when none */
        char *drain_reason;           /* drained by root (colony drain): no new job starts there; NULL when not */
        size_t nexclusive;            /* running exclusive jobs: while any, nothing else is placed there */
        char *gpu_type;               /* its GPUs' type ("a100", also among its features), NULL when none */
        res_t stray_held;             /* the requests of its strays the controller knows: they still run
                                       * there, their GPUs assigned, so no job is placed in their room */
} ctl_node;

/* One state transition, for the event log (events.h); the caller stamps its time. Strings are
 * borrowed for the call. */
typedef struct ctl_event {
        uint64_t job_id;    /* 0 for a node's event */
        const char *node;   /* NULL when none */
        const char *what;   /* "submitted", "placed", "started", a terminal state's name, "requeued",
                             * "held", "released", "updated", "node-up", "node-not-responding",
                             * "node-down", "node-disconnected"; for the log alone (ctl_actions.log):
                             * "cancel-requested", "kept-pending", "stray-ended", "array-cancelled",
                             * "node-drained", "node-resumed" */
        const char *reason; /* NULL when none */
        const job *job;     /* the job it names when the state holds it (a submitted one not yet), else NULL */
        uid_t uid;          /* who asked: held, released, updated, cancel-requested, array-cancelled */
        size_t count;       /* array-cancelled: how many of its tasks, not made yet, were cancelled */
} ctl_event;

struct ctl_arec; /* arrays.h */

typedef struct ctl_actions {
        /* Make the job durable, its environment included: once a submission is stored the state
         * machine drops the environment from memory, and launch must fetch it back (an array's
         * later jobs have none: theirs is their array's first job's). Returns 0 or -errno; a
         * failed submit is refused. */
        int (*persist)(void *userdata, const job *j);
        /* Tell the node's agent to start / cancel the job. */
        void (*launch)(void *userdata, ctl_node *n, const job *j);
        void (*cancel)(void *userdata, ctl_node *n, const job *j, int grace_ms);
        /* The job reached a terminal state (answer whoever waits for it). */
        void (*terminal)(void *userdata, const job *j);
        /* Close the link of a node that went silent (optional), so that its agent, should it
         * wake up, must say hello again with what it runs. */
        void (*drop_link)(void *userdata, ctl_node *n, void *link);
        /* A state transition happened (optional). A job's event is always followed by persist() of
         * that job, which should store the two together; a node's event (job_id 0) comes alone. */
        void (*event)(void *userdata, const ctl_event *e);
        /* A transition worth a log line but not an event (optional): neither stored nor sent to
         * subscribers, as no job write follows it. The core logs nothing else but errors. */
        void (*log)(void *userdata, const ctl_event *e);
} ctl_actions;

typedef struct ctl_config {
        sched_heuristic policy;
        sched_dispatcher *dispatcher; /* when set, it places jobs instead of policy and order (Tetris,
                                       * Greedy, LoTES: dispatch.h); ctl_init takes it, ctl_free frees it */
        sched_order order;
        size_t max_pending;
        size_t max_pending_per_user; /* 0: no cap but max_pending */
        size_t max_pending_per_dept; /* per top-level department of the jobs' groups; 0: none */
        int kill_grace_ms;
        int64_t agent_timeout_usec;     /* silence that makes a node not-responding; also the reconnect window */
        int64_t node_lost_timeout_usec; /* silence that loses a node's running jobs (>= agent_timeout_usec) */
        const depts *depts;             /* when it has any, a job's group must be a leaf of them */
        int fairness;                   /* a fair_algo ordering the pending jobs (fairorder.h), or -1:
                                         * submission order; ignored with a dispatcher (id order) */
        bool scan;                      /* place by scanning every machine (sched_place, the reference)
                                         * instead of through the index: the same decisions, slower */
        int64_t default_time_usec, max_time_usec; /* jobs' time limits (depts_time_limit); 0: none */
        bool keep_invalid_depend;                 /* kill_invalid_depend = no: a job whose dependency can never be
                                                   * met stays pending instead of ending cancelled */
        /* Running jobs a user, a top-level department may have at once, and CPUs (milli-cores) a
         * user's running jobs may hold; 0: no limit (userlimit.c). */
        size_t max_running_per_user, max_running_per_dept;
        int64_t max_mcpu_per_user;
        /* Nobody reads what a pass leaves for users, a pending job's reserved start or its reason
         * to wait (the simulator): an EASY pass computes its reservation only when a decision
         * needs it, and a fair pass that could place nothing is not run. */
        bool unwatched;
} ctl_config;

/* How many pending jobs one user (dept NULL) or one top-level department has, for the caps. */
typedef struct ctl_tally {
        uid_t uid;
        char *dept;
        size_t pending;
        size_t running; /* its running jobs, and the CPUs they hold (the running limits) */
        int64_t running_mcpu;
} ctl_tally;

/* What a pass that has read every pending job knows again of the queue, which
 * ctl_pending_noted keeps between such passes as jobs are queued: the least request (EASY stops
 * where nothing as small fits), and whether a job belongs to a throttled array (passes count
 * its tasks). */
typedef struct ctl_queue_traits {
        res_t floor;
        bool throttle;
        int64_t begin; /* the earliest begin time its jobs wait for (0: none), for the blocked heads */
} ctl_queue_traits;

/* Where a pass starts reading a leaf department's pending jobs (pass.c, "the fair order"): its
 * entries before `at` are stale, or blocked as the queue's blocked head is (nblocked of them,
 * with their traits), since the last event that may have freed one. */
typedef struct ctl_dept_head {
        size_t at;
        size_t nblocked;
        ctl_queue_traits blocked;
} ctl_dept_head;

/* One user's live jobs. */
typedef struct ctl_user_jobs {
        uid_t uid;
        ctl_idset live;
} ctl_user_jobs;

typedef struct ctl_state {
        job **jobs; /* every job, in id order */
        size_t njobs, jobs_cap;
        job **pending; /* pending jobs, in submission order (the order of their ids but for an
                        * array's later slices, behind what was submitted meanwhile, and
                        * requeued jobs, back in their id's place); a cancelled one stays until the
                        * next pass or ctl_tidy (nstale counts those) so that a cancel is O(log n) */
        size_t npending, pending_cap, nstale;
        ctl_tally *tallies; /* per user and per department, in no order: few of them */
        size_t ntallies;
        ctl_node **nodes;
        ctl_node **by_name; /* the same nodes sorted by name */
        size_t nnodes;
        size_t nstrays; /* the sum of the nodes' nstrays: 0 lets scheduling skip the check */
        uint64_t next_id;
        ctl_config cfg;
        fairorder fair; /* the departments' tree and what each runs (ctl_set_depts) */
        /* Per node of fair (NULL before ctl_set_depts): the pending jobs of each leaf department
         * by id (stale entries included), where a pass starts reading them, how many are pending
         * and their requests summed, kept as jobs come and go, for the fair order's passes. */
        ctl_idset *dept_jobs;
        ctl_dept_head *dept_head;
        uint32_t *dept_npend;
        res_t *dept_sum;
        /* Per leaf department, the id of its first job the last fair pass held at a cap, or 0:
         * that pass did not read the later ones, which wait for the cap too (ctl_wait_shown). */
        uint64_t *dept_cap_from;
        bool dept_walking; /* a pass walks the sets: jobs leaving them leave their entries in place */
        const ctl_actions *act;
        void *userdata;
        /* The scheduling view, kept between passes (state.c's "view" functions): each node's
         * free resources at its index, indexed for the fit heuristics, updated as jobs are
         * charged and released and nodes come and go; the arrays a pass fills, reused; and what
         * the last pass leaves known while nothing but submissions changed since (settled):
         * its configuration, how many jobs were pending after it, whether one it offered fitted
         * nowhere, and whether jobs submitted since need a pass of their own only (see
         * state.c, "settled"). */
        sched_index view;
        sched_job *pass_jobs;
        sched_assignment *pass_out;
        size_t pass_cap;
        bool settled;
        bool settled_blocked;
        bool settled_incremental;
        size_t nsettled;
        ctl_config settled_cfg;
        /* The indexes of bulk cancels (ctl_idset): pending and running jobs, and each user's
         * live jobs (users sorted by uid); cancel_visits counts the entries bulk cancels looked
         * at, for tests. */
        ctl_idset pending_ids, running_ids;
        ctl_user_jobs *users;
        size_t nusers;
        size_t cancel_visits;
        size_t nreserved;      /* jobs of arrays begun and not yet made, counted against the caps */
        size_t pass_selective; /* jobs of this pass that may go only on some nodes (nodesel.h) */
        /* When pending jobs may start (waiting.c, depindex.c): who waits on whom; the time as the
         * controller last told (ctl_wait_tick, submissions), against which begin times are read;
         * the earliest begin time a pass saw still ahead (0: none); whether a pending job has a
         * nice value (passes then read the queue a job at a time, or whole: niceness reorders
         * it), counted as such jobs come, go and are updated. */
        depidx deps;
        int64_t clock_usec;
        int64_t next_begin_usec;
        size_t npending_nice;     /* the pending jobs with a nice value (ctl_nice_pending) */
        niceorder nice;           /* each owner's pending jobs by nice value, once a job had one (pass.c reads it) */
        int64_t nice_heads_begin; /* the earliest begin time of the jobs waiting for it that the nice
                                   * buckets' heads hold, which passes do not read again (0: none) */
        bool throttle_seen;       /* a pending job may be of a throttled array: passes count its tasks (arrays.c);
                                   * set as such a job is queued, found again whenever a pass reads the
                                   * whole queue */
        uint64_t reserved_id;     /* the job the last EASY pass reserved a start for (reservation.c), or 0 */
        /* The running jobs as EASY sees them (node, request, end by its limit) and whose each entry
         * is, kept as jobs start and end, so that a pass reads them without visiting every job. */
        sched_running *run_v;
        job **run_jobs;
        size_t nrun, run_cap;
        /* The arrays whose tasks are not all made (arrays.h, ctl_arec), by id; kept once all are,
         * since their ids and cancelled tasks still answer for them. */
        struct ctl_arec **arecs;
        size_t narecs;
        /* Store an array's record (arrays.h), as act->persist a job, in the turn's batch with the
         * tasks just made from it, so that a restart finds each task once: the caller sets it after
         * ctl_init when it stores anything (NULL: records live in memory only). Returns 0 or -errno. */
        int (*persist_array)(void *userdata, const struct ctl_arec *a);
        /* The jobs and arrays that dependencies link into families (family.h), for display. */
        famidx fam;
        /* st->jobs by id, for ctl_find_job: O(1) whatever ids are kept (jobtable.h). */
        jobtable byid;
        /* The records of the jobs made here (submissions), in id order (jobpool.h). */
        jobpool pool;
        /* Slots before st->pending in its allocation (pending_cap counts from the allocation's
         * start): the jobs that left the queue's head, whose slots are reclaimed when the queue
         * grows (ctl_pending_reserve), so that a start at the head moves no tail. */
        size_t pending_head;
        /* What lets a dispatcher's pass offer the arrivals alone (pass.c, "arrivals"): every
         * pending job's reason to wait is what the last whole pass set, nothing having changed it
         * since (ctl_schedule_dirty clears it); the queue holds a job out of id order; it holds a
         * singleton or a job that chooses its nodes (both need the whole queue's pass). */
        bool disp_marked;
        bool pending_unsorted;
        bool disp_whole;
        size_t pass_visits; /* pending jobs passes looked at (offered, or found by id), for tests */
        /* What lets an EASY pass stop reading the queue (pass.c, "EASY a job at a time"): no
         * pending job asks less than pending_floor, resource by resource ({0}: not known), and
         * none chooses its nodes or is a singleton unless pending_choosy; both kept as jobs are
         * queued, found again by a pass that reads the whole queue, forgotten by
         * ctl_schedule_dirty. */
        res_t pending_floor;
        bool pending_choosy;
        /* The queue's blocked head (pass.c, "the blocked head"): st->pending[0 .. blocked_head)
         * are held or wait for a dependency or their begin time, none a singleton or choosing its
         * nodes, each found so by a pass since an event that may have freed one
         * (ctl_schedule_dirty, or ctl_job_unblocked cutting the head before the job it frees);
         * their traits, for a pass that reads the rest whole, and their earliest begin time. */
        size_t blocked_head;
        ctl_queue_traits blocked_traits;
} ctl_state;

/* Initialise an empty state. */
void ctl_init(ctl_state *st, const ctl_config *cfg, const ctl_actions *act, void *userdata);
/* Free every job and node. */
void ctl_free(ctl_state *st);

/* (Re)build the fair order's tree from cfg.depts, whose contents the caller has just set or
 * replaced, under algorithm fairness (or -1), and recount what each department runs. Call it
 * after ctl_init and after every change of the departments. Returns 0 or -ENOMEM (the order is
 * then off until the next call succeeds). O(jobs). */
int ctl_set_depts(ctl_state *st, int fairness);

/* Take ownership of a job loaded from storage (pending, running or terminal). Running jobs
 * are charged to their node, which is created down if unknown, so that a node that never
 * returns turns them lost after the timeout. Returns 0 or -ENOMEM. */
int ctl_restore(ctl_state *st, job *j, ctl_time now);

/* Validate, number, persist and queue a submission; on success *id is set and spec has been
 * moved into the job (the caller's spec is zeroed). Returns 0 or -errno with err set. */
int ctl_submit(ctl_state *st, uid_t uid, gid_t gid, const char *user, job_spec *spec, int64_t now, uint64_t *id,
               char err[PROTO_ERRLEN]);
/* ctl_submit for a caller whose strings outlive the job (the simulator's, made once for each
 * type of job): the job borrows user and spec's strings rather than taking them, and freeing it
 * leaves them alone; spec stays the caller's, and its environment is not taken (the job has
 * none). Saves the strings' allocations of each job and their frees. Returns 0 or -errno with
 * err set. */
int ctl_submit_borrowing(ctl_state *st, uid_t uid, gid_t gid, const char *user, const job_spec *spec, int64_t now,
                         uint64_t *id, char err[PROTO_ERRLEN]);
/* ctl_submit for an array of count jobs (count 0: one plain job, as ctl_submit) with
 * consecutive ids from *first, their indexes taken in order from *indexes (moved into the
 * array, which frees it), or 0 to count - 1 when indexes is NULL: all are stored, or none (refused whole when they
 * would pass max_pending or a per-user or per-department cap). Each records its array (array_first, array_index); the
 * first owns the spec and persist stores the environment with it only; the others share its strings. On a failure after
 * the checks, the ids are skipped, never reused. Returns 0 or -errno with err set. O(count). */
int ctl_submit_array(ctl_state *st, uid_t uid, gid_t gid, const char *user, job_spec *spec, size_t count,
                     array_set *indexes, int64_t now, uint64_t *first, char err[PROTO_ERRLEN]);
/* An array submission made and stored a slice at a time (ctl_array_begin, ctl_array_more), so
 * that no turn of the controller's loop holds 100,000 jobs' writes. Its ids, and its room below
 * the caps, are taken when it begins: other submissions may come between its slices, numbered
 * after it. */
typedef struct ctl_array {
        uid_t uid;
        gid_t gid;
        char *user;    /* owned until the first job takes a copy, unless borrowed */
        job_spec spec; /* owned until the first job takes it, unless borrowed */
        bool borrowed; /* user and spec's strings are the caller's, the jobs' to borrow (ctl_submit_borrowing) */
        size_t count;  /* jobs to make (1 for a plain job) */
        size_t made;
        bool array; /* submitted with "array" (records array_first, array_index) */
        bool given_stdout;
        uint64_t first; /* the first job's id */
        job *owner;     /* the first job, whose strings the others borrow */
        int64_t now;
        array_set indexes; /* the tasks' indexes still to give, in order; empty: 0, 1, 2, ... */
} ctl_array;

/* Check a submission of count jobs (0: one plain job) as ctl_submit_array does, against
 * max_pending and the per-user and per-department caps, and take spec (zeroed) into a; nothing
 * is made yet, but its ids are taken and its jobs count against the caps (st->nreserved) until
 * ctl_array_more makes them or fails. Returns 0 or -errno with err set (spec stays the caller's). */
int ctl_array_begin(ctl_state *st, uid_t uid, gid_t gid, const char *user, job_spec *spec, size_t count, int64_t now,
                    ctl_array *a, char err[PROTO_ERRLEN]);
/* Make, persist and queue up to max more jobs of a. Returns 1 when all are made, 0 when more
 * remain, or -errno with err set: the jobs of earlier slices stay, the rest are never made and
 * their ids are skipped. O(max). */
int ctl_array_more(ctl_state *st, ctl_array *a, size_t max, char err[PROTO_ERRLEN]);
/* Free what a still owns (after it is done or abandoned). */
void ctl_array_free(ctl_array *a);

/* Which jobs a bulk cancel names: all of these that are given must hold. */
typedef struct ctl_cancel_filter {
        int64_t uid;            /* the owner's uid, or -1: anyone's */
        uint64_t array;         /* the array's first id, or 0 */
        const uint64_t *ranges; /* pairs lo, hi (inclusive), sorted, not overlapping; NULL: any id */
        size_t nranges;
        int state; /* JOB_PENDING or JOB_RUNNING, or -1: either */
} ctl_cancel_filter;

/* What a bulk cancel did. */
typedef struct ctl_cancel_counts {
        size_t cancelled;   /* pending jobs ended */
        size_t stopping;    /* running jobs whose agents were told to stop them */
        size_t refused;     /* jobs of other users (the caller is not root) */
        size_t unreachable; /* running on a node that is down */
} ctl_cancel_counts;

/* Cancel, on behalf of uid, the live jobs f names with ids from *cursor on, looking at no more
 * than max of them; *cursor moves past those seen. Only the live jobs of f's user, or of its
 * state, are looked at (st's indexes). Permission as ctl_cancel. The first call (*cursor 0 or 1)
 * also ends the tasks not made yet that f names (arrays.h: out of their record's set, emptied
 * when f names the whole array, O(1) per array). Returns 1 when no job is left to look at, 0 when more remain (call
 * again), or -ENOMEM. O(max x log n + records). */
int ctl_cancel_some(ctl_state *st, const ctl_cancel_filter *f, uid_t uid, int64_t now, uint64_t *cursor, size_t max,
                    ctl_cancel_counts *counts);
/* The first live (pending or running) job with an id >= id, of uid when uid >= 0, or NULL.
 * O(log n) through the indexes, whatever the other jobs. */
job *ctl_next_live(ctl_state *st, int64_t uid, uint64_t id);
/* Drop the cancelled jobs from the pending queue (ctl_schedule does it first). O(pending). */
void ctl_tidy(ctl_state *st);
/* Free the jobs that ended, and every entry that names them: for the simulator, once it has read
 * what it keeps of them, so that its memory follows the live jobs rather than all jobs. Not for
 * the controller: its users read ended jobs (show, queue, wait), and a job of an array or a
 * dependency is named by others; the caller ensures the state has neither (the simulator's have
 * neither). Ids are not reused: a forgotten id is known to no lookup. O(jobs kept + indexes). */
void ctl_forget_ended(ctl_state *st);

/* Cancel a job on behalf of uid (its owner or root). Pending jobs end at once; running ones are
 * cancelled by their agent. Returns 0 or -errno (-ENOENT, -EPERM, -EALREADY) with err set.
 * O(log jobs): the pending queue drops the job at the next pass. */
int ctl_cancel(ctl_state *st, uint64_t id, uid_t uid, int64_t now, char err[PROTO_ERRLEN]);
/* The job with that id, or NULL. O(1). */
job *ctl_find_job(ctl_state *st, uint64_t id);
/* ctl_find_job for a request that names one job alone (show, wait, cancel, hold, update): an
 * array's task not made yet is made (and stored) first, pending, or cancelled when its array was
 * cancelled before. NULL when no job has that id (or out of memory). O(log jobs + ranges). */
job *ctl_job_named(ctl_state *st, uint64_t id);
/* The index in st->jobs (id order) of the first job whose id is >= id; njobs when none. */
size_t ctl_first_job_from(const ctl_state *st, uint64_t id);

/* An agent said hello. The node is created or brought back up with this capacity. Jobs the
 * controller recorded as running there but that the agent does not list may have ended while
 * the two were apart, with the agent's report queued behind its hello: they stay running for
 * agent_timeout_usec, and become lost (or requeued) if no report ends them by then. Jobs it lists
 * that are not running there become the node's strays: the caller must tell the agent to stop
 * them (ctl_job_runs_on says which), and a stray job that is pending again is not placed anywhere
 * until the agent reports the stray's end, so that no job runs twice at once. A node of that
 * name that is already up is refused (-EEXIST). Returns 0 or -errno with err set. */
int ctl_node_up(ctl_state *st, const char *name, res_t capacity, const char *cgroup_mode, const char *cgroup_root,
                const uint64_t *running, size_t nrunning, void *link, ctl_time now, ctl_node **out,
                char err[PROTO_ERRLEN]);
/* The node's agent is gone for good (reason: "timed out"): its running jobs are lost, or
 * pending again (their attempt incremented) when submitted with requeue; its strays are
 * forgotten, since nothing more will be heard of them. */
void ctl_node_down(ctl_state *st, ctl_node *n, const char *reason, int64_t now);
/* The node's agent closed its connection: the node is down, but its running jobs stay
 * running, and charged to it, for node_lost_timeout_usec after it was last heard from, since the
 * jobs outlive their agent and a restarted one re-adopts them (its hello lists them). If no
 * agent of that name says hello by then, ctl_check_silence loses them. */
void ctl_node_disconnected(ctl_state *st, ctl_node *n);
/* Note that the node was heard from; a not-responding node is up again. Returns true when it
 * was not-responding (the caller should schedule: it takes jobs again), false otherwise. */
bool ctl_node_heard(ctl_state *st, ctl_node *n, ctl_time now);
/* The caller read no agent for the stall_usec up to now (one long turn of its loop: a huge
 * submission, a slow disk): add it to every node's last-heard time (never past now) and
 * reconnect window, so that it never counts as an agent's silence. */
void ctl_credit_stall(ctl_state *st, int64_t stall_usec, ctl_time now);
/* An up node silent for longer than agent_timeout_usec becomes not-responding (offered no job,
 * its jobs left running); a node silent for longer than node_lost_timeout_usec is down, its link
 * dropped and its running jobs lost (ctl_node_down); and the unconfirmed jobs of reconnected
 * nodes whose window has passed are lost. */
void ctl_check_silence(ctl_state *st, ctl_time now);
/* The node's state for users: "up", "not-responding" or "down"; a drained node that is up,
 * "draining" while it runs jobs, then "drained". */
const char *ctl_node_state_name(const ctl_node *n);
/* True when job id is recorded as running on n. */
bool ctl_job_runs_on(ctl_state *st, ctl_node *n, uint64_t id);
/* The node of that name, or NULL. */
ctl_node *ctl_find_node(ctl_state *st, const char *name);

/* The agent started job id: record its start time (and count the job as confirmed when its
 * agent's hello had not listed it); a start already recorded stays, with no event or store.
 * Returns 0, or -ENOENT if the job is not running on that node (the message is then ignored). */
int ctl_job_started(ctl_state *st, ctl_node *n, uint64_t id, int64_t start_usec);
/* Record the GPUs (their indexes, "0,2") n's agent gave job id, before its start is recorded
 * (which stores them). Returns 0, -ENOENT when id is not running on n, or -ENOMEM (logged; the
 * start is still to be recorded). */
int ctl_job_set_gpus(ctl_state *st, ctl_node *n, uint64_t id, const char *gpu_ids);
/* Set n's GPU type and its features: the agent's list with the type added (NULL for none of
 * either). Returns 0 or -ENOMEM. */
int ctl_node_set_gpu_type(ctl_state *st, ctl_node *n, const char *features, const char *gpu_type);
/* The agent's latest sample of job id's usage: kept in its record (in memory only: a sample is
 * not worth a disk write). Returns 0, or -ENOENT if the job is not running on that node. */
int ctl_job_usage(ctl_state *st, ctl_node *n, uint64_t id, const job_result *sample);
/* The agent reports job id ended in state with result (moved into the job); a lost job that
 * asked to be requeued is pending again as its next attempt. Frees the node's resources and
 * schedules again. Returns 0, -ENOENT (not running there: the report is a stray's, which is
 * forgotten) or -EINVAL (state). */
int ctl_job_finished(ctl_state *st, ctl_node *n, uint64_t id, job_state state, job_result *result, int64_t end_usec);

/* The fair order's figures now (rep->nodes: st->fair.n entries, the caller's), and the id of the
 * job it offers first in *next_id (0: none). Returns 0 or -errno (ENOMEM; EINVAL: the fair code
 * refused the tree). */
int ctl_fair_shares(ctl_state *st, fairorder_report *rep, uint64_t *next_id);
/* The attempt the job's current run is (1 for the first, more after requeues): reports of an
 * agent naming another attempt are about an earlier run, and must not be applied to this one. */
uint32_t ctl_job_attempt(const job *j);
/* The agent of n reported the end of an earlier attempt of job id (or of a stray): it no longer
 * runs it there, so the job may be placed again. */
void ctl_stray_ended(ctl_state *st, ctl_node *n, uint64_t id);
/* Whether n's agent was told to stop job id as a stray (its report of it is expected, not news). */
bool ctl_node_has_stray(const ctl_node *n, uint64_t id);

/* Place pending jobs on up nodes with the configured policy and launch them. Returns the
 * number launched, or -ENOMEM. O(pending x log nodes) for the fit heuristics but Mix-Fit and
 * Max-Jobs (O(pending x nodes)); O(1) when the last pass placed nothing and no job, node or
 * configuration changed since. */
long ctl_schedule(ctl_state *st);
/* Something a pass reads changed outside this file's own paths (a job's order, a weight): let
 * the next pass run in full. */
void ctl_schedule_dirty(ctl_state *st);
/* Pending job j may start now where it could not (a dependency met): the next pass runs, and
 * reads the queue from j on if j was in its blocked head. O(log pending). */
void ctl_job_unblocked(ctl_state *st, const job *j);

/* --- nodes chosen and drained (drain.c) --- */

/* n's use, state or drain changed outside the paths of state.c: bring the scheduling view up to
 * date. */
void ctl_node_sync(ctl_state *st, ctl_node *n);
/* A new node called name, down, that no agent has said hello for yet; NULL when out of
 * memory. */
ctl_node *ctl_node_create(ctl_state *st, const char *name);
/* Set n's features (a nodesel.h list, or NULL). Returns 0 or -ENOMEM. */
int ctl_node_set_features(ctl_state *st, ctl_node *n, const char *features);
/* Drain the node called name (created down when unknown, as a drain read back at start-up
 * may be) for reason: its running jobs finish, no new job is placed there. Draining again
 * replaces the reason. Returns 0 or -ENOMEM; *out is the node. */
int ctl_node_drain(ctl_state *st, const char *name, const char *reason, ctl_node **out);
/* Undo ctl_node_drain. Returns 0, or -EALREADY when it was not drained. */
int ctl_node_resume(ctl_state *st, ctl_node *n);
/* Whether the node of a job's selection (nodelist) exist, with a reason in err otherwise:
 * a list naming a node the controller does not know is refused. Returns 0 or -EINVAL. */
int ctl_check_nodesel(ctl_state *st, const job_spec *spec, char err[PROTO_ERRLEN]);
/* Whether job spec may be placed on n by its selection (constraint, nodelist, exclude); an
 * exclusive job also needs n idle, which the pass checks on its view. */
bool ctl_node_selected(const ctl_node *n, const job_spec *spec);
/* Whether spec chooses among nodes at all. */
bool ctl_spec_selective(const job_spec *spec);
/* Whether some connected, undrained node may take job j by its selection (always, for a job
 * that chooses none): a pending job for which this is false waits for one. */
bool ctl_job_selectable(const ctl_state *st, const job *j);
/* --- when pending jobs may start: dependencies, holds, begin times, nice (waiting.c) --------- */

/* End pending job j cancelled with reason (a dependency that can never be met). */
void ctl_end_pending(ctl_state *st, job *j, int64_t now, const char *reason);
/* Whether some known node could hold req. Returns 0 or -E2BIG with err set (the accept-anything
 * rule of submissions while no node is known applies). */
int ctl_request_feasible(ctl_state *st, res_t req, char err[PROTO_ERRLEN]);
/* The time is now (CLOCK_REALTIME us): a job whose begin time came lets the next pass run whole. */
void ctl_wait_tick(ctl_state *st, int64_t now);
/* Set the reason of the n pending jobs from the first-th on: held, dependency, begin time, or
 * provisionally what an eligible one waits for (a pass refines it). Returns how many of them
 * may not start now. O(n). */
size_t ctl_wait_mark(ctl_state *st, size_t first, size_t n);
/* ctl_wait_mark of one pending job, singletons apart (their turns compare jobs with each
 * other): true when it may not start now. */
bool ctl_wait_mark_job(ctl_state *st, job *j);
/* Keep, in order, the n offered jobs that may start now; returns how many. O(n log jobs). */
size_t ctl_wait_drop(ctl_state *st, sched_job *jobs, size_t n);
/* Pending job j waits for a department cap, unless it may not start anyway: as it was marked
 * (marked), or as ctl_wait_mark_job finds it now. */
void ctl_wait_capped(ctl_state *st, job *j, bool marked);
/* Why pending job j waits, as `colony queue` shows it: its own reason, or a department cap that
 * the last fair pass held an earlier job of its department at (the pass did not read j). O(1). */
job_wait ctl_wait_shown(const ctl_state *st, const job *j);
/* Reorder the n offered jobs so that each user's jobs in one group take the places they hold
 * in the order of their nice value (then id): nobody else's job moves. Returns 0 or -ENOMEM
 * (the order is left). O(n log n). */
int ctl_wait_nice(ctl_state *st, sched_job *jobs, size_t n);
/* After a pass placed placed of the offered jobs (in order): under strict FIFO the first
 * unplaced one waits for resources, the rest behind it for it (priority). */
void ctl_wait_blocker(ctl_state *st, const sched_job *jobs, size_t offered, long placed);

/* --- EASY backfill (reservation.c) and running limits (userlimit.c) ------------------------- */

/* Whether passes run EASY backfill (policies/backfill.h): order backfill with a fit heuristic
 * but Max-Jobs, and no dispatcher. */
bool ctl_easy_on(const ctl_state *st);
/* Offer jobs[0..njobs) to the EASY pass on the view at the controller's time (clock_usec), the
 * running jobs ending by their start and limit (now, for a launch not yet started; never, for
 * one without a limit). Records the reserved job's start (job.reserved_start_usec) and makes the
 * jobs the reservation holds back wait "priority". Returns the number of assignments in out, or
 * -ENOMEM. O(running log running + jobs log nodes). */
long ctl_easy_place(ctl_state *st, const sched_job *jobs, size_t njobs, sched_assignment *out);
/* ctl_easy_place over the jobs list hands out, which it may stop taking early
 * (sched_easy_place_from), but for the jobs it holds back: the caller marks those it took
 * (ctl_easy_held_back). */
long ctl_easy_place_from(ctl_state *st, const sched_job_list *list, sched_assignment *out);
/* Of the jobs[0..njobs) an EASY pass took, the placed ones being out[0..placed), those behind
 * the reserved job that fit a node now wait "priority": the reservation holds them back. */
void ctl_easy_held_back(ctl_state *st, const sched_job *jobs, size_t njobs, const sched_assignment *out, long placed);
/* Job j started running on node (at dispatch or restore) / its agent reported its start / it
 * stopped running there: keep the running array. Out of memory, a job is left out of it (a
 * reservation then comes sooner than it should). */
void ctl_running_add(ctl_state *st, job *j, size_t node);
void ctl_running_started(ctl_state *st, job *j);
void ctl_running_remove(ctl_state *st, job *j);
/* Whether c sets a running limit (per user, CPUs per user, per top-level department). */
bool ctl_running_limits_set(const ctl_config *c);
/* Keep, in order, the n offered jobs below their user's and top-level department's running
 * limits (counting those kept before them); the others wait "user limit" or "department cap".
 * Returns how many are kept. O(n x tallies). */
size_t ctl_user_limits(ctl_state *st, sched_job *jobs, size_t n);
/* The same a job at a time, for a pass that reads the queue as it places: the jobs offered so
 * far, per user and top-level department. NULL when no running limit is set (or no memory: the
 * pass may then pass a limit); free() it. */
typedef struct ctl_limit_counts ctl_limit_counts;
ctl_limit_counts *ctl_limit_counts_new(const ctl_state *st);
/* Whether j, offered next, stays below the limits with the jobs counts has taken before it: if
 * so counts takes it; if not, it waits "user limit" or "department cap". NULL counts: true. */
bool ctl_limit_admit(ctl_state *st, ctl_limit_counts *counts, job *j);
/* The tally of user uid, or of group's top-level department; NULL when it has none. */
ctl_tally *ctl_user_tally(ctl_state *st, uid_t uid);
ctl_tally *ctl_dept_tally(ctl_state *st, const char *group);

/* Hold (hold true) or release pending job id on behalf of uid (its owner or root). Returns 0 or
 * -ENOENT, -EPERM, -EBUSY (not pending), -EALREADY (already so) with err set. */
int ctl_hold(ctl_state *st, uint64_t id, uid_t uid, bool hold, char err[PROTO_ERRLEN]);
/* What update may change of a pending job: fields left negative (nice: INT_MIN, time limit:
 * INT64_MIN) are kept. */
typedef struct ctl_update_req {
        int64_t mcpu, mem;
        int nice;
        int64_t time_limit_usec; /* as submit's (JOB_TIME_UNLIMITED: the maximum), checked the same */
        int64_t gpus;            /* -1: unchanged, like mcpu and mem */
} ctl_update_req;
/* Change pending job id's request, nice value or time limit on behalf of uid (owner or root; a negative
 * nice: root only). Returns 0 or -ENOENT, -EPERM, -EBUSY (not pending), -EINVAL, -E2BIG (no
 * node could hold it) with err set; nothing changes on an error. */
int ctl_update(ctl_state *st, uint64_t id, uid_t uid, const ctl_update_req *u, char err[PROTO_ERRLEN]);
