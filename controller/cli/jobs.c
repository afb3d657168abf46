/* jobs.c - the job subcommands: submit, queue, show, cancel, wait. */
#include "cli.h"
#include "clock.h"
#include "arraycli.h"
#include "family_cli.h"
#include "client.h"
#include "format.h"
#include "gres.h"
#include "jobs.h"
#include "nodesel.h"
#include "waitopts.h"
#include "outcome.h"
#include "proto.h"
#include "script.h"
#include "units.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define EXIT_TIMEOUT 124         /* what timeout(1) exits with */

extern char **environ;

int jobs_socket_for(const cli *c, char *buf) {
        int r = client_socket_path(c, buf, PATH_MAX);

        if (r < 0)
                cli_error(c, "%s", r == -EINVAL ? "the client config does not parse" : "the controller's socket path is too long");
        return r;
}

int jobs_parse_id(const cli *c, const char *s, uint64_t *id) {
        int64_t v;

        if (arraycli_is_task(s))
                return arraycli_task_id(c, s, id);

        if (units_parse_uint(s, INT64_MAX, &v) < 0 || v < 1)
                return cli_usage_error(c, "'%s' is not a job id", s);
        *id = (uint64_t)v;
        return 0;
}

/* Parse the record in reply's "job" into j. Returns 0 or -EBADMSG with the reason in err. */
static int record_from_reply(const cJSON *reply, job *j, char *err, size_t errlen) {
        char perr[PROTO_ERRLEN] = "";

        if (job_from_json(cJSON_GetObjectItemCaseSensitive(reply, "job"), j, perr) < 0) {
                snprintf(err, errlen, "bad job record from the controller: %s", perr);
                return -EBADMSG;
        }
        return 0;
}

