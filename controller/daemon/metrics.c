/* metrics.c - the Prometheus text exposition (metrics.h). */
#include "metrics.h"
#include "stats.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

static void family(FILE *f, const char *name, const char *type, const char *help) {
        fprintf(f, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
}

/* A label value with \, " and newline escaped, as the format wants. */
static void label_value(FILE *f, const char *v) {
        for (; *v; v++) {
                if (*v == '\\' || *v == '"')
                        fputc('\\', f);
                if (*v == '\n')
                        fputs("\\n", f);
                else
                        fputc(*v, f);
        }
}

/* Integers (counts, bytes) whole; the rest with 15 digits, as many as a double surely holds. */
static void number(FILE *f, double v) {
        if (v == (double)(int64_t)v && v > -9007199254740992.0 && v < 9007199254740992.0)
                fprintf(f, "%lld\n", (long long)v);
        else
                fprintf(f, "%.15g\n", v);
}

static void sample(FILE *f, const char *name, const char *label, const char *value, double v) {
        fputs(name, f);
        if (label) {
                fprintf(f, "{%s=\"", label);
                label_value(f, value);
                fputs("\"}", f);
        }
        fputc(' ', f);
        number(f, v);
}

static void gauge(FILE *f, const char *name, const char *help, double v) {
        family(f, name, "gauge", help);
        sample(f, name, NULL, NULL, v);
}

static void histogram(FILE *f, const char *name, const char *help, const stats_hist *h) {
        family(f, name, "histogram", help);
        for (size_t i = 0; i < h->nbounds; i++)
                fprintf(f, "%s_bucket{le=\"%g\"} %llu\n", name, h->bounds[i], (unsigned long long)h->counts[i]);
        fprintf(f, "%s_bucket{le=\"+Inf\"} %llu\n", name, (unsigned long long)h->count);
        fprintf(f, "%s_sum ", name);
        number(f, h->sum);
        fprintf(f, "%s_count %llu\n", name, (unsigned long long)h->count);
}

static void jobs(FILE *f, const ctl_state *st) {
        uint64_t counts[_JOB_STATE_MAX];
        stats_job_states(st, counts);
        gauge(f, "colony_queue_length", "Jobs pending.", (double)counts[JOB_PENDING]);
        gauge(f, "colony_jobs_running", "Jobs running.", (double)counts[JOB_RUNNING]);
        family(f, "colony_jobs_submitted_total", "counter", "Jobs ever submitted (the controller's whole job table).");
        sample(f, "colony_jobs_submitted_total", NULL, NULL, (double)st->njobs);
        family(f, "colony_jobs_finished_total", "counter", "Jobs that reached each terminal state.");
        for (int s = 0; s < _JOB_STATE_MAX; s++)
                if (job_state_is_terminal((job_state)s))
                        sample(f, "colony_jobs_finished_total", "state", job_state_name((job_state)s),
                               (double)counts[s]);
}

typedef struct node_metric {
        const char *name, *type, *help;
        double (*get)(const ctl_node *n);
} node_metric;

static double node_up(const ctl_node *n) { return n->up && !n->silent; }
static double node_not_responding(const ctl_node *n) { return n->up && n->silent; }
static double node_cpu(const ctl_node *n) { return (double)n->capacity.mcpu / 1000; }
static double node_cpu_used(const ctl_node *n) { return (double)n->used.mcpu / 1000; }
static double node_mem(const ctl_node *n) { return (double)n->capacity.mem; }
static double node_mem_used(const ctl_node *n) { return (double)n->used.mem; }
static double node_running(const ctl_node *n) { return (double)n->running; }
static double node_gpus(const ctl_node *n) { return (double)n->capacity.gpus; }
static double node_gpus_used(const ctl_node *n) { return (double)n->used.gpus; }
static double node_cpu_psi(const ctl_node *n) { return n->psi.cpu.some_avg10 / 100; }
static double node_mem_psi(const ctl_node *n) { return n->psi.memory.some_avg10 / 100; }
static double node_io_psi(const ctl_node *n) { return n->psi.io.some_avg10 / 100; }

static const node_metric node_metrics[] = {
        { "colony_node_up", "gauge", "1 while the node's agent is connected and talks.", node_up },
        { "colony_node_not_responding", "gauge",
          "1 while the node's agent is connected but silent past the agent timeout: no job is placed there.",
          node_not_responding },
        { "colony_node_cpu_capacity_cores", "gauge", "CPUs the node offers.", node_cpu },
        { "colony_node_cpu_allocated_cores", "gauge", "CPUs the jobs running on the node asked for.", node_cpu_used },
        { "colony_node_memory_capacity_bytes", "gauge", "Memory the node offers.", node_mem },
        { "colony_node_memory_allocated_bytes", "gauge", "Memory the jobs running on the node asked for.",
          node_mem_used },
        { "colony_node_running_jobs", "gauge", "Jobs running on the node.", node_running },
        { "colony_node_gpu_capacity", "gauge", "GPUs the node offers.", node_gpus },
        { "colony_node_gpu_allocated", "gauge", "GPUs the jobs running on the node hold.", node_gpus_used },
};

/* Pressure exists only where the agent reported some. */
static const node_metric node_psi_metrics[] = {
        { "colony_node_cpu_pressure_ratio", "gauge", "Share of the last 10 s some task waited for CPU (PSI).",
          node_cpu_psi },
        { "colony_node_memory_pressure_ratio", "gauge", "Share of the last 10 s some task waited for memory (PSI).",
          node_mem_psi },
        { "colony_node_io_pressure_ratio", "gauge", "Share of the last 10 s some task waited for I/O (PSI).",
          node_io_psi },
};

static void node_family(FILE *f, const ctl_state *st, const node_metric *m, bool psi_only) {
        family(f, m->name, m->type, m->help);
        for (size_t i = 0; i < st->nnodes; i++)
                if (!psi_only || st->nodes[i]->psi.known)
                        sample(f, m->name, "node", st->nodes[i]->name, m->get(st->nodes[i]));
}

static void nodes(FILE *f, const ctl_state *st) {
        for (size_t k = 0; k < sizeof(node_metrics) / sizeof(node_metrics[0]); k++)
                node_family(f, st, &node_metrics[k], false);
        for (size_t k = 0; k < sizeof(node_psi_metrics) / sizeof(node_psi_metrics[0]); k++)
                node_family(f, st, &node_psi_metrics[k], true);
}

/* The GPUs' use of each running job whose agent reads it (NVML): no sample where none does. */
static void job_gpus(FILE *f, const ctl_state *st) {
        static const struct {
                const char *name, *help;
        } fams[] = {
                { "colony_job_gpu_utilization_ratio",
                  "Mean utilisation of the running job's GPUs (NVML), at its agent's last report." },
                { "colony_job_gpu_memory_used_bytes",
                  "Device memory the running job uses on its GPUs (NVML), at its agent's last report." },
        };
        const ctl_idset *run = &st->running_ids; /* stale entries included: their state says */
        for (size_t k = 0; k < sizeof(fams) / sizeof(fams[0]); k++) {
                family(f, fams[k].name, "gauge", fams[k].help);
                for (size_t i = 0; i < run->n; i++) {
                        const job *j = run->v[i];
                        char id[32];
                        if (j->state != JOB_RUNNING || !j->result.gpu_known)
                                continue;
                        snprintf(id, sizeof(id), "%llu", (unsigned long long)j->id);
                        sample(f, fams[k].name, "job", id, k ? (double)j->result.gpu_mem : j->result.gpu_util / 100.0);
                }
        }
}

static int departments(FILE *f, const ctl_server *srv) {
        static const struct {
                const char *name, *help;
        } fams[] = {
                { "colony_department_weight", "The department's CPU weight relative to its siblings." },
                { "colony_department_share_ratio", "The department's fraction of contended CPU from the weights." },
                { "colony_department_running_jobs", "Running jobs of the department and its sub-departments." },
                { "colony_department_pending_jobs", "Pending jobs of the department and its sub-departments." },
                { "colony_department_cpu_allocated_cores", "CPUs its running jobs (sub-departments' too) asked for." },
                { "colony_department_memory_allocated_bytes",
                  "Memory its running jobs (sub-departments' too) asked for." },
        };
        stats_dept *v = calloc(srv->depts.n + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        stats_depts(&srv->state, &srv->depts, v);
        for (size_t k = 0; k < sizeof(fams) / sizeof(fams[0]); k++) {
                family(f, fams[k].name, "gauge", fams[k].help);
                for (size_t i = 0; i < srv->depts.n; i++) {
                        const double values[] = { v[i].weight,
                                                  v[i].share,
                                                  v[i].running,
                                                  v[i].pending,
                                                  (double)v[i].used_mcpu / 1000,
                                                  (double)v[i].used_mem };
                        sample(f, fams[k].name, "department", v[i].path, values[k]);
                }
        }
        free(v);
        return 0;
}

int metrics_render(const ctl_server *srv, int64_t now, char **out, size_t *len) {
        FILE *f = open_memstream(out, len);
        if (!f)
                return -ENOMEM;
        stats_hist waits;
        gauge(f, "colony_controller_start_time_seconds", "When the controller started, in Unix time.",
              (double)srv->stats.start_usec / 1e6);
        gauge(f, "colony_controller_uptime_seconds", "Seconds since the controller started.",
              (double)(now - srv->stats.start_usec) / 1e6);
        jobs(f, &srv->state);
        nodes(f, &srv->state);
        job_gpus(f, &srv->state);
        int r = departments(f, srv);
        stats_waits(&srv->state, &waits);
        histogram(f, "colony_job_wait_seconds", "From submission to start, of every job that started.", &waits);
        histogram(f, "colony_schedule_pass_seconds", "Scheduling passes over a non-empty queue.", &srv->stats.pass);
        gauge(f, "colony_schedule_last_pass_seconds", "The last such pass.", srv->stats.last_pass_seconds);
        histogram(f, "colony_loop_turn_seconds",
                  "Turns of the controller's event loop (one handler's run between "
                  "two polls).",
                  &srv->stats.turn);
        gauge(f, "colony_loop_turn_max_seconds", "The longest turn of the loop so far.", srv->stats.max_turn_seconds);
        if (fclose(f) != 0 || r < 0) {
                free(*out);
                *out = NULL;
                return -ENOMEM;
        }
        return 0;
}
