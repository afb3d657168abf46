/* arrayspec.h - a job array's task indexes as Slurm's --array writes them: "0-99", "1,3,5-7",
 * a step "0-15:4", and a throttle "%8" (at most 8 tasks running at once). "5" is the single
 * index 5, as in Slurm, not five tasks. The set is kept as sorted, disjoint ranges with a step,
 * so that a pending array costs a few bytes per range, not per task: the controller takes
 * indexes from it as it makes tasks, the CLI folds a listing's pending tasks into one line. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* The largest index (Slurm's hard MaxArraySize is 4000001: indexes up to 4,000,000). */
#define ARRAY_INDEX_MAX 4000000u

/* lo, lo + step, ..., hi: hi - lo is a multiple of step (step >= 1). */
typedef struct array_range {
        uint32_t lo, hi, step;
} array_range;

/* Sorted by lo, disjoint: every index of r[i] is below every index of r[i + 1]. */
typedef struct array_set {
        array_range *r;
        size_t n, cap;
} array_set;

/* Parse spec ("1,3,5-7:2%4") into *set (which the caller zeroed) and *throttle (0: none), with at
 * most max_tasks indexes. Returns 0, or -EINVAL (-ENOMEM) with a one-line reason in err and
 * *set left empty. */
int array_spec_parse(const char *spec, size_t max_tasks, array_set *set, uint32_t *throttle, char *err, size_t errlen);
/* How many indexes set holds. O(ranges). */
size_t array_set_count(const array_set *set);
/* Whether set holds index. O(log ranges). */
bool array_set_has(const array_set *set, uint32_t index);
/* Take the smallest index out of set into *index. Returns 0 or -ENOENT (empty). O(1) but when a
 * range empties (O(ranges): the vector shifts). */
int array_set_take(array_set *set, uint32_t *index);
/* Take index out of set, wherever it is (one task cancelled alone). Returns 0, -ENOENT (not in
 * it) or -ENOMEM (a range split in two needs room). */
int array_set_remove(array_set *set, uint32_t index);
/* Put index back into set (a task requeued), joined to a neighbouring range when it extends it.
 * Returns 0, -EEXIST (already in it) or -ENOMEM. */
int array_set_put(array_set *set, uint32_t index);
/* The set folded as Slurm's squeue prints it, with "%throttle" when throttle > 0: "3-99,101%8",
 * "0-12:4", into buf (cut at len, NUL-terminated). Returns the length the whole text takes, as
 * snprintf does. */
size_t array_set_format(const array_set *set, uint32_t throttle, char *buf, size_t len);
/* Take every index from lo to hi (inclusive) out of set, their number into *removed. Returns 0 or
 * -ENOMEM (set unchanged). O(ranges). */
int array_set_cut(array_set *set, uint32_t lo, uint32_t hi, size_t *removed);
/* A copy of from into *to (which the caller zeroed). Returns 0 or -ENOMEM. */
int array_set_copy(const array_set *from, array_set *to);
/* How many indexes of set are below index, into *pos: its position in ascending order. Returns
 * whether set holds index. O(ranges). */
bool array_set_position(const array_set *set, uint32_t index, size_t *pos);
/* The index at position pos of set in ascending order, into *index. Returns whether set has
 * that many. O(ranges). */
bool array_set_at(const array_set *set, size_t pos, uint32_t *index);
/* Free set's ranges, leaving it empty. */
void array_set_free(array_set *set);
