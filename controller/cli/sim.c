/* sim.c - colony sim: run a workload or a trace through the controller's scheduling core on a
 * virtual clock and report waits, responses and utilization. */
#include "cli.h"
#include <cjson/cJSON.h>
#include "format.h"
#include "instance.h"
#include "log.h"
#include "progress.h"
#include "sim.h"
#include "swf.h"
#include "units.h"
#include "workload.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char sim_usage[] =
        "Usage: colony sim --workload W [--jobs N] [--load L] [--scale S] [--seed N] [options]\n"
        "       colony sim --trace FILE.swf --machines M.json [--mem-per-proc SIZE] [options]\n"
        "options: [--policy P] [--capacity fluid|lotes] [--order fifo|backfill|reserve] [--cycle SECONDS] [--sample SECONDS] [--csv] [--json]\n"
        "Simulate a workload on a virtual clock with the controller's own scheduling code.\n\n"
        "  --workload W    mishra (the LoTES report's 10 machine configurations, 8 job classes),\n"
        "                  lotes-google, lotes-phi:PHI, lotes-omega:OMEGA (the LoTES paper's)\n"
        "  --trace F       a Standard Workload Format trace (Parallel Workloads Archive)\n"
        "  --machines F    the cluster for a trace, as for colony place\n"
        "  --mem-per-proc S  memory per processor where the trace has none (default 1G)\n"
        "  --jobs N        jobs to submit (default 10000)\n"
        "  --load L        arrival rate as a fraction of the cluster's fluid capacity (default 0.8)\n"
        "  --scale S       machines per configuration (default 100; the paper: 1000)\n"
        "  --seed N        random seed (default 1): the same seed gives the same run\n"
        "  --policy P      first-fit (default), best-fit-cores, best-fit-mem, worst-fit-cores,\n"
        "                  worst-fit-mem, mix-fit, max-jobs; or lotes, tetris, greedy (LoTES and its\n"
        "                  paper's baselines, which keep queues of their own)\n"
        "  --capacity C    what --load is a fraction of: fluid (default) or lotes (LoTES's lambda*)\n"
        "  --order O       fifo (default), backfill, or reserve (NetBatch's reservations)\n"
        "  --cycle S       place jobs every S seconds (NetBatch: 30) instead of at every event\n"
        "  --sample S      utilization sampling period in seconds (default: 100 samples)\n"
        "  --csv           print the utilization samples as CSV (t,cpu,mem) instead of a summary\n";

typedef struct sim_options {
        const char *workload_name;
        const wl_spec *workload;
        wl_generated generated; /* lotes-phi, lotes-omega */
        bool lotes_capacity;    /* --capacity lotes: --load is a fraction of LoTES's lambda* */
        size_t njobs, scale;
        double load;
        uint64_t seed;
        const char *trace, *machines;
        const char *policy;
        bool dispatcher; /* the policy has queues of its own: --order does not apply */
        int64_t mem_per_proc;
        bool csv;
} sim_options;

typedef struct sim_input {
        wl_source synthetic;
        swf_trace trace;
        inst_machines file;
        res_t *machines;
        double arrival_rate, fluid_capacity; /* synthetic workloads only */
        wl_lotes lotes;         /* LoTES's inputs and plan, when --policy lotes or --capacity lotes */
        lotes_alloc alloc;
        lotes_plan plan;
        bool planned;
} sim_input;

static int parse_double(const char *s, double min, double *out) {
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (!*s || *end || errno || !(v >= min))
                return -EINVAL;
        *out = v;
        return 0;
}

static cJSON *stats_json(const sim_stats *s) {
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "mean", s->mean);
        cJSON_AddNumberToObject(o, "p50", s->p50);
        cJSON_AddNumberToObject(o, "p95", s->p95);
        cJSON_AddNumberToObject(o, "p99", s->p99);
        cJSON_AddNumberToObject(o, "max", s->max);
        return o;
}

static char *seconds(double s, char *buf, size_t len) {
        return fmt_duration((int64_t)(s * 1e6), buf, len);
}

static void print_stats(const char *what, const sim_stats *s) {
        char mean[32], p50[32], p95[32], p99[32], max[32];
        printf("%-9s mean %s  p50 %s  p95 %s  p99 %s  max %s\n", what, seconds(s->mean, mean, sizeof(mean)),
               seconds(s->p50, p50, sizeof(p50)), seconds(s->p95, p95, sizeof(p95)),
               seconds(s->p99, p99, sizeof(p99)), seconds(s->max, max, sizeof(max)));
}

