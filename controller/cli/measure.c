/* measure.c - colony measure: estimate the interference matrix alpha that policies/coloc
 * consumes, on a running cluster. Each type runs alone and then beside a busy job of each type,
 * both pinned to one CPU; alpha(j -> i) = t_ij / t_i - 1, paired by repetition, with a Student t
 * 95% interval. Method and figures: docs/policies.md, "Measuring interference". */
#include "alpha_cli.h"
#include "cli.h"
#include "client.h"
#include "devcluster.h"
#include "jobs.h"
#include "progress.h"
#include "units.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define MAX_TYPES      12     /* what colony coloc accepts */
#define MAX_ARGS       12     /* taskset -c CPU, the background loop's sh -c, the command */
#define RUN_TIMEOUT_MS 600000 /* one measured run; a workload this slow is misconfigured */
#define POLL_MS        20
#define PENDING_MS     30000 /* a job pending this long waits for room that will not come */

static const char measure_usage[] =
        "Usage: colony measure [--types LIST] [--type NAME=CMD]... [--reps R] [--cpus N]\n"
        "                      [--mem SIZE] [--pin CPU] [--size F] [--no-upload] [--json]\n"
        "       colony measure --show [--version N] [--png FILE] [--json]\n"
        "       colony measure --upload FILE\n"
        "Estimate how much a job of one type slows a job of another on this cluster's hosts.\n"
        "Each type runs alone, then beside a job of each type (started first and kept busy, then\n"
        "cancelled), R times each, both pinned to one CPU. alpha[j][i] = t_ij / t_i - 1: how much\n"
        "one job of type j slows a job of type i, as a fraction of i's time alone.\n\n"
        "  --types LIST     built-in types, comma-separated: cpu, membw, cache, io, idle\n"
        "                   (default: all five unless --type is given)\n"
        "  --type NAME=CMD  a type of your own: CMD runs with /bin/sh -c, and must do a fixed\n"
        "                   amount of work and exit 0 (repeatable)\n"
        "  --reps R         repetitions of every run (default 3, at least 2)\n"
        "  --cpus N         CPUs each job requests (default 1)\n"
        "  --mem SIZE       memory each job requests (default 256M)\n"
        "  --pin CPU        the CPU list both jobs of a pair are pinned to (taskset -c; default 0)\n"
        "  --size F         scale the built-in work (default 1: about a second alone)\n"
        "  --json           {\"types\", \"alpha\", \"ci95_low\", \"ci95_high\", ..., \"version\"}; its types\n"
        "                   and alpha are a colony coloc instance's\n"
        "  --no-upload      do not store the matrix in the controller (by default it is stored\n"
        "                   as a new version, which policy = coloc places by)\n"
        "  --show           print the controller's matrix: the latest, or --version N\n"
        "  --png FILE       with --show: draw it as a heatmap with gnuplot\n"
        "  --upload FILE    store a matrix saved with --json earlier, without measuring\n";

/* Built-in types: a colony-stress fixed work, and its units for about a second alone. */
static const struct {
        const char *name, *work;
        double units;
} builtins[] = {
        { "cpu", "work-cpu", 200 }, { "membw", "work-membw", 40 }, { "cache", "work-cache", 5 },
        { "io", "work-io", 400 },   { "idle", "work-idle", 100 },
};
#define N_BUILTINS (sizeof(builtins) / sizeof(builtins[0]))

typedef struct mtype {
        const char *name;
        char *cmd[4]; /* the command, NULL-terminated; cmd[0] is owned */
        char *units;  /* a built-in's N (owned), or NULL */
} mtype;

typedef struct measure {
        cli *c;
        char sock[PATH_MAX], cwd[PATH_MAX], stress[PATH_MAX];
        mtype types[MAX_TYPES];
        int ntypes, reps;
        int64_t mcpu, mem;
        const char *pin;
        char *builtin_list; /* owned: strtok_r cuts it */
        double size;
        double *alone, *pair; /* seconds: alone[i][r], pair[j][i][r] (j busy beside i) */
        uint64_t bg, fg;      /* the busy and the measured job running now, 0 when none */
        bool show, upload;    /* --show; store the result (not --no-upload) */
        const char *png, *upload_file;
        uint64_t version;  /* --version */
        char bg_node[256]; /* the host it runs on */
        int done, total;   /* runs, for the progress line */
        progress bar;
} measure;

