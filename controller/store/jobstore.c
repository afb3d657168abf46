/* jobstore.c - the durable job table (see jobstore.h). */
#include "jobstore.h"
#include "jobstore_int.h"
#include "log.h"
#include "walbuf.h"
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

struct jobstore {
        sqlite3 *db;
        sqlite3_stmt *insert, *update, *begin, *commit;
        sqlite3_stmt *get_env;
        sqlite3_stmt *put_event;
        sqlite3_stmt *put_array;
        /* The environment of the last job stored with its own, and that job: the next job with
         * the same environment, as a user's jobs from one shell have, refers to it instead of
         * storing it again. */
        char **last_env;
        uint64_t last_env_job;
        size_t wal_pages; /* frames in the write-ahead log, as of the last commit */
        uint64_t max_job; /* no row has a larger id: a job past it is inserted without a look */
        uint64_t commits; /* commits so far (each batch, each write outside one) */
        bool sync;        /* commits must reach the disk before they are reported */
        bool deferred;    /* ... through the caller's fdatasync (jobstore_defer_syncs) */
        bool level_set;   /* PRAGMA synchronous was set by jobstore_set_sync ... */
        bool level_full;  /* ... to FULL (else NORMAL) */
        int lock_fd;      /* the database file, flock'ed: one controller per database (-1: none) */
        sqlite3 *apart;   /* a second connection, for jobstore_checkpoint_apart's thread */
};

/* Normal locking, not locking_mode=EXCLUSIVE (which keeps the log's index in the process's heap
 * and takes the file lock once): jobstore_checkpoint_apart's second connection reads the index
 * in shared memory. The controller is still the database's only user: jobstore_open flocks the
 * file. */
static const char schema[] = "PRAGMA journal_mode=WAL;"
                             "PRAGMA synchronous=FULL;"
                             "CREATE TABLE IF NOT EXISTS jobs ("
                             "  id INTEGER PRIMARY KEY,"
                             "  state TEXT NOT NULL,"
                             "  record TEXT NOT NULL,"
                             "  env TEXT NOT NULL DEFAULT '[]',"
                             "  env_of INTEGER);"
                             "CREATE TABLE IF NOT EXISTS alpha ("
                             "  version INTEGER PRIMARY KEY AUTOINCREMENT,"
                             "  time_usec INTEGER NOT NULL,"
                             "  types TEXT NOT NULL,"
                             "  record TEXT NOT NULL);"
                             "CREATE TABLE IF NOT EXISTS events ("
                             "  seq INTEGER PRIMARY KEY,"
                             "  time_usec INTEGER NOT NULL,"
                             "  job INTEGER NOT NULL,"
                             "  node TEXT NOT NULL,"
                             "  what TEXT NOT NULL,"
                             "  reason TEXT NOT NULL);"
                             "CREATE INDEX IF NOT EXISTS events_by_job ON events (job, seq);"
                             "CREATE TABLE IF NOT EXISTS drains ("
                             "  node TEXT PRIMARY KEY,"
                             "  reason TEXT NOT NULL);";

/* The schema's version (PRAGMA user_version): 0, a database from before it was counted, has
 * every array's task in its own row; 2 adds the arrays table (jobstore.h). */
#define SCHEMA_VERSION 2

/* Bring a database of an earlier version to SCHEMA_VERSION: the arrays table, empty (the arrays
 * an older controller stored are rows of their tasks, loaded as they are). */
static int migrate(sqlite3 *db, char **msg) {
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(db, "PRAGMA user_version", -1, &q, NULL) != SQLITE_OK)
                return SQLITE_ERROR;
        int rc = sqlite3_step(q), version = rc == SQLITE_ROW ? sqlite3_column_int(q, 0) : -1;
        sqlite3_finalize(q);
        if (version < 0)
                return SQLITE_ERROR;
        if (version >= SCHEMA_VERSION)
                return SQLITE_OK;
        return sqlite3_exec(db,
                            "BEGIN;"
                            "CREATE TABLE IF NOT EXISTS arrays ("
                            "  id INTEGER PRIMARY KEY,"
                            "  record TEXT NOT NULL);"
                            "PRAGMA user_version = 2;"
                            "COMMIT;",
                            NULL, NULL, msg);
}