static cJSON *result_json(const sim_options *so, const sim_config *cfg, const sim_input *in, const sim_result *r) {
        cJSON *o = cJSON_CreateObject(), *samples;
        if (so->workload) {
                cJSON_AddStringToObject(o, "workload", so->workload->name);
                cJSON_AddNumberToObject(o, "seed", (double)so->seed);
                cJSON_AddNumberToObject(o, "load", so->load);
                cJSON_AddNumberToObject(o, "arrival_rate", in->arrival_rate);
                cJSON_AddNumberToObject(o, "fluid_capacity", in->fluid_capacity);
                cJSON_AddStringToObject(o, "capacity", so->lotes_capacity ? "lotes" : "fluid");
                if (in->planned)
                        cJSON_AddNumberToObject(o, "lotes_lambda", in->plan.lambda_lp);
        } else {
                cJSON_AddStringToObject(o, "trace", so->trace);
                cJSON_AddNumberToObject(o, "skipped", (double)in->trace.skipped);
        }
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
        cJSON_AddNumberToObject(o, "scheduling_passes", (double)r->passes);
        samples = cJSON_AddArrayToObject(o, "utilization");
        for (size_t i = 0; samples && i < r->nsamples; i++) {
                cJSON *smp = cJSON_CreateObject();
                cJSON_AddNumberToObject(smp, "t", r->samples[i].t);
                cJSON_AddNumberToObject(smp, "cpu", r->samples[i].cpu);
                cJSON_AddNumberToObject(smp, "mem", r->samples[i].mem);
                cJSON_AddItemToArray(samples, smp);
        }
        return o;
}

static void print_summary(const sim_options *so, const sim_config *cfg, const sim_input *in, const sim_result *r) {
        char span[32];
        if (so->workload)
                printf("%s, %zu machines, %zu jobs at load %.2f (%.4g jobs/s of %s %.4g), seed %llu\n",
                       so->workload->name, r->machines, r->jobs, so->load, in->arrival_rate,
                       so->lotes_capacity ? "LoTES's lambda*" : "a fluid capacity of",
                       so->lotes_capacity ? in->plan.lambda_lp : in->fluid_capacity, (unsigned long long)so->seed);
        else
                printf("%s, %zu machines, %zu jobs (%zu without a run time skipped)\n", so->trace, r->machines, r->jobs,
                       in->trace.skipped);
        printf("policy %s, %s order, %s\n", so->policy, so->dispatcher ? "its own" : sched_order_name(cfg->order),
               cfg->cycle_seconds > 0 ? "cycle-based" : "placing at every event");
        printf("completed %zu, refused %zu (larger than every machine), in %s of simulated time (%llu scheduling passes)\n",
               r->completed, r->refused, seconds(r->makespan, span, sizeof(span)), (unsigned long long)r->passes);
        print_stats("wait", &r->wait);
        print_stats("response", &r->response);
        printf("utilization: cpu %.1f%%, memory %.1f%% (time-averaged)\n", 100 * r->mean_cpu, 100 * r->mean_mem);
}

static int print_result(cli *c, const sim_options *so, const sim_config *cfg, const sim_input *in, const sim_result *r) {
        if (c->json) {
                cJSON *doc = result_json(so, cfg, in, r);
                int status = fmt_json(doc);
                cJSON_Delete(doc);
                return status;
        }
        if (so->csv) {
                printf("t,cpu,mem\n");
                for (size_t i = 0; i < r->nsamples; i++)
                        printf("%.3f,%.4f,%.4f\n", r->samples[i].t, r->samples[i].cpu, r->samples[i].mem);
        } else {
                print_summary(so, cfg, in, r);
        }
        return 0;
}

static const char *option_name(const struct option *opts, int value) {
        for (; opts->name; opts++)
                if (opts->val == value)
                        return opts->name;
        return "?";
}