int jobs_submit(const char *sock, const job_spec *spec, const char *array, long count, uint64_t *id, cJSON **reply,
                char *err, size_t errlen) {
        char perr[PROTO_ERRLEN] = "";
        cJSON *req = proto_new("submit"), *rep = NULL;
        int64_t v, made = 0;
        int r;

        if (!req || job_spec_to_json(spec, req) < 0 || (array && !cJSON_AddStringToObject(req, "array", array))) {
                cJSON_Delete(req);
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        /* the controller refuses it too; saying so before connecting spares a round trip */
        if (proto_check_utf8(req, perr) < 0) {
                cJSON_Delete(req);
                snprintf(err, errlen, "%s", perr);
                return -EINVAL;
        }
        /* the controller answers an array once all of it is stored: allow it a millisecond a job */
        r = client_call(sock, req, "submitted", REQUEST_TIMEOUT_MS + (int)count, &rep, err, errlen);
        cJSON_Delete(req);
        if (r == 0 && (proto_get_int(rep, "id", 1, INT64_MAX, &v, perr) != 0 ||
                       (count && (proto_get_int(rep, "count", count, count, &made, perr) != 0)))) {
                snprintf(err, errlen, "the controller's reply has no job id%s: %s", count ? " and count" : "", perr);
                r = -EBADMSG;
        }
        if (r == 0) {
                *id = (uint64_t)v;
                if (reply) {
                        *reply = rep;
                        rep = NULL;
                }
        }
        cJSON_Delete(rep);
        return r;
}

int jobs_wait(const char *sock, uint64_t id, int timeout_ms, job *out, cJSON **reply, char *err,
              size_t errlen) {
        cJSON *rep = NULL;
        int r;

        r = client_simple(sock, "wait", id, "job", timeout_ms, &rep, err, errlen);
        if (r == 0)
                r = record_from_reply(rep, out, err, errlen);
        if (r == 0 && reply) {
                *reply = rep;
                rep = NULL;
        }
        cJSON_Delete(rep);
        return r;
}

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
        "  -D, --chdir DIR  run it in DIR (default: this directory)\n"
        WAITOPT_SUBMIT_USAGE
        "  --json           print the controller's reply\n\n"
        "CMD without a '/' is looked up in $PATH; it must exist and be executable.\n";

/* Is path an executable regular file? Returns 0, -ENOENT, -EISDIR or -EACCES. */
static int check_executable(const char *path) {
        struct stat st;

        if (stat(path, &st) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0)
                return -EACCES;
        return 0;
}

/* path made absolute against cwd, leading "./" dropped (malloc'ed); NULL when out of memory. */
static char *absolute_path(const char *path, const char *cwd) {
        char *out;

        if (path[0] == '/')
                return strdup(path);
        while (path[0] == '.' && path[1] == '/')
                path += 2 + strspn(path + 2, "/");
        if (asprintf(&out, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", path) < 0)
                return NULL;
        return out;
}

/* Look cmd up in $PATH as a shell does. Returns 0 with *out (absolute, malloc'ed) or -errno:
 * -ENOENT when no directory has it, -EACCES when one has it but not executable. */
static int search_path(const char *cmd, const char *cwd, char **out) {
        char fallback[256] = "/bin:/usr/bin", *cand = NULL;
        const char *p = getenv("PATH");
        int best = -ENOENT, r;

        if (!p)
                p = confstr(_CS_PATH, fallback, sizeof(fallback)) > 0 ? fallback : "/bin:/usr/bin";
        for (;;) {
                int len = (int)strcspn(p, ":");
                if (asprintf(&cand, "%.*s%s%s", len, p, len ? "/" : "", cmd) < 0)
                        return -ENOMEM;
                r = check_executable(cand);
                if (r == 0) {
                        *out = absolute_path(cand, cwd);
                        free(cand);
                        return *out ? 0 : -ENOMEM;
                }
                free(cand);
                if (r == -EACCES)
                        best = r;
                if (!p[len])
                        return best;
                p += len + 1;
        }
}

int jobs_resolve_command(const cli *c, const char *cmd, const char *cwd, char **out) {
        int r;

        if (strchr(cmd, '/')) {
                *out = absolute_path(cmd, cwd);
                r = *out ? check_executable(*out) : -ENOMEM;
        } else
                r = search_path(cmd, cwd, out);
        if (r == 0)
                return 0;
        if (r == -ENOENT || r == -ENOTDIR)
                cli_error(c, "%s: command not found", cmd);
        else if (r == -EISDIR)
                cli_error(c, "%s: is a directory", cmd);
        else if (r == -EACCES)
                cli_error(c, "%s: permission denied (not an executable file)", cmd);
        else
                cli_error(c, "%s: %s", cmd, strerror(-r));
        free(*out);
        *out = NULL;
        return EXIT_FAIL;
}


/* Option which (0 --constraint, 1 --nodelist, 2 --exclude, 3 --exclusive) with arg into s,
 * checked (nodesel.h). Returns -1 to go on, else an exit status. */
static int parse_nodesel(cli *c, int which, char *arg, job_spec *s) {
        switch (which) {
        case 0:
                if (!nodesel_expr_ok(arg))
                        return cli_usage_error(c, "--constraint: '%s' is not features (letters, digits, _ . -) joined "
                                                  "by & or , (all of them) and | (either)", arg);
                s->constraint = arg;
                return -1;
        case 1:
        case 2:
                if (!nodesel_list_ok(arg))
                        return cli_usage_error(c, "--%s: '%s' is not node names separated by commas",
                                               which == 1 ? "nodelist" : "exclude", arg);
                *(which == 1 ? &s->nodelist : &s->exclude) = arg;
                return -1;
        default:
                s->exclusive = true;
                return -1;
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
        array_set set = {0};
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
                cli_usage_error(c, "--time: '%s' is not a time limit (MIN, MIN:SEC, H:MIN:SEC, D-H, D-H:MIN, "
                                   "D-H:MIN:SEC, or UNLIMITED)", arg);
        else if (*usec == 0)
                *usec = JOB_TIME_UNLIMITED; /* asked for, unlike no --time: the maximum, not the default */
        return r < 0 ? -EINVAL : 0;
}

int jobs_parse_time_limit(const cli *c, const char *arg, int64_t *usec) {
        return parse_time_limit(c, arg, usec);
}

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

/* Options into s and m (strings borrowed from argv). Returns -1 to go on, else an exit status. */
static int parse_submit(cli *c, int argc, char **argv, job_spec *s, submit_many *m) {
        enum { OPT_CPUS = CLI_OPT_OWN, OPT_MEM, OPT_MEM_HIGH, OPT_PIDS, OPT_NAME, OPT_GROUP, OPT_TYPE, OPT_OUTPUT,
               OPT_ERROR, OPT_ARRAY, OPT_STDIN, OPT_REQUEUE, OPT_TIME, OPT_CONSTRAINT, OPT_NODELIST, OPT_EXCLUDE,
               OPT_EXCLUSIVE, OPT_SCRIPT, OPT_CHDIR, OPT_GPUS, OPT_GRES };
        static const struct option options[] = {
                {"cpus", required_argument, NULL, OPT_CPUS},   {"mem", required_argument, NULL, OPT_MEM},
                {"mem-high", required_argument, NULL, OPT_MEM_HIGH},
                {"pids", required_argument, NULL, OPT_PIDS},   {"name", required_argument, NULL, OPT_NAME},
                {"group", required_argument, NULL, OPT_GROUP}, {"type", required_argument, NULL, OPT_TYPE},
                {"output", required_argument, NULL, OPT_OUTPUT},
                {"error", required_argument, NULL, OPT_ERROR}, {"array", required_argument, NULL, OPT_ARRAY},
                {"stdin", no_argument, NULL, OPT_STDIN}, {"requeue", no_argument, NULL, OPT_REQUEUE},
                {"time", required_argument, NULL, OPT_TIME},
                {"constraint", required_argument, NULL, OPT_CONSTRAINT},
                {"nodelist", required_argument, NULL, OPT_NODELIST},
                {"exclude", required_argument, NULL, OPT_EXCLUDE}, {"exclusive", no_argument, NULL, OPT_EXCLUSIVE},
                {"script", required_argument, NULL, OPT_SCRIPT}, {"chdir", required_argument, NULL, OPT_CHDIR},
                {"gpus", required_argument, NULL, OPT_GPUS},   {"gres", required_argument, NULL, OPT_GRES},
                WAITOPT_SUBMIT_OPTIONS,
                {0},
        };
        int64_t n;
        int o;

        if (!s->req.mcpu) /* else a batch script's lines set it, and the command line goes over them */
                s->req = (res_t){.mcpu = 1000, .mem = (int64_t)256 << 20};
        /* Slurm's short forms of the options they share */
        while ((o = cli_getopt_short(c, argc, argv, options, "c:J:o:e:t:d:Hb:D:G:")) > 0) {
                switch (o) {
                case 'c':
                case OPT_CPUS:
                        if (units_parse_cpus(optarg, &s->req.mcpu) < 0)
                                return cli_usage_error(c, "--cpus: '%s' is not a CPU count (like 1, 0.5 or 500m)", optarg);
                        break;
                case OPT_MEM:
                        if (parse_mem(c, "--mem", optarg, &s->req.mem) < 0)
                                return EXIT_USAGE;
                        break;
                case OPT_MEM_HIGH:
                        if (parse_mem(c, "--mem-high", optarg, &s->mem_high) < 0)
                                return EXIT_USAGE;
                        break;
                case OPT_PIDS:
                        if (units_parse_uint(optarg, RES_PIDS_MAX, &s->req.pids) < 0)
                                return cli_usage_error(c, "--pids: '%s' is not a task count", optarg);
                        break;
                case 'J':
                case OPT_NAME: s->name = optarg; break;
                case OPT_GROUP: s->group = optarg; break;
                case OPT_TYPE: s->job_type = optarg; break;
                case 'o':
                case OPT_OUTPUT: s->stdout_path = optarg; break;
                case 'e':
                case OPT_ERROR: s->stderr_path = optarg; break;
                case OPT_ARRAY:
                        if (parse_array(c, optarg, m) != 0)
                                return EXIT_USAGE;
                        break;
                case OPT_STDIN: m->from_stdin = true; break;
                case OPT_REQUEUE: s->requeue = true; break;
                case 't':
                case OPT_TIME:
                        if (parse_time_limit(c, optarg, &s->time_limit_usec) < 0)
                                return EXIT_USAGE;
                        break;
                case OPT_CONSTRAINT:
                case OPT_NODELIST:
                case OPT_EXCLUDE:
                case OPT_EXCLUSIVE:
                        if ((n = parse_nodesel(c, o - OPT_CONSTRAINT, optarg, s)) >= 0)
                                return (int)n;
                        break;
                case 'G':
                case OPT_GPUS:
                case OPT_GRES:
                        if (parse_gpus(c, o == OPT_GRES, optarg, s, m) < 0)
                                return EXIT_USAGE;
                        break;
                case OPT_SCRIPT: m->script = optarg; break;
                case 'D':
                case OPT_CHDIR: m->chdir = optarg; break;
                default:
                        if ((n = waitopt_submit(c, o, optarg, s)) >= 0)
                                return (int)n;
                }
        }
        if (o < 0)
                return cli_opts_status(o);
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
                s->stdout_path = owned[1] = absolute_path(s->stdout_path, cwd);
        if (s->stderr_path)
                s->stderr_path = owned[2] = absolute_path(s->stderr_path, cwd);
        if (!s->env || (owned[1] == NULL) != (s->stdout_path == NULL) || (owned[2] == NULL) != (s->stderr_path == NULL)) {
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
        *s = (job_spec){0};
        *m = (submit_many){.in_script = true};
        if ((r = script_lines(c, path, so, s, m)) != 0)
                return r;
        m->in_script = false;
        optind = 0;
        if ((r = parse_submit(c, argc, argv, s, m)) >= 0)
                return r;
        optind = args;
        s->script = *text;
        *abs = absolute_path(path, cwd);
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
        char *abs = dir ? absolute_path(dir, cwd) : NULL;

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
        char *owned[3] = {NULL, NULL, NULL}, *text = NULL;
        const char *script;
        script_opts so = {0};
        job_spec s = {0};
        submit_many many = {0};
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

static int run_submit(cli *c, int argc, char **argv) {
        return jobs_submit_main(c, argc, argv, false);
}

const cli_command cmd_submit = {"submit", "submit a job: colony submit [--cpus N] [--mem SIZE] -- CMD [ARGS...]",
                                submit_usage, true, run_submit};

/* ---- queue ---- */

static const char queue_usage[] =
        "Usage: colony queue [--all] [--user NAME|UID] [--families] [--json]\n"
        "List pending and running jobs, oldest first.\n\n"
        "  --all          include finished jobs\n"
        "  --user U       only the jobs of user U (a name or a uid)\n"
        "  --families     one line per family of the jobs listed instead: the jobs and arrays\n"
        "                 dependencies link (FAMILY is its first job's id), its jobs by state,\n"
        "                 its flow time (so far, while live) and with unlimited machines\n"
        "  --json         print the controller's reply ({\"jobs\": [...]}; with --families,\n"
        "                 {\"families\": [...]})\n\n"
        "GPUS is the GPUs a job asks for (colony show names those it was given). TIME is how long\n"
        "a job has been running, how long a pending job has waited so far, and how long a finished\n"
        "job ran; LIMIT its time limit (--time), LEFT a running job's time before it.\n";

int jobs_parse_user(const cli *c, const char *s, int64_t *uid) {
        struct passwd *pw;

        if (units_parse_uint(s, UINT32_MAX - 1, uid) == 0)
                return 0;
        pw = getpwnam(s);
        if (!pw)
                return cli_usage_error(c, "--user: no user named '%s'", s);
        *uid = pw->pw_uid;
        return 0;
}

/* The TIME column: running time, time waited so far, or how long it ran. */
static char *queue_time(const job *j, int64_t now, char *buf, size_t len) {
        if (j->state == JOB_PENDING)
                return fmt_duration(now - j->submit_usec, buf, len);
        if (j->start_usec == 0)
                return fmt_duration(-1, buf, len);
        return fmt_duration((j->state == JOB_RUNNING ? now : j->end_usec) - j->start_usec, buf, len);
}

/* The time limit ("UNLIMITED" for none) into buf. */
static char *limit_text(const job *j, char *buf, size_t len) {
        return units_format_time(j->spec.time_limit_usec > 0 ? j->spec.time_limit_usec : 0, buf, len);
}

/* A running job's time left before its limit ("0:00" once past it, the kill under way), or "-". */
static char *left_text(const job *j, int64_t now, char *buf, size_t len) {
        if (j->state != JOB_RUNNING || j->spec.time_limit_usec <= 0 || !j->start_usec) {
                snprintf(buf, len, "-");
                return buf;
        }
        int64_t left = j->start_usec + j->spec.time_limit_usec - now;
        return units_format_time(left > 0 ? left : -1, buf, len);
}

/* The start EASY backfill reserved for j, into buf: its time, or what holds it. */
static char *reserved_text(const job *j, char *buf, size_t len) {
        char at[FMT_BUF];
        if (j->reserved_start_usec == JOB_RESERVED_UNKNOWN)
                snprintf(buf, len, "start unknown: a job without a time limit holds its node");
        else
                snprintf(buf, len, "start %s", fmt_time(j->reserved_start_usec, at, sizeof(at)));
        return buf;
}

/* The REASON column: why a pending job waits, as the controller's last pass saw it, and the
 * reserved job's start. */
static const char *queue_reason(const job *j, char *buf, size_t len) {
        const char *why = j->state == JOB_PENDING && j->wait ? job_wait_name(j->wait) : NULL;
        char at[FMT_BUF];
        if (!why || !j->reserved_start_usec)
                return why;
        snprintf(buf, len, "%s, starts %s", why,
                 j->reserved_start_usec == JOB_RESERVED_UNKNOWN ? "when a job without a limit ends"
                                                                : fmt_time(j->reserved_start_usec, at, sizeof(at)));
        return buf;
}

/* A row for j, or for the pending tasks of j's array folded with it (set: their indexes). */
static int queue_add_row(fmt_table *t, const job *j, const array_set *set, int64_t now) {
        char id[96], cpus[FMT_BUF], mem[FMT_BUF], time[FMT_BUF], limit[FMT_BUF], left[FMT_BUF], reason[2 * FMT_BUF];
        char gpus[24];

        arraycli_row_id(j, set, id, sizeof(id));
        snprintf(gpus, sizeof(gpus), "%" PRId64, j->spec.req.gpus);
        return fmt_table_row(t, id, j->spec.name, j->user, job_state_name(j->state), j->node,
                             units_format_cpus(j->spec.req.mcpu, cpus, sizeof(cpus)),
                             units_format_size(j->spec.req.mem, mem, sizeof(mem)), gpus,
                             queue_time(j, now, time, sizeof(time)), limit_text(j, limit, sizeof(limit)),
                             left_text(j, now, left, sizeof(left)), queue_reason(j, reason, sizeof(reason)));
}

/* Print the jobs of a "jobs" reply as a table. Returns 0 or EXIT_FAIL. */
static int print_queue(const cli *c, const cJSON *reply) {
        static const char *const headers[] = {"ID", "NAME", "USER", "STATE", "NODE", "CPUS", "MEM", "GPUS", "TIME",
                                              "LIMIT", "LEFT", "REASON"};
        const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(reply, "jobs"), *item;
        char perr[PROTO_ERRLEN] = "";
        int64_t now = clock_real_usec();
        fmt_table t;
        int r = fmt_table_init(&t, 12, headers);

        if (!cJSON_IsArray(jobs))
                r = -EBADMSG;
        array_set set = {0};
        job prev = {0};
        /* an array's pending tasks that wait for one reason are one row, as in squeue: 12_[3-99%8] */
        cJSON_ArrayForEach(item, jobs) {
                job j = {0};
                if (r == 0 && (r = job_from_json(item, &j, perr)) == 0 && arraycli_folds(&prev, &j)) {
                        r = array_set_put(&set, j.array_index) == -ENOMEM ? -ENOMEM : 0;
                        job_free(&j);
                        continue;
                }
                if (r == 0 && (prev.id == 0 || (r = queue_add_row(&t, &prev, &set, now)) == 0)) {
                        array_set_free(&set);
                        job_free(&prev);
                        prev = j;
                        j = (job){0};
                        if (prev.array_first && prev.state == JOB_PENDING && array_set_put(&set, prev.array_index) < 0)
                                r = -ENOMEM;
                }
                job_free(&j);
        }
        if (r == 0 && prev.id)
                r = queue_add_row(&t, &prev, &set, now);
        array_set_free(&set);
        job_free(&prev);
        /* the arrays' tasks not made yet: a row each, 12_[256-999999] */
        cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(reply, "records")) {
                if (r == 0 && (r = arraycli_record_row(item, &prev, &set, perr)) == 0)
                        r = queue_add_row(&t, &prev, &set, now);
                array_set_free(&set);
                job_free(&prev);
        }
        if (r == 0)
                fmt_table_print(&t, stdout);
        else
                cli_error(c, "bad reply from the controller: %s", *perr ? perr : strerror(-r));
        fmt_table_free(&t);
        return r == 0 ? 0 : EXIT_FAIL;
}

static int run_queue(cli *c, int argc, char **argv) {
        enum { OPT_ALL = CLI_OPT_OWN, OPT_USER, OPT_FAMILIES };
        static const struct option options[] = {
                {"all", no_argument, NULL, OPT_ALL}, {"user", required_argument, NULL, OPT_USER},
                {"families", no_argument, NULL, OPT_FAMILIES}, {0},
        };
        cJSON *req;
        bool all = false, families = false;
        int64_t uid = -1;
        int o;

        while ((o = cli_getopt(c, argc, argv, options)) > 0) {
                if (o == OPT_ALL)
                        all = true;
                else if (o == OPT_FAMILIES)
                        families = true;
                else if (o == OPT_USER && jobs_parse_user(c, optarg, &uid) != 0)
                        return EXIT_USAGE;
        }
        if (o < 0)
                return cli_opts_status(o);
        if (optind < argc)
                return cli_usage_error(c, "unexpected argument '%s'", argv[optind]);
        req = proto_new("queue");
        if (!req || !cJSON_AddBoolToObject(req, "all", all) ||
            (uid >= 0 && !cJSON_AddNumberToObject(req, "user", (double)uid))) {
                cJSON_Delete(req);
                cli_error(c, "out of memory");
                return EXIT_FAIL;
        }
        cJSON *reply = NULL;
        int r = client_fetch(c, req, "jobs", "after_id", REQUEST_TIMEOUT_MS, &reply);
        if (r == 0 && families) {
                r = family_cli_list(c, reply);
        } else if (r == 0 && c->json && arraycli_add_folds(reply) < 0) {
                cli_error(c, "out of memory folding the arrays");
                r = EXIT_FAIL;
        } else if (r == 0) {
                r = c->json ? fmt_json(reply) : print_queue(c, reply);
        }
        cJSON_Delete(reply);
        return r == 0 ? 0 : EXIT_FAIL;
}

const cli_command cmd_queue = {"queue", "list pending and running jobs (--all: finished ones too)",
                               queue_usage, false, run_queue};

/* ---- show ---- */

static const char show_usage[] =
        "Usage: colony show [--json] [--script] JOB\n"
        "Show everything about a job: state, node, times, exit status, CPU time, peak memory,\n"
        "OOM kills, error, command line and output files; for a job that dependencies link to\n"
        "others, its family: each job and array of it with its jobs by state, and the family's\n"
        "flow time (from its first submit to its last end; so far, while live).\n\n"
        "  --script       print the batch script stored with the job instead, as submitted (its\n"
        "                 control characters escaped when the output is a terminal)\n";

static void field(const char *key, const char *value) {
        fmt_line(stdout, "%-13s%s", key, value ? value : "-");
}

/* The requested resources: "0.5 CPUs, 64.0M memory, 100 tasks". */
static void show_request(const job *j) {
        char cpus[FMT_BUF], mem[FMT_BUF], line[3 * FMT_BUF];

        snprintf(line, sizeof(line), "%s CPU%s, %s memory, ", units_format_cpus(j->spec.req.mcpu, cpus, sizeof(cpus)),
                 j->spec.req.mcpu == 1000 ? "" : "s", units_format_size(j->spec.req.mem, mem, sizeof(mem)));
        if (j->spec.mem_high > 0)
                snprintf(line + strlen(line), sizeof(line) - strlen(line), "soft limit %s, ",
                         units_format_size(j->spec.mem_high, cpus, sizeof(cpus)));
        if (j->spec.req.pids > 0)
                snprintf(line + strlen(line), sizeof(line) - strlen(line), "%" PRId64 " tasks", j->spec.req.pids);
        else
                snprintf(line + strlen(line), sizeof(line) - strlen(line), "the agent's task limit");
        field("request:", line);
}

/* The GPUs it asked for and, once started, those its agent gave it: "2 (0,1)"; their use where
 * its agent reads it. */
static void show_gpus(const job *j) {
        char line[FMT_BUF + 32];

        if (!j->spec.req.gpus)
                return;
        snprintf(line, sizeof(line), "%" PRId64 "%s%.*s%s", j->spec.req.gpus, j->gpu_ids ? " (" : "", FMT_BUF,
                 j->gpu_ids ? j->gpu_ids : "", j->gpu_ids ? ")" : "");
        field("gpus:", line);
        if (j->result.gpu_known) { /* its agent read them (NVML): no line where it cannot */
                char mem[FMT_BUF];
                snprintf(line, sizeof(line), "%" PRIu32 "%% utilised, %s of device memory", j->result.gpu_util,
                         units_format_size((int64_t)j->result.gpu_mem, mem, sizeof(mem)));
                field("gpu use:", line);
        }
}

/* Submitted/started/ended, and the waiting and running times (so far, while not over). */
static void show_times(const job *j) {
        int64_t now = clock_real_usec(), started = j->start_usec ? j->start_usec : now;
        char buf[FMT_BUF], line[2 * FMT_BUF];

        field("submitted:", fmt_time(j->submit_usec, buf, sizeof(buf)));
        field("started:", fmt_time(j->start_usec, buf, sizeof(buf)));
        field("ended:", fmt_time(j->end_usec, buf, sizeof(buf)));
        if (j->start_usec || j->state == JOB_PENDING) {
                snprintf(line, sizeof(line), "%s%s", fmt_duration(started - j->submit_usec, buf, sizeof(buf)),
                         j->start_usec ? "" : " so far");
                field("wait time:", line);
        } else
                field("wait time:", "-");
        if (j->start_usec) {
                snprintf(line, sizeof(line), "%s%s",
                         fmt_duration((j->end_usec ? j->end_usec : now) - j->start_usec, buf, sizeof(buf)),
                         j->end_usec ? "" : " so far");
                field("run time:", line);
        } else
                field("run time:", "-");
}

static void show_time_limit(const job *j) {
        char buf[FMT_BUF];

        field("time limit:", limit_text(j, buf, sizeof(buf)));
        if (j->state == JOB_RUNNING && j->spec.time_limit_usec > 0)
                field("time left:", left_text(j, clock_real_usec(), buf, sizeof(buf)));
}

/* Exit status and the usage the agent measured when the job ended. */
/* Usage is final once the job is over, and the agent's last sample while it runs. */
static void show_result(const job *j) {
        bool known = (job_state_is_terminal(j->state) && j->state != JOB_LOST) ||
                     (j->state == JOB_RUNNING && j->result.mem_peak > 0);
        char buf[FMT_BUF];

        field("exit:", outcome_describe(j, buf, sizeof(buf)));
        snprintf(buf, sizeof(buf), "%.2f s%s", (double)j->result.cpu_usec / 1e6, j->state == JOB_RUNNING ? " so far" : "");
        field("cpu time:", known ? buf : NULL);
        if (j->state == JOB_RUNNING)
                field("memory now:", known ? units_format_size((int64_t)j->result.mem_current, buf, sizeof(buf)) : NULL);
        field("peak memory:", known ? units_format_size((int64_t)j->result.mem_peak, buf, sizeof(buf)) : NULL);
        snprintf(buf, sizeof(buf), "%" PRIu64, j->result.oom_kills);
        field("oom kills:", known ? buf : NULL);
        if (j->result.psi.known) {
                char r[FMT_BUF], w[FMT_BUF], line[4 * FMT_BUF];
                snprintf(line, sizeof(line), "%s read, %s written", units_format_size((int64_t)j->result.io_rbytes, r, sizeof(r)),
                         units_format_size((int64_t)j->result.io_wbytes, w, sizeof(w)));
                field("block i/o:", known ? line : NULL);
                snprintf(line, sizeof(line), "cpu %.1f%%, memory %.1f%%, io %.1f%% (some, last 10 s); stalled %.2f s, "
                         "%.2f s, %.2f s in all", j->result.psi.cpu.some_avg10, j->result.psi.memory.some_avg10,
                         j->result.psi.io.some_avg10, (double)j->result.psi.cpu.some_total_usec / 1e6,
                         (double)j->result.psi.memory.some_total_usec / 1e6, (double)j->result.psi.io.some_total_usec / 1e6);
                field("pressure:", line);
        }
        if (j->result.error)
                field("error:", j->result.error);
}

/* The nodes the job chose, if it did: "features ssd; one of a,b; not c; a node of its own". */
static void show_nodesel(const job *j) {
        const job_spec *s = &j->spec;
        char line[4 * NODESEL_MAX]; /* each list is at most NODESEL_MAX */
        size_t n = 0;
        if (s->constraint)
                n += (size_t)snprintf(line + n, sizeof(line) - n, "features %s; ", s->constraint);
        if (s->nodelist)
                n += (size_t)snprintf(line + n, sizeof(line) - n, "one of %s; ", s->nodelist);
        if (s->exclude)
                n += (size_t)snprintf(line + n, sizeof(line) - n, "not %s; ", s->exclude);
        if (s->exclusive)
                n += (size_t)snprintf(line + n, sizeof(line) - n, "a node of its own; ");
        if (n == 0)
                return;
        line[n - 2] = '\0';
        field("nodes:", line);
}

/* When it may start: why it waits, its dependency, hold, begin time and nice value. */
static void show_start(const job *j) {
        char buf[FMT_BUF];

        if (j->state == JOB_PENDING)
                field("reason:", j->wait ? job_wait_name(j->wait) : NULL);
        if (j->state == JOB_PENDING && j->reserved_start_usec)
                field("reserved:", reserved_text(j, buf, sizeof(buf)));
        if (j->spec.dependency)
                field("dependency:", j->spec.dependency);
        if (j->spec.hold)
                field("held:", "yes (colony release)");
        if (j->spec.begin_usec)
                field("begin:", fmt_time(j->spec.begin_usec, buf, sizeof(buf)));
        if (j->spec.nice) {
                snprintf(buf, sizeof(buf), "%d", j->spec.nice);
                field("nice:", buf);
        }
}

static void show_job(const job *j) {
        char *cmdline = fmt_argv(j->spec.argv);
        char line[512];

        snprintf(line, sizeof(line), "%" PRIu64 " (%s)", j->id, j->spec.name ? j->spec.name : "-");
        field("job:", line);
        field("state:", job_state_name(j->state));
        if (j->array_first) {
                snprintf(line, sizeof(line), "index %u of the array from job %" PRIu64, j->array_index, j->array_first);
                field("array:", line);
        }
        if (j->spec.requeue || j->attempt > 1) {
                snprintf(line, sizeof(line), "%u%s", j->attempt, j->spec.requeue ? " (requeued if its node is lost)" : "");
                field("attempt:", line);
        }
        snprintf(line, sizeof(line), "%s (uid %u, gid %u)", j->user ? j->user : "?", (unsigned)j->uid,
                 (unsigned)j->gid);
        field("user:", line);
        if (j->spec.group)
                field("group:", j->spec.group);
        if (j->spec.job_type)
                field("type:", j->spec.job_type);
        show_nodesel(j);
        field("node:", j->node);
        show_request(j);
        show_gpus(j);
        show_start(j);
        show_times(j);
        show_time_limit(j);
        show_result(j);
        field("command:", cmdline ? cmdline : "?");
        field("cwd:", j->spec.cwd);
        field("stdout:", j->spec.stdout_path);
        field("stderr:", j->spec.stderr_path ? j->spec.stderr_path : "with stdout");
        if (j->spec.script) {
                snprintf(line, sizeof(line), "stored, %zu bytes (colony show --script %" PRIu64 ")",
                         strlen(j->spec.script), j->id);
                field("script:", line);
        }
        free(cmdline);
}

/* The job's batch script: as submitted into a file or a pipe, a line at a time escaped on a
 * terminal (anyone may show any job). Returns 0, or EXIT_FAIL when the job has none. */
static int show_script(const cli *c, const job *j) {
        if (!j->spec.script) {
                cli_error(c, "job %" PRIu64 " is not a batch script", j->id);
                return EXIT_FAIL;
        }
        if (!isatty(STDOUT_FILENO)) {
                fputs(j->spec.script, stdout);
                return 0;
        }
        for (const char *l = j->spec.script; *l;) {
                size_t len = strcspn(l, "\n");
                fmt_line(stdout, "%.*s", (int)len, l);
                l += len + (l[len] == '\n');
        }
        return 0;
}

static int run_show(cli *c, int argc, char **argv) {
        char sock[PATH_MAX], err[ERRLEN];
        cJSON *reply = NULL;
        job j = {0};
        uint64_t id = 0;
        bool script = false;
        int o, r;
        enum { OPT_SCRIPT = CLI_OPT_OWN };
        static const struct option options[] = {{"script", no_argument, NULL, OPT_SCRIPT}, {0}};

        while ((o = cli_getopt(c, argc, argv, options)) > 0)
                script = true;
        if (o < 0)
                return cli_opts_status(o);
        if (argc - optind != 1)
                return cli_usage_error(c, "give one job id (colony show JOB)");
        if (jobs_parse_id(c, argv[optind], &id) != 0)
                return EXIT_USAGE;
        if (jobs_socket_for(c, sock) < 0)
                return EXIT_FAIL;
        r = client_simple(sock, "show", id, "job", REQUEST_TIMEOUT_MS, &reply, err, sizeof(err));
        if (r == 0 && c->json)
                fmt_json(reply);
        else if (r == 0 && (r = record_from_reply(reply, &j, err, sizeof(err))) == 0 && script)
                r = show_script(c, &j) ? 1 : 0; /* positive: said why already */
        else if (r == 0) {
                const cJSON *waiting = cJSON_GetObjectItemCaseSensitive(reply, "waiting");
                show_job(&j);
                if (cJSON_IsString(waiting))
                        field("waiting:", waiting->valuestring);
                family_cli_show(reply);
        }
        if (r < 0)
                cli_error(c, "%s", err);
        job_free(&j);
        cJSON_Delete(reply);
        return r == 0 ? 0 : EXIT_FAIL;
}

const cli_command cmd_show = {"show", "show everything about a job", show_usage, false, run_show};

/* ---- cancel ---- */

static const char cancel_usage[] =
        "Usage: colony cancel [--json] JOB...\n"
        "       colony cancel [--json] [--user NAME|UID] [--array ID] [--state pending|running] [IDS...]\n"
        "Cancel jobs: a pending job never starts; a running one gets SIGTERM, then SIGKILL to its\n"
        "whole cgroup after a grace period. Only the job's owner or root may cancel it. An array's\n"
        "id cancels all its tasks; A_i cancels task i of array A alone.\n\n"
        "With an option, or with IDS given as ranges and lists (1-5000, 1,3,7-9), one request\n"
        "cancels every live job that matches all that is given, and prints how many:\n"
        "  --user U       the jobs of user U (a name or a uid)\n"
        "  --array ID     the jobs of the array whose first job is ID\n"
        "  --state S      only the pending, or only the running, jobs (alone: yours, unless root)\n\n"
        "Exits 1 if any cancel failed (a job not found, not yours, or on a node that is down), or\n"
        "if a bulk cancel matched no job.\n";

/* A bulk cancel waits for the controller to cancel every job, a slice per turn of its loop. */
#define CANCEL_MANY_TIMEOUT_MS (10 * REQUEST_TIMEOUT_MS)

/* Add the ranges of operand s ("7", "1-5000", "1,3,7-9") to arr as [first, last] pairs.
 * Returns 0, or EXIT_USAGE after printing why. */
static int add_id_ranges(const cli *c, const char *s, cJSON *arr) {
        char *copy = strdup(s), *save = NULL;
        int r = copy ? 0 : EXIT_FAIL;

        for (char *part = copy ? strtok_r(copy, ",", &save) : NULL; r == 0 && part; part = strtok_r(NULL, ",", &save)) {
                char *dash = strchr(part, '-');
                uint64_t lo = 0, hi = 0;
                if (dash)
                        *dash = 0;
                if ((r = jobs_parse_id(c, part, &lo)) != 0 || (r = jobs_parse_id(c, dash ? dash + 1 : part, &hi)) != 0)
                        break;
                if (hi < lo) {
                        r = cli_usage_error(c, "'%s': the range ends before it starts", s);
                        break;
                }
                cJSON *pair = cJSON_CreateArray();
                if (!pair || !cJSON_AddItemToArray(arr, pair) || !cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)lo)) ||
                    !cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)hi)))
                        r = EXIT_FAIL;
        }
        if (r == 0 && cJSON_GetArraySize(arr) == 0)
                r = cli_usage_error(c, "'%s' is not a job id", s);
        if (r == EXIT_FAIL)
                cli_error(c, "out of memory");
        free(copy);
        return r;
}

