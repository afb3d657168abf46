/* submit.c - colony submit (and colony run's submit): its options, a batch script's, and the
 * job spec they make. */
#include "cli.h"
#include "arraycli.h"
#include "format.h"
#include "gres.h"
#include "jobs.h"
#include "nodesel.h"
#include "waitopts.h"
#include "script.h"
#include "units.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

extern char **environ;

/* ---- submit ---- */

static const char submit_usage[] =
        "Usage: colony submit [options] [--array SPEC] [--] CMD [ARGS...]\n"
        "       colony submit [options] SCRIPT [ARGS...]   (or --script SCRIPT)\n"
        "       colony submit [options] --stdin < COMMANDS\n"
        "Submit CMD to run on the cluster as you, with your environment and working directory.\n"
        "Prints the job id (one per line for --array and --stdin).\n\n"
        "  -c, --cpus N     CPU cores it may use (\"2\", \"0.5\", \"500m\"; default 1)\n"
        "  --mem SIZE       memory limit (\"512M\", \"2G\"; a bare number is MiB as in Slurm:\n"
        "                   \"4096\" is 4G; at least 1M; default 256M)\n"
        "  --mem-high SIZE  soft memory limit (units as --mem), at most --mem: above it the\n"
        "                   job's memory is reclaimed hard (throttled) instead of OOM-killed\n"
        "  --pids N         task limit (default: the agent's)\n"
        "  -G, --gpus [TYPE:]N  N GPUs of its own (of type TYPE: on a node whose agent has them)\n"
        "  --gres gpu[:TYPE][:N]  the same as Slurm writes it (N defaults to 1)\n"
        "  -J, --name S     job name (default: CMD's file name)\n"
        "  --group D/T      department/team it is accounted to\n"
        "  --type T         workload type\n"
        "  -o, --output FILE  standard output (default: colony-<id>.out in this directory,\n"
        "                   colony-<first>_<index>.out for an array's job); Slurm's patterns\n"
        "                   %j id, %A array's first id, %a index, %u user, %x name, %N node, %%\n"
        "  -e, --error FILE   standard error (default: with the output; the same patterns)\n"
        "  --open-mode M    append (the files keep what they held) or truncate (a first run\n"
        "                   empties them, as Slurm's default); without it a job truncates and\n"
        "                   an array's tasks, which may share one file, append; a requeued\n"
        "                   run always appends\n"
        "  --array SPEC     an array of CMD in one request, as Slurm writes it: 0-99, 1,3,5-7, a\n"
        "                   step 0-15:4, %8 for at most 8 running at once (5 is the index 5\n"
        "                   alone); each task has COLONY_ARRAY_JOB_ID (the array's id, printed\n"
        "                   once) and COLONY_ARRAY_TASK_ID (its index); A_i names task i of\n"
        "                   array A, A the whole array; all tasks are queued or none\n"
        "  --stdin          submit one job per line of the standard input: a command line\n"
        "                   split at blanks (no quoting); blank and '#' lines are skipped\n"
        "  -t, --time T     run time limit from its start, as Slurm: MIN, MIN:SEC, H:MIN:SEC,\n"
        "                   D-H, D-H:MIN, D-H:MIN:SEC; 0 or UNLIMITED for none (default and\n"
        "                   maximum: the controller's); past it SIGTERM, then SIGKILL, state timeout\n"
        "  --requeue        if colony loses it (its agent timed out, came back without it, or\n"
        "                   found it killed with a crashed agent), run it again (same id, next\n"
        "                   attempt) instead of ending it lost\n"
        "  --constraint F   only on a node with these features: \"ssd\", \"ssd&avx512\" or \"ssd,avx512\"\n"
        "                   (all of them), \"ssd|nvme\" (either)\n"
        "  --nodelist A,B   on one of these nodes (a job runs on one node: not all of them)\n"
        "  --exclude A,B    on none of these nodes\n"
        "  --exclusive      a node of its own: an idle node, and no other job placed there while\n"
        "                   it runs\n"
        "  --script FILE    submit FILE as a batch script (ARGS are its arguments); without '--',\n"
        "                   a CMD that is a file beginning with '#!' or not executable is one too.\n"
        "                   Its '#COLONY' lines (these options) and '#SBATCH' lines (Slurm's,\n"
        "                   those colony shares) before its first command apply, under the\n"
        "                   command line's; its text is stored with the job, which runs that copy\n"
        "  -D, --chdir DIR  run it in DIR (default: this directory)\n" WAITOPT_SUBMIT_USAGE
        "  --json           print the controller's reply\n\n"
        "CMD without a '/' is looked up in $PATH; it must exist and be executable.\n";

