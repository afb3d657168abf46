/* test_jobstore.c - the durable job table on a real SQLite file: what is put survives a reopen;
 * a checkpoint through the second connection runs beside the writes. */
#include "check_main.h"
#include "jobstore.h"
#include "walbuf.h"
#include <errno.h>
#include <sqlite3.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <threads.h>
#include <unistd.h>

static char dir[64], path[96];

static void setup(void) {
        strcpy(dir, "/tmp/colony-test-store-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
        snprintf(path, sizeof(path), "%s/controller.db", dir);
}

static void teardown(void) {
        char f[128];
        const char *suffixes[] = { "", "-wal", "-shm" };
        for (size_t i = 0; i < 3; i++) {
                snprintf(f, sizeof(f), "%s%s", path, suffixes[i]);
                unlink(f);
        }
        rmdir(dir);
}

static job make_job(uint64_t id, job_state state) {
        job j = { .id = id, .uid = 1000, .gid = 1000, .user = strdup("ada"), .state = state, .submit_usec = 5 };
        j.spec.argv = calloc(3, sizeof(char *));
        j.spec.argv[0] = strdup("/bin/echo");
        j.spec.argv[1] = strdup("hello world");
        j.spec.env = calloc(2, sizeof(char *));
        j.spec.env[0] = strdup("HOME=/home/ada");
        j.spec.cwd = strdup("/home/ada");
        j.spec.name = strdup("greet");
        j.spec.req = (res_t){ .mcpu = 500, .mem = 1 << 26 };
        return j;
}

typedef struct loaded {
        job *jobs[8];
        int n;
} loaded;

static int count_jobs(void *userdata, job *j) {
        ((loaded *)userdata)->n++;
        job_free(j);
        free(j);
        return 0;
}

static int collect(void *userdata, job *j) {
        loaded *l = userdata;
        l->jobs[l->n++] = j;
        return 0;
}

START_TEST(jobs_survive_a_reopen_and_keep_their_env) {
        jobstore *s;
        char err[256];
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        job a = make_job(1, JOB_PENDING), b = make_job(2, JOB_RUNNING);
        b.node = strdup("node1");
        ck_assert_int_eq(jobstore_put(s, &a), 0);
        ck_assert_int_eq(jobstore_put(s, &b), 0);
        b.state = JOB_OOM_KILLED; /* an update replaces the record, and keeps the environment */
        strv_free(b.spec.env);
        b.spec.env = NULL;
        b.result.oom_kills = 1;
        b.result.error = strdup("killed by the OOM killer");
        ck_assert_int_eq(jobstore_put(s, &b), 0);
        jobstore_close(s);

        loaded l = { 0 };
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_load(s, collect, &l), 0);
        char **env;
        ck_assert_int_eq(jobstore_get_env(s, 2, &env), 0);
        ck_assert_str_eq(env[0], "HOME=/home/ada");
        ck_assert_ptr_null(env[1]);
        strv_free(env);
        ck_assert_int_eq(jobstore_get_env(s, 99, &env), -ENOENT);
        jobstore_close(s);
        ck_assert_int_eq(l.n, 2);
        ck_assert_uint_eq(l.jobs[0]->id, 1);
        ck_assert_str_eq(l.jobs[0]->spec.argv[1], "hello world");
        ck_assert_ptr_null(l.jobs[0]->spec.env); /* records come without it: launch fetches it */
        ck_assert_int_eq(l.jobs[1]->state, JOB_OOM_KILLED);
        ck_assert_str_eq(l.jobs[1]->node, "node1");
        ck_assert_uint_eq(l.jobs[1]->result.oom_kills, 1);
        for (int i = 0; i < l.n; i++) {
                job_free(l.jobs[i]);
                free(l.jobs[i]);
        }
        job_free(&a);
        job_free(&b);
}
END_TEST

