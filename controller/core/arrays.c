/* arrays.c - an array's names and its throttle (arrays.h). */
#include "arrays.h"
#include "proto.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The position in st->jobs of the array's first task. Returns 0 or -ENOENT with err set. */
static int array_start(ctl_state *st, uint64_t id, size_t *at, char err[PROTO_ERRLEN]) {
        size_t k = ctl_first_job_from(st, id);
        if (k == st->njobs || st->jobs[k]->id != id) {
                snprintf(err, PROTO_ERRLEN, "no job %llu", (unsigned long long)id);
                return -ENOENT;
        }
        if (st->jobs[k]->array_first != id) {
                snprintf(err, PROTO_ERRLEN, "job %llu is not an array's id", (unsigned long long)id);
                return -ENOENT;
        }
        *at = k;
        return 0;
}

/* The number of jobs from position k on that are tasks of array with an index <= index (all its
 * tasks when index is UINT32_MAX): they come first, in index order. O(log jobs). */
static size_t tasks_upto(const ctl_state *st, size_t k, uint64_t array, uint32_t index) {
        size_t lo = k, hi = st->njobs;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                const job *j = st->jobs[mid];
                if (j->array_first == array && j->array_index <= index)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo - k;
}

int ctl_array_span(ctl_state *st, uint64_t id, uint64_t *last, char err[PROTO_ERRLEN]) {
        const ctl_arec *a = ctl_arec_of(st, id);
        if (a && a->first == id) {
                *last = a->first + a->count - 1;
                return 0;
        }
        size_t k;
        int r = array_start(st, id, &k, err);
        if (r < 0)
                return r;
        *last = st->jobs[k + tasks_upto(st, k, id, UINT32_MAX) - 1]->id;
        return 0;
}

int ctl_array_task(ctl_state *st, uint64_t array, uint32_t index, uint64_t *id, char err[PROTO_ERRLEN]) {
        const ctl_arec *a = ctl_arec_of(st, array);
        size_t pos;
        if (a && a->first == array) {
                if (!array_set_position(&a->all, index, &pos)) {
                        snprintf(err, PROTO_ERRLEN, "array %llu has no task %u", (unsigned long long)array, index);
                        return -ENOENT;
                }
                *id = a->first + pos;
                return 0;
        }
        size_t k;
        int r = array_start(st, array, &k, err);
        if (r < 0)
                return r;
        size_t n = tasks_upto(st, k, array, index);
        if (n == 0 || st->jobs[k + n - 1]->array_index != index) {
                snprintf(err, PROTO_ERRLEN, "array %llu has no task %u", (unsigned long long)array, index);
                return -ENOENT;
        }
        *id = st->jobs[k + n - 1]->id;
        return 0;
}

/* Tasks of one throttled array that run or are offered in this pass. */
struct array_load {
        uint64_t array;
        uint32_t n;
        uint32_t running; /* when the pass started */
        bool cut_known;
        uint64_t cut; /* the last task the whole list's throttle admits (ctl_array_within) */
};
typedef struct array_load array_load;

/* The entry of array in t, added with 0 when new. Returns it, or NULL (no memory). */
static array_load *load_of(ctl_array_loads *t, uint64_t array) {
        if (t->last < t->n && t->v[t->last].array == array)
                return &t->v[t->last];
        for (size_t i = 0; i < t->n; i++)
                if (t->v[i].array == array)
                        return &t->v[t->last = i];
        if (t->n == t->cap) {
                size_t cap = t->cap ? 2 * t->cap : 16;
                array_load *v = realloc(t->v, cap * sizeof(*v));
                if (!v)
                        return NULL;
                t->v = v;
                t->cap = cap;
        }
        t->v[t->n] = (array_load){ .array = array };
        return &t->v[t->last = t->n++];
}

void ctl_array_loads_start(const ctl_state *st, ctl_array_loads *t) {
        *t = (ctl_array_loads){ .on = st->throttle_seen };
        for (size_t i = 0; t->on && i < st->running_ids.n; i++) {
                const job *j = st->running_ids.v[i];
                array_load *l;
                /* a job requeued and running again may sit beside its stale entry */
                bool twin = i > 0 && st->running_ids.v[i - 1] == j;
                if (!twin && j->state == JOB_RUNNING && j->spec.array_throttle && (l = load_of(t, j->array_first)))
                        l->running = ++l->n;
        }
}

bool ctl_array_within(ctl_array_loads *t, job *j, uint64_t (*nth)(void *, const job *, size_t), void *arg) {
        if (!t->on || !j->spec.array_throttle)
                return true;
        array_load *l = load_of(t, j->array_first);
        if (l && !l->cut_known) {
                l->cut = l->running < j->spec.array_throttle ? nth(arg, j, j->spec.array_throttle - l->running) : 0;
                l->cut_known = true;
        }
        if (!l || j->id > l->cut) {
                j->wait = JOB_WAIT_THROTTLE;
                return false;
        }
        return true;
}

