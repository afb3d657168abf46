/* arrays.h - job arrays in the controller: one name for a whole array (its id, the first task's)
 * and one for each task (A_i: the array's id and the task's index), the throttle ("%N": at
 * most N tasks running at once) that a scheduling pass applies, and the array's record while
 * its tasks wait. An array's tasks have consecutive ids from the array's id, in ascending order
 * of their indexes, taken when it is submitted (state.c, ctl_array_more), so both names resolve
 * by binary search over the jobs in id order, or over the records. */
#pragma once
#include "state.h"
#include <cjson/cJSON.h>

/* Tasks an array of more than this is submitted with; the rest wait in its record, and a pass
 * keeps at least this many made ahead of itself (more when it places them all in one go). */
#define ARRAY_WINDOW 256

/* An array while its tasks wait: one record, its first tasks (made at submission; the first
 * holds the spec, the script and the environment) and the set of the indexes whose tasks are
 * not made yet, a few bytes per range of them. Task i's id is the array's id plus i's position
 * among all its indexes: a task made later goes in its id's place in the queue. A pass makes
 * tasks a window ahead of itself (ctl_schedule), a request naming one task alone makes it
 * (ctl_job_named), a bulk cancel of the array empties the set. The record counts against the
 * caps (st->nreserved, the tallies) for the tasks of its set. */
typedef struct ctl_arec {
        uint64_t first;    /* the array's id */
        size_t count;      /* its tasks, made or not */
        array_set all;     /* every index: a task's id is first + the index's position here */
        array_set left;    /* the indexes whose tasks are not made yet */
        size_t cancelled;  /* tasks cancelled with the array before they were made, not made since */
        job *owner;        /* the first task, whose strings the others borrow (NULL until restored) */
        job_spec tmpl;     /* of it, only what a task made later takes over its owner's spec, which
                            * an update of the first task alone changes: req, nice, time_limit_usec,
                            * and hold (as the array was submitted, or held or released whole) */
        bool given_stdout; /* the output path was given, not made from the first task's id */
        size_t window;     /* tasks kept made ahead of the pass */
} ctl_arec;

/* The record whose tasks' ids include id, or NULL. O(log records). */
ctl_arec *ctl_arec_of(const ctl_state *st, uint64_t id);
/* Add a (taken: the caller's struct is zeroed) to st's records, in id order. Returns it, or NULL
 * (-ENOMEM: a is left the caller's). */
ctl_arec *ctl_arec_add(ctl_state *st, ctl_arec *a);
/* Free what a holds (not its owner, whose the strings are). */
void ctl_arec_free(ctl_arec *a);
/* a's stored form: {"id", "all", "left", "cancelled", "hold", "mcpu", "mem", "nice",
 * "time_limit_usec", "given_stdout"} (the sets in Slurm's text, "" when empty). NULL when out of
 * memory. */
cJSON *ctl_arec_to_json(const ctl_arec *a);
/* Read a stored record into *a (zeroed by the caller): no owner yet (ctl_restore attaches its
 * first task). Returns 0, or -EINVAL/-ENOMEM with a one-line reason in err. */
int ctl_arec_from_json(const cJSON *o, ctl_arec *a, char err[PROTO_ERRLEN]);
/* Add "records" to a queue listing: for each array of uid (anyone's when uid < 0) with tasks not
 * made yet, {"id", "pending" (their indexes, Slurm's text), "count", "next_id" (the id of the
 * first of them), "throttle", "hold", "user", "name", "mcpu", "mem", "time_limit_usec",
 * "submit_usec"}. Returns 0 or -ENOMEM. */
int ctl_arecs_list(const ctl_state *st, int64_t uid, cJSON *reply);

/* The last task's id of the array whose id is id, into *last. Returns 0, or -ENOENT with a
 * one-line reason in err (no such job, or not an array's first task). O(log jobs). */
int ctl_array_span(ctl_state *st, uint64_t id, uint64_t *last, char err[PROTO_ERRLEN]);
/* The id of task index of the array whose id is array, into *id. Returns 0, or -ENOENT with a
 * one-line reason in err. O(log jobs). */
int ctl_array_task(ctl_state *st, uint64_t array, uint32_t index, uint64_t *id, char err[PROTO_ERRLEN]);
/* Drop from the n jobs a pass offers (in its order) the tasks of throttled arrays beyond what
 * their throttle leaves, counting each array's running tasks and its tasks offered before, and
 * mark them JOB_WAIT_THROTTLE. Returns how many jobs are kept, in order. O(n log jobs +
 * running); a no-op while no pending job may be of a throttled array (st->throttle_seen). */
size_t ctl_array_throttle(ctl_state *st, sched_job *jobs, size_t n);
/* The same a job at a time, for a pass that reads the queue as it places: each throttled
 * array's tasks that run or that the pass offered so far. */
typedef struct ctl_array_loads {
        struct array_load *v;
        size_t n, cap, last; /* last: the entry found last (an array's tasks come together) */
        bool on;             /* st->throttle_seen when it started: off, every job is admitted */
} ctl_array_loads;
/* Count the running tasks of throttled arrays into *t. O(running). */
void ctl_array_loads_start(const ctl_state *st, ctl_array_loads *t);
/* Whether j, offered next, stays within its array's throttle with the tasks t counted: if so t
 * counts it; if not it waits "throttle" (as when t has no memory to count it). */
bool ctl_array_admit(ctl_array_loads *t, job *j);
/* Whether task j, that may start, is one the whole list's throttle admits, whatever the order
 * it is read in: of its array's tasks that may start, by id, one of the first its throttle
 * leaves beside the tasks that ran when t started (the tasks of an array come in id order in
 * every order of the queue). nth(arg, j, k) gives the k-th of them, or UINT64_MAX when fewer;
 * it is asked once a pass per array. If not, j waits "throttle". */
bool ctl_array_within(ctl_array_loads *t, job *j, uint64_t (*nth)(void *, const job *, size_t), void *arg);
/* Free what t holds. */
void ctl_array_loads_free(ctl_array_loads *t);
/* Store a's record (st->persist_array), in the turn's batch. Returns 0 or -errno (logged). */
int ctl_arec_store(ctl_state *st, const ctl_arec *a);
/* Hold (hold true) or release every pending task of the array whose id is id on behalf of uid:
 * each made one as ctl_hold does, and those not made yet at once (its record's hold, which they
 * take when made). *done counts the tasks changed, *unchanged the others (not pending, already so,
 * another user's), the first one's reason in err. Returns 0, or -ENOENT (not an array's id) with
 * err set. O(tasks made + log jobs). */
int ctl_hold_array(ctl_state *st, uint64_t id, uid_t uid, bool hold, size_t *done, size_t *unchanged,
                   char err[PROTO_ERRLEN]);
