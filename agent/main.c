/* main.c - colony-agent: options and configuration file, start-up checks, signals, shutdown.
 *
 * Exit status: 0 after a clean stop (SIGTERM/SIGINT) or --cleanup, 1 when the agent cannot run
 * or the controller refused it for good, 2 for bad options or configuration. */
#include "agent.h"
#include "cgroup.h"
#include "config.h"
#include "fileio.h"
#include "jobdir.h"
#include "log.h"
#include "log_journal.h"
#include "net.h"
#include "nofile.h"
#include "res.h"
#include "sdscope.h"
#include "units.h"
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <systemd/sd-daemon.h>
#include <systemd/sd-event.h>
#include <time.h>
#include <unistd.h>

#define DEFAULT_JOB_PIDS 4096
#define NAME_MAX_LEN 64
#define EXIT_USAGE 2
#define DEFAULT_LAUNCH_TIMEOUT_MS 30000 /* a launch not exec'd by then hangs on a dead file system */
#define DEFAULT_KILL_WAIT_S 30 /* Slurm's KillWait: SIGTERM at a time limit, SIGKILL this much later */
#define MAX_KILL_WAIT_S 3600
#define MAX_LAUNCH_TIMEOUT_MS (3600 * 1000)
#define STATE_DIR_PARENT "/run/colony" /* the default state directory is STATE_DIR_PARENT/<name> */

typedef struct options {
        const char *controller, *secret_file, *name, *config_path, *state_dir;
        const char *tls_ca, *tls_cert, *tls_key, *tls_server_name; /* TLS to the controller when tls_ca is set */
        const char *cpus, *mem, *pids, *default_pids, *launch_timeout_ms; /* as typed; parsed after merging */
        int log_level;
        const char *scope; /* --scope: the transient unit to run in, where one is needed */
        bool cleanup, stop_jobs_on_exit, stop_scope;
        const char *kill_wait; /* as typed */
} options;

static const char *const config_keys[] = {
        "agent.controller", "agent.secret_file", "agent.name",         "agent.cpus",
        "agent.mem",        "agent.pids",        "agent.default_pids", "agent.state_dir",
        "agent.tls_ca",     "agent.tls_cert",    "agent.tls_key",      "agent.tls_server_name",
        "agent.launch_timeout_ms", "agent.kill_wait", NULL,
};

static void usage(FILE *f) {
        fputs("Usage: colony-agent --controller HOST:PORT --secret-file PATH [options]\n"
              "Run colony jobs on this host in cgroups, as the controller asks.\n\n"
              "  --controller HOST:PORT  the controller's agent address\n"
              "  --secret-file PATH      file holding the cluster secret (mode 0600)\n"
              "  --name NAME             agent name (default: short hostname; [A-Za-z0-9_.-]{1,64})\n"
              "  --cpus N                CPUs offered (default: online CPUs; \"1.5\", \"500m\")\n"
              "  --mem SIZE              memory offered (default: MemTotal; \"4G\")\n"
              "  --pids N                task capacity reported (default 0 = unlimited)\n"
              "  --default-pids N        pids.max for jobs that ask for none (default 4096)\n"
              "  --state-dir DIR         job records for a restarted agent (default " STATE_DIR_PARENT "/NAME)\n"
              "  --stop-jobs-on-exit     SIGTERM kills every job (default: leave them to the next agent)\n"
              "  --launch-timeout-ms N   fail a job not exec'd N ms after its launch (default 30000)\n"
              "  --kill-wait S           a job past its time limit gets SIGTERM, and SIGKILL S seconds\n"
              "                          later (default 30, Slurm's KillWait)\n"
              "  --tls-ca PEM            talk TLS to the controller, whose certificate must chain to\n"
              "                          this CA and name the --controller host\n"
              "  --tls-server-name NAME  the name the controller's certificate must carry instead\n"
              "  --tls-cert PEM, --tls-key PEM  this agent's client certificate and key\n"
              "  --config FILE           read these settings from FILE's [agent] section\n"
              "  --log-level L           err, warning, notice, info (default) or debug\n"
              "  --cleanup               kill this agent's jobs, remove its cgroups and state, then exit\n"
              "  --scope UNIT            where our cgroup is not the root and not delegated to us alone\n"
              "                          (a login session), start in the new transient scope UNIT with\n"
              "                          Delegate=yes, through systemd (with --cleanup: stop UNIT first)\n"
              "  --stop-scope            stop the unit --scope names, if it exists, then exit\n"
              "  --help                  show this help\n",
              f);
}

