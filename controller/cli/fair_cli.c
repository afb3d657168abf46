/* fair_cli.c - colony fair: a one-shot fair-share allocation of a department tree and its jobs'
 * demands under one algorithm (policies/fair.h), computed here; nothing is sent to a
 * controller. Schemas: docs/policies.md, "Fair sharing". */
#include "cli.h"
#include "fair.h"
#include "format.h"
#include "instance.h"
#include "proto.h"
#include "units.h"
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char fair_usage[] =
        "Usage: colony fair --algo A --tree T.json --demands D.json [--json]\n"
        "Share a cluster among a tree of departments and jobs under a fair-share algorithm, one task\n"
        "at a time until no job can take another, and print what each got, each node's guarantee\n"
        "(its weight's share of its parent's, down from the root, within its cap), how far the other\n"
        "of hdrf and mch would differ, and the node furthest below a guarantee it is owed. Nothing is\n"
        "sent to a controller.\n\n"
        "  --algo A      drf, wdrf, hdrf, mch, c-ch or m-ch\n"
        "  --tree F      {\"nodes\": [{\"name\": \"root\"}, {\"name\": \"physics\", \"parent\": \"root\",\n"
        "                 \"weight\": 2, \"cap\": 0.5}, ...]}  (weight: default 1; cap: a fraction, default 1)\n"
        "  --demands F   {\"capacity\": {\"cpus\": 200, \"mem\": \"200G\", \"gpus\": 8},\n"
        "                 \"demands\": [{\"node\": \"astro\", \"cpus\": 1, \"mem\": \"2G\", \"gpus\": 1,\n"
        "                 \"tasks\": 100}, ...]}\n"
        "                per task, for leaves of the tree; cpus, mem or gpus may be left out (0); tasks:\n"
        "                default 1; gpus in a demand needs gpus in the capacity (GPUs are then a third\n"
        "                resource of the dominant share)\n"
        "CPUs are cores (a number, or \"500m\"); memory is bytes (a number) or a size (\"512M\");\n"
        "GPUs are whole devices.\n";

typedef struct named {
        const char *name;
        size_t index;
} named;

typedef struct fair_input {
        fair_problem p;
        fair_node *nodes;
        named *by_name; /* sorted by name */
        bool *has_kids;
        bool *has_demand;
        size_t n;
} fair_input;

static void input_free(fair_input *in) {
        free(in->nodes);
        free(in->by_name);
        free(in->has_kids);
        free(in->has_demand);
}

static int name_order(const void *a, const void *b) {
        return strcmp(((const named *)a)->name, ((const named *)b)->name);
}

/* The node called name, or -1. */
static long find(const fair_input *in, const char *name) {
        named key = { name, 0 };
        const named *hit = bsearch(&key, in->by_name, in->n, sizeof(key), name_order);
        return hit ? (long)hit->index : -1;
}

/* A number field (default def when absent). Returns 0 or -EINVAL with what set. */
static int get_number(const cJSON *o, const char *field, double def, double *out, char *what, size_t len) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
        *out = v ? v->valuedouble : def;
        if (v && !cJSON_IsNumber(v))
                return snprintf(what, len, "%s: not a number", field), -EINVAL;
        return 0;
}

/* One entry of the tree file: name, weight and cap into node, the parent's name into *parent
 * (NULL for the root). */
static int read_tree_node(const cJSON *o, fair_node *node, const char **parent, char *what, size_t len) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "name"),
                    *up = cJSON_GetObjectItemCaseSensitive(o, "parent");
        if (!cJSON_IsString(name) || !*name->valuestring)
                return snprintf(what, len, "needs a \"name\""), -EINVAL;
        node->name = name->valuestring;
        if (up && !cJSON_IsString(up) && !cJSON_IsNull(up))
                return snprintf(what, len, "parent: not a node name"), -EINVAL;
        *parent = cJSON_IsString(up) ? up->valuestring : NULL;
        if (get_number(o, "weight", 1, &node->weight, what, len) < 0 ||
            get_number(o, "cap", 1, &node->cap, what, len) < 0)
                return -EINVAL;
        return 0;
}

