/* sim_cli.c - colony sim: run a workload or a trace through the controller's scheduling core on a
 * virtual clock and report waits, responses and utilization (sim_report.c prints them). */
#include "alpha.h"
#include "coloc_dispatch.h"
#include "sim_cli.h"
#include "progress.h"
#include "units.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char sim_usage[] =
        "Usage: colony sim --workload W [--jobs N] [--load L] [--scale S] [--seed N] [options]\n"
        "       colony sim --trace FILE.swf --machines M.json [--mem-per-proc SIZE] [options]\n"
        "       colony sim --google TASK_EVENTS.csv --google-machines MACHINE_EVENTS.csv [--google-scale C,M] "
        "[options]\n"
        "options: [--policy P] [--alpha FILE] [--capacity fluid|lotes] [--order fifo|backfill|reserve] [--cycle "
        "SECONDS] [--sample SECONDS]\n"
        "         [--dept-by KEY] [--fair ALGO] [--scan] [--csv] [--jobs-csv FILE] [--depts-csv FILE] [--json]\n"
        "Simulate a workload on a virtual clock with the controller's own scheduling code.\n\n"
        "  --workload W    mishra (the LoTES report's 10 machine configurations, 8 job classes),\n"
        "                  mishra-mapreduce (its MapReduce jobs: 200 maps, then 100 reduces),\n"
        "                  lotes-google, lotes-phi:PHI, lotes-omega:OMEGA (the LoTES paper's),\n"
        "                  gpu-lab (8- and 4-GPU machines and CPU machines; departments vision,\n"
        "                  nlp, rl, llm asking 1, 2, 4, 8 GPUs a job, physics none)\n"
        "  --trace F       a Standard Workload Format trace (Parallel Workloads Archive); a trace\n"
        "                  may be gzip'd, and '-' reads it from standard input\n"
        "  --machines F    the cluster for a trace, as for colony place\n"
        "  --mem-per-proc S  memory per processor where the trace has none (default 1G)\n"
        "  --google F      a Google cluster-data 2011 task_events table (CSV, in time order)\n"
        "  --google-machines F  its machine_events table: the machines added at time 0\n"
        "  --google-scale C,M  cores and memory of a machine of normalized size 1.0 (default 64,256G)\n"
        "  --jobs N        jobs to submit (default 10000)\n"
        "  --load L        arrival rate as a fraction of the cluster's fluid capacity (default 0.8)\n"
        "  --scale S       machines per configuration (default 100; the paper: 1000)\n"
        "  --seed N        random seed (default 1): the same seed gives the same run\n"
        "  --policy P      first-fit (default), best-fit-cores, best-fit-mem, worst-fit-cores,\n"
        "                  worst-fit-mem, mix-fit, max-jobs; or lotes, tetris, greedy (LoTES and its\n"
        "                  paper's baselines, which keep queues of their own); or coloc (colocation\n"
        "                  by type: the lotes workloads' jobs have types c1, c2, ...)\n"
        "  --alpha FILE    with --policy coloc: the interference matrix (colony measure --json);\n"
        "                  without it every alpha is 1\n"
        "  --capacity C    what --load is a fraction of: fluid (default) or lotes (LoTES's lambda*)\n"
        "  --order O       fifo (default), backfill, or reserve (NetBatch's reservations)\n"
        "  --cycle S       place jobs every S seconds (NetBatch: 30) instead of at every event\n"
        "  --sample S      utilization sampling period in seconds (default: 100 samples)\n"
        "  --dept-by KEY   what makes a department: group (SWF's default) or user (SWF, Google's\n"
        "                  default), class (a workload's job class, its default; Google's scheduling\n"
        "                  class), or none\n"
        "  --fair ALGO     order the pending jobs fairly among the departments (each of weight 1,\n"
        "                  as the controller's [departments]): drf, wdrf, hdrf, mch, c-ch or m-ch;\n"
        "                  default: submission order\n"
        "  --scan          place by scanning every machine, not through the index: the same run,\n"
        "                  slower (the reference and the benchmarks' baseline)\n"
        "  --csv           print the utilization samples as CSV (t,cpu,mem) instead of a summary\n"
        "  --jobs-csv F    write every accepted job's times as CSV to F ('-': standard output)\n"
        "  --depts-csv F   write the departments' figures as CSV to F ('-': standard output)\n";

