/* outrelay.c - a job's output for its followers (colony run, colony attach): a client's
 * "output" request becomes a "read_output" to the agent of the job's node, whose "output"
 * answer goes back to that client (docs/protocol.md, "Following a job's output").
 *
 * Pull, not push: the job's files are the truth, each follower asks from the offsets it has
 * reached, and nothing is queued for it but the one answer to its one request in flight. So a
 * follower that stops reading costs at most that answer (OUTPUT_ANSWER_MAX) here and one read
 * on the agent, blocks nobody, and never slows the job; and one that reconnects, or whose agent
 * restarted, asks again from where it was, losing and doubling nothing. */
#include "outrelay.h"
#include "server.h"
#include "log.h"
#include "outpat.h"
#include "clock.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Reads in flight per node, as the agent's outread.h allows; more are answered busy here. */
#define OUTPUT_PER_NODE_MAX 16
/* The longest a read may wait for new bytes (the agent's OUTREAD_WAIT_MAX_MS). */
#define OUTPUT_WAIT_MAX_MS 5000
/* What an answer takes at most queued for its client: two chunks of 128 KiB in base64, and
 * the rest of the message. A client that asks again with more than this unread is not reading
 * its answers: it is closed, so that it cannot pile them up. */
#define OUTPUT_ANSWER_MAX (2 * (128 * 1024 / 3 + 1) * 4 + 4096)

/* A request in flight: the client waiting, the node asked, whether the job had ended then. */
struct out_pending {
        uint64_t tag;
        conn *client;
        ctl_node *node;
        uint64_t job;
        bool ended;
};

/* A read of a job that has not started, held until it starts or ends or its wait is over, so
 * that a follower learns of the start in the turn it happens, not at its next poll. */
struct out_parked {
        conn *client;
        cJSON *msg; /* the request as it came, handled again when the job starts */
        uint64_t job;
        uint64_t deadline_usec; /* CLOCK_MONOTONIC */
};

/* The index of c's request in flight, or -1. */
static ssize_t pending_of(const ctl_server *srv, const conn *c) {
        for (size_t i = 0; i < srv->noutputs; i++)
                if (srv->outputs[i].client == c)
                        return (ssize_t)i;
        return -1;
}

static size_t pending_on(const ctl_server *srv, const ctl_node *n) {
        size_t k = 0;
        for (size_t i = 0; i < srv->noutputs; i++)
                k += srv->outputs[i].node == n;
        return k;
}

static void take_out(ctl_server *srv, size_t i) { srv->outputs[i] = srv->outputs[--srv->noutputs]; }

static ssize_t parked_of(const ctl_server *srv, const conn *c) {
        for (size_t i = 0; i < srv->nparked; i++)
                if (srv->parked[i].client == c)
                        return (ssize_t)i;
        return -1;
}

/* Take parked read i out; the caller owns its msg. */
static struct out_parked unpark(ctl_server *srv, size_t i) {
        struct out_parked p = srv->parked[i];
        srv->parked[i] = srv->parked[--srv->nparked];
        return p;
}

/* Add j's record to an answer after which its follower asks no more, so that it learns how
 * the job ended without a "wait" of its own. Returns false when out of memory. */
static bool add_record(cJSON *msg, const job *j) {
        cJSON *rec = job_to_json(j);
        if (rec && cJSON_AddItemToObject(msg, "job", rec))
                return true;
        cJSON_Delete(rec);
        return false;
}

/* An "output" reply with no bytes: the job pending (nothing to read yet), or an error the
 * follower may retry after (busy, the node down) unless the job has ended. */
static void reply_empty(conn *c, const job *j, const char *error) {
        cJSON *msg = proto_new("output");
        if (msg && (!cJSON_AddNumberToObject(msg, "id", (double)j->id) ||
                    !cJSON_AddStringToObject(msg, "state", job_state_name(j->state)) ||
                    (error && !cJSON_AddStringToObject(msg, "error", error)) ||
                    (error && job_state_is_terminal(j->state) && !add_record(msg, j)))) {
                cJSON_Delete(msg);
                msg = NULL;
        }
        conn_reply(c, msg ? msg : proto_error("out of memory"));
}

