/* agentlink.c - messages from colony-agent on the TCP listener (docs/protocol.md, "Agent link").
 * The first message must be a hello with the shared secret; anything else closes the link. */
#include "server.h"
#include "log.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Compare in time independent of where the strings differ, so the secret cannot be guessed
 * byte by byte from response times. */
static bool secret_equal(const char *a, const char *b) {
        size_t la = strlen(a), lb = strlen(b);
        unsigned char diff = la != lb;
        for (size_t i = 0; i < la; i++)
                diff |= (unsigned char)(a[i] ^ b[i % (lb ? lb : 1)]);
        return diff == 0;
}

static const char *const hello_fields[] = { "name", "secret", "mcpu", "mem", "pids", "cgroup_mode",
                                            "cgroup_root", "running", NULL };

/* Read hello's "running" list. Returns the count, or -EINVAL with err set. */
static long running_ids(const cJSON *msg, uint64_t **ids, char err[PROTO_ERRLEN]) {
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(msg, "running"), *item;
        *ids = NULL;
        if (!arr)
                return 0;
        if (!cJSON_IsArray(arr)) {
                snprintf(err, PROTO_ERRLEN, "running: must be an array of job ids");
                return -EINVAL;
        }
        *ids = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(**ids));
        long n = 0;
        cJSON_ArrayForEach(item, arr) {
                if (!*ids || !cJSON_IsNumber(item) || item->valuedouble < 1) {
                        snprintf(err, PROTO_ERRLEN, "running: must be an array of job ids");
                        free(*ids);
                        return -EINVAL;
                }
                (*ids)[n++] = (uint64_t)item->valuedouble;
        }
        return n;
}

static int parse_hello(const cJSON *msg, const char **name, res_t *cap, const char **mode, const char **root,
                       char err[PROTO_ERRLEN]) {
        int r;
        *mode = *root = "";
        *cap = (res_t){ 0 };
        if ((r = proto_check_fields(msg, hello_fields, err)) < 0 || (r = proto_get_str(msg, "name", name, err)) < 0 ||
            (r = proto_get_int(msg, "mcpu", 1, RES_MCPU_MAX, &cap->mcpu, err)) < 0 ||
            (r = proto_get_int(msg, "mem", 1, RES_MEM_MAX, &cap->mem, err)) < 0)
                return r == -ENOENT ? (snprintf(err, PROTO_ERRLEN, "hello needs name, mcpu and mem"), -EINVAL) : r;
        if (((r = proto_get_int(msg, "pids", 0, RES_PIDS_MAX, &cap->pids, err)) < 0 && r != -ENOENT) ||
            ((r = proto_get_str(msg, "cgroup_mode", mode, err)) < 0 && r != -ENOENT) ||
            ((r = proto_get_str(msg, "cgroup_root", root, err)) < 0 && r != -ENOENT))
                return r;
        return 0;
}

static void send_cancel(ctl_node *n, uint64_t id, int grace_ms) {
        cJSON *msg = proto_new("cancel");
        if (msg && (!cJSON_AddNumberToObject(msg, "id", (double)id) ||
                    !cJSON_AddNumberToObject(msg, "grace_ms", grace_ms))) {
                cJSON_Delete(msg);
                msg = NULL;
        }
        if (!msg || !n->link || conn_send(n->link, msg) < 0)
                log_error("job=%llu node=%s could not send cancel", (unsigned long long)id, n->name);
        cJSON_Delete(msg);
}

/* A job the agent runs that the controller does not have running there (it was lost, or
 * cancelled while the two were apart) must not run on unaccounted: the agent stops it. */
static void cancel_strays(ctl_server *srv, ctl_node *n, const uint64_t *ids, size_t nids) {
        for (size_t i = 0; i < nids; i++)
                if (!ctl_job_runs_on(&srv->state, n, ids[i])) {
                        log_warning("job=%llu node=%s runs there unaccounted: cancelling it", (unsigned long long)ids[i],
                                    n->name);
                        send_cancel(n, ids[i], srv->state.cfg.kill_grace_ms);
                }
}

static void handle_hello(ctl_server *srv, conn *c, const cJSON *msg) {
        char err[PROTO_ERRLEN];
        const char *secret = NULL, *name, *mode, *root;
        res_t cap;
        uint64_t *ids = NULL;
        ctl_node *n;
        if (proto_get_str(msg, "secret", &secret, err) < 0 || !secret_equal(secret, srv->secret)) {
                log_warning("agent link fd=%d refused: wrong secret", c->fd);
                conn_fail(c, "authentication failed: wrong secret");
                return;
        }
        int r = parse_hello(msg, &name, &cap, &mode, &root, err);
        long nids = r < 0 ? r : running_ids(msg, &ids, err);
        if (nids < 0 || ctl_node_up(&srv->state, name, cap, mode, root, ids, (size_t)nids, c, server_clock(), &n,
                                    err) < 0) {
                free(ids);
                log_warning("agent link fd=%d refused: %s", c->fd, err);
                conn_fail(c, err);
                return;
        }
        c->data = n;
        cJSON *welcome = proto_new("welcome");
        if (welcome)
                cJSON_AddNumberToObject(welcome, "heartbeat_ms", srv->heartbeat_ms);
        (void)conn_send(c, welcome);
        cJSON_Delete(welcome);
        cancel_strays(srv, n, ids, (size_t)nids);
        free(ids);
        server_schedule(srv);
}

