/* wait.c - colony wait: until a job, or each task of an array, has ended; its exit status. */
#include "cli.h"
#include "clock.h"
#include "arraycli.h"
#include "format.h"
#include "jobs.h"
#include "outcome.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define EXIT_TIMEOUT 124 /* what timeout(1) exits with */

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
                 job_state_name(j->state),
                 j->start_usec && j->end_usec ? " after "
                 : j->state != JOB_LOST       ? ", never started"
                                              : "",
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
        bool stop = false; /* a wait that failed: a task's own exit code 1 is not one */

        if (c->json && !list) {
                cJSON_Delete(all);
                cli_error(c, "out of memory");
                return EXIT_FAIL;
        }
        for (uint64_t id = first; id <= last && !stop; id++) {
                int left = timeout_ms < 0 ? -1 : (int)((deadline - clock_real_usec()) / 1000);
                cJSON *reply = NULL;
                job j = { 0 };
                int r = jobs_wait(sock, id, left < 0 && timeout_ms >= 0 ? 0 : left, &j, &reply, err, sizeof(err));
                if (r == -ETIMEDOUT) {
                        cli_error(c, "array %" PRIu64 ": task %" PRIu64 " has not ended within %s s", first, id,
                                  timeout);
                        worst = EXIT_TIMEOUT;
                        stop = true;
                } else if (r < 0) {
                        cli_error(c, "%s", err);
                        worst = EXIT_FAIL;
                        stop = true;
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
        static const struct option options[] = { { "timeout", required_argument, NULL, OPT_TIMEOUT }, { 0 } };
        char sock[PATH_MAX], err[ERRLEN];
        const char *timeout = NULL;
        cJSON *reply = NULL;
        int o, r, timeout_ms = -1;
        job j = { 0 };
        uint64_t id = 0, last;

        while ((o = cli_getopt(c, argc, argv, options)) > 0) {
                timeout = optarg;
                if (parse_timeout(c, timeout, &timeout_ms) != 0)
                        return EXIT_USAGE;
        }
        if ((o = jobs_one_job(c, o, argc, argv, "colony wait JOB", &id, sock)) >= 0)
                return o;
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

const cli_command cmd_wait = { "wait", "wait for a job to end; the exit status mirrors the job's", wait_usage, false,
                               run_wait };
