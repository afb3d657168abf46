/* cancel.c - colony cancel: one job at a time, or the jobs its selectors match in one request. */
#include "cli.h"
#include "arraycli.h"
#include "client.h"
#include "format.h"
#include "jobs.h"
#include "proto.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
                if (!pair || !cJSON_AddItemToArray(arr, pair) ||
                    !cJSON_AddItemToArray(pair, cJSON_CreateNumber((double)lo)) ||
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
        static const char *const keys[] = { "cancelled", "stopping", "refused", "unreachable" };

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

        if (r == 0 &&
            (r = client_call(sock, req, "cancelled_many", CANCEL_MANY_TIMEOUT_MS, &reply, err, sizeof(err))) < 0)
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

/* The job ids operands, each cancelled by its own request once all are checked. Returns an exit
 * status. */
static int cancel_each(const cli *c, int argc, char **argv) {
        char sock[PATH_MAX];
        bool failed = false;
        uint64_t *ids;
        int n = argc - optind;

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

static int run_cancel(cli *c, int argc, char **argv) {
        enum { OPT_USER = CLI_OPT_OWN, OPT_ARRAY, OPT_STATE };
        static const struct option options[] = {
                { "user", required_argument, NULL, OPT_USER },
                { "array", required_argument, NULL, OPT_ARRAY },
                { "state", required_argument, NULL, OPT_STATE },
                { 0 },
        };
        bool many = false;
        cJSON *req = proto_new("cancel");
        uint64_t array = 0;
        int64_t uid = -1;
        int o;

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
        return cancel_each(c, argc, argv);
}

const cli_command cmd_cancel = { "cancel", "cancel jobs", cancel_usage, false, run_cancel };
