/* cluster.c - the cluster subcommands: nodes, and up/down for a local cluster. */
#include "cli.h"
#include "sched.h"
#include "client.h"
#include "devcluster.h"
#include "format.h"
#include "nodesel.h"
#include "proto.h"
#include "units.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NODES_TIMEOUT_MS 30000
#define UP_TIMEOUT_MS                                                                                                  \
        60000 /* a bound for failures: an agent that moves into a scope first took 5 s in a loaded TCG guest */
#define LOG_TAIL_LINES  15
#define UP_FEATURES_MAX 64 /* --agent-features options */

/* ---- nodes ---- */

static const char nodes_usage[] =
        "Usage: colony nodes [--json]\n"
        "List the agents: state (up; not-responding: connected but silent past the agent timeout,\n"
        "so given no job, its jobs running on; down; draining: drained by root, its jobs running\n"
        "on, no new one placed; drained: the same with no job left), free and total CPUs,\n"
        "memory and GPUs, running jobs, cgroup mode, and the host's pressure: the share of the last 10 s in\n"
        "which some task waited for CPU, memory or I/O (PSI; '-' when the kernel gives none), its\n"
        "features, and the reason it was drained. Under a policy with a plan (lotes, coloc), a last\n"
        "line says what it places with now.\n";

/* One node record as a table row. Returns 0, -EBADMSG or -ENOMEM. */
static int nodes_add_row(fmt_table *t, const cJSON *node) {
        char perr[PROTO_ERRLEN], cpus[2 * FMT_BUF], mem[2 * FMT_BUF], running[32], pressure[FMT_BUF];
        psi_stats psi;
        char fc[FMT_BUF], tc[FMT_BUF], fm[FMT_BUF], tm[FMT_BUF], gpus[48] = "-";
        const char *name = NULL, *state = NULL, *mode = NULL;
        int64_t mcpu = 0, free_mcpu = 0, bytes = 0, free_mem = 0, jobs = 0, ngpus = 0, free_gpus = 0;

        if (proto_get_str(node, "name", &name, perr) != 0 || proto_get_str(node, "state", &state, perr) != 0 ||
            proto_get_int(node, "mcpu", 0, INT64_MAX, &mcpu, perr) != 0 ||
            proto_get_int(node, "free_mcpu", INT64_MIN, INT64_MAX, &free_mcpu, perr) != 0 ||
            proto_get_int(node, "mem", 0, INT64_MAX, &bytes, perr) != 0 ||
            proto_get_int(node, "free_mem", INT64_MIN, INT64_MAX, &free_mem, perr) != 0 ||
            proto_get_int(node, "running", 0, INT64_MAX, &jobs, perr) < 0 ||
            proto_get_str(node, "cgroup_mode", &mode, perr) < 0 || psi_from_json(node, &psi, perr) < 0 ||
            proto_get_int(node, "gpus", 0, INT64_MAX, &ngpus, perr) == -EINVAL ||
            proto_get_int(node, "free_gpus", INT64_MIN, INT64_MAX, &free_gpus, perr) == -EINVAL)
                return -EBADMSG;
        if (ngpus)
                snprintf(gpus, sizeof(gpus), "%" PRId64 "/%" PRId64, free_gpus, ngpus);
        snprintf(cpus, sizeof(cpus), "%s/%s", units_format_cpus(free_mcpu, fc, sizeof(fc)),
                 units_format_cpus(mcpu, tc, sizeof(tc)));
        snprintf(mem, sizeof(mem), "%s/%s", units_format_size(free_mem, fm, sizeof(fm)),
                 units_format_size(bytes, tm, sizeof(tm)));
        snprintf(running, sizeof(running), "%" PRId64, jobs);
        const cJSON *features = cJSON_GetObjectItemCaseSensitive(node, "features"),
                    *reason = cJSON_GetObjectItemCaseSensitive(node, "reason");
        return fmt_table_row(t, name, state, cpus, mem, gpus, running, mode,
                             fmt_psi(&psi, "/", pressure, sizeof(pressure)),
                             cJSON_IsString(features) ? features->valuestring : "-",
                             cJSON_IsString(reason) ? reason->valuestring : "-");
}

