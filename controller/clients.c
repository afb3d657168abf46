/* clients.c - requests from the colony CLI on the Unix socket (docs/protocol.md, "Client link").
 * The caller is who SO_PEERCRED says, never what the message says. */
#include "server.h"
#include "status.h"
#include "arrays.h"
#include "log.h"
#include "units.h"
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void server_reply(conn *c, cJSON *msg) {
        if (msg && conn_send(c, msg) == -EMSGSIZE) {
                cJSON *err = proto_error("the reply would exceed the %d-byte message limit", PROTO_MAX_MSG);
                (void)conn_send(c, err);
                cJSON_Delete(err);
        }
        cJSON_Delete(msg);
}

/* Answer c now, or after the work it queued in bulk before this request. */
static void reply(conn *c, cJSON *msg) {
        if (msg && server_bulk_has(c->owner, c)) {
                (void)server_bulk_reply(c->owner, c, msg);
                return;
        }
        server_reply(c, msg);
}

static void reply_error(conn *c, const char *text) {
        reply(c, proto_error("%s", text));
}

/* Check the request's fields and read its "id". Returns 0 or -EINVAL (error already sent). */
static int request_id(conn *c, const cJSON *msg, const char *const *fields, uint64_t *id) {
        char err[PROTO_ERRLEN];
        int64_t v;
        int r = proto_check_fields(msg, fields, err);
        if (r == 0 && (r = proto_get_int(msg, "id", 1, INT64_MAX, &v, err)) == -ENOENT)
                snprintf(err, sizeof(err), "id: required");
        if (r < 0) {
                reply_error(c, err);
                return -EINVAL;
        }
        *id = (uint64_t)v;
        return 0;
}

static cJSON *job_reply(const job *j) {
        cJSON *msg = proto_new("job"), *rec = job_to_json(j);
        if (!msg || !rec || !cJSON_AddItemToObject(msg, "job", rec)) {
                cJSON_Delete(msg);
                cJSON_Delete(rec);
                return NULL;
        }
        return msg;
}

static void user_name(uid_t uid, char *buf, size_t len) {
        struct passwd pw, *res = NULL;
        char tmp[1024];
        if (getpwuid_r(uid, &pw, tmp, sizeof(tmp), &res) == 0 && res)
                snprintf(buf, len, "%s", pw.pw_name);
        else
                snprintf(buf, len, "%u", (unsigned)uid);
}

/* The caller's user name, looked up once per connection and kept as its data: a batch of
 * submissions would otherwise read the password database for each. buf is the fallback when
 * it cannot be kept. */
static const char *conn_user(conn *c, char *buf, size_t len) {
        if (c->data)
                return c->data;
        user_name(c->uid, buf, len);
        c->data = strdup(buf);
        return buf;
}

/* The job's launch message (its spec, plus a few fields) must fit in one frame to the agent;
 * refuse at submit what could never be launched. Returns 0 or -E2BIG with err set. */
static int spec_too_large(const job_spec *spec, char err[PROTO_ERRLEN]) {
        enum { LAUNCH_HEADROOM = 4096 };
        if (job_spec_json_bound(spec) + LAUNCH_HEADROOM <= PROTO_MAX_MSG)
                return 0; /* the common case, known without printing the spec */
        cJSON *obj = cJSON_CreateObject();
        char *text = obj && job_spec_to_json(spec, obj) == 0 ? proto_print(obj) : NULL;
        size_t len = text ? strlen(text) : 0;
        cJSON_Delete(obj);
        free(text);
        if (len + LAUNCH_HEADROOM <= PROTO_MAX_MSG)
                return 0;
        snprintf(err, PROTO_ERRLEN, "the job's command line and environment take %zu bytes, more than the %d a "
                 "launch may carry", len, PROTO_MAX_MSG - LAUNCH_HEADROOM);
        return -E2BIG;
}

/* A submit's "array": Slurm's text ("1,3,5-7%2", shared/arrayspec.h) into *indexes and the spec's
 * throttle, or a number N (clients from before the text) for the indexes 0 to N - 1. *count is
 * the tasks (0: no array). Returns 0 or -EINVAL/-ENOMEM with err set. */
static int submit_array(const cJSON *msg, job_spec *spec, array_set *indexes, int64_t *count, char err[PROTO_ERRLEN]) {
        const cJSON *a = cJSON_GetObjectItemCaseSensitive(msg, "array");
        uint32_t throttle;
        int r;
        *count = 0;
        if (!cJSON_IsString(a))
                return proto_get_int(msg, "array", 1, JOB_ARRAY_MAX, count, err) == -EINVAL ? -EINVAL : 0;
        if ((r = array_spec_parse(a->valuestring, JOB_ARRAY_MAX, indexes, &throttle, err, PROTO_ERRLEN)) < 0)
                return r;
        *count = (int64_t)array_set_count(indexes);
        if (throttle)
                spec->array_throttle = throttle;
        return 0;
}