/* Sort the names, refuse one given twice, and point each node at its parent. */
static int link_nodes(fair_input *in, const char **parents, char *err, size_t errlen) {
        for (size_t i = 0; i < in->n; i++)
                in->by_name[i] = (named){ in->nodes[i].name, i };
        qsort(in->by_name, in->n, sizeof(*in->by_name), name_order);
        for (size_t i = 1; i < in->n; i++)
                if (strcmp(in->by_name[i - 1].name, in->by_name[i].name) == 0)
                        return snprintf(err, errlen, "node %s: given twice", in->by_name[i].name), -EINVAL;
        for (size_t i = 0; i < in->n; i++) {
                long up = parents[i] ? find(in, parents[i]) : -1;
                if (parents[i] && up < 0)
                        return snprintf(err, errlen, "node %s: unknown parent '%s'", in->nodes[i].name, parents[i]),
                               -EINVAL;
                in->nodes[i].parent = (int32_t)up;
                if (up >= 0)
                        in->has_kids[up] = true;
        }
        return 0;
}

static int alloc_input(fair_input *in, size_t n) {
        in->nodes = calloc(n + 1, sizeof(*in->nodes));
        in->by_name = calloc(n + 1, sizeof(*in->by_name));
        in->has_kids = calloc(n + 1, sizeof(*in->has_kids));
        in->has_demand = calloc(n + 1, sizeof(*in->has_demand));
        return in->nodes && in->by_name && in->has_kids && in->has_demand ? 0 : -ENOMEM;
}

/* The tree file into in; its names point into *doc, which the caller frees after the run. */
static int load_tree(const char *path, fair_input *in, cJSON **doc, char *err, size_t errlen) {
        const cJSON *arr = inst_load_array(path, "nodes", doc, err, errlen), *o;
        size_t n = arr ? (size_t)cJSON_GetArraySize(arr) : 0;
        const char **parents = calloc(n + 1, sizeof(*parents));
        char what[256];
        int r = !arr ? -EINVAL : !parents || alloc_input(in, n) < 0 ? -ENOMEM : 0;
        if (r == -ENOMEM)
                snprintf(err, errlen, "out of memory");
        const cJSON *list = r == 0 ? arr : NULL;
        cJSON_ArrayForEach(o, list) {
                if (read_tree_node(o, &in->nodes[in->n], &parents[in->n], what, sizeof(what)) < 0) {
                        snprintf(err, errlen, "%s: node entry %zu: %s", path, in->n + 1, what);
                        r = -EINVAL;
                        break;
                }
                in->n++;
        }
        if (r == 0 && (r = link_nodes(in, parents, what, sizeof(what))) < 0)
                snprintf(err, errlen, "%s: %s", path, what);
        in->p = (fair_problem){ .nres = 2, .nodes = in->nodes, .nnodes = in->n };
        free(parents);
        return r;
}

/* A per-task amount: absent or 0 is 0, else a CPU count or a size. */
static int get_amount(const cJSON *o, const char *field, bool cpus, int64_t *out, char *what, size_t len) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, field);
        *out = 0;
        if (!v || (cJSON_IsNumber(v) && v->valuedouble == 0))
                return 0;
        return cpus ? inst_get_cpus(o, field, false, out, what, len) : inst_get_size(o, field, 1, out, what, len);
}

/* A count of whole GPUs (absent: 0) into *out. Returns 0 or -EINVAL with what filled. */
static int get_gpu_count(const cJSON *o, int64_t *out, char *what, size_t len) {
        char perr[PROTO_ERRLEN];
        *out = 0;
        if (proto_get_int(o, "gpus", 0, RES_GPUS_MAX, out, perr) == -EINVAL)
                return snprintf(what, len, "gpus: a whole number of devices from 0 to %lld", (long long)RES_GPUS_MAX),
                       -EINVAL;
        return 0;
}

