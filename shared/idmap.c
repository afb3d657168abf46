/* idmap.c - objects by their uint64_t id (see idmap.h). */
#include "idmap.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define MIN_CAP 64
#define GROUP   8 /* slots of a group: a cache line of pointers */

/* The key of an object: its first member (idmap.h). */
static uint64_t key_of(const void *p) { return *(const uint64_t *)p; }

/* The home slot of id: the block of GROUP consecutive ids it is in picks a group by the top bits
 * of a Fibonacci hash, and the id its slot there, turned by the next 3 bits of the hash. The
 * live ids of a block share a cache line; ids of one residue mod GROUP (an agent's jobs, each
 * GROUP-th) still spread over the slots of their groups. */
static size_t home_of(const idmap *m, uint64_t id) {
        unsigned bits = (unsigned)__builtin_ctzll((unsigned long long)m->cap);
        uint64_t v = ((id / GROUP) * 0x9E3779B97F4A7C15ull) >> (64 - bits); /* group * GROUP + turn */
        return (size_t)((v & ~(uint64_t)(GROUP - 1)) | ((v + id) & (GROUP - 1)));
}

/* The slot a probe tries after slot i: the same place in the next group, so that the ids of a
 * block that found its group taken move on together; after the last group, the next place of the
 * first, so that the probes go round every slot once (the map is at most half full: each ends). */
static size_t next_slot(const idmap *m, size_t i) { return i + GROUP < m->cap ? i + GROUP : (i + 1) & (GROUP - 1); }

/* How many steps of next_slot lead from slot a to slot b: slot g * GROUP + k is the probes'
 * k * groups + g-th. */
static size_t steps(const idmap *m, size_t a, size_t b) {
        size_t groups = m->cap / GROUP;
        return ((b % GROUP - a % GROUP) * groups + b / GROUP - a / GROUP) & (m->cap - 1);
}

/* Put p in the first free slot from its home (there is one: the map is at most half full). */
static void place(idmap *m, void *p) {
        size_t i = home_of(m, key_of(p));
        while (m->slots[i])
                i = next_slot(m, i);
        m->slots[i] = p;
}

/* Move the objects into cap slots (a power of two that holds them at most half full), aligned on
 * a cache line so that each group is one. */
static int rehash(idmap *m, size_t cap) {
        void **slots = aligned_alloc(GROUP * sizeof(*slots), cap * sizeof(*slots));
        if (!slots)
                return -ENOMEM;
        memset(slots, 0, cap * sizeof(*slots));
        idmap old = *m;
        m->slots = slots;
        m->cap = cap;
        for (size_t i = 0; i < old.cap; i++)
                if (old.slots[i])
                        place(m, old.slots[i]);
        free(old.slots);
        return 0;
}

int idmap_reserve(idmap *m, size_t more) {
        size_t cap = m->cap ? m->cap : MIN_CAP;
        while (cap / 2 < m->n + more)
                cap *= 2;
        return cap == m->cap ? 0 : rehash(m, cap);
}

int idmap_add(idmap *m, void *p) {
        if (idmap_reserve(m, 1) < 0)
                return -ENOMEM;
        place(m, p);
        m->n++;
        return 0;
}

/* The slot holding id, or the free slot that ends its probe. */
static size_t slot_of(const idmap *m, uint64_t id) {
        size_t i = home_of(m, id);
        while (m->slots[i] && key_of(m->slots[i]) != id)
                i = next_slot(m, i);
        return i;
}

void *idmap_find(const idmap *m, uint64_t id) { return m->cap ? m->slots[slot_of(m, id)] : NULL; }

void *idmap_remove(idmap *m, uint64_t id) {
        size_t hole = m->cap ? slot_of(m, id) : 0;
        void *gone = m->cap ? m->slots[hole] : NULL;
        if (!gone)
                return NULL;
        /* Move back each later object of the run whose probe passed the hole, so that no probe
         * stops short of its object at the freed slot. */
        size_t from_hole = 1; /* steps(m, hole, i) */
        for (size_t i = next_slot(m, hole); m->slots[i]; i = next_slot(m, i), from_hole++) {
                if (steps(m, home_of(m, key_of(m->slots[i])), i) >= from_hole) {
                        m->slots[hole] = m->slots[i];
                        hole = i;
                        from_hole = 0;
                }
        }
        m->slots[hole] = NULL;
        m->n--;
        return gone;
}

int idmap_fit(idmap *m) {
        size_t cap = m->cap;
        while (cap > MIN_CAP && m->n * 8 < cap)
                cap /= 2;
        return cap == m->cap ? 0 : rehash(m, cap);
}

void idmap_free(idmap *m) {
        free(m->slots);
        *m = (idmap){ 0 };
}
