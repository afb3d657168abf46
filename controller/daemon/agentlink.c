/* agentlink.c - messages from colony-agent on the TCP listener (docs/protocol.md, "Agent link").
 * The controller speaks first, with a challenge; the first message back must be a hello that
 * proves the agent knows the secret (auth.h); anything else closes the link. */
#include "agentlink.h"
#include "server.h"
#include "agentmsg.h"
#include "log.h"
#include "commit.h"
#include "outrelay.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void send_cancel(ctl_node *n, uint64_t id, int grace_ms) {
        cJSON *msg = proto_new("cancel");
        if (msg &&
            (!cJSON_AddNumberToObject(msg, "id", (double)id) || !cJSON_AddNumberToObject(msg, "grace_ms", grace_ms))) {
                cJSON_Delete(msg);
                msg = NULL;
        }
        if (!msg || !n->link || conn_send(n->link, msg) < 0)
                log_error("job=%llu node=%s could not send cancel", (unsigned long long)id, n->name);
        cJSON_Delete(msg);
}

/* A job the agent runs that the controller does not have running there (it was lost, requeued,
 * or cancelled while the two were apart) must not run on unaccounted: the agent stops it, and
 * the state machine holds it as the node's stray until its end is reported. */
static void cancel_strays(ctl_server *srv, ctl_node *n, const uint64_t *ids, size_t nids) {
        for (size_t i = 0; i < nids; i++)
                if (!ctl_job_runs_on(&srv->state, n, ids[i])) {
                        log_warning("job=%llu node=%s runs there unaccounted: cancelling it",
                                    (unsigned long long)ids[i], n->name);
                        send_cancel(n, ids[i], srv->state.cfg.kill_grace_ms);
                }
}

/* Jobs the controller has running on n that its agent's hello did not list either ended while
 * the two were apart (their reports follow the hello) or never reached it: a launch lost with a
 * killed controller or agent. Launch them again, as the same attempt: the agent starts only what
 * it never had (it ignores a launch of an attempt it runs or has a report of), and a start
 * confirms the job before the reconnect window loses it. */
static void relaunch_unconfirmed(ctl_server *srv, ctl_node *n) {
        for (size_t i = 0; i < n->nunconfirmed; i++) {
                const job *j = ctl_find_job(&srv->state, n->unconfirmed[i]);
                if (j && ctl_job_runs_on(&srv->state, n, j->id)) {
                        log_info("job=%llu node=%s not listed by its agent: launching it again in case it never "
                                 "arrived",
                                 (unsigned long long)j->id, n->name);
                        server_send_launch(srv, n, j);
                }
        }
}

/* A stranger's link: refused at once when AGENT_PREAUTH_MAX others are, else counted, given
 * AGENT_HELLO_DEADLINE_MS and only AGENT_PREAUTH_INPUT_MAX bytes until its hello proves the
 * secret. Returns false when refused (closed). */
static bool admit_stranger(ctl_server *srv, conn *c) {
        unsigned missed;
        if (srv->npreauth >= AGENT_PREAUTH_MAX) {
                if (log_ratelimit_ok(&srv->preauth_refused, &missed))
                        log_warning("agent link fd=%d refused: %d links have not authenticated yet (%u more refused "
                                    "since the last such line)",
                                    c->fd, AGENT_PREAUTH_MAX, missed);
                conn_close(c);
                return false;
        }
        int r = conn_set_deadline(c, AGENT_HELLO_DEADLINE_MS, "hello");
        if (r < 0) {
                log_errno(LOG_ERR, r, "agent link fd=%d: cannot set its hello deadline", c->fd);
                conn_close(c);
                return false;
        }
        srv->npreauth++;
        c->input_max = AGENT_PREAUTH_INPUT_MAX;
        return true;
}

/* The link proved the secret: no more stranger's limits. */
static void trust(ctl_server *srv, conn *c) {
        srv->npreauth--;
        c->input_max = 0;
        (void)conn_set_deadline(c, 0, NULL);
}

