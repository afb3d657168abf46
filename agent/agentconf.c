/* agentconf.c - colony-agent's options and configuration file (see agentconf.h). */
#include "agentconf.h"
#include "cgroup.h"
#include "fileio.h"
#include "gpufind.h"
#include "jobdir.h"
#include "log.h"
#include "log_journal.h"
#include "net.h"
#include "nodesel.h"
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

#define DEFAULT_JOB_PIDS          4096
#define NAME_MAX_LEN              64
#define DEFAULT_LAUNCH_TIMEOUT_MS 30000 /* a launch not exec'd by then hangs on a dead file system */
#define DEFAULT_KILL_WAIT_S       30    /* Slurm's KillWait: SIGTERM at a time limit, SIGKILL this much later */
#define MAX_KILL_WAIT_S           3600
#define MAX_LAUNCH_TIMEOUT_MS     (3600 * 1000)
#define STATE_DIR_PARENT          "/run/colony" /* the default state directory is STATE_DIR_PARENT/<name> */

static const char *const config_keys[] = {
        "agent.controller",
        "agent.secret_file",
        "agent.name",
        "agent.cpus",
        "agent.mem",
        "agent.pids",
        "agent.default_pids",
        "agent.state_dir",
        "agent.tls_ca",
        "agent.tls_cert",
        "agent.tls_key",
        "agent.tls_server_name",
        "agent.launch_timeout_ms",
        "agent.kill_wait",
        "agent.features",
        "agent.cpuset",
        "agent.gpus",
        "agent.gpu_devices",
        "agent.gpu_type",
        "agent.nvml_library",
        NULL,
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
              "  --features A,B          this host's features, for submit --constraint (\"ssd,avx512\")\n"
              "  --no-cpuset             whole-CPU jobs get a CPU quota only, no cores of their own\n"
              "  --gpus N                GPUs offered: the first N found (/dev/nvidiaN, /dev/dri/renderDN;\n"
              "                          default: all found; 0: none)\n"
              "  --gpu-devices LIST      the GPUs' device nodes instead (\"/dev/nvidia0,/dev/nvidia1\")\n"
              "  --gpu-type TYPE         their type (\"a100\"), for submit --gres gpu:TYPE:N\n"
              "  --nvml-library PATH     NVIDIA's NVML, for the jobs' GPU use (default: libnvidia-ml.so.1\n"
              "                          when it loads; none: nothing reported)\n"
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

/* Long options only; their codes start past any character. */
enum {
        OPT_CONTROLLER = 256,
        OPT_SECRET,
        OPT_NAME,
        OPT_CPUS,
        OPT_MEM,
        OPT_PIDS,
        OPT_DEFAULT_PIDS,
        OPT_CONFIG,
        OPT_LOG_LEVEL,
        OPT_CLEANUP,
        OPT_HELP,
        OPT_STATE_DIR,
        OPT_STOP_JOBS,
        OPT_TLS_CA,
        OPT_TLS_CERT,
        OPT_TLS_KEY,
        OPT_TLS_NAME,
        OPT_LAUNCH_TIMEOUT,
        OPT_KILL_WAIT,
        OPT_SCOPE,
        OPT_STOP_SCOPE,
        OPT_FEATURES,
        OPT_NO_CPUSET,
        OPT_GPUS,
        OPT_GPU_DEVICES,
        OPT_GPU_TYPE,
        OPT_NVML
};
static const struct option longopts[] = {
        { "controller", required_argument, NULL, OPT_CONTROLLER },
        { "secret-file", required_argument, NULL, OPT_SECRET },
        { "name", required_argument, NULL, OPT_NAME },
        { "cpus", required_argument, NULL, OPT_CPUS },
        { "mem", required_argument, NULL, OPT_MEM },
        { "pids", required_argument, NULL, OPT_PIDS },
        { "default-pids", required_argument, NULL, OPT_DEFAULT_PIDS },
        { "config", required_argument, NULL, OPT_CONFIG },
        { "log-level", required_argument, NULL, OPT_LOG_LEVEL },
        { "cleanup", no_argument, NULL, OPT_CLEANUP },
        { "state-dir", required_argument, NULL, OPT_STATE_DIR },
        { "stop-jobs-on-exit", no_argument, NULL, OPT_STOP_JOBS },
        { "launch-timeout-ms", required_argument, NULL, OPT_LAUNCH_TIMEOUT },
        { "kill-wait", required_argument, NULL, OPT_KILL_WAIT },
        { "tls-ca", required_argument, NULL, OPT_TLS_CA },
        { "tls-cert", required_argument, NULL, OPT_TLS_CERT },
        { "tls-key", required_argument, NULL, OPT_TLS_KEY },
        { "tls-server-name", required_argument, NULL, OPT_TLS_NAME },
        { "scope", required_argument, NULL, OPT_SCOPE },
        { "stop-scope", no_argument, NULL, OPT_STOP_SCOPE },
        { "features", required_argument, NULL, OPT_FEATURES },
        { "no-cpuset", no_argument, NULL, OPT_NO_CPUSET },
        { "gpus", required_argument, NULL, OPT_GPUS },
        { "gpu-devices", required_argument, NULL, OPT_GPU_DEVICES },
        { "gpu-type", required_argument, NULL, OPT_GPU_TYPE },
        { "nvml-library", required_argument, NULL, OPT_NVML },
        { "help", no_argument, NULL, OPT_HELP },
        { 0 },
};

/* The option c getopt_long found (its argument in optarg) into o. Returns 0, 1 when --help
 * was shown, or -EINVAL (message printed). */
static int take_option(int c, char **argv, options *o) {
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
        case OPT_FEATURES: o->features = optarg; break;
        case OPT_NO_CPUSET: o->no_cpuset = true; break;
        case OPT_GPUS: o->gpus = optarg; break;
        case OPT_GPU_DEVICES: o->gpu_devices = optarg; break;
        case OPT_GPU_TYPE: o->gpu_type = optarg; break;
        case OPT_NVML: o->nvml_library = optarg; break;
        case OPT_HELP: usage(stdout); return 1;
        case OPT_LOG_LEVEL:
                o->log_level = log_level_from_name(optarg);
                if (o->log_level < 0) {
                        fprintf(stderr, "colony-agent: --log-level: unknown level '%s'\n", optarg);
                        return -EINVAL;
                }
                break;
        default: fprintf(stderr, "colony-agent: bad option '%s' (see --help)\n", argv[optind - 1]); return -EINVAL;
        }
        return 0;
}