static double *alone_at(measure *m, int i, int r) { return &m->alone[i * m->reps + r]; }

static double *pair_at(measure *m, int j, int i, int r) { return &m->pair[(j * m->ntypes + i) * m->reps + r]; }

/* ---- statistics ---- */

/* The 0.975 quantile of Student's t with df degrees of freedom. */
static double t975(int df) {
        static const double q[] = { 12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228,
                                    2.201,  2.179, 2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086,
                                    2.080,  2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042 };

        const double z = 1.959964;

        if (df <= 30)
                return q[df - 1];
        return z + (z * z * z + z) / (4.0 * df); /* Cornish-Fisher's first term: within 0.2% beyond 30 */
}

/* Mean of x[0..n-1] and the half-width of its 95% confidence interval (n >= 2). */
static void mean_ci(const double *x, int n, double *mean, double *half) {
        double s = 0, ss = 0;

        for (int k = 0; k < n; k++)
                s += x[k];
        *mean = s / n;
        for (int k = 0; k < n; k++)
                ss += (x[k] - *mean) * (x[k] - *mean);
        *half = t975(n - 1) * sqrt(ss / (n - 1)) / sqrt(n);
}

/* alpha(j -> i) of repetition r: the pair's time over the time alone measured in the same
 * repetition, so that a host getting busier or quieter between repetitions cancels out. */
static void alpha_ci(measure *m, int j, int i, double *mean, double *half) {
        double x[m->reps];

        for (int r = 0; r < m->reps; r++)
                x[r] = *pair_at(m, j, i, r) / *alone_at(m, i, r) - 1;
        mean_ci(x, m->reps, mean, half);
}

/* ---- running jobs ---- */

static void show_run(measure *m, const char *what, int i, int j) {
        char note[PROGRESS_NOTE_MAX];
        snprintf(note, sizeof(note), "%s%s%s", m->types[i].name, what, j >= 0 ? m->types[j].name : "");
        progress_update(&m->bar, (size_t)m->done, note);
}

/* Submit type i's command (looped forever when loop), pinned. Both jobs of a pair must be
 * allowed on the pinned core: share_cores keeps the agent from giving each a core of its own.
 * Returns 0 or -errno. */
static int submit(measure *m, int i, bool loop, uint64_t *id) {
        char name[64], err[ERRLEN], **cmd = m->types[i].cmd;
        char *argv[MAX_ARGS] = { "/usr/bin/taskset", "-c", (char *)m->pin };
        int n = 3;
        extern char **environ;
        job_spec s = { .name = name,
                       .job_type = (char *)m->types[i].name,
                       .argv = argv,
                       .env = environ,
                       .umask = JOB_UMASK_DEFAULT,
                       .cwd = m->cwd,
                       .stdout_path = "/dev/null",
                       .req = { .mcpu = m->mcpu, .mem = m->mem },
                       .share_cores = true };
        static char *const looped[] = { "/bin/sh", "-c", "while :; do \"$@\"; done", "sh" };
        int r;

        /* The loop's arguments are the command: "$@". */
        for (int k = 0; loop && k < 4; k++)
                argv[n++] = looped[k];
        for (int k = 0; cmd[k]; k++)
                argv[n++] = cmd[k];
        snprintf(name, sizeof(name), "measure-%s%s", loop ? "busy-" : "", m->types[i].name);
        r = jobs_submit(m->sock, &s, NULL, 0, id, NULL, err, sizeof(err));
        if (r < 0)
                cli_error(m->c, "submitting %s: %s", name, err);
        return r;
}

/* Copy the host a job ran on into node (256 bytes; "" when none). */
static void node_of(const job *j, char *node) { snprintf(node, 256, "%s", j->node ? j->node : ""); }

/* Wait for job id to end; its elapsed seconds into *secs when it completed (NULL: any end
 * will do). Returns 0 or -errno (printed; a job that did not complete is -EIO). */