/* A database made before arrays has no env_of column: add it (NULL: the job's own env). */
static int add_env_of(sqlite3 *db, char **msg) {
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(db, "SELECT 1 FROM pragma_table_info('jobs') WHERE name = 'env_of'", -1, &q, NULL) !=
            SQLITE_OK)
                return SQLITE_ERROR;
        int rc = sqlite3_step(q);
        sqlite3_finalize(q);
        if (rc == SQLITE_ROW)
                return SQLITE_OK;
        return rc == SQLITE_DONE ? sqlite3_exec(db, "ALTER TABLE jobs ADD COLUMN env_of INTEGER", NULL, NULL, msg) : rc;
}

/* SQLite calls this after every commit in WAL mode; having one replaces its own, which
 * checkpoints inside the commit, on the path of the acknowledgement: the controller calls
 * jobstore_checkpoint_apart (or jobstore_checkpoint) when it has time instead. It also counts
 * the commits (jobstore_commits). */
static int note_wal_size(void *userdata, sqlite3 *db, const char *name, int pages) {
        jobstore *s = userdata;
        (void)db;
        (void)name;
        s->wal_pages = pages > 0 ? (size_t)pages : 0;
        s->commits++;
        return SQLITE_OK;
}

/* Take the database file's lock, which the process holds until jobstore_close: a second
 * controller on the same database is refused with a clear message, after LOCK_WAIT_MS: a
 * controller just killed holds it until its last thread has ended, which an fsync in progress
 * delays (SQLite's own lock waited 1 s). flock, not fcntl: SQLite's own fcntl locks are the
 * process's, which another descriptor's close would drop, and flock's are the descriptor's.
 * Returns 0 or -errno with err set. */
static int lock_database(jobstore *s, const char *path, char *err, size_t errlen) {
        enum { LOCK_WAIT_MS = 5000, LOCK_POLL_MS = 10 };
        s->lock_fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
        if (s->lock_fd < 0) {
                int r = -errno;
                snprintf(err, errlen, "database %s: %s", path, strerror(-r));
                return r;
        }
        int r;
        for (int waited = 0;; waited += LOCK_POLL_MS) {
                if (flock(s->lock_fd, LOCK_EX | LOCK_NB) == 0)
                        return 0;
                r = -errno;
                if (r != -EWOULDBLOCK || waited >= LOCK_WAIT_MS)
                        break;
                if (waited == 0)
                        log_info("database %s is locked: waiting up to %d s for its holder to end", path,
                                 LOCK_WAIT_MS / 1000);
                usleep(LOCK_POLL_MS * 1000);
        }
        snprintf(err, errlen, "database %s: %s", path,
                 r == -EWOULDBLOCK ? "locked: another controller uses it" : strerror(-r));
        return r == -EWOULDBLOCK ? -EBUSY : r;
}

/* Open the checkpointer's connection: the default VFS (walbuf holds nothing for it), no
 * schema, and its own checkpoints only through jobstore_checkpoint_apart. Returns an SQLite
 * result code. */
static int open_apart(jobstore *s, const char *path) {
        int rc = sqlite3_open_v2(path, &s->apart, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX, NULL);
        if (rc == SQLITE_OK)
                rc = sqlite3_exec(s->apart, "PRAGMA synchronous=NORMAL; PRAGMA wal_autocheckpoint=0;", NULL, NULL,
                                  NULL);
        return rc;
}

static int prepare(sqlite3 *db, const char *sql, sqlite3_stmt **q) { return sqlite3_prepare_v2(db, sql, -1, q, NULL); }

