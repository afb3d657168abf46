/* coloc_cli.c - colony coloc: run one of the colocation algorithms (policies/coloc.h) on an
 * instance file and print the assignment, its largest cost, the lower bound and the normalized
 * cost; or regenerate the paper's experiment (coloc_experiment.c). Schema: docs/policies.md. */
#include "coloc_cli.h"
#include "format.h"
#include "instance.h"
#include "proto.h"
#include <cjson/cJSON.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char coloc_usage[] =
        "Usage: colony coloc --algo A --instance I.json [--json]\n"
        "       colony coloc --experiment small|large [--seed N] [--instances K] [--json]\n"
        "Place jobs with types on identical machines so that the largest colocation cost is\n"
        "smallest (Pascual & Rzadca), and compare it with a lower bound. Nothing is sent to a\n"
        "controller.\n\n"
        "  --algo A        fill-greedy, sched-mixed, sched-juxtapose, best-schedule,\n"
        "                  greedy-dedicated (best inside), greedy-dedicated-mixed,\n"
        "                  greedy-dedicated-juxtapose, greedy-for-2-types, fill-rebalance\n"
        "                  (or the paper's labels: fill, mix, jux, best, d-best, d-mix, d-jux, g2, fill-r)\n"
        "  --instance F    {\"types\": [\"mem\", \"cpu\"], \"alpha\": [[1, 0.4], [0.7, 1]], \"machines\": 3,\n"
        "                   \"jobs\": [{\"type\": \"cpu\", \"load\": 12, \"count\": 2}, ...]}\n"
        "                  alpha[a][b]: how much a unit of type a's load slows a job of type b;\n"
        "                  count repeats an entry (default 1); jobs are numbered 1, 2, ...\n"
        "  --experiment S  the paper's experiment (Sec. 7) on its small or large instances\n"
        "  --seed N        the experiment's random seed (default 1)\n"
        "  --instances K   instances per combination of regime, types, jobs and machines (default 30)\n";

#define COLOC_MAX_MACHINES 100000

typedef struct coloc_file {
        char **names; /* type names */
        double *alpha;
        uint32_t *type;
        double *load;
        coloc_instance in;
} coloc_file;

static void coloc_file_free(coloc_file *f) {
        for (size_t t = 0; f->names && t < f->in.ntypes; t++)
                free(f->names[t]);
        free(f->names);
        free(f->alpha);
        free(f->type);
        free(f->load);
}

/* A JSON number >= 0. */
static bool nonnegative(const cJSON *v) { return cJSON_IsNumber(v) && isfinite(v->valuedouble) && v->valuedouble >= 0; }

static int read_types(const cJSON *doc, coloc_file *f, char *err, size_t errlen) {
        const cJSON *types = cJSON_GetObjectItemCaseSensitive(doc, "types"), *t;
        size_t n = cJSON_IsArray(types) ? (size_t)cJSON_GetArraySize(types) : 0;
        if (n == 0 || n > COLOC_BOUND_MAX_TYPES) {
                snprintf(err, errlen, "needs \"types\": an array of 1 to %d type names", COLOC_BOUND_MAX_TYPES);
                return -EINVAL;
        }
        if (!(f->names = calloc(n, sizeof(*f->names))))
                return -ENOMEM;
        cJSON_ArrayForEach(t, types) {
                size_t i = f->in.ntypes;
                if (!cJSON_IsString(t) || !*t->valuestring) {
                        snprintf(err, errlen, "types: item %zu is not a name", i + 1);
                        return -EINVAL;
                }
                for (size_t k = 0; k < i; k++)
                        if (strcmp(f->names[k], t->valuestring) == 0) {
                                snprintf(err, errlen, "types: '%s' twice", t->valuestring);
                                return -EINVAL;
                        }
                if (!(f->names[i] = strdup(t->valuestring)))
                        return -ENOMEM;
                f->in.ntypes++;
        }
        return 0;
}

/* alpha: T rows of T numbers >= 0. */
static int read_alpha(const cJSON *doc, coloc_file *f, char *err, size_t errlen) {
        const cJSON *alpha = cJSON_GetObjectItemCaseSensitive(doc, "alpha"), *row;
        size_t T = f->in.ntypes, a = 0;
        if (!cJSON_IsArray(alpha) || (size_t)cJSON_GetArraySize(alpha) != T) {
                snprintf(err, errlen, "needs \"alpha\": %zu rows of %zu numbers, one per type", T, T);
                return -EINVAL;
        }
        if (!(f->alpha = calloc(T * T, sizeof(*f->alpha))))
                return -ENOMEM;
        cJSON_ArrayForEach(row, alpha) {
                const cJSON *v;
                size_t b = 0;
                if (!cJSON_IsArray(row) || (size_t)cJSON_GetArraySize(row) != T) {
                        snprintf(err, errlen, "alpha: row %zu does not have %zu numbers (the matrix is %zu x %zu)",
                                 a + 1, T, T, T);
                        return -EINVAL;
                }
                cJSON_ArrayForEach(v, row) {
                        if (!nonnegative(v)) {
                                snprintf(err, errlen, "alpha[%zu][%zu]: not a number >= 0", a, b);
                                return -EINVAL;
                        }
                        f->alpha[a * T + b++] = v->valuedouble;
                }
                a++;
        }
        return 0;
}

