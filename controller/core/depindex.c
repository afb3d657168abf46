/* depindex.c - the index of dependencies (see depindex.h). */
#include "depindex.h"
#include "depend.h"
#include "arrays.h"
#include "log.h"
#include "state_int.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What a job or an array is at, for its dependents. */
typedef struct dep_counts {
        uint32_t members, started, ended, ok;
} dep_counts;

typedef enum { DEP_WAIT, DEP_MET, DEP_NEVER } dep_status;

static void count_one(dep_counts *c, const job *j) {
        c->members++;
        c->started += j->state != JOB_PENDING;
        c->ended += job_state_is_terminal(j->state);
        c->ok += j->state == JOB_COMPLETED;
}

/* Count the job id names: itself, or every member of the array it is the first of. Returns 0 or
 * -ENOENT. O(log jobs + the array's size). */
static int count_target(struct ctl_state *st, uint64_t id, dep_counts *c) {
        *c = (dep_counts){ 0 };
        size_t i = ctl_first_job_from(st, id);
        if (i == st->njobs || st->jobs[i]->id != id)
                return -ENOENT;
        if (st->jobs[i]->array_first != id) {
                count_one(c, st->jobs[i]);
                return 0;
        }
        for (; i < st->njobs && st->jobs[i]->array_first == id; i++)
                count_one(c, st->jobs[i]);
        const ctl_arec *a = ctl_arec_of(st, id); /* and its tasks not made yet: pending, or cancelled */
        if (a && a->first == id) {
                c->members += (uint32_t)(array_set_count(&a->left) + a->cancelled);
                c->started += (uint32_t)a->cancelled;
                c->ended += (uint32_t)a->cancelled;
        }
        return 0;
}

static dep_status status_of(const dep_counts *c, int kind) {
        uint32_t notok = c->ended - c->ok;
        switch (kind) {
        case DEP_AFTER: return c->started == c->members ? DEP_MET : DEP_WAIT;
        case DEP_AFTERANY: return c->ended == c->members ? DEP_MET : DEP_WAIT;
        case DEP_AFTEROK: return notok ? DEP_NEVER : c->ok == c->members ? DEP_MET : DEP_WAIT;
        case DEP_AFTERNOTOK: return c->ended < c->members ? DEP_WAIT : notok ? DEP_MET : DEP_NEVER;
        default: return DEP_NEVER;
        }
}

/* Why kind on id can never be met, into err. */
static void never_reason(char *err, size_t len, int kind, uint64_t id, const dep_counts *c) {
        if (c->members > 1)
                snprintf(err, len, "dependency %s:%llu can never be met: %s of array %llu's %u jobs completed",
                         dep_kind_name(kind), (unsigned long long)id, kind == DEP_AFTEROK ? "not all" : "all",
                         (unsigned long long)id, c->members);
        else
                snprintf(err, len, "dependency %s:%llu can never be met: job %llu %s", dep_kind_name(kind),
                         (unsigned long long)id, (unsigned long long)id,
                         kind == DEP_AFTEROK ? "did not complete" : "completed");
}

int depidx_check(struct ctl_state *st, const job_spec *spec, char err[PROTO_ERRLEN]) {
        dep_list l;
        int r;
        if (!spec->dependency)
                return 0;
        if ((r = dep_parse(spec->dependency, &l, err, PROTO_ERRLEN)) < 0)
                return r;
        for (size_t i = 0; r == 0 && i < l.n; i++) {
                const dep_item *d = &l.items[i];
                dep_counts c;
                if (d->kind == DEP_SINGLETON)
                        continue; /* names no job */
                if (count_target(st, d->id, &c) < 0) {
                        snprintf(err, PROTO_ERRLEN, "dependency %s:%llu: no job %llu", dep_kind_name(d->kind),
                                 (unsigned long long)d->id, (unsigned long long)d->id);
                        r = -ENOENT;
                } else if (!st->cfg.keep_invalid_depend && status_of(&c, d->kind) == DEP_NEVER) {
                        never_reason(err, PROTO_ERRLEN, d->kind, d->id, &c);
                        r = -EINVAL;
                }
        }
        dep_list_free(&l);
        return r;
}

/* --- the hash table -------------------------------------------------------------------------- */

_Static_assert(offsetof(depidx_target, id) == 0, "a record's id is its key in the idmap");

static depidx_target *find(depidx *d, uint64_t id) { return idmap_find(&d->recs, id); }