/* Parse argv into o. Returns 0, 1 when --help was shown, or -EINVAL (message printed). */
static int parse_argv(int argc, char **argv, options *o) {
        enum { OPT_CONTROLLER = 256, OPT_SECRET, OPT_NAME, OPT_CPUS, OPT_MEM, OPT_PIDS,
               OPT_DEFAULT_PIDS, OPT_CONFIG, OPT_LOG_LEVEL, OPT_CLEANUP, OPT_HELP, OPT_STATE_DIR,
               OPT_STOP_JOBS, OPT_TLS_CA, OPT_TLS_CERT, OPT_TLS_KEY, OPT_TLS_NAME, OPT_LAUNCH_TIMEOUT, OPT_KILL_WAIT,
               OPT_SCOPE, OPT_STOP_SCOPE };
        static const struct option longopts[] = {
                {"controller", required_argument, NULL, OPT_CONTROLLER},
                {"secret-file", required_argument, NULL, OPT_SECRET},
                {"name", required_argument, NULL, OPT_NAME},
                {"cpus", required_argument, NULL, OPT_CPUS},
                {"mem", required_argument, NULL, OPT_MEM},
                {"pids", required_argument, NULL, OPT_PIDS},
                {"default-pids", required_argument, NULL, OPT_DEFAULT_PIDS},
                {"config", required_argument, NULL, OPT_CONFIG},
                {"log-level", required_argument, NULL, OPT_LOG_LEVEL},
                {"cleanup", no_argument, NULL, OPT_CLEANUP},
                {"state-dir", required_argument, NULL, OPT_STATE_DIR},
                {"stop-jobs-on-exit", no_argument, NULL, OPT_STOP_JOBS},
                {"launch-timeout-ms", required_argument, NULL, OPT_LAUNCH_TIMEOUT},
                {"kill-wait", required_argument, NULL, OPT_KILL_WAIT},
                {"tls-ca", required_argument, NULL, OPT_TLS_CA},
                {"tls-cert", required_argument, NULL, OPT_TLS_CERT},
                {"tls-key", required_argument, NULL, OPT_TLS_KEY},
                {"tls-server-name", required_argument, NULL, OPT_TLS_NAME},
                {"scope", required_argument, NULL, OPT_SCOPE},
                {"stop-scope", no_argument, NULL, OPT_STOP_SCOPE},
                {"help", no_argument, NULL, OPT_HELP},
                {0},
        };
        int c;

        *o = (options){.log_level = LOG_INFO};
        opterr = 0;
        while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
                switch (c) {
                case OPT_CONTROLLER: o->controller = optarg; break;
                case OPT_SECRET: o->secret_file = optarg; break;
                case OPT_NAME: o->name = optarg; break;
                case OPT_CPUS: o->cpus = optarg; break;
                case OPT_MEM: o->mem = optarg; break;
                case OPT_PIDS: o->pids = optarg; break;
                case OPT_DEFAULT_PIDS: o->default_pids = optarg; break;
                case OPT_CONFIG: o->config_path = optarg; break;
                case OPT_CLEANUP: o->cleanup = true; break;
                case OPT_STATE_DIR: o->state_dir = optarg; break;
                case OPT_STOP_JOBS: o->stop_jobs_on_exit = true; break;
                case OPT_LAUNCH_TIMEOUT: o->launch_timeout_ms = optarg; break;
                case OPT_KILL_WAIT: o->kill_wait = optarg; break;
                case OPT_TLS_CA: o->tls_ca = optarg; break;
                case OPT_TLS_CERT: o->tls_cert = optarg; break;
                case OPT_TLS_KEY: o->tls_key = optarg; break;
                case OPT_TLS_NAME: o->tls_server_name = optarg; break;
                case OPT_SCOPE: o->scope = optarg; break;
                case OPT_STOP_SCOPE: o->stop_scope = true; break;
                case OPT_HELP: usage(stdout); return 1;
                case OPT_LOG_LEVEL:
                        o->log_level = log_level_from_name(optarg);
                        if (o->log_level < 0) {
                                fprintf(stderr, "colony-agent: --log-level: unknown level '%s'\n", optarg);
                                return -EINVAL;
                        }
                        break;
                default:
                        fprintf(stderr, "colony-agent: bad option '%s' (see --help)\n", argv[optind - 1]);
                        return -EINVAL;
                }
        }
        if (optind < argc) {
                fprintf(stderr, "colony-agent: unexpected argument '%s' (see --help)\n", argv[optind]);
                return -EINVAL;
        }
        return 0;
}

