/* arrec.c - an array as one record while its tasks wait (arrays.h, ctl_arec): its tasks made
 * a window ahead of the pass or when named alone, its set emptied by a bulk cancel, its row
 * stored in the turn that makes tasks from it. Part of the state machine (state_int.h). */
#include "arrays.h"
#include "log.h"
#include "state_int.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Tasks a record keeps made ahead of the pass at most, however fast the pass takes them. */
#define ARRAY_WINDOW_MAX 8192

/* Merge add[0..k) (in id order, ids not in v) into v[0..n) (in id order, with room for n + k),
 * keeping the order: O(k + the entries above the smallest id added). An array's task made
 * late goes in its id's place, before the jobs submitted after the array. */
static void merge_ids(job **v, size_t n, job *const *add, size_t k) {
        size_t out = n + k;
        while (k > 0)
                v[--out] = n > 0 && v[n - 1]->id > add[k - 1]->id ? v[--n] : add[--k];
}

int ctl_arec_store(ctl_state *st, const ctl_arec *a) {
        int r = st->persist_array ? st->persist_array(st->userdata, a) : 0;
        if (r < 0)
                log_error("array=%llu its record could not be stored: %s", (unsigned long long)a->first, strerror(-r));
        return r;
}

/* a's task of index in *out, in state (JOB_PENDING, or JOB_CANCELLED with the array before it was
 * made): its id from the index's position, the owner's strings, the record's fields. Returns 0 or
 * -ENOMEM (*out is then the caller's to free, or NULL). */
static int arec_task(const ctl_state *st, const ctl_arec *a, uint32_t index, job_state state, job **out) {
        const job *o = a->owner;
        size_t pos = 0;
        job *j = *out = calloc(1, sizeof(*j));
        if (!j)
                return -ENOMEM;
        (void)array_set_position(&a->all, index, &pos);
        *j = (job){ .id = a->first + pos,
                    .uid = o->uid,
                    .gid = o->gid,
                    .state = state,
                    .submit_usec = o->submit_usec,
                    .attempt = 1,
                    .array_first = a->first,
                    .array_index = index };
        job_borrow_spec(j, o, a->given_stdout);
        j->spec.req = a->tmpl.req;
        j->spec.nice = a->tmpl.nice;
        j->spec.hold = a->tmpl.hold;
        j->spec.time_limit_usec = a->tmpl.time_limit_usec;
        if (state != JOB_PENDING) {
                j->end_usec = st->clock_usec;
                if (!(j->result.error = strdup("cancelled with its array before it was made")))
                        return -ENOMEM;
        }
        return ctl_default_output(j);
}

/* Queue the n tasks just made and stored (in id order; room reserved): in their ids' places in
 * the jobs, the queue and the indexes, their dependencies indexed, their reasons marked. */
static void arec_queue(ctl_state *st, job **made, size_t n) {
        ctl_idset *u = ctl_user_jobs_of(st, made[0]->uid, false); /* ctl_reserve_jobs() added it */
        merge_ids(st->jobs, st->njobs, made, n);
        st->njobs += n;
        for (size_t i = 0; i < n; i++) {
                (void)jobtable_add(&st->byid, made[i]); /* room reserved */
                ctl_pending_noted(st, made[i]);
                ctl_pending_indexed(st, made[i], +1);
        }
        merge_ids(st->pending, st->npending, made, n);
        st->npending += n;
        merge_ids(st->pending_ids.v, st->pending_ids.n, made, n);
        st->pending_ids.n += n;
        merge_ids(u->v, u->n, made, n);
        u->n += n;
        st->nreserved -= n; /* the record's tasks become pending ones: the tallies stay */
        st->settled = false;
        st->disp_marked = false; /* ids below a dispatcher's arrivals: its kept jobs take them from a whole pass */
        for (size_t i = 0; i < n; i++) {
                size_t at = ctl_jobs_rank(st->pending, 0, st->npending, made[i]->id);
                if (depidx_add(st, made[i]) < 0)
                        log_error("job=%llu out of memory indexing its dependency: it waits for a restart",
                                  (unsigned long long)made[i]->id);
                if (at < st->npending && st->pending[at] == made[i])
                        (void)ctl_wait_mark(st, at, 1);
        }
}

/* Make a's pending tasks of indexes idx[0..n) (in ascending order, out of a->left already),
 * stored and queued. Returns 0, or -errno with the indexes put back in a->left. */
static int arec_make(ctl_state *st, ctl_arec *a, const uint32_t *idx, size_t n) {
        job **made = calloc(n + 1, sizeof(*made));
        int r = made ? ctl_reserve_jobs(st, a->owner->uid, n) : -ENOMEM;
        for (size_t i = 0; r == 0 && i < n; i++)
                r = arec_task(st, a, idx[i], JOB_PENDING, &made[i]);
        if (r == 0)
                r = ctl_persist_jobs(st, made, n);
        if (r == 0)
                arec_queue(st, made, n);
        for (size_t i = 0; r < 0 && i < n; i++) {
                if (made && made[i])
                        job_free(made[i]);
                if (made)
                        free(made[i]);
                (void)array_set_put(&a->left, idx[i]);
        }
        if (r < 0)
                log_error("array=%llu could not make %zu tasks: %s (they wait in its record)",
                          (unsigned long long)a->first, n, strerror(-r));
        free(made);
        return r;
}

