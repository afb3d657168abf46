/* test_idmap.c - objects by id (shared/idmap.h): insert, lookup, removal with its
 * backward shift checked against a plain reference and across the end of the slots (no
 * tombstones), slots reused, growth and shrinking; consecutive ids in one cache line, the
 * simulator's long-lived ids among short-lived ones and ids of one residue mod 8 against a slow
 * reference, with short probes. The jobtable and the dependency records are
 * idmaps: test_jobtable and test_depindex test them through their owners. */
#include "check_main.h"
#include "idmap.h"
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#define N 20000

/* An object an idmap holds: its key first (idmap.h), then what the owner keeps. */
typedef struct rec {
        uint64_t id;
        int payload;
} rec;

static rec recs[N + 1]; /* recs[i].id == i */

static idmap t; /* each test's, emptied after it */

static void number_recs(void) {
        for (uint64_t i = 0; i <= N; i++)
                recs[i] = (rec){ .id = i, .payload = (int)i };
        t = (idmap){ 0 };
}

static void free_table(void) { idmap_free(&t); }

/* Add the records of ids from..to to t. */
static void add_ids(uint64_t from, uint64_t to) {
        for (uint64_t id = from; id <= to; id++)
                ck_assert_int_eq(idmap_add(&t, &recs[id]), 0);
}

START_TEST(test_insert_lookup) {
        ck_assert_ptr_null(idmap_find(&t, 1)); /* empty, no slots */
        add_ids(1, N);
        ck_assert_uint_eq(t.n, N);
        for (uint64_t id = 1; id <= N; id++)
                ck_assert_ptr_eq(idmap_find(&t, id), &recs[id]);
        ck_assert_ptr_null(idmap_find(&t, 0));
        ck_assert_ptr_null(idmap_find(&t, N + 1));
        ck_assert_ptr_null(idmap_find(&t, UINT64_MAX));
}
END_TEST

START_TEST(test_growth) {
        size_t grew = 0, cap = 0;
        for (uint64_t id = 1; id <= N; id++) {
                ck_assert_int_eq(idmap_add(&t, &recs[id]), 0);
                ck_assert_uint_le(2 * t.n, t.cap); /* at most half full: probes stay short */
                ck_assert_uint_eq(t.cap & (t.cap - 1), 0);
                grew += t.cap != cap;
                cap = t.cap;
        }
        ck_assert_uint_le(grew, 16); /* doubling: log2(2 N / 64) + 1 */
        /* room reserved is room kept: the adds after it move nothing */
        idmap_free(&t);
        ck_assert_int_eq(idmap_reserve(&t, 1000), 0);
        void **slots = t.slots;
        add_ids(1, 1000);
        ck_assert_ptr_eq(t.slots, slots);
}
END_TEST

/* A random walk of adds and removals, every id's lookup checked against a plain array after each
 * step's batch: a backward shift that lost a record, or left one behind a hole, fails here. */
START_TEST(test_remove_against_reference) {
        static bool in[N + 1];
        memset(in, 0, sizeof(in));
        srand(42);
        size_t n = 0;
        for (int step = 0; step < 200; step++) {
                for (int k = 0; k < 500; k++) {
                        uint64_t id = 1 + (uint64_t)rand() % N;
                        if (in[id]) {
                                ck_assert_ptr_eq(idmap_remove(&t, id), &recs[id]);
                                n--;
                        } else {
                                ck_assert_int_eq(idmap_add(&t, &recs[id]), 0);
                                n++;
                        }
                        in[id] = !in[id];
                }
                ck_assert_uint_eq(t.n, n);
                size_t wrong = 0; /* counted, not asserted each: Check marks every assertion */
                for (uint64_t id = 1; id <= N; id++)
                        wrong += idmap_find(&t, id) != (in[id] ? &recs[id] : NULL);
                ck_assert_uint_eq(wrong, 0);
        }
        ck_assert_ptr_null(idmap_remove(&t, N + 5)); /* not there: nothing */
        ck_assert_uint_eq(t.n, n);
}
END_TEST

/* The simulator's pattern: ids grow, a window of them lives. Freed slots are reused: the map
 * stays the size of the window, not of every id ever added. */
START_TEST(test_reuse_and_fit) {
        const uint64_t window = 500;
        for (uint64_t id = 1; id <= N; id++) {
                ck_assert_int_eq(idmap_add(&t, &recs[id]), 0);
                if (id > window)
                        idmap_remove(&t, id - window);
        }
        ck_assert_uint_eq(t.n, window);
        ck_assert_uint_le(t.cap, 4 * window);
        for (uint64_t id = N - window + 1; id <= N; id++)
                ck_assert_ptr_eq(idmap_find(&t, id), &recs[id]);
        ck_assert_ptr_null(idmap_find(&t, N - window));
        /* a map emptied to a few gives its memory back, and still finds them */
        for (uint64_t id = N - window + 1; id <= N - 10; id++)
                idmap_remove(&t, id);
        ck_assert_int_eq(idmap_fit(&t), 0);
        ck_assert_uint_eq(t.cap, 64);
        for (uint64_t id = N - 9; id <= N; id++)
                ck_assert_ptr_eq(idmap_find(&t, id), &recs[id]);
}
END_TEST

