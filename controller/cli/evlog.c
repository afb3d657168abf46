/* evlog.c - colony events: the controller's event log, and with --follow its new events as they
 * happen (docs/protocol.md, "events"). */
#include "cli.h"
#include "client.h"
#include "events.h"
#include "format.h"
#include "jobs.h"
#include "units.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

static const char events_usage[] =
        "Usage: colony events [--follow] [--job ID] [--since SEQ] [--limit N] [--json]\n"
        "The controller's event log: every job's submission, placement, start, end (completed,\n"
        "failed, cancelled, oom-killed, lost, timeout) and requeue, and every node's up, not-responding,\n"
        "down and disconnected, each with its number (SEQ), time, job, node and reason.\n\n"
        "  --follow     after the log, print new events as they happen, until interrupted\n"
        "  --job ID     only job ID's events\n"
        "  --since SEQ  the events after number SEQ (default: the last N)\n"
        "  --limit N    at most N events per reply (default 100, at most 1000); with --since,\n"
        "               the listing goes on page by page\n"
        "  --json       one JSON object per event and line\n\n"
        "A follower that does not keep up is dropped by the controller with a message saying\n"
        "which --since resumes it.\n";

static void print_header(void) {
        printf("%-7s %-25s %-6s %-14s %-19s %s\n", "SEQ", "TIME", "JOB", "NODE", "WHAT", "REASON");
}

/* One event, as a line of the table or of JSON. Returns 0 or -EBADMSG. */
static int print_event(const cli *c, const cJSON *obj) {
        char perr[PROTO_ERRLEN], when[64], job[24];
        ev_record e;

        if (ev_from_json(obj, &e, perr) < 0) {
                cli_error(c, "bad event from the controller: %s", perr);
                return -EBADMSG;
        }
        if (c->json) {
                char *text = proto_print(obj);
                printf("%s\n", text ? text : "{}");
                cJSON_free(text);
        } else {
                snprintf(job, sizeof(job), e.job ? "%" PRIu64 : "-", e.job);
                fmt_line(stdout, "%-7" PRIu64 " %-25s %-6s %-14s %-19s %s", e.seq,
                         fmt_time(e.time_usec, when, sizeof(when)), job, e.node[0] ? e.node : "-", e.what,
                         e.reason[0] ? e.reason : "");
        }
        return fflush(stdout) == 0 ? 0 : -EIO; /* a follower's reader sees each event at once */
}

/* Print the events of an "events" page or an "event" message; *more says whether the page
 * said more follow, *last the last seq printed. Returns 0 or -errno. */
static int print_message(const cli *c, const cJSON *msg, bool *more, uint64_t *last) {
        const char *type = proto_type(msg);
        const cJSON *one = NULL, *list = NULL, *item, *seq;
        int r = 0;

        if (strcmp(type, "event") == 0)
                one = cJSON_GetObjectItemCaseSensitive(msg, "event");
        else if (strcmp(type, "events") == 0)
                list = cJSON_GetObjectItemCaseSensitive(msg, "events");
        if (!one && !cJSON_IsArray(list)) {
                cli_error(c, "unexpected '%s' message from the controller", type);
                return -EBADMSG;
        }
        *more = list && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(msg, "more"));
        if (one)
                r = print_event(c, one);
        cJSON_ArrayForEach(item, list) {
                if (r == 0)
                        r = print_event(c, item);
        }
        seq = cJSON_GetObjectItemCaseSensitive(one ? one : cJSON_GetArrayItem(list, cJSON_GetArraySize(list) - 1),
                                               "seq");
        if (cJSON_IsNumber(seq))
                *last = (uint64_t)seq->valuedouble;
        return r;
}

/* Options into req. Returns -1 to go on, or an exit status. */
static int parse_events(cli *c, int argc, char **argv, cJSON *req, bool *follow) {
        enum { O_FOLLOW = CLI_OPT_OWN, O_JOB, O_SINCE, O_LIMIT };
        static const struct option own[] = {
                { "follow", no_argument, NULL, O_FOLLOW },
                { "job", required_argument, NULL, O_JOB },
                { "since", required_argument, NULL, O_SINCE },
                { "limit", required_argument, NULL, O_LIMIT },
                { NULL, 0, NULL, 0 },
        };
        int64_t v;
        int o;

        while ((o = cli_getopt(c, argc, argv, own)) > 0) {
                const char *key = o == O_JOB ? "job" : o == O_SINCE ? "since" : "limit";
                if (o == O_FOLLOW) {
                        *follow = true;
                        continue;
                }
                if (units_parse_uint(optarg, o == O_LIMIT ? 1000 : INT64_MAX, &v) < 0 || (v == 0 && o != O_SINCE))
                        return cli_usage_error(c, "--%s: '%s' is not %s", key, optarg,
                                               o == O_JOB     ? "a job id"
                                               : o == O_SINCE ? "an event number"
                                                              : "a number from 1 to 1000");
                cJSON_DeleteItemFromObject(req, key);
                cJSON_AddNumberToObject(req, key, (double)v);
        }
        if ((o = cli_opts_end(c, o, argc, argv)) >= 0)
                return o;
        if (*follow)
                cJSON_AddBoolToObject(req, "follow", true);
        return -1;
}

static int run_events(cli *c, int argc, char **argv) {
        char sock[PATH_MAX], err[ERRLEN];
        cJSON *req = proto_new("events"), *msg = NULL;
        bool follow = false, more = true;
        uint64_t last = 0;
        int r = req ? parse_events(c, argc, argv, req, &follow) : EXIT_FAIL;
        int fd;

        if (r < 0 && jobs_socket_for(c, sock) < 0)
                r = EXIT_FAIL;
        if (r >= 0) {
                cJSON_Delete(req);
                return r;
        }
        fd = client_start(sock, req, err, sizeof(err));
        if (fd < 0) {
                cli_error(c, "%s", err);
                cJSON_Delete(req);
                return EXIT_FAIL;
        }
        if (follow)
                cli_catch_signals(); /* an interrupt ends the listing with status 0 */
        if (!c->json)
                print_header();
        r = 0;
        while (r == 0 && (more || follow) && !cli_interrupted) {
                r = client_next(fd, sock, NULL, follow ? -1 : REQUEST_TIMEOUT_MS, &msg, err, sizeof(err));
                if (r == 0)
                        r = print_message(c, msg, &more, &last);
                else if (r != -EINTR)
                        cli_error(c, "%s", err);
                cJSON_Delete(msg);
                msg = NULL;
                if (r == 0 && more && !follow) { /* the next page */
                        close(fd);
                        cJSON_DeleteItemFromObject(req, "since");
                        cJSON_AddNumberToObject(req, "since", (double)last);
                        if ((fd = client_start(sock, req, err, sizeof(err))) < 0) {
                                cli_error(c, "%s", err);
                                r = fd;
                        }
                }
        }
        if (fd >= 0)
                close(fd);
        cJSON_Delete(req);
        return r == 0 || (r == -EINTR && cli_interrupted) ? 0 : EXIT_FAIL;
}

const cli_command cmd_events = { "events",
                                 "the event log: every job's and node's transitions (--follow: as they happen)",
                                 events_usage, false, run_events };