/* The job's output path (a pattern) expanded as its agent did at launch, malloc'ed; NULL when
 * out of memory. */
static char *expanded(const job *j, const char *pattern) {
        const outpat_vars v = { .id = j->id,
                                .array_first = j->array_first,
                                .array_index = j->array_index,
                                .user = j->user,
                                .name = j->spec.name,
                                .node = j->node };
        char *out = NULL;
        return outpat_expand(pattern, &v, &out) == 0 ? out : NULL;
}

/* The read_output message for j's files from the offsets asked. NULL when out of memory. */
static cJSON *read_request(const job *j, uint64_t tag, const cJSON *msg, int64_t wait_ms) {
        const char *so = j->spec.stdout_path, *se = j->spec.stderr_path;
        bool apart = se && (!so || strcmp(so, se) != 0); /* else one file: everything is "out" */
        char *out = expanded(j, so ? so : "/dev/null"), *err = apart ? expanded(j, se) : NULL;
        const cJSON *oo = cJSON_GetObjectItemCaseSensitive(msg, "out_offset"),
                    *eo = cJSON_GetObjectItemCaseSensitive(msg, "err_offset");
        cJSON *req = proto_new("read_output");
        bool ok = req && out && (!apart || err) && cJSON_AddNumberToObject(req, "tag", (double)tag) &&
                  cJSON_AddNumberToObject(req, "id", (double)j->id) && cJSON_AddNumberToObject(req, "uid", j->uid) &&
                  cJSON_AddNumberToObject(req, "gid", j->gid) && cJSON_AddStringToObject(req, "out_path", out) &&
                  cJSON_AddNumberToObject(req, "out_offset", cJSON_IsNumber(oo) ? oo->valuedouble : 0) &&
                  (!apart || (cJSON_AddStringToObject(req, "err_path", err) &&
                              cJSON_AddNumberToObject(req, "err_offset", cJSON_IsNumber(eo) ? eo->valuedouble : 0))) &&
                  cJSON_AddNumberToObject(req, "wait_ms", (double)wait_ms) &&
                  cJSON_AddBoolToObject(req, "ended", job_state_is_terminal(j->state));
        free(out);
        free(err);
        if (!ok)
                cJSON_Delete(req);
        return ok ? req : NULL;
}

static int on_parked_expiry(sd_event_source *s, uint64_t usec, void *userdata);

/* Arm the expiry timer at the earliest parked deadline (off when none). Returns 0 or -errno. */
static int arm_expiry(ctl_server *srv) {
        uint64_t first = UINT64_MAX;
        for (size_t i = 0; i < srv->nparked; i++)
                if (srv->parked[i].deadline_usec < first)
                        first = srv->parked[i].deadline_usec;
        if (first == UINT64_MAX)
                return srv->parked_expiry ? sd_event_source_set_enabled(srv->parked_expiry, SD_EVENT_OFF) : 0;
        if (!srv->parked_expiry)
                return sd_event_add_time(srv->event, &srv->parked_expiry, CLOCK_MONOTONIC, first, 1000,
                                         on_parked_expiry, srv);
        int r = sd_event_source_set_time(srv->parked_expiry, first);
        return r < 0 ? r : sd_event_source_set_enabled(srv->parked_expiry, SD_EVENT_ONESHOT);
}