sqlite3 *jobstore_db(jobstore *s) { return s->db; }

static int read_max_job(jobstore *s) {
        sqlite3_stmt *q;
        int rc = prepare(s->db, "SELECT COALESCE(MAX(id), 0) FROM jobs", &q);
        if (rc == SQLITE_OK && (rc = sqlite3_step(q)) == SQLITE_ROW)
                s->max_job = (uint64_t)sqlite3_column_int64(q, 0);
        sqlite3_finalize(q);
        return rc == SQLITE_ROW ? 0 : -EIO;
}

int jobstore_open(const char *path, jobstore **out, char *err, size_t errlen) {
        jobstore *s = calloc(1, sizeof(*s));
        int r;
        if (!s)
                return -ENOMEM;
        s->lock_fd = -1;
        s->sync = true; /* the schema's synchronous=FULL */
        if ((r = lock_database(s, path, err, errlen)) < 0) {
                jobstore_close(s);
                return r;
        }
        char *msg = NULL;
        if (walbuf_register() != SQLITE_OK ||
            sqlite3_open_v2(path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE | SQLITE_OPEN_FULLMUTEX,
                            WALBUF_VFS) != SQLITE_OK ||
            sqlite3_busy_timeout(s->db, 1000) != SQLITE_OK ||
            sqlite3_exec(s->db, schema, NULL, NULL, &msg) != SQLITE_OK || add_env_of(s->db, &msg) != SQLITE_OK ||
            migrate(s->db, &msg) != SQLITE_OK || walbuf_flush(s->db) != SQLITE_OK ||
            prepare(s->db, "INSERT INTO jobs (id, state, record, env, env_of) VALUES (?, ?, ?, ?, ?)", &s->insert) ||
            prepare(s->db, "UPDATE jobs SET state = ?, record = ? WHERE id = ?", &s->update) ||
            prepare(s->db, "BEGIN IMMEDIATE", &s->begin) || prepare(s->db, "COMMIT", &s->commit) ||
            prepare(s->db, "SELECT env FROM jobs WHERE id = (SELECT COALESCE(env_of, id) FROM jobs WHERE id = ?)",
                    &s->get_env) ||
            prepare(s->db, "INSERT INTO events (seq, time_usec, job, node, what, reason) VALUES (?, ?, ?, ?, ?, ?)",
                    &s->put_event) ||
            prepare(s->db, "INSERT OR REPLACE INTO arrays (id, record) VALUES (?, ?)", &s->put_array) ||
            open_apart(s, path) != SQLITE_OK) {
                snprintf(err, errlen, "database %s: %s", path,
                         msg        ? msg
                         : s->apart ? sqlite3_errmsg(s->apart)
                                    : sqlite3_errmsg(s->db));
                sqlite3_free(msg);
                jobstore_close(s);
                return -EIO;
        }
        if ((r = read_max_job(s)) < 0) {
                snprintf(err, errlen, "database %s: %s", path, sqlite3_errmsg(s->db));
                jobstore_close(s);
                return r;
        }
        sqlite3_wal_hook(s->db, note_wal_size, s);
        /* What the last run left in the log (all of it, if it was killed) goes into the file now,
         * at start, rather than at the first tick, or never if nothing is written before the
         * next stop. */
        (void)jobstore_checkpoint(s);
        *out = s;
        return 0;
}

static char *env_text(char *const *env) {
        cJSON *arr = cJSON_CreateArray();
        char *text = NULL;
        for (size_t i = 0; arr && env && env[i]; i++)
                cJSON_AddItemToArray(arr, cJSON_CreateString(env[i]));
        if (arr)
                text = proto_print(arr);
        cJSON_Delete(arr);
        return text;
}

/* The job whose stored environment a new job may refer to instead of storing its own, or 0.
 * An array's first job stores its own, since the others refer to it and references go one
 * step only. */