/* The ids of the jobs stored at path (reopened), in order, into ids[*n]. */
static void load_ids(uint64_t *ids, int *n) {
        jobstore *s;
        char err[256];
        loaded l = { 0 };
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_load(s, collect, &l), 0);
        jobstore_close(s);
        for (int i = 0; i < l.n; i++) {
                ids[i] = l.jobs[i]->id;
                job_free(l.jobs[i]);
                free(l.jobs[i]);
        }
        *n = l.n;
}

START_TEST(a_committed_batch_is_stored_and_an_open_one_is_not) {
        jobstore *s;
        char err[256];
        uint64_t ids[8];
        int n;
        job a = make_job(1, JOB_PENDING), b = make_job(2, JOB_PENDING), c = make_job(3, JOB_PENDING);
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_batch_begin(s), 0);
        ck_assert_int_eq(jobstore_put(s, &a), 0);
        ck_assert_int_eq(jobstore_put(s, &b), 0);
        ck_assert_int_eq(jobstore_batch_commit(s), 0);
        ck_assert_int_eq(jobstore_batch_begin(s), 0);
        ck_assert_int_eq(jobstore_put(s, &c), 0);
        char **env; /* what the batch wrote is readable inside it */
        ck_assert_int_eq(jobstore_get_env(s, 3, &env), 0);
        strv_free(env);
        jobstore_close(s); /* never committed: job 3 must not be there */
        load_ids(ids, &n);
        ck_assert_int_eq(n, 2);
        ck_assert_uint_eq(ids[0], 1);
        ck_assert_uint_eq(ids[1], 2);
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_batch_commit(s), -EIO); /* no batch open: refused, not a silent success */
        jobstore_close(s);
        job_free(&a);
        job_free(&b);
        job_free(&c);
}
END_TEST

START_TEST(unreadable_database_is_a_clear_error) {
        jobstore *s;
        char err[256];
        ck_assert_int_lt(jobstore_open("/nonexistent/dir/controller.db", &s, err, sizeof(err)), 0);
        ck_assert_ptr_nonnull(strstr(err, "/nonexistent/dir/controller.db"));
}
END_TEST

/* The integer the query sql answers on path's database. */
static int query_int(const char *sql) {
        sqlite3 *db;
        sqlite3_stmt *q;
        ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
        ck_assert_int_eq(sqlite3_prepare_v2(db, sql, -1, &q, NULL), SQLITE_OK);
        ck_assert_int_eq(sqlite3_step(q), SQLITE_ROW);
        int n = sqlite3_column_int(q, 0);
        sqlite3_finalize(q);
        sqlite3_close(db);
        return n;
}

/* The number of rows of path's jobs table with an environment of their own. */
static int rows_with_env(void) { return query_int("SELECT COUNT(*) FROM jobs WHERE env != '[]'"); }

