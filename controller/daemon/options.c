/* options.c - colony-controller's options from its command line and config file (see options.h). */
#include "options.h"
#include "fair.h"
#include "units.h"
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void usage(FILE *f) {
        fputs("usage: colony-controller --secret-file PATH [--config FILE] [--socket PATH]\n"
              "         [--agent-listen HOST:PORT] [--port-file PATH] [--database PATH]\n"
              "         [--policy NAME] [--order fifo|backfill|reserve] [--fairness hdrf|mch|drf|wdrf|c-ch|m-ch|none]\n"
              "         [--heartbeat-ms N] [--agent-timeout-ms N] [--node-lost-timeout-ms N]\n"
              "         [--max-pending N] [--kill-grace-ms N] [--log-level error|warning|notice|info|debug]\n"
              "         [--http-listen HOST:PORT] [--http-port-file PATH]\n"
              "         [--tls-cert PEM --tls-key PEM [--tls-ca PEM]]\n"
              "The central colony daemon: clients on the Unix socket, agents on the TCP listener.\n"
              "See colony-controller(8).\n",
              f);
}

static const char *const config_keys[] = {
        "controller.socket",
        "controller.agent_listen",
        "controller.port_file",
        "controller.secret_file",
        "controller.database",
        "controller.heartbeat_ms",
        "controller.agent_timeout_ms",
        "controller.node_lost_timeout_ms",
        "controller.max_pending",
        "controller.max_pending_per_user",
        "controller.max_pending_per_dept",
        "controller.kill_grace_ms",
        "controller.policy",
        "controller.order",
        "controller.log_level",
        "controller.http_listen",
        "controller.http_port_file",
        "controller.tls_cert",
        "controller.tls_key",
        "controller.tls_ca",
        "controller.fairness",
        "controller.sync_commits",
        "departments.*",
        "department_caps.*",
        "department_users.*",
        "lotes.window_s",
        "lotes.max_classes",
        "lotes.drift_percent",
        "lotes_classes.*",
        "controller.default_time",
        "controller.max_time",
        "department_default_time.*",
        "department_max_time.*",
        "controller.kill_invalid_depend",
        "controller.client_listen",
        "controller.client_port_file",
        "controller.submit_hosts",
        "controller.trusted_root_hosts",
        "controller.munge_socket",
        "controller.max_running_per_user",
        "controller.max_running_per_dept",
        "controller.max_cpus_per_user",
        NULL,
};

/* The jobs' default and maximum time limits, in Slurm's forms ("60", "2:00:00", "1-0"). */
static int apply_time_limits(options *o, config *cfg, char *err, size_t errlen) {
        const char *keys[] = { "controller.default_time", "controller.max_time" };
        int64_t *outs[] = { &o->default_time_usec, &o->max_time_usec };
        for (size_t i = 0; i < 2; i++) {
                const char *v = config_get(cfg, keys[i]);
                if (v && units_parse_time(v, outs[i]) < 0)
                        return snprintf(err, errlen, "%s: %s: '%s' is not a time limit (like 60, 2:00:00 or 1-0)",
                                        cfg->path, keys[i], v),
                               -EINVAL;
        }
        return 0;
}

/* kill_invalid_depend (yes by default, as Slurm's). */
static int apply_depend_config(options *o, config *cfg, char *err, size_t errlen) {
        bool kill;
        int r = config_get_bool(cfg, "controller.kill_invalid_depend", &kill, err, errlen);
        if (r == 0)
                o->keep_invalid_depend = !kill;
        return r == -ENOENT ? 0 : r;
}

/* The client listener for other hosts and who may use it (remote.h): the file's words only. */
static void apply_remote_config(options *o, const config *cfg) {
        const char **strs[] = { &o->client_listen, &o->client_port_file, &o->submit_hosts, &o->trusted_root_hosts,
                                &o->munge_socket };
        const char *keys[] = { "controller.client_listen", "controller.client_port_file", "controller.submit_hosts",
                               "controller.trusted_root_hosts", "controller.munge_socket" };
        for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
                *strs[i] = config_get(cfg, keys[i]);
}

