/* test_idrank.c - the lower bound by id (shared/idrank.h), which the jobs by id, the families'
 * units and a pass's jobs share: every position of a sorted array with gaps and repeats against
 * a linear scan, sub-ranges, and the empty range. */
#include "check_main.h"
#include "idrank.h"

static uint64_t plain_id(const void *v, size_t i) { return ((const uint64_t *)v)[i]; }

/* The first of v[lo, hi) not below id, by looking at each. */
static size_t scan(const uint64_t *v, size_t lo, size_t hi, uint64_t id) {
        while (lo < hi && v[lo] < id)
                lo++;
        return lo;
}

START_TEST(test_against_scan) {
        static const uint64_t v[] = { 1, 2, 2, 2, 5, 9, 9, 10, 40, UINT64_MAX - 1 };
        const size_t n = sizeof(v) / sizeof(v[0]);
        static const uint64_t ids[] = { 0, 1, 2, 3, 5, 6, 9, 10, 11, 40, 41, UINT64_MAX - 1, UINT64_MAX };
        for (size_t k = 0; k < sizeof(ids) / sizeof(ids[0]); k++)
                for (size_t lo = 0; lo <= n; lo++)
                        for (size_t hi = lo; hi <= n; hi++)
                                ck_assert_msg(id_rank(v, lo, hi, ids[k], plain_id) == scan(v, lo, hi, ids[k]),
                                              "id %llu in [%zu, %zu)", (unsigned long long)ids[k], lo, hi);
        ck_assert_uint_eq(id_rank(v, 0, n, 2, plain_id), 1);          /* the first of equal ids */
        ck_assert_uint_eq(id_rank(v, 0, n, UINT64_MAX, plain_id), n); /* none: the end */
        ck_assert_uint_eq(id_rank(NULL, 0, 0, 7, plain_id), 0);       /* empty: never looked at */
}
END_TEST

static Suite *idrank_suite(void) {
        Suite *s = suite_create("idrank");
        TCase *tc = tcase_create("core");
        tcase_add_test(tc, test_against_scan);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(idrank_suite)
