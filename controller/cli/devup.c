/* devup.c - colony up's half of a local cluster: plan it from its directory's pid files, start the
 * controller and the agents that do not run, and wait until every agent is up (devcluster.h). */
#include "devcluster.h"
#include "devdir.h"
#include "clock.h"
#include "agentunit.h"
#include "cli.h"
#include "client.h"
#include "fileio.h"
#include "gpufind.h"
#include "gpushare.h"
#include "proto.h"
#include "units.h"
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#ifndef COLONY_SBINDIR
#error "COLONY_SBINDIR must be defined by the build"
#endif

#define NODES_POLL_MS 100
#define SECRET_BYTES  32

/* Whether e, from a pid file, names a live daemon of its program. */
static bool entry_runs(const dev_stopped *e) { return dev_is_running(e->pid, e->agent ? AGENT_PROG : CONTROLLER_PROG); }

/* Create dir, 0711: other users reach the socket by its name but can list nothing (each file
 * in it is 0600 but the socket, the pid files and what jobs write); or read the pid files of
 * the existing one into *set (n entries, the caller frees). Returns 0 or -errno with err. */
static int prepare_dir(const char *dir, dev_stopped **set, size_t *n, char *err, size_t errlen) {
        int r;

        *set = NULL;
        *n = 0;
        if (access(dir, F_OK) < 0) {
                r = file_mkdir_p(dir, 0711);
                if (r == 0 && chmod(dir, 0711) < 0)
                        r = -errno;
                if (r < 0)
                        snprintf(err, errlen, "cannot create %s: %s", dir, strerror(-r));
                return r;
        }
        r = dev_read_pid_files(dir, set, n);
        if (r < 0)
                snprintf(err, errlen, "cannot read %s: %s", dir, strerror(-r));
        return r;
}

/* A new cluster secret: 32 random bytes as hex, mode 0600. */
static int write_secret(const char *dir, char *err, size_t errlen) {
        unsigned char raw[SECRET_BYTES];
        char hex[2 * SECRET_BYTES + 2], path[PATH_MAX];
        int r = 0;

        if (getrandom(raw, sizeof(raw), 0) != (ssize_t)sizeof(raw))
                r = -errno;
        for (size_t i = 0; r == 0 && i < sizeof(raw); i++)
                snprintf(hex + 2 * i, 3, "%02x", raw[i]);
        strcpy(hex + 2 * SECRET_BYTES, "\n");
        dev_file_path(path, dir, "secret");
        /* A fresh file, so that an old one's wider mode is not kept. */
        if (r == 0 && unlink(path) < 0 && errno != ENOENT)
                r = -errno;
        if (r == 0)
                r = file_write(path, hex, 0600);
        if (r < 0)
                snprintf(err, errlen, "cannot write the secret %s: %s", path, strerror(-r));
        return r;
}

/* The port the controller's port file names, or 0 when there is none. */
static uint16_t read_port_file(const char *path) { return (uint16_t)dev_read_number_file(path, UINT16_MAX); }

/* Wait for the controller's port file. Returns 0 or -errno with err and cl->failed_log. */
static int wait_port(const char *dir, dev_cluster *cl, int64_t deadline, char *err, size_t errlen) {
        char path[PATH_MAX], how[64];

        dev_file_path(path, dir, "controller.port");
        for (;;) {
                if (cli_interrupted) {
                        snprintf(err, errlen, "interrupted");
                        return -EINTR;
                }
                if ((cl->port = read_port_file(path)) > 0)
                        return 0;
                if (dev_child_exited(cl->controller.pid, how, sizeof(how))) {
                        snprintf(err, errlen, "%s %s before it wrote %s", CONTROLLER_PROG, how, path);
                        break;
                }
                if (clock_mono_ms() > deadline) {
                        snprintf(err, errlen, "%s did not write %s in time", CONTROLLER_PROG, path);
                        break;
                }
                dev_sleep_ms(POLL_MS);
        }
        dev_log_path(cl->failed_log, dir, DEV_CONTROLLER);
        return -ETIMEDOUT;
}

