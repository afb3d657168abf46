/* demo.c - `colony demo`: a local cluster in a temporary directory, four jobs that show CPU
 * and memory limits and queueing, a summary of what happened, and everything stopped again
 * (also after a failed step or Ctrl-C). */
#include "cli.h"
#include "devcluster.h"
#include "format.h"
#include "jobs.h"
#include "outcome.h"
#include "proto.h"
#include "units.h"
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#ifndef COLONY_BINDIR
#error "COLONY_BINDIR must be defined by the build"
#endif

#define DEMO_AGENT_CPUS "2"
#define DEMO_AGENT_MEM  "2G"
#define UP_TIMEOUT_MS                                                                                                  \
        60000 /* a bound for failures: an agent that moves into a scope first took 5 s in a loaded TCG guest */
#define WAIT_TIMEOUT_MS 120000 /* the four jobs take about 6 s */

#define LOG_TAIL_LINES 15
#define MB             ((int64_t)1 << 20)

enum { CPU_HALF, MEM_FITS, MEM_OVER, QUEUED, N_JOBS };

typedef struct demo_job {
        const char *name;
        int64_t mcpu, mem;
        const char *args[4]; /* colony-stress's arguments */
        const char *what;    /* printed when it is submitted */
        job_state expect;
        uint64_t id;
        job rec; /* once it ended */
        bool ended;
} demo_job;

typedef struct demo {
        cli *c;
        char dir[PATH_MAX];
        char stress[PATH_MAX];
        char prefix[32];
        dev_cluster cl;
        bool dir_made, up;
        demo_job jobs[N_JOBS];
        cJSON *records; /* --json: the ended jobs' records */
} demo;

/* Designated fields: clang's -Wmissing-field-initializers would count the run-time ones as missing. */
static const demo_job workload[N_JOBS] = {
        [CPU_HALF] = { .name = "cpu-half",
                       .mcpu = 500,
                       .mem = 64 * MB,
                       .args = { "cpu", "4" },
                       .what = "spins for 4 s, held to half a core",
                       .expect = JOB_COMPLETED },
        [MEM_FITS] = { .name = "mem-fits",
                       .mcpu = 500,
                       .mem = 128 * MB,
                       .args = { "mem", "64M", "2" },
                       .what = "touches 64M under a 128M limit",
                       .expect = JOB_COMPLETED },
        [MEM_OVER] = { .name = "mem-over",
                       .mcpu = 500,
                       .mem = 64 * MB,
                       .args = { "mem", "256M", "2" },
                       .what = "touches 256M under a 64M limit",
                       .expect = JOB_OOM_KILLED },
        [QUEUED] = { .name = "queued",
                     .mcpu = 1500,
                     .mem = 64 * MB,
                     .args = { "sleep", "1" },
                     .what = "needs 1.5 CPUs: more than is left",
                     .expect = JOB_COMPLETED },
};

static const char demo_usage[] =
        "Usage: colony demo [--keep] [--json]\n"
        "Start a local cluster (a controller and one agent with 2 CPUs and 2G) in a temporary\n"
        "directory, run four jobs under real cgroup limits, and say what happened:\n"
        "  cpu-half  --cpus 0.5 --mem 64M   colony-stress cpu 4         held to half a core\n"
        "  mem-fits  --cpus 0.5 --mem 128M  colony-stress mem 64M 2     fits its memory limit\n"
        "  mem-over  --cpus 0.5 --mem 64M   colony-stress mem 256M 2    OOM-killed\n"
        "  queued    --cpus 1.5 --mem 64M   colony-stress sleep 1       waits for free CPUs\n"
        "Then stop the cluster and remove the directory (--keep: keep it, with the logs).\n"
        "Needs root. Exits 0 when every job ended as expected, else 1.\n";

static double seconds(int64_t usec) { return (double)usec / 1e6; }

