/* status.c - the cluster as JSON (status.h). */
#include "status.h"
#include "clients.h"
#include "stats.h"
#include <stdlib.h>
#include <string.h>

cJSON *status_node(const ctl_node *n) {
        cJSON *o = cJSON_CreateObject();
        if (!o)
                return NULL;
        cJSON_AddStringToObject(o, "name", n->name);
        cJSON_AddStringToObject(o, "state", ctl_node_state_name(n));
        cJSON_AddNumberToObject(o, "mcpu", (double)n->capacity.mcpu);
        cJSON_AddNumberToObject(o, "mem", (double)n->capacity.mem);
        cJSON_AddNumberToObject(o, "pids", (double)n->capacity.pids);
        cJSON_AddNumberToObject(o, "free_mcpu", (double)(n->capacity.mcpu - n->used.mcpu));
        cJSON_AddNumberToObject(o, "free_mem", (double)(n->capacity.mem - n->used.mem));
        cJSON_AddNumberToObject(o, "running", (double)n->running);
        cJSON_AddNumberToObject(o, "last_heartbeat_usec", (double)n->last_heard_usec);
        cJSON_AddStringToObject(o, "cgroup_mode", n->cgroup_mode ? n->cgroup_mode : "");
        cJSON_AddStringToObject(o, "cgroup_root", n->cgroup_root ? n->cgroup_root : "");
        (void)psi_to_json(&n->psi, o);
        if (n->features)
                cJSON_AddStringToObject(o, "features", n->features);
        if (n->drain_reason)
                cJSON_AddStringToObject(o, "reason", n->drain_reason);
        if (n->capacity.gpus) {
                cJSON_AddNumberToObject(o, "gpus", (double)n->capacity.gpus);
                cJSON_AddNumberToObject(o, "free_gpus", (double)(n->capacity.gpus - n->used.gpus));
        }
        if (n->gpu_type)
                cJSON_AddStringToObject(o, "gpu_type", n->gpu_type);
        return o;
}

cJSON *status_nodes(const ctl_state *st) {
        cJSON *nodes = cJSON_CreateArray();
        for (size_t i = 0; nodes && i < st->nnodes; i++)
                cJSON_AddItemToArray(nodes, status_node(st->nodes[i]));
        return nodes;
}

/* j's record, its argv cut after STATUS_ARGV_BYTES. Caller owns it; NULL when out of memory. */
static cJSON *job_record(const ctl_state *st, const job *j) {
        cJSON *rec = client_job_record(st, j), *argv = cJSON_CreateArray();
        size_t used = 0;
        bool cut = false;
        for (size_t i = 0; rec && argv && j->spec.argv && j->spec.argv[i] && !cut; i++) {
                size_t len = strlen(j->spec.argv[i]);
                cut = used + len > STATUS_ARGV_BYTES;
                char *s = strndup(j->spec.argv[i], cut ? STATUS_ARGV_BYTES - used : len);
                if (!s || !cJSON_AddItemToArray(argv, cJSON_CreateString(s)))
                        cut = true; /* out of memory: what is there will do */
                free(s);
                used += len;
        }
        if (rec && argv && cut && cJSON_ReplaceItemInObjectCaseSensitive(rec, "argv", argv)) {
                cJSON_AddBoolToObject(rec, "argv_truncated", true);
                return rec;
        }
        cJSON_Delete(argv);
        return rec;
}

/* Add the first max jobs of st->jobs in state (id order) as "name", and their count as
 * "name_total". */
static void add_jobs(cJSON *doc, const ctl_state *st, const char *name, const char *total, job **jobs, size_t njobs,
                     job_state state, size_t max) {
        cJSON *arr = cJSON_AddArrayToObject(doc, name);
        size_t n = 0;
        for (size_t i = 0; i < njobs; i++) {
                if (jobs[i]->state != state)
                        continue;
                if (arr && n < max)
                        cJSON_AddItemToArray(arr, job_record(st, jobs[i]));
                n++;
        }
        cJSON_AddNumberToObject(doc, total, (double)n);
}

static void add_totals(cJSON *doc, const ctl_state *st) {
        uint64_t counts[_JOB_STATE_MAX];
        cJSON *jobs = cJSON_AddObjectToObject(doc, "jobs");
        stats_job_states(st, counts);
        for (int s = 0; jobs && s < _JOB_STATE_MAX; s++)
                cJSON_AddNumberToObject(jobs, job_state_name((job_state)s), (double)counts[s]);
}

