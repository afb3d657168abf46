/* devcluster.h - a local cluster in one directory, for development, tests and the demo: a
 * controller and N agents started in the background, found again through their pid files,
 * and stopped without ever signalling a process that is not theirs.
 *
 * DIR (0711 when up makes it) holds: secret, controller.db (and its -wal and -shm), controller.port
 * and the logs, all 0600; controller.sock (0666) and the pid files (0644); per agent
 * agent-<name>.pid, <name>.log and its state directory agent-<name>.state. */
#pragma once
#include <cjson/cJSON.h>
#include <limits.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#define DEV_NAME_MAX   64 /* an agent name: [A-Za-z0-9_.-]{1,64} */
#define DEV_CONTROLLER "controller"

typedef struct dev_options {
        const char *dir;               /* absolute */
        int agents;                    /* >= 1, or 0: one for a new cluster, none more for one that runs */
        const char *agent_cpus;        /* each agent's --cpus as typed, or NULL (the host's) */
        const char *agent_mem;         /* each agent's --mem as typed, or NULL */
        const char *name_prefix;       /* agents are named <prefix>1 .. <prefix>N */
        const char *order;             /* the controller's --order, or NULL */
        const char *config;            /* the controller's --config (absolute), or NULL */
        const char *listen_host;       /* the address agents connect to, or NULL for 127.0.0.1 */
        const char *agent_timeout_ms;  /* the controller's --agent-timeout-ms as typed, or NULL */
        const char *launch_timeout_ms; /* each agent's --launch-timeout-ms as typed, or NULL */
        int timeout_ms;                /* until every agent is up */
        const char *kill_wait;         /* each agent's --kill-wait as typed, or NULL */
        /* --features of the agents: the i-th agent gets the i-th, the agents past them the last;
         * none when nagent_features is 0 */
        const char *const *agent_features;
        size_t nagent_features;
        bool agent_no_cpuset;          /* the agents' --no-cpuset: whole-CPU jobs get a quota only */
        const char *agent_gpu_devices; /* the agents' GPUs' device nodes as typed, or NULL (found on the
                                        * host): split among the agents (gpushare.h) */
        const char *agent_gpu_type;    /* each agent's --gpu-type, or NULL */
} dev_options;

typedef struct dev_daemon {
        char name[DEV_NAME_MAX + 1]; /* agent name, or DEV_CONTROLLER */
        pid_t pid;
        bool kept;     /* it ran already: up kept it rather than starting it */
        bool replaces; /* started in place of a dead agent, whose jobs it takes over */
} dev_daemon;

typedef struct dev_cluster {
        char socket[PATH_MAX];
        char agent_address[64]; /* where agents connect: "HOST:PORT" */
        uint16_t port;
        dev_daemon controller;
        dev_daemon *agents; /* nagents entries */
        size_t nagents;
        cJSON *nodes;              /* the "nodes" reply that showed every agent up */
        char failed_log[PATH_MAX]; /* after a failure: the log that should say why, or "" */
} dev_cluster;

/* Start a cluster as o says and wait until every agent is up. When o->dir's pid files name
 * daemons, those that run are kept (kept set) and those that died are started again with their
 * names (the agents then adopt the jobs their predecessors left), beside the agents o asks for;
 * a controller started again listens on the port the kept agents know. On failure everything
 * it started is stopped again and err says why, cl->failed_log names the log to read. Returns
 * 0 or -errno; free cl with dev_cluster_free either way. */
int dev_up(const dev_options *o, dev_cluster *cl, char *err, size_t errlen);
void dev_cluster_free(dev_cluster *cl);

typedef enum dev_stop_how {
        DEV_STOPPED,     /* ended on SIGTERM */
        DEV_KILLED,      /* needed SIGKILL */
        DEV_NOT_RUNNING, /* its pid file named no live process of its program */
        DEV_STUCK,       /* could not be ended (permission, or it survived SIGKILL) */
} dev_stop_how;

typedef struct dev_stopped {
        char name[DEV_NAME_MAX + 1];
        bool agent;
        pid_t pid; /* from the pid file; 0 when it held none */
        dev_stop_how how;
        int cleanup; /* agents: exit status of `colony-agent --cleanup`, -1 when not run */
} dev_stopped;

/* Stop what dir's pid files name, agents first: SIGTERM, up to 10 s, then SIGKILL; an agent
 * that needed SIGKILL or was already dead gets `colony-agent --cleanup` so its cgroups go.
 * Removes the pid files, the socket and the port file; keeps logs, database and secret.
 * Returns 0 with *out (n entries, caller frees) or -errno with err; an entry DEV_STUCK means
 * something is still running. A missing dir is nothing to stop. */
int dev_down(const char *dir, dev_stopped **out, size_t *n, char *err, size_t errlen);

/* Print the last lines of a log file to f, indented, under a heading naming it. */
void dev_print_log_tail(const char *path, int lines, FILE *f);

/* Path of program next to this executable, else in install_dir. Returns 0 or -ENOENT. */
int dev_find_program(const char *name, const char *install_dir, char *out, size_t len);