static int parse_double(const char *s, double min, double *out) {
        char *end;
        errno = 0;
        double v = strtod(s, &end);
        if (!*s || *end || errno || !(v >= min))
                return -EINVAL;
        *out = v;
        return 0;
}

static const char *option_name(const struct option *opts, int value) {
        for (; opts->name; opts++)
                if (opts->val == value)
                        return opts->name;
        return "?";
}

/* --google-scale CORES,MEM. Returns 0 or -EINVAL. */
static int parse_scale(const char *s, res_t *out) {
        const char *comma = strchr(s, ',');
        char cores[32];
        if (!comma || (size_t)(comma - s) >= sizeof(cores))
                return -EINVAL;
        memcpy(cores, s, (size_t)(comma - s));
        cores[comma - s] = '\0';
        if (units_parse_cpus(cores, &out->mcpu) < 0 || units_parse_size(comma + 1, &out->mem) < 0 || out->mem == 0)
                return -EINVAL;
        return 0;
}

/* The options that go with one input and not another, and the departments each knows.
 * Returns -1 when they agree, else EXIT_USAGE (error printed). */
static int check_inputs(cli *c, sim_options *so) {
        static const bool dept_keys[3][4] = {
                /* none, group, user, class */
                { true, false, false, true }, /* a workload */
                { true, true, true, false },  /* SWF */
                { true, false, true, true },  /* Google */
        };
        static const sim_dept_key defaults[3] = { SIM_DEPT_CLASS, SIM_DEPT_GROUP, SIM_DEPT_USER };
        int input = so->trace ? 1 : so->google ? 2 : 0;
        if ((so->workload_name != NULL) + (so->trace != NULL) + (so->google != NULL) != 1)
                return cli_usage_error(c, "give one of --workload (known: %s), --trace or --google", wl_names());
        if (so->workload_name && !(so->workload = wl_find(so->workload_name, so->seed, &so->generated)))
                return cli_usage_error(c, "--workload: unknown workload '%s' (known: %s)", so->workload_name,
                                       wl_names());
        if ((so->lotes_capacity || strcmp(so->policy, "lotes") == 0) && !so->workload)
                return cli_usage_error(c, "--policy lotes and --capacity lotes need a --workload (its classes)");
        if (so->trace && !so->machines)
                return cli_usage_error(c, "--trace and --machines go together");
        if (so->google && !so->machines == !so->google_machines)
                return cli_usage_error(c, "--google needs --google-machines (or the --machines of colony place)");
        if (so->workload && (so->machines || so->google_machines))
                return cli_usage_error(c, "a --workload has machines of its own: no --machines");
        if (so->trace && so->google_machines)
                return cli_usage_error(c, "--google-machines goes with --google");
        if (so->google && so->google_machines && strcmp(so->google, "-") == 0 && strcmp(so->google_machines, "-") == 0)
                return cli_usage_error(c, "--google and --google-machines cannot both read standard input (-)");
        if (!so->dept_by_given)
                so->dept_by = defaults[input];
        else if (!dept_keys[input][so->dept_by])
                return cli_usage_error(
                        c, "--dept-by %s: %s", sim_dept_key_name(so->dept_by),
                        input == 0   ? "a workload's departments are its classes (class or none)"
                        : input == 1 ? "an SWF trace has group and user IDs (group, user or none)"
                                     : "a Google trace has users and scheduling classes (user, class or none)");
        return -1;
}

