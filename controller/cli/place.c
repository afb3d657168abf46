/* place.c - colony place: one matching cycle of a placement policy on a given cluster state,
 * computed here with the same policies/ code the controller runs. Schemas: docs/policies.md. */
#include "cli.h"
#include "format.h"
#include "instance.h"
#include "sched.h"
#include "units.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char place_usage[] =
        "Usage: colony place --policy P --machines M.json --jobs J.json [--order fifo|backfill|reserve] [--json]\n"
        "Run one matching cycle of a placement policy on the machines and queued jobs given, and\n"
        "print which job goes where. Nothing is sent to a controller.\n\n"
        "  --policy P      first-fit, best-fit-cores, best-fit-mem, worst-fit-cores, worst-fit-mem,\n"
        "                  mix-fit, max-jobs, or tetris, greedy (each job an arrival; --order ignored)\n"
        "  --machines F    {\"machines\": [{\"name\": \"A\", \"cpus\": 4, \"mem\": \"32G\",\n"
        "                                 \"free_cpus\": 3, \"free_mem\": \"8G\"}, ...]}  (free_*: optional)\n"
        "  --jobs F        {\"jobs\": [{\"name\": \"big\", \"cpus\": 1, \"mem\": \"16G\", \"count\": 2}, ...]}\n"
        "                  in queue order; count repeats an entry (default 1); ids are 1, 2, ...\n"
        "  --order O       backfill (default: a job that fits nowhere is skipped), fifo (stop there) or\n"
        "                  reserve (NetBatch: it reserves the machine with most free memory this cycle)\n"
        "CPUs are cores (a number, or \"500m\"); memory is bytes (a number) or a size (\"512M\").\n"
        "A machine's \"gpus\" (whole devices) and a job's \"gpus\" add GPUs; the output then shows them.\n";

typedef struct instance {
        inst_machines m;
        sched_job *jobs;
        size_t njobs;
} instance;

static void instance_free(instance *in) {
        inst_machines_free(&in->m);
        free(in->jobs);
}

/* Whether any machine or job of in has GPUs: only then does the output speak of them. */
static bool has_gpus(const instance *in) {
        for (size_t m = 0; m < in->m.n; m++)
                if (in->m.machines[m].capacity.gpus > 0)
                        return true;
        for (size_t j = 0; j < in->njobs; j++)
                if (in->jobs[j].req.gpus > 0)
                        return true;
        return false;
}

static cJSON *result_json(const instance *in, const char *policy, const char *order, const sched_assignment *out,
                          size_t placed) {
        cJSON *doc = cJSON_CreateObject(), *assign, *unplaced, *machines;
        cJSON_AddStringToObject(doc, "policy", policy);
        cJSON_AddStringToObject(doc, "order", order);
        cJSON_AddNumberToObject(doc, "placed", (double)placed);
        cJSON_AddNumberToObject(doc, "jobs", (double)in->njobs);
        assign = cJSON_AddArrayToObject(doc, "assignments");
        unplaced = cJSON_AddArrayToObject(doc, "unplaced");
        machines = cJSON_AddArrayToObject(doc, "machines");
        bool *done = calloc(in->njobs + 1, sizeof(*done));
        for (size_t a = 0; assign && done && a < placed; a++) {
                cJSON *o = cJSON_CreateObject();
                cJSON_AddNumberToObject(o, "job", (double)out[a].job_id);
                cJSON_AddStringToObject(o, "machine", in->m.names[out[a].machine]);
                cJSON_AddItemToArray(assign, o);
                done[out[a].job_id - 1] = true;
        }
        for (size_t j = 0; unplaced && done && j < in->njobs; j++)
                if (!done[j])
                        cJSON_AddItemToArray(unplaced, cJSON_CreateNumber((double)in->jobs[j].id));
        for (size_t m = 0; machines && m < in->m.n; m++) {
                cJSON *o = cJSON_CreateObject();
                cJSON_AddStringToObject(o, "name", in->m.names[m]);
                cJSON_AddNumberToObject(o, "free_mcpu", (double)in->m.machines[m].free.mcpu);
                cJSON_AddNumberToObject(o, "free_mem", (double)in->m.machines[m].free.mem);
                if (has_gpus(in))
                        cJSON_AddNumberToObject(o, "free_gpus", (double)in->m.machines[m].free.gpus);
                cJSON_AddItemToArray(machines, o);
        }
        free(done);
        return doc;
}

/* "job 3 (1 CPUs, 16G" and ", 2 GPUs" when it asks any, into buf. */
static void job_text(const sched_job *j, char *buf, size_t len) {
        char cpus[32], mem[32];
        int n = snprintf(buf, len, "job %llu (%s CPUs, %s", (unsigned long long)j->id,
                         units_format_cpus(j->req.mcpu, cpus, sizeof(cpus)),
                         units_format_size(j->req.mem, mem, sizeof(mem)));
        if (j->req.gpus > 0 && n > 0 && (size_t)n < len)
                snprintf(buf + n, len - (size_t)n, ", %lld GPUs", (long long)j->req.gpus);
}

