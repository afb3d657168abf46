/* sim_report.c - what colony sim prints from a result: a summary with the departments'
 * figures, JSON, and the CSV tables (utilization samples, departments, jobs). */
#include "sim_cli.h"
#include <cjson/cJSON.h>
#include "format.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#define DEPTS_SHOWN 20 /* the summary's department table: the largest by CPU share */

static cJSON *stats_json(const sim_stats *s) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "mean", s->mean);
        cJSON_AddNumberToObject(o, "p50", s->p50);
        cJSON_AddNumberToObject(o, "p95", s->p95);
        cJSON_AddNumberToObject(o, "p99", s->p99);
        cJSON_AddNumberToObject(o, "max", s->max);
        return o;
}

static char *seconds(double s, char *buf, size_t len) { return fmt_duration((int64_t)(s * 1e6), buf, len); }

static void print_stats(const char *what, const sim_stats *s) {
        char mean[32], p50[32], p95[32], p99[32], max[32];
        printf("%-9s mean %s  p50 %s  p95 %s  p99 %s  max %s\n", what, seconds(s->mean, mean, sizeof(mean)),
               seconds(s->p50, p50, sizeof(p50)), seconds(s->p95, p95, sizeof(p95)), seconds(s->p99, p99, sizeof(p99)),
               seconds(s->max, max, sizeof(max)));
}

/* A flow time relative to the ideal one; 0 when there is none. */
static double flow_ratio(double flow, double ideal) { return ideal > 0 ? flow / ideal : 0; }

/* What the input was, as JSON fields of o. */
static void input_json(cJSON *o, const sim_options *so, const sim_input *in) {
        if (so->workload) {
                cJSON_AddStringToObject(o, "workload", so->workload->name);
                cJSON_AddNumberToObject(o, "seed", (double)so->seed);
                cJSON_AddNumberToObject(o, "load", so->load);
                cJSON_AddNumberToObject(o, "arrival_rate", in->arrival_rate);
                cJSON_AddNumberToObject(o, "fluid_capacity", in->fluid_capacity);
                cJSON_AddStringToObject(o, "capacity", so->lotes_capacity ? "lotes" : "fluid");
                if (in->planned)
                        cJSON_AddNumberToObject(o, "lotes_lambda", in->plan.lambda_lp);
        } else if (so->trace) {
                cJSON_AddStringToObject(o, "trace", so->trace);
                cJSON_AddNumberToObject(o, "skipped", (double)in->trace.skipped);
                cJSON_AddNumberToObject(o, "skipped_no_processors", (double)in->trace.no_procs);
                cJSON_AddNumberToObject(o, "skipped_no_submit_time", (double)in->trace.no_submit);
        } else {
                const google_trace *g = &in->google;
                cJSON *left = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "google", so->google);
                cJSON_AddNumberToObject(o, "tasks", (double)g->tasks);
                cJSON_AddNumberToObject(left, "resubmitted", (double)g->resubmitted);
                cJSON_AddNumberToObject(left, "never_ran", (double)g->never_ran);
                cJSON_AddNumberToObject(left, "unfinished", (double)g->unfinished);
                cJSON_AddNumberToObject(left, "no_submit", (double)g->no_submit);
                cJSON_AddNumberToObject(left, "no_request", (double)g->no_request);
                cJSON_AddItemToObject(o, "left_out", left);
                if (so->google_machines) {
                        cJSON_AddNumberToObject(o, "machine_events_ignored", (double)in->google_cluster.ignored);
                        cJSON_AddNumberToObject(o, "machines_without_capacity", (double)in->google_cluster.no_capacity);
                }
        }
}

static cJSON *dept_json(const sim_dept *d) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", d->name);
        cJSON_AddNumberToObject(o, "jobs", (double)d->jobs);
        cJSON_AddNumberToObject(o, "refused", (double)d->refused);
        cJSON_AddItemToObject(o, "wait", stats_json(&d->wait));
        cJSON_AddItemToObject(o, "response", stats_json(&d->response));
        cJSON_AddNumberToObject(o, "cpu_seconds", d->cpu_seconds);
        cJSON_AddNumberToObject(o, "cpu_share", d->cpu_share);
        cJSON_AddNumberToObject(o, "gpu_seconds", d->gpu_seconds);
        cJSON_AddNumberToObject(o, "gpu_share", d->gpu_share);
        return o;
}