/* A new agent link: send it the nonce its hello must answer. */
static void agent_opened(conn *c) {
        if (!admit_stranger(c->owner, c))
                return;
        cJSON *msg = proto_new("challenge");
        int r = auth_nonce(c->challenge);
        if (r < 0 || !msg || !cJSON_AddStringToObject(msg, "nonce", c->challenge)) {
                log_errno(LOG_ERR, r < 0 ? r : -ENOMEM, "agent link fd=%d: cannot send a challenge", c->fd);
                conn_close(c);
        } else
                (void)conn_send(c, msg); /* a failure is logged there and closes the link (a TLS handshake
                                          * may already have failed) */
        cJSON_Delete(msg);
}

/* Whether hello answers this link's challenge: its proof is HMAC(secret, challenge, its nonce,
 * its name). On success *nonce is the agent's, for the welcome's own proof. */
static bool hello_proves_secret(ctl_server *srv, conn *c, const cJSON *msg, const char **nonce) {
        char err[PROTO_ERRLEN], want[AUTH_HEX_LEN + 1];
        const char *proof = NULL, *name = NULL;
        return proto_get_str(msg, "nonce", nonce, err) == 0 && proto_get_str(msg, "proof", &proof, err) == 0 &&
               proto_get_str(msg, "name", &name, err) == 0 &&
               auth_proof(srv->secret, AUTH_AGENT, c->challenge, *nonce, name, want) == 0 && auth_equal(proof, want);
}

static void handle_hello(ctl_server *srv, conn *c, const cJSON *msg) {
        char err[PROTO_ERRLEN], proof[AUTH_HEX_LEN + 1];
        const char *nonce = NULL;
        agent_hello h;
        ctl_node *n;
        if (!hello_proves_secret(srv, c, msg, &nonce)) {
                log_warning("agent link fd=%d refused: its hello does not prove the secret", c->fd);
                conn_fail(c, "authentication failed: wrong secret");
                return;
        }
        if (agentmsg_hello(msg, &h, err) < 0 ||
            ctl_node_up(&srv->state, h.name, h.capacity, h.cgroup_mode, h.cgroup_root, h.running, h.nrunning, c,
                        server_clock(), &n, err) < 0) {
                free(h.running);
                log_warning("agent link fd=%d refused: %s", c->fd, err);
                conn_fail(c, err);
                return;
        }
        c->data = n;
        if (ctl_node_set_gpu_type(&srv->state, n, h.features, h.gpu_type) < 0)
                log_error("node=%s: out of memory for its features: it is offered jobs as if it had none", h.name);
        trust(srv, c);
        cJSON *welcome = proto_new("welcome");
        if (welcome && (auth_proof(srv->secret, AUTH_CONTROLLER, c->challenge, nonce, h.name, proof) < 0 ||
                        !cJSON_AddStringToObject(welcome, "proof", proof) ||
                        !cJSON_AddNumberToObject(welcome, "heartbeat_ms", srv->heartbeat_ms))) {
                cJSON_Delete(welcome);
                welcome = NULL;
        }
        if (!welcome || conn_send(c, welcome) < 0) {
                log_error("node=%s: cannot send the welcome: closing the link", h.name);
                conn_close(c); /* its agent comes back with a new hello */
                cJSON_Delete(welcome);
                free(h.running);
                return;
        }
        cJSON_Delete(welcome);
        cancel_strays(srv, n, h.running, h.nrunning);
        relaunch_unconfirmed(srv, n);
        free(h.running);
        server_schedule(srv);
}

/* The "attempt" of an agent's report (1 when absent: an agent that predates requeues). Returns 0
 * or -EINVAL with err set. */
static int report_attempt(const cJSON *msg, int64_t *attempt, char err[PROTO_ERRLEN]) {
        *attempt = 1;
        return proto_get_int(msg, "attempt", 1, UINT32_MAX, attempt, err) == -EINVAL ? -EINVAL : 0;
}

/* Whether a report about job id from n concerns an earlier run than the job's current one (it
 * was requeued meanwhile): such a report must not touch the new run. */
static bool stale_report(ctl_server *srv, ctl_node *n, int64_t id, int64_t attempt, const char *what) {
        const job *j = ctl_find_job(&srv->state, (uint64_t)id);
        if (!j || ctl_job_attempt(j) == (uint32_t)attempt)
                return false;
        log_info("job=%lld node=%s %s of attempt %lld, not the current %u: ignored", (long long)id, n->name, what,
                 (long long)attempt, ctl_job_attempt(j));
        return true;
}