/* The database and its SQLite companions made 0600, should an older colony have left them
 * wider: they hold every job's environment. */
static int make_db_private(const char *db, char *err, size_t errlen) {
        static const char *const suffixes[] = { "", "-wal", "-shm", NULL };
        char path[PATH_MAX];

        for (size_t i = 0; suffixes[i]; i++) {
                snprintf(path, sizeof(path), "%s%s", db, suffixes[i]);
                if (chmod(path, 0600) < 0 && errno != ENOENT) {
                        snprintf(err, errlen, "cannot make %s private: %s", path, strerror(errno));
                        return -errno;
                }
        }
        return 0;
}

/* Start the controller, on port for agents (0: any). */
static int start_controller(const dev_options *o, const char *prog, uint16_t port_wanted, dev_cluster *cl,
                            int64_t deadline, char *err, size_t errlen) {
        char port[PATH_MAX], secret[PATH_MAX], db[PATH_MAX], log[PATH_MAX], listen[64];
        const char *argv[16] = { prog, "--socket",      cl->socket, "--agent-listen", listen, "--port-file",
                                 port, "--secret-file", secret,     "--database",     db };
        size_t n = 11;
        int r;

        snprintf(listen, sizeof(listen), "%s:%u", o->listen_host ? o->listen_host : "127.0.0.1", (unsigned)port_wanted);
        if (o->order)
                argv[n++] = "--order", argv[n++] = o->order;
        if (o->config)
                argv[n++] = "--config", argv[n++] = o->config;
        if (o->agent_timeout_ms)
                argv[n++] = "--agent-timeout-ms", argv[n++] = o->agent_timeout_ms;
        argv[n] = NULL;

        dev_file_path(port, o->dir, "controller.port");
        dev_file_path(secret, o->dir, "secret");
        dev_file_path(db, o->dir, "controller.db");
        dev_log_path(log, o->dir, DEV_CONTROLLER);
        dev_remove_endpoints(o->dir);
        r = make_db_private(db, err, errlen);
        if (r == 0)
                r = dev_start_program(argv, true, log, &cl->controller.pid, err, errlen);
        if (r == 0)
                r = dev_write_pid_file(o->dir, &cl->controller, false, err, errlen);
        if (r == 0)
                r = wait_port(o->dir, cl, deadline, err, errlen);
        return r;
}

/* Add agent name to cl->agents unless it is there; pid > 0: it runs already and is kept;
 * replaces: a pid file names it, but it died. */
static void add_agent(dev_cluster *cl, const char *name, pid_t pid, bool replaces) {
        for (size_t i = 0; i < cl->nagents; i++)
                if (strcmp(cl->agents[i].name, name) == 0)
                        return;
        cl->agents[cl->nagents] = (dev_daemon){ .pid = pid, .kept = pid > 0, .replaces = replaces && pid == 0 };
        snprintf(cl->agents[cl->nagents++].name, sizeof(cl->agents[0].name), "%s", name);
}

/* The cluster that up makes of dir's pid files (set): what runs is kept, what died is started
 * again with its name, then the agents o asks for that are not among them (by default, one
 * for a new cluster and none for one that has agents: `colony up --dir DIR` restarts DIR's
 * cluster as it was). Returns 0 or -ENOMEM. */
static int plan_cluster(const dev_options *o, const dev_stopped *set, size_t n, dev_cluster *cl) {
        char name[DEV_NAME_MAX + 1];
        bool had_agents = false;
        int want = o->agents;

        for (size_t i = 0; i < n; i++)
                had_agents |= set[i].agent;
        if (want == 0)
                want = had_agents ? 0 : 1;
        cl->agents = calloc(n + (size_t)want, sizeof(*cl->agents));
        if (!cl->agents)
                return -ENOMEM;
        snprintf(cl->controller.name, sizeof(cl->controller.name), DEV_CONTROLLER);
        for (size_t i = 0; i < n; i++) {
                pid_t pid = entry_runs(&set[i]) ? set[i].pid : 0;
                if (set[i].agent)
                        add_agent(cl, set[i].name, pid, true);
                else
                        cl->controller = (dev_daemon){ .name = DEV_CONTROLLER, .pid = pid, .kept = pid > 0 };
        }
        for (int i = 0; i < want; i++) {
                snprintf(name, sizeof(name), "%s%d", o->name_prefix, i + 1);
                add_agent(cl, name, 0, false);
        }
        return 0;
}

