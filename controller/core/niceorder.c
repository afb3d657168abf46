/* niceorder.c - each owner's pending jobs by nice value (see niceorder.h). */
#include "niceorder.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

static int owner_cmp(uid_t uid, const char *group, const nice_owner *o) {
        if (uid != o->uid)
                return uid < o->uid ? -1 : 1;
        return strcmp(group ? group : "", o->group ? o->group : "");
}

/* The position of j's owner in no->owners, or where it would go; *found says which. O(log owners). */
static size_t owner_rank(const niceorder *no, const job *j, bool *found) {
        size_t lo = 0, hi = no->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                int c = owner_cmp(j->uid, j->spec.group, &no->owners[mid]);
                if (c == 0) {
                        *found = true;
                        return mid;
                }
                if (c < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        *found = false;
        return lo;
}

static nice_owner *owner_of(niceorder *no, const job *j) {
        bool found;
        size_t at = owner_rank(no, j, &found);
        return found ? &no->owners[at] : NULL;
}

/* j's owner, added when missing. NULL when out of memory. Adding an owner is O(owners). */
static nice_owner *owner_add(niceorder *no, const job *j) {
        bool found;
        size_t at = owner_rank(no, j, &found);
        if (found)
                return &no->owners[at];
        char *group = j->spec.group ? strdup(j->spec.group) : NULL;
        nice_owner *grown = realloc(no->owners, (no->n + 1) * sizeof(*grown));
        if ((j->spec.group && !group) || !grown) {
                free(group);
                if (grown)
                        no->owners = grown;
                return NULL;
        }
        no->owners = grown;
        memmove(&grown[at + 1], &grown[at], (no->n - at) * sizeof(*grown));
        grown[at] = (nice_owner){ .uid = j->uid, .group = group };
        no->n++;
        return &grown[at];
}

/* The position of nice's bucket in o->buckets, or where it would go; *found says which. */
static size_t bucket_rank(const nice_owner *o, int nice, bool *found) {
        size_t at = 0;
        while (at < o->nbuckets && o->buckets[at].nice < nice) /* few values per owner */
                at++;
        *found = at < o->nbuckets && o->buckets[at].nice == nice;
        return at;
}

/* o's bucket of nice, added when missing (add set). NULL when missing or out of memory. */
static nice_bucket *bucket_of(nice_owner *o, int nice, bool add) {
        bool found;
        size_t at = bucket_rank(o, nice, &found);
        if (found || !add)
                return found ? &o->buckets[at] : NULL;
        nice_bucket *grown = realloc(o->buckets, (o->nbuckets + 1) * sizeof(*grown));
        if (!grown)
                return NULL;
        o->buckets = grown;
        memmove(&grown[at + 1], &grown[at], (o->nbuckets - at) * sizeof(*grown));
        grown[at] = (nice_bucket){ .nice = nice, .jobs = { .state = JOB_PENDING } };
        o->nbuckets++;
        return &grown[at];
}

int niceorder_build(niceorder *no, const ctl_idset *pending) {
        no->on = true;
        for (size_t i = 0; i < pending->n; i++)
                if (ctl_idset_member(pending, pending->v[i]) && niceorder_pending(no, pending->v[i], +1) < 0)
                        return -ENOMEM;
        return 0;
}

int niceorder_pending(niceorder *no, job *j, int sign) {
        if (!no->on)
                return 0;
        nice_owner *o = sign > 0 ? owner_add(no, j) : owner_of(no, j);
        nice_bucket *b = o ? bucket_of(o, j->spec.nice, sign > 0) : NULL;
        if (!b)
                return sign > 0 ? -ENOMEM : 0;
        ctl_idset *s = &b->jobs;
        if (sign > 0) {
                size_t at;
                int r = ctl_idset_join_at(s, j, &at);
                if (r == 0 && at < b->head) /* a requeued job goes back in its id's place: in the head */
                        b->head = at;
                return r;
        }
        ctl_idset_leave(s);
        if (s->nstale == 0) /* compacted: the entries moved */
                b->head = 0;
        return 0;
}

int niceorder_renice(niceorder *no, job *j, int was) {
        nice_owner *o = no->on ? owner_of(no, j) : NULL;
        nice_bucket *b = o ? bucket_of(o, was, false) : NULL;
        if (!b)
                return niceorder_pending(no, j, +1);
        ctl_idset *s = &b->jobs;
        size_t at = ctl_idset_rank(s, j->id);
        if (at < s->n && s->v[at] == j) { /* out of the old bucket now: it is still pending */
                memmove(&s->v[at], &s->v[at + 1], (s->n - at - 1) * sizeof(*s->v));
                s->n--;
                if (at < b->head)
                        b->head--;
        }
        return niceorder_pending(no, j, +1);
}

void niceorder_begin(niceorder *no) { no->reading++; }

void niceorder_forget_heads(niceorder *no) { no->heads++; }

job *niceorder_next(niceorder *no, const job *j, bool (*take)(void *, job *), bool (*stays)(void *, const job *),
                    void *arg, size_t *visits) {
        nice_owner *o = no->on ? owner_of(no, j) : NULL;
        if (!o)
                return NULL;
        if (o->reading != no->reading) { /* the owner's first look in this reading */
                o->reading = no->reading;
                o->bucket = o->at = 0;
        }
        for (; o->bucket < o->nbuckets; o->bucket++, o->at = 0) {
                nice_bucket *b = &o->buckets[o->bucket];
                if (b->heads != no->heads) { /* forgotten: from the start */
                        b->heads = no->heads;
                        b->head = 0;
                }
                if (o->at < b->head)
                        o->at = b->head;
                while (o->at < b->jobs.n) {
                        job *next = b->jobs.v[o->at];
                        bool at_head = o->at++ == b->head, member = ctl_idset_member(&b->jobs, next);
                        ++*visits;
                        if (member && take(arg, next))
                                return next;
                        if (at_head && (!member || stays(arg, next)))
                                b->head = o->at;
                }
        }
        return NULL;
}

/* The first member of b, by id, of j's array with an id past after; NULL when none. */
static job *array_task_after(const nice_bucket *b, const job *j, uint64_t after) {
        for (size_t i = ctl_idset_rank(&b->jobs, after + 1); i < b->jobs.n; i++) {
                job *t = b->jobs.v[i];
                if (t->array_first != j->array_first) /* ids past the array's are others' */
                        return NULL;
                if (ctl_idset_member(&b->jobs, t))
                        return t;
        }
        return NULL;
}

uint64_t niceorder_array_nth(niceorder *no, const job *j, size_t k, bool (*take)(void *, job *), void *arg,
                             size_t *visits) {
        nice_owner *o = no->on ? owner_of(no, j) : NULL;
        uint64_t last = j->array_first - 1;
        for (size_t taken = 0; o;) {
                job *next = NULL;
                for (size_t b = 0; b < o->nbuckets; b++) { /* a task reniced is in another bucket */
                        job *t = array_task_after(&o->buckets[b], j, last);
                        if (t && (!next || t->id < next->id))
                                next = t;
                }
                if (!next)
                        break;
                ++*visits;
                last = next->id;
                if (take(arg, next) && ++taken == k)
                        return next->id;
        }
        return UINT64_MAX;
}

void niceorder_compact(niceorder *no) {
        for (size_t i = 0; i < no->n; i++)
                for (size_t b = 0; b < no->owners[i].nbuckets; b++) {
                        ctl_idset_compact(&no->owners[i].buckets[b].jobs);
                        no->owners[i].buckets[b].head = 0;
                }
}

void niceorder_free(niceorder *no) {
        for (size_t i = 0; i < no->n; i++) {
                for (size_t b = 0; b < no->owners[i].nbuckets; b++)
                        ctl_idset_free(&no->owners[i].buckets[b].jobs);
                free(no->owners[i].buckets);
                free(no->owners[i].group);
        }
        free(no->owners);
        *no = (niceorder){ 0 };
}