START_TEST(an_array_stores_its_environment_once_and_every_member_reads_it) {
        jobstore *s;
        char err[256];
        job first = make_job(10, JOB_PENDING), others[3];
        first.array_first = 10;
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_batch_begin(s), 0);
        ck_assert_int_eq(jobstore_put(s, &first), 0);
        for (int i = 0; i < 3; i++) { /* as the controller makes them: no environment of their own */
                others[i] = (job){
                        .id = 11 + (uint64_t)i, .state = JOB_PENDING, .array_first = 10, .array_index = (uint32_t)i + 1
                };
                job_borrow_spec(&others[i], &first, false);
                ck_assert_int_eq(jobstore_put(s, &others[i]), 0);
        }
        ck_assert_int_eq(jobstore_batch_commit(s), 0);
        job plain = make_job(20, JOB_PENDING); /* not an array's: keeps its own */
        strv_free(plain.spec.env);
        plain.spec.env = calloc(2, sizeof(char *));
        plain.spec.env[0] = strdup("PLAIN=1");
        ck_assert_int_eq(jobstore_put(s, &plain), 0);
        jobstore_close(s);
        ck_assert_int_eq(rows_with_env(), 2);

        loaded l = { 0 };
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_load(s, collect, &l), 0);
        for (uint64_t id = 10; id <= 13; id++) {
                char **env;
                ck_assert_int_eq(jobstore_get_env(s, id, &env), 0);
                ck_assert_str_eq(env[0], "HOME=/home/ada");
                ck_assert_ptr_null(env[1]);
                strv_free(env);
        }
        char **env;
        ck_assert_int_eq(jobstore_get_env(s, 20, &env), 0);
        ck_assert_str_eq(env[0], "PLAIN=1");
        strv_free(env);
        ck_assert_int_eq(jobstore_get_env(s, 14, &env), -ENOENT);
        jobstore_close(s);
        ck_assert_int_eq(l.n, 5);
        for (int i = 0; i < 4; i++) {
                ck_assert_uint_eq(l.jobs[i]->array_first, 10);
                ck_assert_uint_eq(l.jobs[i]->array_index, (uint32_t)i);
                ck_assert_str_eq(l.jobs[i]->spec.argv[1], "hello world");
        }
        ck_assert_uint_eq(l.jobs[4]->array_first, 0);
        for (int i = 0; i < l.n; i++) {
                job_free(l.jobs[i]);
                free(l.jobs[i]);
        }
        for (int i = 0; i < 3; i++)
                job_free(&others[i]);
        job_free(&first);
        job_free(&plain);
}
END_TEST

/* Jobs put one after another with the same environment store it once: each later one refers to
 * the last job that holds it, never to a job that itself refers (an update of one does not make
 * it a holder), and a different environment starts over. */
START_TEST(consecutive_jobs_with_one_environment_store_it_once) {
        jobstore *s;
        char err[256];
        job jobs[6];
        for (int i = 0; i < 6; i++)
                jobs[i] = make_job(1 + (uint64_t)i, JOB_PENDING);
        strv_free(jobs[2].spec.env); /* job 3 has another environment */
        jobs[2].spec.env = calloc(2, sizeof(char *));
        jobs[2].spec.env[0] = strdup("PLAIN=1");
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        for (int i = 0; i < 3; i++) /* 1 holds HOME, 2 refers to 1, 3 holds PLAIN */
                ck_assert_int_eq(jobstore_put(s, &jobs[i]), 0);
        jobs[1].state = JOB_RUNNING;
        ck_assert_int_eq(jobstore_put(s, &jobs[1]), 0); /* an update of a referrer, HOME in hand */
        ck_assert_int_eq(jobstore_batch_begin(s), 0);
        for (int i = 3; i < 6; i++) /* 4 holds HOME again (not through 2); 5 and 6 refer to 4 */
                ck_assert_int_eq(jobstore_put(s, &jobs[i]), 0);
        ck_assert_int_eq(jobstore_batch_commit(s), 0);
        jobstore_close(s);
        ck_assert_int_eq(rows_with_env(), 3);
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        for (uint64_t id = 1; id <= 6; id++) {
                char **env;
                ck_assert_int_eq(jobstore_get_env(s, id, &env), 0);
                ck_assert_str_eq(env[0], id == 3 ? "PLAIN=1" : "HOME=/home/ada");
                ck_assert_ptr_null(env[1]);
                strv_free(env);
        }
        jobstore_close(s);
        for (int i = 0; i < 6; i++)
                job_free(&jobs[i]);
}
END_TEST