/* Take up to n indexes out of a->left and make their tasks. Returns how many were made. */
static size_t arec_take(ctl_state *st, ctl_arec *a, size_t n) {
        uint32_t *idx = malloc((n + 1) * sizeof(*idx));
        size_t k = 0;
        while (idx && k < n && array_set_take(&a->left, &idx[k]) == 0)
                k++;
        if (k && (arec_make(st, a, idx, k) < 0 || ctl_arec_store(st, a) < 0))
                k = 0;
        free(idx);
        return k;
}

/* How many of a's tasks are made and pending, counted up to max. O(log pending + max + stale). */
static size_t arec_pending(const ctl_state *st, const ctl_arec *a, size_t max) {
        const ctl_idset *s = &st->pending_ids;
        size_t n = 0;
        for (size_t i = ctl_idset_rank(s, a->first); n < max && i < s->n && s->v[i]->id - a->first < a->count; i++)
                n += ctl_idset_member(s, s->v[i]);
        return n;
}

/* Keep each record's window of tasks made and pending; a record whose window the last pass took
 * whole gets a wider one. */
void ctl_arecs_topup(ctl_state *st) {
        for (size_t i = 0; i < st->narecs; i++) {
                ctl_arec *a = st->arecs[i];
                size_t have = a->owner && a->left.n ? arec_pending(st, a, a->window) : SIZE_MAX;
                if (have == 0 && a->window < ARRAY_WINDOW_MAX)
                        a->window *= 2;
                if (have < a->window)
                        (void)arec_take(st, a, a->window - have);
        }
}

/* Whether a record has tasks left but none made and pending: the pass took them all. */
bool ctl_arecs_exhausted(const ctl_state *st) {
        for (size_t i = 0; i < st->narecs; i++)
                if (st->arecs[i]->owner && st->arecs[i]->left.n && arec_pending(st, st->arecs[i], 1) == 0)
                        return true;
        return false;
}

/* The owner of a restored record is restored: the record counts its tasks against the caps. */
void ctl_arec_attach(ctl_state *st, ctl_arec *a, job *owner) {
        size_t n = array_set_count(&a->left);
        a->owner = owner;
        st->nreserved += n;
        ctl_tally_by(st, owner->uid, owner->spec.group, (ssize_t)n);
}

/* a's indexes, all of them, into *all. Returns 0 or -ENOMEM. */
static int array_indexes(const ctl_array *a, array_set *all) {
        if (a->indexes.n)
                return array_set_copy(&a->indexes, all);
        all->r = malloc(sizeof(*all->r));
        if (!all->r)
                return -ENOMEM;
        all->r[0] = (array_range){ 0, (uint32_t)(a->count - 1), 1 };
        all->n = all->cap = 1;
        return 0;
}

/* ctl_array_more for an array of more than ARRAY_WINDOW tasks: its first tasks (up to max and
 * the window) made, the others left in its record, which keeps their reservation. */
int ctl_array_record(ctl_state *st, ctl_array *a, size_t max, char err[PROTO_ERRLEN]) {
        ctl_arec rec = {
                .first = a->first, .count = a->count, .given_stdout = a->given_stdout, .window = ARRAY_WINDOW
        };
        size_t count = a->count, n = max < ARRAY_WINDOW ? max : ARRAY_WINDOW;
        int r = array_indexes(a, &rec.all);
        if (r == 0) {
                a->count = n; /* the first slice alone */
                r = ctl_make_slice(st, a, n, err);
                a->count = count;
        }
        if (r >= 0 && a->indexes.n) { /* the indexes the slice did not take */
                rec.left = a->indexes;
                a->indexes = (array_set){ 0 };
        } else if (r >= 0 && (r = array_indexes(a, &rec.left)) == 0) {
                rec.left.r[0].lo = (uint32_t)n; /* 0..count-1: the first n made */
        }
        rec.owner = a->owner;
        ctl_arec *kept = r >= 0 ? ctl_arec_add(st, &rec) : NULL;
        if (!kept) {
                if (r >= 0 || r == -ENOMEM)
                        snprintf(err, PROTO_ERRLEN, "out of memory recording the array (%zu of %zu tasks made)",
                                 a->made, count);
                ctl_arec_free(&rec);
                ctl_unreserve(st, a, count - n); /* the ids stay skipped (ctl_array_more) */
                a->made = count;
                return r < 0 ? r : -ENOMEM;
        }
        kept->tmpl = kept->owner->spec;
        a->made = count;
        if ((r = ctl_arec_store(st, kept)) < 0)
                snprintf(err, PROTO_ERRLEN, "could not record the array: %s", strerror(-r));
        return r < 0 ? r : 1;
}

