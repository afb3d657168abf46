/* jobstore.h - the controller's durable job table, in SQLite.
 *
 * One row per job: its id, state and whole record as JSON (job_to_json plus env). WAL mode
 * with synchronous=FULL: a write has reached the disk when jobstore_put returns, so a job id
 * given to a client survives a crash of the controller or the machine. */
#pragma once
#include "job.h"

typedef struct jobstore jobstore;

/* Open (creating if needed) the database at path. Returns 0 and *out (jobstore_close), or
 * -errno with err set. */
int jobstore_open(const char *path, jobstore **out, char *err, size_t errlen);
/* Insert or replace the job's row. Returns 0 or -EIO (logged with the job id). */
int jobstore_put(jobstore *s, const job *j);
/* Call fn for every stored job in id order with a freshly allocated job it must take (free with
 * job_free + free). Stops at the first negative return of fn and returns it; 0 when done;
 * -EIO on a database error; a row that does not parse is logged and skipped. */
int jobstore_load(jobstore *s, int (*fn)(void *userdata, job *j), void *userdata);
/* Close the database. NULL is fine. */
void jobstore_close(jobstore *s);
