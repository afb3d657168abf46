/* family.c - job families (see family.h). */
#include "family.h"
#include "arrays.h"
#include "depend.h"
#include "idrank.h"
#include "state.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* --- the index ------------------------------------------------------------------------------- */

/* id_rank's key: the id of unit i. */
static uint64_t unit_id(const void *v, size_t i) { return ((const famidx_unit *)v)[i].id; }

/* The position of the first unit whose id is >= id. */
static size_t unit_rank(const famidx *f, uint64_t id) { return id_rank(f->v, 0, f->n, id, unit_id); }

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

static uint64_t unit_of(const job *j) { return j->array_first ? j->array_first : j->id; }

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

/* --- what each unit is at ------------------------------------------------------------------ */

static void count_job(famidx_unit *u, const job *j) {
        u->members++;
        u->counts[j->state]++;
        if (!u->submit_usec || j->submit_usec < u->submit_usec)
                u->submit_usec = j->submit_usec;
        if (job_state_is_terminal(j->state) && j->end_usec > u->end_usec)
                u->end_usec = j->end_usec;
        if (job_state_is_terminal(j->state) && j->start_usec > 0 && j->end_usec >= j->start_usec) {
                u->ran++;
                if (j->end_usec - j->start_usec > u->run_usec)
                        u->run_usec = j->end_usec - j->start_usec;
        }
}

/* Count unit u's members once: the job, or the array's tasks made and not made yet. */
static void count_unit(struct ctl_state *st, famidx_unit *u) {
        size_t i = ctl_first_job_from(st, u->id);
        u->counted = true;
        for (; i < st->njobs && (st->jobs[i]->id == u->id || st->jobs[i]->array_first == u->id); i++) {
                count_job(u, st->jobs[i]);
                if (st->jobs[i]->array_first != u->id)
                        break; /* a plain job */
        }
        const ctl_arec *a = ctl_arec_of(st, u->id);
        if (a && a->first == u->id) {
                size_t left = array_set_count(&a->left);
                u->members += (uint32_t)(left + a->cancelled);
                u->counts[JOB_PENDING] += (uint32_t)left;
                u->counts[JOB_CANCELLED] += (uint32_t)a->cancelled;
        }
}

/* j's unit, when it is counted already. */
static famidx_unit *counted_unit(struct ctl_state *st, uint64_t id) {
        famidx_unit *u = unit_find(&st->fam, id);
        return u && u->counted ? u : NULL;
}

void ctl_family_made(struct ctl_state *st, const job *j) {
        famidx_unit *u = counted_unit(st, unit_of(j));
        if (u)
                count_job(u, j);
}

void ctl_family_moved(struct ctl_state *st, const job *j, job_state was) {
        famidx_unit *u = counted_unit(st, unit_of(j));
        if (!u)
                return;
        u->counts[was]--;
        u->members--;
        count_job(u, j);
}

void ctl_family_unmade_ended(struct ctl_state *st, uint64_t array, size_t n) {
        famidx_unit *u = counted_unit(st, array);
        if (!u)
                return;
        u->counts[JOB_PENDING] -= (uint32_t)n;
        u->counts[JOB_CANCELLED] += (uint32_t)n;
}

/* --- a family's answer ----------------------------------------------------------------------- */

/* One unit of the family being answered: its counts, its first job, and its times with
 * unlimited machines (from the arrival). */
typedef struct fam_count {
        famidx_unit u;
        const job *first; /* NULL when its jobs are no longer known */
        int64_t ready_usec, finish_usec;
} fam_count;

static int by_id(const void *a, const void *b) {
        uint64_t x = ((const fam_count *)a)->u.id, y = ((const fam_count *)b)->u.id;
        return x < y ? -1 : x > y;
}

static fam_count *count_find(fam_count *u, size_t n, uint64_t id) {
        fam_count key = { .u.id = id };
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
                if (u[i].u.ran != u[i].u.members || !u[i].first)
                        return -1;
                u[i].ready_usec = u[i].u.submit_usec - arrival;
                if (u[i].first->spec.dependency && dep_parse(u[i].first->spec.dependency, &l, err, sizeof(err)) < 0)
                        return -1;
                bool known = true;
                for (size_t k = 0; known && k < l.n; k++) {
                        if (l.items[k].kind == DEP_SINGLETON)
                                continue;                                     /* names no job */
                        const fam_count *t = count_find(u, i, l.items[k].id); /* older: before it */
                        int64_t at = !t ? 0 : l.items[k].kind == DEP_AFTER ? t->ready_usec : t->finish_usec;
                        known = t != NULL;
                        if (at > u[i].ready_usec)
                                u[i].ready_usec = at;
                }
                dep_list_free(&l);
                if (!known)
                        return -1;
                u[i].finish_usec = u[i].ready_usec + u[i].u.run_usec;
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
        bool ended = c->u.counts[JOB_PENDING] + c->u.counts[JOB_RUNNING] == 0;
        bool ok = o && cJSON_AddItemToArray(arr, o) && cJSON_AddNumberToObject(o, "id", (double)c->u.id) &&
                  cJSON_AddNumberToObject(o, "members", c->u.members) && add_counts(o, c->u.counts) &&
                  cJSON_AddNumberToObject(o, "submit_usec", (double)c->u.submit_usec) &&
                  cJSON_AddNumberToObject(o, "end_usec", ended ? (double)c->u.end_usec : 0);
        if (ok && c->first)
                ok = cJSON_AddStringToObject(o, "name", c->first->spec.name ? c->first->spec.name : "") &&
                     cJSON_AddStringToObject(o, "user", c->first->user ? c->first->user : "") &&
                     cJSON_AddBoolToObject(o, "array", c->first->array_first == c->u.id) &&
                     (!c->first->spec.dependency ||
                      cJSON_AddStringToObject(o, "dependency", c->first->spec.dependency));
        return ok;
}

/* The family's JSON from its units u[0..n), sorted by id and counted. */
static cJSON *family_json(uint64_t id, fam_count *u, size_t n, int64_t now) {
        uint32_t counts[_JOB_STATE_MAX] = { 0 }, members = 0;
        int64_t arrival = 0, end = 0;
        for (size_t i = 0; i < n; i++) {
                for (int s = 0; s < _JOB_STATE_MAX; s++)
                        counts[s] += u[i].u.counts[s];
                members += u[i].u.members;
                if (u[i].u.members && (!arrival || u[i].u.submit_usec < arrival))
                        arrival = u[i].u.submit_usec;
                end = u[i].u.end_usec > end ? u[i].u.end_usec : end;
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
                  (n <= FAMILY_UNITS_SHOWN ||
                   cJSON_AddNumberToObject(o, "units_left_off", (double)(n - FAMILY_UNITS_SHOWN)));
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
                famidx_unit *x = unit_find(&st->fam, id);
                if (sched_grow(&u, &cap, n + 1, sizeof(*u)) < 0) {
                        free(u);
                        return -ENOMEM;
                }
                if (!x->counted)
                        count_unit(st, x);
                size_t i = ctl_first_job_from(st, id);
                u[n++] = (fam_count){ .u = *x, .first = i < st->njobs && st->jobs[i]->id == id ? st->jobs[i] : NULL };
                id = x->next;
        } while (id != root->id);
        qsort(u, n, sizeof(*u), by_id);
        *out = family_json(family, u, n, now);
        free(u);
        return *out ? 0 : -ENOMEM;
}