static int finish(measure *m, uint64_t id, double *secs) {
        char err[ERRLEN];
        job j = { 0 };
        int r = jobs_wait(m->sock, id, RUN_TIMEOUT_MS, &j, NULL, err, sizeof(err));

        if (r < 0)
                cli_error(m->c, "waiting for job %" PRIu64 ": %s", id, err);
        else if (secs && j.state != JOB_COMPLETED) {
                cli_error(m->c, "job %" PRIu64 " (%s) %s%s%s", id, j.spec.name, job_state_name(j.state),
                          j.result.error ? ": " : "", j.result.error ? j.result.error : "");
                r = -EIO;
        } else if (secs)
                *secs = (double)(j.end_usec - j.start_usec) / 1e6;
        job_free(&j);
        return r;
}

/* Job id's state into *state and its host into node. Returns 0 or -errno (printed). */
static int job_state_of(measure *m, uint64_t id, job_state *state, char *node) {
        char err[ERRLEN], perr[PROTO_ERRLEN] = "";
        cJSON *reply = NULL;
        job j = { 0 };
        int r = client_simple(m->sock, "show", id, "job", REQUEST_TIMEOUT_MS, &reply, err, sizeof(err));

        if (r < 0)
                cli_error(m->c, "job %" PRIu64 ": %s", id, err);
        else if (job_from_json(cJSON_GetObjectItemCaseSensitive(reply, "job"), &j, perr) < 0) {
                cli_error(m->c, "job %" PRIu64 ": bad job record from the controller: %s", id, perr);
                r = -EBADMSG;
        } else {
                *state = j.state;
                node_of(&j, node);
        }
        job_free(&j);
        cJSON_Delete(reply);
        return r;
}

/* Poll until job id has left the queue: its state (running or over) into *state, its host into
 * node. Returns 0 or -errno (printed; -ETIMEDOUT when no host made room for it). */
static int until_started(measure *m, uint64_t id, job_state *state, char *node) {
        const struct timespec pause = { .tv_nsec = POLL_MS * 1000000L };
        int r, polls = 0;

        while ((r = job_state_of(m, id, state, node)) == 0 && *state == JOB_PENDING && !cli_interrupted &&
               polls++ < PENDING_MS / POLL_MS)
                nanosleep(&pause, NULL);
        if (r == 0 && cli_interrupted)
                r = -EINTR;
        else if (r == 0 && *state == JOB_PENDING) {
                cli_error(m->c, "job %" PRIu64 " still pending after %d s: no host has room for it%s", id,
                          PENDING_MS / 1000, m->bg ? " beside its busy neighbour" : "");
                r = -ETIMEDOUT;
        }
        return r;
}

/* Start the busy job of type j and wait until it runs. Returns 0 or -errno (printed). */
static int start_background(measure *m, int j) {
        job_state state = JOB_PENDING;
        int r = submit(m, j, true, &m->bg);

        if (r == 0)
                r = until_started(m, m->bg, &state, m->bg_node);
        if (r == 0 && state != JOB_RUNNING) {
                cli_error(m->c, "the busy job %" PRIu64 " %s before it was needed", m->bg, job_state_name(state));
                r = -EIO;
        }
        return r;
}

/* Cancel the job *idp, if any, and wait until it is gone from the CPU. */
static int stop(measure *m, uint64_t *idp) {
        char err[ERRLEN];
        uint64_t id = *idp;
        cJSON *reply = NULL;
        int r;

        if (!id)
                return 0;
        *idp = 0;
        r = client_simple(m->sock, "cancel", id, "cancelled", REQUEST_TIMEOUT_MS, &reply, err, sizeof(err));
        cJSON_Delete(reply);
        if (r < 0) {
                cli_error(m->c, "cancelling job %" PRIu64 ": %s", id, err);
                return r;
        }
        return finish(m, id, NULL);
}