/* Start the cluster in a new temporary directory. Returns 0 or -errno (error printed). */
static int demo_start(demo *d) {
        dev_options o = {
                .agents = 1, .agent_cpus = DEMO_AGENT_CPUS, .agent_mem = DEMO_AGENT_MEM, .timeout_ms = UP_TIMEOUT_MS
        };
        char err[ERRLEN];
        int r;

        snprintf(d->dir, sizeof(d->dir), "/tmp/colony-demo-XXXXXX");
        if (!mkdtemp(d->dir)) {
                cli_error(d->c, "cannot create a directory in /tmp: %s", strerror(errno));
                return -errno;
        }
        d->dir_made = true;
        /* Agent names must be unique on the host: they name cgroups. */
        snprintf(d->prefix, sizeof(d->prefix), "demo%d-", (int)getpid());
        o.dir = d->dir;
        o.name_prefix = d->prefix;
        if (!d->c->json)
                printf("Starting a controller and one agent (%s CPUs, %s) in %s\n", DEMO_AGENT_CPUS, DEMO_AGENT_MEM,
                       d->dir);
        fflush(stdout);
        r = dev_up(&o, &d->cl, err, sizeof(err));
        if (r < 0 && r != -EINTR) { /* an interrupt is reported once, by run_demo */
                cli_error(d->c, "%s", err);
                if (d->cl.failed_log[0])
                        dev_print_log_tail(d->cl.failed_log, LOG_TAIL_LINES, stderr);
        }
        if (r < 0)
                return r;
        d->up = true;
        return 0;
}

/* Submit j and add a line about it to t. Returns 0 or -errno (error printed). */
static int demo_submit(demo *d, demo_job *j, fmt_table *t) {
        char *argv[6] = { d->stress, (char *)j->args[0], (char *)j->args[1], (char *)j->args[2], NULL, NULL };
        char out[PATH_MAX + 64], err[ERRLEN], id[32], cpus[FMT_BUF], mem[FMT_BUF], req[3 * FMT_BUF], *cmd;
        extern char **environ;
        job_spec s = { .name = (char *)j->name,
                       .argv = argv,
                       .env = environ,
                       .umask = JOB_UMASK_DEFAULT,
                       .cwd = d->dir,
                       .stdout_path = out,
                       .req = { .mcpu = j->mcpu, .mem = j->mem } };
        int r;

        snprintf(out, sizeof(out), "%s/%s.out", d->dir, j->name);
        r = jobs_submit(d->cl.socket, &s, NULL, 0, &j->id, NULL, err, sizeof(err));
        if (r < 0) {
                cli_error(d->c, "submitting %s: %s", j->name, err);
                return r;
        }
        snprintf(id, sizeof(id), "%" PRIu64, j->id);
        snprintf(req, sizeof(req), "--cpus %s --mem %s", units_format_cpus(j->mcpu, cpus, sizeof(cpus)),
                 units_format_size(j->mem, mem, sizeof(mem)));
        argv[0] = "colony-stress";
        cmd = fmt_argv(argv);
        r = fmt_table_row(t, id, j->name, req, cmd, j->what);
        free(cmd);
        return r;
}

