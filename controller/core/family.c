/* family.c - job families (see family.h). */
#include "family.h"
#include "arrays.h"
#include "depend.h"
#include "state.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* --- the index ------------------------------------------------------------------------------- */

/* The position of the first unit whose id is >= id. */
static size_t unit_rank(const famidx *f, uint64_t id) {
        size_t lo = 0, hi = f->n;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (f->v[mid].id < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

static famidx_unit *unit_find(const famidx *f, uint64_t id) {
        size_t i = unit_rank(f, id);
        return i < f->n && f->v[i].id == id ? &f->v[i] : NULL;
}

/* Add unit id, alone in its family, unless it is there. Moves the units after it: pointers into
 * the index do not survive the call. Returns 0 or -ENOMEM. */
static int unit_add(famidx *f, uint64_t id) {
        size_t i = unit_rank(f, id);
        if (i < f->n && f->v[i].id == id)
                return 0;
        if (sched_grow(&f->v, &f->cap, f->n + 1, sizeof(*f->v)) < 0)
                return -ENOMEM;
        memmove(&f->v[i + 1], &f->v[i], (f->n - i) * sizeof(*f->v));
        f->v[i] = (famidx_unit){ .id = id, .parent = id, .next = id, .min = id };
        f->n++;
        return 0;
}

/* The root of unit id's set, halving the path on the way (every other unit points to its
 * grandparent). */
static famidx_unit *root_of(const famidx *f, uint64_t id) {
        famidx_unit *u = unit_find(f, id);
        while (u && u->parent != u->id) {
                famidx_unit *p = unit_find(f, u->parent);
                famidx_unit *g = unit_find(f, p->parent);
                u->parent = g->id;
                u = g;
        }
        return u;
}

/* Join the families of units a and b (both in the index): union by rank, rings spliced. */
static void unite(famidx *f, uint64_t a, uint64_t b) {
        famidx_unit *ra = root_of(f, a), *rb = root_of(f, b);
        if (ra == rb)
                return;
        if (ra->rank < rb->rank) {
                famidx_unit *t = ra;
                ra = rb;
                rb = t;
        }
        rb->parent = ra->id;
        ra->rank += ra->rank == rb->rank;
        ra->min = rb->min < ra->min ? rb->min : ra->min;
        uint64_t next = ra->next;
        ra->next = rb->next;
        rb->next = next;
}

/* The unit of the job whose id is id (its array's first id, or its own), or 0 when no job has
 * that id. */
static uint64_t unit_of_id(const struct ctl_state *st, uint64_t id) {
        size_t i = ctl_first_job_from(st, id);
        if (i == st->njobs || st->jobs[i]->id != id)
                return 0;
        return st->jobs[i]->array_first ? st->jobs[i]->array_first : id;
}

static uint64_t unit_of(const job *j) {
        return j->array_first ? j->array_first : j->id;
}

int ctl_family_link(struct ctl_state *st, const job *j) {
        dep_list l;
        char err[PROTO_ERRLEN];
        int r = 0;
        if (!j->spec.dependency || unit_of(j) != j->id || dep_parse(j->spec.dependency, &l, err, sizeof(err)) < 0)
                return 0; /* no dependency, an array's later task, or refused at submit */
        for (size_t i = 0; r == 0 && i < l.n; i++) {
                uint64_t t = l.items[i].kind == DEP_SINGLETON ? 0 : unit_of_id(st, l.items[i].id);
                if (t && (r = unit_add(&st->fam, t)) == 0 && (r = unit_add(&st->fam, j->id)) == 0)
                        unite(&st->fam, j->id, t);
        }
        dep_list_free(&l);
        return r;
}

uint64_t ctl_family_id(struct ctl_state *st, const job *j) {
        const famidx_unit *root = root_of(&st->fam, unit_of(j));
        return root ? root->min : 0;
}

void famidx_free(famidx *f) {
        free(f->v);
        *f = (famidx){ 0 };
}

/* --- what a family is at ------------------------------------------------------------------- */

/* One unit's members, counted. */
typedef struct fam_count {
        uint64_t id;
        const job *first; /* NULL when its jobs are no longer known */
        uint32_t members, counts[_JOB_STATE_MAX];
        int64_t submit_usec, end_usec, run_usec; /* earliest submit, latest end, longest run */
        bool all_ran;                            /* every member started and ended */
        int64_t ready_usec, finish_usec;         /* with unlimited machines, from the arrival */
} fam_count;

static void count_job(fam_count *c, const job *j) {
        c->members++;
        c->counts[j->state]++;
        if (!c->submit_usec || j->submit_usec < c->submit_usec)
                c->submit_usec = j->submit_usec;
        if (j->end_usec > c->end_usec)
                c->end_usec = j->end_usec;
        bool ran = job_state_is_terminal(j->state) && j->start_usec > 0 && j->end_usec >= j->start_usec;
        c->all_ran &= ran;
        if (ran && j->end_usec - j->start_usec > c->run_usec)
                c->run_usec = j->end_usec - j->start_usec;
}

/* Count unit c->id's members: the job, or the array's tasks made and not made yet. */
static void count_unit(struct ctl_state *st, fam_count *c) {
        size_t i = ctl_first_job_from(st, c->id);
        c->all_ran = true;
        if (i == st->njobs || st->jobs[i]->id != c->id) {
                c->all_ran = false;
                return;
        }
        c->first = st->jobs[i];
        for (; i < st->njobs && (st->jobs[i]->id == c->id || st->jobs[i]->array_first == c->id); i++) {
                count_job(c, st->jobs[i]);
                if (st->jobs[i]->array_first != c->id)
                        break; /* a plain job */
        }
        const ctl_arec *a = ctl_arec_of(st, c->id);
        if (a && a->first == c->id) {
                size_t left = array_set_count(&a->left);
                c->members += (uint32_t)(left + a->cancelled);
                c->counts[JOB_PENDING] += (uint32_t)left;
                c->counts[JOB_CANCELLED] += (uint32_t)a->cancelled;
                c->all_ran &= left + a->cancelled == 0;
        }
}

static int by_id(const void *a, const void *b) {
        uint64_t x = ((const fam_count *)a)->id, y = ((const fam_count *)b)->id;
        return x < y ? -1 : x > y;
}

static fam_count *count_find(fam_count *u, size_t n, uint64_t id) {
        fam_count key = { .id = id };
        return bsearch(&key, u, n, sizeof(*u), by_id);
}

/* The flow time with unlimited machines: each unit's members start at once when its submit and
 * its dependencies allow (after: the target's start; the others: its end), and the unit ends
 * when its longest member does. Units in id order are in dependency order (a dependency names
 * an older job). Returns -1 when it cannot be told honestly: a member did not run, or a
 * dependency names one task of an array, not the array. */
static int64_t unlimited_flow(fam_count *u, size_t n, int64_t arrival) {
        int64_t flow = 0;
        for (size_t i = 0; i < n; i++) {
                dep_list l = { 0 };
                char err[PROTO_ERRLEN];
                if (!u[i].all_ran || !u[i].first)
                        return -1;
                u[i].ready_usec = u[i].submit_usec - arrival;
                if (u[i].first->spec.dependency && dep_parse(u[i].first->spec.dependency, &l, err, sizeof(err)) < 0)
                        return -1;
                bool known = true;
                for (size_t k = 0; known && k < l.n; k++) {
                        if (l.items[k].kind == DEP_SINGLETON)
                                continue; /* names no job */
                        const fam_count *t = count_find(u, i, l.items[k].id); /* older: before it */
                        int64_t at = !t ? 0 : l.items[k].kind == DEP_AFTER ? t->ready_usec : t->finish_usec;
                        known = t != NULL;
                        if (at > u[i].ready_usec)
                                u[i].ready_usec = at;
                }
                dep_list_free(&l);
                if (!known)
                        return -1;
                u[i].finish_usec = u[i].ready_usec + u[i].run_usec;
                if (u[i].finish_usec > flow)
                        flow = u[i].finish_usec;
        }
        return flow;
}

/* {"pending": 63, "running": 37, ...}, the non-zero counts, into o. */
static bool add_counts(cJSON *o, const uint32_t *counts) {
        cJSON *c = cJSON_AddObjectToObject(o, "counts");
        for (int s = 0; c && s < _JOB_STATE_MAX; s++)
                if (counts[s] && !cJSON_AddNumberToObject(c, job_state_name((job_state)s), counts[s]))
                        return false;
        return c != NULL;
}

static bool add_unit(cJSON *arr, const fam_count *c) {
        cJSON *o = cJSON_CreateObject();
        bool ended = c->counts[JOB_PENDING] + c->counts[JOB_RUNNING] == 0;
        bool ok = o && cJSON_AddItemToArray(arr, o) && cJSON_AddNumberToObject(o, "id", (double)c->id) &&
                  cJSON_AddNumberToObject(o, "members", c->members) && add_counts(o, c->counts) &&
                  cJSON_AddNumberToObject(o, "submit_usec", (double)c->submit_usec) &&
                  cJSON_AddNumberToObject(o, "end_usec", ended ? (double)c->end_usec : 0);
        if (ok && c->first)
                ok = cJSON_AddStringToObject(o, "name", c->first->spec.name ? c->first->spec.name : "") &&
                     cJSON_AddStringToObject(o, "user", c->first->user ? c->first->user : "") &&
                     cJSON_AddBoolToObject(o, "array", c->first->array_first == c->id) &&
                     (!c->first->spec.dependency || cJSON_AddStringToObject(o, "dependency", c->first->spec.dependency));
        return ok;
}

/* The family's JSON from its units u[0..n), sorted by id and counted. */
static cJSON *family_json(uint64_t id, fam_count *u, size_t n, int64_t now) {
        uint32_t counts[_JOB_STATE_MAX] = { 0 }, members = 0;
        int64_t arrival = 0, end = 0;
        for (size_t i = 0; i < n; i++) {
                for (int s = 0; s < _JOB_STATE_MAX; s++)
                        counts[s] += u[i].counts[s];
                members += u[i].members;
                if (u[i].members && (!arrival || u[i].submit_usec < arrival))
                        arrival = u[i].submit_usec;
                end = u[i].end_usec > end ? u[i].end_usec : end;
        }
        bool ended = counts[JOB_PENDING] + counts[JOB_RUNNING] == 0;
        int64_t unlimited = ended ? unlimited_flow(u, n, arrival) : -1;
        cJSON *o = cJSON_CreateObject(), *units = NULL;
        bool ok = o && cJSON_AddNumberToObject(o, "id", (double)id) && cJSON_AddNumberToObject(o, "members", members) &&
                  add_counts(o, counts) && cJSON_AddNumberToObject(o, "arrival_usec", (double)arrival) &&
                  cJSON_AddBoolToObject(o, "ended", ended) &&
                  cJSON_AddNumberToObject(o, "end_usec", ended ? (double)end : 0) &&
                  cJSON_AddNumberToObject(o, "flow_usec", (double)((ended ? end : now) - arrival)) &&
                  (unlimited < 0 || cJSON_AddNumberToObject(o, "unlimited_flow_usec", (double)unlimited)) &&
                  (units = cJSON_AddArrayToObject(o, "units")) &&
                  (n <= FAMILY_UNITS_SHOWN || cJSON_AddNumberToObject(o, "units_left_off", (double)(n - FAMILY_UNITS_SHOWN)));
        for (size_t i = 0; ok && i < n && i < FAMILY_UNITS_SHOWN; i++)
                ok = add_unit(units, &u[i]);
        if (!ok) {
                cJSON_Delete(o);
                return NULL;
        }
        return o;
}

int ctl_family_json(struct ctl_state *st, const job *j, int64_t now, cJSON **out) {
        famidx_unit *root = root_of(&st->fam, unit_of(j));
        size_t n = 0, cap = 0;
        fam_count *u = NULL;
        *out = NULL;
        if (!root)
                return 0;
        uint64_t id = root->id, family = root->min;
        do { /* the ring: the index does not change meanwhile, so the pointers hold */
                if (sched_grow(&u, &cap, n + 1, sizeof(*u)) < 0) {
                        free(u);
                        return -ENOMEM;
                }
                u[n++] = (fam_count){ .id = id };
                id = unit_find(&st->fam, id)->next;
        } while (id != root->id);
        qsort(u, n, sizeof(*u), by_id);
        for (size_t i = 0; i < n; i++)
                count_unit(st, &u[i]);
        *out = family_json(family, u, n, now);
        free(u);
        return *out ? 0 : -ENOMEM;
}