START_TEST(jobs_below_the_largest_id_and_updates_after_a_reopen_find_their_rows) {
        jobstore *s;
        char err[256];
        job five = make_job(5, JOB_PENDING), three = make_job(3, JOB_PENDING), seven = make_job(7, JOB_PENDING);
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_put(s, &five), 0);
        ck_assert_int_eq(jobstore_put(s, &three), 0); /* new, below the largest id */
        jobstore_close(s);
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        five.state = JOB_RUNNING; /* an update of a row stored by the last run */
        ck_assert_int_eq(jobstore_put(s, &five), 0);
        ck_assert_int_eq(jobstore_put(s, &seven), 0);
        loaded l = { 0 };
        ck_assert_int_eq(jobstore_load(s, collect, &l), 0);
        jobstore_close(s);
        ck_assert_int_eq(l.n, 3);
        const uint64_t ids[] = { 3, 5, 7 };
        const job_state states[] = { JOB_PENDING, JOB_RUNNING, JOB_PENDING };
        for (int i = 0; i < l.n; i++) {
                ck_assert_uint_eq(l.jobs[i]->id, ids[i]);
                ck_assert_int_eq(l.jobs[i]->state, states[i]);
                job_free(l.jobs[i]);
                free(l.jobs[i]);
        }
        job_free(&five);
        job_free(&three);
        job_free(&seven);
}
END_TEST

/* Copy file from to to, as bytes: what the kernel has of it now. */
static void copy_file(const char *from, const char *to) {
        FILE *in = fopen(from, "rb"), *out = fopen(to, "wb");
        char buf[65536];
        size_t n;
        ck_assert_ptr_nonnull(in);
        ck_assert_ptr_nonnull(out);
        while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
                ck_assert_uint_eq(fwrite(buf, 1, n, out), n);
        fclose(in);
        ck_assert_int_eq(fclose(out), 0);
}

START_TEST(a_commit_is_in_the_files_when_it_returns) {
        enum { BATCH = 3000 }; /* a log of megabytes: many pieces of the held writes */
        jobstore *s;
        char err[256], copy[96], from[128], to[128];
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_set_sync(s, false), 0); /* no sync to flush the log on the way */
        ck_assert_int_eq(jobstore_batch_begin(s), 0);
        for (uint64_t id = 1; id <= BATCH; id++) {
                job j = make_job(id, JOB_PENDING);
                ck_assert_int_eq(jobstore_put(s, &j), 0);
                job_free(&j);
        }
        ck_assert_int_eq(jobstore_batch_commit(s), 0);
        job last = make_job(BATCH + 1, JOB_PENDING); /* a statement that commits alone */
        ck_assert_int_eq(jobstore_put(s, &last), 0);
        job_free(&last);
        /* The files as the kernel has them now, as a controller killed at this point leaves them. */
        snprintf(copy, sizeof(copy), "%s/copy.db", dir);
        copy_file(path, copy);
        snprintf(from, sizeof(from), "%s-wal", path);
        snprintf(to, sizeof(to), "%s-wal", copy);
        copy_file(from, to);
        jobstore *c;
        loaded l = { 0 };
        ck_assert_int_eq(jobstore_open(copy, &c, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_load(c, count_jobs, &l), 0);
        jobstore_close(c);
        jobstore_close(s);
        unlink(copy);
        unlink(to);
        ck_assert_int_eq(l.n, BATCH + 1);
}
END_TEST

START_TEST(the_log_is_checkpointed_when_asked_and_not_inside_commits) {
        enum { N = 1100 }; /* single commits of a page or more: past SQLite's own 1000-page threshold */
        jobstore *s;
        char err[256];
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_set_sync(s, false), 0);
        for (uint64_t id = 1; id <= N; id++) {
                job j = make_job(id, JOB_PENDING);
                ck_assert_int_eq(jobstore_put(s, &j), 0);
                job_free(&j);
        }
        ck_assert_uint_ge(jobstore_wal_pages(s), N);
        char wal[128];
        struct stat st;
        snprintf(wal, sizeof(wal), "%s-wal", path);
        ck_assert_int_eq(stat(wal, &st), 0);
        ck_assert_int_ge(st.st_size, (off_t)N * 4096);
        ck_assert_int_eq(jobstore_checkpoint(s), 0);
        ck_assert_uint_eq(jobstore_wal_pages(s), 0);
        job last = make_job(N + 1, JOB_PENDING); /* the log starts again from its beginning */
        ck_assert_int_eq(jobstore_put(s, &last), 0);
        job_free(&last);
        ck_assert_uint_lt(jobstore_wal_pages(s), 16);
        jobstore_close(s);
        loaded l = { 0 };
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_load(s, count_jobs, &l), 0);
        jobstore_close(s);
        ck_assert_int_eq(l.n, N + 1);
}
END_TEST

