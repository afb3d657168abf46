/* jobtable.c - the controller's jobs by id (see jobtable.h). */
#include "jobtable.h"
#include <errno.h>
#include <stdlib.h>

#define MIN_CAP 64

/* The home slot of id: the top bits of a Fibonacci hash, so that consecutive ids spread. */
static size_t home_of(const jobtable *t, uint64_t id) {
        unsigned bits = (unsigned)__builtin_ctzll((unsigned long long)t->cap);
        return (size_t)((id * 0x9E3779B97F4A7C15ull) >> (64 - bits));
}

static size_t next_slot(const jobtable *t, size_t i) {
        return (i + 1) & (t->cap - 1);
}

/* Put j in the first free slot from its home (there is one: the table is at most half full). */
static void place(jobtable *t, job *j) {
        size_t i = home_of(t, j->id);
        while (t->slots[i])
                i = next_slot(t, i);
        t->slots[i] = j;
}

/* Move the jobs into cap slots (a power of two that holds them at most half full). */
static int rehash(jobtable *t, size_t cap) {
        job **slots = calloc(cap, sizeof(*slots));
        if (!slots)
                return -ENOMEM;
        jobtable old = *t;
        t->slots = slots;
        t->cap = cap;
        for (size_t i = 0; i < old.cap; i++)
                if (old.slots[i])
                        place(t, old.slots[i]);
        free(old.slots);
        return 0;
}

int jobtable_reserve(jobtable *t, size_t more) {
        size_t cap = t->cap ? t->cap : MIN_CAP;
        while (cap / 2 < t->n + more)
                cap *= 2;
        return cap == t->cap ? 0 : rehash(t, cap);
}

int jobtable_add(jobtable *t, job *j) {
        if (jobtable_reserve(t, 1) < 0)
                return -ENOMEM;
        place(t, j);
        t->n++;
        return 0;
}

/* The slot holding id, or the free slot that ends its probe. */
static size_t slot_of(const jobtable *t, uint64_t id) {
        size_t i = home_of(t, id);
        while (t->slots[i] && t->slots[i]->id != id)
                i = next_slot(t, i);
        return i;
}

job *jobtable_find(const jobtable *t, uint64_t id) {
        return t->cap ? t->slots[slot_of(t, id)] : NULL;
}

void jobtable_remove(jobtable *t, uint64_t id) {
        size_t hole = t->cap ? slot_of(t, id) : 0;
        if (!t->cap || !t->slots[hole])
                return;
        /* Move back each later job of the run whose probe passed the hole, so that no probe
         * stops short of its job at the freed slot. */
        for (size_t i = next_slot(t, hole); t->slots[i]; i = next_slot(t, i)) {
                size_t home = home_of(t, t->slots[i]->id);
                if (((i - home) & (t->cap - 1)) >= ((i - hole) & (t->cap - 1))) {
                        t->slots[hole] = t->slots[i];
                        hole = i;
                }
        }
        t->slots[hole] = NULL;
        t->n--;
}

int jobtable_fit(jobtable *t) {
        size_t cap = t->cap;
        while (cap > MIN_CAP && t->n * 8 < cap)
                cap /= 2;
        return cap == t->cap ? 0 : rehash(t, cap);
}

void jobtable_free(jobtable *t) {
        free(t->slots);
        *t = (jobtable){ 0 };
}
