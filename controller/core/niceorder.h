/* niceorder.h - each owner's pending jobs by nice value, kept as jobs come and go, so that a
 * pass reading the queue a job at a time gives the places an owner's jobs hold in it to that
 * owner's jobs in nice order (the order ctl_wait_nice gives a whole list, waiting.c). */
#pragma once
#include "idset.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* An owner's pending jobs of one nice value, by id (stale entries: ctl_idset). Its entries
 * before head are stale or blocked for good (niceorder_next's stays), while heads is the
 * index's: readings start after them, as a pass starts after the queue's blocked head. */
typedef struct nice_bucket {
        int nice;
        ctl_idset jobs;
        size_t head;
        uint64_t heads;
} nice_bucket;

/* A user's jobs in one group, the unit a nice value reorders. */
typedef struct nice_owner {
        uid_t uid;
        char *group;          /* NULL: none */
        nice_bucket *buckets; /* by nice value, ascending: few per owner */
        size_t nbuckets;
        uint64_t reading; /* the reading that bucket and at are the place of */
        size_t bucket, at;
} nice_owner;

/* Off (empty, costing nothing) until a job with a nice value is queued: niceorder_build. */
typedef struct niceorder {
        bool on;
        nice_owner *owners; /* by uid, then group */
        size_t n;
        uint64_t reading;
        uint64_t heads; /* the buckets' heads are valid while theirs is this (niceorder_forget_heads) */
} niceorder;

/* Turn the index on with the members of pending, the pending jobs. Returns 0 or -ENOMEM. */
int niceorder_build(niceorder *no, const ctl_idset *pending);
/* j joins (sign +1) or leaves (-1) its owner's pending jobs. Returns 0 or -ENOMEM. */
int niceorder_pending(niceorder *no, job *j, int sign);
/* Pending job j's nice value changed from was: its entry moves. Returns 0 or -ENOMEM. */
int niceorder_renice(niceorder *no, job *j, int was);
/* Start a reading of the queue: every owner's next job is its first again. */
void niceorder_begin(niceorder *no);
/* The next job of j's owner in nice order (by nice value, then id) in this reading that
 * take(arg, job) accepts, those it refuses passed over for the rest of the reading, and those
 * it refuses that stays(arg, job) says stay blocked, at a bucket's head, passed over by later
 * readings too; NULL when none is left. *visits counts the entries looked at. */
job *niceorder_next(niceorder *no, const job *j, bool (*take)(void *, job *), bool (*stays)(void *, const job *),
                    void *arg, size_t *visits);
/* The id of the k-th (from 1) pending task, by id, of the array of j's owner that task j is
 * of that take(arg, job) accepts (its tasks of every nice value); UINT64_MAX when fewer.
 * *visits counts the entries looked at. O(nice values x log jobs) a task looked at. */
uint64_t niceorder_array_nth(niceorder *no, const job *j, size_t k, bool (*take)(void *, job *), void *arg,
                             size_t *visits);
/* A job that stayed blocked may start now (a release, a dependency met): readings look at
 * every bucket from its start again. */
void niceorder_forget_heads(niceorder *no);
/* Drop every stale entry (before their jobs are freed). */
void niceorder_compact(niceorder *no);
/* Free the index; it is off after. */
void niceorder_free(niceorder *no);