/* Fill the options not given on the command line from the config file's [agent] section. */
static int merge_config(options *o, const config *cfg, char *err, size_t errlen) {
        int r = config_check_keys(cfg, config_keys, err, errlen);

        if (r < 0)
                return r;
        o->controller = o->controller ? o->controller : config_get(cfg, "agent.controller");
        o->secret_file = o->secret_file ? o->secret_file : config_get(cfg, "agent.secret_file");
        o->name = o->name ? o->name : config_get(cfg, "agent.name");
        o->state_dir = o->state_dir ? o->state_dir : config_get(cfg, "agent.state_dir");
        o->tls_ca = o->tls_ca ? o->tls_ca : config_get(cfg, "agent.tls_ca");
        o->tls_cert = o->tls_cert ? o->tls_cert : config_get(cfg, "agent.tls_cert");
        o->tls_key = o->tls_key ? o->tls_key : config_get(cfg, "agent.tls_key");
        o->tls_server_name = o->tls_server_name ? o->tls_server_name : config_get(cfg, "agent.tls_server_name");
        return 0;
}

typedef enum setting_kind { SETTING_CPUS, SETTING_SIZE, SETTING_UINT } setting_kind;

/* One numeric setting: the command-line text wins, else the config file's key, else *out is
 * left as the default. Returns 0 or -EINVAL with a message. */
static int get_setting(const char *text, const char *opt, const config *cfg, setting_kind kind,
                       int64_t max, int64_t *out, char *err, size_t errlen) {
        char key[64];
        int r;

        if (text) {
                r = kind == SETTING_CPUS   ? units_parse_cpus(text, out)
                    : kind == SETTING_SIZE ? units_parse_mem(text, out) /* a bare number is MiB, as Slurm's RealMemory */
                                           : units_parse_uint(text, max, out);
                if (r < 0)
                        snprintf(err, errlen, "--%s: invalid value '%s'", opt, text);
                return r < 0 ? -EINVAL : 0;
        }
        if (!cfg)
                return 0;
        snprintf(key, sizeof(key), "agent.%s", opt);
        for (char *p = key; *p; p++)
                *p = *p == '-' ? '_' : *p;
        r = kind == SETTING_CPUS   ? config_get_cpus(cfg, key, out, err, errlen)
            : kind == SETTING_SIZE ? config_get_mem(cfg, key, out, err, errlen)
                                   : config_get_uint(cfg, key, max, out, err, errlen);
        return r == -ENOENT ? 0 : r;
}

static int detect_mem_total(int64_t *out) {
        FILE *f = fopen("/proc/meminfo", "re");
        char line[256];
        long long kb;
        int r = -ENODATA;

        if (!f)
                return -errno;
        while (fgets(line, sizeof(line), f))
                if (sscanf(line, "MemTotal: %lld kB", &kb) == 1) {
                        *out = (int64_t)kb * 1024;
                        r = 0;
                        break;
                }
        fclose(f);
        return r;
}

/* The capacity and default job pids: detected, then overridden by options or config. */
static int resolve_resources(const options *o, const config *cfg, res_t *cap, int64_t *default_pids,
                             char *err, size_t errlen) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        int r;

        *cap = (res_t){.mcpu = cpus > 0 ? (int64_t)cpus * 1000 : 0};
        *default_pids = DEFAULT_JOB_PIDS;
        if (detect_mem_total(&cap->mem) < 0)
                cap->mem = 0;
        r = get_setting(o->cpus, "cpus", cfg, SETTING_CPUS, 0, &cap->mcpu, err, errlen);
        if (r == 0)
                r = get_setting(o->mem, "mem", cfg, SETTING_SIZE, 0, &cap->mem, err, errlen);
        if (r == 0)
                r = get_setting(o->pids, "pids", cfg, SETTING_UINT, RES_PIDS_MAX, &cap->pids, err, errlen);
        if (r == 0)
                r = get_setting(o->default_pids, "default-pids", cfg, SETTING_UINT, RES_PIDS_MAX,
                                default_pids, err, errlen);
        if (r == 0 && (cap->mcpu <= 0 || cap->mem <= 0)) {
                snprintf(err, errlen, "cannot detect this host's %s; give --%s", cap->mcpu <= 0 ? "CPUs" : "memory",
                         cap->mcpu <= 0 ? "cpus" : "mem");
                r = -EINVAL;
        }
        return r;
}