/* Option which (0 --constraint, 1 --nodelist, 2 --exclude, 3 --exclusive) with arg into s,
 * checked (nodesel.h). Returns -1 to go on, else an exit status. */
static int parse_nodesel(cli *c, int which, char *arg, job_spec *s) {
        switch (which) {
        case 0:
                if (!nodesel_expr_ok(arg))
                        return cli_usage_error(c,
                                               "--constraint: '%s' is not features (letters, digits, _ . -) joined "
                                               "by & or , (all of them) and | (either)",
                                               arg);
                s->constraint = arg;
                return -1;
        case 1:
        case 2:
                if (!nodesel_list_ok(arg))
                        return cli_usage_error(c, "--%s: '%s' is not node names separated by commas",
                                               which == 1 ? "nodelist" : "exclude", arg);
                *(which == 1 ? &s->nodelist : &s->exclude) = arg;
                return -1;
        default: s->exclusive = true; return -1;
        }
}

/* How many jobs one submit makes: --array's indexes and their count (0: one job), or --stdin's
 * lines. */
typedef struct submit_many {
        long array;
        bool from_stdin;
        const char *array_spec; /* --array as given ("1,3,5-7%2"), checked */
        /* A batch script's: its path (--script), the job's directory (--chdir), and whether the
         * options being read are a script's line (no operand then). */
        const char *script;
        const char *chdir;
        bool in_script;
        char gpu_type[GRES_TYPE_MAX]; /* --gpus TYPE:N or --gres gpu:TYPE:N: a node of that type */
} submit_many;

/* --array SPEC, checked here so that a typo costs no round trip: its task count into m. Returns
 * 0 or EXIT_USAGE after printing why. */
static int parse_array(const cli *c, const char *spec, submit_many *m) {
        char err[ERRLEN];
        array_set set = { 0 };
        uint32_t throttle;

        if (array_spec_parse(spec, JOB_ARRAY_MAX, &set, &throttle, err, sizeof(err)) < 0)
                return cli_usage_error(c, "--%s", err); /* "--array '5-1': range 5-1 ends ..." */
        m->array = (long)array_set_count(&set);
        m->array_spec = spec;
        array_set_free(&set);
        return 0;
}

/* A job's memory limit as --mem and --mem-high take it (units_parse_mem). Returns 0, or -EINVAL
 * with the reason printed. */
static int parse_mem(const cli *c, const char *opt, const char *arg, int64_t *out) {
        int r = units_parse_mem(arg, out);
        if (r == -EDOM)
                cli_usage_error(c, "%s: '%s' is less than 1M, too little for any program (a bare number is MiB)", opt,
                                arg);
        else if (r < 0)
                cli_usage_error(c, "%s: '%s' is not a memory size (like 512M, 2G, or 4096 for MiB)", opt, arg);
        return r < 0 ? -EINVAL : 0;
}

/* --time into *usec (0 for none). Returns 0, or -EINVAL with the reason printed. */
static int parse_time_limit(const cli *c, const char *arg, int64_t *usec) {
        int r = units_parse_time(arg, usec);
        if (r == -ERANGE)
                cli_usage_error(c, "--time: '%s' is longer than a year", arg);
        else if (r < 0)
                cli_usage_error(c,
                                "--time: '%s' is not a time limit (MIN, MIN:SEC, H:MIN:SEC, D-H, D-H:MIN, "
                                "D-H:MIN:SEC, or UNLIMITED)",
                                arg);
        else if (*usec == 0)
                *usec = JOB_TIME_UNLIMITED; /* asked for, unlike no --time: the maximum, not the default */
        return r < 0 ? -EINVAL : 0;
}

int jobs_parse_time_limit(const cli *c, const char *arg, int64_t *usec) { return parse_time_limit(c, arg, usec); }

/* --gpus (gres false) or --gres's value into s->req.gpus and m->gpu_type. Returns 0, or -EINVAL
 * with the reason printed. */