static void handle_started(ctl_server *srv, ctl_node *n, const cJSON *msg, char err[PROTO_ERRLEN]) {
        static const char *const fields[] = { "id", "attempt", "pid", "start_usec", "gpu_ids", NULL };
        int64_t id, start, attempt;
        const char *gpu_ids = NULL;
        if (proto_check_fields(msg, fields, err) < 0 || proto_get_int(msg, "id", 1, INT64_MAX, &id, err) < 0 ||
            proto_get_int(msg, "start_usec", 0, INT64_MAX, &start, err) < 0 || report_attempt(msg, &attempt, err) < 0 ||
            proto_get_str(msg, "gpu_ids", &gpu_ids, err) == -EINVAL)
                log_warning("node=%s bad started message: %s", n->name, err);
        else if (stale_report(srv, n, id, attempt, "start"))
                return;
        else if (ctl_job_set_gpus(&srv->state, n, (uint64_t)id, gpu_ids) == -ENOENT ||
                 ctl_job_started(&srv->state, n, (uint64_t)id, start) < 0) {
                /* An agent resends every running job's start after its welcome, strays included. */
                if (ctl_node_has_stray(n, (uint64_t)id))
                        log_debug("node=%s job=%lld: a stray's start, resent: it was told to stop", n->name,
                                  (long long)id);
                else
                        log_warning("node=%s job=%lld started, but it is not running there: ignored", n->name,
                                    (long long)id);
        }
}

/* The CPU time job id used since its last sample (before: its cpu_usec then), for `shares`. */
static void note_cpu(ctl_server *srv, uint64_t id, uint64_t before) {
        const job *j = ctl_find_job(&srv->state, id);
        if (j && j->result.cpu_usec > before &&
            cpuwin_add(&srv->cpu, j->spec.group, (int64_t)(j->result.cpu_usec - before), server_now()) < 0)
                log_warning("job=%llu: out of memory counting its CPU time", (unsigned long long)id);
}

/* The job's CPU time so far (0 for an unknown id). */
static uint64_t cpu_so_far(ctl_server *srv, int64_t id) {
        const job *j = ctl_find_job(&srv->state, (uint64_t)id);
        return j ? j->result.cpu_usec : 0;
}

/* Tell the agent its report is stored (or was not needed): it may forget it. */
static void send_ack(ctl_node *n, int64_t id, int64_t attempt) {
        cJSON *msg = proto_new("ack");
        if (!msg || !cJSON_AddNumberToObject(msg, "id", (double)id) ||
            !cJSON_AddNumberToObject(msg, "attempt", (double)attempt) || !n->link || conn_send(n->link, msg) < 0)
                log_warning("job=%lld node=%s could not acknowledge its report: it will come again", (long long)id,
                            n->name);
        cJSON_Delete(msg);
}

static void handle_finished(ctl_server *srv, ctl_node *n, const cJSON *msg, char err[PROTO_ERRLEN]) {
        static const char *const fields[] = { "id",       "attempt",  "state",     "exit_code",  "signal",
                                              "cpu_usec", "mem_peak", "oom_kills", "io_rbytes",  "io_wbytes",
                                              "psi",      "error",    "end_usec",  "start_usec", NULL };
        int64_t id, attempt, end = server_now(), start = 0;
        const char *state_name;
        job_state state;
        job_result res = { 0 };
        if (proto_check_fields(msg, fields, err) < 0 || proto_get_int(msg, "id", 1, INT64_MAX, &id, err) < 0 ||
            proto_get_str(msg, "state", &state_name, err) < 0 || job_state_from_name(state_name, &state) < 0 ||
            proto_get_int(msg, "end_usec", 0, INT64_MAX, &end, err) == -EINVAL ||
            proto_get_int(msg, "start_usec", 0, INT64_MAX, &start, err) == -EINVAL ||
            report_attempt(msg, &attempt, err) < 0 || job_result_from_json(msg, &res, err) < 0) {
                log_warning("node=%s bad finished message: %s", n->name, err);
                job_result_free(&res);
                return;
        }
        uint64_t before = cpu_so_far(srv, id);
        if (stale_report(srv, n, id, attempt, "end"))
                ctl_stray_ended(&srv->state, n, (uint64_t)id);
        else {
                /* The start comes with the end when its own report may have died unread with an
                 * earlier agent: heard first now, it is the job's (once, as any start). */
                if (start > 0)
                        (void)ctl_job_started(&srv->state, n, (uint64_t)id, start);
                if (ctl_job_finished(&srv->state, n, (uint64_t)id, state, &res, end) == 0)
                        note_cpu(srv, (uint64_t)id, before);
                else
                        log_info("node=%s job=%lld finished as %s, but it is not running there: ignored", n->name,
                                 (long long)id, state_name);
        }
        job_result_free(&res);
        send_ack(n, id, attempt);
        server_schedule(srv);
}

