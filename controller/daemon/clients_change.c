/* clients_change.c - the CLI's requests that change jobs already submitted: cancel (one job, or
 * many through bulk.c), hold, release, update (docs/protocol.md, "Client link"). */
#include "clients.h"
#include "units.h"
#include "bulk.h"
#include "commit.h"
#include "arrays.h"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const id_only[] = { "id", NULL };

/* A bulk cancel names at most this many id ranges (a command line's worth). */
#define CANCEL_RANGES_MAX 4096

static int id_range_cmp(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/* The "ranges" of a bulk cancel, [[lo, hi], ...], sorted and merged into pairs in *out (the
 * caller frees it; NULL when absent). Returns 0 or -EINVAL/-ENOMEM with err set. */
static int parse_ranges(const cJSON *msg, uint64_t **out, size_t *n, char err[PROTO_ERRLEN]) {
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(msg, "ranges"), *item;
        *out = NULL;
        *n = 0;
        if (!arr)
                return 0;
        size_t len = cJSON_IsArray(arr) ? (size_t)cJSON_GetArraySize(arr) : 0;
        if (len == 0 || len > CANCEL_RANGES_MAX) {
                snprintf(err, PROTO_ERRLEN, "ranges: must be 1 to %d pairs [first, last] of job ids",
                         CANCEL_RANGES_MAX);
                return -EINVAL;
        }
        uint64_t *v = malloc(2 * len * sizeof(*v));
        if (!v)
                return snprintf(err, PROTO_ERRLEN, "out of memory"), -ENOMEM;
        cJSON_ArrayForEach(item, arr) {
                const cJSON *lo = cJSON_GetArrayItem(item, 0), *hi = cJSON_GetArrayItem(item, 1);
                if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2 || !cJSON_IsNumber(lo) ||
                    !cJSON_IsNumber(hi) || lo->valuedouble < 1 || hi->valuedouble < lo->valuedouble ||
                    hi->valuedouble > 9007199254740992.0) {
                        snprintf(err, PROTO_ERRLEN, "ranges: item %zu must be [first, last], 1 <= first <= last", *n);
                        free(v);
                        return -EINVAL;
                }
                v[2 * *n] = (uint64_t)lo->valuedouble;
                v[2 * *n + 1] = (uint64_t)hi->valuedouble;
                ++*n;
        }
        qsort(v, *n, 2 * sizeof(*v), id_range_cmp);
        size_t kept = 0;
        for (size_t i = 0; i < *n; i++) {
                if (kept > 0 && v[2 * i] <= v[2 * kept - 1] + 1) { /* overlaps or touches the last kept */
                        if (v[2 * i + 1] > v[2 * kept - 1])
                                v[2 * kept - 1] = v[2 * i + 1];
                        continue;
                }
                v[2 * kept] = v[2 * i];
                v[2 * kept + 1] = v[2 * i + 1];
                kept++;
        }
        *out = v;
        *n = kept;
        return 0;
}

/* A cancel by "ranges", "user", "array" and/or "state" (docs/protocol.md): queued for bulk.c,
 * which replies with the counts. */
static void handle_cancel_many(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const fields[] = { "ranges", "user", "array", "state", NULL };
        char err[PROTO_ERRLEN];
        const char *state = NULL;
        int64_t user = -1, array = 0;
        uint64_t *ranges = NULL;
        ctl_cancel_filter f = { .uid = -1, .state = -1 };
        job_state s;
        if (proto_check_fields(msg, fields, err) < 0 ||
            proto_get_int(msg, "user", 0, UINT32_MAX, &user, err) == -EINVAL ||
            proto_get_int(msg, "array", 1, INT64_MAX, &array, err) == -EINVAL ||
            proto_get_str(msg, "state", &state, err) == -EINVAL || parse_ranges(msg, &ranges, &f.nranges, err) < 0) {
                client_reply_error(c, err);
                return;
        }
        if (state && (job_state_from_name(state, &s) < 0 || (s != JOB_PENDING && s != JOB_RUNNING))) {
                free(ranges);
                client_reply_error(c, "state: must be pending or running");
                return;
        }
        f.uid = user;
        f.array = (uint64_t)array;
        f.state = state ? (int)s : -1;
        if (server_bulk_cancel(srv, c, &f, ranges) < 0)
                client_reply_error(c, "out of memory");
}

