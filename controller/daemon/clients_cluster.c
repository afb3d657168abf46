/* clients_cluster.c - the CLI's requests about the cluster rather than one job: nodes, shares,
 * reload, the interference matrix (alpha_put, alpha_get), drain and resume (docs/protocol.md). */
#include "clients.h"
#include "status.h"
#include "log.h"
#include "commit.h"
#include "policy.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

void client_nodes(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const none[] = { NULL };
        if (client_request_fields(c, msg, none) < 0)
                return;
        cJSON *out = proto_new("nodes"), *nodes = status_nodes(&srv->state);
        if (!out || !nodes || !cJSON_AddItemToObject(out, "nodes", nodes)) {
                cJSON_Delete(out);
                cJSON_Delete(nodes);
                client_reply_error(c, "out of memory");
                return;
        }
        const char *policy = server_policy_status(srv);
        if (policy)
                cJSON_AddStringToObject(out, "policy_status", policy);
        client_reply(c, out);
}

/* Store a new version of the interference matrix: root or the controller's own user only, since
 * it steers every placement under policy = coloc. */
void client_alpha_put(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const fields[] = { "types", "alpha", "ci95_low", "ci95_high", NULL };
        char err[PROTO_ERRLEN];
        alpha_matrix m;
        if (c->uid != 0 && c->uid != geteuid()) {
                client_reply_error(c, "only root or the controller's user may store an interference matrix");
                return;
        }
        if (proto_check_fields(msg, fields, err) < 0 || alpha_from_json(msg, &m, err) < 0) {
                client_reply_error(c, err);
                return;
        }
        if (jobstore_put_alpha(srv->store, &m, server_now()) < 0) {
                alpha_free(&m);
                client_reply_error(c, "could not store the matrix (the controller's log says why)");
                return;
        }
        log_info("interference matrix version %llu stored: %zu types, uid=%u", (unsigned long long)m.version, m.n,
                 (unsigned)c->uid);
        server_set_alpha(srv, &m);
        cJSON *ok = proto_new("alpha_stored");
        if (ok)
                cJSON_AddNumberToObject(ok, "version", (double)srv->alpha.version);
        client_reply(c, ok);
        server_schedule(srv);
}

/* The latest matrix (kept in memory), or the version asked for (read from the store). */
void client_alpha_get(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const fields[] = { "version", NULL };
        char err[PROTO_ERRLEN];
        int64_t version = 0;
        if (proto_check_fields(msg, fields, err) < 0 ||
            proto_get_int(msg, "version", 1, INT64_MAX, &version, err) == -EINVAL) {
                client_reply_error(c, err);
                return;
        }
        alpha_matrix stored = { 0 };
        const alpha_matrix *m = &srv->alpha;
        int r = version == 0 ? (srv->alpha.version ? 0 : -ENOENT)
                             : jobstore_get_alpha(srv->store, (uint64_t)version, &stored);
        if (version != 0)
                m = &stored;
        if (r < 0) {
                if (r == -ENOENT && version)
                        snprintf(err, sizeof(err), "no interference matrix version %lld", (long long)version);
                else
                        snprintf(err, sizeof(err), "%s",
                                 r == -ENOENT ? "no interference matrix stored yet (colony measure)"
                                              : "the store could not be read");
                client_reply_error(c, err);
                return;
        }
        cJSON *out = proto_new("alpha");
        if (out && alpha_to_json(m, out) < 0) {
                cJSON_Delete(out);
                out = proto_error("out of memory");
        }
        alpha_free(&stored);
        client_reply(c, out);
}

/* One department of a shares reply; cpu: its subtree's CPU time in the window, gpus: the GPUs
 * its subtree's running jobs hold. */
