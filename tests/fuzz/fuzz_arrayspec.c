/* fuzz_arrayspec.c - the --array parser and the set of task indexes (shared/arrayspec.c), as a
 * submit's "array" reaches them. */
#include "arrayspec.h"
#include "fuzz_file.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether a and b hold the same indexes (not necessarily as the same ranges: "1,5" is two
 * ranges, "1-5:4" one). */
static bool same_set(const array_set *a, const array_set *b) {
        if (array_set_count(a) != array_set_count(b))
                return false;
        for (size_t i = 0; i < a->n; i++)
                for (uint32_t x = a->r[i].lo;; x += a->r[i].step) {
                        if (!array_set_has(b, x))
                                return false;
                        if (x == a->r[i].hi)
                                break;
                }
        return true;
}

/* A text that parses folds to a text that parses back to the same set and throttle; its
 * ranges are sorted and disjoint; taking every index gives them in ascending order, and
 * putting them back (in another order) gives the same count. */
static void spec(const char *s) {
        char err[256], fold[4096];
        array_set set = { 0 }, again = { 0 };
        uint32_t throttle, throttle2, index, last = 0;
        if (array_spec_parse(s, 5000, &set, &throttle, err, sizeof(err)) < 0) {
                if (set.r || set.n || !memchr(err, '\0', sizeof(err)))
                        abort();
                return;
        }
        size_t count = array_set_count(&set);
        if (count == 0 || count > 5000)
                abort();
        for (size_t i = 0; i < set.n; i++)
                if (set.r[i].step == 0 || set.r[i].hi < set.r[i].lo || (set.r[i].hi - set.r[i].lo) % set.r[i].step ||
                    (i > 0 && set.r[i].lo <= set.r[i - 1].hi))
                        abort();
        if (array_set_format(&set, throttle, fold, sizeof(fold)) < sizeof(fold)) {
                if (array_spec_parse(fold, 5000, &again, &throttle2, err, sizeof(err)) < 0 || !same_set(&set, &again) ||
                    throttle2 != throttle)
                        abort();
                array_set_free(&again);
        }
        uint32_t *taken = malloc(count * sizeof(*taken));
        for (size_t k = 0; taken && k < count; k++) {
                if (array_set_take(&set, &index) < 0 || (k > 0 && index <= last) || array_set_has(&set, index))
                        abort();
                taken[k] = last = index;
        }
        if (taken && (array_set_take(&set, &index) != -ENOENT || array_set_count(&set) != 0))
                abort();
        int r = 0;
        for (size_t k = 1; taken && r == 0 && k < count; k += 2) /* the odd positions first, then the even */
                r = array_set_put(&set, taken[k]);
        for (size_t k = 0; taken && r == 0 && k < count; k += 2)
                r = array_set_put(&set, taken[k]);
        if (taken && r != -ENOMEM && (r != 0 || array_set_count(&set) != count))
                abort();
        for (size_t k = 0; taken && r == 0 && k < count; k++)
                if (!array_set_has(&set, taken[k]) || (k % 3 == 0 && array_set_remove(&set, taken[k]) == -ENOENT))
                        abort();
        free(taken);
        array_set_free(&set);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = fuzz_string(data, size);
        if (!s)
                return 0;
        spec(s);
        free(s);
        return 0;
}