static void handle_started(ctl_server *srv, ctl_node *n, const cJSON *msg, char err[PROTO_ERRLEN]) {
        static const char *const fields[] = { "id", "pid", "start_usec", NULL };
        int64_t id, start;
        if (proto_check_fields(msg, fields, err) < 0 || proto_get_int(msg, "id", 1, INT64_MAX, &id, err) < 0 ||
            proto_get_int(msg, "start_usec", 0, INT64_MAX, &start, err) < 0)
                log_warning("node=%s bad started message: %s", n->name, err);
        else if (ctl_job_started(&srv->state, n, (uint64_t)id, start) < 0)
                log_warning("node=%s job=%lld started, but it is not running there: ignored", n->name, (long long)id);
}

static void handle_finished(ctl_server *srv, ctl_node *n, const cJSON *msg, char err[PROTO_ERRLEN]) {
        static const char *const fields[] = { "id", "state", "exit_code", "signal", "cpu_usec", "mem_peak",
                                              "oom_kills", "error", "end_usec", NULL };
        int64_t id, end = server_now();
        const char *state_name;
        job_state state;
        job_result res = { 0 };
        if (proto_check_fields(msg, fields, err) < 0 || proto_get_int(msg, "id", 1, INT64_MAX, &id, err) < 0 ||
            proto_get_str(msg, "state", &state_name, err) < 0 || job_state_from_name(state_name, &state) < 0 ||
            proto_get_int(msg, "end_usec", 0, INT64_MAX, &end, err) == -EINVAL ||
            job_result_from_json(msg, &res, err) < 0) {
                log_warning("node=%s bad finished message: %s", n->name, err);
                job_result_free(&res);
                return;
        }
        if (ctl_job_finished(&srv->state, n, (uint64_t)id, state, &res, end) < 0)
                log_warning("node=%s job=%lld finished as %s, but it is not running there: ignored", n->name,
                            (long long)id, state_name);
        job_result_free(&res);
        server_schedule(srv);
}

static void handle_usage(ctl_server *srv, ctl_node *n, const cJSON *msg, char err[PROTO_ERRLEN]) {
        static const char *const fields[] = { "jobs", NULL };
        static const char *const entry_fields[] = { "id", "cpu_usec", "mem_current", "mem_peak", "oom_kills", NULL };
        const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(msg, "jobs"), *e;
        if (proto_check_fields(msg, fields, err) < 0 || !cJSON_IsArray(jobs)) {
                log_warning("node=%s bad usage message: %s", n->name, *err ? err : "no jobs array");
                return;
        }
        cJSON_ArrayForEach(e, jobs) {
                int64_t id, cpu = 0, cur = 0, peak = 0, ooms = 0;
                if (proto_check_fields(e, entry_fields, err) < 0 || proto_get_int(e, "id", 1, INT64_MAX, &id, err) < 0 ||
                    proto_get_int(e, "cpu_usec", 0, INT64_MAX, &cpu, err) == -EINVAL ||
                    proto_get_int(e, "mem_current", 0, INT64_MAX, &cur, err) == -EINVAL ||
                    proto_get_int(e, "mem_peak", 0, INT64_MAX, &peak, err) == -EINVAL ||
                    proto_get_int(e, "oom_kills", 0, INT64_MAX, &ooms, err) == -EINVAL) {
                        log_warning("node=%s bad usage entry: %s", n->name, err);
                        continue;
                }
                job_result sample = { .cpu_usec = (uint64_t)cpu, .mem_current = (uint64_t)cur,
                                      .mem_peak = (uint64_t)peak, .oom_kills = (uint64_t)ooms };
                (void)ctl_job_usage(&srv->state, n, (uint64_t)id, &sample); /* it may have just ended */
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
        ctl_node_heard(n, server_clock());
        if (strcmp(type, "heartbeat") == 0)
                return;
        if (strcmp(type, "started") == 0)
                handle_started(srv, n, msg, err);
        else if (strcmp(type, "finished") == 0)
                handle_finished(srv, n, msg, err);
        else if (strcmp(type, "usage") == 0)
                handle_usage(srv, n, msg, err);
        else
                log_warning("node=%s unknown message type '%.64s': ignored", n->name, type);
}

static void agent_closed(conn *c) {
        ctl_server *srv = c->owner;
        ctl_node *n = c->data;
        if (!n || n->link != c)
                return;
        ctl_node_disconnected(&srv->state, n);
        server_schedule(srv);
}

static void send_to(ctl_node *n, cJSON *msg, const job *j, const char *what) {
        if (!msg || !n->link || conn_send(n->link, msg) < 0)
                log_error("job=%llu node=%s could not send %s", (unsigned long long)j->id, n->name, what);
        cJSON_Delete(msg);
}

void server_send_launch(ctl_server *srv, ctl_node *n, const job *j) {
        cJSON *msg = proto_new("launch");
        job_spec spec = j->spec;
        /* the environment waits in the store; without it the job still runs, with an empty one */
        if (jobstore_get_env(srv->store, j->id, &spec.env) < 0)
                log_error("job=%llu node=%s launched with an empty environment", (unsigned long long)j->id, n->name);
        if (msg && (job_spec_to_json(&spec, msg) < 0 || !cJSON_AddNumberToObject(msg, "id", (double)j->id) ||
                    !cJSON_AddNumberToObject(msg, "uid", j->uid) || !cJSON_AddNumberToObject(msg, "gid", j->gid) ||
                    !cJSON_AddStringToObject(msg, "user", j->user ? j->user : ""))) {
                cJSON_Delete(msg);
                msg = NULL;
        }
        strv_free(spec.env);
        send_to(n, msg, j, "launch");
}

void server_send_cancel(ctl_server *srv, ctl_node *n, const job *j, int grace_ms) {
        (void)srv;
        send_cancel(n, j->id, grace_ms);
}

const conn_ops agent_conn_ops = { .on_message = agent_message, .on_close = agent_closed };