/* The schema of the jobs table before arrays (colony up to commit 8db8ca8), verbatim. */
static const char old_schema[] = "PRAGMA journal_mode=WAL;"
                                 "CREATE TABLE jobs ("
                                 "  id INTEGER PRIMARY KEY,"
                                 "  state TEXT NOT NULL,"
                                 "  record TEXT NOT NULL,"
                                 "  env TEXT NOT NULL DEFAULT '[]');";

START_TEST(a_database_from_before_arrays_opens_and_its_jobs_keep_their_env) {
        sqlite3 *db;
        sqlite3_stmt *q;
        job old = make_job(3, JOB_PENDING);
        cJSON *rec = job_to_json(&old);
        char *text = cJSON_PrintUnformatted(rec);
        ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
        ck_assert_int_eq(sqlite3_exec(db, old_schema, NULL, NULL, NULL), SQLITE_OK);
        ck_assert_int_eq(
                sqlite3_prepare_v2(db, "INSERT INTO jobs VALUES (3, 'pending', ?, '[\"OLD=yes\"]')", -1, &q, NULL),
                SQLITE_OK);
        sqlite3_bind_text(q, 1, text, -1, SQLITE_STATIC);
        ck_assert_int_eq(sqlite3_step(q), SQLITE_DONE);
        sqlite3_finalize(q);
        sqlite3_close(db);

        jobstore *s;
        char err[256], **env;
        loaded l = { 0 };
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_load(s, collect, &l), 0);
        ck_assert_int_eq(l.n, 1);
        ck_assert_uint_eq(l.jobs[0]->id, 3);
        ck_assert_str_eq(l.jobs[0]->spec.name, "greet");
        ck_assert_uint_eq(l.jobs[0]->array_first, 0);
        ck_assert_int_eq(jobstore_get_env(s, 3, &env), 0);
        ck_assert_str_eq(env[0], "OLD=yes");
        strv_free(env);
        job next = make_job(4, JOB_PENDING),
            member = { .id = 5, .state = JOB_PENDING, .array_first = 4, .array_index = 1 };
        next.array_first = 4; /* an array stored after the upgrade */
        job_borrow_spec(&member, &next, false);
        l.jobs[0]->state = JOB_RUNNING; /* and the old job's update keeps its environment */
        ck_assert_int_eq(jobstore_put(s, l.jobs[0]), 0);
        ck_assert_int_eq(jobstore_put(s, &next), 0);
        ck_assert_int_eq(jobstore_put(s, &member), 0);
        jobstore_close(s);
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0); /* the column is added once */
        ck_assert_int_eq(jobstore_get_env(s, 3, &env), 0);
        ck_assert_str_eq(env[0], "OLD=yes");
        strv_free(env);
        ck_assert_int_eq(jobstore_get_env(s, 5, &env), 0);
        ck_assert_str_eq(env[0], "HOME=/home/ada");
        strv_free(env);
        jobstore_close(s);
        job_free(l.jobs[0]);
        free(l.jobs[0]);
        job_free(&member);
        job_free(&next);
        job_free(&old);
        cJSON_Delete(rec);
        free(text);
}
END_TEST

static int note_array(void *userdata, const char *record) {
        ck_assert_str_eq(record, "{\"id\":7,\"left\":\"3-999999\"}");
        ++*(int *)userdata;
        return 0;
}