/* Print a "nodes" reply as a table. Returns 0 or EXIT_FAIL. */
static int print_nodes(const cli *c, const cJSON *reply) {
        static const char *const headers[] = {
                "NAME",    "STATE",  "CPUS(free/total)",      "MEM(free/total)", "GPUS(free/total)",
                "RUNNING", "CGROUP", "PRESSURE%(cpu/mem/io)", "FEATURES",        "REASON"
        };
        const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(reply, "nodes"), *node;
        fmt_table t;
        int r = fmt_table_init(&t, 10, headers);

        if (!cJSON_IsArray(nodes))
                r = -EBADMSG;
        cJSON_ArrayForEach(node, nodes) if (r == 0) r = nodes_add_row(&t, node);
        const cJSON *policy = cJSON_GetObjectItemCaseSensitive(reply, "policy_status");
        if (r == 0) {
                fmt_table_print(&t, stdout);
                if (cJSON_IsString(policy))
                        printf("policy: %s\n", policy->valuestring);
        } else
                cli_error(c, "bad node list from the controller: %s", strerror(-r));
        fmt_table_free(&t);
        return r == 0 ? 0 : EXIT_FAIL;
}

static int run_nodes(cli *c, int argc, char **argv) {
        return client_run_plain(c, argc, argv, "nodes", "nodes", NODES_TIMEOUT_MS, print_nodes);
}

const cli_command cmd_nodes = { "nodes", "list the agents and their free resources", nodes_usage, false, run_nodes };

/* ---- up ---- */

static const char up_usage[] =
        "Usage: colony up [--dir DIR] [--agents N] [--agent-cpus N] [--agent-mem SIZE]\n"
        "                 [--name-prefix P] [--order fifo|backfill|reserve] [--agent-timeout-ms N]\n"
        "                 [--launch-timeout-ms N] [--kill-wait S] [--agent-features A,B]...\n"
        "                 [--agent-no-cpuset] [--agent-gpu-devices LIST] [--agent-gpu-type T] [--json]\n"
        "Start a local cluster in the background: a controller and N agents on this host, with\n"
        "their socket, secret, database, pid files and logs in DIR. Needs root for the agents'\n"
        "cgroups. Stop it with colony down --dir DIR. On a DIR whose controller or agents died,\n"
        "start those again (the agents adopt their jobs) and keep what runs.\n\n"
        "  --dir DIR           where it lives (default: /run/colony as root, else\n"
        "                      $XDG_RUNTIME_DIR/colony, else /tmp/colony-UID)\n"
        "  --agents N          how many agents (default 1; on a DIR that has a cluster, its own)\n"
        "  --agent-cpus N      CPUs each agent offers (default: all online CPUs)\n"
        "  --agent-mem SIZE    memory each agent offers (default: all memory)\n"
        "  --name-prefix P     agents are named P1..PN (default: short host name, a hash of DIR\n"
        "                      and '-'); names must be unique on the host: they name cgroups\n"
        "  --order ORDER       queue order: fifo (default) or backfill\n"
        "  --agent-listen ADDR the address the controller listens on for agents (default 127.0.0.1;\n"
        "                      a port is picked); the agents started here connect there\n"
        "  --agent-timeout-ms N  how long an agent may be silent before its node is not-responding\n"
        "                      and given no job (default 5000); its jobs are lost only after the\n"
        "                      controller's node_lost_timeout_ms (300000; --controller-config)\n"
        "  --launch-timeout-ms N  how long each agent gives a job to exec before it fails it\n"
        "                      (colony-agent(8); default 30000)\n"
        "  --kill-wait S       seconds each agent waits between SIGTERM and SIGKILL for a job past\n"
        "                      its time limit (colony-agent(8); default 30)\n"
        "  --controller-config FILE  the controller's config file (colony-controller(8)), e.g. with\n"
        "                      [departments]\n"
        "  --agent-features A,B  the agents' features (colony-agent --features): the first option\n"
        "                      for the first agent, the second for the second..., the last for the\n"
        "                      rest; given once, for every agent\n"
        "  --agent-no-cpuset   whole-CPU jobs get a CPU quota only, no cores of their own\n"
        "                      (colony-agent --no-cpuset)\n"
        "  --agent-gpu-devices LIST  the agents' GPUs, their device nodes (default: those found on\n"
        "                      the host), split among the agents, none offered twice: the first\n"
        "                      agent the first of them, and so on (colony-agent --gpu-devices)\n"
        "  --agent-gpu-type T  their type (colony-agent --gpu-type)\n";