static uint64_t env_owner(const jobstore *s, const job *j) {
        if (j->array_first == j->id || !s->last_env || strv_length(j->spec.env) == 0)
                return 0;
        return strv_equal(j->spec.env, s->last_env) ? s->last_env_job : 0;
}

/* Remember that job holds env itself (taking env; NULL forgets), for the next jobs to refer to. */
static void env_remember(jobstore *s, uint64_t job, char **env) {
        strv_free(s->last_env);
        s->last_env = env;
        s->last_env_job = env ? job : 0;
}

/* After a statement that returned rc: when it committed (COMMIT, or a statement outside a
 * transaction), its log goes to the kernel now, before anyone is told of it (walbuf.h).
 * Returns rc, or SQLITE_IOERR (logged) when that write failed. */
int jobstore_flush_if_committed(jobstore *s, int rc) {
        if (rc != SQLITE_DONE || !sqlite3_get_autocommit(s->db))
                return rc;
        int w = walbuf_flush(s->db);
        if (w == SQLITE_OK)
                return rc;
        log_error("writing the write-ahead log: %s", sqlite3_errstr(w));
        return SQLITE_IOERR;
}

/* Run a statement that returns no row, reset it, and jobstore_flush_if_committed. Returns an SQLite
 * result code (SQLITE_DONE on success). */
static int run(jobstore *s, sqlite3_stmt *q) {
        int rc = sqlite3_step(q);
        sqlite3_reset(q);
        sqlite3_clear_bindings(q);
        return jobstore_flush_if_committed(s, rc);
}

/* Insert a job's first row: its environment, or a reference to the row that holds the same one
 * (its array's first, or the last job stored with the same). Jobs are never deleted, so a
 * reference never dangles. Returns an SQLite result code (SQLITE_DONE on success). */
static int insert_job(jobstore *s, const job *j, const char *record) {
        uint64_t env_of = j->array_first && j->array_first != j->id ? j->array_first : env_owner(s, j);
        char *env = env_of ? NULL : env_text(j->spec.env);
        if (!env_of && !env)
                return SQLITE_NOMEM;
        sqlite3_bind_int64(s->insert, 1, (sqlite3_int64)j->id);
        sqlite3_bind_text(s->insert, 2, job_state_name(j->state), -1, SQLITE_STATIC);
        sqlite3_bind_text(s->insert, 3, record, -1, SQLITE_STATIC);
        sqlite3_bind_text(s->insert, 4, env_of ? "[]" : env, -1, SQLITE_STATIC);
        if (env_of)
                sqlite3_bind_int64(s->insert, 5, (sqlite3_int64)env_of);
        int rc = run(s, s->insert);
        if (rc == SQLITE_DONE && j->id > s->max_job)
                s->max_job = j->id;
        if (rc == SQLITE_DONE && !env_of && strv_length(j->spec.env) > 0)
                env_remember(s, j->id, strv_copy(j->spec.env)); /* NULL (no memory) only forgets */
        free(env);
        return rc;
}

/* Write the job's row: a new one, or its state and record over the stored ones (its
 * environment was written with the first). Ids only grow, so a job past every stored id is
 * new: a submission is one insert, not a missed update and an insert. Returns an SQLite
 * result code (SQLITE_DONE on success). */
static int put_job(jobstore *s, const job *j) {
        cJSON *rec = job_to_json(j);
        /* a batch script is stored once for an array, with its first job (restore_job) */
        if (rec && j->array_first && j->array_first != j->id)
                cJSON_DeleteItemFromObjectCaseSensitive(rec, "script");
        char *record = rec ? proto_print(rec) : NULL;
        int rc = SQLITE_NOMEM;
        cJSON_Delete(rec);
        if (record && j->id > s->max_job) {
                rc = insert_job(s, j, record);
        } else if (record) {
                sqlite3_bind_text(s->update, 1, job_state_name(j->state), -1, SQLITE_STATIC);
                sqlite3_bind_text(s->update, 2, record, -1, SQLITE_STATIC);
                sqlite3_bind_int64(s->update, 3, (sqlite3_int64)j->id);
                rc = run(s, s->update);
                if (rc == SQLITE_DONE && sqlite3_changes(s->db) == 0)
                        rc = insert_job(s, j, record);
        }
        free(record);
        return rc;
}