/* A demand's GPUs per task; only where the capacity counts GPUs, or they could never fit. */
static int get_gpus(const cJSON *o, const fair_input *in, fair_node *n, char *what, size_t len) {
        if (get_gpu_count(o, &n->demand[FAIR_GPU], what, len) < 0)
                return -EINVAL;
        if (n->demand[FAIR_GPU] > 0 && in->p.nres <= FAIR_GPU)
                return snprintf(what, len, "asks gpus, but the capacity has none"), -EINVAL;
        return 0;
}

static int read_demand(const cJSON *o, fair_input *in, char *what, size_t len) {
        const cJSON *name = cJSON_GetObjectItemCaseSensitive(o, "node");
        char perr[PROTO_ERRLEN];
        long i = cJSON_IsString(name) ? find(in, name->valuestring) : -1;
        if (!cJSON_IsString(name))
                return snprintf(what, len, "needs a \"node\""), -EINVAL;
        if (i < 0)
                return snprintf(what, len, "no node '%s' in the tree", name->valuestring), -EINVAL;
        if (in->has_kids[i] || in->has_demand[i])
                return snprintf(what, len, "node '%s' %s", name->valuestring,
                                in->has_kids[i] ? "has children: demands go to leaves" : "has a demand already"),
                       -EINVAL;
        fair_node *n = &in->nodes[i];
        in->has_demand[i] = true;
        n->tasks = 1;
        if (get_amount(o, "cpus", true, &n->demand[FAIR_CPU], what, len) < 0 ||
            get_amount(o, "mem", false, &n->demand[FAIR_MEM], what, len) < 0 || get_gpus(o, in, n, what, len) < 0)
                return -EINVAL;
        if (proto_get_int(o, "tasks", 0, FAIR_TASKS_MAX, &n->tasks, perr) == -EINVAL)
                return snprintf(what, len, "tasks: a whole number from 0 to 2^40"), -EINVAL;
        return 0;
}

static int load_demands(const char *path, fair_input *in, char *err, size_t errlen) {
        cJSON *doc = NULL;
        const cJSON *arr = inst_load_array(path, "demands", &doc, err, errlen), *o;
        const cJSON *cap = arr ? cJSON_GetObjectItemCaseSensitive(doc, "capacity") : NULL;
        char what[256];
        res_t c = { 0 };
        int r = arr ? 0 : -EINVAL;
        if (r == 0 && (!cJSON_IsObject(cap) || inst_get_res(cap, "cpus", "mem", &c, what, sizeof(what)) < 0)) {
                snprintf(err, errlen, "%s: capacity: %s", path,
                         cJSON_IsObject(cap) ? what : "needs {\"cpus\", \"mem\"}");
                r = -EINVAL;
        }
        if (r == 0 && get_gpu_count(cap, &c.gpus, what, sizeof(what)) < 0) {
                snprintf(err, errlen, "%s: capacity: %s", path, what);
                r = -EINVAL;
        }
        in->p.capacity[FAIR_CPU] = c.mcpu;
        in->p.capacity[FAIR_MEM] = c.mem;
        in->p.capacity[FAIR_GPU] = c.gpus;
        in->p.nres = c.gpus > 0 ? 3 : 2;
        size_t entry = 0;
        const cJSON *list = r == 0 ? arr : NULL;
        cJSON_ArrayForEach(o, list) {
                entry++;
                if (read_demand(o, in, what, sizeof(what)) < 0) {
                        snprintf(err, errlen, "%s: demand %zu: %s", path, entry, what);
                        r = -EINVAL;
                        break;
                }
        }
        cJSON_Delete(doc);
        return r;
}

/* What sets this run apart: against the other of H-DRF and MCH (hdrf for every other
 * algorithm), the node whose dominant share differs most; and the node furthest below a
 * guarantee it is owed (fair_shortfalls), if any. */
typedef struct contrast {
        fair_algo other;
        size_t gap_node, short_node;
        double gap, other_share, shortfall;
} contrast;