/* A database written before arrays' records (schema version 0: an array's tasks each a row)
 * opens as version 2, its pending tasks all loaded; a record stored then is read back once. */
START_TEST(a_database_from_before_records_keeps_its_pending_tasks) {
        sqlite3 *db;
        ck_assert_int_eq(sqlite3_open(path, &db), SQLITE_OK);
        ck_assert_int_eq(sqlite3_exec(db,
                                      "CREATE TABLE jobs (id INTEGER PRIMARY KEY, state TEXT NOT NULL, record TEXT NOT "
                                      "NULL, env TEXT NOT NULL DEFAULT '[]', env_of INTEGER);",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
        for (uint32_t i = 0; i < 3; i++) {
                job t = make_job(7 + i, JOB_PENDING);
                t.array_first = 7;
                t.array_index = i;
                cJSON *rec = job_to_json(&t);
                char *text = cJSON_PrintUnformatted(rec),
                     *sql = sqlite3_mprintf("INSERT INTO jobs VALUES (%u, 'pending', %Q, "
                                            "'[]', 7)",
                                            7 + i, text);
                ck_assert_int_eq(sqlite3_exec(db, sql, NULL, NULL, NULL), SQLITE_OK);
                sqlite3_free(sql);
                free(text);
                cJSON_Delete(rec);
                job_free(&t);
        }
        sqlite3_close(db);
        ck_assert_int_eq(query_int("PRAGMA user_version"), 0);

        jobstore *s;
        char err[256];
        loaded l = { 0 };
        int arrays = 0;
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_load(s, count_jobs, &l), 0);
        ck_assert_int_eq(l.n, 3);
        ck_assert_int_eq(jobstore_load_arrays(s, note_array, &arrays), 0);
        ck_assert_int_eq(arrays, 0);
        ck_assert_int_eq(jobstore_put_array(s, 7, "{\"id\":7,\"left\":\"4-999999\"}"), 0);
        ck_assert_int_eq(jobstore_put_array(s, 7, "{\"id\":7,\"left\":\"3-999999\"}"), 0); /* over the first */
        jobstore_close(s);
        ck_assert_int_eq(query_int("PRAGMA user_version"), 2);
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_load_arrays(s, note_array, &arrays), 0);
        ck_assert_int_eq(arrays, 1);
        jobstore_close(s);
}
END_TEST

/* The controller holds its database alone: a second one on the same file is refused (its
 * flock, after a wait of 5 s) instead of writing beside it; closing the first lets it in. */
START_TEST(a_second_opener_is_refused_while_the_first_holds_it) {
        jobstore *s, *other;
        char err[256];
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_set_sync(s, false), 0);
        job a = make_job(1, JOB_PENDING);
        ck_assert_int_eq(jobstore_put(s, &a), 0);
        ck_assert_int_eq(jobstore_open(path, &other, err, sizeof(err)), -EBUSY);
        ck_assert_ptr_nonnull(strstr(err, "locked"));
        jobstore_close(s);
        loaded l = { 0 };
        ck_assert_int_eq(jobstore_open(path, &other, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_load(other, collect, &l), 0);
        ck_assert_int_eq(l.n, 1);
        job_free(l.jobs[0]);
        free(l.jobs[0]);
        jobstore_close(other);
        job_free(&a);
}
END_TEST

/* The count of rows in t, through db; -1 when the query fails. */
static int count_rows(sqlite3 *db) {
        sqlite3_stmt *q;
        int n = -1;
        if (sqlite3_prepare_v2(db, "SELECT count(*) FROM t", -1, &q, NULL) == SQLITE_OK &&
            sqlite3_step(q) == SQLITE_ROW)
                n = sqlite3_column_int(q, 0);
        sqlite3_finalize(q);
        return n;
}

/* walbuf writes a commit's frames to the log file before SQLite publishes the commit in the
 * shared index, with no walbuf_flush after it: a second connection (the default VFS, its own
 * descriptor, as the checkpointer's) reads every row at once. */
