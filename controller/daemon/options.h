/* options.h - colony-controller's options: the command line, the config file's [controller]
 * keys and their defaults (colony-controller(8), colony.conf(5)). */
#pragma once
#include "config.h"
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct options {
        const char *config, *socket, *agent_listen, *port_file, *secret_file, *database, *log_level;
        const char *http_listen, *http_port_file; /* the HTTP side is off while http_listen is NULL */
        const char *tls_cert, *tls_key, *tls_ca;  /* TLS on the agent listener when tls_cert is set */
        int64_t heartbeat_ms, agent_timeout_ms, node_lost_timeout_ms, max_pending, kill_grace_ms, max_pending_per_user,
                max_pending_per_dept;
        int sync_commits; /* -1: unset (yes) */
        const char *policy, *order, *fairness;
        int64_t default_time_usec, max_time_usec; /* jobs' time limits from the config; 0: none */
        bool keep_invalid_depend;                 /* kill_invalid_depend = no */
        /* clients on other hosts (remote.h): off while client_listen is NULL */
        const char *client_listen, *client_port_file, *submit_hosts, *trusted_root_hosts, *munge_socket;
        int64_t max_running_per_user, max_running_per_dept, max_mcpu_per_user; /* running limits; 0: none */
} options;

/* Options with every number and switch unset, as parse_args and apply_config expect them. */
#define OPTIONS_UNSET                                                                                                  \
        {                                                                                                              \
                .heartbeat_ms = -1, .agent_timeout_ms = -1, .node_lost_timeout_ms = -1, .max_pending = -1,             \
                .kill_grace_ms = -1, .max_pending_per_user = -1, .max_pending_per_dept = -1, .sync_commits = -1        \
        }

/* Read argv into o (its strings borrow from argv); --help prints the usage and exits. Returns 0
 * or -EINVAL after a message on stderr. */
int options_parse_args(int argc, char **argv, options *o);
/* Load o->config into cfg (the caller's to config_free) and fill what o leaves unset from it.
 * Returns 0 or -errno with err. */
int options_apply_config(options *o, config *cfg, char *err, size_t errlen);
/* Fill what o still leaves unset with the built-in defaults. */
void options_set_defaults(options *o);
/* "hdrf" etc. into a fair_algo, "none" into -1. Returns 0 or -EINVAL. */
int options_parse_fairness(const char *name, int *out);