/* The running limits: jobs per user and per top-level department, CPUs per user ("2", "0.5"). */
static int apply_running_limits(options *o, config *cfg, char *err, size_t errlen) {
        const char *keys[] = { "controller.max_running_per_user", "controller.max_running_per_dept" };
        int64_t *outs[] = { &o->max_running_per_user, &o->max_running_per_dept };
        int r;
        for (size_t i = 0; i < 2; i++)
                if ((r = config_get_uint(cfg, keys[i], 100000000, outs[i], err, errlen)) < 0 && r != -ENOENT)
                        return r;
        const char *cpus = config_get(cfg, "controller.max_cpus_per_user");
        if (cpus && units_parse_cpus(cpus, &o->max_mcpu_per_user) < 0)
                return snprintf(err, errlen,
                                "%s: controller.max_cpus_per_user: '%s' is not a CPU count (like 4 or 0.5)", cfg->path,
                                cpus),
                       -EINVAL;
        return 0;
}

/* Fill options the command line left unset from the config file. */
int options_apply_config(options *o, config *cfg, char *err, size_t errlen) {
        int r;
        if ((r = config_load(o->config, cfg, err, errlen)) < 0 ||
            (r = config_check_keys(cfg, config_keys, err, errlen)) < 0)
                return r;
        const char **strs[] = { &o->socket,   &o->agent_listen, &o->port_file, &o->secret_file, &o->database,
                                &o->policy,   &o->order,        &o->log_level, &o->http_listen, &o->http_port_file,
                                &o->tls_cert, &o->tls_key,      &o->tls_ca,    &o->fairness };
        const char *str_keys[] = { "controller.socket",         "controller.agent_listen", "controller.port_file",
                                   "controller.secret_file",    "controller.database",     "controller.policy",
                                   "controller.order",          "controller.log_level",    "controller.http_listen",
                                   "controller.http_port_file", "controller.tls_cert",     "controller.tls_key",
                                   "controller.tls_ca",         "controller.fairness" };
        for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
                if (!*strs[i])
                        *strs[i] = config_get(cfg, str_keys[i]);
        int64_t *nums[] = { &o->heartbeat_ms,  &o->agent_timeout_ms,     &o->node_lost_timeout_ms, &o->max_pending,
                            &o->kill_grace_ms, &o->max_pending_per_user, &o->max_pending_per_dept };
        const char *num_keys[] = { "controller.heartbeat_ms",         "controller.agent_timeout_ms",
                                   "controller.node_lost_timeout_ms", "controller.max_pending",
                                   "controller.kill_grace_ms",        "controller.max_pending_per_user",
                                   "controller.max_pending_per_dept" };
        for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
                if (*nums[i] < 0 && (r = config_get_uint(cfg, num_keys[i], 100000000, nums[i], err, errlen)) < 0 &&
                    r != -ENOENT)
                        return r;
        if ((r = apply_time_limits(o, cfg, err, errlen)) < 0 || (r = apply_running_limits(o, cfg, err, errlen)) < 0)
                return r;
        bool sync;
        if (o->sync_commits < 0 &&
            (r = config_get_bool(cfg, "controller.sync_commits", &sync, err, errlen)) != -ENOENT) {
                if (r < 0)
                        return r;
                o->sync_commits = sync;
        }
        apply_remote_config(o, cfg);
        return apply_depend_config(o, cfg, err, errlen);
}

static int parse_number(const char *arg, const char *name, int64_t *out) {
        char *end;
        long long v = strtoll(arg, &end, 10);
        if (!*arg || *end || v < 0 || v > 100000000) {
                fprintf(stderr, "colony-controller: %s: '%s' is not a whole number\n", name, arg);
                return -EINVAL;
        }
        *out = v;
        return 0;
}

enum {
        O_SOCKET = 256,
        O_LISTEN,
        O_PORTFILE,
        O_SECRET,
        O_DB,
        O_HB,
        O_TIMEOUT,
        O_LOST,
        O_MAXPEND,
        O_GRACE,
        O_POLICY,
        O_ORDER,
        O_LOG,
        O_HTTP,
        O_HTTP_PORTFILE,
        O_TLS_CERT,
        O_TLS_KEY,
        O_TLS_CA,
        O_FAIR
};
static const struct option longopts[] = {
        { "config", required_argument, NULL, 'c' },
        { "socket", required_argument, NULL, O_SOCKET },
        { "agent-listen", required_argument, NULL, O_LISTEN },
        { "port-file", required_argument, NULL, O_PORTFILE },
        { "secret-file", required_argument, NULL, O_SECRET },
        { "database", required_argument, NULL, O_DB },
        { "heartbeat-ms", required_argument, NULL, O_HB },
        { "agent-timeout-ms", required_argument, NULL, O_TIMEOUT },
        { "node-lost-timeout-ms", required_argument, NULL, O_LOST },
        { "max-pending", required_argument, NULL, O_MAXPEND },
        { "kill-grace-ms", required_argument, NULL, O_GRACE },
        { "policy", required_argument, NULL, O_POLICY },
        { "order", required_argument, NULL, O_ORDER },
        { "log-level", required_argument, NULL, O_LOG },
        { "help", no_argument, NULL, 'h' },
        { "fairness", required_argument, NULL, O_FAIR },
        { "http-listen", required_argument, NULL, O_HTTP },
        { "http-port-file", required_argument, NULL, O_HTTP_PORTFILE },
        { "tls-cert", required_argument, NULL, O_TLS_CERT },
        { "tls-key", required_argument, NULL, O_TLS_KEY },
        { "tls-ca", required_argument, NULL, O_TLS_CA },
        { NULL, 0, NULL, 0 },
};