/* Print a bulk cancel's counts. Returns 0, or EXIT_FAIL when some were refused or nothing matched. */
static int print_cancelled_many(const cli *c, cJSON *reply) {
        double n[4];
        static const char *const keys[] = {"cancelled", "stopping", "refused", "unreachable"};

        for (size_t i = 0; i < 4; i++) {
                const cJSON *v = cJSON_GetObjectItemCaseSensitive(reply, keys[i]);
                n[i] = cJSON_IsNumber(v) ? v->valuedouble : 0;
        }
        if (c->json)
                fmt_json(reply);
        else
                printf("cancelled %.0f pending jobs, asked %.0f running jobs to stop\n", n[0], n[1]);
        if (n[2] > 0)
                cli_error(c, "%.0f jobs not cancelled: they belong to other users", n[2]);
        if (n[3] > 0)
                cli_error(c, "%.0f jobs not cancelled: they run on nodes that are down", n[3]);
        if (n[0] + n[1] + n[2] + n[3] == 0)
                cli_error(c, "no live job matches");
        return n[2] > 0 || n[3] > 0 || n[0] + n[1] + n[2] + n[3] == 0 ? EXIT_FAIL : 0;
}

/* One request that cancels every job req (with its filters) and the operands name. */
static int cancel_many(const cli *c, cJSON *req, int argc, char **argv) {
        char sock[PATH_MAX], err[ERRLEN];
        cJSON *reply = NULL, *ranges = optind < argc ? cJSON_AddArrayToObject(req, "ranges") : NULL;
        int r = optind < argc && !ranges ? EXIT_FAIL : 0;

        for (int i = optind; r == 0 && i < argc; i++)
                r = add_id_ranges(c, argv[i], ranges);
        if (r == 0 && jobs_socket_for(c, sock) < 0)
                r = EXIT_FAIL;
        if (r == 0 && client_call(sock, req, "cancelled_many", CANCEL_MANY_TIMEOUT_MS, &reply, err, sizeof(err)) < 0) {
                cli_error(c, "%s", err);
                r = EXIT_FAIL;
        } else if (r == 0) {
                r = print_cancelled_many(c, reply);
        }
        cJSON_Delete(reply);
        cJSON_Delete(req);
        return r;
}