/* A new record of id, zero but for it. Returns NULL on -ENOMEM. */
static depidx_target *insert(depidx *d, uint64_t id) {
        depidx_target *t = calloc(1, sizeof(*t));
        if (!t)
                return NULL;
        t->id = id;
        if (idmap_add(&d->recs, t) < 0) {
                free(t);
                return NULL;
        }
        return t;
}

/* Remove t and free it. */
static void erase(depidx *d, depidx_target *t) {
        (void)idmap_remove(&d->recs, t->id);
        free(t->w);
        free(t);
}

/* The record of id, made (by counting) when missing. Returns NULL when id names no job
 * (*unknown) or on -ENOMEM. */
static depidx_target *record(struct ctl_state *st, uint64_t id, bool *unknown) {
        depidx *d = &st->deps;
        depidx_target *t = find(d, id);
        dep_counts c;
        *unknown = false;
        if (t)
                return t;
        if (count_target(st, id, &c) < 0) {
                *unknown = true;
                return NULL;
        }
        if (!(t = insert(d, id)))
                return NULL;
        t->members = c.members;
        t->started = c.started;
        t->ended = c.ended;
        t->ok = c.ok;
        return t;
}

static int add_waiter(depidx_target *t, job *j, int kind) {
        size_t cap = t->capw;
        if (sched_grow(&t->w, &cap, (size_t)t->nw + 1, sizeof(*t->w)) < 0 || cap > UINT32_MAX)
                return -ENOMEM;
        t->capw = (uint32_t)cap;
        t->w[t->nw++] = (depidx_waiter){ j, kind };
        return 0;
}

static dep_counts counts_of(const depidx_target *t) { return (dep_counts){ t->members, t->started, t->ended, t->ok }; }

uint64_t depidx_name_key(const job *j) {
        uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a over the uid and the name */
        for (size_t i = 0; i < sizeof(j->uid); i++)
                h = (h ^ ((j->uid >> (8 * i)) & 0xff)) * 0x100000001b3ull;
        for (const char *p = j->spec.name ? j->spec.name : ""; *p; p++)
                h = (h ^ (unsigned char)*p) * 0x100000001b3ull;
        return h ? h : 1;
}

bool depidx_singleton_busy(struct ctl_state *st, const job *j) {
        depidx_target *t = st->deps.names ? find(st->deps.names, depidx_name_key(j)) : NULL;
        return t && t->started;
}

/* Count j's move into or out of running by its user and name. */
static void count_running(depidx *d, const job *j, job_state was) {
        int delta = (j->state == JOB_RUNNING) - (was == JOB_RUNNING);
        if (!d->names || !delta)
                return; /* no singleton yet: nobody asks */
        uint64_t key = depidx_name_key(j);
        depidx_target *t = find(d->names, key);
        if (delta < 0 && t && --t->started == 0)
                erase(d->names, t);
        if (delta <= 0)
                return;
        if (t) {
                t->started++;
                return;
        }
        if (!(t = insert(d->names, key))) {
                log_error("job=%llu out of memory: a singleton of its name may start beside it",
                          (unsigned long long)j->id);
                return;
        }
        t->started = 1;
}

/* Start counting running jobs by user and name, for the first singleton: those running now.
 * Returns 0 or -ENOMEM. O(jobs), once. */
static int count_names(struct ctl_state *st) {
        depidx *d = &st->deps;
        if (d->names)
                return 0;
        if (!(d->names = calloc(1, sizeof(*d->names))))
                return -ENOMEM;
        for (size_t i = 0; i < st->njobs; i++)
                if (st->jobs[i]->state == JOB_RUNNING)
                        count_running(d, st->jobs[i], JOB_PENDING);
        return 0;
}

int depidx_add(struct ctl_state *st, job *j) {
        dep_list l;
        char err[PROTO_ERRLEN];
        int r = 0;
        j->deps_unmet = 0;
        j->deps_never = false;
        if (!j->spec.dependency || dep_parse(j->spec.dependency, &l, err, sizeof(err)) < 0)
                return 0; /* checked at submit */
        for (size_t i = 0; r == 0 && i < l.n; i++) {
                bool unknown;
                if (l.items[i].kind == DEP_SINGLETON && (r = count_names(st)) == 0) {
                        j->singleton = true;
                        st->pending_choosy = true; /* a pass reads the whole queue (pass.c) */
                }
                depidx_target *t = l.items[i].kind == DEP_SINGLETON ? NULL : record(st, l.items[i].id, &unknown);
                if (!t) {
                        r = l.items[i].kind == DEP_SINGLETON || unknown ? 0 : -ENOMEM; /* gone: met long ago */
                        continue;
                }
                dep_counts c = counts_of(t);
                dep_status s = status_of(&c, l.items[i].kind);
                if (s == DEP_NEVER)
                        j->deps_never = true;
                else if (s == DEP_WAIT && (r = add_waiter(t, j, l.items[i].kind)) == 0)
                        j->deps_unmet++;
                if (t->nw == 0)
                        erase(&st->deps, t);
        }
        dep_list_free(&l);
        return r;
}

