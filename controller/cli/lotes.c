/* lotes.c - colony lotes: LoTES's offline stages (policies/lotes.h) on a workload, with what
 * each stage found and how long it took. The same plan drives `colony sim --policy lotes`. */
#include "cli.h"
#include "format.h"
#include "lotes.h"
#include "units.h"
#include "workload.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char lotes_usage[] =
        "Usage: colony lotes --workload W [--scale S] [--seed N] [--json]\n"
        "Solve LoTES's offline stages on a workload's machines and job classes, and print them:\n"
        "stage 1, the allocation LP (lambda*, delta_jk); stage 2, the non-dominated bins of each\n"
        "configuration and the machine-assignment LP with its rounding (lambda*, the bins used\n"
        "and how many machines emulate each); and the CPU time each stage took.\n\n"
        "  --workload W    mishra, lotes-google, lotes-phi:PHI or lotes-omega:OMEGA\n"
        "  --scale S       machines in the largest configuration, as for colony sim (default 100)\n"
        "  --seed N        the instance of a generated workload (default 1)\n";

/* CPU time of this process: steady on a shared host, and what the paper reports ("about 1
 * minute of CPU time"). */
static double now_seconds(void) {
        struct timespec ts;
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int cli_lotes_solve(const lotes_problem *p, lotes_alloc *a, lotes_plan *plan, double seconds[2], char *err,
                    size_t errlen) {
        double t0 = now_seconds();
        int r = lotes_allocate(p, a, err, errlen);
        double t1 = now_seconds();
        if (r < 0)
                return r;
        if ((r = lotes_assign(p, a, plan, err, errlen)) < 0) {
                lotes_alloc_free(a);
                return r;
        }
        seconds[0] = t1 - t0;
        seconds[1] = now_seconds() - t1;
        return 0;
}

/* The bins configuration j uses (machines > 0), each with its count, LP value and jobs by class. */
static cJSON *config_json(const lotes_problem *p, const lotes_alloc *a, const lotes_plan *plan, size_t j) {
        cJSON *o = cJSON_CreateObject(), *classes, *used;
        cJSON_AddNumberToObject(o, "machines", (double)p->configs[j].count);
        cJSON_AddNumberToObject(o, "mcpu", (double)p->configs[j].capacity.mcpu);
        cJSON_AddNumberToObject(o, "mem", (double)p->configs[j].capacity.mem);
        classes = cJSON_AddArrayToObject(o, "classes");
        for (size_t k = 0; k < p->nclasses; k++)
                if (lotes_alloc_uses(p, a, j, k))
                        cJSON_AddItemToArray(classes, cJSON_CreateString(p->classes[k].name));
        cJSON_AddNumberToObject(o, "bins", (double)plan->bins[j].n);
        used = cJSON_AddArrayToObject(o, "used");
        for (size_t i = 0; i < plan->bins[j].n; i++) {
                size_t at = plan->first[j] + i;
                if (plan->machines[at] == 0)
                        continue;
                cJSON *b = cJSON_CreateObject(), *jobs = cJSON_CreateObject();
                cJSON_AddNumberToObject(b, "machines", plan->machines[at]);
                cJSON_AddNumberToObject(b, "x", plan->x[at]);
                for (size_t k = 0; k < p->nclasses; k++)
                        if (plan->bins[j].count[i * p->nclasses + k])
                                cJSON_AddNumberToObject(jobs, p->classes[k].name,
                                                        plan->bins[j].count[i * p->nclasses + k]);
                cJSON_AddItemToObject(b, "jobs", jobs);
                cJSON_AddItemToArray(used, b);
        }
        return o;
}

static cJSON *plan_json(const char *workload, size_t scale, const lotes_problem *p, const lotes_alloc *a,
                        const lotes_plan *plan, const double seconds[2]) {
        cJSON *doc = cJSON_CreateObject(), *s1 = cJSON_CreateObject(), *s2 = cJSON_CreateObject(), *delta, *configs;
        cJSON_AddStringToObject(doc, "workload", workload);
        cJSON_AddNumberToObject(doc, "scale", (double)scale);
        cJSON_AddNumberToObject(s1, "lambda", a->lambda);
        cJSON_AddNumberToObject(s1, "seconds", seconds[0]);
        delta = cJSON_AddArrayToObject(s1, "delta"); /* [j][k] = [cores, memory] */
        for (size_t j = 0; j < p->nconfigs; j++) {
                cJSON *row = cJSON_CreateArray();
                for (size_t k = 0; k < p->nclasses; k++) {
                        const double *d = &a->delta[(j * p->nclasses + k) * LOTES_NRES];
                        cJSON_AddItemToArray(row, cJSON_CreateDoubleArray(d, LOTES_NRES));
                }
                cJSON_AddItemToArray(delta, row);
        }
        cJSON_AddItemToObject(doc, "stage1", s1);
        cJSON_AddNumberToObject(s2, "lambda_lp", plan->lambda_lp);
        cJSON_AddNumberToObject(s2, "lambda", plan->lambda);
        cJSON_AddNumberToObject(s2, "seconds", seconds[1]);
        configs = cJSON_AddArrayToObject(s2, "configs");
        for (size_t j = 0; j < p->nconfigs; j++)
                cJSON_AddItemToArray(configs, config_json(p, a, plan, j));
        cJSON_AddItemToObject(doc, "stage2", s2);
        return doc;
}

static void print_config(const lotes_problem *p, const cJSON *o, size_t j) {
        char cpus[32], mem[32];
        const cJSON *name, *b;
        printf("  configuration %zu: %d x (%s CPUs, %s), classes", j + 1, cJSON_GetObjectItem(o, "machines")->valueint,
               units_format_cpus(p->configs[j].capacity.mcpu, cpus, sizeof(cpus)),
               units_format_size(p->configs[j].capacity.mem, mem, sizeof(mem)));
        cJSON_ArrayForEach(name, cJSON_GetObjectItem(o, "classes")) printf(" %s", name->valuestring);
        printf("; %d non-dominated bins\n", cJSON_GetObjectItem(o, "bins")->valueint);
        cJSON_ArrayForEach(b, cJSON_GetObjectItem(o, "used")) {
                const cJSON *c;
                printf("    %6d machines (x = %.3f):", cJSON_GetObjectItem(b, "machines")->valueint,
                       cJSON_GetObjectItem(b, "x")->valuedouble);
                cJSON_ArrayForEach(c, cJSON_GetObjectItem(b, "jobs")) printf(" %d x %s", c->valueint, c->string);
                putchar('\n');
        }
}

static void print_plan(const lotes_problem *p, const lotes_alloc *a, const cJSON *doc) {
        const cJSON *s1 = cJSON_GetObjectItem(doc, "stage1"), *s2 = cJSON_GetObjectItem(doc, "stage2"), *o;
        printf("%s, scale %d: %zu configurations, %zu classes\n", cJSON_GetObjectItem(doc, "workload")->valuestring,
               cJSON_GetObjectItem(doc, "scale")->valueint, p->nconfigs, p->nclasses);
        printf("stage 1, allocation LP: lambda* = %.6g jobs/s (%.3f s of CPU)\n  delta_jk (share of each "
               "configuration's "
               "cores; memory in the same ratio):\n",
               a->lambda, cJSON_GetObjectItem(s1, "seconds")->valuedouble);
        for (size_t j = 0; j < p->nconfigs; j++) {
                printf("    %2zu:", j + 1);
                for (size_t k = 0; k < p->nclasses; k++)
                        printf(" %s %.4f", p->classes[k].name, a->delta[(j * p->nclasses + k) * LOTES_NRES]);
                putchar('\n');
        }
        printf("stage 2, machine assignment: lambda* = %.6g jobs/s, %.6g after rounding (%.3f s of CPU)\n",
               cJSON_GetObjectItem(s2, "lambda_lp")->valuedouble, cJSON_GetObjectItem(s2, "lambda")->valuedouble,
               cJSON_GetObjectItem(s2, "seconds")->valuedouble);
        size_t j = 0;
        cJSON_ArrayForEach(o, cJSON_GetObjectItem(s2, "configs")) print_config(p, o, j++);
}

static int run_lotes(cli *c, int argc, char **argv) {
        enum { O_WORKLOAD = CLI_OPT_OWN, O_SCALE, O_SEED };
        static const struct option own[] = {
                { "workload", required_argument, NULL, O_WORKLOAD },
                { "scale", required_argument, NULL, O_SCALE },
                { "seed", required_argument, NULL, O_SEED },
                { NULL, 0, NULL, 0 },
        };
        const char *name = NULL;
        int64_t scale = 100, seed = 1;
        int o;
        while ((o = cli_getopt(c, argc, argv, own)) > 0) {
                if (o == O_WORKLOAD)
                        name = optarg;
                else if ((o == O_SCALE ? units_parse_uint(optarg, 1000000, &scale) < 0 || scale == 0
                                       : units_parse_uint(optarg, INT64_MAX, &seed) < 0))
                        return cli_usage_error(c, "--%s: '%s' is not valid", o == O_SCALE ? "scale" : "seed", optarg);
        }
        if ((o = cli_opts_end(c, o, argc, argv)) >= 0)
                return o;
        wl_generated gen;
        const wl_spec *w = name ? wl_find(name, (uint64_t)seed, &gen) : NULL;
        if (!w)
                return cli_usage_error(c, "--workload: one of %s", wl_names());
        wl_lotes in;
        lotes_alloc a;
        lotes_plan plan;
        double seconds[2];
        char err[256];
        wl_lotes_problem(w, (size_t)scale, &in);
        if (cli_lotes_solve(&in.problem, &a, &plan, seconds, err, sizeof(err)) < 0) {
                cli_error(c, "%s", err);
                return EXIT_FAIL;
        }
        cJSON *doc = plan_json(name, (size_t)scale, &in.problem, &a, &plan, seconds);
        int status = 0;
        if (c->json)
                status = fmt_json(doc);
        else
                print_plan(&in.problem, &a, doc);
        cJSON_Delete(doc);
        lotes_plan_free(&plan);
        lotes_alloc_free(&a);
        return status;
}

/* colony lists it with its summary (colony.c) and colony-offline runs it. */
const cli_command cmd_lotes = { .name = "lotes", .usage = lotes_usage, .run = run_lotes };
