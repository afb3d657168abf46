/* idmap.h - objects by their uint64_t id: an open-addressing hash table of pointers (linear
 * probing, backward-shift deletion, at most half full), so that a lookup is O(1) whatever the
 * ids are. Keys are placed by blocks: the 8 consecutive ids of a block hash to one group of 8
 * slots, a cache line, each id to its own slot there, and a probe moves on group by group, so
 * that the live ids of the simulator and the controller, mostly consecutive, share cache lines
 * (idmap.c). An object's key is its FIRST member, a uint64_t (the users check it at compile time:
 * the jobs by id, jobtable.h; the dependency records, depindex.c; the agent's jobs, jobtab.c);
 * the objects are the caller's. A zeroed idmap is empty and holds no memory. */
#pragma once
#include <stddef.h>
#include <stdint.h>

typedef struct idmap {
        void **slots; /* NULL: a free slot */
        size_t cap;   /* a power of two, or 0 */
        size_t n;
} idmap;

/* Make room for more objects, so that adding them cannot fail. Returns 0 or -ENOMEM. */
int idmap_reserve(idmap *m, size_t more);
/* Add p, whose key m does not hold (the caller's to check). Returns 0 or -ENOMEM. */
int idmap_add(idmap *m, void *p);
/* The object with key id, or NULL. O(1). */
void *idmap_find(const idmap *m, uint64_t id);
/* Drop the object with key id; returns it (still the caller's), or NULL when m has none. O(1). */
void *idmap_remove(idmap *m, uint64_t id);
/* Give back the memory of a map that shrank below an eighth of its slots (after removals).
 * Returns 0, or -ENOMEM with m left as it was. */
int idmap_fit(idmap *m);
/* Free the slots (not the objects). */
void idmap_free(idmap *m);
