/* trace.c - in-memory job streams and interned names (see trace.h). */
#include "trace.h"
#include "dispatch.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int sim_jobs_push(sim_jobs *a, const sim_job *j) {
        if (sched_grow(&a->v, &a->cap, a->n + 1, sizeof(*a->v)) < 0)
                return -ENOMEM;
        a->v[a->n++] = *j;
        return 0;
}

int sim_jobs_next(void *jobs, sim_job *j) {
        sim_jobs *a = jobs;
        if (a->next == a->n)
                return 0;
        *j = a->v[a->next++];
        return 1;
}

void sim_jobs_free(sim_jobs *a) {
        free(a->v);
        *a = (sim_jobs){ 0 };
}

static uint64_t fnv1a(const char *s) {
        uint64_t h = 14695981039346656037ULL;
        for (; *s; s++)
                h = (h ^ (unsigned char)*s) * 1099511628211ULL;
        return h;
}

/* The slot holding name, or the empty slot where it would go. nslots is a power of two. */
static size_t find_slot(const sim_names *t, const char *name) {
        size_t mask = t->nslots - 1, i = (size_t)fnv1a(name) & mask;
        while (t->slots[i] && strcmp(t->v[t->slots[i] - 1], name) != 0)
                i = (i + 1) & mask;
        return i;
}

/* Double the slots (or make the first 64) and place every name again. */
static int rehash(sim_names *t) {
        size_t nslots = t->nslots ? t->nslots * 2 : 64;
        uint32_t *slots = calloc(nslots, sizeof(*slots));
        if (!slots)
                return -ENOMEM;
        free(t->slots);
        t->slots = slots;
        t->nslots = nslots;
        for (size_t k = 0; k < t->n; k++)
                t->slots[find_slot(t, t->v[k])] = (uint32_t)(k + 1);
        return 0;
}

int sim_names_intern(sim_names *t, const char *name, uint32_t *index) {
        if (t->nslots) {
                size_t i = find_slot(t, name);
                if (t->slots[i]) {
                        *index = t->slots[i] - 1;
                        return 0;
                }
        }
        if (t->n >= SIM_NAMES_MAX - 1)
                return -E2BIG;
        if ((t->n + 1) * 2 > t->nslots && rehash(t) < 0)
                return -ENOMEM;
        if (t->n == t->cap) {
                size_t cap = t->cap ? t->cap * 2 : 16;
                char **v = realloc(t->v, cap * sizeof(*v));
                if (!v)
                        return -ENOMEM;
                t->v = v;
                t->cap = cap;
        }
        char *copy = strdup(name);
        if (!copy)
                return -ENOMEM;
        t->v[t->n] = copy;
        t->slots[find_slot(t, name)] = (uint32_t)(t->n + 1);
        *index = (uint32_t)t->n++;
        return 0;
}

void sim_names_free(sim_names *t) {
        for (size_t i = 0; i < t->n; i++)
                free(t->v[i]);
        free(t->v);
        free(t->slots);
        *t = (sim_names){ 0 };
}

static const char *const key_names[] = { "none", "group", "user", "class" };

int sim_dept_key_from_name(const char *name, sim_dept_key *out) {
        for (size_t k = 0; k < sizeof(key_names) / sizeof(key_names[0]); k++)
                if (strcmp(name, key_names[k]) == 0) {
                        *out = (sim_dept_key)k;
                        return 0;
                }
        return -EINVAL;
}

const char *sim_dept_key_name(sim_dept_key key) { return key_names[key]; }
