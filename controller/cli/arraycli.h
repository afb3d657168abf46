/* arraycli.h - job arrays as users name them: A_i for one task (asked of the controller, which
 * knows its id), the array's span for cancel A and wait A, the per-task ids of a submission,
 * and a listing's pending tasks folded as Slurm's squeue folds them: 12_[3-99%8]. */
#pragma once
#include "cli.h"
#include "job.h"
#include "arrayspec.h"
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Whether s names an array's task, "A_i". */
bool arraycli_is_task(const char *s);
/* The job id of the task s ("A_i") names, asked of c's controller. Returns 0, or EXIT_USAGE
 * (malformed) / EXIT_FAIL (no such task, no controller) after printing why. */
int arraycli_task_id(const cli *c, const char *s, uint64_t *id);
/* text (a dependency: "afterok:12_3:14,after:12_5") with each A_i replaced by that task's id,
 * malloc'ed into *out. Returns 0, or EXIT_USAGE/EXIT_FAIL after printing why (*out NULL). */
int arraycli_resolve_tasks(const cli *c, const char *text, char **out);
/* The last task's id of the array whose id is id, asked of the controller at sock. Returns 0,
 * -EREMOTEIO when id is not an array's (err says so), or another -errno with err set. */
int arraycli_last(const char *sock, uint64_t id, uint64_t *last, char *err, size_t errlen);
/* Add "tasks": [{"id", "index"}, ...] to a submit's reply for an array of spec whose first task
 * is first: its tasks' ids are consecutive, in the order of their indexes. Returns 0 or -errno. */
int arraycli_add_tasks(cJSON *reply, const char *spec, uint64_t first);
/* Whether j, listed right after prev, folds into prev's row: pending tasks of one array that
 * wait for the same reason. */
bool arraycli_folds(const job *prev, const job *j);
/* The ID column of a row: "A_[fold]" for the pending tasks whose indexes are in set (at least
 * two; the fold cut at ARRAYCLI_FOLD_WIDTH characters, "..." saying so), "A_i" for one task,
 * the id for a plain job, into buf. */
#define ARRAYCLI_FOLD_WIDTH 40
const char *arraycli_row_id(const job *j, const array_set *set, char *buf, size_t len);
/* Add "arrays" to a "jobs" listing: for each row folded in the table, {"id", "pending" (the
 * fold, as "3-99%8"), "count"}. Returns 0 or -errno. */
int arraycli_add_folds(cJSON *reply);
/* The row of a listing's record (a queue reply's "records": an array's tasks not made yet) as
 * a pending job j (arraycli_row_id's, with their indexes in set; both the caller's to free).
 * Returns 0, or -EBADMSG/-ENOMEM with err set. */
int arraycli_record_row(const cJSON *rec, job *j, array_set *set, char err[PROTO_ERRLEN]);