/* Parse argv into o. Returns 0, 1 when --help was shown, or -EINVAL (message printed). */
int parse_argv(int argc, char **argv, options *o) {
        int c, r;

        *o = (options){ .log_level = LOG_INFO };
        opterr = 0;
        while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1)
                if ((r = take_option(c, argv, o)) != 0)
                        return r;
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
#define FROM_FILE(field)                                                                                               \
        { &o->field, "agent." #field }
        /* The strings the file may give, each under "agent." and the option's field name. */
        const struct {
                const char **field;
                const char *key;
        } from_file[] = { FROM_FILE(controller),  FROM_FILE(secret_file),     FROM_FILE(name),
                          FROM_FILE(state_dir),   FROM_FILE(tls_ca),          FROM_FILE(tls_cert),
                          FROM_FILE(tls_key),     FROM_FILE(tls_server_name), FROM_FILE(features),
                          FROM_FILE(gpu_devices), FROM_FILE(gpu_type),        FROM_FILE(nvml_library) };
#undef FROM_FILE
        for (size_t i = 0; i < sizeof(from_file) / sizeof(from_file[0]); i++)
                if (!*from_file[i].field)
                        *from_file[i].field = config_get(cfg, from_file[i].key);
        bool cpuset = true;
        if (!o->no_cpuset && (r = config_get_bool(cfg, "agent.cpuset", &cpuset, err, errlen)) < 0 && r != -ENOENT)
                return r;
        o->no_cpuset = o->no_cpuset || !cpuset;
        return 0;
}

typedef enum setting_kind { SETTING_CPUS, SETTING_SIZE, SETTING_UINT } setting_kind;

/* One numeric setting: the command-line text wins, else the config file's key, else *out is
 * left as the default. Returns 0 or -EINVAL with a message. */
