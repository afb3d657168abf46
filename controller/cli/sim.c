/* sim.c - colony sim: run a workload through the controller's scheduling core on a virtual
 * clock and report waits, responses and utilization. */
#include "cli.h"
#include <cjson/cJSON.h>
#include "format.h"
#include "log.h"
#include "sim.h"
#include "units.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char sim_usage[] =
        "Usage: colony sim --workload W [--jobs N] [--load L] [--scale S] [--seed N] [--policy P]\n"
        "                  [--order fifo|backfill] [--cycle SECONDS] [--sample SECONDS] [--csv] [--json]\n"
        "Simulate a workload on a virtual clock with the controller's own scheduling code.\n\n"
        "  --workload W    mishra (the LoTES report's 10 machine configurations, 8 job classes)\n"
        "  --jobs N        jobs to submit (default 10000)\n"
        "  --load L        arrival rate as a fraction of the cluster's fluid capacity (default 0.8)\n"
        "  --scale S       machines per configuration (default 100; the paper: 1000)\n"
        "  --seed N        random seed (default 1): the same seed gives the same run\n"
        "  --policy P      first-fit (default), best-fit-cores, best-fit-mem, worst-fit-cores,\n"
        "                  worst-fit-mem, mix-fit, max-jobs\n"
        "  --order O       fifo (default) or backfill\n"
        "  --cycle S       place jobs every S seconds (NetBatch: 30) instead of at every event\n"
        "  --sample S      utilization sampling period in seconds (default: 100 samples)\n"
        "  --csv           print the utilization samples as CSV (t,cpu,mem) instead of a summary\n";

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