static int parse_gpus(const cli *c, bool gres, const char *arg, job_spec *s, submit_many *m) {
        int r = gres ? gres_parse(arg, &s->req.gpus, m->gpu_type) : gres_parse_gpus(arg, &s->req.gpus, m->gpu_type);
        if (r == -EOPNOTSUPP)
                cli_usage_error(c, "--gres: '%s': colony knows one generic resource, gpu (gpu:N, gpu:TYPE:N)", arg);
        else if (r < 0)
                cli_usage_error(c, "--%s: '%s' is not %s (at most %lld GPUs)", gres ? "gres" : "gpus", arg,
                                gres ? "gpu, gpu:N, gpu:TYPE or gpu:TYPE:N" : "a GPU count N or TYPE:N",
                                (long long)RES_GPUS_MAX);
        return r < 0 ? -EINVAL : 0;
}

/* The GPU type asked for (m->gpu_type) added to s's constraint, which then points into buf.
 * Returns 0 or EXIT_USAGE with the reason printed. */
static int apply_gpu_type(const cli *c, job_spec *s, const submit_many *m, char *buf, size_t len) {
        if (!m->gpu_type[0])
                return 0;
        if (gres_constraint(s->constraint, m->gpu_type, buf, len) < 0 || strlen(buf) > NODESEL_MAX)
                return cli_usage_error(c, "--constraint with the GPU type %s: longer than %d bytes", m->gpu_type,
                                       NODESEL_MAX);
        s->constraint = buf;
        return 0;
}

enum {
        OPT_CPUS = CLI_OPT_OWN,
        OPT_MEM,
        OPT_MEM_HIGH,
        OPT_PIDS,
        OPT_NAME,
        OPT_GROUP,
        OPT_TYPE,
        OPT_OUTPUT,
        OPT_ERROR,
        OPT_ARRAY,
        OPT_STDIN,
        OPT_REQUEUE,
        OPT_TIME,
        OPT_CONSTRAINT,
        OPT_NODELIST,
        OPT_EXCLUDE,
        OPT_EXCLUSIVE,
        OPT_SCRIPT,
        OPT_CHDIR,
        OPT_GPUS,
        OPT_GRES,
        OPT_OPEN_MODE
};
static const struct option submit_options[] = {
        { "cpus", required_argument, NULL, OPT_CPUS },
        { "mem", required_argument, NULL, OPT_MEM },
        { "mem-high", required_argument, NULL, OPT_MEM_HIGH },
        { "pids", required_argument, NULL, OPT_PIDS },
        { "name", required_argument, NULL, OPT_NAME },
        { "group", required_argument, NULL, OPT_GROUP },
        { "type", required_argument, NULL, OPT_TYPE },
        { "output", required_argument, NULL, OPT_OUTPUT },
        { "error", required_argument, NULL, OPT_ERROR },
        { "array", required_argument, NULL, OPT_ARRAY },
        { "stdin", no_argument, NULL, OPT_STDIN },
        { "requeue", no_argument, NULL, OPT_REQUEUE },
        { "time", required_argument, NULL, OPT_TIME },
        { "constraint", required_argument, NULL, OPT_CONSTRAINT },
        { "nodelist", required_argument, NULL, OPT_NODELIST },
        { "exclude", required_argument, NULL, OPT_EXCLUDE },
        { "exclusive", no_argument, NULL, OPT_EXCLUSIVE },
        { "script", required_argument, NULL, OPT_SCRIPT },
        { "chdir", required_argument, NULL, OPT_CHDIR },
        { "gpus", required_argument, NULL, OPT_GPUS },
        { "gres", required_argument, NULL, OPT_GRES },
        { "open-mode", required_argument, NULL, OPT_OPEN_MODE },
        WAITOPT_SUBMIT_OPTIONS,
        { 0 },
};

/* Option o of what the job is (its name, files, directory, and how many: --array, --stdin,
 * --script) with arg into s and m (strings borrowed); the rest to waitopt_submit. Returns -1 to go
 * on, else an exit status. */