/* One run of type i, beside a busy job of type j when j >= 0; its seconds into *secs. */
static int run_once(measure *m, int i, int j, double *secs) {
        job_state state;
        char node[256];
        uint64_t id = 0;
        int r = 0;

        show_run(m, j >= 0 ? " beside " : " alone", i, j);
        if (j >= 0)
                r = start_background(m, j);
        if (r == 0 && (r = submit(m, i, false, &m->fg)) == 0) {
                id = m->fg;
                r = until_started(m, id, &state, node);
        }
        if (r == 0)
                r = finish(m, id, secs);
        /* Interrupted or out of patience, the job still runs and is cancelled; otherwise it has
         * ended (or the controller is gone, and a cancel could not reach it either). */
        if (r != -EINTR && r != -ETIMEDOUT)
                m->fg = 0;
        /* The controller places each job on its own; a pair split over two hosts measured nothing. */
        if (r == 0 && j >= 0 && strcmp(node, m->bg_node) != 0) {
                cli_error(m->c,
                          "job %" PRIu64
                          " ran on %s and its busy neighbour on %s: measure needs a host with room for both",
                          id, node, m->bg_node);
                r = -EXDEV;
        }
        if (r == 0)
                r = stop(m, &m->bg);
        m->done++;
        return r;
}

/* Every run, repetition by repetition (so that drift in the host's load spreads over all
 * entries instead of biasing the last ones). Returns 0 or -errno (printed). */
static int run_all(measure *m) {
        int r = 0;

        progress_start(&m->bar, "colony measure", "runs", (size_t)m->total);
        for (int rep = 0; rep < m->reps && r == 0; rep++)
                for (int i = 0; i < m->ntypes && r == 0; i++) {
                        r = run_once(m, i, -1, alone_at(m, i, rep));
                        for (int j = 0; j < m->ntypes && r == 0; j++)
                                r = run_once(m, i, j, pair_at(m, j, i, rep));
                }
        if (r < 0) { /* best effort: the reason is already printed */
                stop(m, &m->fg);
                stop(m, &m->bg);
        }
        progress_end(&m->bar);
        return r;
}

/* ---- output ---- */

static void print_table(measure *m) {
        double mean, half;

        printf("alone (s, mean +- 95%% CI over %d runs):\n", m->reps);
        for (int i = 0; i < m->ntypes; i++) {
                double x[m->reps];
                for (int r = 0; r < m->reps; r++)
                        x[r] = *alone_at(m, i, r);
                mean_ci(x, m->reps, &mean, &half);
                printf("  %-10s %.3f +- %.3f\n", m->types[i].name, mean, half);
        }
        printf("\nalpha[row][column]: how much one job of type row slows a job of type column\n%-10s", "");
        for (int i = 0; i < m->ntypes; i++)
                printf(" %16s", m->types[i].name);
        for (int j = 0; j < m->ntypes; j++) {
                printf("\n%-10s", m->types[j].name);
                for (int i = 0; i < m->ntypes; i++) {
                        char cell[48];
                        alpha_ci(m, j, i, &mean, &half);
                        snprintf(cell, sizeof(cell), "%.3f +- %.3f", mean, half);
                        printf(" %16s", cell);
                }
        }
        printf("\n");
}

/* A row of the matrix: f(mean, half) for each column i of row j. */
static cJSON *json_row(measure *m, int j, double (*f)(double mean, double half)) {
        cJSON *row = cJSON_CreateArray();
        double mean, half;

        for (int i = 0; row && i < m->ntypes; i++) {
                alpha_ci(m, j, i, &mean, &half);
                cJSON_AddItemToArray(row, cJSON_CreateNumber(f(mean, half)));
        }
        return row;
}

/* colony coloc refuses negative coefficients; a mean below 0 is noise around "no effect". */
static double coloc_alpha(double mean, double half) {
        (void)half;
        return mean > 0 ? mean : 0;
}
static double ci_low(double mean, double half) { return mean - half; }
static double ci_high(double mean, double half) { return mean + half; }
static double raw_mean(double mean, double half) {
        (void)half;
        return mean;
}

static cJSON *json_matrix(measure *m, double (*f)(double mean, double half)) {
        cJSON *a = cJSON_CreateArray();

        for (int j = 0; a && j < m->ntypes; j++)
                cJSON_AddItemToArray(a, json_row(m, j, f));
        return a;
}