static cJSON *dept_json(const stats_dept *d) {
        cJSON *o = cJSON_CreateObject();
        if (!o)
                return NULL;
        cJSON_AddStringToObject(o, "path", d->path);
        cJSON_AddNumberToObject(o, "weight", d->weight);
        cJSON_AddNumberToObject(o, "share", d->share);
        cJSON_AddNumberToObject(o, "running", d->running);
        cJSON_AddNumberToObject(o, "pending", d->pending);
        cJSON_AddNumberToObject(o, "used_mcpu", (double)d->used_mcpu);
        cJSON_AddNumberToObject(o, "used_mem", (double)d->used_mem);
        return o;
}

static void add_depts(cJSON *doc, const ctl_server *srv) {
        cJSON *arr = cJSON_AddArrayToObject(doc, "departments");
        stats_dept *v = calloc(srv->depts.n + 1, sizeof(*v));
        if (!arr || !v) {
                free(v);
                return;
        }
        stats_depts(&srv->state, &srv->depts, v);
        for (size_t i = 0; i < srv->depts.n; i++)
                cJSON_AddItemToArray(arr, dept_json(&v[i]));
        free(v);
}

static void add_recent(cJSON *doc, const ctl_state *st) {
        const job *recent[STATUS_RECENT_MAX];
        size_t n = stats_recent_finished(st, recent, STATUS_RECENT_MAX);
        cJSON *arr = cJSON_AddArrayToObject(doc, "recent_finished");
        for (size_t i = 0; arr && i < n; i++)
                cJSON_AddItemToArray(arr, job_record(st, recent[i]));
}

/* The event log's last events, newest first, straight from the ring. */
static void add_events(cJSON *doc, const ctl_server *srv) {
        const ev_record *last[STATUS_EVENTS_MAX];
        size_t n = ev_last(&srv->events, STATUS_EVENTS_MAX, last);
        cJSON *arr = cJSON_AddArrayToObject(doc, "events");
        for (size_t i = n; arr && i-- > 0;)
                cJSON_AddItemToArray(arr, ev_to_json(last[i]));
}

/* The samples as parallel arrays, oldest first: one array per field is the smallest JSON for an
 * hour of them, and what a plot wants. */
static void add_samples(cJSON *doc, const ctl_stats *s) {
        static const char *const fields[] = { "time_usec", "mcpu",     "used_mcpu", "mem",
                                              "used_mem",  "nodes_up", "running",   "pending" };
        enum { NFIELDS = sizeof(fields) / sizeof(fields[0]) };
        cJSON *o = cJSON_AddObjectToObject(doc, "samples"), *arr[NFIELDS];
        if (!o)
                return;
        cJSON_AddNumberToObject(o, "interval_usec", STATS_SAMPLE_USEC);
        for (size_t f = 0; f < NFIELDS; f++)
                arr[f] = cJSON_AddArrayToObject(o, fields[f]);
        for (size_t i = 0; i < s->ring_len; i++) {
                const stats_sample *x = stats_sample_at(s, i);
                const double v[NFIELDS] = { (double)x->time_usec, (double)x->mcpu, (double)x->used_mcpu, (double)x->mem,
                                            (double)x->used_mem,  x->nodes_up,     x->running,           x->pending };
                for (size_t f = 0; f < NFIELDS; f++)
                        if (arr[f])
                                cJSON_AddItemToArray(arr[f], cJSON_CreateNumber(v[f]));
        }
}

cJSON *status_document(const ctl_server *srv, int64_t now) {
        cJSON *doc = cJSON_CreateObject();
        if (!doc)
                return NULL;
        const ctl_state *st = &srv->state;
        stats_sample tot = stats_now(st, now);
        cJSON_AddNumberToObject(doc, "time_usec", (double)now);
        cJSON_AddNumberToObject(doc, "start_usec", (double)srv->stats.start_usec);
        cJSON *cluster = cJSON_AddObjectToObject(doc, "cluster");
        if (cluster) {
                cJSON_AddNumberToObject(cluster, "nodes", (double)st->nnodes);
                cJSON_AddNumberToObject(cluster, "nodes_up", tot.nodes_up);
                cJSON_AddNumberToObject(cluster, "mcpu", (double)tot.mcpu);
                cJSON_AddNumberToObject(cluster, "used_mcpu", (double)tot.used_mcpu);
                cJSON_AddNumberToObject(cluster, "mem", (double)tot.mem);
                cJSON_AddNumberToObject(cluster, "used_mem", (double)tot.used_mem);
        }
        add_totals(doc, st);
        cJSON_AddItemToObject(doc, "nodes", status_nodes(st));
        add_jobs(doc, st, "queue", "queue_total", st->pending, st->npending, JOB_PENDING, STATUS_QUEUE_MAX);
        add_jobs(doc, st, "running", "running_total", st->jobs, st->njobs, JOB_RUNNING, STATUS_RUNNING_MAX);
        add_depts(doc, srv);
        add_recent(doc, st);
        add_events(doc, srv);
        add_samples(doc, &srv->stats);
        return doc;
}
