/* jobstore_tables.c - the store's side tables (jobstore.h): the interference matrix's versions
 * and the nodes' drains, beside the jobs' table in the same database and batches. */
#include "jobstore.h"
#include "jobstore_int.h"
#include "log.h"
#include <errno.h>
#include <stdlib.h>

int jobstore_put_alpha(jobstore *s, alpha_matrix *m, int64_t time_usec) {
        alpha_matrix plain = *m;
        plain.version = 0; /* the row's own columns hold these */
        cJSON *rec = cJSON_CreateObject(), *types = cJSON_CreateStringArray((const char *const *)m->types, (int)m->n);
        char *text = rec && alpha_to_json(&plain, rec) == 0 ? proto_print(rec) : NULL;
        char *names = types ? proto_print(types) : NULL;
        sqlite3_stmt *q = NULL;
        int rc = SQLITE_NOMEM;
        if (text && names &&
            (rc = sqlite3_prepare_v2(jobstore_db(s), "INSERT INTO alpha (time_usec, types, record) VALUES (?, ?, ?)",
                                     -1, &q, NULL)) == SQLITE_OK) {
                sqlite3_bind_int64(q, 1, time_usec);
                sqlite3_bind_text(q, 2, names, -1, SQLITE_STATIC);
                sqlite3_bind_text(q, 3, text, -1, SQLITE_STATIC);
                rc = sqlite3_step(q);
        }
        sqlite3_finalize(q);
        rc = jobstore_flush_if_committed(s, rc);
        cJSON_Delete(rec);
        cJSON_Delete(types);
        free(text);
        free(names);
        if (rc != SQLITE_DONE) {
                log_error("interference matrix could not be stored: %s", sqlite3_errmsg(jobstore_db(s)));
                return -EIO;
        }
        m->version = (uint64_t)sqlite3_last_insert_rowid(jobstore_db(s));
        m->time_usec = time_usec;
        return 0;
}

int jobstore_get_alpha(jobstore *s, uint64_t version, alpha_matrix *out) {
        sqlite3_stmt *q;
        const char *sql = version ? "SELECT version, time_usec, record FROM alpha WHERE version = ?"
                                  : "SELECT version, time_usec, record FROM alpha ORDER BY version DESC LIMIT 1";
        if (sqlite3_prepare_v2(jobstore_db(s), sql, -1, &q, NULL) != SQLITE_OK)
                return -EIO;
        if (version)
                sqlite3_bind_int64(q, 1, (sqlite3_int64)version);
        int rc = sqlite3_step(q), r = rc == SQLITE_DONE ? -ENOENT : -EIO;
        if (rc == SQLITE_ROW) {
                char err[PROTO_ERRLEN] = "not JSON";
                cJSON *rec = cJSON_Parse((const char *)sqlite3_column_text(q, 2));
                if (rec && (r = alpha_from_json(rec, out, err)) == 0) {
                        out->version = (uint64_t)sqlite3_column_int64(q, 0);
                        out->time_usec = sqlite3_column_int64(q, 1);
                } else {
                        log_error("interference matrix version %lld unreadable: %s",
                                  (long long)sqlite3_column_int64(q, 0), err);
                        r = -EIO;
                }
                cJSON_Delete(rec);
        }
        sqlite3_finalize(q);
        return r;
}

int jobstore_put_drain(jobstore *s, const char *node, const char *reason) {
        sqlite3_stmt *q = NULL;
        int rc = sqlite3_prepare_v2(jobstore_db(s),
                                    reason ? "INSERT OR REPLACE INTO drains (node, reason) VALUES (?, ?)"
                                           : "DELETE FROM drains WHERE node = ?",
                                    -1, &q, NULL);
        if (rc == SQLITE_OK) {
                sqlite3_bind_text(q, 1, node, -1, SQLITE_STATIC);
                if (reason)
                        sqlite3_bind_text(q, 2, reason, -1, SQLITE_STATIC);
                rc = sqlite3_step(q);
        }
        sqlite3_finalize(q);
        if ((rc = jobstore_flush_if_committed(s, rc)) != SQLITE_DONE) {
                log_error("node=%s: its drain could not be stored: %s", node, sqlite3_errmsg(jobstore_db(s)));
                return -EIO;
        }
        return 0;
}

int jobstore_load_drains(jobstore *s, int (*fn)(void *userdata, const char *node, const char *reason), void *userdata) {
        sqlite3_stmt *q;
        int rc, r = 0;
        if (sqlite3_prepare_v2(jobstore_db(s), "SELECT node, reason FROM drains ORDER BY node", -1, &q, NULL) !=
            SQLITE_OK)
                return -EIO;
        while (r == 0 && (rc = sqlite3_step(q)) == SQLITE_ROW)
                r = fn(userdata, (const char *)sqlite3_column_text(q, 0), (const char *)sqlite3_column_text(q, 1));
        sqlite3_finalize(q);
        return r < 0 ? r : rc == SQLITE_DONE ? 0 : -EIO;
}