/* True when text already names "job <id>" (so a prefix naming it again would stutter). */
static bool names_job(const char *text, uint64_t id) {
        char needle[32];
        size_t n = (size_t)snprintf(needle, sizeof(needle), "job %" PRIu64, id);

        for (const char *p = strstr(text, needle); p; p = strstr(p + 1, needle))
                if (p[n] < '0' || p[n] > '9')
                        return true;
        return false;
}

/* Every task of array id: one bulk cancel, as --array ID, printed as such. Returns 0 or -errno
 * (-ECANCELED when some were not cancelled, or none was live). */
static int cancel_array(const cli *c, const char *sock, uint64_t id) {
        char err[ERRLEN];
        cJSON *req = proto_new("cancel"), *reply = NULL;
        int r = req && cJSON_AddNumberToObject(req, "array", (double)id) ? 0 : -ENOMEM;

        if (r == 0 && (r = client_call(sock, req, "cancelled_many", CANCEL_MANY_TIMEOUT_MS, &reply, err, sizeof(err))) < 0)
                cli_error(c, "array %" PRIu64 ": %s", id, err);
        else if (r == 0 && print_cancelled_many(c, reply) != 0)
                r = -ECANCELED;
        else if (r < 0)
                cli_error(c, "out of memory");
        cJSON_Delete(req);
        cJSON_Delete(reply);
        return r;
}

