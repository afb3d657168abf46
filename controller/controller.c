/* controller.c - colony-controller: options, start-up, and the event loop's listeners and timers. */
#include "config.h"
#include "fileio.h"
#include "arrays.h"
#include "coloc_dispatch.h"
#include "http.h"
#include "lotes_plan.h"
#include "log.h"
#include "log_journal.h"
#include "net.h"
#include "nofile.h"
#include "remote.h"
#include "server.h"
#include "units.h"
#include <errno.h>
#include <getopt.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

typedef struct options {
        const char *config, *socket, *agent_listen, *port_file, *secret_file, *database, *log_level;
        const char *http_listen, *http_port_file; /* the HTTP side is off while http_listen is NULL */
        const char *tls_cert, *tls_key, *tls_ca; /* TLS on the agent listener when tls_cert is set */
        int64_t heartbeat_ms, agent_timeout_ms, node_lost_timeout_ms, max_pending, kill_grace_ms, max_pending_per_user,
                max_pending_per_dept;
        int sync_commits; /* -1: unset (yes) */
        const char *policy, *order, *fairness;
        int64_t default_time_usec, max_time_usec; /* jobs' time limits from the config; 0: none */
        bool keep_invalid_depend; /* kill_invalid_depend = no */
        /* clients on other hosts (remote.h): off while client_listen is NULL */
        const char *client_listen, *client_port_file, *submit_hosts, *trusted_root_hosts, *munge_socket;
        int64_t max_running_per_user, max_running_per_dept, max_mcpu_per_user; /* running limits; 0: none */
} options;

int64_t server_now(void) {
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

ctl_time server_clock(void) {
        struct timespec ts;
        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (ctl_time){ .real_usec = server_now(), .mono_usec = (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000 };
}

static bool places_by_alpha(const ctl_server *srv) {
        const sched_dispatcher *d = srv->state.cfg.dispatcher;
        return d && strcmp(sched_dispatcher_name(d), "coloc") == 0;
}

void server_set_alpha(ctl_server *srv, alpha_matrix *m) {
        if (places_by_alpha(srv) &&
            coloc_dispatcher_set_alpha(srv->state.cfg.dispatcher, (const char *const *)m->types, m->n, m->alpha) < 0) {
                log_error("coloc: out of memory: still placing by interference matrix version %llu",
                          (unsigned long long)srv->alpha.version);
                alpha_free(m);
                return;
        }
        alpha_free(&srv->alpha);
        srv->alpha = *m;
        *m = (alpha_matrix){ 0 };
        if (places_by_alpha(srv))
                snprintf(srv->policy_status, sizeof(srv->policy_status),
                         "coloc: interference matrix version %llu, %zu types; other types count alpha 1",
                         (unsigned long long)srv->alpha.version, srv->alpha.n);
}

const char *server_policy_status(const ctl_server *srv) {
        return srv->lotes ? ctl_lotes_status(srv->lotes) : srv->policy_status[0] ? srv->policy_status : NULL;
}

static void reschedule(void *userdata) {
        server_schedule(userdata);
}

static int persist_job(void *userdata, const job *j) {
        return server_persist(userdata, j);
}

static void record_event(void *userdata, const ctl_event *e) {
        server_event(userdata, e);
}

static void launch_job(void *userdata, ctl_node *n, const job *j) {
        server_send_launch(userdata, n, j);
}

static void cancel_job(void *userdata, ctl_node *n, const job *j, int grace_ms) {
        server_send_cancel(userdata, n, j, grace_ms);
}

static void job_ended(void *userdata, const job *j) {
        ctl_server *srv = userdata;
        /* coloc weighs a job that gave no estimate by its type's mean run time */
        if (places_by_alpha(srv) && j->state == JOB_COMPLETED && j->start_usec > 0 && j->end_usec > j->start_usec &&
            coloc_dispatcher_note_runtime(srv->state.cfg.dispatcher, j->spec.job_type,
                                          (double)(j->end_usec - j->start_usec) / 1e6) < 0)
                log_warning("coloc: out of memory noting job %llu's run time", (unsigned long long)j->id);
        server_answer_waiters(srv, j);
}

static void drop_link(void *userdata, ctl_node *n, void *link) {
        server_drop_link(userdata, n, link);
}

static int persist_array(void *userdata, const ctl_arec *a) {
        cJSON *o = ctl_arec_to_json(a);
        char *text = o ? proto_print(o) : NULL;
        int r = text ? server_persist_array(userdata, a->first, text) : -ENOMEM;
        cJSON_Delete(o);
        free(text);
        return r;
}

static const ctl_actions actions = {
        .persist = persist_job, .launch = launch_job, .cancel = cancel_job, .terminal = job_ended,
        .drop_link = drop_link, .event = record_event,
};

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
        "controller.socket",      "controller.agent_listen", "controller.port_file",     "controller.secret_file",
        "controller.database",    "controller.heartbeat_ms", "controller.agent_timeout_ms",
        "controller.node_lost_timeout_ms",
        "controller.max_pending", "controller.max_pending_per_user", "controller.max_pending_per_dept",
        "controller.kill_grace_ms", "controller.policy",       "controller.order",
        "controller.log_level",   "controller.http_listen", "controller.http_port_file", "controller.tls_cert",
        "controller.tls_key",     "controller.tls_ca",      "controller.fairness",     "controller.sync_commits",
        "departments.*",
        "department_caps.*",      "department_users.*",     "lotes.window_s",          "lotes.max_classes",
        "lotes.drift_percent",    "lotes_classes.*",
        "controller.default_time", "controller.max_time", "department_default_time.*", "department_max_time.*",
        "controller.kill_invalid_depend",
        "controller.client_listen", "controller.client_port_file", "controller.submit_hosts",
        "controller.trusted_root_hosts", "controller.munge_socket",
        "controller.max_running_per_user", "controller.max_running_per_dept", "controller.max_cpus_per_user",
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
                                        cfg->path, keys[i], v), -EINVAL;
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
                return snprintf(err, errlen, "%s: controller.max_cpus_per_user: '%s' is not a CPU count (like 4 or 0.5)",
                                cfg->path, cpus), -EINVAL;
        return 0;
}