static bool name_is_valid(const char *s) {
        size_t n = strlen(s);

        return n >= 1 && n <= NAME_MAX_LEN &&
               strspn(s, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_.-") == n;
}

/* The agent name: as given, or the short hostname. */
static int resolve_name(const char *given, char *buf, size_t len, char *err, size_t errlen) {
        if (given)
                snprintf(buf, len, "%s", given);
        else if (gethostname(buf, len - 1) == 0) {
                buf[len - 1] = '\0';
                buf[strcspn(buf, ".")] = '\0';
        } else {
                snprintf(err, errlen, "cannot read the hostname (%s); give --name", strerror(errno));
                return -EINVAL;
        }
        if (!name_is_valid(buf)) {
                snprintf(err, errlen, "agent name '%s' is not valid (want [A-Za-z0-9_.-]{1,64})", buf);
                return -EINVAL;
        }
        return 0;
}

static int read_secret(const char *path, char **out, char *err, size_t errlen) {
        int r = file_read_small(path, 1, out);

        if (r == -EPERM)
                snprintf(err, errlen, "secret file %s may be read or written by group or others; chmod 600 it", path);
        else if (r < 0)
                snprintf(err, errlen, "cannot read secret file %s: %s", path, strerror(-r));
        else if (!**out) {
                snprintf(err, errlen, "secret file %s is empty", path);
                free(*out);
                *out = NULL;
                r = -EINVAL;
        }
        return r;
}

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        const agent_config *cfg = userdata;

        log_info("received %s, %s", strsignal((int)si->ssi_signo),
                 cfg->stop_jobs_on_exit ? "stopping every job" : "leaving the jobs to the next agent");
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

/* Run the agent until a signal or a fatal refusal. *keep says whether jobs may still run in
 * the subtree (left running, or never taken over when set-up failed), so that the cgroups and
 * the state directory must stay. Returns the exit status. */
static uint64_t monotonic_usec(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (uint64_t)ts.tv_sec * 1000000 + (uint64_t)ts.tv_nsec / 1000;
}

/* From the calling thread's /proc/thread-self/schedstat (fd), the microseconds it has run and
 * waited for a CPU; 0 and 0 when the kernel does not keep them (fd < 0). */
static void sched_sample(int fd, uint64_t *cpu, uint64_t *wait) {
        char buf[96];
        unsigned long long run = 0, queued = 0;
        ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;

        if (n > 0) {
                buf[n] = 0;
                (void)sscanf(buf, "%llu %llu", &run, &queued);
        }
        *cpu = run / 1000;
        *wait = queued / 1000;
}

/* sd_event_loop, timing each turn's work (prepare and dispatch, not the wait): the loop must
 * never stall, or heartbeats stop and the controller loses the host's jobs. A new longest turn
 * is logged at debug level, the longest of all at exit, with the CPU time it took and its wait
 * for a CPU (the rest is the wait for the disk or a lock), and the most CPU time any turn took.
 * Returns the loop's exit code or -errno. */
static int loop_timed(sd_event *e, const char *name) {
        uint64_t longest = 0, longest_cpu = 0, longest_wait = 0, most_cpu = 0, iteration = 0, t0, dt;
        uint64_t c0, w0, c1, w1, cp, wp;
        int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC), r = 0, code = 0;

        while (sd_event_get_state(e) != SD_EVENT_FINISHED) {
                t0 = monotonic_usec();
                sched_sample(fd, &c0, &w0);
                r = sd_event_prepare(e);
                if (r == 0) {
                        dt = monotonic_usec() - t0;
                        sched_sample(fd, &cp, &wp);
                        r = sd_event_wait(e, UINT64_MAX);
                        t0 = monotonic_usec() - dt;
                        /* Not the wait, nor the wake-up after it: the turn starts running here. */
                        sched_sample(fd, &c1, &w1);
                        c0 = c1 - (cp - c0);
                        w0 = w1 - (wp - w0);
                }
                if (r > 0)
                        r = sd_event_dispatch(e);
                if (r < 0)
                        break;
                sched_sample(fd, &c1, &w1);
                if (c1 - c0 > most_cpu)
                        most_cpu = c1 - c0;
                if ((dt = monotonic_usec() - t0) > longest) {
                        longest = dt;
                        longest_cpu = c1 - c0;
                        longest_wait = w1 - w0;
                        (void)sd_event_get_iteration(e, &iteration);
                        log_debug("host=%s: longest turn of the loop so far: %.1f ms, %.1f ms of CPU (turn %" PRIu64 ")",
                                  name, (double)longest / 1000, (double)longest_cpu / 1000, iteration);
                }
        }
        if (fd >= 0)
                close(fd);
        if (r < 0)
                return r;
        log_info("host=%s: longest turn of the loop: %.1f ms, %.1f ms of CPU, %.1f ms waiting for a CPU; "
                 "most CPU in one turn: %.1f ms",
                 name, (double)longest / 1000, (double)longest_cpu / 1000, (double)longest_wait / 1000,
                 (double)most_cpu / 1000);
        r = sd_event_get_exit_code(e, &code);
        return r < 0 ? r : code;
}