static cJSON *result_json(const sim_config *cfg, const sim_result *r) {
        cJSON *o = cJSON_CreateObject(), *samples;
        cJSON_AddStringToObject(o, "workload", cfg->workload->name);
        cJSON_AddStringToObject(o, "policy", sched_heuristic_name(cfg->policy));
        cJSON_AddStringToObject(o, "order", cfg->order == SCHED_STRICT_FIFO ? "fifo" : "backfill");
        cJSON_AddNumberToObject(o, "seed", (double)cfg->seed);
        cJSON_AddNumberToObject(o, "load", cfg->load);
        cJSON_AddNumberToObject(o, "machines", (double)r->machines);
        cJSON_AddNumberToObject(o, "jobs", (double)r->jobs);
        cJSON_AddNumberToObject(o, "completed", (double)r->completed);
        cJSON_AddNumberToObject(o, "refused", (double)r->refused);
        cJSON_AddNumberToObject(o, "arrival_rate", r->arrival_rate);
        cJSON_AddNumberToObject(o, "fluid_capacity", r->fluid_capacity);
        cJSON_AddNumberToObject(o, "makespan", r->makespan);
        cJSON_AddItemToObject(o, "wait", stats_json(&r->wait));
        cJSON_AddItemToObject(o, "response", stats_json(&r->response));
        cJSON_AddNumberToObject(o, "mean_cpu_utilization", r->mean_cpu);
        cJSON_AddNumberToObject(o, "mean_mem_utilization", r->mean_mem);
        cJSON_AddNumberToObject(o, "scheduling_passes", (double)r->passes);
        samples = cJSON_AddArrayToObject(o, "utilization");
        for (size_t i = 0; samples && i < r->nsamples; i++) {
                cJSON *s = cJSON_CreateObject();
                cJSON_AddNumberToObject(s, "t", r->samples[i].t);
                cJSON_AddNumberToObject(s, "cpu", r->samples[i].cpu);
                cJSON_AddNumberToObject(s, "mem", r->samples[i].mem);
                cJSON_AddItemToArray(samples, s);
        }
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

static void print_summary(const sim_config *cfg, const sim_result *r) {
        char span[32];
        printf("%s, %zu machines, %zu jobs at load %.2f (%.4g jobs/s of a fluid capacity of %.4g), seed %llu\n",
               cfg->workload->name, r->machines, r->jobs, cfg->load, r->arrival_rate, r->fluid_capacity,
               (unsigned long long)cfg->seed);
        printf("policy %s, %s order, %s\n", sched_heuristic_name(cfg->policy),
               cfg->order == SCHED_STRICT_FIFO ? "fifo" : "backfill",
               cfg->cycle_seconds > 0 ? "cycle-based" : "placing at every event");
        printf("completed %zu, refused %zu, in %s of simulated time (%llu scheduling passes)\n", r->completed,
               r->refused, seconds(r->makespan, span, sizeof(span)), (unsigned long long)r->passes);
        print_stats("wait", &r->wait);
        print_stats("response", &r->response);
        printf("utilization: cpu %.1f%%, memory %.1f%% (time-averaged)\n", 100 * r->mean_cpu, 100 * r->mean_mem);
}

static const char *option_name(const struct option *opts, int value) {
        for (; opts->name; opts++)
                if (opts->val == value)
                        return opts->name;
        return "?";
}

static int parse_options(cli *c, int argc, char **argv, sim_config *cfg, bool *csv) {
        enum { O_WORKLOAD = CLI_OPT_OWN, O_JOBS, O_LOAD, O_SCALE, O_SEED, O_POLICY, O_ORDER, O_CYCLE, O_SAMPLE, O_CSV };
        static const struct option own[] = {
                { "workload", required_argument, NULL, O_WORKLOAD }, { "jobs", required_argument, NULL, O_JOBS },
                { "load", required_argument, NULL, O_LOAD },         { "scale", required_argument, NULL, O_SCALE },
                { "seed", required_argument, NULL, O_SEED },         { "policy", required_argument, NULL, O_POLICY },
                { "order", required_argument, NULL, O_ORDER },       { "cycle", required_argument, NULL, O_CYCLE },
                { "sample", required_argument, NULL, O_SAMPLE },     { "csv", no_argument, NULL, O_CSV },
                { NULL, 0, NULL, 0 },
        };
        int64_t n;
        int o;
        while ((o = cli_getopt(c, argc, argv, own)) > 0) {
                int bad = 0;
                switch (o) {
                case O_WORKLOAD:
                        if (!(cfg->workload = wl_find(optarg)))
                                return cli_usage_error(c, "--workload: unknown workload '%s' (known: %s)", optarg, wl_names());
                        break;
                case O_JOBS: bad = units_parse_uint(optarg, 100000000, &n) < 0 || n == 0; cfg->njobs = (size_t)n; break;
                case O_SCALE: bad = units_parse_uint(optarg, 1000000, &n) < 0 || n == 0; cfg->scale = (size_t)n; break;
                case O_SEED: bad = units_parse_uint(optarg, INT64_MAX, &n) < 0; cfg->seed = (uint64_t)n; break;
                case O_LOAD: bad = parse_double(optarg, 1e-9, &cfg->load) < 0; break;
                case O_CYCLE: bad = parse_double(optarg, 0, &cfg->cycle_seconds) < 0; break;
                case O_SAMPLE: bad = parse_double(optarg, 1e-6, &cfg->sample_seconds) < 0; break;
                case O_POLICY: bad = sched_heuristic_from_name(optarg, &cfg->policy) < 0; break;
                case O_ORDER:
                        bad = strcmp(optarg, "fifo") != 0 && strcmp(optarg, "backfill") != 0;
                        cfg->order = strcmp(optarg, "fifo") == 0 ? SCHED_STRICT_FIFO : SCHED_BACKFILL;
                        break;
                case O_CSV: *csv = true; break;
                }
                if (bad)
                        return cli_usage_error(c, "--%s: '%s' is not valid (see colony sim --help)", option_name(own, o),
                                               optarg);
        }
        if (o < 0)
                return cli_opts_status(o);
        if (optind < argc)
                return cli_usage_error(c, "unexpected argument '%s'", argv[optind]);
        if (!cfg->workload)
                return cli_usage_error(c, "--workload is required (known: %s)", wl_names());
        return -1; /* options are fine: go on */
}

static int run_sim(cli *c, int argc, char **argv) {
        sim_config cfg = { .scale = 100, .njobs = 10000, .load = 0.8, .seed = 1, .policy = SCHED_FIRST_FIT,
                           .order = SCHED_STRICT_FIFO };
        bool csv = false;
        int status = parse_options(c, argc, argv, &cfg, &csv);
        if (status >= 0)
                return status;
        sim_result r;
        char err[256];
        if (cfg.sample_seconds <= 0) /* about 100 samples over the expected span of the arrivals */
                cfg.sample_seconds = (double)cfg.njobs / (cfg.load * wl_fluid_capacity(cfg.workload, cfg.scale)) / 100;
        log_open("colony", 0, LOG_WARNING); /* the core logs every transition; a simulation has millions */
        if (sim_run(&cfg, &r, err, sizeof(err)) < 0) {
                cli_error(c, "%s", err);
                return EXIT_FAIL;
        }
        status = 0;
        if (c->json) {
                cJSON *doc = result_json(&cfg, &r);
                status = fmt_json(doc);
                cJSON_Delete(doc);
        } else if (csv) {
                printf("t,cpu,mem\n");
                for (size_t i = 0; i < r.nsamples; i++)
                        printf("%.3f,%.4f,%.4f\n", r.samples[i].t, r.samples[i].cpu, r.samples[i].mem);
        } else {
                print_summary(&cfg, &r);
        }
        sim_result_free(&r);
        return status;
}

const cli_command cmd_sim = { "sim", "simulate a workload with the scheduling core on a virtual clock", sim_usage,
                              false, run_sim };