static int parse_options(cli *c, int argc, char **argv, sim_options *so, sim_config *cfg) {
        enum { O_WORKLOAD = CLI_OPT_OWN, O_JOBS, O_LOAD, O_SCALE, O_SEED, O_POLICY, O_ORDER, O_CYCLE, O_SAMPLE, O_CSV,
               O_TRACE, O_MACHINES, O_MEMPP, O_CAPACITY };
        static const struct option own[] = {
                { "workload", required_argument, NULL, O_WORKLOAD }, { "jobs", required_argument, NULL, O_JOBS },
                { "load", required_argument, NULL, O_LOAD },         { "scale", required_argument, NULL, O_SCALE },
                { "seed", required_argument, NULL, O_SEED },         { "policy", required_argument, NULL, O_POLICY },
                { "order", required_argument, NULL, O_ORDER },       { "cycle", required_argument, NULL, O_CYCLE },
                { "sample", required_argument, NULL, O_SAMPLE },     { "csv", no_argument, NULL, O_CSV },
                { "trace", required_argument, NULL, O_TRACE },       { "machines", required_argument, NULL, O_MACHINES },
                { "mem-per-proc", required_argument, NULL, O_MEMPP }, { "capacity", required_argument, NULL, O_CAPACITY },
                { NULL, 0, NULL, 0 },
        };
        int64_t n;
        int o;
        while ((o = cli_getopt(c, argc, argv, own)) > 0) {
                int bad = 0;
                switch (o) {
                case O_WORKLOAD: so->workload_name = optarg; break;
                case O_CAPACITY:
                        bad = strcmp(optarg, "lotes") != 0 && strcmp(optarg, "fluid") != 0;
                        so->lotes_capacity = strcmp(optarg, "lotes") == 0;
                        break;
                case O_JOBS: bad = units_parse_uint(optarg, 100000000, &n) < 0 || n == 0; so->njobs = (size_t)n; break;
                case O_SCALE: bad = units_parse_uint(optarg, 1000000, &n) < 0 || n == 0; so->scale = (size_t)n; break;
                case O_SEED: bad = units_parse_uint(optarg, INT64_MAX, &n) < 0; so->seed = (uint64_t)n; break;
                case O_LOAD: bad = parse_double(optarg, 1e-9, &so->load) < 0; break;
                case O_TRACE: so->trace = optarg; break;
                case O_MACHINES: so->machines = optarg; break;
                case O_MEMPP: bad = units_parse_size(optarg, &so->mem_per_proc) < 0 || so->mem_per_proc == 0; break;
                case O_CYCLE: bad = parse_double(optarg, 0, &cfg->cycle_seconds) < 0; break;
                case O_SAMPLE: bad = parse_double(optarg, 1e-6, &cfg->sample_seconds) < 0; break;
                case O_POLICY: so->policy = optarg; break;
                case O_ORDER:
                        bad = sched_order_from_name(optarg, &cfg->order) < 0;
                        break;
                case O_CSV: so->csv = true; break;
                }
                if (bad)
                        return cli_usage_error(c, "--%s: '%s' is not valid (see colony sim --help)", option_name(own, o),
                                               optarg);
        }
        if (o < 0)
                return cli_opts_status(o);
        if (optind < argc)
                return cli_usage_error(c, "unexpected argument '%s'", argv[optind]);
        if (!so->workload_name == !so->trace)
                return cli_usage_error(c, "give --workload (known: %s) or --trace", wl_names());
        if (so->workload_name && !(so->workload = wl_find(so->workload_name, so->seed, &so->generated)))
                return cli_usage_error(c, "--workload: unknown workload '%s' (known: %s)", so->workload_name, wl_names());
        if ((so->lotes_capacity || strcmp(so->policy, "lotes") == 0) && !so->workload)
                return cli_usage_error(c, "--policy lotes and --capacity lotes need a --workload (its classes)");
        if (!so->trace != !so->machines)
                return cli_usage_error(c, "--trace and --machines go together");
        return -1; /* options are fine: go on */
}

/* LoTES's offline stages on the workload. Returns 0 or -1 (error printed). */
static int open_plan(cli *c, const sim_options *so, sim_input *in) {
        char err[256];
        double seconds[2];
        wl_lotes_problem(so->workload, so->scale, &in->lotes);
        if (cli_lotes_solve(&in->lotes.problem, &in->alloc, &in->plan, seconds, err, sizeof(err)) < 0) {
                cli_error(c, "%s", err);
                return -1;
        }
        in->planned = true;
        return 0;
}