START_TEST(a_commit_is_in_the_log_file_before_another_connection_sees_it) {
        sqlite3 *w, *r;
        ck_assert_int_eq(walbuf_register(), SQLITE_OK);
        ck_assert_int_eq(sqlite3_open_v2(path, &w, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, WALBUF_VFS), SQLITE_OK);
        ck_assert_int_eq(sqlite3_exec(w,
                                      "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL; CREATE TABLE t (x);"
                                      "INSERT INTO t VALUES (1), (2), (3);",
                                      NULL, NULL, NULL),
                         SQLITE_OK);
        ck_assert_int_eq(sqlite3_open_v2(path, &r, SQLITE_OPEN_READWRITE, NULL), SQLITE_OK);
        ck_assert_int_eq(count_rows(r), 3);
        ck_assert_int_eq(sqlite3_exec(w, "INSERT INTO t VALUES (4);", NULL, NULL, NULL), SQLITE_OK);
        ck_assert_int_eq(count_rows(r), 4);
        sqlite3_close(r);
        sqlite3_close(w);
}
END_TEST

/* jobstore_checkpoint_apart on a thread of its own. */
static int checkpoint_thread(void *s) { return jobstore_checkpoint_apart(s); }

/* A reload sets sync_commits again while the loop's batch is open (SQLite refuses a new
 * safety level inside a transaction): with syncs deferred the level does not change, so both
 * answers are taken, the batch commits, and jobstore_sync_wanted follows the last one. */
START_TEST(sync_commits_can_be_set_again_while_a_batch_is_open) {
        jobstore *s;
        char err[256];
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_set_sync(s, true), 0);
        ck_assert_int_eq(jobstore_defer_syncs(s), 0);
        ck_assert_int_eq(jobstore_batch_begin(s), 0);
        job j = make_job(1, JOB_PENDING);
        ck_assert_int_eq(jobstore_put(s, &j), 0);
        job_free(&j);
        ck_assert_int_eq(jobstore_set_sync(s, false), 0);
        ck_assert(!jobstore_sync_wanted(s));
        ck_assert_int_eq(jobstore_set_sync(s, true), 0);
        ck_assert(jobstore_sync_wanted(s));
        ck_assert_int_eq(jobstore_batch_commit(s), 0);
        jobstore_close(s);
        loaded l = { 0 };
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_load(s, count_jobs, &l), 0);
        jobstore_close(s);
        ck_assert_int_eq(l.n, 1);
}
END_TEST

/* With syncs deferred, each commit is counted and jobstore_sync_prepare gives the log's
 * descriptor to fdatasync; a checkpoint through the second connection, on another thread,
 * copies the log into the database file while the first connection goes on writing, and
 * every job is there after a reopen. */