/* A usage report: each running job's counters and pressure, and the host's pressure. */
static void handle_usage(ctl_server *srv, ctl_node *n, const cJSON *msg, char err[PROTO_ERRLEN]) {
        static const char *const fields[] = { "jobs", "psi", NULL };
        static const char *const entry_fields[] = { "id",       "attempt",   "cpu_usec",  "mem_current",
                                                    "mem_peak", "oom_kills", "io_rbytes", "io_wbytes",
                                                    "psi",      "gpu_util",  "gpu_mem",   NULL };
        const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(msg, "jobs"), *e;
        psi_stats host;
        if (proto_check_fields(msg, fields, err) < 0 || !cJSON_IsArray(jobs) || psi_from_json(msg, &host, err) < 0) {
                log_warning("node=%s bad usage message: %s", n->name, *err ? err : "no jobs array");
                return;
        }
        n->psi = host;
        cJSON_ArrayForEach(e, jobs) {
                int64_t id, cur = 0, attempt;
                job_result sample;
                if (proto_check_fields(e, entry_fields, err) < 0 ||
                    proto_get_int(e, "id", 1, INT64_MAX, &id, err) < 0 ||
                    proto_get_int(e, "mem_current", 0, INT64_MAX, &cur, err) == -EINVAL ||
                    report_attempt(e, &attempt, err) < 0 || job_result_from_json(e, &sample, err) < 0) {
                        log_warning("node=%s bad usage entry: %s", n->name, err);
                        continue;
                }
                sample.mem_current = (uint64_t)cur;
                uint64_t before = cpu_so_far(srv, id);
                if (!stale_report(srv, n, id, attempt, "usage") &&
                    ctl_job_usage(&srv->state, n, (uint64_t)id, &sample) == 0) /* it may have just ended */
                        note_cpu(srv, (uint64_t)id, before);
                job_result_free(&sample);
        }
}

static void agent_message(conn *c, const cJSON *msg) {
        ctl_server *srv = c->owner;
        ctl_node *n = c->data;
        const char *type = proto_type(msg);
        char err[PROTO_ERRLEN] = "";
        if (!n) {
                if (strcmp(type, "hello") == 0)
                        handle_hello(srv, c, msg);
                else
                        conn_fail(c, "authentication required: send hello first");
                return;
        }
        if (ctl_node_heard(&srv->state, n, server_clock()))
                server_schedule(srv); /* it was not-responding: it takes jobs again */
        if (strcmp(type, "heartbeat") == 0)
                return;
        if (strcmp(type, "started") == 0)
                handle_started(srv, n, msg, err);
        else if (strcmp(type, "finished") == 0)
                handle_finished(srv, n, msg, err);
        else if (strcmp(type, "usage") == 0)
                handle_usage(srv, n, msg, err);
        else if (strcmp(type, "output") == 0)
                server_output_answer(srv, n, msg);
        else
                log_warning("node=%s unknown message type '%.64s': ignored", n->name, type);
}

static void agent_closed(conn *c) {
        ctl_server *srv = c->owner;
        ctl_node *n = c->data;
        if (c->input_max)
                srv->npreauth--; /* a stranger's, counted by admit_stranger */
        if (!n || n->link != c)
                return;
        server_output_node_gone(srv, n);
        ctl_node_disconnected(&srv->state, n);
        server_schedule(srv);
}

void server_drop_link(ctl_server *srv, ctl_node *n, conn *c) {
        log_warning("node=%s agent link fd=%d closed: the agent went silent", n->name, c->fd);
        c->data = NULL; /* no longer the node's: its close changes nothing */
        server_output_node_gone(srv, n);
        conn_fail(c, "closed: the agent went silent; say hello again");
}

static void send_to(ctl_node *n, cJSON *msg, const job *j, const char *what) {
        if (!msg || !n->link || conn_send(n->link, msg) < 0)
                log_error("job=%llu node=%s could not send %s", (unsigned long long)j->id, n->name, what);
        cJSON_Delete(msg);
}