/* One cancel request; prints the outcome. An array's id (its first task's) cancels all its
 * tasks, as Slurm's scancel does. Returns 0 or -errno. */
static int cancel_one(const cli *c, const char *sock, uint64_t id, bool task) {
        char err[ERRLEN];
        cJSON *reply = NULL;
        uint64_t last;
        int r;

        if (!task && arraycli_last(sock, id, &last, err, sizeof(err)) == 0)
                return cancel_array(c, sock, id);
        r = client_simple(sock, "cancel", id, "cancelled", REQUEST_TIMEOUT_MS, &reply, err, sizeof(err));
        if (r < 0 && names_job(err, id))
                cli_error(c, "%s", err);
        else if (r < 0)
                cli_error(c, "job %" PRIu64 ": %s", id, err);
        else if (c->json)
                fmt_json(reply);
        else
                printf("cancelled %" PRIu64 "\n", id);
        cJSON_Delete(reply);
        return r;
}

static int run_cancel(cli *c, int argc, char **argv) {
        enum { OPT_USER = CLI_OPT_OWN, OPT_ARRAY, OPT_STATE };
        static const struct option options[] = {
                {"user", required_argument, NULL, OPT_USER}, {"array", required_argument, NULL, OPT_ARRAY},
                {"state", required_argument, NULL, OPT_STATE}, {0},
        };
        char sock[PATH_MAX];
        bool failed = false, many = false;
        cJSON *req = proto_new("cancel");
        uint64_t *ids, array = 0;
        int64_t uid = -1;
        int o, n;

        while (req && (o = cli_getopt(c, argc, argv, options)) > 0) {
                many = true;
                if (o == OPT_USER && jobs_parse_user(c, optarg, &uid) != 0)
                        o = CLI_OPTS_BAD;
                else if (o == OPT_ARRAY && jobs_parse_id(c, optarg, &array) != 0)
                        o = CLI_OPTS_BAD;
                else if (o == OPT_STATE && strcmp(optarg, "pending") != 0 && strcmp(optarg, "running") != 0) {
                        cli_usage_error(c, "--state: '%s' is not pending or running", optarg);
                        o = CLI_OPTS_BAD;
                }
                if (o == CLI_OPTS_BAD)
                        break;
                if ((o == OPT_USER && !cJSON_AddNumberToObject(req, "user", (double)uid)) ||
                    (o == OPT_ARRAY && !cJSON_AddNumberToObject(req, "array", (double)array)) ||
                    (o == OPT_STATE && !cJSON_AddStringToObject(req, "state", optarg)))
                        req = (cJSON_Delete(req), NULL);
        }
        if (!req) {
                cli_error(c, "out of memory");
                return EXIT_FAIL;
        }
        if (o < 0) {
                cJSON_Delete(req);
                return cli_opts_status(o);
        }
        n = argc - optind;
        for (int i = optind; i < argc; i++)
                many = many || strpbrk(argv[i], ",-") != NULL;
        /* --state alone means the caller's own jobs, unless root: others' would only be refused */
        if (many && uid < 0 && !array && optind == argc && getuid() != 0 &&
            !cJSON_AddNumberToObject(req, "user", (double)getuid())) {
                cJSON_Delete(req);
                cli_error(c, "out of memory");
                return EXIT_FAIL;
        }
        if (many)
                return cancel_many(c, req, argc, argv);
        cJSON_Delete(req);
        if (n < 1)
                return cli_usage_error(c, "give at least one job id (colony cancel JOB...)");
        ids = calloc((size_t)n, sizeof(*ids));
        if (!ids) {
                cli_error(c, "out of memory");
                return EXIT_FAIL;
        }
        /* Every id is checked before the first request, so that a typo cancels nothing. */
        for (int i = 0; i < n; i++)
                if (jobs_parse_id(c, argv[optind + i], &ids[i]) != 0) {
                        free(ids);
                        return EXIT_USAGE;
                }
        if (jobs_socket_for(c, sock) < 0) {
                free(ids);
                return EXIT_FAIL;
        }
        for (int i = 0; i < n; i++)
                if (cancel_one(c, sock, ids[i], arraycli_is_task(argv[optind + i])) < 0)
                        failed = true;
        free(ids);
        return failed ? EXIT_FAIL : 0;
}

