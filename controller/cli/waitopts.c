/* waitopts.c - submit's start options, and hold, release and update (see waitopts.h). */
#include "waitopts.h"
#include "arraycli.h"
#include "client.h"
#include "depend.h"
#include "format.h"
#include "jobs.h"
#include "units.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* Append term to the dependency built so far, an array's task A_i as its job id, and check the
 * whole. */
static int add_dependency(const cli *c, job_spec *s, const char *term) {
        char err[ERRLEN], *all, *ids;
        dep_list l;
        int r = arraycli_resolve_tasks(c, term, &ids);

        if (r != 0)
                return r;
        r = asprintf(&all, "%s%s%s", s->dependency ? s->dependency : "", s->dependency ? "," : "", ids);
        free(ids);
        if (r < 0) {
                cli_error(c, "out of memory");
                return EXIT_FAIL;
        }
        free(s->dependency);
        s->dependency = all;
        if (dep_parse(all, &l, err, sizeof(err)) < 0)
                return cli_usage_error(c, "%s", err);
        dep_list_free(&l);
        return -1;
}

/* --afterok 1,2 as "afterok:1:2". */
static int add_kind(const cli *c, job_spec *s, const char *kind, const char *ids) {
        char *term;

        if (asprintf(&term, "%s:%s", kind, ids) < 0) {
                cli_error(c, "out of memory");
                return EXIT_FAIL;
        }
        for (char *p = term + strlen(kind) + 1; *p; p++)
                if (*p == ',')
                        *p = ':';
        int r = add_dependency(c, s, term);
        free(term);
        return r;
}

/* A nice value, -10000..10000. Returns 0, or EXIT_USAGE after printing why. */
static int parse_nice(const cli *c, const char *arg, int *out) {
        char *end;
        errno = 0;
        long v = strtol(arg, &end, 10);
        if (!*arg || *end || errno || v < JOB_NICE_MIN || v > JOB_NICE_MAX)
                return cli_usage_error(c, "--nice: '%s' is not a number from %d to %d", arg, JOB_NICE_MIN,
                                       JOB_NICE_MAX);
        *out = (int)v;
        return 0;
}

int waitopt_submit(const cli *c, int opt, const char *arg, job_spec *s) {
        char err[ERRLEN];
        struct timespec now;

        switch (opt) {
        case WAITOPT_AFTER: return add_kind(c, s, "after", arg);
        case WAITOPT_AFTEROK: return add_kind(c, s, "afterok", arg);
        case WAITOPT_AFTERNOTOK: return add_kind(c, s, "afternotok", arg);
        case WAITOPT_AFTERANY: return add_kind(c, s, "afterany", arg);
        case 'd': /* Slurm's short forms */
        case WAITOPT_DEPENDENCY: return add_dependency(c, s, arg);
        case WAITOPT_SINGLETON: return add_dependency(c, s, "singleton");
        case 'H':
        case WAITOPT_HOLD: s->hold = true; return -1;
        case WAITOPT_NICE: return parse_nice(c, arg, &s->nice) ? EXIT_USAGE : -1;
        case 'b':
        case WAITOPT_BEGIN:
                clock_gettime(CLOCK_REALTIME, &now);
                if (dep_parse_begin(arg, (int64_t)now.tv_sec * 1000000 + now.tv_nsec / 1000, &s->begin_usec, err,
                                    sizeof(err)) < 0)
                        return cli_usage_error(c, "%s", err);
                return -1;
        }
        return -1;
}

/* ---- hold, release, update ---- */

static const char hold_usage[] =
        "Usage: colony hold [--json] JOB...\n"
        "Hold pending jobs: they stay pending (reason \"held\") until released. Your own jobs;\n"
        "root: anyone's.\n";

static const char release_usage[] = "Usage: colony release [--json] JOB...\n"
                                    "Release held jobs: they may start again.\n";

static const char update_usage[] =
        "Usage: colony update [--cpus N] [--mem SIZE] [--gpus N] [--time LIMIT] [--nice N] [--json] JOB\n"
        "Change a pending job's request, time limit or nice value (a running one's cannot change).\n\n"
        "  --cpus N     CPU cores (\"2\", \"0.5\", \"500m\")\n"
        "  --mem SIZE   memory limit (\"512M\", \"2G\")\n"
        "  --gpus N     GPUs (a count: its type, if any, stays in its constraint)\n"
        "  --time T     time limit, as submit's (\"30\", \"2:00:00\", \"1-0\", UNLIMITED)\n"
        "  --nice N     0 to 10000 (negative: root only): higher starts after your other jobs\n"
        "               of its group\n";