void client_cancel(ctl_server *srv, conn *c, const cJSON *msg) {
        char err[PROTO_ERRLEN];
        uint64_t id;
        static const char *const filters[] = { "ranges", "user", "array", "state" };
        for (size_t i = 0; i < sizeof(filters) / sizeof(filters[0]); i++)
                if (cJSON_GetObjectItemCaseSensitive(msg, filters[i])) { /* no filter: "id" is required */
                        handle_cancel_many(srv, c, msg);
                        return;
                }
        if (client_request_id(c, msg, id_only, &id) < 0)
                return;
        if (ctl_cancel(&srv->state, id, c->uid, server_now(), err) < 0) {
                client_reply_error(c, err);
                return;
        }
        const job *j = ctl_find_job(&srv->state, id);
        cJSON *ok = proto_new("cancelled");
        if (ok) {
                cJSON_AddNumberToObject(ok, "id", (double)id);
                cJSON_AddStringToObject(ok, "state", job_state_name(j->state));
        }
        client_reply(c, ok);
        server_schedule(srv);
}

/* hold, release: {"id": N}, answered with the job's record ("job"); with "array": true, every
 * task of array N (arrays.h, ctl_hold_array), answered {"type": "array_held", "done",
 * "unchanged", "first_refusal"}. */
static void handle_hold_or_release(ctl_server *srv, conn *c, const cJSON *msg, bool hold) {
        static const char *const fields[] = { "id", "array", NULL };
        char err[PROTO_ERRLEN];
        uint64_t id;
        bool array = false;
        size_t done, unchanged;
        if (client_request_id(c, msg, fields, &id) < 0)
                return;
        if (proto_get_bool(msg, "array", &array, err) == -EINVAL ||
            (array && ctl_hold_array(&srv->state, id, c->uid, hold, &done, &unchanged, err) < 0)) {
                client_reply_error(c, err);
                return;
        }
        cJSON *ok = array ? proto_new("array_held") : NULL;
        if (ok && (!cJSON_AddNumberToObject(ok, "done", (double)done) ||
                   !cJSON_AddNumberToObject(ok, "unchanged", (double)unchanged) ||
                   !cJSON_AddStringToObject(ok, "first_refusal", err)))
                ok = (cJSON_Delete(ok), proto_error("out of memory"));
        if (array) {
                client_reply(c, ok);
                server_schedule(srv);
                return;
        }
        if (ctl_hold(&srv->state, id, c->uid, hold, err) < 0) {
                client_reply_error(c, err);
                return;
        }
        client_reply(c, client_job_reply(&srv->state, ctl_find_job(&srv->state, id)));
        server_schedule(srv);
}

void client_hold(ctl_server *srv, conn *c, const cJSON *msg) { handle_hold_or_release(srv, c, msg, true); }

void client_release(ctl_server *srv, conn *c, const cJSON *msg) { handle_hold_or_release(srv, c, msg, false); }

/* update: {"id": N} and any of mcpu, mem, nice, time_limit_usec, gpus; answered with the job's
 * record ("job"). */
void client_update(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const fields[] = { "id", "mcpu", "mem", "nice", "time_limit_usec", "gpus", NULL };
        char err[PROTO_ERRLEN];
        ctl_update_req u = { -1, -1, INT_MIN, INT64_MIN, .gpus = -1 };
        int64_t nice = INT_MIN;
        uint64_t id;
        int r;
        if (client_request_id(c, msg, fields, &id) < 0)
                return;
        if ((r = proto_get_int(msg, "mcpu", 1, RES_MCPU_MAX, &u.mcpu, err)) == -EINVAL ||
            (r = proto_get_int(msg, "mem", 1, RES_MEM_MAX, &u.mem, err)) == -EINVAL ||
            (r = proto_get_int(msg, "nice", JOB_NICE_MIN, JOB_NICE_MAX, &nice, err)) == -EINVAL ||
            (r = proto_get_int(msg, "time_limit_usec", JOB_TIME_UNLIMITED, UNITS_TIME_MAX_USEC, &u.time_limit_usec,
                               err)) == -EINVAL ||
            (r = proto_get_int(msg, "gpus", 0, RES_GPUS_MAX, &u.gpus, err)) == -EINVAL) {
                client_reply_error(c, err);
                return;
        }
        u.nice = (int)nice;
        if (u.mcpu < 0 && u.mem < 0 && u.nice == INT_MIN && u.time_limit_usec == INT64_MIN && u.gpus < 0) {
                client_reply_error(c, "update: nothing to change (mcpu, mem, nice, time_limit_usec or gpus)");
                return;
        }
        if (ctl_update(&srv->state, id, c->uid, &u, err) < 0) {
                client_reply_error(c, err);
                return;
        }
        client_reply(c, client_job_reply(&srv->state, ctl_find_job(&srv->state, id)));
        server_schedule(srv);
}