const cli_command cmd_cancel = {"cancel", "cancel jobs", cancel_usage, false, run_cancel};

/* ---- wait ---- */

static const char wait_usage[] =
        "Usage: colony wait [--timeout SECONDS] [--json] JOB\n"
        "Block until the job has ended, print how it ended, and exit with a status that mirrors it\n"
        "(for an array's id, every task in turn, and the highest of their statuses; A_i: one task):\n"
        "  completed                                  0\n"
        "  exited with code N                         N\n"
        "  killed by signal S (OOM kill, cancel,      128 + S (137 for SIGKILL)\n"
        "    time limit: SIGTERM, or SIGKILL after kill_wait)\n"
        "  cancelled before it ran or after SIGTERM   143 (128 + SIGTERM)\n"
        "  failed to start                            127\n"
        "  lost (its agent vanished)                  1\n"
        "  still running after --timeout              124\n"
        "  no such job, no controller                 1; bad usage 2\n";

/* The error text without a leading "<state>: " that would repeat the state; NULL when nothing
 * is left. */
static const char *error_detail(const job *j) {
        const char *state = job_state_name(j->state), *e = j->result.error;
        size_t n = strlen(state);

        if (e && strncmp(e, state, n) == 0 && (e[n] == ':' || e[n] == '\0'))
                e += n + strspn(e + n, ": ");
        return e && *e ? e : NULL;
}

