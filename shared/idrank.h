/* idrank.h - the lower bound of an id in items sorted by id (a binary search), for every array
 * kept in id order: the controller's jobs and its queues (state.c), the families' units
 * (family.c), a pass's pending jobs (policies/dispatch.c). Header-only, so that policies/ uses it
 * without depending on anything, and so that each caller's key accessor inlines. */
#pragma once
#include <stddef.h>
#include <stdint.h>

/* The position of the first of items [lo, hi) of v, in ascending id order, whose id is >= id
 * (hi when none is): key(v, i) is the id of v's item i. O(log n). */
static inline size_t id_rank(const void *v, size_t lo, size_t hi, uint64_t id,
                             uint64_t (*key)(const void *v, size_t i)) {
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (key(v, mid) < id)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}