static cJSON *result_json(const sim_options *so, const sim_config *cfg, const sim_input *in, const sim_result *r) {
        cJSON *o = cJSON_CreateObject(), *samples, *depts;
        input_json(o, so, in);
        cJSON_AddStringToObject(o, "policy", so->policy);
        cJSON_AddStringToObject(o, "order", so->dispatcher ? "own" : sched_order_name(cfg->order));
        cJSON_AddNumberToObject(o, "machines", (double)r->machines);
        cJSON_AddNumberToObject(o, "jobs", (double)r->jobs);
        cJSON_AddNumberToObject(o, "completed", (double)r->completed);
        cJSON_AddNumberToObject(o, "refused", (double)r->refused);
        cJSON_AddNumberToObject(o, "makespan", r->makespan);
        cJSON_AddItemToObject(o, "wait", stats_json(&r->wait));
        cJSON_AddItemToObject(o, "response", stats_json(&r->response));
        cJSON_AddNumberToObject(o, "mean_cpu_utilization", r->mean_cpu);
        cJSON_AddNumberToObject(o, "mean_mem_utilization", r->mean_mem);
        cJSON_AddNumberToObject(o, "gpus", (double)r->gpus);
        cJSON_AddNumberToObject(o, "mean_gpu_utilization", r->mean_gpu);
        cJSON_AddNumberToObject(o, "scheduling_passes", (double)r->passes);
        samples = cJSON_AddArrayToObject(o, "utilization");
        for (size_t i = 0; samples && i < r->nsamples; i++) {
                cJSON *smp = cJSON_CreateObject();
                cJSON_AddNumberToObject(smp, "t", r->samples[i].t);
                cJSON_AddNumberToObject(smp, "cpu", r->samples[i].cpu);
                cJSON_AddNumberToObject(smp, "mem", r->samples[i].mem);
                if (r->gpus > 0)
                        cJSON_AddNumberToObject(smp, "gpu", r->samples[i].gpu);
                cJSON_AddItemToArray(samples, smp);
        }
        if (r->families) {
                cJSON *mr = cJSON_AddObjectToObject(o, "mapreduce");
                cJSON_AddNumberToObject(mr, "jobs", (double)r->families);
                cJSON_AddNumberToObject(mr, "whole", (double)r->families_whole);
                cJSON_AddItemToObject(mr, "flow", stats_json(&r->flow));
                cJSON_AddItemToObject(mr, "ideal_flow", stats_json(&r->ideal_flow));
                cJSON_AddNumberToObject(mr, "relative_mean", flow_ratio(r->flow.mean, r->ideal_flow.mean));
                cJSON_AddNumberToObject(mr, "relative_median", flow_ratio(r->flow.p50, r->ideal_flow.p50));
        }
        cJSON_AddStringToObject(o, "departments_by", sim_dept_key_name(so->dept_by));
        depts = cJSON_AddArrayToObject(o, "departments");
        for (size_t i = 0; depts && i < r->ndepts; i++)
                cJSON_AddItemToArray(depts, dept_json(&r->depts[i]));
        return o;
}

static void print_input(const sim_options *so, const sim_input *in, const sim_result *r) {
        if (so->workload) {
                printf("%s, %zu machines, %zu jobs at load %.2f (%.4g jobs/s of %s %.4g), seed %llu\n",
                       so->workload->name, r->machines, r->jobs, so->load, in->arrival_rate,
                       so->lotes_capacity ? "LoTES's lambda*" : "a fluid capacity of",
                       so->lotes_capacity ? in->plan.lambda_lp : in->fluid_capacity, (unsigned long long)so->seed);
        } else if (so->trace) {
                printf("%s, %zu machines, %zu jobs (skipped: %zu without a run time, %zu without a processor count, "
                       "%zu "
                       "without a submit time)\n",
                       so->trace, r->machines, r->jobs, in->trace.skipped, in->trace.no_procs, in->trace.no_submit);
        } else {
                const google_trace *g = &in->google;
                printf("%s, %zu machines, %zu jobs from %zu tasks (left out: %zu later attempts, %zu ended before "
                       "running, %zu unfinished, %zu without a SUBMIT, %zu without requests)\n",
                       so->google, r->machines, r->jobs, g->tasks, g->resubmitted, g->never_ran, g->unfinished,
                       g->no_submit, g->no_request);
                if (so->google_machines)
                        printf("machines: those added at time 0 (%zu later or other events ignored, %zu without a "
                               "capacity left out)\n",
                               in->google_cluster.ignored, in->google_cluster.no_capacity);
        }
}

