/* clients.c - requests from the colony CLI on the Unix socket (docs/protocol.md, "Client link").
 * The caller is who SO_PEERCRED says, never what the message says. */
#include "clients.h"
#include "status.h"
#include "arrays.h"
#include "log.h"
#include "bulk.h"
#include "commit.h"
#include "eventsrv.h"
#include "outrelay.h"
#include <errno.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Answer c now, or after the work it queued in bulk before this request. */
void client_reply(conn *c, cJSON *msg) {
        if (msg && server_bulk_has(c->owner, c)) {
                (void)server_bulk_reply(c->owner, c, msg);
                return;
        }
        conn_reply(c, msg);
}

void client_reply_error(conn *c, const char *text) { client_reply(c, proto_error("%s", text)); }

/* Check the request's fields and read its "id". Returns 0 or -EINVAL (error already sent). */
int client_request_id(conn *c, const cJSON *msg, const char *const *fields, uint64_t *id) {
        char err[PROTO_ERRLEN];
        int64_t v;
        int r = proto_check_fields(msg, fields, err);
        if (r == 0 && (r = proto_get_int(msg, "id", 1, INT64_MAX, &v, err)) == -ENOENT)
                snprintf(err, sizeof(err), "id: required");
        if (r < 0) {
                client_reply_error(c, err);
                return -EINVAL;
        }
        *id = (uint64_t)v;
        return 0;
}

int client_request_fields(conn *c, const cJSON *msg, const char *const *fields) {
        char err[PROTO_ERRLEN];
        if (proto_check_fields(msg, fields, err) < 0) {
                client_reply_error(c, err);
                return -EINVAL;
        }
        return 0;
}

cJSON *client_job_record(const ctl_state *st, const job *j) { return job_to_json_waiting(j, ctl_wait_shown(st, j)); }

cJSON *client_job_reply(const ctl_state *st, const job *j) {
        cJSON *msg = proto_new("job"), *rec = client_job_record(st, j);
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
        snprintf(err, PROTO_ERRLEN,
                 "the job's command line and environment take %zu bytes, more than the %d a "
                 "launch may carry",
                 len, PROTO_MAX_MSG - LAUNCH_HEADROOM);
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
                client_reply_error(c, err);
                return;
        }
        if (spec_too_large(&spec, err) < 0) {
                job_spec_free(&spec);
                array_set_free(&indexes);
                client_reply_error(c, err);
                return;
        }
        const char *user = conn_user(c, name, sizeof(name));
        if (count > BULK_CHUNK || server_bulk_has(srv, c)) { /* a slice per turn, in c's order: bulk.c */
                if (server_bulk_submit(srv, c, user, &spec, (size_t)count, &indexes) < 0) {
                        job_spec_free(&spec);
                        client_reply_error(c, "out of memory");
                }
                return;
        }
        log_hold(); /* a line per job, written together */
        int r = ctl_submit_array(&srv->state, c->uid, c->gid, user, &spec, (size_t)count, &indexes, server_now(), &id,
                                 err);
        log_release();
        if (r < 0) {
                job_spec_free(&spec);
                array_set_free(&indexes);
                client_reply_error(c, err);
                return;
        }
        cJSON *ok = proto_new("submitted");
        if (ok && (!cJSON_AddNumberToObject(ok, "id", (double)id) ||
                   (count && !cJSON_AddNumberToObject(ok, "count", (double)count)))) {
                cJSON_Delete(ok);
                ok = proto_error("out of memory");
        }
        client_reply(c, ok);
        server_schedule(srv);
}

/* A queue page is cut at this many bytes of job records, well below PROTO_MAX_MSG. */
#define QUEUE_PAGE_BYTES (PROTO_MAX_MSG / 2)

/* A reply of job records being filled: at most limit of them and about QUEUE_PAGE_BYTES. */
typedef struct page {
        cJSON *out, *jobs;
        int64_t n, limit;
        size_t bytes;
        bool more;       /* a record did not fit: the listing goes on */
        ctl_server *srv; /* whose family ids the records carry */
} page;

static void page_open(ctl_server *srv, page *p, int64_t limit) {
        *p = (page){ .out = proto_new("jobs"), .limit = limit, .srv = srv };
        p->jobs = cJSON_AddArrayToObject(p->out, "jobs");
}

/* Add j's record unless the page is full (then more is set). Returns 1 when added, 0 when
 * full, -ENOMEM. */
static int page_add(page *p, const job *j) {
        if (!p->jobs)
                return -ENOMEM;
        cJSON *o = p->n < p->limit ? client_job_record(&p->srv->state, j) : NULL;
        if (o && client_family_id_add(p->srv, j, o) < 0) {
                cJSON_Delete(o);
                return -ENOMEM;
        }
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
                client_reply_error(c, "out of memory");
                return;
        }
        cJSON_AddBoolToObject(p->out, "more", p->more);
        client_reply(c, p->out);
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
                client_reply_error(c, err);
                return;
        }
        page_open(srv, &p, limit);
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

/* The job a show or wait names, or NULL after replying with the error. */
static const job *requested_job(ctl_server *srv, conn *c, const cJSON *msg) {
        uint64_t id;
        if (client_request_id(c, msg, id_only, &id) < 0)
                return NULL;
        const job *j = ctl_job_named(&srv->state, id);
        if (!j) {
                char err[PROTO_ERRLEN];
                snprintf(err, sizeof(err), "no job %llu", (unsigned long long)id);
                client_reply_error(c, err);
        }
        return j;
}