/* The cluster directory for up/down: --dir or the default, made absolute. */
static int cluster_dir(const cli *c, char *buf, size_t len) {
        char cwd[PATH_MAX];
        int n;

        if (!c->dir)
                return client_default_dir(buf, len);
        if (c->dir[0] == '/' || !getcwd(cwd, sizeof(cwd)))
                n = snprintf(buf, len, "%s", c->dir);
        else
                n = snprintf(buf, len, "%s/%s", cwd, c->dir);
        /* Room for the longest file name the directory gets. */
        return n < 0 || (size_t)n + DEV_NAME_MAX + 16 >= len ? -ENAMETOOLONG : 0;
}

#define NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.-"
/* Room for the prefix in an agent name: its number, and a margin. */
#define PREFIX_MAX (DEV_NAME_MAX - 10)

/* The default agent name prefix: the short host name, a short hash of the cluster directory
 * (agent names name cgroups: two clusters on one host must never share one), and '-'. A host
 * name keeps only the characters an agent name may have ("(none)", a host without one set,
 * gives "none"), and as many as fit. */
static void default_prefix(const char *dir, char *buf, size_t len) {
        char host[256] = "", kept[PREFIX_MAX - 7] = "";
        uint32_t h = 2166136261u; /* FNV-1a */
        size_t n = 0;

        for (const char *p = dir; *p; p++)
                h = (h ^ (unsigned char)*p) * 16777619u;
        if (gethostname(host, sizeof(host) - 1) < 0)
                host[0] = '\0';
        host[strcspn(host, ".")] = '\0';
        for (const char *p = host; *p && n + 1 < sizeof(kept); p++)
                if (strchr(NAME_CHARS, *p))
                        kept[n++] = *p;
        kept[n] = '\0';
        snprintf(buf, len, "%s-%06x-", n ? kept : "localhost", (unsigned)(h & 0xffffff));
}

static bool valid_prefix(const char *p) { return strlen(p) <= PREFIX_MAX && p[strspn(p, NAME_CHARS)] == '\0'; }

/* colony up's options: its agents' first, then the controller's (up_option tells them apart). */
enum {
        OPT_AGENTS = CLI_OPT_OWN,
        OPT_CPUS,
        OPT_MEM,
        OPT_PREFIX,
        OPT_LISTEN,
        OPT_FEATURES,
        OPT_NO_CPUSET,
        OPT_GPU_DEVICES,
        OPT_GPU_TYPE,
        OPT_ORDER,
        OPT_CONFIG,
        OPT_TIMEOUT,
        OPT_LAUNCH,
        OPT_KILL_WAIT
};
static const struct option up_options[] = {
        { "agents", required_argument, NULL, OPT_AGENTS },
        { "agent-cpus", required_argument, NULL, OPT_CPUS },
        { "agent-mem", required_argument, NULL, OPT_MEM },
        { "name-prefix", required_argument, NULL, OPT_PREFIX },
        { "order", required_argument, NULL, OPT_ORDER },
        { "controller-config", required_argument, NULL, OPT_CONFIG },
        { "agent-listen", required_argument, NULL, OPT_LISTEN },
        { "agent-timeout-ms", required_argument, NULL, OPT_TIMEOUT },
        { "launch-timeout-ms", required_argument, NULL, OPT_LAUNCH },
        { "kill-wait", required_argument, NULL, OPT_KILL_WAIT },
        { "agent-features", required_argument, NULL, OPT_FEATURES },
        { "agent-no-cpuset", no_argument, NULL, OPT_NO_CPUSET },
        { "agent-gpu-devices", required_argument, NULL, OPT_GPU_DEVICES },
        { "agent-gpu-type", required_argument, NULL, OPT_GPU_TYPE },
        { 0 },
};

