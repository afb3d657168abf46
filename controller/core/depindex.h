/* depindex.h - who waits on whom: the controller's index from a job (or a whole array, by its
 * first id) to the pending jobs whose dependency names it (shared/depend.h has the syntax).
 *
 * Each job or array named by a pending job's dependency has a record: how many members it has
 * and how many have started, ended and completed, kept by the transitions state.c reports
 * (depidx_changed), and the list of (waiter, kind) entries not yet decided. A job's transition
 * looks up at most two records (its own id, its array's first id) and decides only their
 * entries: a job's end costs O(its dependents), never a scan of the queue. An entry is decided
 * once: met (the waiter's deps_unmet drops by one) or never met (deps_never; the waiter ends
 * cancelled unless kill_invalid_depend = no). A record without entries is dropped; a later
 * waiter makes it again, counting the array's members once (O(array)).
 *
 * Records live in an idmap (idmap.h), by their id. */
#pragma once
#include "idmap.h"
#include "job.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct depidx_waiter {
        job *waiter;
        int kind; /* a dep_kind */
} depidx_waiter;

typedef struct depidx_target {
        uint64_t id; /* first: the record's key in its idmap */
        uint32_t members, started, ended, ok;
        depidx_waiter *w;
        uint32_t nw, capw;
} depidx_target;

typedef struct depidx {
        idmap recs;     /* depidx_target records, each allocated */
        uint64_t *todo; /* records whose entries a transition may decide */
        size_t ntodo, captodo;
        bool draining;
        struct depidx *names; /* for singleton: per user and job name (a 64-bit hash of both, never
                               * 0), how many such jobs run, in "started"; NULL until the first
                               * singleton, which counts the running jobs once */
} depidx;

struct ctl_state;

/* Check a submission's dependency (spec->dependency, already parsed once by job_spec_from_json)
 * against the jobs st knows: every id must name a job (an array's first id: the array), and,
 * unless keep_invalid is set, none may be already impossible. Returns 0, or -ENOENT/-EINVAL/
 * -ENOMEM with a one-line reason in err. O(items x (log jobs + the arrays' sizes)). */
int depidx_check(struct ctl_state *st, const job_spec *spec, char err[PROTO_ERRLEN]);
/* Index pending job j's dependency (after its submission or restore): set j->deps_unmet and
 * j->deps_never; ids no longer known (at a restore) count as met. Returns 0 or -ENOMEM. */
int depidx_add(struct ctl_state *st, job *j);
/* Job j went from state was to j->state (placed, requeued or ended): count it in its records and
 * decide their entries, ending the waiters whose dependency can no longer be met (with a reason)
 * unless the configuration keeps them; the ends this causes are handled in turn, not recursively. */
void depidx_changed(struct ctl_state *st, job *j, job_state was, int64_t now);
/* n tasks of array (its id) not made yet were cancelled with it (arrays.h): count them ended,
 * not completed, and decide the entries waiting on the array. */
void depidx_unmade_ended(struct ctl_state *st, uint64_t array, size_t n, int64_t now);
/* Whether a job of j's user and name runs (j waits when it is a singleton). O(1). */
bool depidx_singleton_busy(struct ctl_state *st, const job *j);
/* The key of j's user and name for singleton: a 64-bit hash, never 0. */
uint64_t depidx_name_key(const job *j);
/* Free the index. */
void depidx_free(depidx *d);