static void handle_show(ctl_server *srv, conn *c, const cJSON *msg) {
        const job *j = requested_job(srv, c, msg);
        cJSON *out = j ? client_job_reply(&srv->state, j) : NULL;
        if (out && j->state == JOB_PENDING && !ctl_job_selectable(&srv->state, j))
                cJSON_AddStringToObject(out, "waiting", "no connected, undrained node is one it may run on");
        if (out && client_family_add(srv, j, out) < 0) {
                cJSON_Delete(out);
                out = proto_error("out of memory");
        }
        if (j)
                client_reply(c, out);
}

static void handle_wait(ctl_server *srv, conn *c, const cJSON *msg) {
        const job *j = requested_job(srv, c, msg);
        if (!j)
                return;
        if (job_state_is_terminal(j->state)) {
                client_reply(c, client_job_reply(&srv->state, j));
                return;
        }
        waiter *w = realloc(srv->waiters, (srv->nwaiters + 1) * sizeof(*w));
        if (!w) {
                client_reply_error(c, "out of memory");
                return;
        }
        srv->waiters = w;
        srv->waiters[srv->nwaiters++] = (waiter){ .client = c, .job_id = j->id };
}

typedef struct history_filter {
        int64_t uid;                    /* -1: anyone */
        const char *group;              /* NULL, or this group and the groups below it */
        int state;                      /* -1: any terminal state */
        int64_t since_usec, until_usec; /* ended in [since, until) */
        int64_t before_id;              /* paging: only ids below this */
        int64_t limit;
} history_filter;

static bool history_match(const job *j, const history_filter *f) {
        return job_state_is_terminal(j->state) && (f->uid < 0 || j->uid == (uid_t)f->uid) &&
               (!f->group || depts_in(j->spec.group, f->group)) && (f->state < 0 || (int)j->state == f->state) &&
               j->end_usec >= f->since_usec && j->end_usec < f->until_usec;
}

static int parse_history(const cJSON *msg, history_filter *f, char err[PROTO_ERRLEN]) {
        static const char *const fields[] = { "user",       "group",     "state", "since_usec",
                                              "until_usec", "before_id", "limit", NULL };
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
                client_reply_error(c, err);
                return;
        }
        page p;
        int r = 0;
        page_open(srv, &p, f.limit);
        for (size_t i = srv->state.njobs; r >= 0 && !p.more && i-- > 0;) {
                const job *j = srv->state.jobs[i];
                if ((int64_t)j->id < f.before_id && history_match(j, &f))
                        r = page_add(&p, j); /* pages cut by bytes too, as queue's */
        }
        page_reply(c, &p, r);
}

/* array: the span of the array whose id is "id" ({"id", "last"}), and with "index", that task's
 * job id ("task"): how clients name A_i, cancel A and wait for A (docs/protocol.md). */
static void handle_array(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const fields[] = { "id", "index", NULL };
        char err[PROTO_ERRLEN];
        int64_t index = -1;
        uint64_t id, last, task = 0;
        if (client_request_id(c, msg, fields, &id) < 0)
                return;
        if (proto_get_int(msg, "index", 0, ARRAY_INDEX_MAX, &index, err) == -EINVAL ||
            ctl_array_span(&srv->state, id, &last, err) < 0 ||
            (index >= 0 && ctl_array_task(&srv->state, id, (uint32_t)index, &task, err) < 0)) {
                client_reply_error(c, err);
                return;
        }
        cJSON *ok = proto_new("array");
        if (ok &&
            (!cJSON_AddNumberToObject(ok, "id", (double)id) || !cJSON_AddNumberToObject(ok, "last", (double)last) ||
             (task && !cJSON_AddNumberToObject(ok, "task", (double)task)))) {
                cJSON_Delete(ok);
                ok = proto_error("out of memory");
        }
        client_reply(c, ok);
}

static const struct {
        const char *type;
        client_request_fn *handle;
} requests[] = {
        { "submit", handle_submit },        { "queue", handle_queue },         { "show", handle_show },
        { "cancel", client_cancel },        { "wait", handle_wait },           { "nodes", client_nodes },
        { "history", handle_history },      { "shares", client_shares },       { "reload", client_reload },
        { "alpha_put", client_alpha_put },  { "alpha_get", client_alpha_get }, { "events", server_handle_events },
        { "drain", client_drain },          { "resume", client_resume },       { "hold", client_hold },
        { "release", client_release },      { "update", client_update },       { "array", handle_array },
        { "output", server_handle_output }, { "family", client_family },
};

static void client_message(conn *c, const cJSON *msg) {
        const char *type = proto_type(msg);
        char err[PROTO_ERRLEN];
        /* the trust boundary: what a client sends is stored and echoed in every listing's JSON */
        if (proto_check_utf8(msg, err) < 0) {
                client_reply_error(c, err);
                return;
        }
        for (size_t i = 0; i < sizeof(requests) / sizeof(requests[0]); i++)
                if (strcmp(type, requests[i].type) == 0) {
                        requests[i].handle(c->owner, c, msg);
                        return;
                }
        snprintf(err, sizeof(err), "unknown request type '%.64s'", type);
        client_reply_error(c, err);
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
                            "since the last such line)",
                            c->fd, (unsigned)c->uid, (int)c->pid, cap, missed);
        snprintf(text, sizeof(text),
                 "too many connections: uid %u has %u open to the controller, the most a user "
                 "may",
                 (unsigned)c->uid, cap);
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
                client_reply(ready[i].client, client_job_reply(&srv->state, j));
        free(ready);
}

const conn_ops client_conn_ops = { .on_open = client_opened,
                                   .on_message = client_message,
                                   .on_close = client_closed,
                                   .held = server_output_held,
                                   .held_list = server_held_list };
