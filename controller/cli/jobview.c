/* jobview.c - how the CLI shows jobs: colony queue's table and colony show's record. */
#include "cli.h"
#include "clock.h"
#include "arraycli.h"
#include "family_cli.h"
#include "client.h"
#include "format.h"
#include "jobs.h"
#include "nodesel.h"
#include "outcome.h"
#include "proto.h"
#include "units.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
        static const char *const headers[] = { "ID",  "NAME", "USER", "STATE", "NODE", "CPUS",
                                               "MEM", "GPUS", "TIME", "LIMIT", "LEFT", "REASON" };
        const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(reply, "jobs"), *item;
        char perr[PROTO_ERRLEN] = "";
        int64_t now = clock_real_usec();
        fmt_table t;
        int r = fmt_table_init(&t, 12, headers);

        if (!cJSON_IsArray(jobs))
                r = -EBADMSG;
        array_set set = { 0 };
        job prev = { 0 };
        /* an array's pending tasks that wait for one reason are one row, as in squeue: 12_[3-99%8] */
        cJSON_ArrayForEach(item, jobs) {
                job j = { 0 };
                if (r == 0 && (r = job_from_json(item, &j, perr)) == 0 && arraycli_folds(&prev, &j)) {
                        r = array_set_put(&set, j.array_index) == -ENOMEM ? -ENOMEM : 0;
                        job_free(&j);
                        continue;
                }
                if (r == 0 && (prev.id == 0 || (r = queue_add_row(&t, &prev, &set, now)) == 0)) {
                        array_set_free(&set);
                        job_free(&prev);
                        prev = j;
                        j = (job){ 0 };
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
        return jobs_print_table(c, &t, r, perr);
}

static int run_queue(cli *c, int argc, char **argv) {
        enum { OPT_ALL = CLI_OPT_OWN, OPT_USER, OPT_FAMILIES };
        static const struct option options[] = {
                { "all", no_argument, NULL, OPT_ALL },
                { "user", required_argument, NULL, OPT_USER },
                { "families", no_argument, NULL, OPT_FAMILIES },
                { 0 },
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
        if ((o = cli_opts_end(c, o, argc, argv)) >= 0)
                return o;
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

const cli_command cmd_queue = { "queue", "list pending and running jobs (--all: finished ones too)", queue_usage, false,
                                run_queue };

/* ---- show ---- */

static const char show_usage[] =
        "Usage: colony show [--json] [--script] JOB\n"
        "Show everything about a job: state, node, times, exit status, CPU time, peak memory,\n"
        "OOM kills, error, command line and output files; for a job that dependencies link to\n"
        "others, its family: each job and array of it with its jobs by state, and the family's\n"
        "flow time (from its first submit to its last end; so far, while live).\n\n"
        "  --script       print the batch script stored with the job instead, as submitted (its\n"
        "                 control characters escaped when the output is a terminal)\n";

static void field(const char *key, const char *value) { fmt_line(stdout, "%-13s%s", key, value ? value : "-"); }

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
        snprintf(buf, sizeof(buf), "%.2f s%s", (double)j->result.cpu_usec / 1e6,
                 j->state == JOB_RUNNING ? " so far" : "");
        field("cpu time:", known ? buf : NULL);
        if (j->state == JOB_RUNNING)
                field("memory now:",
                      known ? units_format_size((int64_t)j->result.mem_current, buf, sizeof(buf)) : NULL);
        field("peak memory:", known ? units_format_size((int64_t)j->result.mem_peak, buf, sizeof(buf)) : NULL);
        snprintf(buf, sizeof(buf), "%" PRIu64, j->result.oom_kills);
        field("oom kills:", known ? buf : NULL);
        if (j->result.psi.known) {
                char r[FMT_BUF], w[FMT_BUF], line[4 * FMT_BUF];
                snprintf(line, sizeof(line), "%s read, %s written",
                         units_format_size((int64_t)j->result.io_rbytes, r, sizeof(r)),
                         units_format_size((int64_t)j->result.io_wbytes, w, sizeof(w)));
                field("block i/o:", known ? line : NULL);
                snprintf(line, sizeof(line),
                         "cpu %.1f%%, memory %.1f%%, io %.1f%% (some, last 10 s); stalled %.2f s, "
                         "%.2f s, %.2f s in all",
                         j->result.psi.cpu.some_avg10, j->result.psi.memory.some_avg10, j->result.psi.io.some_avg10,
                         (double)j->result.psi.cpu.some_total_usec / 1e6,
                         (double)j->result.psi.memory.some_total_usec / 1e6,
                         (double)j->result.psi.io.some_total_usec / 1e6);
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
                snprintf(line, sizeof(line), "%u%s", j->attempt,
                         j->spec.requeue ? " (requeued if its node is lost)" : "");
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
        job j = { 0 };
        uint64_t id = 0;
        bool script = false;
        int o, r;
        enum { OPT_SCRIPT = CLI_OPT_OWN };
        static const struct option options[] = { { "script", no_argument, NULL, OPT_SCRIPT }, { 0 } };

        while ((o = cli_getopt(c, argc, argv, options)) > 0)
                script = true;
        if ((o = jobs_one_job(c, o, argc, argv, "colony show JOB", &id, sock)) >= 0)
                return o;
        r = client_simple(sock, "show", id, "job", REQUEST_TIMEOUT_MS, &reply, err, sizeof(err));
        if (r == 0 && c->json)
                fmt_json(reply);
        else if (r == 0 && (r = jobs_record_from_reply(reply, &j, err, sizeof(err))) == 0 && script)
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

const cli_command cmd_show = { "show", "show everything about a job", show_usage, false, run_show };