/* Fill options the command line left unset from the config file. */
static int apply_config(options *o, config *cfg, char *err, size_t errlen) {
        int r;
        if ((r = config_load(o->config, cfg, err, errlen)) < 0 || (r = config_check_keys(cfg, config_keys, err, errlen)) < 0)
                return r;
        const char **strs[] = { &o->socket, &o->agent_listen, &o->port_file, &o->secret_file, &o->database,
                                &o->policy, &o->order, &o->log_level, &o->http_listen, &o->http_port_file,
                                &o->tls_cert, &o->tls_key, &o->tls_ca, &o->fairness };
        const char *str_keys[] = { "controller.socket", "controller.agent_listen", "controller.port_file",
                                   "controller.secret_file", "controller.database", "controller.policy",
                                   "controller.order", "controller.log_level", "controller.http_listen",
                                   "controller.http_port_file", "controller.tls_cert", "controller.tls_key",
                                   "controller.tls_ca", "controller.fairness" };
        for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
                if (!*strs[i])
                        *strs[i] = config_get(cfg, str_keys[i]);
        int64_t *nums[] = { &o->heartbeat_ms, &o->agent_timeout_ms, &o->node_lost_timeout_ms, &o->max_pending,
                            &o->kill_grace_ms, &o->max_pending_per_user, &o->max_pending_per_dept };
        const char *num_keys[] = { "controller.heartbeat_ms", "controller.agent_timeout_ms",
                                   "controller.node_lost_timeout_ms", "controller.max_pending",
                                   "controller.kill_grace_ms", "controller.max_pending_per_user",
                                   "controller.max_pending_per_dept" };
        for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
                if (*nums[i] < 0 && (r = config_get_uint(cfg, num_keys[i], 100000000, nums[i], err, errlen)) < 0 &&
                    r != -ENOENT)
                        return r;
        if ((r = apply_time_limits(o, cfg, err, errlen)) < 0 || (r = apply_running_limits(o, cfg, err, errlen)) < 0)
                return r;
        bool sync;
        if (o->sync_commits < 0 && (r = config_get_bool(cfg, "controller.sync_commits", &sync, err, errlen)) != -ENOENT) {
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

static int parse_args(int argc, char **argv, options *o) {
        enum { O_SOCKET = 256, O_LISTEN, O_PORTFILE, O_SECRET, O_DB, O_HB, O_TIMEOUT, O_LOST, O_MAXPEND, O_GRACE,
               O_POLICY, O_ORDER, O_LOG, O_HTTP, O_HTTP_PORTFILE, O_TLS_CERT, O_TLS_KEY, O_TLS_CA, O_FAIR };
        static const struct option longopts[] = {
                { "config", required_argument, NULL, 'c' },   { "socket", required_argument, NULL, O_SOCKET },
                { "agent-listen", required_argument, NULL, O_LISTEN }, { "port-file", required_argument, NULL, O_PORTFILE },
                { "secret-file", required_argument, NULL, O_SECRET }, { "database", required_argument, NULL, O_DB },
                { "heartbeat-ms", required_argument, NULL, O_HB }, { "agent-timeout-ms", required_argument, NULL, O_TIMEOUT },
                { "node-lost-timeout-ms", required_argument, NULL, O_LOST },
                { "max-pending", required_argument, NULL, O_MAXPEND }, { "kill-grace-ms", required_argument, NULL, O_GRACE },
                { "policy", required_argument, NULL, O_POLICY }, { "order", required_argument, NULL, O_ORDER },
                { "log-level", required_argument, NULL, O_LOG }, { "help", no_argument, NULL, 'h' },
                { "fairness", required_argument, NULL, O_FAIR },
                { "http-listen", required_argument, NULL, O_HTTP },
                { "http-port-file", required_argument, NULL, O_HTTP_PORTFILE },
                { "tls-cert", required_argument, NULL, O_TLS_CERT }, { "tls-key", required_argument, NULL, O_TLS_KEY },
                { "tls-ca", required_argument, NULL, O_TLS_CA },
                { NULL, 0, NULL, 0 },
        };
        int c;
        while ((c = getopt_long(argc, argv, "c:h", longopts, NULL)) != -1) {
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
                if (r < 0)
                        return r;
        }
        if (optind < argc) {
                fprintf(stderr, "colony-controller: unexpected argument '%s'\n", argv[optind]);
                return -EINVAL;
        }
        return 0;
}

static void set_defaults(options *o) {
        const char **strs[] = { &o->socket, &o->agent_listen, &o->database, &o->policy, &o->order, &o->log_level,
                                &o->fairness };
        const char *defs[] = { "/run/colony/controller.sock", "127.0.0.1:7117", "/var/lib/colony/controller.db",
                               "first-fit", "fifo", "info", fair_algo_name(FAIR_DEFAULT) };
        for (size_t i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
                if (!*strs[i])
                        *strs[i] = defs[i];
        int64_t *nums[] = { &o->heartbeat_ms, &o->agent_timeout_ms, &o->node_lost_timeout_ms, &o->max_pending,
                            &o->kill_grace_ms, &o->max_pending_per_user, &o->max_pending_per_dept };
        const int64_t num_defs[] = { 1000, 5000, 300000, 100000, 3000, 0, 0 };
        for (size_t i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
                if (*nums[i] < 0)
                        *nums[i] = num_defs[i];
}

/* "hdrf" etc. into a fair_algo, "none" into -1. Returns 0 or -EINVAL. */
static int parse_fairness(const char *name, int *out) {
        fair_algo a;
        if (strcmp(name, "none") == 0)
                return *out = -1, 0;
        if (fair_algo_from_name(name, &a) < 0)
                return -EINVAL;
        *out = (int)a;
        return 0;
}

int server_reload(ctl_server *srv, char *err, size_t errlen) {
        config cfg = { 0 };
        depts fresh;
        options o = { .fairness = srv->fairness_arg, .heartbeat_ms = -1, .agent_timeout_ms = -1,
                      .node_lost_timeout_ms = -1, .max_pending = -1, .kill_grace_ms = -1, .max_pending_per_user = -1,
                      .max_pending_per_dept = -1, .sync_commits = -1, .config = srv->config_path };
        int fairness = srv->state.cfg.fairness, r;
        if (!srv->config_path)
                return snprintf(err, errlen, "the controller was started without --config"), -ENOENT;
        if ((r = apply_config(&o, &cfg, err, errlen)) < 0 || (r = depts_from_config(&cfg, &fresh, err, errlen)) < 0) {
                config_free(&cfg);
                return r;
        }
        if (o.fairness && parse_fairness(o.fairness, &fairness) < 0) {
                snprintf(err, errlen, "%s: controller.fairness: '%s' is not hdrf, mch, drf, wdrf, c-ch, m-ch or none",
                         cfg.path, o.fairness);
                depts_free(&fresh);
                config_free(&cfg);
                return -EINVAL;
        }
        remote_cfg hosts = { 0 }; /* the listener stays; who may use it is read again */
        if (srv->remote &&
            (r = remote_cfg_init(&hosts, o.submit_hosts, o.trusted_root_hosts, o.munge_socket, err, errlen)) < 0) {
                depts_free(&fresh);
                config_free(&cfg);
                return r;
        }
        config_free(&cfg);
        if ((r = jobstore_set_sync(srv->store, o.sync_commits != 0)) < 0) {
                depts_free(&fresh);
                remote_cfg_free(&hosts);
                return snprintf(err, errlen, "the database refused sync_commits"), r;
        }
        if (srv->remote) {
                remote_cfg_free(&srv->remote->cfg);
                srv->remote->cfg = hosts;
        }
        depts_free(&srv->depts);
        srv->depts = fresh; /* the state machine's cfg.depts points here */
        srv->state.cfg.default_time_usec = o.default_time_usec;
        srv->state.cfg.max_time_usec = o.max_time_usec;
        srv->state.cfg.max_running_per_user = (size_t)o.max_running_per_user;
        srv->state.cfg.max_running_per_dept = (size_t)o.max_running_per_dept;
        srv->state.cfg.max_mcpu_per_user = o.max_mcpu_per_user;
        if ((r = ctl_set_depts(&srv->state, fairness)) < 0)
                return snprintf(err, errlen, "out of memory: the fair order is off"), r;
        log_info("reloaded %s: %zu departments, fairness %s", srv->config_path, srv->depts.n,
                 fairness < 0 ? "none" : fair_algo_name(fairness));
        server_send_weights(srv);
        server_schedule(srv);
        return 0;
}

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        char err[512];
        (void)s;
        (void)si;
        int r = server_reload(userdata, err, sizeof(err));
        if (r < 0)
                log_errno(LOG_ERR, r, "SIGHUP: reload refused, the departments stay as they were: %s", err);
        return 0;
}

/* How long a listener rests when the process or the system is out of descriptors (or memory):
 * the pending connection stays in the backlog, so the listener's readiness would otherwise make
 * every turn of the loop fail the same accept. */
#define ACCEPT_BACKOFF_MS 250

typedef struct listener {
        ctl_server *srv;
        const conn_ops *ops;
        const char *what;
        tls_ctx *tls; /* NULL: plain */
        sd_event_source *src, *rest; /* the listening socket; the timer that ends a backoff */
        log_ratelimit accept_failed;
} listener;

static int end_backoff(sd_event_source *s, uint64_t usec, void *userdata) {
        listener *l = userdata;
        (void)s;
        (void)usec;
        return sd_event_source_set_enabled(l->src, SD_EVENT_ON);
}

/* Stop accepting on l for ACCEPT_BACKOFF_MS, logging at most once per accept_failed interval. */
static void back_off(listener *l, int err) {
        unsigned missed;
        int r = sd_event_source_set_enabled(l->src, SD_EVENT_OFF);
        if (r >= 0 && !l->rest)
                r = sd_event_add_time_relative(sd_event_source_get_event(l->src), &l->rest, CLOCK_MONOTONIC,
                                               ACCEPT_BACKOFF_MS * 1000, 0, end_backoff, l);
        else if (r >= 0 && (r = sd_event_source_set_time_relative(l->rest, ACCEPT_BACKOFF_MS * 1000)) >= 0)
                r = sd_event_source_set_enabled(l->rest, SD_EVENT_ONESHOT);
        if (r < 0) { /* without the timer, resting would be for ever */
                (void)sd_event_source_set_enabled(l->src, SD_EVENT_ON);
                log_errno(LOG_ERR, r, "%s listener: cannot back off", l->what);
        }
        if (log_ratelimit_ok(&l->accept_failed, &missed))
                log_errno(LOG_WARNING, err, "accept on the %s listener: resting %d ms each time (%u more failures since "
                          "the last such line)", l->what, ACCEPT_BACKOFF_MS, missed);
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        listener *l = userdata;
        conn *c;
        (void)revents;
        int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
                if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                        back_off(l, -errno);
                else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                        log_errno(LOG_WARNING, -errno, "accept on the %s listener", l->what);
                return 0;
        }
        int r = conn_new(sd_event_source_get_event(s), cfd, l->tls, l->ops, l->srv, &c);
        if (r < 0)
                log_errno(LOG_WARNING, r, "new %s connection", l->what);
        return 0;
}

static int on_tick(sd_event_source *s, uint64_t usec, void *userdata) {
        ctl_server *srv = userdata;
        ctl_check_silence(&srv->state, server_clock());
        ctl_wait_tick(&srv->state, server_now()); /* begin times */
        if (srv->lotes)
                ctl_lotes_tick(srv->lotes, server_now());
        server_schedule(srv);
        server_checkpoint_due(srv);
        /* A time source is one-shot: re-arm it, or silent agents are never noticed again. */
        int r = sd_event_source_set_time(s, usec + (uint64_t)srv->heartbeat_ms * 1000);
        return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int restore_job(void *userdata, job *j) {
        ctl_state *st = &((ctl_server *)userdata)->state;
        job *first = j->array_first && j->array_first != j->id ? ctl_find_job(st, j->array_first) : NULL;
        int r = 0;
        /* an array's batch script is stored with its first job only (jobstore.c, put_job) */
        if (first && first->spec.script && !j->spec.script && !(j->spec.script = strdup(first->spec.script)))
                r = -ENOMEM;
        if (r == 0 && first) /* jobs come in id order: an array's hold their strings once, as when submitted */
                (void)job_share_strings(j, first);
        if (r == 0)
                r = ctl_restore(st, j, server_clock());
        if (r < 0) {
                job_free(j);
                free(j);
        }
        return r;
}

/* An array's record stored before a restart, read before the jobs: its first task, restored,
 * takes it up (ctl_restore). A record that does not parse is logged and skipped: its tasks not
 * made yet are lost, the others kept. */
static int restore_array(void *userdata, const char *text) {
        char err[PROTO_ERRLEN] = "not JSON";
        cJSON *o = cJSON_Parse(text);
        ctl_arec a = { 0 };
        int r = o ? ctl_arec_from_json(o, &a, err) : -EINVAL;
        cJSON_Delete(o);
        if (r == -EINVAL)
                log_error("stored array record skipped: %s", err);
        if (r < 0)
                return r == -EINVAL ? 0 : r;
        if (!ctl_arec_add(&((ctl_server *)userdata)->state, &a)) {
                ctl_arec_free(&a);
                return -ENOMEM;
        }
        return 0;
}

/* A drain stored before a restart: the node stays drained, known down until its agent's hello. */
static int restore_drain(void *userdata, const char *node, const char *reason) {
        ctl_node *n;
        return ctl_node_drain(&((ctl_server *)userdata)->state, node, reason, &n);
}

static int write_port_file(const char *path, uint16_t port) {
        char text[16];
        snprintf(text, sizeof(text), "%u\n", port);
        return file_write(path, text, 0644);
}

static int load_alpha(ctl_server *srv);

/* Open the store, restore its jobs, and read the secret. Returns 0 or -errno (logged). */
static int open_state(ctl_server *srv, const options *o, ctl_lotes_options *lotes) {
        char err[512];
        sched_order order;
        if (sched_order_from_name(o->order, &order) < 0)
                return log_errno(LOG_ERR, -EINVAL, "order must be fifo, backfill or reserve, not '%s'", o->order);
        sched_heuristic policy = SCHED_FIRST_FIT;
        sched_dispatcher *dispatcher = NULL; /* Tetris, Greedy, LoTES: the same seed on every start */
        int r = sched_heuristic_from_name(o->policy, &policy) == 0 ? 0
                : strcmp(o->policy, "lotes") == 0                ? lotes_live_new(1, &dispatcher)
                                                                 : sched_dispatcher_new(o->policy, 1, &dispatcher);
        if (r < 0)
                return log_errno(LOG_ERR, r, r == -EINVAL ? "unknown policy '%s'" : "policy %s", o->policy);
        int fairness;
        if (parse_fairness(o->fairness, &fairness) < 0)
                return log_errno(LOG_ERR, -EINVAL, "fairness must be hdrf, mch, drf, wdrf, c-ch, m-ch or none, not '%s'",
                                 o->fairness);
        if (fairness >= 0 && dispatcher)
                log_info("policy %s keeps submission order: fairness %s does not apply", o->policy, o->fairness);
        ctl_config cfg = { .policy = policy,
                           .dispatcher = dispatcher,
                           .order = order,
                           .max_pending = (size_t)o->max_pending,
                           .max_pending_per_user = (size_t)o->max_pending_per_user,
                           .max_pending_per_dept = (size_t)o->max_pending_per_dept,
                           .kill_grace_ms = (int)o->kill_grace_ms,
                           .agent_timeout_usec = o->agent_timeout_ms * 1000,
                           .node_lost_timeout_usec = o->node_lost_timeout_ms * 1000,
                           .depts = &srv->depts,
                           .default_time_usec = o->default_time_usec,
                           .max_time_usec = o->max_time_usec,
                           .keep_invalid_depend = o->keep_invalid_depend,
                           .max_running_per_user = (size_t)o->max_running_per_user,
                           .max_running_per_dept = (size_t)o->max_running_per_dept,
                           .max_mcpu_per_user = o->max_mcpu_per_user };
        ctl_init(&srv->state, &cfg, &actions, srv);
        srv->state.persist_array = persist_array;
        if ((r = ctl_set_depts(&srv->state, fairness)) < 0)
                return log_errno(LOG_ERR, r, "departments");
        srv->heartbeat_ms = (int)(o->heartbeat_ms ? o->heartbeat_ms : 1);
        r = file_read_small(o->secret_file, 1, &srv->secret);
        if (r == -EPERM)
                return log_errno(LOG_ERR, r, "secret file %s must be readable by its owner only (chmod 600)",
                                 o->secret_file);
        if (r < 0 || !*srv->secret)
                return log_errno(LOG_ERR, r < 0 ? r : -EINVAL, "secret file %s", o->secret_file);
        if ((r = jobstore_open(o->database, &srv->store, err, sizeof(err))) < 0)
                return log_errno(LOG_ERR, r, "%s", err);
        if ((r = jobstore_set_sync(srv->store, o->sync_commits != 0)) < 0)
                return log_errno(LOG_ERR, r, "%s: setting sync_commits", o->database);
        if (o->sync_commits == 0)
                log_msg(LOG_NOTICE, "sync_commits = no: a job is acknowledged once its commit is written, before it reaches "
                           "the disk (a controller crash loses nothing, a power loss may)");
        if ((r = jobstore_load_arrays(srv->store, restore_array, srv)) < 0)
                return log_errno(LOG_ERR, r, "loading arrays from %s", o->database);
        if ((r = jobstore_load(srv->store, restore_job, srv)) < 0)
                return log_errno(LOG_ERR, r, "loading jobs from %s", o->database);
        if ((r = jobstore_load_drains(srv->store, restore_drain, srv)) < 0)
                return log_errno(LOG_ERR, r, "loading drained nodes from %s", o->database);
        if ((r = server_events_open(srv)) < 0)
                return r;
        log_info("restored %zu jobs (%zu pending) from %s", srv->state.njobs, srv->state.npending, o->database);
        if (strcmp(o->policy, "lotes") == 0 &&
            (r = ctl_lotes_new(srv->event, &srv->state, lotes, reschedule, srv, &srv->lotes)) < 0)
                return log_errno(LOG_ERR, r, "lotes: set-up");
        return load_alpha(srv);
}

/* The latest interference matrix from the store, for alpha_get and policy = coloc. */
static int load_alpha(ctl_server *srv) {
        alpha_matrix m = { 0 };
        int r = jobstore_get_alpha(srv->store, 0, &m);
        if (r == -ENOENT) {
                if (places_by_alpha(srv))
                        snprintf(srv->policy_status, sizeof(srv->policy_status),
                                 "coloc: no interference matrix stored (colony measure): every alpha counts 1");
                log_info("%s", places_by_alpha(srv) ? srv->policy_status : "no interference matrix stored");
                return 0;
        }
        if (r < 0)
                return log_errno(LOG_ERR, r, "reading the interference matrix");
        server_set_alpha(srv, &m);
        log_info("interference matrix version %llu loaded: %zu types", (unsigned long long)srv->alpha.version,
                 srv->alpha.n);
        return 0;
}

/* The agent listener's TLS context, or NULL without tls_cert. Returns 0 or -errno (logged). */
static int open_tls(const options *o, tls_ctx **out) {
        char err[TLS_ERRLEN];
        tls_files f = { .cert = o->tls_cert, .key = o->tls_key, .ca = o->tls_ca };
        *out = NULL;
        if (!o->tls_cert && !o->tls_key && !o->tls_ca)
                return 0;
        int r = tls_ctx_new_server(&f, out, err);
        return r < 0 ? log_errno(LOG_ERR, r, "%s", err) : 0;
}

/* The TCP client listener for other hosts, when client_listen is set: TLS when the controller has
 * a certificate (clients are not asked for one: their MUNGE credential says who they are). rs
 * becomes srv->remote. Returns 0 or -errno (logged). */
static int open_remote(ctl_server *srv, const options *o, listener *l, remote_server *rs) {
        char err[512];
        uint16_t port;
        tls_files f = { .cert = o->tls_cert, .key = o->tls_key };
        *l = (listener){ srv, &remote_conn_ops, "remote client", NULL, .accept_failed.interval_usec = LOG_FLOOD_USEC };
        if (!o->client_listen)
                return 0;
        int r = remote_cfg_init(&rs->cfg, o->submit_hosts, o->trusted_root_hosts, o->munge_socket, err, sizeof(err));
        if (r < 0)
                return log_errno(LOG_ERR, r, "%s", err);
        srv->remote = rs;
        if ((r = remote_server_start(rs, srv)) < 0)
                return log_errno(LOG_ERR, r, "client listener: the credentials' thread");
        if (o->tls_cert && (r = tls_ctx_new_server(&f, &l->tls, err)) < 0)
                return log_errno(LOG_ERR, r, "client listener: %s", err);
        int fd = net_listen_tcp(o->client_listen, &port);
        if (fd < 0)
                return log_errno(LOG_ERR, fd, "client listener %s", o->client_listen);
        if ((r = sd_event_add_io(srv->event, &l->src, fd, EPOLLIN, on_accept, l)) < 0) {
                close(fd);
                return log_errno(LOG_ERR, r, "client listener %s", o->client_listen);
        }
        (void)sd_event_source_set_io_fd_own(l->src, 1);
        if (o->client_port_file && (r = write_port_file(o->client_port_file, port)) < 0)
                log_errno(LOG_ERR, r, "port file %s", o->client_port_file);
        log_info("listening: clients of other hosts on %s (port %u%s), MUNGE credentials through %s", o->client_listen,
                 port, l->tls ? ", TLS" : ", no TLS: the network must be trusted",
                 o->munge_socket ? o->munge_socket : "munge's default socket");
        return 0;
}

/* Bind both listeners (and the HTTP one if asked) and add them, the signals and the tick to the
 * loop. */
static int open_listeners(ctl_server *srv, const options *o, listener ls[2]) {
        uint16_t port;
        ls[0] = (listener){ srv, &client_conn_ops, "client", NULL, .accept_failed.interval_usec = LOG_FLOOD_USEC };
        ls[1] = (listener){ srv, &agent_conn_ops, "agent", NULL, .accept_failed.interval_usec = LOG_FLOOD_USEC };
        if (open_tls(o, &ls[1].tls) < 0)
                return -EINVAL;
        int ufd = net_listen_unix(o->socket, 0666);
        if (ufd < 0)
                return log_errno(LOG_ERR, ufd, "client socket %s", o->socket);
        int tfd = net_listen_tcp(o->agent_listen, &port);
        if (tfd < 0) {
                close(ufd);
                return log_errno(LOG_ERR, tfd, "agent listener %s", o->agent_listen);
        }
        int r;
        if (o->port_file && (r = write_port_file(o->port_file, port)) < 0)
                log_errno(LOG_ERR, r, "port file %s", o->port_file);
        if ((r = sd_event_add_io(srv->event, &ls[0].src, ufd, EPOLLIN, on_accept, &ls[0])) < 0 ||
            (r = sd_event_source_set_io_fd_own(ls[0].src, 1)) < 0 ||
            (r = sd_event_add_io(srv->event, &ls[1].src, tfd, EPOLLIN, on_accept, &ls[1])) < 0 ||
            (r = sd_event_source_set_io_fd_own(ls[1].src, 1)) < 0 ||
            (r = sd_event_add_signal(srv->event, NULL, SIGTERM, server_bulk_stop, srv)) < 0 ||
            (r = sd_event_add_signal(srv->event, NULL, SIGINT, server_bulk_stop, srv)) < 0 ||
            (r = sd_event_add_signal(srv->event, NULL, SIGHUP, on_sighup, srv)) < 0 ||
            (r = sd_event_add_time_relative(srv->event, NULL, CLOCK_MONOTONIC, (uint64_t)srv->heartbeat_ms * 1000, 0,
                                            on_tick, srv)) < 0)
                return log_errno(LOG_ERR, r, "event loop set-up");
        log_info("listening: clients on %s, agents on %s (port %u%s)", o->socket, o->agent_listen, port,
                 !ls[1].tls ? "" : o->tls_ca ? ", TLS, agents' certificates checked" : ", TLS");
        if (!o->http_listen)
                return 0;
        if ((r = http_start(srv, o->http_listen, &port, &srv->http)) < 0)
                return r;
        if (o->http_port_file && (r = write_port_file(o->http_port_file, port)) < 0)
                log_errno(LOG_ERR, r, "port file %s", o->http_port_file);
        return 0;
}

/* A turn longer than this is logged (at debug): the loop heard nothing meanwhile. */
#define LOOP_TURN_SLOW_USEC 50000
/* A turn at least this long is a stall: agents' messages waited unread meanwhile. Shorter ones
 * are credited to nobody: the silence timeouts are seconds. */
#define STALL_MIN_USEC (100 * 1000)

/* sd_event_loop, timing each dispatch (one source's handler, during which nothing else is
 * heard) for /metrics, and for the nodes' silence: the loop polls its sockets between two
 * dispatches, never during one, so one that ran for STALL_MIN_USEC or more (a huge submission, a
 * slow disk under a commit) is credited to every node (ctl_credit_stall) before anything else
 * runs, whichever of the tick and the agents' messages that waited comes next. Returns the
 * loop's exit code. */
static int run_loop(ctl_server *srv) {
        while (sd_event_get_state(srv->event) != SD_EVENT_FINISHED) {
                int r = sd_event_prepare(srv->event);
                if (r == 0)
                        r = sd_event_wait(srv->event, UINT64_MAX);
                if (r > 0) {
                        int64_t t0 = server_clock().mono_usec;
                        r = sd_event_dispatch(srv->event);
                        ctl_time end = server_clock();
                        int64_t usec = end.mono_usec - t0;
                        stats_note_turn(&srv->stats, (double)usec / 1e6);
                        if (usec > LOOP_TURN_SLOW_USEC)
                                log_debug("a turn of the loop took %lld ms", (long long)(usec / 1000));
                        if (usec >= STALL_MIN_USEC)
                                ctl_credit_stall(&srv->state, usec, end);
                }
                if (r < 0)
                        return r;
        }
        int code = 0;
        (void)sd_event_get_exit_code(srv->event, &code);
        return code;
}

int main(int argc, char **argv) {
        options o = { .heartbeat_ms = -1, .agent_timeout_ms = -1, .node_lost_timeout_ms = -1, .max_pending = -1,
                      .kill_grace_ms = -1, .max_pending_per_user = -1, .max_pending_per_dept = -1,
                      .sync_commits = -1 };
        config cfg = { 0 };
        char err[512];
        if (parse_args(argc, argv, &o) < 0)
                return 2;
        ctl_server srv = { .config_path = o.config,
                           .fairness_arg = o.fairness,
                           .preauth_refused.interval_usec = LOG_FLOOD_USEC,
                           .clients_refused.interval_usec = LOG_FLOOD_USEC };
        ctl_lotes_options lotes = CTL_LOTES_DEFAULTS;
        if (o.config && (apply_config(&o, &cfg, err, sizeof(err)) < 0 ||
                         depts_from_config(&cfg, &srv.depts, err, sizeof(err)) < 0 ||
                         ctl_lotes_options_from_config(&cfg, &lotes, err, sizeof(err)) < 0)) {
                fprintf(stderr, "colony-controller: %s\n", err);
                ctl_lotes_options_free(&lotes);
                config_free(&cfg);
                return 1;
        }
        set_defaults(&o);
        int prio = log_level_from_name(o.log_level);
        if (prio < 0 || !o.secret_file) {
                fprintf(stderr, "colony-controller: %s\n", prio < 0 ? "log level must be error, warning, notice, info or debug"
                                                                    : "--secret-file is required");
                return 2;
        }
        if (o.node_lost_timeout_ms < o.agent_timeout_ms) {
                fprintf(stderr,
                        "colony-controller: node_lost_timeout_ms (%lld) must be at least agent_timeout_ms (%lld): "
                        "a node is not-responding before its jobs are lost\n",
                        (long long)o.node_lost_timeout_ms, (long long)o.agent_timeout_ms);
                return 2;
        }
        log_open_journal("colony-controller", prio);
        struct rlimit was;
        (void)nofile_raise(&was); /* a descriptor per idle connection: take the hard limit */
        /* Each submission's SQLite pages and job strings take the heap's top, and glibc gave it
         * back to the kernel (brk down) only to take it again (brk up) a few submissions later:
         * 30% of a submission's CPU. Extend by 16 MiB at a time and give back only past 64 MiB
         * free; memory still returns after a large drop (a queue of 100,000 drained). */
        (void)mallopt(M_TOP_PAD, 16 << 20);
        (void)mallopt(M_TRIM_THRESHOLD, 64 << 20);
        signal(SIGPIPE, SIG_IGN);
        sigset_t mask;
        sigemptyset(&mask);
        sigaddset(&mask, SIGTERM);
        sigaddset(&mask, SIGINT);
        sigaddset(&mask, SIGHUP);
        sigprocmask(SIG_BLOCK, &mask, NULL);

        listener ls[3] = { 0 };
        remote_server remote = { .refused.interval_usec = LOG_FLOOD_USEC,
                                 .strangers.interval_usec = LOG_FLOOD_USEC,
                                 .denied.interval_usec = LOG_FLOOD_USEC };
        stats_init(&srv.stats, server_now());
        /* Not sd_event_default: the default loop checks its thread with gettid(), a system
         * call on every iteration, that is on every request read. */
        int r = sd_event_new(&srv.event);
        if (r >= 0)
                r = sd_event_set_watchdog(srv.event, true); /* WATCHDOG=1 pings when WatchdogSec= is set */
        if (r >= 0)
                r = server_commit_init(&srv);
        if (r < 0 || open_state(&srv, &o, &lotes) < 0 || open_listeners(&srv, &o, ls) < 0 ||
            open_remote(&srv, &o, &ls[2], &remote) < 0) {
                r = r < 0 ? r : -EINVAL;
        } else {
                server_schedule(&srv);
                (void)sd_notify(0, "READY=1");
                r = run_loop(&srv);
                log_info("stopping");
        }
        server_commit_last(&srv);
        (void)sd_notify(0, "STOPPING=1");
        (void)unlink(o.socket);
        ctl_lotes_free(srv.lotes);
        ctl_lotes_options_free(&lotes);
        http_stop(srv.http);
        ctl_free(&srv.state);
        sd_event_source_disable_unref(srv.end_of_turn);
        server_bulk_close(&srv);
        server_output_close(&srv);
        server_events_close(&srv);
        jobstore_close(srv.store);
        free(srv.waiters);
        free(srv.client_uids);
        for (size_t i = 0; i < 3; i++)
                sd_event_source_disable_unref(ls[i].rest);
        tls_ctx_free(ls[1].tls); /* OpenSSL counts the references of connections still open */
        tls_ctx_free(ls[2].tls);
        remote_server_stop(&remote);
        free(srv.secret);
        sd_event_unref(srv.event);
        depts_free(&srv.depts);
        cpuwin_free(&srv.cpu);
        alpha_free(&srv.alpha);
        config_free(&cfg);
        return r < 0 ? 1 : 0;
}