static int run_agent(const agent_config *cfg, cg_backend *cg, bool *keep) {
        char cpus[32], mem[32];
        sd_event *e = NULL;
        agent *a = NULL;
        int r;

        r = sd_event_default(&e);
        if (r >= 0)
                r = sd_event_set_watchdog(e, true); /* WATCHDOG=1 pings when WatchdogSec= is set */
        if (r >= 0)
                r = sd_event_add_signal(e, NULL, SIGTERM, on_signal, (void *)cfg);
        if (r >= 0)
                r = sd_event_add_signal(e, NULL, SIGINT, on_signal, (void *)cfg);
        if (r >= 0)
                r = agent_new(e, cfg, cg, &a);
        if (r >= 0)
                r = agent_adopt(a);
        if (r < 0) {
                log_errno(LOG_ERR, r, "host=%s: cannot set up the event loop", cfg->name);
                *keep = true;
                agent_free(a);
                sd_event_unref(e);
                return 1;
        }
        log_info("host=%s cgroup=%s controller=%s: agent up, offering cpus %s mem %s pids %" PRId64,
                 cfg->name, cg_subtree_path(cg), cfg->controller,
                 units_format_cpus(cfg->capacity.mcpu, cpus, sizeof(cpus)),
                 units_format_size(cfg->capacity.mem, mem, sizeof(mem)), cfg->capacity.pids);
        sd_notifyf(0, "READY=1\nSTATUS=connecting to controller %s", cfg->controller);
        r = loop_timed(e, cfg->name);
        if (r < 0)
                log_errno(LOG_ERR, r, "host=%s: event loop failed", cfg->name);
        sd_notify(0, cfg->stop_jobs_on_exit ? "STOPPING=1\nSTATUS=stopping every job" : "STOPPING=1");
        *keep = agent_stop(a) > 0;
        agent_free(a);
        sd_event_unref(e);
        return r < 0 ? 1 : r;
}

/* Open the cgroup backend for name, or say why not. Returns 0 or 1 (the exit status). */
static int open_cgroups(const char *name, cg_backend **cg) {
        char err[512];
        int r;

        if (geteuid() != 0) {
                log_error("colony-agent must run as root: it creates cgroups and runs jobs as their users");
                return 1;
        }
        r = cg_open(name, cg, err, sizeof(err));
        if (r < 0) {
                log_error("host=%s: cannot use cgroups: %s", name, err);
                return 1;
        }
        return 0;
}

/* --scope UNIT: where the cgroup we were started in is not one cg_open may build the subtree
 * in, move into a new transient scope UNIT that systemd delegates to us. Returns 0 or 1. */
static int enter_scope(const char *name, const char *unit) {
        char err[512], desc[128], leaf[128];
        char *own = NULL;
        bool joined;
        int r = cg_own_usable(&own, err, sizeof(err));

        if (r == 0 && !sdscope_available()) {
                snprintf(err, sizeof(err), "cgroup v2: our cgroup %s is neither the root nor delegated to the agent "
                         "alone, and systemd is not PID 1 to make one: start colony from the root cgroup, or the "
                         "agent alone in a delegated cgroup", own);
                r = -EPERM;
        } else if (r == 0) {
                snprintf(desc, sizeof(desc), "colony agent %s", name);
                if ((r = cg_agent_leaf(name, leaf, sizeof(leaf))) < 0)
                        snprintf(err, sizeof(err), "agent name too long: %s", name);
                else
                        r = sdscope_enter(unit, desc, leaf, &joined, err, sizeof(err));
                if (r == 0 && joined)
                        log_info("host=%s: joined the scope %s of a dead agent at %s, to adopt its jobs", name, unit, leaf);
                else if (r == 0)
                        log_info("host=%s: left cgroup %s for the transient scope %s (Delegate=yes)", name, own, unit);
        }
        free(own);
        if (r < 0) {
                log_error("host=%s: %s", name, err);
                return 1;
        }
        return 0;
}