/* Send req (consumed) and print the "job" reply: "job N: held" or the JSON. */
static int send_job_request(const cli *c, cJSON *req, uint64_t id, const char *done) {
        char sock[PATH_MAX], err[ERRLEN];
        cJSON *reply = NULL;
        int r = req ? jobs_socket_for(c, sock) : -ENOMEM;

        if (r == 0 && client_call(sock, req, "job", REQUEST_TIMEOUT_MS, &reply, err, sizeof(err)) < 0) {
                cli_error(c, "%s", err);
                r = -EREMOTEIO;
        } else if (r == 0 && c->json)
                fmt_json(reply);
        else if (r == 0)
                printf("job %" PRIu64 ": %s\n", id, done);
        else if (r == -ENOMEM)
                cli_error(c, "out of memory");
        cJSON_Delete(req);
        cJSON_Delete(reply);
        return r == 0 ? 0 : EXIT_FAIL;
}

/* hold or release every task of the array first, as Slurm's scontrol does with an array's id,
 * in one request: the tasks not pending (or already so) are counted, not errors, unless none
 * was done. */
static int array_hold_or_release(const cli *c, const char *sock, const char *type, const char *done, uint64_t first) {
        char err[ERRLEN], perr[PROTO_ERRLEN];
        cJSON *req = proto_new(type), *reply = NULL;
        int64_t n = 0, refused = 0;
        const char *why = "";
        int r = -ENOMEM;
        if (req && cJSON_AddNumberToObject(req, "id", (double)first) && cJSON_AddBoolToObject(req, "array", true))
                r = client_call(sock, req, "array_held", REQUEST_TIMEOUT_MS, &reply, err, sizeof(err));
        else
                snprintf(err, sizeof(err), "out of memory");
        if (r == 0 && (proto_get_int(reply, "done", 0, INT64_MAX, &n, perr) != 0 ||
                       proto_get_int(reply, "unchanged", 0, INT64_MAX, &refused, perr) != 0 ||
                       proto_get_str(reply, "first_refusal", &why, perr) == -EINVAL)) {
                snprintf(err, sizeof(err), "bad reply from the controller: %s", perr);
                r = -EBADMSG;
        }
        if (r < 0) {
                cli_error(c, "array %" PRIu64 ": %s", first, err);
        } else if (c->json) {
                cJSON *o = cJSON_CreateObject();
                if (o && cJSON_AddNumberToObject(o, "array", (double)first) &&
                    cJSON_AddNumberToObject(o, done, (double)n) &&
                    cJSON_AddNumberToObject(o, "unchanged", (double)refused))
                        fmt_json(o);
                cJSON_Delete(o);
        } else {
                printf("array %" PRIu64 ": %" PRId64 " tasks %s", first, n, done);
                if (refused)
                        printf(", %" PRId64 " left as they were (the first: %s)", refused, why);
                printf("\n");
        }
        cJSON_Delete(req);
        cJSON_Delete(reply);
        return r == 0 && n ? 0 : EXIT_FAIL;
}

/* hold or release each JOB (an array's id: all its tasks); every id is checked before the first
 * request. */
static int hold_or_release(cli *c, int argc, char **argv, const char *type, const char *done) {
        static const struct option none[] = { { 0 } };
        int o, status = 0;
        uint64_t id = 0;

        while ((o = cli_getopt(c, argc, argv, none)) > 0)
                ;
        if (o < 0)
                return cli_opts_status(o);
        if (optind == argc)
                return cli_usage_error(c, "give at least one job id (colony %s JOB...)", type);
        for (int i = optind; i < argc; i++)
                if (jobs_parse_id(c, argv[i], &id) != 0)
                        return EXIT_USAGE;
        for (int i = optind; i < argc; i++) {
                char sock[PATH_MAX], err[ERRLEN];
                uint64_t last;
                (void)jobs_parse_id(c, argv[i], &id);
                if (!arraycli_is_task(argv[i]) && client_socket_path(c, sock, sizeof(sock)) == 0 &&
                    arraycli_last(sock, id, &last, err, sizeof(err)) == 0) {
                        if (array_hold_or_release(c, sock, type, done, id) != 0)
                                status = EXIT_FAIL;
                        continue;
                }
                cJSON *req = proto_new(type);
                if (req && !cJSON_AddNumberToObject(req, "id", (double)id))
                        req = (cJSON_Delete(req), NULL);
                if (send_job_request(c, req, id, done) != 0)
                        status = EXIT_FAIL;
        }
        return status;
}