/* The home slot of id in a map of cap slots, as idmap.c computes it (its block of 8 ids picks a
 * group of 8 slots by the top bits of a Fibonacci hash, the id its slot in the group turned by
 * the next 3 bits), so that the test can make a run of ids with one home. */
static size_t home(uint64_t id, size_t cap) {
        uint64_t v = ((id / 8) * 0x9E3779B97F4A7C15ull) >> (64 - __builtin_ctzll(cap));
        return (size_t)((v & ~(uint64_t)7) | ((v + id) & 7));
}

/* How far the object in slot i is from its home along the probes (each the same slot of the next
 * group, from the last group to the next slot of the first), as idmap.c steps. */
static size_t probe_len(size_t i) {
        size_t h = home(*(uint64_t *)t.slots[i], t.cap), groups = t.cap / 8;
        return ((i % 8 - h % 8) * groups + i / 8 - h / 8) & (t.cap - 1);
}

/* The longest probe of the objects in t. */
static size_t longest_probe(void) {
        size_t longest = 0;
        for (size_t i = 0; i < t.cap; i++)
                if (t.slots[i] && probe_len(i) > longest)
                        longest = probe_len(i);
        return longest;
}

/* A run of ids with the last slot as their home wraps round to slot 0 and goes on group by group
 * (0, 8, 16, ...); removing from its middle shifts the later ones back across the wrap, and leaves
 * no tombstone: once every record is removed, every slot is free again. */
START_TEST(test_wrap_no_tombstones) {
        ck_assert_ptr_null(idmap_remove(&t, 1)); /* empty, no slots */
        ck_assert_int_eq(idmap_reserve(&t, 1), 0);
        ck_assert_uint_eq(t.cap, 64);
        uint64_t run[5];
        size_t nrun = 0;
        for (uint64_t id = 1; id <= N && nrun < 5; id++)
                if (home(id, t.cap) == t.cap - 1)
                        run[nrun++] = id;
        ck_assert_uint_eq(nrun, 5);
        for (size_t k = 0; k < nrun; k++)
                ck_assert_int_eq(idmap_add(&t, &recs[run[k]]), 0);
        ck_assert_uint_eq(t.cap, 64); /* 5 of 64: no growth moved them */
        ck_assert_ptr_eq(t.slots[63], &recs[run[0]]);
        ck_assert_ptr_eq(t.slots[24], &recs[run[4]]);              /* wrapped: 63, 0, 8, 16, 24 */
        ck_assert_ptr_eq(idmap_remove(&t, run[1]), &recs[run[1]]); /* at slot 0 */
        ck_assert_ptr_eq(t.slots[0], &recs[run[2]]);               /* the later ones moved back */
        ck_assert_ptr_null(t.slots[24]);
        for (size_t k = 0; k < nrun; k++)
                ck_assert_ptr_eq(idmap_find(&t, run[k]), k == 1 ? NULL : &recs[run[k]]);
        for (size_t k = 0; k < nrun; k++)
                if (k != 1)
                        ck_assert_ptr_eq(idmap_remove(&t, run[k]), &recs[run[k]]);
        ck_assert_uint_eq(t.n, 0);
        for (size_t i = 0; i < t.cap; i++)
                ck_assert_ptr_null(t.slots[i]);
}
END_TEST

/* Consecutive ids share cache lines: the 8 ids of a block sit in one group of 8 slots, one
 * 64-byte line, unless their group was taken (a lookup of one of them then reads the line a
 * neighbour of theirs brought in). */
START_TEST(test_blocks_share_lines) {
        add_ids(1, N);
        size_t blocks = 0, whole = 0;
        for (uint64_t first = 8; first + 7 <= N; first += 8, blocks++) {
                uintptr_t line = (uintptr_t)&t.slots[home(first, t.cap)] / 64;
                bool same = true;
                for (uint64_t id = first; id < first + 8; id++) {
                        size_t i = home(id, t.cap);
                        while (t.slots[i] != &recs[id])
                                i = i + 8 < t.cap ? i + 8 : (i + 1) % 8;
                        same &= (uintptr_t)&t.slots[i] / 64 == line;
                }
                whole += same;
        }
        ck_assert_uint_ge(10 * whole, 9 * blocks); /* a scattering hash: 8 ids, 8 lines */
}
END_TEST

/* A slow reference: the live ids in an array, searched from end to end. */
typedef struct ref {
        uint64_t *ids;
        size_t n;
} ref;

static bool ref_has(const ref *r, uint64_t id) {
        for (size_t i = 0; i < r->n; i++)
                if (r->ids[i] == id)
                        return true;
        return false;
}

static void ref_drop(ref *r, size_t i) { r->ids[i] = r->ids[--r->n]; }