/* submit: one job, or with "array", a job per index of the same spec with consecutive ids,
 * answered once all are stored ({"id": the first, "count": N}). */
static void handle_submit(ctl_server *srv, conn *c, const cJSON *msg) {
        char err[PROTO_ERRLEN], name[64];
        job_spec spec = { 0 };
        array_set indexes = { 0 };
        int64_t count = 0;
        uint64_t id;
        if (proto_check_fields(msg, job_submit_fields, err) < 0 || job_spec_from_json(msg, &spec, err) < 0 ||
            submit_array(msg, &spec, &indexes, &count, err) < 0) {
                job_spec_free(&spec);
                reply_error(c, err);
                return;
        }
        if (spec_too_large(&spec, err) < 0) {
                job_spec_free(&spec);
                array_set_free(&indexes);
                reply_error(c, err);
                return;
        }
        const char *user = conn_user(c, name, sizeof(name));
        if (count > BULK_CHUNK || server_bulk_has(srv, c)) { /* a slice per turn, in c's order: bulk.c */
                if (server_bulk_submit(srv, c, user, &spec, (size_t)count, &indexes) < 0) {
                        job_spec_free(&spec);
                        reply_error(c, "out of memory");
                }
                return;
        }
        if (ctl_submit_array(&srv->state, c->uid, c->gid, user, &spec, (size_t)count, &indexes, server_now(), &id,
                             err) < 0) {
                job_spec_free(&spec);
                array_set_free(&indexes);
                reply_error(c, err);
                return;
        }
        cJSON *ok = proto_new("submitted");
        if (ok && (!cJSON_AddNumberToObject(ok, "id", (double)id) ||
                   (count && !cJSON_AddNumberToObject(ok, "count", (double)count)))) {
                cJSON_Delete(ok);
                ok = proto_error("out of memory");
        }
        reply(c, ok);
        server_schedule(srv);
}

/* A queue page is cut at this many bytes of job records, well below PROTO_MAX_MSG. */
#define QUEUE_PAGE_BYTES (PROTO_MAX_MSG / 2)

/* A reply of job records being filled: at most limit of them and about QUEUE_PAGE_BYTES. */
typedef struct page {
        cJSON *out, *jobs;
        int64_t n, limit;
        size_t bytes;
        bool more; /* a record did not fit: the listing goes on */
} page;

static void page_open(page *p, int64_t limit) {
        *p = (page){ .out = proto_new("jobs"), .limit = limit };
        p->jobs = cJSON_AddArrayToObject(p->out, "jobs");
}

/* Add j's record unless the page is full (then more is set). Returns 1 when added, 0 when
 * full, -ENOMEM. */
static int page_add(page *p, const job *j) {
        if (!p->jobs)
                return -ENOMEM;
        cJSON *o = p->n < p->limit ? job_to_json(j) : NULL;
        char *text = o ? proto_print(o) : NULL;
        size_t len = text ? strlen(text) : 0;
        free(text);
        if (p->n < p->limit && !text) {
                cJSON_Delete(o);
                return -ENOMEM;
        }
        if (p->n == p->limit || (p->bytes > 0 && p->bytes + len > QUEUE_PAGE_BYTES)) {
                cJSON_Delete(o);
                p->more = true;
                return 0;
        }
        p->bytes += len;
        p->n++;
        cJSON_AddItemToArray(p->jobs, o);
        return 1;
}

/* Send the page, or the error of r < 0. */
static void page_reply(conn *c, page *p, int r) {
        if (r < 0) {
                cJSON_Delete(p->out);
                reply_error(c, "out of memory");
                return;
        }
        cJSON_AddBoolToObject(p->out, "more", p->more);
        reply(c, p->out);
}

/* Jobs in id order after "after_id", a page at a time: at most "limit" of them and about half
 * a message's worth; "more" says whether the listing goes on (ask again after the last id). */
static void handle_queue(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const fields[] = { "all", "user", "after_id", "limit", NULL };
        char err[PROTO_ERRLEN];
        bool all = false;
        int64_t user = -1, after = 0, limit = 10000;
        page p;
        int r = 0;
        if (proto_check_fields(msg, fields, err) < 0 || proto_get_bool(msg, "all", &all, err) == -EINVAL ||
            proto_get_int(msg, "user", 0, UINT32_MAX, &user, err) == -EINVAL ||
            proto_get_int(msg, "after_id", 0, INT64_MAX, &after, err) == -EINVAL ||
            proto_get_int(msg, "limit", 1, 10000, &limit, err) == -EINVAL) {
                reply_error(c, err);
                return;
        }
        page_open(&p, limit);
        /* Live jobs through the state's indexes, not a walk of every job ever submitted (3-5 ms
         * per request with 100,000 of another user's pending). */
        for (const job *j = all ? NULL : ctl_next_live(&srv->state, user, (uint64_t)after + 1); r >= 0 && !p.more && j;
             j = ctl_next_live(&srv->state, user, j->id + 1))
                r = page_add(&p, j);
        for (size_t i = ctl_first_job_from(&srv->state, (uint64_t)after + 1);
             all && r >= 0 && !p.more && i < srv->state.njobs; i++) {
                const job *j = srv->state.jobs[i];
                if (user < 0 || j->uid == (uid_t)user)
                        r = page_add(&p, j);
        }
        if (r >= 0 && after == 0 && p.out) /* the arrays' tasks not made yet, on the first page */
                r = ctl_arecs_list(&srv->state, user, p.out);
        page_reply(c, &p, r);
}