/* One jobs entry: its type (by name), load and count. */
static int read_job(const cJSON *o, const coloc_file *f, uint32_t *type, double *load, int64_t *count, char *what,
                    size_t len) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(o, "type"), *p = cJSON_GetObjectItemCaseSensitive(o, "load");
        char perr[PROTO_ERRLEN];
        *type = UINT32_MAX;
        for (size_t k = 0; cJSON_IsString(t) && k < f->in.ntypes; k++)
                if (strcmp(f->names[k], t->valuestring) == 0)
                        *type = (uint32_t)k;
        if (*type == UINT32_MAX) {
                snprintf(what, len, "type: not one of \"types\"");
                return -EINVAL;
        }
        if (!nonnegative(p)) {
                snprintf(what, len, "load: not a number >= 0");
                return -EINVAL;
        }
        *load = p->valuedouble;
        *count = 1;
        if (proto_get_int(o, "count", 1, INST_MAX_ITEMS, count, perr) == -EINVAL) {
                snprintf(what, len, "count: a whole number from 1 to %d", INST_MAX_ITEMS);
                return -EINVAL;
        }
        return 0;
}

/* Two passes: check every entry and count the jobs, then fill the arrays. */
static int read_jobs(const cJSON *jobs, coloc_file *f, char *err, size_t errlen) {
        const cJSON *o;
        size_t entry = 0, n = 0;
        uint32_t type;
        double load;
        int64_t count;
        cJSON_ArrayForEach(o, jobs) {
                char what[256];
                entry++;
                if (read_job(o, f, &type, &load, &count, what, sizeof(what)) < 0) {
                        snprintf(err, errlen, "job entry %zu: %s", entry, what);
                        return -EINVAL;
                }
                if ((n += (size_t)count) > INST_MAX_ITEMS) {
                        snprintf(err, errlen, "more than %d jobs in all", INST_MAX_ITEMS);
                        return -EINVAL;
                }
        }
        f->type = malloc((n + 1) * sizeof(*f->type));
        f->load = malloc((n + 1) * sizeof(*f->load));
        if (!f->type || !f->load)
                return -ENOMEM;
        cJSON_ArrayForEach(o, jobs) {
                char what[256];
                (void)read_job(o, f, &type, &load, &count, what, sizeof(what)); /* checked above */
                for (int64_t k = 0; k < count; k++, f->in.njobs++) {
                        f->type[f->in.njobs] = type;
                        f->load[f->in.njobs] = load;
                }
        }
        return 0;
}

static int read_instance(const cJSON *doc, const cJSON *jobs, coloc_file *f, char *err, size_t errlen) {
        char perr[PROTO_ERRLEN];
        int64_t m;
        int r = read_types(doc, f, err, errlen);
        if (r == 0)
                r = read_alpha(doc, f, err, errlen);
        if (r == 0 && proto_get_int(doc, "machines", 1, COLOC_MAX_MACHINES, &m, perr) < 0) {
                snprintf(err, errlen, "needs \"machines\": a whole number from 1 to %d", COLOC_MAX_MACHINES);
                r = -EINVAL;
        }
        if (r == 0)
                r = read_jobs(jobs, f, err, errlen);
        if (r == 0) {
                f->in.nmachines = (size_t)m;
                f->in.alpha = f->alpha;
                f->in.type = f->type;
                f->in.load = f->load;
                r = coloc_check(&f->in, err, errlen);
        }
        if (r == -ENOMEM)
                snprintf(err, errlen, "out of memory");
        return r;
}

/* Load path into f. Returns 0, or -errno with "path: reason" in err. */
static int load_instance(const char *path, coloc_file *f, char *err, size_t errlen) {
        cJSON *doc = NULL;
        char why[512];
        const cJSON *jobs = inst_load_array(path, "jobs", &doc, err, errlen);
        int r = jobs ? read_instance(doc, jobs, f, why, sizeof(why)) : -EINVAL;
        if (jobs && r < 0)
                snprintf(err, errlen, "%s: %s", path, why);
        cJSON_Delete(doc);
        return r;
}