bool ctl_array_admit(ctl_array_loads *t, job *j) {
        if (!t->on || !j->spec.array_throttle)
                return true;
        array_load *l = load_of(t, j->array_first);
        if (!l || l->n >= j->spec.array_throttle) {
                j->wait = JOB_WAIT_THROTTLE; /* no memory to count: it waits for the next pass */
                return false;
        }
        l->n++;
        return true;
}

void ctl_array_loads_free(ctl_array_loads *t) {
        free(t->v);
        *t = (ctl_array_loads){ 0 };
}

size_t ctl_array_throttle(ctl_state *st, sched_job *jobs, size_t n) {
        ctl_array_loads t;
        size_t kept = 0;
        if (!st->throttle_seen)
                return n;
        ctl_array_loads_start(st, &t);
        for (size_t i = 0; i < n; i++) {
                job *j = ctl_find_job(st, jobs[i].id);
                if (j && !ctl_array_admit(&t, j))
                        continue;
                jobs[kept++] = jobs[i];
        }
        ctl_array_loads_free(&t);
        return kept;
}

/* --- the array's record while its tasks wait ------------------------------------------------ */

ctl_arec *ctl_arec_of(const ctl_state *st, uint64_t id) {
        size_t lo = 0, hi = st->narecs;
        while (lo < hi) { /* the last record whose first id is <= id */
                size_t mid = lo + (hi - lo) / 2;
                if (st->arecs[mid]->first <= id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        ctl_arec *a = lo ? st->arecs[lo - 1] : NULL;
        return a && id - a->first < a->count ? a : NULL;
}

ctl_arec *ctl_arec_add(ctl_state *st, ctl_arec *a) {
        ctl_arec *own = malloc(sizeof(*own)), **grown = realloc(st->arecs, (st->narecs + 1) * sizeof(*grown));
        if (grown)
                st->arecs = grown;
        if (!own || !grown) {
                free(own);
                return NULL;
        }
        *own = *a;
        *a = (ctl_arec){ 0 };
        size_t i = st->narecs;
        for (; i > 0 && st->arecs[i - 1]->first > own->first; i--) /* ids grow: the end but at a restore */
                st->arecs[i] = st->arecs[i - 1];
        st->arecs[i] = own;
        st->narecs++;
        return own;
}

void ctl_arec_free(ctl_arec *a) {
        array_set_free(&a->all);
        array_set_free(&a->left);
        *a = (ctl_arec){ 0 };
}

/* set as Slurm's text, malloc'ed ("" when empty); NULL when out of memory. */
static char *set_text(const array_set *set) {
        size_t len = array_set_format(set, 0, NULL, 0) + 1;
        char *text = malloc(len);
        if (text)
                array_set_format(set, 0, text, len);
        return text;
}

/* Add set's text to o as field. Returns whether it did. */
static bool add_set(cJSON *o, const char *field, const array_set *set) {
        char *text = set_text(set);
        bool ok = text && cJSON_AddStringToObject(o, field, text);
        free(text);
        return ok;
}

cJSON *ctl_arec_to_json(const ctl_arec *a) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddNumberToObject(o, "id", (double)a->first) || !add_set(o, "all", &a->all) ||
            !add_set(o, "left", &a->left) || !cJSON_AddNumberToObject(o, "cancelled", (double)a->cancelled) ||
            !cJSON_AddBoolToObject(o, "hold", a->tmpl.hold) ||
            !cJSON_AddNumberToObject(o, "mcpu", (double)a->tmpl.req.mcpu) ||
            !cJSON_AddNumberToObject(o, "mem", (double)a->tmpl.req.mem) ||
            (a->tmpl.req.gpus && !cJSON_AddNumberToObject(o, "gpus", (double)a->tmpl.req.gpus)) ||
            !cJSON_AddNumberToObject(o, "nice", a->tmpl.nice) ||
            !cJSON_AddNumberToObject(o, "time_limit_usec", (double)a->tmpl.time_limit_usec) ||
            !cJSON_AddBoolToObject(o, "given_stdout", a->given_stdout)) {
                cJSON_Delete(o);
                return NULL;
        }
        return o;
}

/* The set whose text is o's field (empty for ""). Returns 0 or -EINVAL/-ENOMEM with err set. */
static int get_set(const cJSON *o, const char *field, array_set *set, char err[PROTO_ERRLEN]) {
        const char *text;
        uint32_t throttle;
        int r = proto_get_str(o, field, &text, err);
        if (r == -ENOENT)
                snprintf(err, PROTO_ERRLEN, "%s: required", field);
        if (r < 0)
                return -EINVAL;
        return *text ? array_spec_parse(text, SIZE_MAX, set, &throttle, err, PROTO_ERRLEN) : 0;
}