/* Every id from lo to hi found in t when and only when the reference has it. */
static void check_against(const ref *r, rec *v, uint64_t lo, uint64_t hi) {
        size_t wrong = 0; /* counted, not asserted each: Check marks every assertion */
        for (uint64_t id = lo; id <= hi; id++)
                wrong += idmap_find(&t, id) != (ref_has(r, id) ? &v[id] : NULL);
        ck_assert_uint_eq(wrong, 0);
        ck_assert_uint_eq(t.n, r->n);
}

/* The simulator's pattern: the ids move on, most jobs end soon after their submission (within
 * 600 ids), and one in 100 lives 50,000 to 150,000 ids more, pinning old ids far behind the
 * newest. Every lookup of the recent ids and of the pinned ones is checked against a plain array
 * now and then; the map stays the size of the live ids, not of their span, and its probes short. */
START_TEST(test_long_lived_among_short_lived) {
        const uint64_t last = 400000, span = last + 150000;
        rec *v = malloc((span + 1) * sizeof(*v));
        uint64_t *dying = calloc(span + 1, sizeof(*dying)); /* dying[t]: the first id to end at t */
        uint64_t *next = calloc(span + 1, sizeof(*next));   /* next[id]: the next to end with id */
        bool *live = calloc(span + 1, sizeof(*live));
        ck_assert(v && dying && next && live);
        srand(7);
        size_t n = 0, most = 0, longest = 0;
        for (uint64_t id = 1; id <= last; id++) {
                for (uint64_t old = dying[id]; old; old = next[old], n--) {
                        ck_assert_ptr_eq(idmap_remove(&t, old), &v[old]);
                        live[old] = false;
                }
                v[id] = (rec){ .id = id };
                ck_assert_int_eq(idmap_add(&t, &v[id]), 0);
                live[id] = true;
                most = ++n > most ? n : most;
                uint64_t end = id + 1 + (rand() % 100 ? (uint64_t)rand() % 600 : 50000 + (uint64_t)rand() % 100000);
                next[id] = dying[end];
                dying[end] = id;
                if (id % 20000 == 0) {
                        size_t wrong = 0, pinned = 0;
                        for (uint64_t k = 1; k <= id + 10; k++) {
                                wrong += idmap_find(&t, k) != (live[k] ? &v[k] : NULL);
                                pinned += live[k] && k + 1000 < id;
                        }
                        ck_assert_uint_eq(wrong, 0);
                        ck_assert_uint_eq(t.n, n);
                        ck_assert(id < 50000 || pinned > 100);
                        ck_assert_int_eq(idmap_fit(&t), 0);
                        longest = longest_probe() > longest ? longest_probe() : longest;
                }
        }
        ck_assert_uint_le(t.cap, 4 * most);
        ck_assert_uint_le(longest, 32);
        idmap_free(&t);
        free(live);
        free(next);
        free(dying);
        free(v);
}
END_TEST

/* Ids of one residue mod 8 (every 8th or 64th, as one agent of 8 may get them): each block has one
 * live id, and the turn of its slot in the group spreads them, so that probes stay short; then
 * random removals, adds and lookups against the slow reference. */
START_TEST(test_one_residue) {
        static const uint64_t strides[] = { 8, 64 };
        for (size_t s = 0; s < sizeof(strides) / sizeof(*strides); s++) {
                const uint64_t stride = strides[s], count = 2000;
                rec *v = calloc(stride * count + 1, sizeof(*v));
                ref r = { .ids = malloc(count * sizeof(uint64_t)) };
                ck_assert(v && r.ids);
                srand(11);
                for (uint64_t id = 3; id <= stride * count; id += stride) {
                        v[id] = (rec){ .id = id };
                        ck_assert_int_eq(idmap_add(&t, &v[id]), 0);
                        r.ids[r.n++] = id;
                }
                ck_assert_uint_le(longest_probe(), 32);
                for (int k = 0; k < 4000; k++) {
                        uint64_t id = 3 + stride * ((uint64_t)rand() % count);
                        size_t i = 0;
                        while (i < r.n && r.ids[i] != id)
                                i++;
                        if (i < r.n) {
                                ck_assert_ptr_eq(idmap_remove(&t, id), &v[id]);
                                ref_drop(&r, i);
                        } else {
                                ck_assert_int_eq(idmap_add(&t, &v[id]), 0);
                                r.ids[r.n++] = id;
                        }
                }
                check_against(&r, v, 1, stride * count);
                ck_assert_uint_le(longest_probe(), 32);
                idmap_free(&t);
                free(r.ids);
                free(v);
        }
}
END_TEST

static Suite *idmap_suite(void) {
        Suite *s = suite_create("idmap");
        TCase *tc = tcase_create("core");
        tcase_add_checked_fixture(tc, number_recs, free_table);
        tcase_add_test(tc, test_insert_lookup);
        tcase_add_test(tc, test_growth);
        tcase_add_test(tc, test_remove_against_reference);
        tcase_add_test(tc, test_reuse_and_fit);
        tcase_add_test(tc, test_wrap_no_tombstones);
        tcase_add_test(tc, test_blocks_share_lines);
        tcase_add_test(tc, test_long_lived_among_short_lived);
        tcase_add_test(tc, test_one_residue);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(idmap_suite)
