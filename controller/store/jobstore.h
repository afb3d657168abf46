/* jobstore.h - the controller's durable job table, in SQLite.
 *
 * One row per job: its id, state, record as JSON (job_to_json), and its environment, written
 * once when the job is first stored: the controller need not keep it in memory until launch,
 * and later updates rewrite only the record. An array's jobs (job.array_first) but the first
 * store none: their env_of column names the first, whose environment they all read, so an
 * array of N costs one copy of it, not N. Likewise a job whose environment is the same as
 * that of the last job stored with its own (the same user submitting again from one shell)
 * names that job. References go one step, to a row that holds its environment; rows are never
 * deleted. (A database from before arrays gains the column,
 * NULL in every row, when it is opened.) WAL mode with synchronous=FULL (the default): a
 * write has reached the disk when jobstore_put returns, or, inside a batch
 * (jobstore_batch_begin), when jobstore_batch_commit does; a job id given to a client only
 * after that survives a crash of the controller or the machine. With jobstore_set_sync(false)
 * it has reached the kernel only: it survives the controller, not the machine. With
 * jobstore_defer_syncs the caller makes commits durable itself, off its loop: a commit reaches
 * the kernel when it returns, the disk after the caller's fdatasync (jobstore_sync_prepare).
 * One process per database: jobstore_open flocks the file, and a second open fails. */
#pragma once
#include "alpha.h"
#include "events.h"
#include "job.h"

typedef struct jobstore jobstore;

/* Open (creating if needed) the database at path, and checkpoint the log a previous run left.
 * Returns 0 and *out (jobstore_close), -EBUSY with err set when another process has it open
 * (another controller), or another -errno with err set. */
int jobstore_open(const char *path, jobstore **out, char *err, size_t errlen);
/* Insert the job's row, or update its state and record (its environment is kept from the
 * insert). Returns 0 or -EIO (logged with the job id). */
int jobstore_put(jobstore *s, const job *j);
/* jobstore_put of j (none when NULL) and the insert of n events, in one transaction: all or
 * nothing is stored. The events' seq must be set, and new. Returns 0 or -EIO (logged). */
int jobstore_put_events(jobstore *s, const job *j, const ev_record *evs, size_t n);
/* Call fn with each stored event of job (any job when 0) whose seq is after after_seq, oldest
 * first, at most limit of them; or, when newest is set, the newest limit such events, still
 * oldest first. The record is borrowed for the call. Returns how many were passed, or -EIO. */
long jobstore_events(jobstore *s, uint64_t after_seq, uint64_t job, size_t limit, bool newest,
                     void (*fn)(void *userdata, const ev_record *e), void *userdata);
/* The environment stored with job id, or with the first job of its array, as a NULL-terminated
 * vector (strv_free; empty when there is none). Returns 0, -ENOENT when the job is not stored, or -EIO. */
int jobstore_get_env(jobstore *s, uint64_t id, char ***env);
/* Call fn for every stored job (without its environment) in id order with a freshly allocated
 * job it must take (free with job_free + free). Stops at the first negative return of fn and
 * returns it; 0 when done; -EIO on a database error; a row that does not parse is logged and skipped. */
int jobstore_load(jobstore *s, int (*fn)(void *userdata, job *j), void *userdata);
/* Store an array's record (id: the array's; record: its text, controller/arrays.h) in the table
 * arrays (id, record), over the one stored before: one row however many tasks wait in it. The
 * schema's version (PRAGMA user_version) is 2 since the table: a database of version 0 gains it,
 * empty, when opened. Returns 0 or -EIO (logged). */
int jobstore_put_array(jobstore *s, uint64_t id, const char *record);
/* Call fn with each stored array's record, in id order, until it returns < 0. Returns 0, fn's
 * error, or -EIO. */
int jobstore_load_arrays(jobstore *s, int (*fn)(void *userdata, const char *record), void *userdata);
/* Whether a commit waits for the disk (synchronous=FULL, the default) or only for the kernel
 * (synchronous=NORMAL). Returns 0 or -EIO. */
int jobstore_set_sync(jobstore *s, bool sync);
/* Group commit: open a transaction that the following writes join, so that many of them share
 * one commit and one fsync. Returns 0 or -EIO (logged). */
int jobstore_batch_begin(jobstore *s);
/* Commit the batch: its writes are on disk when this returns 0. -EIO (logged) when they are not;
 * the batch is then rolled back, and none of its writes may be reported as done. */
int jobstore_batch_commit(jobstore *s);
/* From now on a commit waits for neither the disk nor its own fsync whatever jobstore_set_sync
 * says (synchronous=NORMAL); when sync is set (jobstore_sync_wanted), the caller makes each
 * commit durable before it reports it: jobstore_sync_prepare, then fdatasync of the descriptor
 * it gives, in any thread. Returns 0 or -EIO. */
int jobstore_defer_syncs(jobstore *s);
/* Whether commits are deferred and sync is set: the caller owes each commit an fdatasync. */
bool jobstore_sync_wanted(const jobstore *s);
/* How many commits were made so far (each batch, each write outside one): a sync prepared after
 * reading it covers that many. */
uint64_t jobstore_commits(const jobstore *s);
/* Make ready to sync every commit so far (walbuf_sync_prepare): *fd is the log's descriptor
 * (borrowed, open until jobstore_close) whose fdatasync, in any thread, makes them durable.
 * Returns 0 or -EIO (logged). */
int jobstore_sync_prepare(jobstore *s, int *fd);
/* Pages in the write-ahead log since it last started again from its beginning, as of the last
 * commit (a checkpoint apart copies them, the next commit after a complete one starts again). */
size_t jobstore_wal_pages(const jobstore *s);
/* Copy the write-ahead log into the database file (fsynced), so that the log starts again from
 * its beginning; never inside a batch. SQLite's own checkpoints are off: they would run inside
 * a commit, on the path of the acknowledgement. Returns 0 or -EIO (logged; nothing is lost). */
int jobstore_checkpoint(jobstore *s);
/* jobstore_checkpoint through a second connection, which only this uses: it may run in another
 * thread while the first writes (PASSIVE: it copies the frames committed when it starts, waits
 * for no one, and fsyncs the log and the database file), one call at a time. It does not update
 * jobstore_wal_pages. Returns 0 or -EIO (logged; nothing is lost). */
int jobstore_checkpoint_apart(jobstore *s);
/* Store m as the next version of the interference matrix (1, 2, ...; table alpha: version,
 * time, types, and the matrix with its intervals as JSON), then set m->version and
 * m->time_usec. Returns 0 or -EIO (logged). */
int jobstore_put_alpha(jobstore *s, alpha_matrix *m, int64_t time_usec);
/* Load version of the matrix (0: the latest) into out (alpha_free). Returns 0, -ENOENT when
 * there is none or no such version, or -EIO. */
int jobstore_get_alpha(jobstore *s, uint64_t version, alpha_matrix *out);
/* Store that node is drained for reason (table drains: node, reason), or, with reason NULL,
 * that it is not. Returns 0 or -EIO (logged). */
int jobstore_put_drain(jobstore *s, const char *node, const char *reason);
/* Call fn for every drained node, in name order, until it returns < 0. Returns 0, fn's error, or
 * -EIO. */
int jobstore_load_drains(jobstore *s, int (*fn)(void *userdata, const char *node, const char *reason), void *userdata);
/* Close the database (a batch still open is rolled back). NULL is fine. */
void jobstore_close(jobstore *s);