/* The GPUs the agents share: those --agent-gpu-devices names, else those found on the host.
 * Returns 0, or -errno with err. */
static int cluster_gpus(const dev_options *o, gpus *g, char *err, size_t errlen) {
        char why[256];
        int r = o->agent_gpu_devices ? gpufind_paths(g, o->agent_gpu_devices, why, sizeof(why))
                                     : gpufind_host(g, "/dev", why, sizeof(why));
        if (r < 0)
                snprintf(err, errlen, "the agents' GPUs: %s", why);
        return r;
}

/* The options of up that agent i passes on (its resources, timeouts and features), added to argv
 * from k. Returns argv's new length. */
static size_t agent_options(const dev_options *o, size_t i, const char *argv[], size_t k) {
        const char *const passed[][2] = {
                { "--cpus", o->agent_cpus },
                { "--mem", o->agent_mem },
                { "--launch-timeout-ms", o->launch_timeout_ms },
                { "--kill-wait", o->kill_wait },
                { "--features",
                  o->nagent_features ? o->agent_features[i < o->nagent_features ? i : o->nagent_features - 1] : NULL },
        };

        for (size_t p = 0; p < sizeof(passed) / sizeof(passed[0]); p++)
                if (passed[p][1]) { /* up's option as typed, or none: the agent's default */
                        argv[k++] = passed[p][0];
                        argv[k++] = passed[p][1];
                }
        if (o->agent_no_cpuset)
                argv[k++] = "--no-cpuset";
        return k;
}

/* Start agent i of cl, whose GPUs are its share of all, with the cluster's secret file. Returns 0,
 * or -errno with err. */
static int start_agent(const dev_options *o, const char *prog, dev_cluster *cl, size_t i, const gpus *all,
                       const char *secret, char *err, size_t errlen) {
        char log[PATH_MAX], state[PATH_MAX], unit[DEV_NAME_MAX + 32];
        char share[GPUS_MAX * (GPUS_PATH_MAX + 1)];
        dev_daemon *a = &cl->agents[i];
        /* `colony down` must leave nothing behind: the agents kill their jobs on SIGTERM. The rest
         * of argv is for the options added below, and the NULL that ends it. */
        const char *argv[28] = {
                prog,   "--name",      a->name, "--controller",        cl->agent_address, "--secret-file",
                secret, "--state-dir", state,   "--stop-jobs-on-exit", "--scope",         unit
        };
        size_t k = agent_options(o, i, argv, 12);
        int r;

        /* each agent its own share of the GPUs, none of them offered twice */
        if ((r = gpushare_of(all, i, cl->nagents, share, sizeof(share))) < 0) {
                snprintf(err, errlen, "agent %s: its GPUs' paths are too long", a->name);
                return r;
        }
        argv[k++] = *share ? "--gpu-devices" : "--gpus";
        argv[k++] = *share ? share : "0";
        if (o->agent_gpu_type) {
                argv[k++] = "--gpu-type";
                argv[k++] = o->agent_gpu_type;
        }
        dev_log_path(log, o->dir, a->name);
        dev_state_path(state, o->dir, a->name);
        agent_unit_name(unit, sizeof(unit), o->dir, a->name);
        r = dev_start_program(argv, false, log, &a->pid, err, errlen);
        return r == 0 ? dev_write_pid_file(o->dir, a, true, err, errlen) : r;
}

/* Start the agents of cl that do not run. */
static int start_agents(const dev_options *o, const char *prog, dev_cluster *cl, char *err, size_t errlen) {
        char secret[PATH_MAX];
        static gpus all; /* large: not on the stack */
        int r = cluster_gpus(o, &all, err, errlen);

        dev_file_path(secret, o->dir, "secret");
        snprintf(cl->agent_address, sizeof(cl->agent_address), "%s:%u", o->listen_host ? o->listen_host : "127.0.0.1",
                 (unsigned)cl->port);
        for (size_t i = 0; r == 0 && i < cl->nagents; i++)
                if (!cl->agents[i].kept)
                        r = start_agent(o, prog, cl, i, &all, secret, err, errlen);
        return r;
}