/* Count j's move from was in t. */
static void count_move(depidx_target *t, const job *j, job_state was) {
        if (was == JOB_PENDING && j->state != JOB_PENDING)
                t->started++;
        if (was == JOB_RUNNING && j->state == JOB_PENDING)
                t->started--;
        if (job_state_is_terminal(j->state) && !job_state_is_terminal(was)) {
                t->ended++;
                t->ok += j->state == JOB_COMPLETED;
        }
}

static int todo_push(depidx *d, uint64_t id) {
        if (sched_grow(&d->todo, &d->captodo, d->ntodo + 1, sizeof(*d->todo)) < 0)
                return -ENOMEM;
        d->todo[d->ntodo++] = id;
        return 0;
}

/* Decide the entries of record id (if any); the waiters this ends push their own records. */
static void decide(struct ctl_state *st, uint64_t id, int64_t now) {
        depidx_target *t = find(&st->deps, id);
        if (!t)
                return;
        dep_counts c = counts_of(t);
        for (uint32_t i = 0; i < t->nw;) {
                depidx_waiter w = t->w[i];
                dep_status s = w.waiter->state == JOB_PENDING ? status_of(&c, w.kind) : DEP_MET;
                if (s == DEP_WAIT) {
                        i++;
                        continue;
                }
                t->w[i] = t->w[--t->nw]; /* decided: the order of the others does not matter */
                if (w.waiter->state != JOB_PENDING)
                        continue;
                if (s == DEP_MET) {
                        w.waiter->deps_unmet--;
                        ctl_job_unblocked(st, w.waiter);
                        continue;
                }
                char why[PROTO_ERRLEN];
                never_reason(why, sizeof(why), w.kind, id, &c);
                w.waiter->deps_never = true;
                ctl_schedule_dirty(st); /* its reason to wait changed */
                if (st->cfg.keep_invalid_depend) {
                        ctl_report(st,
                                   &(ctl_event){ .job_id = w.waiter->id,
                                                 .what = "kept-pending",
                                                 .reason = why,
                                                 .job = w.waiter },
                                   false);
                        continue;
                }
                ctl_end_pending(st, w.waiter, now, why); /* pushes its own records, decided later; t stays */
        }
        if (t->nw == 0)
                erase(&st->deps, t);
}

/* Decide the records pushed, unless a decision up the stack does it. */
static void drain(struct ctl_state *st, int64_t now) {
        depidx *d = &st->deps;
        if (d->draining)
                return;
        d->draining = true;
        while (d->ntodo)
                decide(st, d->todo[--d->ntodo], now);
        d->draining = false;
}

void depidx_changed(struct ctl_state *st, job *j, job_state was, int64_t now) {
        depidx *d = &st->deps;
        uint64_t keys[2] = { j->array_first != j->id ? j->id : 0, j->array_first };
        count_running(d, j, was);
        if (!d->recs.n)
                return;
        for (size_t k = 0; k < 2; k++) {
                depidx_target *t = keys[k] ? find(d, keys[k]) : NULL;
                if (!t)
                        continue;
                count_move(t, j, was);
                if (todo_push(d, keys[k]) < 0)
                        log_error("job=%llu out of memory: its dependents are decided at its next change",
                                  (unsigned long long)j->id);
        }
        drain(st, now);
}

void depidx_unmade_ended(struct ctl_state *st, uint64_t array, size_t n, int64_t now) {
        depidx_target *t = find(&st->deps, array);
        if (!t)
                return; /* nobody waits on it: a later waiter counts the record (count_target) */
        t->started += (uint32_t)n;
        t->ended += (uint32_t)n;
        if (todo_push(&st->deps, array) < 0)
                log_error("array=%llu out of memory: its dependents are decided at its next change",
                          (unsigned long long)array);
        drain(st, now);
}

void depidx_free(depidx *d) {
        if (d->names)
                depidx_free(d->names);
        free(d->names);
        for (size_t i = 0; i < d->recs.cap; i++) {
                depidx_target *t = d->recs.slots[i];
                if (t)
                        free(t->w);
                free(t);
        }
        idmap_free(&d->recs);
        free(d->todo);
        *d = (depidx){ 0 };
}