/* Write one event's row. Returns an SQLite result code (SQLITE_DONE on success). */
static int put_event(jobstore *s, const ev_record *e) {
        sqlite3_bind_int64(s->put_event, 1, (sqlite3_int64)e->seq);
        sqlite3_bind_int64(s->put_event, 2, e->time_usec);
        sqlite3_bind_int64(s->put_event, 3, (sqlite3_int64)e->job);
        sqlite3_bind_text(s->put_event, 4, e->node, -1, SQLITE_STATIC);
        sqlite3_bind_text(s->put_event, 5, e->what, -1, SQLITE_STATIC);
        sqlite3_bind_text(s->put_event, 6, e->reason, -1, SQLITE_STATIC);
        return run(s, s->put_event);
}

int jobstore_put_events(jobstore *s, const job *j, const ev_record *evs, size_t n) {
        /* A job alone is one statement, its own transaction; inside a batch everything joins it. */
        bool txn = n > 0 && sqlite3_get_autocommit(s->db);
        int rc = txn ? run(s, s->begin) : SQLITE_DONE;
        if (rc == SQLITE_DONE && j)
                rc = put_job(s, j);
        for (size_t i = 0; i < n && rc == SQLITE_DONE; i++)
                rc = put_event(s, &evs[i]);
        if (txn && rc == SQLITE_DONE)
                rc = run(s, s->commit);
        if (rc == SQLITE_DONE)
                return 0;
        log_error("job=%llu could not be stored with %zu events: %s", j ? (unsigned long long)j->id : 0ULL, n,
                  sqlite3_errmsg(s->db));
        if (txn && !sqlite3_get_autocommit(s->db))
                (void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        env_remember(s, 0, NULL); /* the row it names may be what was rolled back */
        return -EIO;
}

int jobstore_put(jobstore *s, const job *j) { return jobstore_put_events(s, j, NULL, 0); }

long jobstore_events(jobstore *s, uint64_t after_seq, uint64_t job, size_t limit, bool newest,
                     void (*fn)(void *userdata, const ev_record *e), void *userdata) {
        static const char *const sql[2] = {
                "SELECT seq, time_usec, job, node, what, reason FROM events WHERE seq > ?1 AND (?2 = 0 OR job = ?2) "
                "ORDER BY seq LIMIT ?3",
                "SELECT * FROM (SELECT seq, time_usec, job, node, what, reason FROM events WHERE seq > ?1 AND "
                "(?2 = 0 OR job = ?2) ORDER BY seq DESC LIMIT ?3) ORDER BY seq",
        };
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(s->db, sql[newest], -1, &q, NULL) != SQLITE_OK) {
                log_error("reading events: %s", sqlite3_errmsg(s->db));
                return -EIO;
        }
        sqlite3_bind_int64(q, 1, (sqlite3_int64)after_seq);
        sqlite3_bind_int64(q, 2, (sqlite3_int64)job);
        sqlite3_bind_int64(q, 3, (sqlite3_int64)limit);
        long n = 0;
        int rc;
        while ((rc = sqlite3_step(q)) == SQLITE_ROW) {
                ev_record e;
                ev_record_set(&e, sqlite3_column_int64(q, 1), (uint64_t)sqlite3_column_int64(q, 2),
                              (const char *)sqlite3_column_text(q, 3), (const char *)sqlite3_column_text(q, 4),
                              (const char *)sqlite3_column_text(q, 5));
                e.seq = (uint64_t)sqlite3_column_int64(q, 0);
                fn(userdata, &e);
                n++;
        }
        if (rc != SQLITE_DONE) {
                log_error("reading events: %s", sqlite3_errmsg(s->db));
                n = -EIO;
        }
        sqlite3_finalize(q);
        return n;
}