int ctl_arec_from_json(const cJSON *o, ctl_arec *a, char err[PROTO_ERRLEN]) {
        int64_t id, cancelled = 0, mcpu, mem, nice = 0, limit = 0, gpus = 0;
        bool hold = false, given = false;
        int r;
        if ((r = proto_get_int(o, "id", 1, INT64_MAX, &id, err)) < 0 ||
            (r = proto_get_int(o, "mcpu", 1, INT64_MAX, &mcpu, err)) < 0 ||
            (r = proto_get_int(o, "mem", 1, INT64_MAX, &mem, err)) < 0 ||
            proto_get_int(o, "cancelled", 0, INT64_MAX, &cancelled, err) == -EINVAL ||
            proto_get_int(o, "gpus", 0, RES_GPUS_MAX, &gpus, err) == -EINVAL ||
            proto_get_int(o, "nice", INT32_MIN, INT32_MAX, &nice, err) == -EINVAL ||
            proto_get_int(o, "time_limit_usec", INT64_MIN, INT64_MAX, &limit, err) == -EINVAL ||
            proto_get_bool(o, "hold", &hold, err) == -EINVAL ||
            proto_get_bool(o, "given_stdout", &given, err) == -EINVAL || (r = get_set(o, "all", &a->all, err)) < 0 ||
            (r = get_set(o, "left", &a->left, err)) < 0) {
                ctl_arec_free(a);
                return r == -ENOMEM ? r : -EINVAL;
        }
        a->first = (uint64_t)id;
        a->count = array_set_count(&a->all);
        a->cancelled = (size_t)cancelled;
        a->tmpl = (job_spec){ .req = { .mcpu = mcpu, .mem = mem, .gpus = gpus },
                              .nice = (int)nice,
                              .time_limit_usec = limit,
                              .hold = hold };
        a->given_stdout = given;
        a->window = ARRAY_WINDOW;
        return 0;
}

/* a's entry in a listing. Returns 0 or -ENOMEM. */
static int list_one(cJSON *list, const ctl_arec *a) {
        uint32_t next;
        size_t pos = 0;
        cJSON *o = cJSON_CreateObject();
        if (array_set_at(&a->left, 0, &next))
                (void)array_set_position(&a->all, next, &pos);
        if (!o || !cJSON_AddItemToArray(list, o) || !cJSON_AddNumberToObject(o, "id", (double)a->first) ||
            !add_set(o, "pending", &a->left) ||
            !cJSON_AddNumberToObject(o, "count", (double)array_set_count(&a->left)) ||
            !cJSON_AddNumberToObject(o, "next_id", (double)(a->first + pos)) ||
            !cJSON_AddNumberToObject(o, "throttle", a->owner->spec.array_throttle) ||
            !cJSON_AddBoolToObject(o, "hold", a->tmpl.hold) ||
            !cJSON_AddStringToObject(o, "user", a->owner->user ? a->owner->user : "") ||
            (a->owner->spec.name && !cJSON_AddStringToObject(o, "name", a->owner->spec.name)) ||
            !cJSON_AddNumberToObject(o, "mcpu", (double)a->tmpl.req.mcpu) ||
            !cJSON_AddNumberToObject(o, "mem", (double)a->tmpl.req.mem) ||
            (a->tmpl.req.gpus && !cJSON_AddNumberToObject(o, "gpus", (double)a->tmpl.req.gpus)) ||
            !cJSON_AddNumberToObject(o, "time_limit_usec", (double)a->tmpl.time_limit_usec) ||
            !cJSON_AddNumberToObject(o, "submit_usec", (double)a->owner->submit_usec))
                return -ENOMEM;
        return 0;
}

int ctl_arecs_list(const ctl_state *st, int64_t uid, cJSON *reply) {
        cJSON *list = cJSON_AddArrayToObject(reply, "records");
        int r = list ? 0 : -ENOMEM;
        for (size_t i = 0; r == 0 && i < st->narecs; i++) {
                const ctl_arec *a = st->arecs[i];
                if (a->owner && a->left.n && (uid < 0 || a->owner->uid == (uid_t)uid))
                        r = list_one(list, a);
        }
        return r;
}

int ctl_hold_array(ctl_state *st, uint64_t id, uid_t uid, bool hold, size_t *done, size_t *unchanged,
                   char err[PROTO_ERRLEN]) {
        char why[PROTO_ERRLEN];
        size_t k;
        ctl_arec *a = ctl_arec_of(st, id);
        int r = array_start(st, id, &k, err);
        *done = *unchanged = 0;
        *err = '\0';
        for (; r == 0 && k < st->njobs && st->jobs[k]->array_first == id; k++) {
                if (ctl_hold(st, st->jobs[k]->id, uid, hold, why) == 0)
                        ++*done;
                else if ((*unchanged)++ == 0)
                        snprintf(err, PROTO_ERRLEN, "%s", why);
        }
        size_t n = a && a->owner ? array_set_count(&a->left) : 0;
        if (r < 0 || n == 0 || a->tmpl.hold == hold) {
                *unchanged += n;
                return r;
        }
        if (uid != 0 && uid != a->owner->uid) {
                if ((*unchanged += n) == n)
                        snprintf(err, PROTO_ERRLEN, "array %llu belongs to %s: only its owner or root may %s it",
                                 (unsigned long long)id, a->owner->user ? a->owner->user : "another user",
                                 hold ? "hold" : "release");
                return 0;
        }
        a->tmpl.hold = hold;
        *done += n;
        (void)ctl_arec_store(st, a);
        return 0;
}