static int contrast_with(const fair_input *in, const fair_state *s, fair_algo a, contrast *out, char *err,
                         size_t errlen) {
        fair_state *o = NULL;
        double *short_by = calloc(in->n, sizeof(*short_by));
        *out = (contrast){ .other = a == FAIR_HDRF ? FAIR_MCH : FAIR_HDRF };
        int r = short_by ? fair_new(&in->p, out->other, &o, err, errlen) : -ENOMEM;
        if (r == 0) {
                fair_run(o);
                fair_shortfalls(s, short_by);
                for (size_t i = 0; i < in->n; i++) {
                        double d = fabs(fair_dominant_share(s, i) - fair_dominant_share(o, i));
                        if (d > out->gap)
                                *out = (contrast){ out->other,    i, out->short_node, d, fair_dominant_share(o, i),
                                                   out->shortfall };
                        if (short_by[i] > out->shortfall)
                                out->short_node = i, out->shortfall = short_by[i];
                }
        }
        fair_free(o);
        free(short_by);
        return r;
}

static const char *res_name(int r) {
        return r == FAIR_CPU ? "cpu" : r == FAIR_MEM ? "mem" : r == FAIR_GPU ? "gpus" : NULL;
}

static cJSON *node_json(const fair_input *in, const fair_state *s, size_t i) {
        const fair_node *n = &in->nodes[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "name", n->name);
        if (n->parent >= 0)
                cJSON_AddStringToObject(o, "parent", in->nodes[n->parent].name);
        else
                cJSON_AddNullToObject(o, "parent");
        cJSON_AddBoolToObject(o, "leaf", !in->has_kids[i]);
        cJSON_AddNumberToObject(o, "weight", n->weight);
        if (!in->has_kids[i]) {
                cJSON_AddNumberToObject(o, "flat_weight", fair_weight(s, i));
                cJSON_AddNumberToObject(o, "tasks", (double)fair_tasks(s, i));
                cJSON_AddNumberToObject(o, "wanted", (double)n->tasks);
        }
        cJSON_AddNumberToObject(o, "mcpu", (double)fair_used(s, i, FAIR_CPU));
        cJSON_AddNumberToObject(o, "mem", (double)fair_used(s, i, FAIR_MEM));
        if (in->p.nres > FAIR_GPU)
                cJSON_AddNumberToObject(o, "gpus", (double)fair_used(s, i, FAIR_GPU));
        cJSON_AddNumberToObject(o, "dominant_share", fair_dominant_share(s, i));
        cJSON_AddNumberToObject(o, "guarantee", fair_guarantee(s, i));
        return o;
}

/* {"algo", "largest_gap", "node", "dominant_share", "other_share"} and {"node", "dominant_share",
 * "guarantee", "shortfall"} or null. */
static void contrast_json(cJSON *doc, const fair_input *in, const fair_state *s, const contrast *c) {
        cJSON *v = cJSON_AddObjectToObject(doc, "versus"), *sh;
        if (v) {
                cJSON_AddStringToObject(v, "algo", fair_algo_name(c->other));
                cJSON_AddNumberToObject(v, "largest_gap", c->gap);
                cJSON_AddStringToObject(v, "node", in->nodes[c->gap_node].name);
                cJSON_AddNumberToObject(v, "dominant_share", fair_dominant_share(s, c->gap_node));
                cJSON_AddNumberToObject(v, "other_share", c->other_share);
        }
        if (c->shortfall <= 0) {
                cJSON_AddNullToObject(doc, "largest_shortfall");
        } else if ((sh = cJSON_AddObjectToObject(doc, "largest_shortfall"))) {
                cJSON_AddStringToObject(sh, "node", in->nodes[c->short_node].name);
                cJSON_AddNumberToObject(sh, "dominant_share", fair_dominant_share(s, c->short_node));
                cJSON_AddNumberToObject(sh, "guarantee", fair_guarantee(s, c->short_node));
                cJSON_AddNumberToObject(sh, "shortfall", c->shortfall);
        }
}