static int submit_job_option(cli *c, int o, char *arg, job_spec *s, submit_many *m) {
        switch (o) {
        case 'J':
        case OPT_NAME: s->name = arg; return -1;
        case OPT_GROUP: s->group = arg; return -1;
        case OPT_TYPE: s->job_type = arg; return -1;
        case 'o':
        case OPT_OUTPUT: s->stdout_path = arg; return -1;
        case 'e':
        case OPT_ERROR: s->stderr_path = arg; return -1;
        case OPT_ARRAY: return parse_array(c, arg, m) != 0 ? EXIT_USAGE : -1;
        case OPT_STDIN: m->from_stdin = true; return -1;
        case OPT_REQUEUE: s->requeue = true; return -1;
        case OPT_OPEN_MODE:
                if (job_open_mode_from_name(arg, &s->open_mode) < 0)
                        return cli_usage_error(c, "--open-mode: '%s' is neither append nor truncate", arg);
                return -1;
        case OPT_SCRIPT: m->script = arg; return -1;
        case 'D':
        case OPT_CHDIR: m->chdir = arg; return -1;
        default: return waitopt_submit(c, o, arg, s);
        }
}

/* Option o of what the job asks for (its resources, time and nodes; submit_options' or its
 * Slurm short form) with arg into s and m; the others to submit_job_option. Returns -1 to go on,
 * else an exit status. */
static int submit_option(cli *c, int o, char *arg, job_spec *s, submit_many *m) {
        switch (o) {
        case 'c':
        case OPT_CPUS:
                if (units_parse_cpus(arg, &s->req.mcpu) < 0)
                        return cli_usage_error(c, "--cpus: '%s' is not a CPU count (like 1, 0.5 or 500m)", arg);
                return -1;
        case OPT_MEM: return parse_mem(c, "--mem", arg, &s->req.mem) < 0 ? EXIT_USAGE : -1;
        case OPT_MEM_HIGH: return parse_mem(c, "--mem-high", arg, &s->mem_high) < 0 ? EXIT_USAGE : -1;
        case OPT_PIDS:
                if (units_parse_uint(arg, RES_PIDS_MAX, &s->req.pids) < 0)
                        return cli_usage_error(c, "--pids: '%s' is not a task count", arg);
                return -1;
        case 't':
        case OPT_TIME: return parse_time_limit(c, arg, &s->time_limit_usec) < 0 ? EXIT_USAGE : -1;
        case OPT_CONSTRAINT:
        case OPT_NODELIST:
        case OPT_EXCLUDE:
        case OPT_EXCLUSIVE: return parse_nodesel(c, o - OPT_CONSTRAINT, arg, s);
        case 'G':
        case OPT_GPUS:
        case OPT_GRES: return parse_gpus(c, o == OPT_GRES, arg, s, m) < 0 ? EXIT_USAGE : -1;
        default: return submit_job_option(c, o, arg, s, m);
        }
}

/* The operands after the options: a command or a script, unless --stdin (none then). Returns -1
 * to go on, else an exit status. */
static int check_operands(cli *c, int argc, const submit_many *m) {
        if (m->in_script)
                return -1;
        if (m->from_stdin && (m->array || optind < argc || m->script))
                return cli_usage_error(c, "--stdin takes the commands from the standard input: no --array, no CMD");
        if (m->from_stdin)
                return -1;
        if (optind >= argc && !m->script)
                return cli_usage_error(c, "no command given (colony submit [options] -- CMD [ARGS...])");
        return -1;
}

/* Options into s and m (strings borrowed from argv). Returns -1 to go on, else an exit status. */
static int parse_submit(cli *c, int argc, char **argv, job_spec *s, submit_many *m) {
        int o, r;

        if (!s->req.mcpu) /* else a batch script's lines set it, and the command line goes over them */
                s->req = (res_t){ .mcpu = 1000, .mem = (int64_t)256 << 20 };
        /* Slurm's short forms of the options they share */
        while ((o = cli_getopt_short(c, argc, argv, submit_options, "c:J:o:e:t:d:Hb:D:G:")) > 0)
                if ((r = submit_option(c, o, optarg, s, m)) >= 0)
                        return r;
        if (o < 0)
                return cli_opts_status(o);
        return check_operands(c, argc, m);
}

/* The "K=V" entries of environ, borrowed, in a new NULL-terminated vector. */
static char **environment(void) {
        size_t n = 0, k = 0;
        char **v;

        while (environ[n])
                n++;
        v = calloc(n + 1, sizeof(char *));
        for (size_t i = 0; v && i < n; i++)
                if (strchr(environ[i], '='))
                        v[k++] = environ[i];
        return v;
}