/* Stop unit (an agent's scope) where systemd runs. Returns 0 or 1. */
static int stop_scope(const char *name, const char *unit) {
        char err[512];

        if (!sdscope_available() || sdscope_stop(unit, err, sizeof(err)) == 0)
                return 0;
        log_error("host=%s: %s", name, err);
        return 1;
}

/* --cleanup: what `colony down` runs after an agent died. */
static int cleanup(const char *name, const char *state_dir) {
        cg_backend *cg;

        if (open_cgroups(name, &cg) != 0)
                return 1;
        (void)agent_clear_leftovers(cg, state_dir);
        log_info("host=%s cgroup=%s: removing the agent's cgroups", name, cg_subtree_path(cg));
        cg_close(cg, true);
        return 0;
}

/* Load the config file (if any) into cfg and merge it under the command line: o's unset
 * strings then point into cfg. Returns 0 or -errno with a message. */
static int load_config(options *o, config *cfg, char *err, size_t errlen) {
        int r;

        if (!o->config_path)
                return 0;
        r = config_load(o->config_path, cfg, err, errlen);
        if (r < 0 && r != -EINVAL)
                snprintf(err, errlen, "cannot read %s: %s", o->config_path, strerror(-r));
        return r < 0 ? r : merge_config(o, cfg, err, errlen);
}

/* TLS to the controller when any TLS setting is given (tls_ca is then required): ac->tls,
 * the caller's to free. Returns 0, EXIT_USAGE or 1 with the reason in err. */
static int configure_tls(const options *o, agent_config *ac, char *err, size_t errlen) {
        char why[TLS_ERRLEN];
        tls_files f = {.cert = o->tls_cert, .key = o->tls_key, .ca = o->tls_ca};
        int r;

        if (!o->tls_ca && !o->tls_cert && !o->tls_key && !o->tls_server_name)
                return 0;
        r = tls_ctx_new_client(&f, &ac->tls, why);
        if (r < 0)
                snprintf(err, errlen, "%s", why);
        ac->tls_server_name = o->tls_server_name;
        return r == -EINVAL ? EXIT_USAGE : r < 0 ? 1 : 0;
}

/* The daemon's settings from options (merged with cfg). Returns an exit status: 0, EXIT_USAGE
 * or 1, with the reason in err. *secret is the caller's to free. */
static int configure(const options *o, const config *cfg, agent_config *ac, char **secret,
                     char *err, size_t errlen) {
        char host[256];
        uint16_t port;

        int64_t launch_ms = DEFAULT_LAUNCH_TIMEOUT_MS, kill_wait = DEFAULT_KILL_WAIT_S;

        if (resolve_resources(o, o->config_path ? cfg : NULL, &ac->capacity, &ac->default_pids,
                              err, errlen) < 0 ||
            get_setting(o->launch_timeout_ms, "launch-timeout-ms", o->config_path ? cfg : NULL, SETTING_UINT,
                        MAX_LAUNCH_TIMEOUT_MS, &launch_ms, err, errlen) < 0 ||
            get_setting(o->kill_wait, "kill-wait", o->config_path ? cfg : NULL, SETTING_UINT, MAX_KILL_WAIT_S,
                        &kill_wait, err, errlen) < 0)
                return EXIT_USAGE;
        ac->kill_wait_s = (int)kill_wait;
        if (launch_ms == 0) {
                snprintf(err, errlen, "%s: must be at least 1 ms",
                         o->launch_timeout_ms ? "--launch-timeout-ms" : "agent.launch_timeout_ms");
                return EXIT_USAGE;
        }
        ac->launch_timeout_ms = (int)launch_ms;
        if (!o->controller || !o->secret_file) {
                snprintf(err, errlen, "--%s is required", o->controller ? "secret-file" : "controller");
                return EXIT_USAGE;
        }
        if (net_split_hostport(o->controller, host, sizeof(host), &port) < 0 || port == 0) {
                snprintf(err, errlen, "--controller '%s' is not HOST:PORT", o->controller);
                return EXIT_USAGE;
        }
        ac->controller = o->controller;
        if (read_secret(o->secret_file, secret, err, errlen) < 0)
                return 1;
        ac->secret = *secret;
        return configure_tls(o, ac, err, errlen);
}