static cJSON *result_json(const fair_input *in, const fair_state *s, fair_algo a, size_t placed, const contrast *c) {
        cJSON *doc = cJSON_CreateObject(), *cap, *nodes;
        const char *k = res_name(fair_first_saturated(s));
        cJSON_AddStringToObject(doc, "algo", fair_algo_name(a));
        cJSON_AddNumberToObject(doc, "placed", (double)placed);
        if (k)
                cJSON_AddStringToObject(doc, "first_saturated", k);
        else
                cJSON_AddNullToObject(doc, "first_saturated");
        cap = cJSON_AddObjectToObject(doc, "capacity");
        if (cap) {
                cJSON_AddNumberToObject(cap, "mcpu", (double)in->p.capacity[FAIR_CPU]);
                cJSON_AddNumberToObject(cap, "mem", (double)in->p.capacity[FAIR_MEM]);
                if (in->p.nres > FAIR_GPU)
                        cJSON_AddNumberToObject(cap, "gpus", (double)in->p.capacity[FAIR_GPU]);
        }
        contrast_json(doc, in, s, c);
        nodes = cJSON_AddArrayToObject(doc, "nodes");
        for (size_t i = 0; nodes && i < in->n; i++)
                cJSON_AddItemToArray(nodes, node_json(in, s, i));
        return doc;
}

/* One table row: the name indented by depth; tasks and weights for leaves only. */
static int node_row(fmt_table *t, const fair_input *in, const fair_state *s, size_t i) {
        char name[256], weight[32], flat[32], tasks[32], wanted[32], cpus[32], mem[32], share[32], promised[32],
                gpus[32];
        const fair_node *n = &in->nodes[i];
        int depth = 0;
        for (int32_t up = n->parent; up >= 0 && depth < 32; up = in->nodes[up].parent)
                depth++;
        snprintf(name, sizeof(name), "%*s%s", 2 * depth, "", n->name);
        snprintf(weight, sizeof(weight), "%g", n->weight);
        snprintf(flat, sizeof(flat), "%.4g", fair_weight(s, i));
        snprintf(tasks, sizeof(tasks), "%lld", (long long)fair_tasks(s, i));
        snprintf(wanted, sizeof(wanted), "%lld", (long long)n->tasks);
        snprintf(share, sizeof(share), "%.3f", fair_dominant_share(s, i));
        snprintf(promised, sizeof(promised), "%.3f", fair_guarantee(s, i));
        snprintf(gpus, sizeof(gpus), "%lld", (long long)fair_used(s, i, FAIR_GPU));
        bool leaf = !in->has_kids[i];
        return fmt_table_row(t, name, weight, leaf ? flat : NULL, leaf ? tasks : NULL, leaf ? wanted : NULL,
                             units_format_cpus(fair_used(s, i, FAIR_CPU), cpus, sizeof(cpus)),
                             units_format_size(fair_used(s, i, FAIR_MEM), mem, sizeof(mem)), promised, share,
                             gpus); /* read only when the table has its GPUS column */
}

/* Two lines under the table: how far the other of H-DRF and MCH would be, and the worst
 * shortfall below a guarantee. */
static void print_contrast(const fair_input *in, const fair_state *s, fair_algo a, const contrast *c) {
        const char *name = fair_algo_name(a), *other = fair_algo_name(c->other);
        if (c->gap < 0.0005)
                printf("%s gives every node the dominant share %s gives it\n", name, other);
        else
                printf("%s and %s differ by up to %.3f of a dominant share: %s holds %.3f under %s, %.3f under %s\n",
                       name, other, c->gap, in->nodes[c->gap_node].name, fair_dominant_share(s, c->gap_node), name,
                       c->other_share, other);
        if (c->shortfall < 0.0005)
                printf("under %s every node owed its guarantee has it\n", name);
        else
                printf("under %s, %s holds %.3f of a guaranteed %.3f, %.3f short\n", name,
                       in->nodes[c->short_node].name, fair_dominant_share(s, c->short_node),
                       fair_guarantee(s, c->short_node), c->shortfall);
}