/* "job 7 (hog) oom-killed after 1.2 s: killed by the OOM killer (memory limit 64.0M)",
 * "job 8 (x) completed after 4.0 s: exit 0", "job 9 (y) failed, never started: execve ..." */
static void print_final(const job *j) {
        const char *detail = error_detail(j);
        char ran[FMT_BUF], how[FMT_BUF];

        fmt_line(stdout, "job %" PRIu64 " (%s) %s%s%s: %s", j->id, j->spec.name ? j->spec.name : "-",
                 job_state_name(j->state), j->start_usec && j->end_usec ? " after " : j->state != JOB_LOST ? ", never started" : "",
                 j->start_usec && j->end_usec ? fmt_duration(j->end_usec - j->start_usec, ran, sizeof(ran)) : "",
                 detail ? detail : outcome_describe(j, how, sizeof(how)));
}

/* --timeout SECONDS into milliseconds. Returns 0 or EXIT_USAGE after printing why. */
static int parse_timeout(const cli *c, const char *s, int *ms) {
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno || end == s || *end || !isfinite(v) || v < 0 || v > INT_MAX / 1000)
                return cli_usage_error(c, "--timeout: '%s' is not a number of seconds", s);
        *ms = (int)(v * 1000);
        return 0;
}

/* Wait for every task of the array from first to last, in turn, within timeout_ms in all (< 0:
 * forever), printing how each ended (with --json, {"jobs": [their records]}). Returns the exit
 * status of the task that fared worst (the highest), EXIT_TIMEOUT or EXIT_FAIL. */
