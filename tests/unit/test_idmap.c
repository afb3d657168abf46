/* test_idmap.c - objects by id (shared/idmap.h): insert, lookup, removal with its
 * backward shift checked against a plain reference and across the end of the slots (no
 * tombstones), slots reused, growth and shrinking. The jobtable and the dependency records are
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

/* The home slot of id in a map of cap slots, as idmap.c computes it (the top bits of a Fibonacci
 * hash), so that the test can make a run of ids with one home. */
static size_t home(uint64_t id, size_t cap) {
        return (size_t)((id * 0x9E3779B97F4A7C15ull) >> (64 - __builtin_ctzll(cap)));
}

/* A run of ids with the last slot as their home wraps round to slot 0; removing from its middle
 * shifts the later ones back across the wrap, and leaves no tombstone: once every record is
 * removed, every slot is free again. */
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
        ck_assert_ptr_eq(t.slots[3], &recs[run[4]]);               /* wrapped: 63, 0, 1, 2, 3 */
        ck_assert_ptr_eq(idmap_remove(&t, run[1]), &recs[run[1]]); /* at slot 0 */
        ck_assert_ptr_eq(t.slots[0], &recs[run[2]]);               /* the later ones moved back */
        ck_assert_ptr_null(t.slots[3]);
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

static Suite *idmap_suite(void) {
        Suite *s = suite_create("idmap");
        TCase *tc = tcase_create("core");
        tcase_add_checked_fixture(tc, number_recs, free_table);
        tcase_add_test(tc, test_insert_lookup);
        tcase_add_test(tc, test_growth);
        tcase_add_test(tc, test_remove_against_reference);
        tcase_add_test(tc, test_reuse_and_fit);
        tcase_add_test(tc, test_wrap_no_tombstones);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(idmap_suite)