/* Option c of the command line into o. Returns 0, or -EINVAL (message printed); exits on --help. */
static int take_option(int c, options *o) {
        int r = 0;
        switch (c) {
        case 'c': o->config = optarg; break;
        case O_SOCKET: o->socket = optarg; break;
        case O_LISTEN: o->agent_listen = optarg; break;
        case O_PORTFILE: o->port_file = optarg; break;
        case O_SECRET: o->secret_file = optarg; break;
        case O_DB: o->database = optarg; break;
        case O_POLICY: o->policy = optarg; break;
        case O_ORDER: o->order = optarg; break;
        case O_LOG: o->log_level = optarg; break;
        case O_HTTP: o->http_listen = optarg; break;
        case O_HTTP_PORTFILE: o->http_port_file = optarg; break;
        case O_TLS_CERT: o->tls_cert = optarg; break;
        case O_TLS_KEY: o->tls_key = optarg; break;
        case O_TLS_CA: o->tls_ca = optarg; break;
        case O_FAIR: o->fairness = optarg; break;
        case O_HB: r = parse_number(optarg, "--heartbeat-ms", &o->heartbeat_ms); break;
        case O_TIMEOUT: r = parse_number(optarg, "--agent-timeout-ms", &o->agent_timeout_ms); break;
        case O_LOST: r = parse_number(optarg, "--node-lost-timeout-ms", &o->node_lost_timeout_ms); break;
        case O_MAXPEND: r = parse_number(optarg, "--max-pending", &o->max_pending); break;
        case O_GRACE: r = parse_number(optarg, "--kill-grace-ms", &o->kill_grace_ms); break;
        case 'h': usage(stdout); exit(EXIT_SUCCESS);
        default: usage(stderr); return -EINVAL;
        }
        return r;
}

int options_parse_args(int argc, char **argv, options *o) {
        int c;
        while ((c = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
                int r = take_option(c, o);
                if (r < 0)
                        return r;
        }
        if (optind < argc) {
                fprintf(stderr, "colony-controller: unexpected argument '%s'\n", argv[optind]);
                return -EINVAL;
        }
        return 0;
}

void options_set_defaults(options *o) {
        const char **strs[] = { &o->socket, &o->agent_listen, &o->database, &o->policy,
                                &o->order,  &o->log_level,    &o->fairness };
        const char *defs[] = { "/run/colony/controller.sock",
                               "127.0.0.1:7117",
                               "/var/lib/colony/controller.db",
                               "first-fit",
                               "fifo",
                               "info",
                               fair_algo_name(FAIR_DEFAULT) };
        for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
                if (!*strs[i])
                        *strs[i] = defs[i];
        int64_t *nums[] = { &o->heartbeat_ms,  &o->agent_timeout_ms,     &o->node_lost_timeout_ms, &o->max_pending,
                            &o->kill_grace_ms, &o->max_pending_per_user, &o->max_pending_per_dept };
        const int64_t num_defs[] = { 1000, 5000, 300000, 100000, 3000, 0, 0 };
        for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
                if (*nums[i] < 0)
                        *nums[i] = num_defs[i];
}

/* "hdrf" etc. into a fair_algo, "none" into -1. Returns 0 or -EINVAL. */
int options_parse_fairness(const char *name, int *out) {
        fair_algo a;
        if (strcmp(name, "none") == 0)
                return *out = -1, 0;
        if (fair_algo_from_name(name, &a) < 0)
                return -EINVAL;
        *out = (int)a;
        return 0;
}