/* Hold c's read of j, which has not started, for wait_ms. Returns 0 or -errno. */
static int park(ctl_server *srv, conn *c, const job *j, const cJSON *msg, int64_t wait_ms) {
        struct out_parked *grown = realloc(srv->parked, (srv->nparked + 1) * sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        srv->parked = grown;
        cJSON *copy = cJSON_Duplicate(msg, true);
        if (!copy)
                return -ENOMEM;
        srv->parked[srv->nparked++] = (struct out_parked){
                .client = c, .msg = copy, .job = j->id, .deadline_usec = clock_mono_usec() + (uint64_t)wait_ms * 1000
        };
        int r = arm_expiry(srv);
        if (r < 0)
                cJSON_Delete(unpark(srv, srv->nparked - 1).msg);
        return r;
}

static int on_parked_expiry(sd_event_source *s, uint64_t usec, void *userdata) {
        ctl_server *srv = userdata;
        (void)s;
        for (size_t i = 0; i < srv->nparked;) {
                if (srv->parked[i].deadline_usec > usec) {
                        i++;
                        continue;
                }
                struct out_parked p = unpark(srv, i);
                const job *j = ctl_find_job(&srv->state, p.job);
                if (j)
                        reply_empty(p.client, j, NULL); /* still not started: the follower asks again */
                else
                        conn_reply(p.client, proto_error("no job %llu", (unsigned long long)p.job));
                cJSON_Delete(p.msg);
        }
        int r = arm_expiry(srv);
        if (r < 0)
                log_errno(LOG_ERR, r, "output: cannot arm the parked reads' timer");
        return 0;
}

void server_output_job_event(ctl_server *srv, uint64_t id) {
        const job *j = srv->nparked ? ctl_find_job(&srv->state, id) : NULL;
        if (!srv->nparked || (j && !j->start_usec && !job_state_is_terminal(j->state)))
                return; /* no read held (the usual case, at every event of a storm), or this job still waits */
        for (size_t i = 0; i < srv->nparked;) {
                if (srv->parked[i].job != id) {
                        i++;
                        continue;
                }
                struct out_parked p = unpark(srv, i);
                server_handle_output(srv, p.client, p.msg); /* as if asked now: it is not held again */
                cJSON_Delete(p.msg);
        }
}

void server_handle_output(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const fields[] = { "id", "out_offset", "err_offset", "wait_ms", NULL };
        char err[PROTO_ERRLEN];
        int64_t id, off, wait_ms = 0;
        if (proto_check_fields(msg, fields, err) < 0 || proto_get_int(msg, "id", 1, INT64_MAX, &id, err) < 0 ||
            proto_get_int(msg, "out_offset", 0, INT64_MAX, &off, err) == -EINVAL ||
            proto_get_int(msg, "err_offset", 0, INT64_MAX, &off, err) == -EINVAL ||
            proto_get_int(msg, "wait_ms", 0, OUTPUT_WAIT_MAX_MS, &wait_ms, err) == -EINVAL) {
                conn_reply(c, proto_error("%s", err));
                return;
        }
        if (conn_unsent(c) > OUTPUT_ANSWER_MAX) {
                conn_fail(c, "output: ask again only after reading the last answer");
                return;
        }
        if (pending_of(srv, c) >= 0 || parked_of(srv, c) >= 0) {
                conn_reply(c, proto_error("output: one request at a time, on a connection"));
                return;
        }
        const job *j = ctl_find_job(&srv->state, (uint64_t)id);
        if (!j || (c->uid != 0 && c->uid != j->uid)) { /* another user's job: as if it did not exist */
                conn_reply(c, proto_error("no job %lld%s", (long long)id, j ? " of yours" : ""));
                return;
        }
        if (!j->node || !j->start_usec) {
                bool ended = job_state_is_terminal(j->state);
                if (ended || wait_ms == 0 || park(srv, c, j, msg, wait_ms) < 0)
                        reply_empty(c, j, ended ? "it never started: no output" : NULL);
                return;
        }
        ctl_node *n = ctl_find_node(&srv->state, j->node);
        if (!n || !n->link) {
                snprintf(err, sizeof(err), "job %llu: its node %s is not connected", (unsigned long long)j->id,
                         j->node);
                reply_empty(c, j, err);
                return;
        }
        if (pending_on(srv, n) >= OUTPUT_PER_NODE_MAX) {
                snprintf(err, sizeof(err), "busy: %d output reads in progress on node %s", OUTPUT_PER_NODE_MAX,
                         n->name);
                reply_empty(c, j, err);
                return;
        }
        struct out_pending *grown = realloc(srv->outputs, (srv->noutputs + 1) * sizeof(*grown));
        cJSON *req = grown ? read_request(j, ++srv->output_tag, msg, wait_ms) : NULL;
        if (grown)
                srv->outputs = grown;
        if (!req || conn_send(n->link, req) < 0) {
                cJSON_Delete(req);
                conn_reply(c, proto_error("out of memory"));
                return;
        }
        cJSON_Delete(req);
        srv->outputs[srv->noutputs++] = (struct out_pending){
                .tag = srv->output_tag, .client = c, .node = n, .job = j->id, .ended = job_state_is_terminal(j->state)
        };
}

void server_output_answer(ctl_server *srv, ctl_node *n, const cJSON *msg) {
        static const char *const copied[] = { "out", "err", "out_eof", "err_eof", "error" };
        char err[PROTO_ERRLEN];
        int64_t tag;
        ssize_t i = -1;
        if (proto_get_int(msg, "tag", 1, INT64_MAX, &tag, err) < 0) {
                log_warning("node=%s output: %s", n->name, err);
                return;
        }
        for (size_t k = 0; k < srv->noutputs && i < 0; k++)
                if (srv->outputs[k].tag == (uint64_t)tag && srv->outputs[k].node == n)
                        i = (ssize_t)k;
        if (i < 0)
                return; /* its client has gone */
        struct out_pending p = srv->outputs[i];
        take_out(srv, (size_t)i);
        const job *j = ctl_find_job(&srv->state, p.job);
        /* The node read after the job's end (its "finished" came first, on the same link): the
         * bytes are its last, as if the read had been asked after the end. */
        bool terminal = j && job_state_is_terminal(j->state),
             ended = p.ended || (terminal && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(msg, "ended")));
        cJSON *out = proto_new("output");
        bool ok = out && j && cJSON_AddNumberToObject(out, "id", (double)p.job) &&
                  cJSON_AddStringToObject(out, "state", job_state_name(j->state)) &&
                  cJSON_AddBoolToObject(out, "ended", ended);
        for (size_t k = 0; ok && k < sizeof(copied) / sizeof(copied[0]); k++) {
                const cJSON *item = cJSON_GetObjectItemCaseSensitive(msg, copied[k]);
                ok = !item || cJSON_AddItemToObject(out, copied[k], cJSON_Duplicate(item, false));
        }
        /* The follower asks no more after an error, or once all is read after the end. */
        if (ok && terminal && (cJSON_GetObjectItemCaseSensitive(msg, "error") || proto_output_all_read(msg, ended)))
                ok = add_record(out, j);
        if (!ok)
                cJSON_Delete(out);
        conn_reply(p.client, ok ? out : proto_error("out of memory"));
}

void server_output_forget(ctl_server *srv, conn *c) {
        ssize_t i = pending_of(srv, c);
        if (i >= 0)
                take_out(srv, (size_t)i);
        if ((i = parked_of(srv, c)) >= 0)
                cJSON_Delete(unpark(srv, (size_t)i).msg);
}

void server_output_node_gone(ctl_server *srv, ctl_node *n) {
        for (size_t i = 0; i < srv->noutputs;) {
                if (srv->outputs[i].node != n) {
                        i++;
                        continue;
                }
                struct out_pending p = srv->outputs[i];
                const job *j = ctl_find_job(&srv->state, p.job);
                char err[PROTO_ERRLEN];
                take_out(srv, i);
                snprintf(err, sizeof(err), "job %llu: its node %s went away", (unsigned long long)p.job, n->name);
                if (j)
                        reply_empty(p.client, j, err);
        }
}

void server_output_close(ctl_server *srv) {
        free(srv->outputs);
        srv->outputs = NULL;
        srv->noutputs = 0;
        while (srv->nparked)
                cJSON_Delete(unpark(srv, 0).msg);
        free(srv->parked);
        srv->parked = NULL;
        srv->parked_expiry = sd_event_source_disable_unref(srv->parked_expiry);
}