static int run_hold(cli *c, int argc, char **argv) { return hold_or_release(c, argc, argv, "hold", "held"); }

static int run_release(cli *c, int argc, char **argv) { return hold_or_release(c, argc, argv, "release", "released"); }

static int run_update(cli *c, int argc, char **argv) {
        enum { OPT_CPUS = CLI_OPT_OWN, OPT_MEM, OPT_NICE, OPT_TIME, OPT_GPUS };
        static const struct option options[] = {
                { "cpus", required_argument, NULL, OPT_CPUS }, { "mem", required_argument, NULL, OPT_MEM },
                { "nice", required_argument, NULL, OPT_NICE }, { "time", required_argument, NULL, OPT_TIME },
                { "gpus", required_argument, NULL, OPT_GPUS }, { 0 },
        };
        int64_t mcpu = -1, mem = -1, limit = INT64_MIN, gpus = -1;
        int o, nice = INT_MIN;
        uint64_t id = 0;

        while ((o = cli_getopt(c, argc, argv, options)) > 0) {
                if (o == OPT_CPUS && units_parse_cpus(optarg, &mcpu) < 0)
                        return cli_usage_error(c, "--cpus: '%s' is not a CPU count (like 1, 0.5 or 500m)", optarg);
                if (o == OPT_MEM && (units_parse_size(optarg, &mem) < 0 || mem == 0))
                        return cli_usage_error(c, "--mem: '%s' is not a memory size (like 512M or 2G)", optarg);
                if (o == OPT_NICE && parse_nice(c, optarg, &nice) != 0)
                        return EXIT_USAGE;
                if (o == OPT_TIME && jobs_parse_time_limit(c, optarg, &limit) < 0)
                        return EXIT_USAGE;
                if (o == OPT_GPUS && units_parse_uint(optarg, RES_GPUS_MAX, &gpus) < 0)
                        return cli_usage_error(c, "--gpus: '%s' is not a GPU count (0 to %lld)", optarg,
                                               (long long)RES_GPUS_MAX);
        }
        if (o < 0)
                return cli_opts_status(o);
        if (optind + 1 != argc)
                return cli_usage_error(c,
                                       "give one job id (colony update [--cpus N] [--mem SIZE] [--gpus N] [--time T] "
                                       "[--nice N] JOB)");
        if (jobs_parse_id(c, argv[optind], &id) != 0)
                return EXIT_USAGE;
        if (mcpu < 0 && mem < 0 && nice == INT_MIN && limit == INT64_MIN && gpus < 0)
                return cli_usage_error(c, "nothing to change: give --cpus, --mem, --gpus, --time or --nice");
        cJSON *req = proto_new("update");
        if (req && (!cJSON_AddNumberToObject(req, "id", (double)id) ||
                    (mcpu >= 0 && !cJSON_AddNumberToObject(req, "mcpu", (double)mcpu)) ||
                    (mem >= 0 && !cJSON_AddNumberToObject(req, "mem", (double)mem)) ||
                    (nice != INT_MIN && !cJSON_AddNumberToObject(req, "nice", nice)) ||
                    (limit != INT64_MIN && !cJSON_AddNumberToObject(req, "time_limit_usec", (double)limit)) ||
                    (gpus >= 0 && !cJSON_AddNumberToObject(req, "gpus", (double)gpus))))
                req = (cJSON_Delete(req), NULL);
        return send_job_request(c, req, id, "updated");
}

const cli_command cmd_hold = { "hold", "hold pending jobs until released", hold_usage, false, run_hold };
const cli_command cmd_release = { "release", "release held jobs", release_usage, false, run_release };
const cli_command cmd_update = { "update", "change a pending job's CPUs, memory, time limit or nice value",
                                 update_usage, false, run_update };