int jobstore_get_env(jobstore *s, uint64_t id, char ***env) {
        char err[PROTO_ERRLEN] = "not a JSON array";
        int r = -EIO, rc;
        *env = NULL;
        sqlite3_bind_int64(s->get_env, 1, (sqlite3_int64)id);
        if ((rc = sqlite3_step(s->get_env)) == SQLITE_DONE) {
                r = -ENOENT;
                snprintf(err, sizeof(err), "no such job in the store");
        } else if (rc == SQLITE_ROW) {
                cJSON *doc = cJSON_Parse((const char *)sqlite3_column_text(s->get_env, 0)),
                      *wrap = cJSON_CreateObject();
                if (doc && wrap && cJSON_AddItemToObject(wrap, "env", doc)) {
                        doc = NULL;
                        r = proto_get_strv(wrap, "env", JOB_ENV_MAX, false, env, err);
                }
                cJSON_Delete(doc);
                cJSON_Delete(wrap);
        }
        if (rc != SQLITE_DONE && rc != SQLITE_ROW)
                snprintf(err, sizeof(err), "%s", sqlite3_errmsg(s->db));
        sqlite3_reset(s->get_env);
        if (r < 0)
                log_error("job=%llu environment unreadable: %s", (unsigned long long)id, err);
        return r == -ENOENT ? r : r < 0 ? -EIO : 0;
}

/* Parse one stored row into a new job. Returns NULL (logged) when it does not parse. */
static job *parse_row(sqlite3_int64 id, const char *text) {
        cJSON *obj = cJSON_Parse(text);
        job *j = calloc(1, sizeof(*j));
        char err[PROTO_ERRLEN] = "not JSON";
        if (!obj || !j || job_from_json(obj, j, err) < 0) {
                log_error("job=%lld stored record skipped: %s", (long long)id, err);
                if (j)
                        job_free(j);
                free(j);
                j = NULL;
        }
        cJSON_Delete(obj);
        return j;
}

int jobstore_load(jobstore *s, int (*fn)(void *userdata, job *j), void *userdata) {
        sqlite3_stmt *q;
        if (sqlite3_prepare_v2(s->db, "SELECT id, record FROM jobs ORDER BY id", -1, &q, NULL) != SQLITE_OK)
                return -EIO;
        int rc = SQLITE_DONE, r = 0;
        while (r >= 0 && (rc = sqlite3_step(q)) == SQLITE_ROW) {
                job *j = parse_row(sqlite3_column_int64(q, 0), (const char *)sqlite3_column_text(q, 1));
                if (j)
                        r = fn(userdata, j);
        }
        if (r >= 0 && rc != SQLITE_DONE) {
                log_error("reading jobs: %s", sqlite3_errmsg(s->db));
                r = -EIO;
        }
        sqlite3_finalize(q);
        return r < 0 ? r : 0;
}

/* ---- arrays' records ---- */

int jobstore_put_array(jobstore *s, uint64_t id, const char *record) {
        sqlite3_bind_int64(s->put_array, 1, (sqlite3_int64)id);
        sqlite3_bind_text(s->put_array, 2, record, -1, SQLITE_STATIC);
        if (run(s, s->put_array) == SQLITE_DONE)
                return 0;
        log_error("array=%llu its record could not be stored: %s", (unsigned long long)id, sqlite3_errmsg(s->db));
        return -EIO;
}

int jobstore_load_arrays(jobstore *s, int (*fn)(void *userdata, const char *record), void *userdata) {
        sqlite3_stmt *q;
        int rc = SQLITE_DONE, r = 0;
        if (prepare(s->db, "SELECT record FROM arrays ORDER BY id", &q) != SQLITE_OK)
                return -EIO;
        while (r >= 0 && (rc = sqlite3_step(q)) == SQLITE_ROW)
                r = fn(userdata, (const char *)sqlite3_column_text(q, 0));
        sqlite3_finalize(q);
        return r < 0 ? r : rc == SQLITE_DONE ? 0 : -EIO;
}