/* The weight of each level of the job's group, for the agent's department cgroups. */
static int add_dept_weights(ctl_server *srv, const char *group, cJSON *msg) {
        double w[JOB_GROUP_LEVELS_MAX];
        long n = group ? depts_weights(&srv->depts, group, w, JOB_GROUP_LEVELS_MAX) : 0;
        cJSON *arr = n > 0 ? cJSON_AddArrayToObject(msg, "dept_weights") : NULL;
        if (n < 0 || (n > 0 && !arr))
                return -EINVAL;
        for (long i = 0; i < n; i++)
                if (!cJSON_AddItemToArray(arr, cJSON_CreateNumber(w[i])))
                        return -ENOMEM;
        return 0;
}

/* Set an array member's COLONY_ARRAY_INDEX in *env (its array's, read from the store), in place
 * of any it inherited from a submitter that was itself an array's job. Returns 0 or -ENOMEM. */
static int set_array_index(const job *j, char ***env) {
        char index[16];
        if (!j->array_first)
                return 0;
        snprintf(index, sizeof(index), "%u", j->array_index);
        return job_env_set(env, JOB_ARRAY_INDEX_VAR, index, true);
}

void server_send_launch(ctl_server *srv, ctl_node *n, const job *j) {
        cJSON *msg = proto_new("launch");
        job_spec spec = j->spec;
        /* the environment waits in the store; without it the job still runs, with an empty one */
        if (jobstore_get_env(srv->store, j->id, &spec.env) < 0)
                log_error("job=%llu node=%s launched with an empty environment", (unsigned long long)j->id, n->name);
        if (set_array_index(j, &spec.env) < 0) {
                cJSON_Delete(msg);
                msg = NULL; /* send_to logs it */
        }
        if (msg && (job_spec_to_json(&spec, msg) < 0 || add_dept_weights(srv, j->spec.group, msg) < 0 ||
                    !cJSON_AddNumberToObject(msg, "id", (double)j->id) ||
                    !cJSON_AddNumberToObject(msg, "attempt", ctl_job_attempt(j)) ||
                    !cJSON_AddNumberToObject(msg, "uid", j->uid) || !cJSON_AddNumberToObject(msg, "gid", j->gid) ||
                    !cJSON_AddStringToObject(msg, "user", j->user ? j->user : "") ||
                    (j->array_first && (!cJSON_AddNumberToObject(msg, "array_first", (double)j->array_first) ||
                                        !cJSON_AddNumberToObject(msg, "array_index", j->array_index))))) {
                cJSON_Delete(msg);
                msg = NULL;
        }
        strv_free(spec.env);
        send_to(n, msg, j, "launch");
}

/* {"type":"weights","depts":[{"group":path,"dept_weights":[...]}...]} for every department. */
static cJSON *weights_message(ctl_server *srv) {
        cJSON *msg = proto_new("weights"), *arr = msg ? cJSON_AddArrayToObject(msg, "depts") : NULL;
        for (size_t i = 0; arr && i < srv->depts.n; i++) {
                cJSON *e = cJSON_CreateObject();
                if (!e || !cJSON_AddItemToArray(arr, e) || !cJSON_AddStringToObject(e, "group", srv->depts.v[i].path) ||
                    add_dept_weights(srv, srv->depts.v[i].path, e) < 0)
                        arr = NULL;
        }
        if (!arr) {
                cJSON_Delete(msg);
                return NULL;
        }
        return msg;
}

void server_send_weights(ctl_server *srv) {
        cJSON *msg = weights_message(srv);
        for (size_t i = 0; i < srv->state.nnodes; i++) {
                ctl_node *n = srv->state.nodes[i];
                if (n->up && n->link && (!msg || conn_send(n->link, msg) < 0))
                        log_error("node=%s: could not send the new department weights", n->name);
        }
        cJSON_Delete(msg);
}

void server_send_cancel(ctl_server *srv, ctl_node *n, const job *j, int grace_ms) {
        (void)srv;
        send_cancel(n, j->id, grace_ms);
}

const conn_ops agent_conn_ops = { .on_open = agent_opened,
                                  .on_message = agent_message,
                                  .on_close = agent_closed,
                                  .held = server_output_held,
                                  .held_list = server_held_list };