/* Wait for every job to end. Returns 0 or -errno (error printed). */
static int demo_wait(demo *d) {
        struct timespec t0;
        char err[ERRLEN];
        int r = 0;

        clock_gettime(CLOCK_MONOTONIC, &t0);
        for (int i = 0; i < N_JOBS && r == 0; i++) {
                demo_job *j = &d->jobs[i];
                struct timespec t;
                cJSON *reply = NULL;
                clock_gettime(CLOCK_MONOTONIC, &t);
                int left = WAIT_TIMEOUT_MS - (int)((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000);
                r = jobs_wait(d->cl.socket, j->id, left > 0 ? left : 0, &j->rec, &reply, err, sizeof(err));
                if (r < 0 && r != -EINTR) /* an interrupt is reported once, by run_demo */
                        cli_error(d->c, "waiting for %s (job %" PRIu64 "): %s", j->name, j->id, err);
                j->ended = r == 0;
                if (r == 0 && d->records)
                        cJSON_AddItemToArray(d->records, cJSON_DetachItemFromObject(reply, "job"));
                cJSON_Delete(reply);
        }
        return r;
}

static int64_t run_usec(const job *j) {
        return j->start_usec && j->end_usec > j->start_usec ? j->end_usec - j->start_usec : 0;
}

static int summary_row(fmt_table *t, const demo_job *j) {
        char id[32], how[FMT_BUF], cpu[FMT_BUF], rate[2 * FMT_BUF], mem[3 * FMT_BUF], waited[FMT_BUF];
        char a[FMT_BUF], b[FMT_BUF];
        const job *r = &j->rec;
        int64_t run = run_usec(r);

        snprintf(id, sizeof(id), "%" PRIu64, j->id);
        snprintf(cpu, sizeof(cpu), "%.1f s", seconds((int64_t)r->result.cpu_usec));
        snprintf(rate, sizeof(rate), "%.2f / %s", run ? (double)r->result.cpu_usec / (double)run : 0.0,
                 units_format_cpus(j->mcpu, a, sizeof(a)));
        snprintf(mem, sizeof(mem), "%s / %s", units_format_size((int64_t)r->result.mem_peak, a, sizeof(a)),
                 units_format_size(j->mem, b, sizeof(b)));
        fmt_duration(r->start_usec ? r->start_usec - r->submit_usec : -1, waited, sizeof(waited));
        return fmt_table_row(t, j->name, id, job_state_name(r->state), outcome_describe(r, how, sizeof(how)), cpu, rate,
                             mem, waited);
}

static void print_table(const demo *d) {
        static const char *const headers[] = {
                "JOB", "ID", "STATE", "EXIT", "CPU TIME", "CORES USED / LIMIT", "PEAK MEM / LIMIT", "WAITED"
        };
        fmt_table t;
        int r = fmt_table_init(&t, 8, headers);

        for (int i = 0; r == 0 && i < N_JOBS; i++)
                r = summary_row(&t, &d->jobs[i]);
        if (r == 0)
                fmt_table_print(&t, stdout);
        fmt_table_free(&t);
}

#define LINE 512
#define WRAP 78

static void say_cpu_half(const demo_job *j, char *out) {
        const job *r = &j->rec;
        double run = seconds(run_usec(r)), cpu = seconds((int64_t)r->result.cpu_usec);
        double rate = run > 0 ? cpu / run : 0, limit = (double)j->mcpu / 1000;
        char lim[FMT_BUF];

        units_format_cpus(j->mcpu, lim, sizeof(lim));
        if (r->state != JOB_COMPLETED)
                snprintf(out, LINE, "%s should have completed but ended %s.", j->name, job_state_name(r->state));
        else if (rate <= limit * 1.1)
                snprintf(out, LINE, "%s was held to %.2f cores (limit %s): %.1f CPU-s in %.1f s of spinning.", j->name,
                         rate, lim, cpu, run);
        else
                snprintf(out, LINE, "%s used %.2f cores although its limit is %s: %.1f CPU-s in %.1f s.", j->name, rate,
                         lim, cpu, run);
}

static void say_mem_fits(const demo_job *j, char *out) {
        char peak[FMT_BUF], lim[FMT_BUF];

        units_format_size((int64_t)j->rec.result.mem_peak, peak, sizeof(peak));
        units_format_size(j->mem, lim, sizeof(lim));
        if (j->rec.state == JOB_COMPLETED)
                snprintf(out, LINE, "%s peaked at %s, within its %s limit, and completed.", j->name, peak, lim);
        else
                snprintf(out, LINE, "%s peaked at %s under its %s limit but ended %s.", j->name, peak, lim,
                         job_state_name(j->rec.state));
}

/* True when a was running for the whole moment t (its end included). */
static bool running_at(const job *a, int64_t t) { return a->start_usec && a->start_usec <= t && a->end_usec >= t; }

static void say_mem_over(const demo *d, char *out) {
        const demo_job *j = &d->jobs[MEM_OVER];
        const job *r = &j->rec, *cpu = &d->jobs[CPU_HALF].rec, *fits = &d->jobs[MEM_FITS].rec;
        bool others = running_at(cpu, r->end_usec) && running_at(fits, r->end_usec) && cpu->state == JOB_COMPLETED &&
                      fits->state == JOB_COMPLETED;
        char lim[FMT_BUF];

        units_format_size(j->mem, lim, sizeof(lim));
        if (r->state == JOB_OOM_KILLED)
                snprintf(out, LINE, "%s touched more than its %s limit and was OOM-killed (%" PRIu64 " OOM kill%s)%s.",
                         j->name, lim, r->result.oom_kills, r->result.oom_kills == 1 ? "" : "s",
                         others ? " while the others kept running" : "");
        else
                snprintf(out, LINE, "%s should have been OOM-killed at its %s limit but ended %s.", j->name, lim,
                         job_state_name(r->state));
}

/* The job that ended last before t, the one whose cores let queued start. */
static const demo_job *freed_by(const demo *d, int64_t t) {
        const demo_job *best = NULL;

        for (int i = 0; i < QUEUED; i++)
                if (d->jobs[i].rec.end_usec && d->jobs[i].rec.end_usec <= t &&
                    (!best || d->jobs[i].rec.end_usec > best->rec.end_usec))
                        best = &d->jobs[i];
        return best;
}

static void say_queued(const demo *d, char *out) {
        const demo_job *j = &d->jobs[QUEUED], *freer;
        const job *r = &j->rec;
        char need[FMT_BUF], held[FMT_BUF], waited[FMT_BUF];

        units_format_cpus(j->mcpu, need, sizeof(need));
        units_format_cpus(d->jobs[CPU_HALF].mcpu + d->jobs[MEM_FITS].mcpu + d->jobs[MEM_OVER].mcpu, held, sizeof(held));
        if (!r->start_usec) {
                snprintf(out, LINE, "%s never started (%s).", j->name, job_state_name(r->state));
                return;
        }
        fmt_duration(r->start_usec - r->submit_usec, waited, sizeof(waited));
        freer = freed_by(d, r->start_usec);
        if (freer)
                snprintf(out, LINE,
                         "%s needed %s CPUs while the three jobs ahead of it held %s of the %s, so it "
                         "waited %s and started once %s ended and freed its share.",
                         j->name, need, held, DEMO_AGENT_CPUS, waited, freer->name);
        else
                snprintf(out, LINE,
                         "%s needed %s CPUs and started after %s, before any job ahead of it ended: "
                         "it did not wait for capacity.",
                         j->name, need, waited);
}

/* A string field of the agent's node record, or NULL. */
static const char *node_field(const demo *d, const char *name) {
        const cJSON *node = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(d->cl.nodes, "nodes"), 0);
        const char *value = NULL;
        char perr[PROTO_ERRLEN];

        return proto_get_str(node, name, &value, perr) == 0 ? value : NULL;
}