/* colony sim's options: what it simulates first, then how (sim_config's, from O_CYCLE on). */
enum {
        O_WORKLOAD = CLI_OPT_OWN,
        O_JOBS,
        O_LOAD,
        O_SCALE,
        O_SEED,
        O_POLICY,
        O_CSV,
        O_TRACE,
        O_MACHINES,
        O_MEMPP,
        O_CAPACITY,
        O_GOOGLE,
        O_GOOGLE_MACHINES,
        O_GOOGLE_SCALE,
        O_DEPT_BY,
        O_JOBS_CSV,
        O_DEPTS_CSV,
        O_ALPHA,
        O_CYCLE,
        O_SAMPLE,
        O_ORDER,
        O_SCAN,
        O_FAIR
};
static const struct option sim_own_options[] = {
        { "workload", required_argument, NULL, O_WORKLOAD },
        { "jobs", required_argument, NULL, O_JOBS },
        { "load", required_argument, NULL, O_LOAD },
        { "scale", required_argument, NULL, O_SCALE },
        { "seed", required_argument, NULL, O_SEED },
        { "policy", required_argument, NULL, O_POLICY },
        { "order", required_argument, NULL, O_ORDER },
        { "cycle", required_argument, NULL, O_CYCLE },
        { "sample", required_argument, NULL, O_SAMPLE },
        { "csv", no_argument, NULL, O_CSV },
        { "trace", required_argument, NULL, O_TRACE },
        { "machines", required_argument, NULL, O_MACHINES },
        { "mem-per-proc", required_argument, NULL, O_MEMPP },
        { "capacity", required_argument, NULL, O_CAPACITY },
        { "google", required_argument, NULL, O_GOOGLE },
        { "google-machines", required_argument, NULL, O_GOOGLE_MACHINES },
        { "google-scale", required_argument, NULL, O_GOOGLE_SCALE },
        { "dept-by", required_argument, NULL, O_DEPT_BY },
        { "jobs-csv", required_argument, NULL, O_JOBS_CSV },
        { "depts-csv", required_argument, NULL, O_DEPTS_CSV },
        { "alpha", required_argument, NULL, O_ALPHA },
        { "scan", no_argument, NULL, O_SCAN },
        { "fair", required_argument, NULL, O_FAIR },
        { NULL, 0, NULL, 0 },
};

/* An option of the traces to simulate (SWF or Google's, their machines, departments) into so.
 * Returns whether arg is bad. */
static bool sim_trace_option(int o, const char *arg, sim_options *so) {
        bool bad = false;

        switch (o) {
        case O_TRACE: so->trace = arg; break;
        case O_MACHINES: so->machines = arg; break;
        case O_MEMPP: bad = units_parse_size(arg, &so->mem_per_proc) < 0 || so->mem_per_proc == 0; break;
        case O_GOOGLE: so->google = arg; break;
        case O_GOOGLE_MACHINES: so->google_machines = arg; break;
        case O_GOOGLE_SCALE: bad = parse_scale(arg, &so->google_scale) < 0; break;
        case O_DEPT_BY:
                bad = sim_dept_key_from_name(arg, &so->dept_by) < 0;
                so->dept_by_given = true;
                break;
        }
        return bad;
}

/* An option of what to simulate and report (a workload, the policy, the outputs; a trace's to
 * sim_trace_option) into so. Returns whether arg is bad. */
static bool sim_input_option(int o, const char *arg, sim_options *so) {
        int64_t n;
        bool bad = false;

        switch (o) {
        case O_WORKLOAD: so->workload_name = arg; break;
        case O_CAPACITY:
                bad = strcmp(arg, "lotes") != 0 && strcmp(arg, "fluid") != 0;
                so->lotes_capacity = strcmp(arg, "lotes") == 0;
                break;
        case O_JOBS:
                bad = units_parse_uint(arg, 100000000, &n) < 0 || n == 0;
                so->njobs = (size_t)n;
                break;
        case O_SCALE:
                bad = units_parse_uint(arg, 1000000, &n) < 0 || n == 0;
                so->scale = (size_t)n;
                break;
        case O_SEED:
                bad = units_parse_uint(arg, INT64_MAX, &n) < 0;
                so->seed = (uint64_t)n;
                break;
        case O_LOAD: bad = parse_double(arg, 1e-9, &so->load) < 0; break;
        case O_POLICY: so->policy = arg; break;
        case O_ALPHA: so->alpha = arg; break;
        case O_CSV: so->csv = true; break;
        case O_JOBS_CSV: so->jobs_csv = arg; break;
        case O_DEPTS_CSV: so->depts_csv = arg; break;
        default: bad = sim_trace_option(o, arg, so); break;
        }
        return bad;
}