START_TEST(a_checkpoint_apart_copies_the_log_while_the_store_writes) {
        enum { N = 400 };
        jobstore *s;
        char err[256], wal[128];
        struct stat log, db_before, db_after;
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_defer_syncs(s), 0);
        ck_assert(jobstore_sync_wanted(s));
        uint64_t commits = jobstore_commits(s);
        for (uint64_t id = 1; id <= N; id++) {
                job j = make_job(id, JOB_PENDING);
                ck_assert_int_eq(jobstore_put(s, &j), 0);
                job_free(&j);
        }
        ck_assert_uint_eq(jobstore_commits(s), commits + N);
        int fd = -1;
        ck_assert_int_eq(jobstore_sync_prepare(s, &fd), 0);
        ck_assert_int_eq(fdatasync(fd), 0);
        snprintf(wal, sizeof(wal), "%s-wal", path);
        ck_assert_int_eq(stat(wal, &log), 0);
        struct stat of_fd;
        ck_assert_int_eq(fstat(fd, &of_fd), 0);
        ck_assert_uint_eq(of_fd.st_ino, log.st_ino);
        ck_assert_int_eq(stat(path, &db_before), 0);
        thrd_t t;
        ck_assert_int_eq(thrd_create(&t, checkpoint_thread, s), thrd_success);
        ck_assert_int_eq(jobstore_batch_begin(s), 0);
        for (uint64_t id = N + 1; id <= 2 * N; id++) {
                job j = make_job(id, JOB_PENDING);
                ck_assert_int_eq(jobstore_put(s, &j), 0);
                job_free(&j);
        }
        ck_assert_int_eq(jobstore_batch_commit(s), 0);
        ck_assert_uint_eq(jobstore_commits(s), commits + N + 1);
        int r;
        ck_assert_int_eq(thrd_join(t, &r), thrd_success);
        ck_assert_int_eq(r, 0);
        ck_assert_int_eq(stat(path, &db_after), 0);
        ck_assert_int_gt(db_after.st_size, db_before.st_size); /* the first N jobs' pages, at least */
        ck_assert_int_eq(jobstore_set_sync(s, false), 0);
        ck_assert(!jobstore_sync_wanted(s));
        jobstore_close(s);
        loaded l = { 0 };
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(jobstore_load(s, count_jobs, &l), 0);
        jobstore_close(s);
        ck_assert_int_eq(l.n, 2 * N);
}
END_TEST

static int close_later(void *s) {
        usleep(300000);
        jobstore_close(s);
        return 0;
}

/* A controller just killed holds the lock until its last thread ends (an fsync in progress):
 * the next one, started at once, waits for it instead of being refused. */
START_TEST(a_second_opener_waits_for_the_first_to_end) {
        jobstore *s, *next;
        char err[256];
        thrd_t t;
        ck_assert_int_eq(jobstore_open(path, &s, err, sizeof(err)), 0);
        ck_assert_int_eq(thrd_create(&t, close_later, s), thrd_success);
        ck_assert_int_eq(jobstore_open(path, &next, err, sizeof(err)), 0);
        ck_assert_int_eq(thrd_join(t, NULL), thrd_success);
        jobstore_close(next);
}
END_TEST

static Suite *jobstore_suite(void) {
        Suite *s = suite_create("jobstore");
        TCase *tc = tcase_create("jobstore");
        tcase_set_timeout(tc, 60); /* a second opener waits 5 s for the lock */
        tcase_add_checked_fixture(tc, setup, teardown);
        tcase_add_test(tc, jobs_survive_a_reopen_and_keep_their_env);
        tcase_add_test(tc, unreadable_database_is_a_clear_error);
        tcase_add_test(tc, a_committed_batch_is_stored_and_an_open_one_is_not);
        tcase_add_test(tc, an_array_stores_its_environment_once_and_every_member_reads_it);
        tcase_add_test(tc, a_database_from_before_arrays_opens_and_its_jobs_keep_their_env);
        tcase_add_test(tc, a_second_opener_is_refused_while_the_first_holds_it);
        tcase_add_test(tc, a_database_from_before_records_keeps_its_pending_tasks);
        tcase_add_test(tc, consecutive_jobs_with_one_environment_store_it_once);
        tcase_add_test(tc, the_log_is_checkpointed_when_asked_and_not_inside_commits);
        tcase_add_test(tc, jobs_below_the_largest_id_and_updates_after_a_reopen_find_their_rows);
        tcase_add_test(tc, a_commit_is_in_the_files_when_it_returns);
        tcase_add_test(tc, a_checkpoint_apart_copies_the_log_while_the_store_writes);
        tcase_add_test(tc, sync_commits_can_be_set_again_while_a_batch_is_open);
        tcase_add_test(tc, a_commit_is_in_the_log_file_before_another_connection_sees_it);
        tcase_add_test(tc, a_second_opener_waits_for_the_first_to_end);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(jobstore_suite)