static int by_cpu_share(const void *a, const void *b) {
        const sim_dept *x = *(const sim_dept *const *)a, *y = *(const sim_dept *const *)b;
        return x->cpu_share != y->cpu_share ? (x->cpu_share < y->cpu_share) - (x->cpu_share > y->cpu_share)
                                            : strcmp(x->name, y->name);
}

/* The departments with the largest CPU shares, as a table (with their GPU shares, on a cluster
 * with GPUs). Returns 0 or -ENOMEM. */
static int print_depts(const sim_options *so, const sim_result *r) {
        static const char *const headers[] = { "department", "jobs",          "refused",   "mean wait",
                                               "p95 wait",   "mean response", "cpu share", "gpu share" };
        const sim_dept **order = malloc((r->ndepts + 1) * sizeof(*order));
        fmt_table t = { 0 };
        int e = order ? fmt_table_init(&t, r->gpus > 0 ? 8 : 7, headers) : -ENOMEM;
        for (size_t i = 0; order && i < r->ndepts; i++)
                order[i] = &r->depts[i];
        if (order)
                qsort(order, r->ndepts, sizeof(*order), by_cpu_share);
        for (size_t i = 0; e == 0 && i < r->ndepts && i < DEPTS_SHOWN; i++) {
                const sim_dept *d = order[i];
                char jobs[32], refused[32], wait[32], p95[32], resp[32], share[32], gpu_share[32];
                snprintf(jobs, sizeof(jobs), "%zu", d->jobs);
                snprintf(refused, sizeof(refused), "%zu", d->refused);
                snprintf(share, sizeof(share), "%.1f%%", 100 * d->cpu_share);
                snprintf(gpu_share, sizeof(gpu_share), "%.1f%%", 100 * d->gpu_share);
                e = fmt_table_row(&t, d->name, jobs, refused, seconds(d->wait.mean, wait, sizeof(wait)),
                                  seconds(d->wait.p95, p95, sizeof(p95)), seconds(d->response.mean, resp, sizeof(resp)),
                                  share, gpu_share); /* gpu_share is read only with its column */
        }
        if (e == 0) {
                printf("departments (by %s):\n", sim_dept_key_name(so->dept_by));
                fmt_table_print(&t, stdout);
                if (r->ndepts > DEPTS_SHOWN)
                        printf("... and %zu more (--json or --depts-csv for all)\n", r->ndepts - DEPTS_SHOWN);
        }
        fmt_table_free(&t);
        free(order);
        return e;
}

static int print_summary(const sim_options *so, const sim_config *cfg, const sim_input *in, const sim_result *r) {
        char span[32];
        print_input(so, in, r);
        printf("policy %s, %s order, %s\n", so->policy, so->dispatcher ? "its own" : sched_order_name(cfg->order),
               cfg->cycle_seconds > 0 ? "cycle-based" : "placing at every event");
        printf("completed %zu, refused %zu (larger than every machine), in %s of simulated time (%llu scheduling "
               "passes)\n",
               r->completed, r->refused, seconds(r->makespan, span, sizeof(span)), (unsigned long long)r->passes);
        print_stats("wait", &r->wait);
        print_stats("response", &r->response);
        if (r->gpus > 0)
                printf("utilization: cpu %.1f%%, memory %.1f%%, gpus %.1f%% of %lld (time-averaged)\n",
                       100 * r->mean_cpu, 100 * r->mean_mem, 100 * r->mean_gpu, (long long)r->gpus);
        else
                printf("utilization: cpu %.1f%%, memory %.1f%% (time-averaged)\n", 100 * r->mean_cpu,
                       100 * r->mean_mem);
        if (r->families) {
                printf("mapreduce: %zu jobs, %zu ran whole; flow time relative to unlimited machines: mean %.3f, "
                       "median %.3f\n",
                       r->families, r->families_whole, flow_ratio(r->flow.mean, r->ideal_flow.mean),
                       flow_ratio(r->flow.p50, r->ideal_flow.p50));
                print_stats("flow", &r->flow);
                print_stats("ideal", &r->ideal_flow);
        }
        return r->ndepts ? print_depts(so, r) : 0;
}