/* An option of how the simulator runs (its cycle, sampling, order, fair shares) into cfg.
 * Returns whether arg is bad. */
static bool sim_config_option(int o, const char *arg, sim_config *cfg) {
        bool bad = false;

        switch (o) {
        case O_CYCLE: bad = parse_double(arg, 0, &cfg->cycle_seconds) < 0; break;
        case O_SAMPLE: bad = parse_double(arg, 1e-6, &cfg->sample_seconds) < 0; break;
        case O_ORDER: bad = sched_order_from_name(arg, &cfg->order) < 0; break;
        case O_SCAN: cfg->scan = true; break;
        case O_FAIR:
                bad = fair_algo_from_name(arg, &cfg->fair_algo) < 0;
                cfg->fair = true;
                break;
        }
        return bad;
}

static int parse_options(cli *c, int argc, char **argv, sim_options *so, sim_config *cfg) {
        int o;
        while ((o = cli_getopt(c, argc, argv, sim_own_options)) > 0) {
                bool bad = o < O_CYCLE ? sim_input_option(o, optarg, so) : sim_config_option(o, optarg, cfg);
                if (bad)
                        return cli_usage_error(c, "--%s: '%s' is not valid (see colony sim --help)",
                                               option_name(sim_own_options, o), optarg);
        }
        if ((o = cli_opts_end(c, o, argc, argv)) >= 0)
                return o;
        if (so->alpha && strcmp(so->policy, "coloc") != 0)
                return cli_usage_error(c, "--alpha goes with --policy coloc");
        int r = check_inputs(c, so); /* -1: options are fine, go on */
        if (r < 0 && cfg->fair && so->dept_by == SIM_DEPT_NONE)
                return cli_usage_error(c, "--fair shares among departments: not with --dept-by none");
        return r;
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

/* The machines of a colony place file, as capacities, with their names. Returns 0 or -errno with
 * err set. */
static int open_machine_file(const char *path, sim_input *in, sim_config *cfg, char *err, size_t errlen) {
        int r = inst_load_machines(path, &in->file, err, errlen);
        if (r < 0)
                return r;
        if (!(in->machines = calloc(in->file.n + 1, sizeof(*in->machines)))) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        for (size_t i = 0; i < in->file.n; i++)
                in->machines[i] = in->file.machines[i].capacity;
        cfg->nmachines = in->file.n;
        cfg->machine_names = (const char *const *)in->file.names;
        return 0;
}

/* A trace's departments, unless --dept-by none. */
static void trace_depts(const sim_options *so, const sim_names *depts, sim_config *cfg) {
        if (so->dept_by == SIM_DEPT_NONE)
                return;
        cfg->dept_names = (const char *const *)depts->v;
        cfg->ndepts = depts->n;
}

/* A Google trace and its machines. Returns 0 or -errno with err set. */
static int open_google(const sim_options *so, sim_config *cfg, sim_input *in, char *err, size_t errlen) {
        int r = google_load_tasks(so->google, so->google_scale, so->dept_by, &in->google, err, errlen);
        if (r == 0 && so->machines)
                r = open_machine_file(so->machines, in, cfg, err, errlen);
        else if (r == 0 && (r = google_load_machines(so->google_machines, so->google_scale, &in->google_cluster, err,
                                                     errlen)) == 0) {
                in->machines = in->google_cluster.capacity; /* close_input frees it */
                in->google_cluster.capacity = NULL;
                cfg->nmachines = in->google_cluster.n;
        }
        cfg->next_job = sim_jobs_next;
        cfg->source = &in->google.jobs;
        trace_depts(so, &in->google.depts, cfg);
        return r;
}

/* A synthetic workload: its machines, its job stream at the asked load, its classes as departments. */
static int open_workload(cli *c, const sim_options *so, sim_config *cfg, sim_input *in) {
        in->fluid_capacity = wl_fluid_capacity(so->workload, so->scale);
        if ((so->lotes_capacity || strcmp(so->policy, "lotes") == 0) && open_plan(c, so, in) < 0)
                return EXIT_FAIL;
        /* LoTES's lambda* counts tasks; a MapReduce job is wl_tasks_per_job of them. The report
         * scales each class's requirement by its tasks per job in the allocation LP (section 6):
         * with the same number for every class that divides lambda* by it and leaves the
         * allocation as it is (tests/unit/test_lotes.c checks it with the solver). */
        double lotes_jobs = in->planned ? in->plan.lambda_lp / wl_tasks_per_job(so->workload) : 0;
        in->arrival_rate = so->load * (so->lotes_capacity ? lotes_jobs : in->fluid_capacity);
        in->machines = wl_machines(so->workload, so->scale, &cfg->nmachines);
        wl_source_init(&in->synthetic, so->workload, so->scale, so->njobs, in->arrival_rate, so->seed);
        cfg->next_job = wl_source_next;
        cfg->runtime_on = wl_runtime_on;
        cfg->source = &in->synthetic;
        if (so->dept_by == SIM_DEPT_CLASS) {
                cfg->dept_names = so->workload->dept_names ? so->workload->dept_names : wl_class_names();
                cfg->ndepts = so->workload->nclasses;
        }
        if (!in->machines) {
                cli_error(c, "out of memory");
                return EXIT_FAIL;
        }
        return 0;
}

/* Set up the source and machines the options describe. Returns 0 or EXIT_FAIL (error printed). */
static int open_input(cli *c, const sim_options *so, sim_config *cfg, sim_input *in) {
        char err[ERRLEN];
        int r = 0;
        if (so->workload) {
                if (open_workload(c, so, cfg, in) != 0)
                        return EXIT_FAIL;
        } else if (so->trace) {
                r = swf_load(so->trace, so->mem_per_proc, so->dept_by, &in->trace, err, sizeof(err));
                if (r == 0)
                        r = open_machine_file(so->machines, in, cfg, err, sizeof(err));
                cfg->next_job = sim_jobs_next;
                cfg->source = &in->trace.jobs;
                trace_depts(so, &in->trace.depts, cfg);
        } else {
                r = open_google(so, cfg, in, err, sizeof(err));
        }
        if (r == 0 && so->jobs_csv) {
                in->jobs_csv = strcmp(so->jobs_csv, "-") == 0 ? stdout : fopen(so->jobs_csv, "we");
                r = in->jobs_csv ? 0 : -errno;
                if (r < 0)
                        snprintf(err, sizeof(err), "--jobs-csv %s: %s", so->jobs_csv, strerror(-r));
                if (r == 0) {
                        sim_jobs_csv_header(in->jobs_csv);
                        cfg->each_job = sim_jobs_csv_row;
                        cfg->each_job_data = in->jobs_csv;
                }
        }
        if (r < 0) {
                cli_error(c, "%s", err);
                return EXIT_FAIL;
        }
        cfg->machines = in->machines;
        return 0;
}

/* Give the coloc dispatcher d the matrix in path. Returns 0 or EXIT_FAIL (error printed). */
static int load_alpha(cli *c, const char *path, sched_dispatcher *d) {
        cJSON *doc;
        alpha_matrix m;
        char err[PROTO_ERRLEN];
        int r = cli_read_json_object(c, path, &doc);
        if (r != 0)
                return r;
        r = alpha_from_json(doc, &m, err);
        cJSON_Delete(doc);
        if (r < 0) {
                cli_error(c, "%s: %s", path, err);
                return EXIT_FAIL;
        }
        r = coloc_dispatcher_set_alpha(d, (const char *const *)m.types, m.n, m.alpha);
        alpha_free(&m);
        if (r < 0) {
                cli_error(c, "out of memory");
                return EXIT_FAIL;
        }
        return 0;
}

/* Resolve --policy into cfg. Returns 0, EXIT_USAGE or EXIT_FAIL (error printed). */
static int open_policy(cli *c, sim_options *so, sim_input *in, sim_config *cfg) {
        int r = strcmp(so->policy, "lotes") == 0
                        ? lotes_dispatcher_new(&in->lotes.problem, &in->plan, so->seed, &cfg->dispatcher)
                        : sched_policy_new(so->policy, so->seed, &cfg->policy, &cfg->dispatcher);
        if (r == -EINVAL)
                return cli_usage_error(c, "--policy: unknown policy '%s' (see colony sim --help)", so->policy);
        if (r < 0) {
                cli_error(c, "%s", strerror(-r));
                return EXIT_FAIL;
        }
        so->dispatcher = cfg->dispatcher != NULL;
        /* the LoTES paper's Tetris knows a job's time on each machine (section 5.4.3) */
        if (so->workload && so->workload->speed && strcmp(so->policy, "tetris") == 0)
                sched_tetris_set_runtime(cfg->dispatcher, wl_runtime_on, &in->synthetic);
        return so->alpha ? load_alpha(c, so->alpha, cfg->dispatcher) : 0;
}

/* Close --jobs-csv. Returns 0, or EXIT_FAIL when a row could not be written (error printed). */
static int close_jobs_csv(cli *c, const sim_options *so, sim_input *in) {
        FILE *f = in->jobs_csv;
        in->jobs_csv = NULL;
        if (!f)
                return 0;
        int failed = fflush(f) != 0 || ferror(f);
        if (f != stdout)
                failed |= fclose(f) != 0;
        if (failed)
                cli_error(c, "--jobs-csv %s: could not write every row", so->jobs_csv);
        return failed ? EXIT_FAIL : 0;
}

static void close_input(sim_input *in) {
        if (in->planned) {
                lotes_plan_free(&in->plan);
                lotes_alloc_free(&in->alloc);
        }
        if (in->jobs_csv && in->jobs_csv != stdout)
                fclose(in->jobs_csv);
        swf_free(&in->trace);
        google_free(&in->google);
        google_machines_free(&in->google_cluster);
        inst_machines_free(&in->file);
        free(in->machines);
}

/* The last arrival of a trace, for the default sampling period. */
static double last_arrival(const sim_options *so, const sim_input *in) {
        const sim_jobs *jobs = so->trace ? &in->trace.jobs : &in->google.jobs;
        return jobs->v[jobs->n - 1].arrival;
}

static int run_sim(cli *c, int argc, char **argv) {
        sim_options so = { .policy = "first-fit",
                           .scale = 100,
                           .njobs = 10000,
                           .load = 0.8,
                           .seed = 1,
                           .mem_per_proc = (int64_t)1 << 30,
                           .google_scale = { .mcpu = 64000, .mem = (int64_t)256 << 30 } };
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
                cfg.sample_seconds =
                        so.workload ? (double)so.njobs / in.arrival_rate / 100 : fmax(1, last_arrival(&so, &in) / 100);
        progress bar;
        size_t njobs = so.trace    ? in.trace.jobs.n
                       : so.google ? in.google.jobs.n
                                   : so.njobs * wl_tasks_per_job(so.workload);
        progress_start(&bar, "colony sim", "arrivals and ends", 2 * njobs);
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
        status = close_jobs_csv(c, &so, &in);
        if (status == 0)
                status = sim_report(c, &so, &cfg, &in, &r);
        sim_result_free(&r);
done:
        sched_dispatcher_free(cfg.dispatcher);
        close_input(&in);
        return status;
}

/* colony lists it with its summary (colony.c) and colony-offline runs it. */
const cli_command cmd_sim = { .name = "sim", .usage = sim_usage, .run = run_sim };