typedef struct coloc_result {
        coloc_algo algo;
        uint32_t *machine_of;
        double *machine_cost, max_cost;
        coloc_bound bound;
} coloc_result;

static cJSON *result_json(const coloc_file *f, const coloc_result *res) {
        cJSON *doc = cJSON_CreateObject(), *assign, *costs, *bound;
        cJSON_AddStringToObject(doc, "algo", coloc_algo_name(res->algo));
        cJSON_AddNumberToObject(doc, "jobs", (double)f->in.njobs);
        cJSON_AddNumberToObject(doc, "machines", (double)f->in.nmachines);
        cJSON_AddNumberToObject(doc, "max_cost", res->max_cost);
        cJSON_AddNumberToObject(doc, "lower_bound", res->bound.value);
        double norm = coloc_normalized(res->max_cost, res->bound.value);
        cJSON_AddItemToObject(doc, "normalized_cost", isfinite(norm) ? cJSON_CreateNumber(norm) : cJSON_CreateNull());
        if ((bound = cJSON_AddObjectToObject(doc, "bound"))) {
                cJSON_AddNumberToObject(bound, "p_max", res->bound.p_max);
                cJSON_AddNumberToObject(bound, "relaxation", res->bound.relaxation);
        }
        costs = cJSON_AddArrayToObject(doc, "machine_costs");
        for (size_t k = 0; costs && k < f->in.nmachines; k++)
                cJSON_AddItemToArray(costs, cJSON_CreateNumber(res->machine_cost[k]));
        assign = cJSON_AddArrayToObject(doc, "assignments");
        for (size_t j = 0; assign && j < f->in.njobs; j++) {
                cJSON *o = cJSON_CreateObject();
                cJSON_AddNumberToObject(o, "job", (double)j + 1);
                cJSON_AddNumberToObject(o, "machine", (double)res->machine_of[j] + 1);
                cJSON_AddStringToObject(o, "type", f->names[f->type[j]]);
                cJSON_AddNumberToObject(o, "load", f->load[j]);
                cJSON_AddItemToArray(assign, o);
        }
        return doc;
}

/* Machine k's jobs as "1 4 7" ("-" for none), in a new string (NULL when out of memory). */
static char *jobs_on(const coloc_file *f, const coloc_result *res, size_t k) {
        char *s = NULL;
        size_t len = 0;
        bool first = true;
        FILE *out = open_memstream(&s, &len);
        if (!out)
                return NULL;
        for (size_t j = 0; j < f->in.njobs; j++)
                if (res->machine_of[j] == k) {
                        fprintf(out, "%s%zu", first ? "" : " ", j + 1);
                        first = false;
                }
        if (first)
                fputs("-", out);
        if (fclose(out) != 0) {
                free(s);
                return NULL;
        }
        return s;
}

static int print_result(const coloc_file *f, const coloc_result *res) {
        static const char *const headers[] = { "MACHINE", "COST", "LOAD", "JOBS" };
        fmt_table t;
        int r = fmt_table_init(&t, 4, headers);
        printf("%s: %zu jobs of %zu types on %zu machines\n", coloc_algo_name(res->algo), f->in.njobs, f->in.ntypes,
               f->in.nmachines);
        printf("max cost %.6g, lower bound %.6g (p_max %.6g, LP relaxation %.6g), normalized cost %.4f\n",
               res->max_cost, res->bound.value, res->bound.p_max, res->bound.relaxation,
               coloc_normalized(res->max_cost, res->bound.value));
        for (size_t k = 0; r == 0 && k < f->in.nmachines; k++) {
                char name[32], cost[32], load[32], *jobs = jobs_on(f, res, k);
                double sum = 0;
                for (size_t j = 0; j < f->in.njobs; j++)
                        sum += res->machine_of[j] == k ? f->load[j] : 0;
                snprintf(name, sizeof(name), "%zu", k + 1);
                snprintf(cost, sizeof(cost), "%.6g", res->machine_cost[k]);
                snprintf(load, sizeof(load), "%.6g", sum);
                r = jobs ? fmt_table_row(&t, name, cost, load, jobs) : -ENOMEM;
                free(jobs);
        }
        if (r == 0)
                fmt_table_print(&t, stdout);
        fmt_table_free(&t);
        return r;
}

/* The reason a failed coloc_run gives the user. */
static const char *run_error(int r) {
        return r == -ENOSPC ? "more clusters of compatible types than machines: this algorithm gives each cluster "
                              "machines of its own (try fill-rebalance or sched-mixed)"
                            : strerror(-r);
}