/* Start-up after configuration: cgroups, the state directory, then the daemon until it stops.
 * Jobs it leaves running keep their cgroups and records for the next agent. */
static int run(const agent_config *ac) {
        char err[512];
        cg_backend *cg;
        bool keep = true;
        int r;

        if (open_cgroups(ac->name, &cg) != 0)
                return 1;
        if ((r = jobdir_open(ac->state_dir, err, sizeof(err))) < 0) {
                log_error("host=%s: %s", ac->name, err);
                cg_close(cg, false);
                return 1;
        }
        r = run_agent(ac, cg, &keep);
        cg_close(cg, !keep);
        if (keep)
                log_info("host=%s dir=%s: agent stopped, its jobs' cgroups and records kept", ac->name, ac->state_dir);
        else {
                (void)jobdir_close(ac->state_dir); /* unless reports wait there for the controller */
                log_info("host=%s: agent stopped, cgroups removed", ac->name);
        }
        return r;
}

/* The state directory: as given (absolute), or STATE_DIR_PARENT/<name>. */
static int resolve_state_dir(const char *given, const char *name, char *buf, size_t len, char *err, size_t errlen) {
        if (given && given[0] != '/') {
                snprintf(err, errlen, "--state-dir '%s' is not an absolute path", given);
                return -EINVAL;
        }
        if (snprintf(buf, len, "%s%s%s", given ? given : STATE_DIR_PARENT, given ? "" : "/", given ? "" : name) >=
            (int)len) {
                snprintf(err, errlen, "--state-dir: path too long");
                return -ENAMETOOLONG;
        }
        return 0;
}

int main(int argc, char **argv) {
        char name[256], err[512], state_dir[PATH_MAX];
        agent_config ac = {0};
        config cfg = {0};
        char *secret = NULL;
        sigset_t mask;
        options o;
        int r;

        r = parse_argv(argc, argv, &o);
        if (r != 0)
                return r > 0 ? 0 : EXIT_USAGE;
        log_open_journal("colony-agent", o.log_level);
        r = load_config(&o, &cfg, err, sizeof(err)) < 0 ? EXIT_USAGE : 0;
        if (r == 0)
                r = resolve_name(o.name, name, sizeof(name), err, sizeof(err)) < 0 ? EXIT_USAGE : 0;
        if (r == 0)
                r = resolve_state_dir(o.state_dir, name, state_dir, sizeof(state_dir), err, sizeof(err)) < 0
                            ? EXIT_USAGE : 0;
        ac.name = name;
        ac.state_dir = state_dir;
        ac.stop_jobs_on_exit = o.stop_jobs_on_exit;
        if (r == 0 && !o.cleanup && !o.stop_scope)
                r = configure(&o, &cfg, &ac, &secret, err, sizeof(err));
        if (r != 0)
                log_error("%s", err);
        else {
                /* Before any job or event loop exists: sd-event's child and signal sources need
                 * these blocked; the launcher restores the mask in each job. */
                sigemptyset(&mask);
                sigaddset(&mask, SIGCHLD);
                sigaddset(&mask, SIGTERM);
                sigaddset(&mask, SIGINT);
                sigprocmask(SIG_BLOCK, &mask, NULL);
                /* A TLS write to a closed peer must fail with EPIPE, not kill the agent (OpenSSL
                 * writes with write(2)); the launcher resets every signal in each job. */
                signal(SIGPIPE, SIG_IGN);
                /* a descriptor per watched job and launch in flight; jobs get the limits back */
                (void)nofile_raise(&ac.job_nofile);
                /* A dead agent's scope still holds its jobs: stopping it ends them. */
                if (o.scope && (o.stop_scope || o.cleanup))
                        r = stop_scope(name, o.scope);
                if (r == 0 && o.scope && !o.stop_scope)
                        r = enter_scope(name, o.scope);
                if (r == 0 && !o.stop_scope)
                        r = o.cleanup ? cleanup(name, state_dir) : run(&ac);
        }
        free(secret);
        tls_ctx_free(ac.tls);
        config_free(&cfg);
        return r;
}
