/* arrays.c - an array's names and its throttle (arrays.h). */
#include "arrays.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

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
        size_t k;
        int r = array_start(st, id, &k, err);
        if (r < 0)
                return r;
        *last = st->jobs[k + tasks_upto(st, k, id, UINT32_MAX) - 1]->id;
        return 0;
}

int ctl_array_task(ctl_state *st, uint64_t array, uint32_t index, uint64_t *id, char err[PROTO_ERRLEN]) {
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
typedef struct array_load {
        uint64_t array;
        uint32_t n;
} array_load;

typedef struct load_table {
        array_load *v;
        size_t n, cap, last; /* last: the entry found last (an array's tasks come together) */
} load_table;

/* The entry of array in t, added with 0 when new. Returns it, or NULL (no memory). */
static array_load *load_of(load_table *t, uint64_t array) {
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
        t->v[t->n] = (array_load){ array, 0 };
        return &t->v[t->last = t->n++];
}

size_t ctl_array_throttle(ctl_state *st, sched_job *jobs, size_t n) {
        load_table t = { 0 };
        size_t kept = 0;
        if (!st->throttle_seen)
                return n;
        for (size_t i = 0; i < st->running_ids.n; i++) {
                const job *j = st->running_ids.v[i];
                array_load *l;
                /* a job requeued and running again may sit beside its stale entry */
                bool twin = i > 0 && st->running_ids.v[i - 1] == j;
                if (!twin && j->state == JOB_RUNNING && j->spec.array_throttle && (l = load_of(&t, j->array_first)))
                        l->n++;
        }
        for (size_t i = 0; i < n; i++) {
                job *j = ctl_find_job(st, jobs[i].id);
                array_load *l = j && j->spec.array_throttle ? load_of(&t, j->array_first) : NULL;
                if (j && j->spec.array_throttle && (!l || l->n >= j->spec.array_throttle)) {
                        j->wait = JOB_WAIT_THROTTLE; /* no memory to count: it waits for the next pass */
                        continue;
                }
                if (l)
                        l->n++;
                jobs[kept++] = jobs[i];
        }
        free(t.v);
        return kept;
}