static int wait_array(const cli *c, const char *sock, uint64_t first, uint64_t last, int timeout_ms,
                      const char *timeout) {
        char err[ERRLEN];
        int64_t deadline = clock_real_usec() + (int64_t)timeout_ms * 1000;
        cJSON *all = c->json ? cJSON_CreateObject() : NULL, *list = all ? cJSON_AddArrayToObject(all, "jobs") : NULL;
        int worst = 0;

        if (c->json && !list) {
                cJSON_Delete(all);
                cli_error(c, "out of memory");
                return EXIT_FAIL;
        }
        for (uint64_t id = first; id <= last && worst != EXIT_FAIL && worst != EXIT_TIMEOUT; id++) {
                int left = timeout_ms < 0 ? -1 : (int)((deadline - clock_real_usec()) / 1000);
                cJSON *reply = NULL;
                job j = {0};
                int r = jobs_wait(sock, id, left < 0 && timeout_ms >= 0 ? 0 : left, &j, &reply, err, sizeof(err));
                if (r == -ETIMEDOUT) {
                        cli_error(c, "array %" PRIu64 ": task %" PRIu64 " has not ended within %s s", first, id, timeout);
                        worst = EXIT_TIMEOUT;
                } else if (r < 0) {
                        cli_error(c, "%s", err);
                        worst = EXIT_FAIL;
                } else {
                        if (list)
                                cJSON_AddItemToArray(list, cJSON_DetachItemFromObject(reply, "job"));
                        else
                                print_final(&j);
                        int status = outcome_exit_status(&j) < 0 ? EXIT_FAIL : outcome_exit_status(&j);
                        worst = status > worst ? status : worst;
                }
                job_free(&j);
                cJSON_Delete(reply);
        }
        if (all)
                fmt_json(all);
        cJSON_Delete(all);
        return worst;
}

static int run_wait(cli *c, int argc, char **argv) {
        enum { OPT_TIMEOUT = CLI_OPT_OWN };
        static const struct option options[] = {{"timeout", required_argument, NULL, OPT_TIMEOUT}, {0}};
        char sock[PATH_MAX], err[ERRLEN];
        const char *timeout = NULL;
        cJSON *reply = NULL;
        int o, r, timeout_ms = -1;
        job j = {0};
        uint64_t id = 0, last;

        while ((o = cli_getopt(c, argc, argv, options)) > 0) {
                timeout = optarg;
                if (parse_timeout(c, timeout, &timeout_ms) != 0)
                        return EXIT_USAGE;
        }
        if (o < 0)
                return cli_opts_status(o);
        if (argc - optind != 1)
                return cli_usage_error(c, "give one job id (colony wait JOB)");
        if (jobs_parse_id(c, argv[optind], &id) != 0)
                return EXIT_USAGE;
        if (jobs_socket_for(c, sock) < 0)
                return EXIT_FAIL;
        if (!arraycli_is_task(argv[optind]) && arraycli_last(sock, id, &last, err, sizeof(err)) == 0)
                return wait_array(c, sock, id, last, timeout_ms, timeout);
        r = jobs_wait(sock, id, timeout_ms, &j, &reply, err, sizeof(err));
        if (r == -ETIMEDOUT) {
                cli_error(c, "job %" PRIu64 " has not ended within %s s", id, timeout);
                r = EXIT_TIMEOUT;
        } else if (r < 0) {
                cli_error(c, "%s", err);
                r = EXIT_FAIL;
        } else {
                if (c->json)
                        fmt_json(reply);
                else
                        print_final(&j);
                r = outcome_exit_status(&j) < 0 ? EXIT_FAIL : outcome_exit_status(&j);
        }
        job_free(&j);
        cJSON_Delete(reply);
        return r;
}

const cli_command cmd_wait = {"wait", "wait for a job to end; the exit status mirrors the job's",
                              wait_usage, false, run_wait};