/* An option of the agents up starts (their count, names, resources, features) into o. Returns
 * -1 to go on, else an exit status. */
static int up_agent_option(cli *c, int opt, char *arg, dev_options *o) {
        static const char *features[UP_FEATURES_MAX];
        int64_t v;

        switch (opt) {
        case OPT_AGENTS:
                if (units_parse_uint(arg, 1000, &v) < 0 || v < 1)
                        return cli_usage_error(c, "--agents: '%s' is not a number from 1 to 1000", arg);
                o->agents = (int)v;
                break;
        case OPT_CPUS:
                if (units_parse_cpus(arg, &v) < 0)
                        return cli_usage_error(c, "--agent-cpus: '%s' is not a CPU count (like 2 or 1.5)", arg);
                o->agent_cpus = arg;
                break;
        case OPT_MEM:
                if (units_parse_mem(arg, &v) < 0)
                        return cli_usage_error(c,
                                               "--agent-mem: '%s' is not a memory size of at least 1M (like "
                                               "2G, or 2048 for MiB)",
                                               arg);
                o->agent_mem = arg;
                break;
        case OPT_PREFIX:
                if (!valid_prefix(arg))
                        return cli_usage_error(c, "--name-prefix: '%s' must be up to %d of A-Z a-z 0-9 _ . -", arg,
                                               DEV_NAME_MAX - 10);
                o->name_prefix = arg;
                break;
        case OPT_LISTEN:
                if (strlen(arg) > 45 || !*arg || strchr(arg, ':'))
                        return cli_usage_error(c, "--agent-listen: '%s' is not an IPv4 address or host name", arg);
                o->listen_host = arg;
                break;
        case OPT_FEATURES:
                if (!nodesel_list_ok(arg) || o->nagent_features == UP_FEATURES_MAX)
                        return cli_usage_error(c,
                                               "--agent-features: '%s' is not feature names separated by "
                                               "commas, or one past the %d this takes",
                                               arg, UP_FEATURES_MAX);
                features[o->nagent_features++] = arg;
                o->agent_features = features;
                break;
        case OPT_NO_CPUSET: o->agent_no_cpuset = true; break;
        case OPT_GPU_DEVICES: o->agent_gpu_devices = arg; break; /* the agent checks them */
        case OPT_GPU_TYPE: o->agent_gpu_type = arg; break;
        }
        return -1;
}

/* An option of the controller up starts (its order, config and timeouts) into o. Returns -1 to
 * go on, else an exit status. */
static int up_controller_option(cli *c, int opt, char *arg, dev_options *o) {
        int64_t v;

        switch (opt) {
        case OPT_ORDER:
                if (sched_order_from_name(arg, &(sched_order){ 0 }) < 0)
                        return cli_usage_error(c, "--order: '%s' is not fifo, backfill or reserve", arg);
                o->order = arg;
                break;
        case OPT_CONFIG:
                /* the controller starts elsewhere: the path must be absolute */
                if (!(o->config = realpath(arg, NULL)))
                        return cli_usage_error(c, "--controller-config: %s: %s", arg, strerror(errno));
                break;
        case OPT_TIMEOUT:
                if (units_parse_uint(arg, INT32_MAX, &v) < 0 || v < 1)
                        return cli_usage_error(c, "--agent-timeout-ms: '%s' is not a positive number", arg);
                o->agent_timeout_ms = arg;
                break;
        case OPT_LAUNCH:
                if (units_parse_uint(arg, 3600 * 1000, &v) < 0 || v < 1)
                        return cli_usage_error(c, "--launch-timeout-ms: '%s' is not a number of ms in [1, 3600000]",
                                               arg);
                o->launch_timeout_ms = arg;
                break;
        case OPT_KILL_WAIT:
                if (units_parse_uint(arg, 3600, &v) < 0)
                        return cli_usage_error(c, "--kill-wait: '%s' is not a number of seconds in [0, 3600]", arg);
                o->kill_wait = arg;
                break;
        }
        return -1;
}