/* "-" is standard output. NULL with errno set when the file cannot be made. */
static FILE *open_output(const char *path) { return strcmp(path, "-") == 0 ? stdout : fopen(path, "we"); }

/* Flush f and close it unless it is stdout. Returns 0 or -errno. */
static int close_output(FILE *f) {
        int r = fflush(f) == 0 && !ferror(f) ? 0 : -errno;
        if (f != stdout && fclose(f) != 0 && r == 0)
                r = -errno;
        return r;
}

static void stats_csv(FILE *f, const sim_stats *s) {
        fprintf(f, ",%.3f,%.3f,%.3f,%.3f,%.3f", s->mean, s->p50, s->p95, s->p99, s->max);
}

/* --depts-csv: every department, in the order of the result. Returns 0 or -errno. */
static int write_depts_csv(const char *path, const sim_result *r) {
        FILE *f = open_output(path);
        if (!f)
                return -errno;
        fprintf(f,
                "department,jobs,refused,wait_mean,wait_p50,wait_p95,wait_p99,wait_max,"
                "response_mean,response_p50,response_p95,response_p99,response_max,cpu_seconds,cpu_share,gpu_seconds,"
                "gpu_share\n");
        for (size_t i = 0; i < r->ndepts; i++) {
                const sim_dept *d = &r->depts[i];
                fprintf(f, "%s,%zu,%zu", d->name, d->jobs, d->refused);
                stats_csv(f, &d->wait);
                stats_csv(f, &d->response);
                fprintf(f, ",%.3f,%.6f,%.3f,%.6f\n", d->cpu_seconds, d->cpu_share, d->gpu_seconds, d->gpu_share);
        }
        return close_output(f);
}

void sim_jobs_csv_header(FILE *f) {
        fprintf(f, "id,department,machine,arrival,start,end,wait,response,cpus,mem,family,stage,gpus\n");
}

int sim_jobs_csv_row(void *data, const sim_job_record *r) {
        FILE *f = data;
        fprintf(f, "%llu,%s,%s,%.3f,", (unsigned long long)r->id, r->dept ? r->dept : "", r->machine ? r->machine : "",
                r->arrival);
        if (isnan(r->start))
                fprintf(f, ",,,");
        else
                fprintf(f, "%.3f,%.3f,%.3f,%.3f", r->start, r->end, r->start - r->arrival, r->end - r->arrival);
        fprintf(f, ",%.3f,%lld,", (double)r->req.mcpu / 1000, (long long)r->req.mem);
        if (r->family)
                fprintf(f, "%llu,%s,", (unsigned long long)r->family, r->reduce ? "reduce" : "map");
        else
                fprintf(f, ",,");
        fprintf(f, "%lld\n", (long long)r->req.gpus);
        return ferror(f) ? -EIO : 0;
}

/* --csv: the utilization samples, with a gpu column where the cluster has GPUs. */
static void print_samples_csv(const sim_result *r) {
        printf("t,cpu,mem%s\n", r->gpus > 0 ? ",gpu" : "");
        for (size_t i = 0; i < r->nsamples; i++) {
                printf("%.3f,%.4f,%.4f", r->samples[i].t, r->samples[i].cpu, r->samples[i].mem);
                if (r->gpus > 0)
                        printf(",%.4f", r->samples[i].gpu);
                printf("\n");
        }
}

int sim_report(cli *c, const sim_options *so, const sim_config *cfg, const sim_input *in, const sim_result *r) {
        int e = 0;
        if (c->json) {
                cJSON *doc = result_json(so, cfg, in, r);
                e = fmt_json(doc);
                cJSON_Delete(doc);
        } else if (so->csv) {
                print_samples_csv(r);
        } else {
                e = print_summary(so, cfg, in, r);
        }
        if (e < 0) {
                cli_error(c, "%s", strerror(-e));
                return EXIT_FAIL;
        }
        if (so->depts_csv && (e = write_depts_csv(so->depts_csv, r)) < 0) {
                cli_error(c, "--depts-csv %s: %s", so->depts_csv, strerror(-e));
                return EXIT_FAIL;
        }
        return 0;
}