/* pair_seconds[j][i]: every run of i beside j. */
static cJSON *json_pairs(measure *m) {
        cJSON *a = cJSON_CreateArray();

        for (int j = 0; a && j < m->ntypes; j++) {
                cJSON *row = cJSON_CreateArray();
                for (int i = 0; row && i < m->ntypes; i++)
                        cJSON_AddItemToArray(row, cJSON_CreateDoubleArray(pair_at(m, j, i, 0), m->reps));
                cJSON_AddItemToArray(a, row);
        }
        return a;
}

/* Everything measured, as --json prints it. */
static cJSON *result_json(measure *m) {
        cJSON *o = cJSON_CreateObject(), *types = cJSON_AddArrayToObject(o, "types"),
              *alone = cJSON_AddArrayToObject(o, "alone_seconds");

        for (int i = 0; types && alone && i < m->ntypes; i++) {
                cJSON_AddItemToArray(types, cJSON_CreateString(m->types[i].name));
                cJSON_AddItemToArray(alone, cJSON_CreateDoubleArray(alone_at(m, i, 0), m->reps));
        }
        cJSON_AddItemToObject(o, "pair_seconds", json_pairs(m));
        cJSON_AddItemToObject(o, "alpha", json_matrix(m, coloc_alpha));
        cJSON_AddItemToObject(o, "alpha_mean", json_matrix(m, raw_mean));
        cJSON_AddItemToObject(o, "ci95_low", json_matrix(m, ci_low));
        cJSON_AddItemToObject(o, "ci95_high", json_matrix(m, ci_high));
        cJSON_AddNumberToObject(o, "reps", m->reps);
        cJSON_AddStringToObject(o, "pin", m->pin);
        return o;
}

/* Print the result (a table, or JSON with --json) and store it in the controller unless
 * --no-upload. Returns 0 or EXIT_FAIL (printed). */
static int report(measure *m) {
        cJSON *o = result_json(m);
        uint64_t version = 0;
        int r = o ? 0 : EXIT_FAIL;
        if (r == 0 && m->upload && (r = alpha_cli_upload(m->c, m->sock, o, &version)) == 0)
                cJSON_AddNumberToObject(o, "version", (double)version);
        char *text = m->c->json && o ? proto_print_pretty(o) : NULL;
        if (m->c->json && text)
                puts(text);
        else if (m->c->json)
                cli_error(m->c, "out of memory");
        else {
                print_table(m);
                if (version)
                        printf("\nstored as interference matrix version %" PRIu64 " (colony measure --show)\n",
                               version);
        }
        free(text);
        cJSON_Delete(o);
        return r;
}

/* ---- options ---- */

static int add_type(measure *m, const char *name) {
        for (int i = 0; i < m->ntypes; i++)
                if (strcmp(m->types[i].name, name) == 0)
                        return cli_usage_error(m->c, "type '%s' given twice", name);
        if (m->ntypes == MAX_TYPES)
                return cli_usage_error(m->c, "at most %d types", MAX_TYPES);
        m->types[m->ntypes++].name = name;
        return 0;
}

/* The command of the type added last: path arg1 arg2. Returns 0 or EXIT_FAIL (printed). */
static int set_command(measure *m, const char *path, char *arg1, char *arg2) {
        mtype *t = &m->types[m->ntypes - 1];

        t->cmd[0] = strdup(path);
        t->cmd[1] = arg1;
        t->cmd[2] = arg2;
        if (t->cmd[0])
                return 0;
        cli_error(m->c, "out of memory");
        return EXIT_FAIL;
}

/* --type NAME=CMD. The string stays owned by argv (cut at the '='). */
static int add_user_type(measure *m, char *arg) {
        char *eq = strchr(arg, '=');
        int r;

        if (!eq || eq == arg || !eq[1])
                return cli_usage_error(m->c, "--type: '%s' is not NAME=CMD", arg);
        *eq = '\0';
        if ((r = add_type(m, arg)) != 0)
                return r;
        return set_command(m, "/bin/sh", "-c", eq + 1);
}