/* Options into o. Returns -1 to go on, else an exit status. */
static int parse_up(cli *c, int argc, char **argv, dev_options *o) {
        int opt, r;

        while ((opt = cli_getopt(c, argc, argv, up_options)) > 0)
                if ((r = opt < OPT_ORDER ? up_agent_option(c, opt, optarg, o)
                                         : up_controller_option(c, opt, optarg, o)) >= 0)
                        return r;
        return cli_opts_end(c, opt, argc, argv);
}

static int print_up_json(const char *dir, const dev_cluster *cl) {
        cJSON *o = cJSON_CreateObject(), *agents = cJSON_AddArrayToObject(o, "agents");
        int r;

        cJSON_AddStringToObject(o, "dir", dir);
        cJSON_AddStringToObject(o, "socket", cl->socket);
        cJSON_AddNumberToObject(o, "port", cl->port);
        cJSON_AddNumberToObject(o, "controller_pid", cl->controller.pid);
        cJSON_AddBoolToObject(o, "controller_kept", cl->controller.kept);
        for (size_t i = 0; agents && i < cl->nagents; i++) {
                cJSON *a = cJSON_CreateObject();
                cJSON_AddStringToObject(a, "name", cl->agents[i].name);
                cJSON_AddNumberToObject(a, "pid", cl->agents[i].pid);
                cJSON_AddBoolToObject(a, "kept", cl->agents[i].kept);
                cJSON_AddItemToArray(agents, a);
        }
        r = fmt_json(o);
        cJSON_Delete(o);
        return r;
}

static void print_up(const cli *c, const char *dir, const dev_cluster *cl) {
        printf("Started a colony cluster in %s:\n", dir);
        printf("  controller  pid %d%s, log %s/%s.log, agents connect to %s\n", (int)cl->controller.pid,
               cl->controller.kept ? " (was running)" : "", dir, DEV_CONTROLLER, cl->agent_address);
        for (size_t i = 0; i < cl->nagents; i++)
                printf("  agent %s  pid %d%s, log %s/%s.log\n", cl->agents[i].name, (int)cl->agents[i].pid,
                       cl->agents[i].kept ? " (was running)" : "", dir, cl->agents[i].name);
        putchar('\n');
        print_nodes(c, cl->nodes);
        printf("\nPoint colony at it and run something:\n"
               "  export COLONY_SOCKET=%s\n"
               "  colony submit --cpus 0.5 --mem 64M -- sleep 30\n"
               "  colony queue; colony show 1; colony nodes\n"
               "Stop it (jobs, processes and cgroups): colony down --dir %s\n",
               cl->socket, dir);
}

/* run_up once the options are in o. */
static int up(cli *c, dev_options *o) {
        char dir[PATH_MAX], prefix[DEV_NAME_MAX + 2], err[ERRLEN];
        dev_cluster cl;
        int r;

        if (cluster_dir(c, dir, sizeof(dir)) < 0)
                return cli_usage_error(c, "--dir: the path is too long");
        if (!o->name_prefix) {
                default_prefix(dir, prefix, sizeof(prefix));
                o->name_prefix = prefix;
        }
        o->dir = dir;
        r = dev_up(o, &cl, err, sizeof(err));
        if (r < 0) {
                cli_error(c, "%s", err);
                if (cl.failed_log[0])
                        dev_print_log_tail(cl.failed_log, LOG_TAIL_LINES, stderr);
        } else if (c->json)
                print_up_json(dir, &cl);
        else
                print_up(c, dir, &cl);
        dev_cluster_free(&cl);
        return r < 0 ? EXIT_FAIL : 0;
}

static int run_up(cli *c, int argc, char **argv) {
        dev_options o = { .timeout_ms = UP_TIMEOUT_MS };
        int r;

        r = parse_up(c, argc, argv, &o);
        if (r < 0)
                r = up(c, &o);
        free((char *)o.config);
        return r;
}