static int solve(const cli *c, const coloc_file *f, coloc_algo algo) {
        coloc_result res = { .algo = algo };
        char err[ERRLEN] = "";
        int r, status = EXIT_FAIL;
        res.machine_of = calloc(f->in.njobs + 1, sizeof(*res.machine_of));
        res.machine_cost = calloc(f->in.nmachines, sizeof(*res.machine_cost));
        if (!res.machine_of || !res.machine_cost)
                cli_error(c, "out of memory");
        else if ((r = coloc_run(algo, &f->in, res.machine_of)) < 0) {
                cli_error(c, "%s: %s", coloc_algo_name(algo), run_error(r));
                status = r == -ENOSPC ? EXIT_USAGE : EXIT_FAIL; /* the instance does not suit the algorithm */
        } else if (coloc_cost(&f->in, res.machine_of, res.machine_cost, &res.max_cost) < 0)
                cli_error(c, "out of memory");
        else if ((r = coloc_lower_bound(&f->in, &res.bound, err, sizeof(err))) < 0)
                cli_error(c, "%s", *err ? err : strerror(-r));
        else if (c->json) {
                cJSON *doc = result_json(f, &res);
                status = fmt_json(doc) < 0 ? EXIT_FAIL : 0;
                cJSON_Delete(doc);
        } else if (print_result(f, &res) < 0)
                cli_error(c, "out of memory");
        else
                status = 0;
        free(res.machine_of);
        free(res.machine_cost);
        return status;
}

/* A whole number in [min, max]. */
static int parse_count(const char *s, unsigned long long min, unsigned long long max, unsigned long long *out) {
        char *end;
        errno = 0;
        unsigned long long v = strtoull(s, &end, 10);
        if (!*s || *s == '-' || *end || errno || v < min || v > max)
                return -EINVAL;
        *out = v;
        return 0;
}

typedef struct coloc_options {
        const char *algo, *instance, *experiment;
        unsigned long long seed, instances;
} coloc_options;

static int parse_options(cli *c, int argc, char **argv, coloc_options *o) {
        enum { OPT_ALGO = CLI_OPT_OWN, OPT_INSTANCE, OPT_EXPERIMENT, OPT_SEED, OPT_INSTANCES };
        static const struct option own[] = {
                { "algo", required_argument, NULL, OPT_ALGO },
                { "instance", required_argument, NULL, OPT_INSTANCE },
                { "experiment", required_argument, NULL, OPT_EXPERIMENT },
                { "seed", required_argument, NULL, OPT_SEED },
                { "instances", required_argument, NULL, OPT_INSTANCES },
                { NULL, 0, NULL, 0 },
        };
        int r;
        while ((r = cli_getopt(c, argc, argv, own)) > 0) {
                const char *bad = NULL;
                if (r == OPT_ALGO)
                        o->algo = optarg;
                else if (r == OPT_INSTANCE)
                        o->instance = optarg;
                else if (r == OPT_EXPERIMENT)
                        o->experiment = optarg;
                else if (r == OPT_SEED && parse_count(optarg, 0, UINT64_MAX, &o->seed) < 0)
                        bad = "--seed: a whole number >= 0";
                else if (r == OPT_INSTANCES && parse_count(optarg, 1, 100000, &o->instances) < 0)
                        bad = "--instances: a whole number from 1 to 100000";
                if (bad)
                        return cli_usage_error(c, "%s, not '%s'", bad, optarg);
        }
        if ((r = cli_opts_end(c, r, argc, argv)) >= 0)
                return r;
        if (!o->experiment == !(o->algo || o->instance))
                return cli_usage_error(c, "either --algo and --instance, or --experiment");
        if (!o->experiment && (!o->algo || !o->instance))
                return cli_usage_error(c, "--algo and --instance go together");
        return -1;
}

static int run_coloc(cli *c, int argc, char **argv) {
        coloc_options o = { .seed = 1, .instances = 30 };
        coloc_algo algo;
        int r = parse_options(c, argc, argv, &o);
        if (r >= 0)
                return r;
        if (o.experiment)
                return coloc_experiment(c, o.experiment, o.seed, (size_t)o.instances);
        if (coloc_algo_from_name(o.algo, &algo) < 0)
                return cli_usage_error(c, "--algo: unknown algorithm '%s' (see colony coloc --help)", o.algo);
        coloc_file f = { 0 };
        char err[768];
        if ((r = load_instance(o.instance, &f, err, sizeof(err))) < 0) {
                cli_error(c, "%s", err);
                r = r == -ENOMEM ? EXIT_FAIL : EXIT_USAGE; /* anything else is the file's fault */
        } else
                r = solve(c, &f, algo);
        coloc_file_free(&f);
        return r;
}

/* colony lists it with its summary (colony.c) and colony-offline runs it. */
const cli_command cmd_coloc = { .name = "coloc", .usage = coloc_usage, .run = run_coloc };