/* How many of cl's agents a "nodes" reply shows up. */
static size_t count_up(const cJSON *reply, const dev_cluster *cl) {
        const cJSON *nodes = cJSON_GetObjectItemCaseSensitive(reply, "nodes"), *node;
        char perr[PROTO_ERRLEN];
        size_t up = 0;

        cJSON_ArrayForEach(node, nodes) {
                const char *name = NULL, *state = NULL;
                if (proto_get_str(node, "name", &name, perr) < 0 || proto_get_str(node, "state", &state, perr) < 0 ||
                    !name || !state || strcmp(state, "up") != 0)
                        continue;
                for (size_t i = 0; i < cl->nagents; i++)
                        up += strcmp(cl->agents[i].name, name) == 0;
        }
        return up;
}

/* A daemon of cl that has died, named in err (an agent with its log's last line: its reason) and
 * its log in failed_log. Returns 0 or -ECHILD. */
static int check_alive(const char *dir, dev_cluster *cl, char *err, size_t errlen) {
        char how[64], tail[1024];

        if (dev_child_exited(cl->controller.pid, how, sizeof(how))) {
                snprintf(err, errlen, "%s %s", CONTROLLER_PROG, how);
                dev_log_path(cl->failed_log, dir, DEV_CONTROLLER);
                return -ECHILD;
        }
        for (size_t i = 0; i < cl->nagents; i++)
                if (dev_child_exited(cl->agents[i].pid, how, sizeof(how))) {
                        dev_log_path(cl->failed_log, dir, cl->agents[i].name);
                        /* Its last words, in the same line: they say why, and what to do. */
                        const char *last = dev_log_tail(cl->failed_log, 1, tail, sizeof(tail)), *why;
                        if (last && (why = strstr(last, " error: ")))
                                last = why + 8;
                        snprintf(err, errlen, "%s %s %s%s%s", AGENT_PROG, cl->agents[i].name, how, last ? ": " : "",
                                 last ? last : "");
                        return -ECHILD;
                }
        return 0;
}

/* Poll "nodes" until every agent is up. Returns 0 (cl->nodes set) or -errno with err. */
static int wait_agents_up(const char *dir, dev_cluster *cl, int64_t deadline, char *err, size_t errlen) {
        char cerr[256] = "";
        size_t up = 0;
        int r;

        for (;;) {
                if (cli_interrupted) {
                        snprintf(err, errlen, "interrupted");
                        return -EINTR;
                }
                r = check_alive(dir, cl, err, errlen);
                if (r < 0)
                        return r;
                cJSON_Delete(cl->nodes);
                cl->nodes = NULL;
                if (client_simple(cl->socket, "nodes", 0, "nodes", NODES_POLL_MS * 10, &cl->nodes, cerr,
                                  sizeof(cerr)) == 0 &&
                    (up = count_up(cl->nodes, cl)) == cl->nagents)
                        return 0;
                if (clock_mono_ms() > deadline)
                        break;
                dev_sleep_ms(NODES_POLL_MS);
        }
        if (!cl->nodes) {
                snprintf(err, errlen, "the controller did not answer in time: %s", cerr);
                dev_log_path(cl->failed_log, dir, DEV_CONTROLLER);
        } else {
                snprintf(err, errlen, "only %zu of %zu agents came up in time", up, cl->nagents);
                dev_log_path(cl->failed_log, dir, cl->agents[0].name);
        }
        return -ETIMEDOUT;
}

/* Stop what dev_up started, and nothing else: neither what it kept nor what it never started.
 * An agent started in place of a dead one is killed as that one was, its pid file kept: the
 * jobs both left run on (in its scope, where there is one) until an up that succeeds adopts
 * them or a down ends them. */