/* Where the jobs ran. */
static void say_where(const demo *d, char *out) {
        const char *mode = node_field(d, "cgroup_mode"), *root = node_field(d, "cgroup_root");

        mode = mode ? mode : "?";
        root = root ? root : "the agent's subtree";
        snprintf(out, LINE,
                 "The kernel enforced these limits: each job ran in a cgroup of its own (cgroup %s), "
                 "job-<id> below %s.",
                 mode, root);
}

static void demo_report(const demo *d) {
        char line[LINE];

        printf("\nWhat happened:\n\n");
        print_table(d);
        putchar('\n');
        say_cpu_half(&d->jobs[CPU_HALF], line);
        fmt_wrap(stdout, "* ", line, WRAP);
        say_mem_fits(&d->jobs[MEM_FITS], line);
        fmt_wrap(stdout, "* ", line, WRAP);
        say_mem_over(d, line);
        fmt_wrap(stdout, "* ", line, WRAP);
        say_queued(d, line);
        fmt_wrap(stdout, "* ", line, WRAP);
        say_where(d, line);
        fmt_wrap(stdout, "* ", line, WRAP);
}

/* Whether every job ended as expected; the first that did not is named in reason. */
static bool demo_verdict(const demo *d, char *reason, size_t len) {
        for (int i = 0; i < N_JOBS; i++) {
                const demo_job *j = &d->jobs[i];
                if (j->rec.state != j->expect) {
                        snprintf(reason, len, "%s ended %s, expected %s", j->name, job_state_name(j->rec.state),
                                 job_state_name(j->expect));
                        return false;
                }
        }
        return true;
}

static int remove_entry(const char *path, const struct stat *st, int type, struct FTW *ftw) {
        (void)st;
        (void)ftw;
        return (type == FTW_DP ? rmdir(path) : unlink(path)) < 0 && errno != ENOENT ? -1 : 0;
}

/* After the stop: say so, and that the agent's cgroup subtree went with it. */
static int check_gone(const demo *d) {
        const char *root = node_field(d, "cgroup_root");

        if (root && access(root, F_OK) == 0) {
                cli_error(d->c, "%s is still there after stopping agent %s", root, d->cl.agents[0].name);
                return -EBUSY;
        }
        char line[LINE];

        if (d->c->json)
                return 0;
        snprintf(line, sizeof(line), "Stopped agent %s and the controller; %s is gone.", d->cl.agents[0].name,
                 root ? root : "the agent's cgroup subtree");
        putchar('\n');
        fmt_wrap(stdout, "", line, WRAP);
        return 0;
}