static int print_result(const fair_input *in, const fair_state *s, fair_algo a, size_t placed, const contrast *c) {
        static const char *const headers[] = { "NODE", "WEIGHT", "FLAT WEIGHT", "TASKS", "WANTED",
                                               "CPUS", "MEM",    "GUARANTEE",   "SHARE", "GPUS" };
        char cpus[32], mem[32], gpus[48] = "";
        const char *k = res_name(fair_first_saturated(s));
        fmt_table t;
        bool with_gpus = in->p.nres > FAIR_GPU; /* a GPUS column last, where the capacity has GPUs */
        int r = fmt_table_init(&t, with_gpus ? 10 : 9, headers);
        if (with_gpus)
                snprintf(gpus, sizeof(gpus), " and %lld GPUs", (long long)in->p.capacity[FAIR_GPU]);
        printf("%s: %zu tasks on %s CPUs%s%s%s%s%s\n", fair_algo_name(a), placed,
               units_format_cpus(in->p.capacity[FAIR_CPU], cpus, sizeof(cpus)), with_gpus ? ", " : " and ",
               units_format_size(in->p.capacity[FAIR_MEM], mem, sizeof(mem)), gpus, k ? "; first saturated: " : "",
               k ? k : "");
        for (size_t i = 0; r == 0 && i < in->n; i++)
                r = node_row(&t, in, s, i);
        if (r == 0) {
                fmt_table_print(&t, stdout);
                print_contrast(in, s, a, c);
        }
        fmt_table_free(&t);
        return r;
}

static int run_fair(cli *c, int argc, char **argv) {
        enum { OPT_ALGO = CLI_OPT_OWN, OPT_TREE, OPT_DEMANDS };
        static const struct option own[] = {
                { "algo", required_argument, NULL, OPT_ALGO },
                { "tree", required_argument, NULL, OPT_TREE },
                { "demands", required_argument, NULL, OPT_DEMANDS },
                { NULL, 0, NULL, 0 },
        };
        const char *algo = NULL, *tree = NULL, *demands = NULL;
        int o;
        while ((o = cli_getopt(c, argc, argv, own)) > 0)
                *(o == OPT_ALGO ? &algo : o == OPT_TREE ? &tree : &demands) = optarg;
        if ((o = cli_opts_end(c, o, argc, argv)) >= 0)
                return o;
        fair_algo a;
        if (!algo || !tree || !demands)
                return cli_usage_error(c, "--algo, --tree and --demands are required");
        if (fair_algo_from_name(algo, &a) < 0)
                return cli_usage_error(c, "--algo: drf, wdrf, hdrf, mch, c-ch or m-ch, not '%s'", algo);

        fair_input in = { 0 };
        fair_state *s = NULL;
        cJSON *tree_doc = NULL;
        char err[ERRLEN];
        int r = load_tree(tree, &in, &tree_doc, err, sizeof(err)), status = EXIT_USAGE;
        if (r == 0)
                r = load_demands(demands, &in, err, sizeof(err));
        if (r == 0)
                r = fair_new(&in.p, a, &s, err, sizeof(err));
        if (r < 0) {
                cli_error(c, "%s", err);
                status = r == -ENOMEM ? EXIT_FAIL : EXIT_USAGE;
        } else {
                size_t placed = fair_run(s);
                contrast diff;
                if (contrast_with(&in, s, a, &diff, err, sizeof(err)) < 0) {
                        cli_error(c, "%s", err);
                        status = EXIT_FAIL;
                } else {
                        cJSON *doc = c->json ? result_json(&in, s, a, placed, &diff) : NULL;
                        status = (c->json ? fmt_json(doc) : print_result(&in, s, a, placed, &diff)) < 0 ? EXIT_FAIL : 0;
                        cJSON_Delete(doc);
                }
        }
        fair_free(s);
        cJSON_Delete(tree_doc);
        input_free(&in);
        return status;
}

/* colony lists it with its summary (colony.c) and colony-offline runs it. */
const cli_command cmd_fair = { .name = "fair", .usage = fair_usage, .run = run_fair };
