/* agentconf.h - colony-agent's options and configuration file (agentconf.c): the command line,
 * the [agent] section of the config file under it, and the daemon's settings they make. */
#pragma once
#include "agent.h"
#include "config.h"
#include <stdbool.h>
#include <stddef.h>

#define EXIT_USAGE 2

typedef struct options {
        const char *controller, *secret_file, *name, *config_path, *state_dir;
        const char *tls_ca, *tls_cert, *tls_key, *tls_server_name;        /* TLS to the controller when tls_ca is set */
        const char *cpus, *mem, *pids, *default_pids, *launch_timeout_ms; /* as typed; parsed after merging */
        int log_level;
        const char *scope; /* --scope: the transient unit to run in, where one is needed */
        bool cleanup, stop_jobs_on_exit, stop_scope;
        const char *kill_wait;                     /* as typed */
        const char *features;                      /* --features or agent.features */
        bool no_cpuset;                            /* --no-cpuset or agent.cpuset = no */
        const char *gpus, *gpu_devices, *gpu_type; /* --gpus N, --gpu-devices LIST, --gpu-type T, or agent.* */
        const char *nvml_library; /* --nvml-library PATH or agent.nvml_library; NULL: NVML's own name */
} options;

/* Parse argv into o. Returns 0, 1 when --help was shown, or -EINVAL (message printed). */
int parse_argv(int argc, char **argv, options *o);
/* Load the config file (if any) into cfg and merge it under the command line: o's unset
 * strings then point into cfg. Returns 0 or -errno with a message. */
int load_config(options *o, config *cfg, char *err, size_t errlen);
/* The agent name: as given, or the short hostname, into buf. Returns 0 or -errno with err. */
int resolve_name(const char *given, char *buf, size_t len, char *err, size_t errlen);
/* The state directory: as given (absolute), or /run/colony/<name>, into buf. Returns 0 or
 * -errno with err. */
int resolve_state_dir(const char *given, const char *name, char *buf, size_t len, char *err, size_t errlen);
/* The daemon's settings from options (merged with cfg). Returns an exit status: 0, EXIT_USAGE
 * or 1, with the reason in err. *secret is the caller's to free. */
int configure(const options *o, const config *cfg, agent_config *ac, char **secret, char *err, size_t errlen);