const cli_command cmd_up = { "up", "start a local cluster (controller and agents) in the background", up_usage, false,
                             run_up };

/* ---- down ---- */

static const char down_usage[] =
        "Usage: colony down [--dir DIR] [--json]\n"
        "Stop the local cluster in DIR (default as for colony up): each agent, then the\n"
        "controller, gets SIGTERM and, after 10 s, SIGKILL; an agent that needed SIGKILL or had\n"
        "died gets its cgroups removed. Only processes whose pid file and program name match are\n"
        "signalled. Logs and the database stay. Running it again is harmless.\n";

static const char *how_name(dev_stop_how how) {
        static const char *const names[] = { "stopped", "killed", "not-running", "stuck" };
        return names[how];
}

/* One line about what happened to s; stuck ones go to stderr as errors. */
static void print_stopped(const cli *c, const char *dir, const dev_stopped *s) {
        const char *role = s->agent ? "agent " : "";
        const char *name = s->agent ? s->name : "controller";
        char cleanup[2 * PATH_MAX] = "";

        bool cleaned = s->agent && (s->how == DEV_KILLED || s->how == DEV_NOT_RUNNING);

        if (cleaned && s->cleanup == 0)
                snprintf(cleanup, sizeof(cleanup), "; removed its cgroups");
        else if (cleaned)
                snprintf(cleanup, sizeof(cleanup), "; removing its cgroups failed (see %s/%s.log)", dir, s->name);
        switch (s->how) {
        case DEV_STOPPED: printf("stopped %s%s (pid %d)\n", role, name, (int)s->pid); break;
        case DEV_KILLED:
                printf("killed %s%s (pid %d) after it ignored SIGTERM%s\n", role, name, (int)s->pid, cleanup);
                break;
        case DEV_NOT_RUNNING: printf("%s%s was not running%s\n", role, name, cleanup); break;
        case DEV_STUCK: cli_error(c, "could not stop %s%s (pid %d)", role, name, (int)s->pid); break;
        }
}

static int print_down_json(const char *dir, const dev_stopped *set, size_t n) {
        cJSON *o = cJSON_CreateObject(), *list = cJSON_AddArrayToObject(o, "stopped");
        int r;

        cJSON_AddStringToObject(o, "dir", dir);
        for (size_t i = 0; list && i < n; i++) {
                cJSON *e = cJSON_CreateObject();
                cJSON_AddStringToObject(e, "name", set[i].name);
                cJSON_AddStringToObject(e, "role", set[i].agent ? "agent" : "controller");
                cJSON_AddNumberToObject(e, "pid", set[i].pid);
                cJSON_AddStringToObject(e, "how", how_name(set[i].how));
                if (set[i].agent)
                        cJSON_AddNumberToObject(e, "cleanup", set[i].cleanup);
                cJSON_AddItemToArray(list, e);
        }
        r = fmt_json(o);
        cJSON_Delete(o);
        return r;
}

static int run_down(cli *c, int argc, char **argv) {
        char dir[PATH_MAX], err[ERRLEN];
        dev_stopped *set = NULL;
        bool stuck = false;
        size_t n = 0;
        int o = cli_no_operands(c, argc, argv);

        if (o >= 0)
                return o;
        if (cluster_dir(c, dir, sizeof(dir)) < 0)
                return cli_usage_error(c, "--dir: the path is too long");
        if (dev_down(dir, &set, &n, err, sizeof(err)) < 0) {
                cli_error(c, "%s", err);
                return EXIT_FAIL;
        }
        for (size_t i = 0; i < n; i++) {
                stuck = stuck || set[i].how == DEV_STUCK;
                if (!c->json)
                        print_stopped(c, dir, &set[i]);
        }
        if (c->json)
                print_down_json(dir, set, n);
        else if (n == 0)
                printf("nothing to stop in %s\n", dir);
        free(set);
        return stuck ? EXIT_FAIL : 0;
}

const cli_command cmd_down = { "down", "stop a local cluster started with colony up", down_usage, false, run_down };