/* ---- group commit: one transaction for many writes ---- */

int jobstore_set_sync(jobstore *s, bool sync) {
        /* WAL with NORMAL: a commit is appended to the log with write(), fsynced only at
         * checkpoints (or by the caller, deferred), so by itself it survives the process but
         * not the machine. */
        bool full = sync && !s->deferred;
        /* SQLite refuses a new safety level inside a transaction, and a reload arrives while the
         * turn's batch is open: touch the pragma only when the level really changes (never once
         * the syncs are deferred, when it stays NORMAL and s->sync only says who fsyncs). */
        if (!s->level_set || full != s->level_full) {
                const char *sql = full ? "PRAGMA synchronous=FULL;" : "PRAGMA synchronous=NORMAL;";
                if (sqlite3_exec(s->db, sql, NULL, NULL, NULL) != SQLITE_OK)
                        return -EIO;
                s->level_set = true;
                s->level_full = full;
        }
        s->sync = sync;
        return 0;
}

int jobstore_defer_syncs(jobstore *s) {
        s->deferred = true;
        return jobstore_set_sync(s, s->sync);
}

bool jobstore_sync_wanted(const jobstore *s) { return s->sync && s->deferred; }

uint64_t jobstore_commits(const jobstore *s) { return s->commits; }

int jobstore_sync_prepare(jobstore *s, int *fd) {
        int rc = walbuf_sync_prepare(s->db, fd);
        if (rc == SQLITE_OK)
                return 0;
        log_error("preparing the write-ahead log's sync: %s", sqlite3_errstr(rc));
        return -EIO;
}

int jobstore_batch_begin(jobstore *s) {
        if (run(s, s->begin) == SQLITE_DONE)
                return 0;
        log_error("cannot start a batch of writes: %s", sqlite3_errmsg(s->db));
        return -EIO;
}

int jobstore_batch_commit(jobstore *s) {
        if (run(s, s->commit) == SQLITE_DONE)
                return 0;
        log_error("a batch of writes could not be committed: %s", sqlite3_errmsg(s->db));
        if (!sqlite3_get_autocommit(s->db))
                (void)sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL);
        env_remember(s, 0, NULL);
        return -EIO;
}

size_t jobstore_wal_pages(const jobstore *s) { return s->wal_pages; }

int jobstore_checkpoint_apart(jobstore *s) {
        if (sqlite3_wal_checkpoint_v2(s->apart, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL) == SQLITE_OK)
                return 0;
        log_error("checkpoint of the write-ahead log (apart): %s", sqlite3_errmsg(s->apart));
        return -EIO;
}

int jobstore_checkpoint(jobstore *s) {
        int logged = 0, copied = 0;
        if (sqlite3_wal_checkpoint_v2(s->db, NULL, SQLITE_CHECKPOINT_PASSIVE, &logged, &copied) != SQLITE_OK) {
                log_error("checkpoint of the write-ahead log: %s", sqlite3_errmsg(s->db));
                return -EIO;
        }
        s->wal_pages = logged > copied ? (size_t)(logged - copied) : 0;
        return 0;
}

void jobstore_close(jobstore *s) {
        if (!s)
                return;
        sqlite3_finalize(s->insert);
        sqlite3_finalize(s->update);
        sqlite3_finalize(s->begin);
        sqlite3_finalize(s->commit);
        sqlite3_finalize(s->get_env);
        sqlite3_finalize(s->put_event);
        sqlite3_finalize(s->put_array);
        sqlite3_close(s->apart);
        sqlite3_close(s->db);
        if (s->lock_fd >= 0)
                close(s->lock_fd); /* after SQLite's close: the next controller finds the log checkpointed */
        strv_free(s->last_env);
        free(s);
}