/* Set up the source and machines the options describe. Returns 0 or EXIT_FAIL (error printed). */
static int open_input(cli *c, const sim_options *so, sim_config *cfg, sim_input *in) {
        char err[512];
        if (so->trace) {
                if (swf_load(so->trace, so->mem_per_proc, &in->trace, err, sizeof(err)) < 0 ||
                    inst_load_machines(so->machines, &in->file, err, sizeof(err)) < 0) {
                        cli_error(c, "%s", err);
                        return EXIT_FAIL;
                }
                in->machines = calloc(in->file.n + 1, sizeof(*in->machines));
                for (size_t i = 0; in->machines && i < in->file.n; i++)
                        in->machines[i] = in->file.machines[i].capacity;
                cfg->nmachines = in->file.n;
                cfg->next_job = swf_next;
                cfg->source = &in->trace;
        } else {
                in->fluid_capacity = wl_fluid_capacity(so->workload, so->scale);
                if ((so->lotes_capacity || strcmp(so->policy, "lotes") == 0) && open_plan(c, so, in) < 0)
                        return EXIT_FAIL;
                in->arrival_rate = so->load * (so->lotes_capacity ? in->plan.lambda_lp : in->fluid_capacity);
                in->machines = wl_machines(so->workload, so->scale, &cfg->nmachines);
                wl_source_init(&in->synthetic, so->workload, so->scale, so->njobs, in->arrival_rate, so->seed);
                cfg->next_job = wl_source_next;
                cfg->runtime_on = wl_runtime_on;
                cfg->source = &in->synthetic;
        }
        if (!in->machines) {
                cli_error(c, "out of memory");
                return EXIT_FAIL;
        }
        cfg->machines = in->machines;
        return 0;
}

/* Resolve --policy into cfg. Returns 0, EXIT_USAGE or EXIT_FAIL (error printed). */
static int open_policy(cli *c, sim_options *so, const sim_input *in, sim_config *cfg) {
        int r = strcmp(so->policy, "lotes") == 0
                        ? lotes_dispatcher_new(&in->lotes.problem, &in->plan, so->seed, &cfg->dispatcher)
                        : inst_policy(so->policy, so->seed, &cfg->policy, &cfg->dispatcher);
        if (r == -EINVAL)
                return cli_usage_error(c, "--policy: unknown policy '%s' (see colony sim --help)", so->policy);
        if (r < 0) {
                cli_error(c, "%s", strerror(-r));
                return EXIT_FAIL;
        }
        so->dispatcher = cfg->dispatcher != NULL;
        return 0;
}

static void close_input(sim_input *in) {
        if (in->planned) {
                lotes_plan_free(&in->plan);
                lotes_alloc_free(&in->alloc);
        }
        swf_free(&in->trace);
        inst_machines_free(&in->file);
        free(in->machines);
}

static int run_sim(cli *c, int argc, char **argv) {
        sim_options so = { .policy = "first-fit", .scale = 100, .njobs = 10000, .load = 0.8, .seed = 1,
                           .mem_per_proc = (int64_t)1 << 30 };
        sim_config cfg = { .policy = SCHED_FIRST_FIT, .order = SCHED_STRICT_FIFO };
        sim_input in = { 0 };
        sim_result r;
        char err[256];
        int status = parse_options(c, argc, argv, &so, &cfg);
        if (status >= 0)
                return status;
        if ((status = open_input(c, &so, &cfg, &in)) != 0 || (status = open_policy(c, &so, &in, &cfg)) != 0)
                goto done;
        if (cfg.sample_seconds <= 0) /* about 100 samples over the arrivals */
                cfg.sample_seconds = so.trace ? fmax(1, in.trace.jobs[in.trace.n - 1].arrival / 100)
                                              : (double)so.njobs / in.arrival_rate / 100;
        log_open("colony", 0, LOG_WARNING); /* the core logs every transition; a simulation has millions */
        progress bar;
        progress_start(&bar, "colony sim", "jobs", so.trace ? in.trace.n : so.njobs);
        cfg.progress = progress_hook;
        cfg.progress_arg = &bar;
        int failed = sim_run(&cfg, &r, err, sizeof(err)) < 0;
        progress_end(&bar);
        cfg.dispatcher = NULL; /* sim_run freed it */
        if (failed) {
                cli_error(c, "%s", err);
                status = EXIT_FAIL;
                goto done;
        }
        status = print_result(c, &so, &cfg, &in, &r);
        sim_result_free(&r);
done:
        sched_dispatcher_free(cfg.dispatcher);
        close_input(&in);
        return status;
}

const cli_command cmd_sim = { "sim", "simulate a workload with the scheduling core on a virtual clock", sim_usage,
                              false, run_sim };