static cJSON *share_to_json(const fairorder *fo, size_t i, const fairorder_share *sh, int64_t cpu_usec, int64_t gpus) {
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
        cJSON_AddNumberToObject(o, "gpus", (double)gpus);
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

/* GPUs held by each node's subtree's running jobs (gpus: fo->n entries, zeroed), from what the
 * fair order keeps per department as jobs start and end. */
static void running_gpus(const fairorder *fo, int64_t *gpus) {
        for (size_t i = 0; i < fo->n; i++)
                for (int32_t a = (int32_t)i; fo->used[i].gpus > 0 && a >= 0; a = fo->nodes[a].parent)
                        gpus[a] += fo->used[i].gpus;
}

/* The GPUs of the nodes that are up. */
static int64_t cluster_gpus(const ctl_state *st) {
        int64_t n = 0;
        for (size_t i = 0; i < st->nnodes; i++)
                if (st->nodes[i]->up)
                        n += st->nodes[i]->capacity.gpus;
        return n;
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
void client_shares(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const none[] = { NULL };
        char err[PROTO_ERRLEN] = "";
        const fairorder *fo = &srv->state.fair;
        fairorder_report rep = { .nodes = calloc(fo->n + 1, sizeof(*rep.nodes)) };
        int64_t *cpu = calloc(fo->n + 1, sizeof(*cpu)), *gpus = calloc(fo->n + 1, sizeof(*gpus));
        uint64_t next_id = 0;
        cJSON *out = NULL, *arr;
        int r = proto_check_fields(msg, none, err);
        if (r == 0 && (!rep.nodes || !cpu || !gpus))
                r = -ENOMEM;
        if (r == 0)
                r = ctl_fair_shares(&srv->state, &rep, &next_id);
        if (r < 0 && !*err)
                snprintf(err, sizeof(err), "cannot compute the shares: %s", strerror(-r));
        if (r == 0 && (out = proto_new("shares"))) {
                int fairness = srv->state.cfg.dispatcher ? -1 : srv->state.cfg.fairness;
                window_cpu(srv, cpu);
                running_gpus(fo, gpus);
                cJSON_AddStringToObject(out, "fairness", fairness < 0 ? "none" : fair_algo_name(fairness));
                cJSON_AddNumberToObject(out, "window_seconds", CPUWIN_SECONDS);
                cJSON_AddNumberToObject(out, "cluster_gpus", (double)cluster_gpus(&srv->state));
                arr = cJSON_AddArrayToObject(out, "departments");
                for (size_t i = 1; arr && i < fo->n; i++)
                        cJSON_AddItemToArray(arr, share_to_json(fo, i, &rep.nodes[i], cpu[i], gpus[i]));
                cJSON_AddItemToObject(out, "next", next_to_json(srv, &rep, next_id));
                versus_to_json(out, fo, &rep);
        }
        free(rep.nodes);
        free(cpu);
        free(gpus);
        if (r < 0)
                client_reply_error(c, err);
        else
                client_reply(c, out);
}

/* Re-read the departments, as SIGHUP does; root or the controller's own user only. */
void client_reload(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const none[] = { NULL };
        char err[ERRLEN];
        if (client_request_fields(c, msg, none) < 0)
                return;
        if (c->uid != 0 && c->uid != geteuid()) {
                client_reply_error(c, "only root or the controller's user may reload it");
                return;
        }
        if (server_reload(srv, err, sizeof(err)) < 0) {
                log_error("reload refused, the departments stay as they were: %s", err);
                client_reply_error(c, err);
                return;
        }
        cJSON *ok = proto_new("reloaded");
        if (ok)
                cJSON_AddNumberToObject(ok, "departments", (double)srv->depts.n);
        client_reply(c, ok);
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
                client_reply_error(c, err);
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
        client_reply(c, ok);
}

void client_drain(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const fields[] = { "node", "reason", NULL };
        char err[PROTO_ERRLEN];
        const char *reason = "drained";
        ctl_node *n = node_request(srv, c, msg, fields);
        if (!n)
                return;
        int r = proto_get_str(msg, "reason", &reason, err);
        if (r == -EINVAL || (r == 0 && (!*reason || strlen(reason) > JOB_NAME_MAX))) {
                client_reply_error(c, r == -EINVAL ? err : "reason: must be 1 to 128 characters");
                return;
        }
        if (jobstore_put_drain(srv->store, n->name, reason) < 0) {
                client_reply_error(c, "could not store the drain (the controller's log says why)");
                return;
        }
        if (ctl_node_drain(&srv->state, n->name, reason, &n) < 0) {
                client_reply_error(c, "out of memory");
                return;
        }
        reply_node(c, "drained", n);
}

void client_resume(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const fields[] = { "node", NULL };
        ctl_node *n = node_request(srv, c, msg, fields);
        if (!n)
                return;
        if (!n->drain_reason) {
                client_reply_error(c, "that node is not drained");
                return;
        }
        if (jobstore_put_drain(srv->store, n->name, NULL) < 0) {
                client_reply_error(c, "could not store the resume (the controller's log says why)");
                return;
        }
        (void)ctl_node_resume(&srv->state, n);
        reply_node(c, "resumed", n);
}