/* The built-in types of --types: each runs colony-stress WORK N. */
static int add_builtins(measure *m, char *list) {
        for (char *save = NULL, *name = strtok_r(list, ",", &save); name; name = strtok_r(NULL, ",", &save)) {
                size_t b = 0;
                int r;
                while (b < N_BUILTINS && strcmp(builtins[b].name, name) != 0)
                        b++;
                if (b == N_BUILTINS)
                        return cli_usage_error(m->c, "--types: no built-in type '%s' (cpu, membw, cache, io, idle)",
                                               name);
                if ((r = add_type(m, name)) != 0)
                        return r;
                long n = lround(builtins[b].units * m->size);
                char **units = &m->types[m->ntypes - 1].units;
                if (asprintf(units, "%ld", n < 1 ? 1 : n) < 0) {
                        *units = NULL;
                        cli_error(m->c, "out of memory");
                        return EXIT_FAIL;
                }
                if ((r = set_command(m, m->stress, (char *)builtins[b].work, *units)) != 0)
                        return r;
        }
        return 0;
}

static int parse_number(measure *m, const char *opt, const char *s, double lo, double hi, double *out) {
        char *end;

        errno = 0;
        *out = strtod(s, &end);
        if (errno || end == s || *end || !(*out >= lo && *out <= hi))
                return cli_usage_error(m->c, "%s: '%s' is not a number from %g to %g", opt, s, lo, hi);
        return 0;
}

enum {
        OPT_TYPES = CLI_OPT_OWN,
        OPT_TYPE,
        OPT_REPS,
        OPT_CPUS,
        OPT_MEM,
        OPT_PIN,
        OPT_SIZE,
        OPT_NO_UPLOAD,
        OPT_SHOW,
        OPT_VERSION,
        OPT_PNG,
        OPT_UPLOAD
};

/* One option of measure's own. Returns 0 or an exit status. */
static int parse_one(measure *m, int o, char *arg) {
        double reps;
        int r = 0;

        switch (o) {
        case OPT_TYPES:
                free(m->builtin_list);
                if (!(m->builtin_list = strdup(arg))) {
                        cli_error(m->c, "out of memory");
                        r = EXIT_FAIL;
                }
                break;
        case OPT_TYPE: r = add_user_type(m, arg); break;
        case OPT_REPS:
                if ((r = parse_number(m, "--reps", arg, 2, 1000, &reps)) == 0)
                        m->reps = (int)reps;
                break;
        case OPT_CPUS:
                if (units_parse_cpus(arg, &m->mcpu) < 0)
                        r = cli_usage_error(m->c, "--cpus: '%s' is not a CPU count (like 1, 0.5 or 500m)", arg);
                break;
        case OPT_MEM:
                if (units_parse_size(arg, &m->mem) < 0 || m->mem == 0)
                        r = cli_usage_error(m->c, "--mem: '%s' is not a memory size (like 256M)", arg);
                break;
        case OPT_PIN: m->pin = arg; break;
        case OPT_SIZE: r = parse_number(m, "--size", arg, 0.001, 1000, &m->size); break;
        case OPT_NO_UPLOAD: m->upload = false; break;
        case OPT_SHOW: m->show = true; break;
        case OPT_VERSION:
                if ((r = parse_number(m, "--version", arg, 1, 1e15, &reps)) == 0 && reps == (double)(uint64_t)reps)
                        m->version = (uint64_t)reps;
                else if (r == 0)
                        r = cli_usage_error(m->c, "--version: '%s' is not a whole number", arg);
                break;
        case OPT_PNG: m->png = arg; break;
        case OPT_UPLOAD: m->upload_file = arg; break;
        }
        return r;
}

/* Options into m. Returns -1 to go on, else an exit status: 0 after --help, which must not go on
 * to measure. */