static void print_result(const instance *in, const cJSON *doc) {
        const cJSON *a, *u, *m;
        char cpus[32], mem[32], job[128];
        printf("%s, %s order: placed %d of %zu jobs on %zu machines\n", cJSON_GetObjectItem(doc, "policy")->valuestring,
               cJSON_GetObjectItem(doc, "order")->valuestring, cJSON_GetObjectItem(doc, "placed")->valueint, in->njobs,
               in->m.n);
        cJSON_ArrayForEach(a, cJSON_GetObjectItem(doc, "assignments")) {
                job_text(&in->jobs[(size_t)cJSON_GetObjectItem(a, "job")->valuedouble - 1], job, sizeof(job));
                printf("  %s) -> %s\n", job, cJSON_GetObjectItem(a, "machine")->valuestring);
        }
        cJSON_ArrayForEach(u, cJSON_GetObjectItem(doc, "unplaced")) {
                job_text(&in->jobs[(size_t)u->valuedouble - 1], job, sizeof(job));
                printf("  %s) -> not placed\n", job);
        }
        cJSON_ArrayForEach(m, cJSON_GetObjectItem(doc, "machines")) {
                const cJSON *gpus = cJSON_GetObjectItem(m, "free_gpus");
                printf("  machine %s: %s CPUs%s %s", cJSON_GetObjectItem(m, "name")->valuestring,
                       units_format_cpus((int64_t)cJSON_GetObjectItem(m, "free_mcpu")->valuedouble, cpus, sizeof(cpus)),
                       gpus ? "," : " and",
                       units_format_size((int64_t)cJSON_GetObjectItem(m, "free_mem")->valuedouble, mem, sizeof(mem)));
                if (gpus)
                        printf(" and %d GPUs", gpus->valueint);
                printf(" free\n");
        }
}

/* The jobs of the jobs file placed on the machines of the machines file by policy's heuristic h
 * in order, or its dispatcher d (NULL: none), and the result printed. Returns an exit status. */
static int place_files(const cli *c, const char *policy, sched_heuristic h, sched_dispatcher *d, sched_order order,
                       const char *machines, const char *jobs) {
        instance in = { 0 };
        char err[ERRLEN];
        int status = EXIT_FAIL;
        sched_assignment *out = NULL;
        if (inst_load_machines(machines, &in.m, err, sizeof(err)) < 0 ||
            inst_load_jobs(jobs, &in.jobs, &in.njobs, err, sizeof(err)) < 0) {
                cli_error(c, "%s", err);
                goto done;
        }
        /* a dispatcher sees every job as an arrival: its queues start empty */
        long placed = !(out = calloc(in.njobs + 1, sizeof(*out))) ? -ENOMEM
                      : d ? sched_dispatch(d, in.m.machines, in.m.n, in.jobs, in.njobs, out)
                          : sched_place(h, in.m.machines, in.m.n, in.jobs, in.njobs, order, out);
        if (placed < 0) {
                cli_error(c, "%s", strerror((int)-placed));
                goto done;
        }
        cJSON *doc = result_json(&in, policy, d ? "own" : sched_order_name(order), out, (size_t)placed);
        if (c->json)
                status = fmt_json(doc);
        else {
                print_result(&in, doc);
                status = 0;
        }
        cJSON_Delete(doc);
done:
        free(out);
        instance_free(&in);
        return status;
}

static int run_place(cli *c, int argc, char **argv) {
        enum { OPT_POLICY = CLI_OPT_OWN, OPT_MACHINES, OPT_JOBS, OPT_ORDER };
        static const struct option own[] = {
                { "policy", required_argument, NULL, OPT_POLICY },
                { "machines", required_argument, NULL, OPT_MACHINES },
                { "jobs", required_argument, NULL, OPT_JOBS },
                { "order", required_argument, NULL, OPT_ORDER },
                { NULL, 0, NULL, 0 },
        };
        const char *policy = NULL, *machines = NULL, *jobs = NULL, *order_name = "backfill";
        int o;
        while ((o = cli_getopt(c, argc, argv, own)) > 0) {
                if (o == OPT_POLICY)
                        policy = optarg;
                else if (o == OPT_MACHINES)
                        machines = optarg;
                else if (o == OPT_JOBS)
                        jobs = optarg;
                else
                        order_name = optarg;
        }
        if ((o = cli_opts_end(c, o, argc, argv)) >= 0)
                return o;
        if (!policy || !machines || !jobs)
                return cli_usage_error(c, "--policy, --machines and --jobs are required");
        sched_heuristic h;
        sched_dispatcher *d;
        int r = sched_policy_new(policy, /* seed= */ 1, &h, &d);
        if (r == -EINVAL)
                return cli_usage_error(c, "--policy: unknown policy '%s'", policy);
        if (r < 0) {
                cli_error(c, "%s", strerror(-r));
                return EXIT_FAIL;
        }
        sched_order order;
        if (sched_order_from_name(order_name, &order) < 0) {
                sched_dispatcher_free(d);
                return cli_usage_error(c, "--order: fifo, backfill or reserve, not '%s'", order_name);
        }
        int status = place_files(c, policy, h, d, order, machines, jobs);
        sched_dispatcher_free(d);
        return status;
}

/* colony lists it with its summary (colony.c) and colony-offline runs it. */
const cli_command cmd_place = { .name = "place", .usage = place_usage, .run = run_place };