/* Fill in what every job of this submit shares: env, cwd, umask, absolute output paths. The
 * spec's strings are owned by argv/environ except the paths in owned[1] and owned[2]. */
static int common_spec(cli *c, job_spec *s, char *cwd, char *owned[3]) {
        mode_t mask = umask(0); /* reading it means setting it: set it back at once */

        umask(mask);
        s->umask = (int)mask;
        s->cwd = cwd;
        s->env = environment();
        if (s->stdout_path)
                s->stdout_path = owned[1] = jobs_absolute_path(s->stdout_path, cwd);
        if (s->stderr_path)
                s->stderr_path = owned[2] = jobs_absolute_path(s->stderr_path, cwd);
        if (!s->env || (owned[1] == NULL) != (s->stdout_path == NULL) ||
            (owned[2] == NULL) != (s->stderr_path == NULL)) {
                cli_error(c, "out of memory");
                return EXIT_FAIL;
        }
        return 0;
}

/* common_spec, and argv from the command line; argv[0] is owned[0]. A batch script's absolute
 * path is in owned[0] already, and its arguments start at optind. */
static int complete_spec(cli *c, int argc, char **argv, job_spec *s, char *cwd, char *owned[3]) {
        int first = owned[0] ? optind : optind + 1;
        int r = owned[0] ? 0 : jobs_resolve_command(c, argv[optind], cwd, &owned[0]);

        if (r != 0 || (r = common_spec(c, s, cwd, owned)) != 0)
                return r;
        s->argv = calloc((size_t)(argc - first) + 2, sizeof(char *));
        if (!s->argv) {
                cli_error(c, "out of memory");
                return EXIT_FAIL;
        }
        s->argv[0] = owned[0];
        for (int i = first; i < argc; i++)
                s->argv[i - first + 1] = argv[i];
        return 0;
}

/* Apply the option lines of a batch script to s and m, each with its errors named by the line. */
static int script_lines(cli *c, const char *path, const script_opts *so, job_spec *s, submit_many *m) {
        for (size_t i = 0; i < so->n; i++) {
                const script_line *l = &so->lines[i];
                cli_command named = *c->command;
                cli at_line = *c;
                char name[PATH_MAX + 64];
                int r;

                snprintf(name, sizeof(name), "%s: %s: line %u: %s", c->command->name, path, l->lineno, l->argv[0]);
                named.name = name;
                at_line.command = &named;
                optind = 0;
                if ((r = parse_submit(&at_line, l->argc, l->argv, s, m)) >= 0)
                        return r ? r : EXIT_USAGE;
                if (optind < l->argc)
                        return cli_usage_error(&at_line, "'%s' is not an option", l->argv[optind]);
                if (m->from_stdin || m->script)
                        return cli_usage_error(&at_line, "--stdin and --script have no place in a batch script");
        }
        return 0;
}

/* The batch script at path: its text in s->script (and *text), its absolute path in *abs; the
 * options of its lines (in *so, which s borrows from) under the command line's, which is read
 * again over them (as sbatch does). optind ends at the script's arguments. Returns 0 or an
 * exit status. */
static int script_spec(cli *c, int argc, char **argv, const char *path, const char *cwd, job_spec *s, submit_many *m,
                       script_opts *so, char **text, char **abs) {
        int args = optind;
        char err[ERRLEN];
        int r;

        if (script_read(path, text, err, sizeof(err)) < 0) {
                cli_error(c, "%s", err);
                return EXIT_FAIL;
        }
        if (script_parse(*text, so, err, sizeof(err)) < 0)
                return cli_usage_error(c, "%s: %s", path, err);
        for (size_t i = 0; i < so->nwarnings; i++)
                cli_error(c, "%s: %s", path, so->warnings[i]);
        free(s->dependency);
        *s = (job_spec){ 0 };
        *m = (submit_many){ .in_script = true };
        if ((r = script_lines(c, path, so, s, m)) != 0)
                return r;
        m->in_script = false;
        optind = 0;
        if ((r = parse_submit(c, argc, argv, s, m)) >= 0)
                return r;
        optind = args;
        s->script = *text;
        *abs = jobs_absolute_path(path, cwd);
        if (!*abs) {
                cli_error(c, "out of memory");
                return EXIT_FAIL;
        }
        return 0;
}