/* Stop the cluster (whatever state the demo is in) and remove the directory unless keep. */
static int demo_stop(demo *d, bool keep) {
        char err[ERRLEN];
        dev_stopped *set = NULL;
        size_t n = 0;
        int r = 0;

        if (d->dir_made && dev_down(d->dir, &set, &n, err, sizeof(err)) < 0) {
                cli_error(d->c, "stopping the cluster: %s", err);
                r = -EIO;
        }
        for (size_t i = 0; i < n; i++)
                if (set[i].how == DEV_STUCK) {
                        cli_error(d->c, "could not stop %s (pid %d); %s is kept", set[i].name, (int)set[i].pid, d->dir);
                        keep = true;
                        r = -EBUSY;
                }
        if (d->up && r == 0)
                r = check_gone(d);
        if (d->dir_made && !keep && nftw(d->dir, remove_entry, 16, FTW_DEPTH | FTW_PHYS) < 0) {
                cli_error(d->c, "cannot remove %s: %s", d->dir, strerror(errno));
                r = -EIO;
        } else if (d->dir_made && keep && !d->c->json)
                printf("Kept %s (logs, database, job output).\n", d->dir);
        free(set);
        return r;
}

/* Submit, wait, report. Returns 0 when the jobs ran to the end (whatever their states). */
static int demo_run(demo *d) {
        int r = 0;

        static const char *const headers[] = { "ID", "JOB", "REQUEST", "COMMAND", "WHY" };
        fmt_table t;

        r = fmt_table_init(&t, 5, headers);
        for (int i = 0; i < N_JOBS && r == 0; i++)
                r = cli_interrupted ? -EINTR : demo_submit(d, &d->jobs[i], &t);
        if (!d->c->json && t.nrows > 1) {
                printf("Submitted four jobs:\n\n");
                fmt_table_print(&t, stdout);
        }
        fmt_table_free(&t);
        if (r == 0) {
                if (!d->c->json)
                        printf("\nWaiting for them to end...\n");
                fflush(stdout);
                r = demo_wait(d);
        }
        if (r == 0 && !d->c->json)
                demo_report(d);
        return r;
}

static int parse_demo(cli *c, int argc, char **argv, bool *keep) {
        enum { OPT_KEEP = CLI_OPT_OWN };
        static const struct option options[] = { { "keep", no_argument, NULL, OPT_KEEP }, { 0 } };
        int o;

        while ((o = cli_getopt(c, argc, argv, options)) > 0)
                *keep = true;
        return cli_opts_end(c, o, argc, argv);
}

static int print_json(demo *d, bool ok, const char *reason) {
        cJSON *o = cJSON_CreateObject();
        int r;

        cJSON_AddBoolToObject(o, "ok", ok);
        if (!ok)
                cJSON_AddStringToObject(o, "reason", reason);
        cJSON_AddItemToObject(o, "jobs", d->records);
        d->records = NULL;
        r = fmt_json(o);
        cJSON_Delete(o);
        return r;
}

static int run_demo(cli *c, int argc, char **argv) {
        demo d = { .c = c };
        char reason[256] = "";
        bool keep = false, ok = false;
        int r;

        r = parse_demo(c, argc, argv, &keep);
        if (r >= 0)
                return r;
        if (geteuid() != 0) {
                cli_error(c, "needs root: the agent creates cgroups and runs jobs as their users");
                return EXIT_FAIL;
        }
        if (dev_find_program("colony-stress", COLONY_BINDIR, d.stress, sizeof(d.stress)) < 0) {
                cli_error(c, "cannot find colony-stress next to colony or in %s", COLONY_BINDIR);
                return EXIT_FAIL;
        }
        memcpy(d.jobs, workload, sizeof(workload));
        d.records = c->json ? cJSON_CreateArray() : NULL;
        cli_catch_signals();
        r = demo_start(&d);
        if (r == 0)
                r = demo_run(&d);
        if (r == 0 && !(ok = demo_verdict(&d, reason, sizeof(reason))))
                r = -EPROTO;
        if (cli_interrupted)
                cli_error(c, "interrupted; stopping the cluster");
        if (demo_stop(&d, keep) < 0 && r == 0)
                r = -EIO;
        if (c->json)
                print_json(&d, ok, reason[0] ? reason : "the demo did not run to the end");
        if (r == -EPROTO)
                cli_error(c, "%s", reason);
        else if (r == 0 && !c->json)
                printf("\nDemo OK: every job ended as expected.\n");
        for (int i = 0; i < N_JOBS; i++)
                job_free(&d.jobs[i].rec);
        cJSON_Delete(d.records);
        dev_cluster_free(&d.cl);
        return r == 0 ? 0 : EXIT_FAIL;
}

const cli_command cmd_demo = { "demo", "run a sample workload on a throwaway local cluster and explain it", demo_usage,
                               false, run_demo };
