/* history.c - colony history: finished jobs, filtered, newest first, like an accounting
 * database. */
#include "cli.h"
#include "client.h"
#include "family_cli.h"
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

static const char history_usage[] =
        "Usage: colony history [--user U] [--group G] [--state S] [--since T] [--until T]\n"
        "                      [--limit N] [--before ID] [--families] [--json]\n"
        "Finished jobs, newest first.\n\n"
        "  --user U     only user U's (a name or a uid)\n"
        "  --group G    only group G's and its subgroups' (physics matches physics/astro)\n"
        "  --state S    completed, failed, cancelled, oom-killed, lost or timeout\n"
        "  --since T    ended at or after T; --until T: before T. T is local time\n"
        "               (2026-11-23, 2026-11-23T14:00, 2026-11-23T14:00:30), @EPOCH-SECONDS,\n"
        "               or an age: 30m, 2h, 7d ago\n"
        "  --limit N    at most N jobs (default 100, at most 10000); when more match, the last\n"
        "               line says how to see the next page with --before\n"
        "  --families   one line per family of the jobs listed instead (the jobs and arrays\n"
        "               dependencies link, FAMILY its first job's id): its jobs by state, its\n"
        "               flow time from its first submit to its last end (so far, while live)\n"
        "               and the flow time it would have with unlimited machines\n";

/* T as above into microseconds since the epoch. Returns 0 or -EINVAL. */
static int parse_time(const char *s, int64_t *usec) {
        static const char *const formats[] = { "%Y-%m-%dT%H:%M:%S", "%Y-%m-%dT%H:%M", "%Y-%m-%d" };
        int64_t n;
        size_t len = strlen(s);
        if (s[0] == '@')
                return units_parse_uint(s + 1, INT64_MAX / 1000000, &n) < 0 ? -EINVAL : (*usec = n * 1000000, 0);
        if (len > 1 && strchr("mhd", s[len - 1])) {
                char num[32];
                snprintf(num, sizeof(num), "%.*s", (int)(len - 1), s);
                int64_t unit = s[len - 1] == 'm' ? 60 : s[len - 1] == 'h' ? 3600 : 86400;
                if (len - 1 >= sizeof(num) || units_parse_uint(num, INT64_MAX / 1000000 / unit, &n) < 0)
                        return -EINVAL;
                *usec = (int64_t)time(NULL) * 1000000 - n * unit * 1000000;
                return 0;
        }
        for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++) {
                struct tm tm = { .tm_isdst = -1 };
                const char *end = strptime(s, formats[i], &tm);
                if (end && *end == '\0') {
                        *usec = (int64_t)mktime(&tm) * 1000000;
                        return 0;
                }
        }
        return -EINVAL;
}

static int history_add_row(fmt_table *t, const job *j) {
        char id[32], waited[FMT_BUF], ran[FMT_BUF], cpu[FMT_BUF], peak[FMT_BUF], ended[FMT_BUF], how[FMT_BUF];
        if (j->result.signal)
                fmt_signal(j->result.signal, how, sizeof(how));
        else
                snprintf(how, sizeof(how), "exit %d", j->result.exit_code);
        snprintf(id, sizeof(id), "%" PRIu64, j->id);
        return fmt_table_row(t, id, j->spec.name, j->user, j->spec.group ? j->spec.group : "-",
                             job_state_name(j->state), how, j->node ? j->node : "-", j->gpu_ids ? j->gpu_ids : "-",
                             fmt_duration(j->start_usec ? j->start_usec - j->submit_usec : -1, waited, sizeof(waited)),
                             fmt_duration(j->start_usec ? j->end_usec - j->start_usec : -1, ran, sizeof(ran)),
                             fmt_duration((int64_t)j->result.cpu_usec, cpu, sizeof(cpu)),
                             units_format_size((int64_t)j->result.mem_peak, peak, sizeof(peak)),
                             fmt_time(j->end_usec, ended, sizeof(ended)));
}