/* Whether the command line submits a batch script (--script, or a CMD that is one with no "--"
 * before it), and which: its path, with optind past it. */
static const char *batch_script(int argc, char **argv, const submit_many *m) {
        if (m->script || m->from_stdin)
                return m->script;
        if (optind < argc && strcmp(argv[optind - 1], "--") != 0 && script_is_batch(argv[optind]))
                return argv[optind++];
        return NULL;
}

/* The job's directory: --chdir's, made absolute against cwd, into cwd. Returns 0 or EXIT_FAIL. */
static int apply_chdir(const cli *c, const char *dir, char cwd[PATH_MAX]) {
        char *abs = dir ? jobs_absolute_path(dir, cwd) : NULL;

        if (dir && (!abs || strlen(abs) >= PATH_MAX)) {
                free(abs);
                cli_error(c, "--chdir: %s", abs ? "the path is too long" : "out of memory");
                return EXIT_FAIL;
        }
        if (abs)
                strcpy(cwd, abs);
        free(abs);
        return 0;
}

/* Submit one job, or an array in one request, and print its id, the array's for an array (or
 * the reply with --json, an array's with its tasks' ids and indexes). Returns an exit status. */
static int submit_one(const cli *c, const char *sock, const job_spec *s, const submit_many *m) {
        char err[ERRLEN];
        cJSON *reply = NULL;
        uint64_t id;

        if (jobs_submit(sock, s, m->array_spec, m->array, &id, &reply, err, sizeof(err)) < 0) {
                cli_error(c, "%s", err);
                return EXIT_FAIL;
        }
        if (c->json && m->array_spec && arraycli_add_tasks(reply, m->array_spec, id) < 0)
                cli_error(c, "out of memory listing the array's tasks");
        if (c->json)
                fmt_json(reply);
        else
                printf("%" PRIu64 "\n", id);
        cJSON_Delete(reply);
        return 0;
}

int jobs_submit_main(cli *c, int argc, char **argv, bool run) {
        char cwd[PATH_MAX], sock[PATH_MAX], constraint[2 * NODESEL_MAX];
        char *owned[3] = { NULL, NULL, NULL }, *text = NULL;
        const char *script;
        script_opts so = { 0 };
        job_spec s = { 0 };
        submit_many many = { 0 };
        int r;

        r = parse_submit(c, argc, argv, &s, &many);
        if (r >= 0) {
                free(s.dependency);
                return r;
        }
        if (jobs_socket_for(c, sock) < 0)
                return EXIT_FAIL;
        if (!getcwd(cwd, sizeof(cwd))) {
                cli_error(c, "cannot tell the working directory: %s", strerror(errno));
                return EXIT_FAIL;
        }
        script = batch_script(argc, argv, &many);
        r = script ? script_spec(c, argc, argv, script, cwd, &s, &many, &so, &text, &owned[0]) : 0;
        if (r == 0)
                r = apply_chdir(c, many.chdir, cwd);
        if (r == 0)
                r = apply_gpu_type(c, &s, &many, constraint, sizeof(constraint));
        if (r == 0 && run && (many.array || many.from_stdin)) /* the script's lines too */
                r = cli_usage_error(c, "a run is one job: no --array, no --stdin (colony submit makes many)");
        if (r == 0)
                r = many.from_stdin ? common_spec(c, &s, cwd, owned) : complete_spec(c, argc, argv, &s, cwd, owned);
        if (r == 0 && many.from_stdin)
                r = jobs_submit_lines(c, sock, &s, stdin);
        else if (r == 0 && run)
                r = run_submitted(c, sock, &s);
        else if (r == 0)
                r = submit_one(c, sock, &s, &many);
        free(s.argv);
        free(s.env);
        free(s.dependency);
        free(text);
        script_opts_free(&so);
        for (int i = 0; i < 3; i++)
                free(owned[i]);
        return r;
}

static int run_submit(cli *c, int argc, char **argv) { return jobs_submit_main(c, argc, argv, false); }

const cli_command cmd_submit = { "submit", "submit a job: colony submit [--cpus N] [--mem SIZE] -- CMD [ARGS...]",
                                 submit_usage, true, run_submit };
