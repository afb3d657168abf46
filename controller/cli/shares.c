/* shares.c - colony shares (how the departments share the cluster, and which job starts next)
 * and colony reload (re-read the controller's departments). */
#include "cli.h"
#include "client.h"
#include "format.h"
#include "proto.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define REQUEST_TIMEOUT_MS 30000

static const char shares_usage[] =
        "Usage: colony shares [--json]\n"
        "How the departments share the cluster: per department of the controller's tree, its weight\n"
        "and cap, the dominant share the fairness algorithm entitles it to and the one its running\n"
        "jobs hold now, its running and pending jobs, the CPU time its jobs used in the last 10\n"
        "minutes, the GPUs they hold (where the cluster has GPUs), which pending job the controller\n"
        "offers first, and why, and how far the other of hdrf and mch would entitle a department\n"
        "otherwise.\n";

/* Indent a path by its depth, and show its last component. */
static void tree_name(const char *path, char *buf, size_t len) {
        const char *last = strrchr(path, '/');
        int depth = 0;
        for (const char *p = path; *p; p++)
                depth += *p == '/';
        snprintf(buf, len, "%*s%s", 2 * depth, "", last ? last + 1 : path);
}

static int shares_add_row(fmt_table *t, const cJSON *d) {
        char perr[PROTO_ERRLEN], name[256], w[32], cap[32], ent[32], sh[32], run[32], pend[32], cpu[32], gpus[32];
        const char *path = NULL;
        const cJSON *num[7];
        static const char *const keys[] = { "weight", "cap", "entitled", "share", "running", "pending", "cpu_seconds" };
        if (proto_get_str(d, "path", &path, perr) != 0)
                return -EBADMSG;
        for (size_t i = 0; i < 7; i++)
                if (!cJSON_IsNumber(num[i] = cJSON_GetObjectItemCaseSensitive(d, keys[i])))
                        return -EBADMSG;
        tree_name(path, name, sizeof(name));
        snprintf(w, sizeof(w), "%g", num[0]->valuedouble);
        if (num[1]->valuedouble < 1)
                snprintf(cap, sizeof(cap), "%.2f", num[1]->valuedouble);
        else
                snprintf(cap, sizeof(cap), "-");
        snprintf(ent, sizeof(ent), "%.3f", num[2]->valuedouble);
        snprintf(sh, sizeof(sh), "%.3f%s", num[3]->valuedouble,
                 cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(d, "held")) ? " (held at cap)" : "");
        snprintf(run, sizeof(run), "%.0f", num[4]->valuedouble);
        snprintf(pend, sizeof(pend), "%.0f", num[5]->valuedouble);
        snprintf(cpu, sizeof(cpu), "%.1f", num[6]->valuedouble);
        const cJSON *held = cJSON_GetObjectItemCaseSensitive(d, "gpus"); /* a column only where the cluster has GPUs */
        snprintf(gpus, sizeof(gpus), "%.0f", cJSON_IsNumber(held) ? held->valuedouble : 0);
        return fmt_table_row(t, name, w, cap, ent, sh, run, pend, cpu, gpus);
}

/* Where the other of hdrf and mch would entitle a department otherwise (nothing from a
 * controller that does not say). */
static void print_versus(const cJSON *reply, const char *fairness) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(reply, "versus");
        const cJSON *algo = cJSON_GetObjectItemCaseSensitive(v, "algo"),
                    *gap = cJSON_GetObjectItemCaseSensitive(v, "largest_gap");
        const cJSON *dept = cJSON_GetObjectItemCaseSensitive(v, "department");
        if (!cJSON_IsString(algo) || !cJSON_IsNumber(gap))
                return;
        if (gap->valuedouble < 0.0005 || !cJSON_IsString(dept))
                printf("%s entitles every department as %s does\n", algo->valuestring, fairness);
        else
                printf("%s would entitle departments otherwise, by up to %.3f of a dominant share (%s)\n",
                       algo->valuestring, gap->valuedouble, dept->valuestring);
}

/* Print a "shares" reply as a tree table and the next job. Returns 0 or EXIT_FAIL. */
static int print_shares(const cli *c, const cJSON *reply) {
        static const char *const headers[] = { "DEPARTMENT", "WEIGHT",  "CAP",        "ENTITLED", "SHARE",
                                               "RUNNING",    "PENDING", "CPU-S(10m)", "GPUS" };
        const cJSON *depts = cJSON_GetObjectItemCaseSensitive(reply, "departments"), *d;
        const cJSON *next = cJSON_GetObjectItemCaseSensitive(reply, "next");
        const cJSON *fairness = cJSON_GetObjectItemCaseSensitive(reply, "fairness");
        const cJSON *cluster_gpus = cJSON_GetObjectItemCaseSensitive(reply, "cluster_gpus");
        fmt_table t;
        int r = fmt_table_init(&t, cJSON_IsNumber(cluster_gpus) && cluster_gpus->valuedouble > 0 ? 9 : 8, headers);

        if (!cJSON_IsArray(depts) || !cJSON_IsString(fairness))
                r = -EBADMSG;
        cJSON_ArrayForEach(d, depts) if (r == 0) r = shares_add_row(&t, d);
        if (r == 0) {
                printf("fairness: %s\n", fairness->valuestring);
                fmt_table_print(&t, stdout);
                print_versus(reply, fairness->valuestring);
                const cJSON *id = cJSON_GetObjectItemCaseSensitive(next, "id");
                const cJSON *why = cJSON_GetObjectItemCaseSensitive(next, "why");
                if (cJSON_IsNumber(id) && cJSON_IsString(why))
                        printf("next: job %.0f: %s\n", id->valuedouble, why->valuestring);
                else
                        printf("next: no pending job\n");
        } else {
                cli_error(c, "bad shares reply from the controller: %s", strerror(-r));
        }
        fmt_table_free(&t);
        return r == 0 ? 0 : EXIT_FAIL;
}

static int run_shares(cli *c, int argc, char **argv) {
        return client_run_plain(c, argc, argv, "shares", "shares", REQUEST_TIMEOUT_MS, print_shares);
}

const cli_command cmd_shares = { "shares", "how departments share the cluster, and which job starts next", shares_usage,
                                 false, run_shares };

static const char reload_usage[] =
        "Usage: colony reload [--json]\n"
        "Make the controller read its config file's departments, caps, user lists and fairness\n"
        "again, and its time limits and running limits (as SIGHUP does). A file that does not\n"
        "parse changes nothing, and its first error is printed. Root or the controller's own\n"
        "user only.\n";

static int print_reloaded(const cli *c, const cJSON *reply) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(reply, "departments");
        (void)c;
        printf("reloaded: %.0f departments\n", cJSON_IsNumber(n) ? n->valuedouble : 0);
        return 0;
}

static int run_reload(cli *c, int argc, char **argv) {
        return client_run_plain(c, argc, argv, "reload", "reloaded", REQUEST_TIMEOUT_MS, print_reloaded);
}

const cli_command cmd_reload = { "reload", "make the controller re-read its departments", reload_usage, false,
                                 run_reload };