static int get_setting(const char *text, const char *opt, const config *cfg, setting_kind kind, int64_t max,
                       int64_t *out, char *err, size_t errlen) {
        char key[64];
        int r;

        if (text) {
                r = kind == SETTING_CPUS ? units_parse_cpus(text, out)
                    : kind == SETTING_SIZE
                            ? units_parse_mem(text, out) /* a bare number is MiB, as Slurm's RealMemory */
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
static int resolve_resources(const options *o, const config *cfg, res_t *cap, int64_t *default_pids, char *err,
                             size_t errlen) {
        long cpus = sysconf(_SC_NPROCESSORS_ONLN);
        int r;

        *cap = (res_t){ .mcpu = cpus > 0 ? (int64_t)cpus * 1000 : 0 };
        *default_pids = DEFAULT_JOB_PIDS;
        if (detect_mem_total(&cap->mem) < 0)
                cap->mem = 0;
        r = get_setting(o->cpus, "cpus", cfg, SETTING_CPUS, 0, &cap->mcpu, err, errlen);
        if (r == 0)
                r = get_setting(o->mem, "mem", cfg, SETTING_SIZE, 0, &cap->mem, err, errlen);
        if (r == 0)
                r = get_setting(o->pids, "pids", cfg, SETTING_UINT, RES_PIDS_MAX, &cap->pids, err, errlen);
        if (r == 0)
                r = get_setting(o->default_pids, "default-pids", cfg, SETTING_UINT, RES_PIDS_MAX, default_pids, err,
                                errlen);
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
int resolve_name(const char *given, char *buf, size_t len, char *err, size_t errlen) {
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

/* Load the config file (if any) into cfg and merge it under the command line: o's unset
 * strings then point into cfg. Returns 0 or -errno with a message. */
int load_config(options *o, config *cfg, char *err, size_t errlen) {
        int r;

        if (!o->config_path)
                return 0;
        r = config_load(o->config_path, cfg, err, errlen);
        if (r < 0 && r != -EINVAL)
                snprintf(err, errlen, "cannot read %s: %s", o->config_path, strerror(-r));
        return r < 0 ? r : merge_config(o, cfg, err, errlen);
}

/* The GPUs offered: the devices named, else the first N found on the host (all by default);
 * their type a feature name. ac->capacity.gpus counts them. Returns 0 or -errno with err. */
static int resolve_gpus(const options *o, const config *cfg, agent_config *ac, char *err, size_t errlen) {
        int64_t want = -1;
        int r = get_setting(o->gpus, "gpus", cfg, SETTING_UINT, GPUS_MAX, &want, err, errlen);

        if (r == 0 && o->gpu_devices)
                r = gpufind_paths(&ac->gpus, o->gpu_devices, err, errlen);
        else if (r == 0 && want != 0 && (r = gpufind_host(&ac->gpus, "/dev", err, errlen)) == 0 &&
                 want > (int64_t)ac->gpus.n) {
                snprintf(err, errlen,
                         "gpus = %lld, but this host has %zu GPU devices (/dev/nvidiaN, /dev/dri/renderDN)",
                         (long long)want, ac->gpus.n);
                r = -EINVAL;
        }
        if (r == 0 && o->gpu_devices && want >= 0 && want != (int64_t)ac->gpus.n) {
                snprintf(err, errlen, "gpus = %lld, but gpu_devices names %zu", (long long)want, ac->gpus.n);
                r = -EINVAL;
        }
        if (r == 0 && o->gpu_type && (!nodesel_list_ok(o->gpu_type) || strchr(o->gpu_type, ','))) {
                snprintf(err, errlen, "gpu type '%s' is not a name (letters, digits, _ . -)", o->gpu_type);
                r = -EINVAL;
        }
        if (r < 0)
                return r;
        if (want >= 0 && !o->gpu_devices)
                ac->gpus.n = (size_t)want;
        ac->capacity.gpus = (int64_t)ac->gpus.n;
        ac->gpu_type = ac->gpus.n && o->gpu_type && *o->gpu_type ? o->gpu_type : NULL;
        return 0;
}

/* NVML for the GPUs' use, when the agent offers GPUs: the library named, which must work, else
 * NVML's own name, whose absence (or a driver it cannot reach) only means no figures, logged.
 * Returns 0 or -errno with err. */
static int open_nvml(const options *o, agent_config *ac, char *err, size_t errlen) {
        char why[512];
        int r;
        if (!ac->gpus.n)
                return 0;
        r = nvml_open(o->nvml_library, &ac->nvml, why, sizeof(why));
        if (r < 0 && !o->nvml_library) {
                log_msg(r == -ENOENT ? LOG_INFO : LOG_WARNING, "no NVML (%s): the jobs' GPU use is not reported", why);
                return 0;
        }
        if (r < 0)
                snprintf(err, errlen, "nvml_library: %s", why);
        else
                log_info("NVML %s: the jobs' GPU use is reported",
                         o->nvml_library ? o->nvml_library : "libnvidia-ml.so.1");
        return r;
}

/* TLS to the controller when any TLS setting is given (tls_ca is then required): ac->tls,
 * the caller's to free. Returns 0, EXIT_USAGE or 1 with the reason in err. */
static int configure_tls(const options *o, agent_config *ac, char *err, size_t errlen) {
        char why[TLS_ERRLEN];
        tls_files f = { .cert = o->tls_cert, .key = o->tls_key, .ca = o->tls_ca };
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
int configure(const options *o, const config *cfg, agent_config *ac, char **secret, char *err, size_t errlen) {
        char host[256];
        uint16_t port;

        int64_t launch_ms = DEFAULT_LAUNCH_TIMEOUT_MS, kill_wait = DEFAULT_KILL_WAIT_S;

        if (resolve_resources(o, o->config_path ? cfg : NULL, &ac->capacity, &ac->default_pids, err, errlen) < 0 ||
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
        if (o->features && *o->features && !nodesel_list_ok(o->features)) {
                snprintf(err, errlen, "features: '%s' is not names (letters, digits, _ . -) separated by commas",
                         o->features);
                return EXIT_USAGE;
        }
        ac->features = o->features && *o->features ? o->features : NULL;
        ac->no_cpuset = o->no_cpuset;
        if (resolve_gpus(o, o->config_path ? cfg : NULL, ac, err, errlen) < 0 || open_nvml(o, ac, err, errlen) < 0)
                return EXIT_USAGE;
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

/* The state directory: as given (absolute), or STATE_DIR_PARENT/<name>. */
int resolve_state_dir(const char *given, const char *name, char *buf, size_t len, char *err, size_t errlen) {
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
