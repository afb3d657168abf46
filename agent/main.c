/* main.c - colony-agent: start-up checks, signals, the timed loop, shutdown (options and
 * configuration: agentconf.c).
 *
 * Exit status: 0 after a clean stop (SIGTERM/SIGINT) or --cleanup, 1 when the agent cannot run
 * or the controller refused it for good, 2 for bad options or configuration. */
#include "agent.h"
#include "clock.h"
#include "agentconf.h"
#include "cgroup.h"
#include "config.h"
#include "fileio.h"
#include "jobdir.h"
#include "log.h"
#include "log_journal.h"
#include "usergroups.h"
#include "net.h"
#include "nodesel.h"
#include "nofile.h"
#include "res.h"
#include "schedslice.h"
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

static int on_signal(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        const agent_config *cfg = userdata;

        log_info("received %s, %s", strsignal((int)si->ssi_signo),
                 cfg->stop_jobs_on_exit ? "stopping every job" : "leaving the jobs to the next agent");
        return sd_event_exit(sd_event_source_get_event(s), 0);
}

/* From the calling thread's /proc/thread-self/schedstat (fd), the microseconds it has run and
 * waited for a CPU; 0 and 0 when the kernel does not keep them (fd < 0). */
static void sched_sample(int fd, uint64_t *cpu, uint64_t *wait) {
        char buf[96];
        unsigned long long run = 0, queued = 0;
        ssize_t n = fd >= 0 ? pread(fd, buf, sizeof(buf) - 1, 0) : -1;

        if (n > 0) { /* strtoull, not sscanf: a turn's parse showed in the agent's profile */
                char *end;
                buf[n] = 0;
                run = strtoull(buf, &end, 10);
                queued = strtoull(end, NULL, 10);
        }
        *cpu = run / 1000;
        *wait = queued / 1000;
}

/* sd_event_loop, timing each turn's work (prepare and dispatch, not the wait): the loop must
 * never stall, or heartbeats stop and the controller loses the host's jobs. A new longest turn
 * is logged at debug level, the longest of all at exit, with the CPU time it took and its wait
 * for a CPU (the rest is the wait for the disk or a lock), and the most CPU time any turn took.
 * The CPU times are the dispatch's: two reads of schedstat a turn (three, with the prepare's,
 * were 48 of the agent's 167 system calls per job, 16 turns; the prepare only arms timers), the
 * wall time the prepare's too. Returns the loop's exit code or -errno. */
static int loop_timed(sd_event *e, const char *name) {
        uint64_t longest = 0, longest_cpu = 0, longest_wait = 0, most_cpu = 0, iteration = 0, t0, dt;
        uint64_t c0 = 0, w0 = 0, c1, w1;
        int fd = open("/proc/thread-self/schedstat", O_RDONLY | O_CLOEXEC), r = 0, code = 0;

        while (sd_event_get_state(e) != SD_EVENT_FINISHED) {
                t0 = (uint64_t)clock_mono_usec();
                r = sd_event_prepare(e);
                if (r == 0) {
                        dt = (uint64_t)clock_mono_usec() - t0;
                        r = sd_event_wait(e, UINT64_MAX);
                        t0 = (uint64_t)clock_mono_usec() - dt;
                }
                /* Not the wait, nor the wake-up after it: the turn starts running here. */
                sched_sample(fd, &c0, &w0);
                if (r > 0)
                        r = sd_event_dispatch(e);
                if (r < 0)
                        break;
                sched_sample(fd, &c1, &w1);
                if (c1 - c0 > most_cpu)
                        most_cpu = c1 - c0;
                if ((dt = (uint64_t)clock_mono_usec() - t0) > longest) {
                        longest = dt;
                        longest_cpu = c1 - c0;
                        longest_wait = w1 - w0;
                        (void)sd_event_get_iteration(e, &iteration);
                        log_debug("host=%s: longest turn of the loop so far: %.1f ms, %.1f ms of CPU (turn %" PRIu64
                                  ")",
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

/* Run the agent until a signal or a fatal refusal. *keep says whether jobs may still run in
 * the subtree (left running, or never taken over when set-up failed), so that the cgroups and
 * the state directory must stay. Returns the exit status. */
static int run_agent(const agent_config *cfg, cg_backend *cg, bool *keep) {
        char cpus[32], mem[32];
        sd_event *e = NULL;
        agent *a = NULL;
        int r;

        usergroups_warm();
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
        log_info("host=%s cgroup=%s controller=%s: agent up, offering cpus %s mem %s pids %" PRId64, cfg->name,
                 cg_subtree_path(cg), cfg->controller, units_format_cpus(cfg->capacity.mcpu, cpus, sizeof(cpus)),
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
        char err[ERRLEN];
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
        char err[512], desc[384], leaf[128]; /* desc: room for any name main passes, so GCC sees no truncation */
        char *own = NULL;
        bool joined;
        int r = cg_own_usable(&own, err, sizeof(err));

        if (r == 0 && !sdscope_available()) {
                snprintf(err, sizeof(err),
                         "cgroup v2: our cgroup %s is neither the root nor delegated to the agent "
                         "alone, and systemd is not PID 1 to make one: start colony from the root cgroup, or the "
                         "agent alone in a delegated cgroup",
                         own);
                r = -EPERM;
        } else if (r == 0) {
                snprintf(desc, sizeof(desc), "colony agent %s", name);
                if ((r = cg_agent_leaf(name, leaf, sizeof(leaf))) < 0)
                        snprintf(err, sizeof(err), "agent name too long: %s", name);
                else
                        r = sdscope_enter(unit, desc, leaf, &joined, err, sizeof(err));
                if (r == 0 && joined)
                        log_info("host=%s: joined the scope %s of a dead agent at %s, to adopt its jobs", name, unit,
                                 leaf);
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
        char err[ERRLEN];

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

/* Start-up after configuration: cgroups, the state directory, then the daemon until it stops.
 * Jobs it leaves running keep their cgroups and records for the next agent. */
static int run(const agent_config *ac) {
        char err[ERRLEN];
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

int main(int argc, char **argv) {
        char name[256], err[512], state_dir[PATH_MAX];
        agent_config ac = { 0 };
        config cfg = { 0 };
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
                            ? EXIT_USAGE
                            : 0;
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
                /* Before any thread or shepherd, which inherit it; jobs get the default back. */
                if ((r = sched_slice_set(SCHED_SLICE_AGENT_NS)) < 0)
                        log_debug("host=%s: cannot ask for a short time slice: %s", name, strerror(-r));
                r = 0;
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
        nvml_close(ac.nvml);
        config_free(&cfg);
        return r;
}