static void abort_up(const char *dir, const dev_cluster *cl) {
        dev_stopped *set = calloc(cl->nagents + 1, sizeof(*set));
        size_t n = 0;

        if (!set)
                return;
        for (size_t i = 0; i < cl->nagents; i++)
                if (cl->agents[i].pid > 0 && cl->agents[i].replaces) {
                        dev_stopped e = { .agent = true, .pid = cl->agents[i].pid, .cleanup = -1 };
                        dev_signal_entry(&e, AGENT_PROG, SIGKILL, DEV_KILLED);
                } else if (cl->agents[i].pid > 0 && !cl->agents[i].kept) {
                        set[n] = (dev_stopped){ .agent = true, .pid = cl->agents[i].pid, .cleanup = -1 };
                        snprintf(set[n++].name, sizeof(set[0].name), "%s", cl->agents[i].name);
                }
        dev_stop_set(dir, set, n, AGENT_PROG);
        if (cl->controller.pid > 0 && !cl->controller.kept) {
                set[0] = (dev_stopped){ .pid = cl->controller.pid, .cleanup = -1 };
                snprintf(set[0].name, sizeof(set[0].name), DEV_CONTROLLER);
                dev_stop_set(dir, set, 1, CONTROLLER_PROG);
                dev_remove_endpoints(dir);
        }
        free(set);
}

/* Both daemons' paths, before anything is written. */
static int find_daemons(char controller[PATH_MAX], char agent[PATH_MAX], char *err, size_t errlen) {
        const char *missing = NULL;

        if (dev_find_program(CONTROLLER_PROG, COLONY_SBINDIR, controller, PATH_MAX) < 0)
                missing = CONTROLLER_PROG;
        else if (dev_find_program(AGENT_PROG, COLONY_SBINDIR, agent, PATH_MAX) < 0)
                missing = AGENT_PROG;
        if (missing)
                snprintf(err, errlen, "cannot find %s next to colony or in %s", missing, COLONY_SBINDIR);
        return missing ? -ENOENT : 0;
}

/* The port the controller must listen on for agents: the one the surviving agents of cl were
 * given, else any (0). */
static uint16_t port_for_agents(const char *dir, const dev_cluster *cl) {
        char path[PATH_MAX];

        for (size_t i = 0; i < cl->nagents; i++)
                if (cl->agents[i].kept) {
                        dev_file_path(path, dir, "controller.port");
                        return read_port_file(path);
                }
        return 0;
}

/* Whether any daemon of cl runs already. */
static bool any_kept(const dev_cluster *cl) {
        for (size_t i = 0; i < cl->nagents; i++)
                if (cl->agents[i].kept)
                        return true;
        return cl->controller.kept;
}

int dev_up(const dev_options *o, dev_cluster *cl, char *err, size_t errlen) {
        int64_t deadline = clock_mono_ms() + o->timeout_ms;
        char controller[PATH_MAX], agent[PATH_MAX];
        dev_stopped *set = NULL;
        size_t n = 0;
        int r;

        *cl = (dev_cluster){ 0 };
        dev_file_path(cl->socket, o->dir, "controller.sock");
        r = find_daemons(controller, agent, err, errlen);
        if (r == 0)
                r = prepare_dir(o->dir, &set, &n, err, errlen);
        if (r == 0 && (r = plan_cluster(o, set, n, cl)) < 0)
                snprintf(err, errlen, "out of memory");
        free(set);
        /* The daemons that run know the secret there. */
        if (r == 0 && !any_kept(cl))
                r = write_secret(o->dir, err, errlen);
        if (r < 0)
                return r;
        if (cl->controller.kept)
                r = wait_port(o->dir, cl, deadline, err, errlen);
        else
                r = start_controller(o, controller, port_for_agents(o->dir, cl), cl, deadline, err, errlen);
        if (r == 0)
                r = start_agents(o, agent, cl, err, errlen);
        if (r == 0)
                r = wait_agents_up(o->dir, cl, deadline, err, errlen);
        if (r < 0)
                abort_up(o->dir, cl);
        return r;
}

void dev_cluster_free(dev_cluster *cl) {
        free(cl->agents);
        cJSON_Delete(cl->nodes);
        *cl = (dev_cluster){ 0 };
}