static const char *const id_only[] = { "id", NULL };

/* A bulk cancel names at most this many id ranges (a command line's worth). */
#define CANCEL_RANGES_MAX 4096

static int id_range_cmp(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/* The job a show or wait names, or NULL after replying with the error. */
static const job *requested_job(ctl_server *srv, conn *c, const cJSON *msg) {
        uint64_t id;
        if (request_id(c, msg, id_only, &id) < 0)
                return NULL;
        const job *j = ctl_job_named(&srv->state, id);
        if (!j) {
                char err[PROTO_ERRLEN];
                snprintf(err, sizeof(err), "no job %llu", (unsigned long long)id);
                reply_error(c, err);
        }
        return j;
}

static void handle_show(ctl_server *srv, conn *c, const cJSON *msg) {
        const job *j = requested_job(srv, c, msg);
        cJSON *out = j ? job_reply(j) : NULL;
        if (out && j->state == JOB_PENDING && !ctl_job_selectable(&srv->state, j))
                cJSON_AddStringToObject(out, "waiting", "no connected, undrained node is one it may run on");
        if (j)
                reply(c, out);
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
                snprintf(err, PROTO_ERRLEN, "ranges: must be 1 to %d pairs [first, last] of job ids", CANCEL_RANGES_MAX);
                return -EINVAL;
        }
        uint64_t *v = malloc(2 * len * sizeof(*v));
        if (!v)
                return snprintf(err, PROTO_ERRLEN, "out of memory"), -ENOMEM;
        cJSON_ArrayForEach(item, arr) {
                const cJSON *lo = cJSON_GetArrayItem(item, 0), *hi = cJSON_GetArrayItem(item, 1);
                if (!cJSON_IsArray(item) || cJSON_GetArraySize(item) != 2 || !cJSON_IsNumber(lo) || !cJSON_IsNumber(hi) ||
                    lo->valuedouble < 1 || hi->valuedouble < lo->valuedouble || hi->valuedouble > 9007199254740992.0) {
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
        if (proto_check_fields(msg, fields, err) < 0 || proto_get_int(msg, "user", 0, UINT32_MAX, &user, err) == -EINVAL ||
            proto_get_int(msg, "array", 1, INT64_MAX, &array, err) == -EINVAL ||
            proto_get_str(msg, "state", &state, err) == -EINVAL || parse_ranges(msg, &ranges, &f.nranges, err) < 0) {
                reply_error(c, err);
                return;
        }
        if (state && (job_state_from_name(state, &s) < 0 || (s != JOB_PENDING && s != JOB_RUNNING))) {
                free(ranges);
                reply_error(c, "state: must be pending or running");
                return;
        }
        f.uid = user;
        f.array = (uint64_t)array;
        f.state = state ? (int)s : -1;
        if (server_bulk_cancel(srv, c, &f, ranges) < 0)
                reply_error(c, "out of memory");
}

static void handle_cancel(ctl_server *srv, conn *c, const cJSON *msg) {
        char err[PROTO_ERRLEN];
        uint64_t id;
        static const char *const filters[] = { "ranges", "user", "array", "state" };
        for (size_t i = 0; i < sizeof(filters) / sizeof(filters[0]); i++)
                if (cJSON_GetObjectItemCaseSensitive(msg, filters[i])) { /* no filter: "id" is required */
                        handle_cancel_many(srv, c, msg);
                        return;
                }
        if (request_id(c, msg, id_only, &id) < 0)
                return;
        if (ctl_cancel(&srv->state, id, c->uid, server_now(), err) < 0) {
                reply_error(c, err);
                return;
        }
        const job *j = ctl_find_job(&srv->state, id);
        cJSON *ok = proto_new("cancelled");
        if (ok) {
                cJSON_AddNumberToObject(ok, "id", (double)id);
                cJSON_AddStringToObject(ok, "state", job_state_name(j->state));
        }
        reply(c, ok);
        server_schedule(srv);
}

static void handle_wait(ctl_server *srv, conn *c, const cJSON *msg) {
        const job *j = requested_job(srv, c, msg);
        if (!j)
                return;
        if (job_state_is_terminal(j->state)) {
                reply(c, job_reply(j));
                return;
        }
        waiter *w = realloc(srv->waiters, (srv->nwaiters + 1) * sizeof(*w));
        if (!w) {
                reply_error(c, "out of memory");
                return;
        }
        srv->waiters = w;
        srv->waiters[srv->nwaiters++] = (waiter){ .client = c, .job_id = j->id };
}

typedef struct history_filter {
        int64_t uid;           /* -1: anyone */
        const char *group;     /* NULL, or this group and the groups below it */
        int state;             /* -1: any terminal state */
        int64_t since_usec, until_usec; /* ended in [since, until) */
        int64_t before_id;     /* paging: only ids below this */
        int64_t limit;
} history_filter;

static bool history_match(const job *j, const history_filter *f) {
        return job_state_is_terminal(j->state) && (f->uid < 0 || j->uid == (uid_t)f->uid) &&
               (!f->group || depts_in(j->spec.group, f->group)) && (f->state < 0 || (int)j->state == f->state) &&
               j->end_usec >= f->since_usec && j->end_usec < f->until_usec;
}

static int parse_history(const cJSON *msg, history_filter *f, char err[PROTO_ERRLEN]) {
        static const char *const fields[] = { "user", "group", "state", "since_usec", "until_usec", "before_id",
                                              "limit", NULL };
        const char *state = NULL;
        *f = (history_filter){ .uid = -1, .state = -1, .until_usec = INT64_MAX, .before_id = INT64_MAX, .limit = 1000 };
        job_state st;
        if (proto_check_fields(msg, fields, err) < 0 ||
            proto_get_int(msg, "user", 0, UINT32_MAX, &f->uid, err) == -EINVAL ||
            proto_get_str(msg, "group", &f->group, err) == -EINVAL ||
            proto_get_str(msg, "state", &state, err) == -EINVAL ||
            proto_get_int(msg, "since_usec", 0, INT64_MAX, &f->since_usec, err) == -EINVAL ||
            proto_get_int(msg, "until_usec", 0, INT64_MAX, &f->until_usec, err) == -EINVAL ||
            proto_get_int(msg, "before_id", 1, INT64_MAX, &f->before_id, err) == -EINVAL ||
            proto_get_int(msg, "limit", 1, 10000, &f->limit, err) == -EINVAL)
                return -EINVAL;
        if (state && (job_state_from_name(state, &st) < 0 || !job_state_is_terminal(st))) {
                snprintf(err, PROTO_ERRLEN, "state: '%.32s' is not a finished state", state);
                return -EINVAL;
        }
        f->state = state ? (int)st : -1;
        return 0;
}

/* Finished jobs, newest first, at most "limit" of them and about half a message's worth; "more"
 * says whether older ones match too (page with before_id). */
static void handle_history(ctl_server *srv, conn *c, const cJSON *msg) {
        history_filter f;
        char err[PROTO_ERRLEN];
        if (parse_history(msg, &f, err) < 0) {
                reply_error(c, err);
                return;
        }
        page p;
        int r = 0;
        page_open(&p, f.limit);
        for (size_t i = srv->state.njobs; r >= 0 && !p.more && i-- > 0;) {
                const job *j = srv->state.jobs[i];
                if ((int64_t)j->id < f.before_id && history_match(j, &f))
                        r = page_add(&p, j); /* pages cut by bytes too, as queue's */
        }
        page_reply(c, &p, r);
}

static void handle_nodes(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const none[] = { NULL };
        char err[PROTO_ERRLEN];
        if (proto_check_fields(msg, none, err) < 0) {
                reply_error(c, err);
                return;
        }
        cJSON *out = proto_new("nodes"), *nodes = status_nodes(&srv->state);
        if (!out || !nodes || !cJSON_AddItemToObject(out, "nodes", nodes)) {
                cJSON_Delete(out);
                cJSON_Delete(nodes);
                reply_error(c, "out of memory");
                return;
        }
        const char *policy = server_policy_status(srv);
        if (policy)
                cJSON_AddStringToObject(out, "policy_status", policy);
        reply(c, out);
}

/* Store a new version of the interference matrix: root or the controller's own user only, since
 * it steers every placement under policy = coloc. */
static void handle_alpha_put(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const fields[] = { "types", "alpha", "ci95_low", "ci95_high", NULL };
        char err[PROTO_ERRLEN];
        alpha_matrix m;
        if (c->uid != 0 && c->uid != geteuid()) {
                reply_error(c, "only root or the controller's user may store an interference matrix");
                return;
        }
        if (proto_check_fields(msg, fields, err) < 0 || alpha_from_json(msg, &m, err) < 0) {
                reply_error(c, err);
                return;
        }
        if (jobstore_put_alpha(srv->store, &m, server_now()) < 0) {
                alpha_free(&m);
                reply_error(c, "could not store the matrix (the controller's log says why)");
                return;
        }
        log_info("interference matrix version %llu stored: %zu types, uid=%u", (unsigned long long)m.version, m.n,
                 (unsigned)c->uid);
        server_set_alpha(srv, &m);
        cJSON *ok = proto_new("alpha_stored");
        if (ok)
                cJSON_AddNumberToObject(ok, "version", (double)srv->alpha.version);
        reply(c, ok);
        server_schedule(srv);
}

/* The latest matrix (kept in memory), or the version asked for (read from the store). */
static void handle_alpha_get(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const fields[] = { "version", NULL };
        char err[PROTO_ERRLEN];
        int64_t version = 0;
        if (proto_check_fields(msg, fields, err) < 0 || proto_get_int(msg, "version", 1, INT64_MAX, &version, err) == -EINVAL) {
                reply_error(c, err);
                return;
        }
        alpha_matrix stored = { 0 };
        const alpha_matrix *m = &srv->alpha;
        int r = version == 0 ? (srv->alpha.version ? 0 : -ENOENT) : jobstore_get_alpha(srv->store, (uint64_t)version, &stored);
        if (version != 0)
                m = &stored;
        if (r < 0) {
                if (r == -ENOENT && version)
                        snprintf(err, sizeof(err), "no interference matrix version %lld", (long long)version);
                else
                        snprintf(err, sizeof(err), "%s", r == -ENOENT ? "no interference matrix stored yet (colony measure)"
                                                                      : "the store could not be read");
                reply_error(c, err);
                return;
        }
        cJSON *out = proto_new("alpha");
        if (out && alpha_to_json(m, out) < 0) {
                cJSON_Delete(out);
                out = proto_error("out of memory");
        }
        alpha_free(&stored);
        reply(c, out);
}

/* One department of a shares reply; cpu: its subtree's CPU time in the window. */
static cJSON *share_to_json(const fairorder *fo, size_t i, const fairorder_share *sh, int64_t cpu_usec) {
        cJSON *o = cJSON_CreateObject();
        const fair_node *n = &fo->nodes[i];
        if (!o)
                return NULL;
        cJSON_AddStringToObject(o, "path", n->name);
        cJSON_AddStringToObject(o, "parent", fo->nodes[n->parent].name);
        cJSON_AddBoolToObject(o, "leaf", !fo->inner[i]);
        cJSON_AddNumberToObject(o, "weight", n->weight);
        cJSON_AddNumberToObject(o, "cap", n->cap);
        cJSON_AddNumberToObject(o, "entitled", sh->entitled);
        cJSON_AddNumberToObject(o, "share", sh->share);
        cJSON_AddNumberToObject(o, "running", sh->running);
        cJSON_AddNumberToObject(o, "pending", sh->pending);
        cJSON_AddNumberToObject(o, "cpu_seconds", (double)cpu_usec / 1e6);
        cJSON_AddBoolToObject(o, "held", sh->held);
        cJSON_AddNumberToObject(o, "entitled_other", sh->entitled_other);
        return o;
}

/* CPU time of each node's subtree in the window (cpu: fo->n entries, zeroed). */
static void window_cpu(ctl_server *srv, int64_t *cpu) {
        const fairorder *fo = &srv->state.fair;
        int64_t now = server_now();
        for (size_t g = 0; g < srv->cpu.n; g++) {
                const char *group = srv->cpu.v[g].group;
                int64_t usec = cpuwin_sum(&srv->cpu.v[g], now);
                for (int32_t a = (int32_t)fairorder_dept(fo, *group ? group : NULL); a >= 0; a = fo->nodes[a].parent)
                        cpu[a] += usec;
        }
}

/* "versus": the other of hdrf and mch, and the department whose entitlement differs most under it
 * ("largest_gap" 0 and "department" null when none does). */
static void versus_to_json(cJSON *out, const fairorder *fo, const fairorder_report *rep) {
        cJSON *v = cJSON_AddObjectToObject(out, "versus");
        size_t worst = 0;
        double gap = 0;
        for (size_t i = 1; i < fo->n; i++)
                if (fabs(rep->nodes[i].entitled - rep->nodes[i].entitled_other) > gap) {
                        gap = fabs(rep->nodes[i].entitled - rep->nodes[i].entitled_other);
                        worst = i;
                }
        if (!v)
                return;
        cJSON_AddStringToObject(v, "algo", fair_algo_name(fairorder_other_algo(fo)));
        cJSON_AddNumberToObject(v, "largest_gap", gap);
        if (worst)
                cJSON_AddStringToObject(v, "department", fo->nodes[worst].name);
        else
                cJSON_AddNullToObject(v, "department");
}

/* The next job and why, or null. */
static cJSON *next_to_json(ctl_server *srv, const fairorder_report *rep, uint64_t next_id) {
        char why[256];
        const fairorder *fo = &srv->state.fair;
        cJSON *o = next_id ? cJSON_CreateObject() : cJSON_CreateNull();
        if (!o || !next_id)
                return o;
        if (srv->state.cfg.fairness < 0 || srv->state.cfg.dispatcher)
                snprintf(why, sizeof(why), "submission order (fairness none, or a policy that keeps it)");
        else
                fairorder_why(fo, rep, why, sizeof(why));
        cJSON_AddNumberToObject(o, "id", (double)next_id);
        cJSON_AddStringToObject(o, "department", fo->nodes[rep->next_dept].name);
        cJSON_AddStringToObject(o, "why", why);
        return o;
}

/* Each department's entitled and current dominant share, jobs, CPU time in the window, and the
 * job the controller offers first (docs/protocol.md). */
static void handle_shares(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const none[] = { NULL };
        char err[PROTO_ERRLEN] = "";
        const fairorder *fo = &srv->state.fair;
        fairorder_report rep = { .nodes = calloc(fo->n + 1, sizeof(*rep.nodes)) };
        int64_t *cpu = calloc(fo->n + 1, sizeof(*cpu));
        uint64_t next_id = 0;
        cJSON *out = NULL, *arr;
        int r = proto_check_fields(msg, none, err);
        if (r == 0 && (!rep.nodes || !cpu))
                r = -ENOMEM;
        if (r == 0)
                r = ctl_fair_shares(&srv->state, &rep, &next_id);
        if (r < 0 && !*err)
                snprintf(err, sizeof(err), "cannot compute the shares: %s", strerror(-r));
        if (r == 0 && (out = proto_new("shares"))) {
                int fairness = srv->state.cfg.dispatcher ? -1 : srv->state.cfg.fairness;
                window_cpu(srv, cpu);
                cJSON_AddStringToObject(out, "fairness", fairness < 0 ? "none" : fair_algo_name(fairness));
                cJSON_AddNumberToObject(out, "window_seconds", CPUWIN_SECONDS);
                arr = cJSON_AddArrayToObject(out, "departments");
                for (size_t i = 1; arr && i < fo->n; i++)
                        cJSON_AddItemToArray(arr, share_to_json(fo, i, &rep.nodes[i], cpu[i]));
                cJSON_AddItemToObject(out, "next", next_to_json(srv, &rep, next_id));
                versus_to_json(out, fo, &rep);
        }
        free(rep.nodes);
        free(cpu);
        if (r < 0)
                reply_error(c, err);
        else
                reply(c, out);
}

/* Re-read the departments, as SIGHUP does; root or the controller's own user only. */
static void handle_reload(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const none[] = { NULL };
        char err[512];
        if (proto_check_fields(msg, none, err) < 0) {
                reply_error(c, err);
                return;
        }
        if (c->uid != 0 && c->uid != geteuid()) {
                reply_error(c, "only root or the controller's user may reload it");
                return;
        }
        if (server_reload(srv, err, sizeof(err)) < 0) {
                log_error("reload refused, the departments stay as they were: %s", err);
                reply_error(c, err);
                return;
        }
        cJSON *ok = proto_new("reloaded");
        if (ok)
                cJSON_AddNumberToObject(ok, "departments", (double)srv->depts.n);
        reply(c, ok);
}

/* --- drain and resume: root only --- */

/* Check a drain or resume request from c: root, its fields, a known node. Returns the node, or
 * NULL with the error sent. */
static ctl_node *node_request(ctl_server *srv, conn *c, const cJSON *msg, const char *const *fields) {
        char err[PROTO_ERRLEN];
        const char *name;
        ctl_node *n = NULL;
        int r = proto_check_fields(msg, fields, err);
        if (r == 0 && (r = proto_get_str(msg, "node", &name, err)) == -ENOENT)
                snprintf(err, sizeof(err), "node: required");
        if (r == 0 && c->uid != 0)
                snprintf(err, sizeof(err), "only root may drain or resume a node");
        else if (r == 0 && !(n = ctl_find_node(&srv->state, name)))
                snprintf(err, sizeof(err), "no node named %.64s", name);
        if (!n)
                reply_error(c, err);
        return n;
}

/* Reply to a drain or resume with the node's state and reason. */
static void reply_node(conn *c, const char *type, const ctl_node *n) {
        cJSON *ok = proto_new(type);
        if (ok && (!cJSON_AddStringToObject(ok, "node", n->name) ||
                   !cJSON_AddStringToObject(ok, "state", ctl_node_state_name(n)))) {
                cJSON_Delete(ok);
                ok = proto_error("out of memory");
        }
        reply(c, ok);
}

static void handle_drain(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const fields[] = { "node", "reason", NULL };
        char err[PROTO_ERRLEN];
        const char *reason = "drained";
        ctl_node *n = node_request(srv, c, msg, fields);
        if (!n)
                return;
        int r = proto_get_str(msg, "reason", &reason, err);
        if (r == -EINVAL || (r == 0 && (!*reason || strlen(reason) > JOB_NAME_MAX))) {
                reply_error(c, r == -EINVAL ? err : "reason: must be 1 to 128 characters");
                return;
        }
        if (jobstore_put_drain(srv->store, n->name, reason) < 0) {
                reply_error(c, "could not store the drain (the controller's log says why)");
                return;
        }
        if (ctl_node_drain(&srv->state, n->name, reason, &n) < 0) {
                reply_error(c, "out of memory");
                return;
        }
        reply_node(c, "drained", n);
}

static void handle_resume(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const fields[] = { "node", NULL };
        ctl_node *n = node_request(srv, c, msg, fields);
        if (!n)
                return;
        if (!n->drain_reason) {
                reply_error(c, "that node is not drained");
                return;
        }
        if (jobstore_put_drain(srv->store, n->name, NULL) < 0) {
                reply_error(c, "could not store the resume (the controller's log says why)");
                return;
        }
        (void)ctl_node_resume(&srv->state, n);
        reply_node(c, "resumed", n);
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
        if (request_id(c, msg, fields, &id) < 0)
                return;
        if (proto_get_bool(msg, "array", &array, err) == -EINVAL ||
            (array && ctl_hold_array(&srv->state, id, c->uid, hold, &done, &unchanged, err) < 0)) {
                reply_error(c, err);
                return;
        }
        cJSON *ok = array ? proto_new("array_held") : NULL;
        if (ok && (!cJSON_AddNumberToObject(ok, "done", (double)done) ||
                   !cJSON_AddNumberToObject(ok, "unchanged", (double)unchanged) ||
                   !cJSON_AddStringToObject(ok, "first_refusal", err)))
                ok = (cJSON_Delete(ok), proto_error("out of memory"));
        if (array) {
                reply(c, ok);
                server_schedule(srv);
                return;
        }
        if (ctl_hold(&srv->state, id, c->uid, hold, err) < 0) {
                reply_error(c, err);
                return;
        }
        reply(c, job_reply(ctl_find_job(&srv->state, id)));
        server_schedule(srv);
}

static void handle_hold(ctl_server *srv, conn *c, const cJSON *msg) {
        handle_hold_or_release(srv, c, msg, true);
}

static void handle_release(ctl_server *srv, conn *c, const cJSON *msg) {
        handle_hold_or_release(srv, c, msg, false);
}

/* update: {"id": N} and any of mcpu, mem, nice, time_limit_usec; answered with the job's
 * record ("job"). */
static void handle_update(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const fields[] = { "id", "mcpu", "mem", "nice", "time_limit_usec", NULL };
        char err[PROTO_ERRLEN];
        ctl_update_req u = { -1, -1, INT_MIN, INT64_MIN };
        int64_t nice = INT_MIN;
        uint64_t id;
        int r;
        if (request_id(c, msg, fields, &id) < 0)
                return;
        if ((r = proto_get_int(msg, "mcpu", 1, RES_MCPU_MAX, &u.mcpu, err)) == -EINVAL ||
            (r = proto_get_int(msg, "mem", 1, RES_MEM_MAX, &u.mem, err)) == -EINVAL ||
            (r = proto_get_int(msg, "nice", JOB_NICE_MIN, JOB_NICE_MAX, &nice, err)) == -EINVAL ||
            (r = proto_get_int(msg, "time_limit_usec", JOB_TIME_UNLIMITED, UNITS_TIME_MAX_USEC, &u.time_limit_usec,
                               err)) == -EINVAL) {
                reply_error(c, err);
                return;
        }
        u.nice = (int)nice;
        if (u.mcpu < 0 && u.mem < 0 && u.nice == INT_MIN && u.time_limit_usec == INT64_MIN) {
                reply_error(c, "update: nothing to change (mcpu, mem, nice or time_limit_usec)");
                return;
        }
        if (ctl_update(&srv->state, id, c->uid, &u, err) < 0) {
                reply_error(c, err);
                return;
        }
        reply(c, job_reply(ctl_find_job(&srv->state, id)));
        server_schedule(srv);
}

/* array: the span of the array whose id is "id" ({"id", "last"}), and with "index", that task's
 * job id ("task"): how clients name A_i, cancel A and wait for A (docs/protocol.md). */
static void handle_array(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const fields[] = { "id", "index", NULL };
        char err[PROTO_ERRLEN];
        int64_t index = -1;
        uint64_t id, last, task = 0;
        if (request_id(c, msg, fields, &id) < 0)
                return;
        if (proto_get_int(msg, "index", 0, ARRAY_INDEX_MAX, &index, err) == -EINVAL ||
            ctl_array_span(&srv->state, id, &last, err) < 0 ||
            (index >= 0 && ctl_array_task(&srv->state, id, (uint32_t)index, &task, err) < 0)) {
                reply_error(c, err);
                return;
        }
        cJSON *ok = proto_new("array");
        if (ok && (!cJSON_AddNumberToObject(ok, "id", (double)id) || !cJSON_AddNumberToObject(ok, "last", (double)last) ||
                   (task && !cJSON_AddNumberToObject(ok, "task", (double)task)))) {
                cJSON_Delete(ok);
                ok = proto_error("out of memory");
        }
        reply(c, ok);
}

static const struct {
        const char *type;
        void (*handle)(ctl_server *srv, conn *c, const cJSON *msg);
} requests[] = {
        { "submit", handle_submit }, { "queue", handle_queue }, { "show", handle_show },
        { "cancel", handle_cancel }, { "wait", handle_wait },   { "nodes", handle_nodes },
        { "history", handle_history }, { "shares", handle_shares }, { "reload", handle_reload },
        { "alpha_put", handle_alpha_put }, { "alpha_get", handle_alpha_get },
        { "events", server_handle_events },
        { "drain", handle_drain }, { "resume", handle_resume },
        { "hold", handle_hold }, { "release", handle_release }, { "update", handle_update },
        { "array", handle_array },
        { "output", server_handle_output },
};

static void client_message(conn *c, const cJSON *msg) {
        const char *type = proto_type(msg);
        char err[PROTO_ERRLEN];
        /* the trust boundary: what a client sends is stored and echoed in every listing's JSON */
        if (proto_check_utf8(msg, err) < 0) {
                reply_error(c, err);
                return;
        }
        for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++)
                if (strcmp(type, requests[i].type) == 0) {
                        requests[i].handle(c->owner, c, msg);
                        return;
                }
        snprintf(err, sizeof(err), "unknown request type '%.64s'", type);
        reply_error(c, err);
}

static void drop_waiters_of(ctl_server *srv, conn *c) {
        size_t kept = 0;
        for (size_t i = 0; i < srv->nwaiters; i++)
                if (srv->waiters[i].client != c)
                        srv->waiters[kept++] = srv->waiters[i];
        srv->nwaiters = kept;
}

/* The count of client connections uid holds, added at 0 when absent; NULL when out of memory. */
static uid_conns *uid_entry(ctl_server *srv, uid_t uid) {
        for (size_t i = 0; i < srv->nclient_uids; i++)
                if (srv->client_uids[i].uid == uid)
                        return &srv->client_uids[i];
        uid_conns *grown = realloc(srv->client_uids, (srv->nclient_uids + 1) * sizeof(*grown));
        if (!grown)
                return NULL;
        srv->client_uids = grown;
        grown[srv->nclient_uids] = (uid_conns){ .uid = uid };
        return &grown[srv->nclient_uids++];
}

/* Count the new connection against its uid (refused ones too, until they close: a refusal is
 * sent, and a flood of them must not be read as room), and refuse it past its cap: an idle
 * connection costs the controller a descriptor, which it has a limited number of. */
static void client_opened(conn *c) {
        ctl_server *srv = c->owner;
        uid_conns *e = c->uid == (uid_t)-1 ? NULL : uid_entry(srv, c->uid);
        unsigned cap = c->uid == 0 || c->uid == geteuid() ? CLIENT_CONNS_PER_ADMIN : CLIENT_CONNS_PER_USER, missed;
        char text[PROTO_ERRLEN];
        if (!e) {
                log_error("client fd=%d uid=%d: %s: closed", c->fd, (int)c->uid,
                          c->uid == (uid_t)-1 ? "no peer credentials" : "out of memory");
                c->uid = (uid_t)-1; /* counted nowhere */
                conn_close(c);
                return;
        }
        if (++e->n <= cap)
                return;
        if (log_ratelimit_ok(&srv->clients_refused, &missed))
                log_warning("client fd=%d uid=%u pid=%d refused: the user has %u connections open (%u more refused "
                            "since the last such line)", c->fd, (unsigned)c->uid, (int)c->pid, cap, missed);
        snprintf(text, sizeof(text), "too many connections: uid %u has %u open to the controller, the most a user "
                 "may", (unsigned)c->uid, cap);
        conn_fail(c, text);
}

/* Uncount the closing connection from its uid; the entry goes when it counts none. */
static void uncount(ctl_server *srv, conn *c) {
        if (c->uid == (uid_t)-1)
                return; /* never counted */
        for (size_t i = 0; i < srv->nclient_uids; i++)
                if (srv->client_uids[i].uid == c->uid && --srv->client_uids[i].n == 0) {
                        srv->client_uids[i] = srv->client_uids[--srv->nclient_uids];
                        return;
                }
}

static void client_closed(conn *c) {
        uncount(c->owner, c);
        drop_waiters_of(c->owner, c);
        server_bulk_forget(c->owner, c);
        free(c->data);
        server_drop_follower(c->owner, c);
        server_output_forget(c->owner, c);
}

void server_answer_waiters(ctl_server *srv, const job *j) {
        /* take the ready ones out first: a failed reply closes its client, which edits the list */
        waiter *ready = malloc(srv->nwaiters * sizeof(*ready) + 1);
        size_t kept = 0, nready = 0;
        if (!ready)
                return;
        for (size_t i = 0; i < srv->nwaiters; i++) {
                if (srv->waiters[i].job_id == j->id)
                        ready[nready++] = srv->waiters[i];
                else
                        srv->waiters[kept++] = srv->waiters[i];
        }
        srv->nwaiters = kept;
        for (size_t i = 0; i < nready; i++)
                reply(ready[i].client, job_reply(j));
        free(ready);
}

const conn_ops client_conn_ops = { .on_open = client_opened, .on_message = client_message, .on_close = client_closed,
                                   .held = server_output_held, .held_list = server_held_list };