static int print_history(const cli *c, const cJSON *reply) {
        static const char *const headers[] = { "ID",   "NAME",   "USER", "GROUP", "STATE", "EXIT", "NODE",
                                               "GPUS", "WAITED", "RAN",  "CPU",   "PEAK",  "ENDED" };
        const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(reply, "jobs"), *item;
        char perr[PROTO_ERRLEN] = "";
        uint64_t oldest = 0;
        fmt_table t;
        int r = fmt_table_init(&t, 13, headers);
        if (!cJSON_IsArray(jobs))
                r = -EBADMSG;
        cJSON_ArrayForEach(item, jobs) {
                job j = { 0 };
                if (r == 0 && (r = job_from_json(item, &j, perr)) == 0 && (r = history_add_row(&t, &j)) == 0)
                        oldest = j.id;
                job_free(&j);
        }
        r = jobs_print_table(c, &t, r, perr);
        if (r == 0 && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(reply, "more")))
                printf("(more: add --before %" PRIu64 " for older jobs)\n", oldest);
        return r;
}

/* Set req[key] to a number or a string, replacing an earlier value (the last option wins). */
static void set_number(cJSON *req, const char *key, int64_t v) {
        cJSON_DeleteItemFromObject(req, key);
        cJSON_AddNumberToObject(req, key, (double)v);
}

static void set_string(cJSON *req, const char *key, const char *v) {
        cJSON_DeleteItemFromObject(req, key);
        cJSON_AddStringToObject(req, key, v);
}

/* Options into the request (--families into *families). Returns -1 to go on, or an exit status. */
static int parse_history(cli *c, int argc, char **argv, cJSON *req, bool *families) {
        enum { O_USER = CLI_OPT_OWN, O_GROUP, O_STATE, O_SINCE, O_UNTIL, O_LIMIT, O_BEFORE, O_FAMILIES };
        static const struct option own[] = {
                { "user", required_argument, NULL, O_USER },
                { "group", required_argument, NULL, O_GROUP },
                { "state", required_argument, NULL, O_STATE },
                { "since", required_argument, NULL, O_SINCE },
                { "until", required_argument, NULL, O_UNTIL },
                { "limit", required_argument, NULL, O_LIMIT },
                { "before", required_argument, NULL, O_BEFORE },
                { "families", no_argument, NULL, O_FAMILIES },
                { NULL, 0, NULL, 0 },
        };
        int64_t v;
        int o;
        set_number(req, "limit", 100);
        while ((o = cli_getopt(c, argc, argv, own)) > 0) {
                switch (o) {
                case O_USER:
                        if (jobs_parse_user(c, optarg, &v) != 0)
                                return EXIT_USAGE;
                        set_number(req, "user", v);
                        break;
                case O_GROUP: set_string(req, "group", optarg); break;
                case O_STATE: set_string(req, "state", optarg); break;
                case O_SINCE:
                case O_UNTIL:
                        if (parse_time(optarg, &v) < 0)
                                return cli_usage_error(c, "--%s: '%s' is not a time (see colony history --help)",
                                                       o == O_SINCE ? "since" : "until", optarg);
                        set_number(req, o == O_SINCE ? "since_usec" : "until_usec", v);
                        break;
                case O_LIMIT:
                        if (units_parse_uint(optarg, 10000, &v) < 0 || v == 0)
                                return cli_usage_error(c, "--limit: '%s' is not a number from 1 to 10000", optarg);
                        set_number(req, "limit", v);
                        break;
                case O_BEFORE:
                        if (units_parse_uint(optarg, INT64_MAX, &v) < 0 || v == 0)
                                return cli_usage_error(c, "--before: '%s' is not a job id", optarg);
                        set_number(req, "before_id", v);
                        break;
                case O_FAMILIES: *families = true; break;
                }
        }
        return cli_opts_end(c, o, argc, argv);
}

static int run_history(cli *c, int argc, char **argv) {
        cJSON *req = proto_new("history"), *reply = NULL;
        bool families = false;
        int r = req ? parse_history(c, argc, argv, req, &families) : EXIT_FAIL;
        if (r >= 0) {
                cJSON_Delete(req);
                return r;
        }
        if (!families)
                return client_print(c, req, "jobs", NULL, REQUEST_TIMEOUT_MS, print_history);
        r = client_fetch(c, req, "jobs", NULL, REQUEST_TIMEOUT_MS, &reply);
        if (r == 0)
                r = family_cli_list(c, reply);
        cJSON_Delete(reply);
        return r;
}

const cli_command cmd_history = { "history", "finished jobs, filtered by user, group, state and time", history_usage,
                                  false, run_history };