/* Make the task of a whose index is not in a->left and whose job is not known: cancelled with its
 * array before it was made. Returns 0 or -errno. */
static int arec_cancelled(ctl_state *st, ctl_arec *a, uint32_t index) {
        job *j = NULL;
        int r = sched_grow(&st->jobs, &st->jobs_cap, st->njobs + 1, sizeof(*st->jobs));
        if (r == 0)
                r = jobtable_reserve(&st->byid, 1);
        if (r == 0 && (r = arec_task(st, a, index, JOB_CANCELLED, &j)) == 0 &&
            (r = st->act->persist(st->userdata, j)) == 0) {
                merge_ids(st->jobs, st->njobs++, &j, 1);
                (void)jobtable_add(&st->byid, j); /* room reserved */
                a->cancelled--;                   /* depindex.c counts the job instead */
                return ctl_arec_store(st, a);
        }
        if (j)
                job_free(j);
        free(j);
        return r;
}

job *ctl_job_named(ctl_state *st, uint64_t id) {
        job *j = ctl_find_job(st, id);
        ctl_arec *a = j ? NULL : ctl_arec_of(st, id);
        uint32_t index;
        if (!a || !a->owner || !array_set_at(&a->all, id - a->first, &index))
                return j;
        int r = array_set_remove(&a->left, index);
        if (r == 0 && (r = arec_make(st, a, &index, 1)) == 0)
                r = ctl_arec_store(st, a);
        else if (r == -ENOENT && a->cancelled)
                r = arec_cancelled(st, a, index);
        return r == 0 ? ctl_find_job(st, id) : NULL;
}

/* Whether f may name tasks of a: no state but pending, a's owner, a's id. */
static bool cancel_names_record(const ctl_cancel_filter *f, const ctl_arec *a) {
        return f->state != JOB_RUNNING && (f->uid < 0 || a->owner->uid == (uid_t)f->uid) &&
               (!f->array || f->array == a->first);
}

/* Take out of set (a->left, or a copy) the indexes of a's tasks whose ids f's ranges name (every
 * one without ranges: the set emptied, O(1)), their number into *n. Returns 0 or -ENOMEM. */
static int cut_named(const ctl_cancel_filter *f, const ctl_arec *a, array_set *set, size_t *n) {
        uint64_t last = a->first + a->count - 1;
        *n = 0;
        if (!f->ranges) {
                *n = array_set_count(set);
                array_set_free(set);
                return 0;
        }
        for (size_t i = 0; i < f->nranges; i++) {
                uint64_t lo = f->ranges[2 * i] > a->first ? f->ranges[2 * i] : a->first;
                uint64_t hi = f->ranges[2 * i + 1] < last ? f->ranges[2 * i + 1] : last;
                uint32_t from, to;
                size_t cut;
                if (lo > hi || !array_set_at(&a->all, lo - a->first, &from) ||
                    !array_set_at(&a->all, hi - a->first, &to))
                        continue;
                if (array_set_cut(set, from, to, &cut) < 0)
                        return -ENOMEM;
                *n += cut;
        }
        return 0;
}

/* The bulk cancel f, on behalf of uid: the tasks not made yet that it names end at once, out of
 * their record's set (emptied when f names the whole array: O(1)), counted in counts. */
void ctl_cancel_unmade(ctl_state *st, const ctl_cancel_filter *f, uid_t uid, int64_t now, ctl_cancel_counts *counts) {
        for (size_t i = 0; i < st->narecs; i++) {
                ctl_arec *a = st->arecs[i];
                size_t n = a->owner ? array_set_count(&a->left) : 0;
                if (n == 0 || !cancel_names_record(f, a))
                        continue;
                if (uid != 0 && uid != a->owner->uid) { /* the tasks it names, counted on a copy */
                        array_set named = { 0 };
                        if (array_set_copy(&a->left, &named) == 0 && cut_named(f, a, &named, &n) == 0)
                                counts->refused += n;
                        array_set_free(&named);
                        continue;
                }
                if (cut_named(f, a, &a->left, &n) < 0)
                        log_error("array=%llu out of memory cutting its set: some of its tasks named were not "
                                  "cancelled",
                                  (unsigned long long)a->first);
                if (n == 0)
                        continue;
                a->cancelled += n;
                counts->cancelled += n;
                st->nreserved -= n;
                ctl_tally_by(st, a->owner->uid, a->owner->spec.group, -(ssize_t)n);
                ctl_report(st, &(ctl_event){ .job_id = a->first, .what = "array-cancelled", .uid = uid, .count = n },
                           false);
                (void)ctl_arec_store(st, a);
                depidx_unmade_ended(st, a->first, n, now);
                ctl_family_unmade_ended(st, a->first, n);
        }
}