static int parse_measure(measure *m, int argc, char **argv) {
        static const struct option options[] = {
                { "types", required_argument, NULL, OPT_TYPES },
                { "type", required_argument, NULL, OPT_TYPE },
                { "reps", required_argument, NULL, OPT_REPS },
                { "cpus", required_argument, NULL, OPT_CPUS },
                { "mem", required_argument, NULL, OPT_MEM },
                { "pin", required_argument, NULL, OPT_PIN },
                { "size", required_argument, NULL, OPT_SIZE },
                { "no-upload", no_argument, NULL, OPT_NO_UPLOAD },
                { "show", no_argument, NULL, OPT_SHOW },
                { "version", required_argument, NULL, OPT_VERSION },
                { "png", required_argument, NULL, OPT_PNG },
                { "upload", required_argument, NULL, OPT_UPLOAD },
                { 0 },
        };
        int o, r;

        while ((o = cli_getopt(m->c, argc, argv, options)) > 0)
                if ((r = parse_one(m, o, optarg)) != 0)
                        return r;
        if ((o = cli_opts_end(m->c, o, argc, argv)) >= 0)
                return o;
        if ((m->version || m->png) && !m->show)
                return cli_usage_error(m->c, "--version and --png go with --show");
        if (m->show && m->upload_file)
                return cli_usage_error(m->c, "--show and --upload do not go together");
        if (m->show || m->upload_file)
                return -1;
        if (!m->builtin_list && m->ntypes == 0 && !(m->builtin_list = strdup("cpu,membw,cache,io,idle"))) {
                cli_error(m->c, "out of memory");
                return EXIT_FAIL;
        }
        if (m->builtin_list && (r = add_builtins(m, m->builtin_list)) != 0)
                return r;
        return m->ntypes > 0 ? -1 : cli_usage_error(m->c, "--types: no type given");
}

/* ---- the command ---- */

/* Where the jobs run and what they run. Returns 0 or EXIT_FAIL (printed). */
static int prepare(measure *m) {
        size_t n = (size_t)m->ntypes * m->reps;

        if (jobs_socket_for(m->c, m->sock) < 0)
                return EXIT_FAIL;
        if (!getcwd(m->cwd, sizeof(m->cwd))) {
                cli_error(m->c, "cannot tell the working directory: %s", strerror(errno));
                return EXIT_FAIL;
        }
        if (access("/usr/bin/taskset", X_OK) < 0) {
                cli_error(m->c, "/usr/bin/taskset (util-linux) is needed to pin the jobs");
                return EXIT_FAIL;
        }
        m->alone = calloc(n, sizeof(double));
        m->pair = calloc(n * (size_t)m->ntypes, sizeof(double));
        m->total = (int)(n * (size_t)(m->ntypes + 1));
        if (!m->alone || !m->pair) {
                cli_error(m->c, "out of memory");
                return EXIT_FAIL;
        }
        return 0;
}

static void measure_free(measure *m) {
        for (int i = 0; i < m->ntypes; i++) {
                free(m->types[i].cmd[0]);
                free(m->types[i].units);
        }
        free(m->builtin_list);
        free(m->alone);
        free(m->pair);
}

static int run_measure(cli *c, int argc, char **argv) {
        measure m = {
                .c = c, .reps = 3, .mcpu = 1000, .mem = (int64_t)256 << 20, .pin = "0", .size = 1, .upload = true
        };
        int r;

        if (dev_find_program("colony-stress", COLONY_BINDIR, m.stress, sizeof(m.stress)) < 0) {
                cli_error(c, "cannot find colony-stress next to colony or in %s", COLONY_BINDIR);
                return EXIT_FAIL;
        }
        r = parse_measure(&m, argc, argv);
        if (r < 0 && (m.show || m.upload_file))
                r = jobs_socket_for(c, m.sock) < 0 ? EXIT_FAIL
                    : m.show                       ? alpha_cli_show(c, m.sock, m.version, m.png)
                                                   : alpha_cli_upload_file(c, m.sock, m.upload_file);
        else if (r < 0) {
                r = prepare(&m);
                if (r == 0) {
                        cli_catch_signals(); /* so that an interrupt still cancels the busy job */
                        r = run_all(&m) < 0 ? EXIT_FAIL : 0;
                }
                if (r == 0)
                        r = report(&m);
        }
        measure_free(&m);
        return r;
}

const cli_command cmd_measure = { "measure", "estimate the interference matrix alpha of workload types on this cluster",
                                  measure_usage, false, run_measure };
