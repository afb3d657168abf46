/* controller.c - colony-controller: start-up, the state's hooks, the loop's signals and timers, and
 * the loop itself (options in options.c, listeners in listen.c). */
#include "config.h"
#include "arrays.h"
#include "fileio.h"
#include "coloc_dispatch.h"
#include "http.h"
#include "listen.h"
#include "lotes_plan.h"
#include "log.h"
#include "log_journal.h"
#include "nofile.h"
#include "options.h"
#include "policy.h"
#include "remote.h"
#include "server.h"
#include "agentlink.h"
#include "bulk.h"
#include "clients.h"
#include "commit.h"
#include "eventsrv.h"
#include "evlog.h"
#include "outrelay.h"
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <systemd/sd-daemon.h>
#include <time.h>
#include <unistd.h>

static void reschedule(void *userdata) { server_schedule(userdata); }

static int persist_job(void *userdata, const job *j) { return server_persist(userdata, j); }

static void record_event(void *userdata, const ctl_event *e) {
        evlog_write(&((ctl_server *)userdata)->state, e);
        server_event(userdata, e);
        if (e->job_id)
                server_output_job_event(userdata, e->job_id);
}

static void log_transition(void *userdata, const ctl_event *e) { evlog_write(&((ctl_server *)userdata)->state, e); }

static void launch_job(void *userdata, ctl_node *n, const job *j) { server_send_launch(userdata, n, j); }

static void cancel_job(void *userdata, ctl_node *n, const job *j, int grace_ms) {
        server_send_cancel(userdata, n, j, grace_ms);
}

static void job_ended(void *userdata, const job *j) {
        ctl_server *srv = userdata;
        /* coloc weighs a job that gave no estimate by its type's mean run time */
        if (server_places_by_alpha(srv) && j->state == JOB_COMPLETED && j->start_usec > 0 &&
            j->end_usec > j->start_usec &&
            coloc_dispatcher_note_runtime(srv->state.cfg.dispatcher, j->spec.job_type,
                                          (double)(j->end_usec - j->start_usec) / 1e6) < 0)
                log_warning("coloc: out of memory noting job %llu's run time", (unsigned long long)j->id);
        server_answer_waiters(srv, j);
}

static void drop_link(void *userdata, ctl_node *n, void *link) { server_drop_link(userdata, n, link); }

static int persist_array(void *userdata, const ctl_arec *a) {
        cJSON *o = ctl_arec_to_json(a);
        char *text = o ? proto_print(o) : NULL;
        int r = text ? server_persist_array(userdata, a->first, text) : -ENOMEM;
        cJSON_Delete(o);
        free(text);
        return r;
}

static const ctl_actions actions = {
        .persist = persist_job,
        .launch = launch_job,
        .cancel = cancel_job,
        .terminal = job_ended,
        .drop_link = drop_link,
        .event = record_event,
        .log = log_transition,
};

static int on_sighup(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        char err[ERRLEN];
        (void)s;
        (void)si;
        int r = server_reload(userdata, err, sizeof(err));
        if (r < 0)
                log_errno(LOG_ERR, r, "SIGHUP: reload refused, the departments stay as they were: %s", err);
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

/* Add the signals (SIGTERM and SIGINT end the loop once bulk work is done, SIGHUP reloads) and
 * the tick to the loop. Returns 0 or -errno (logged). */
static int add_signals_and_tick(ctl_server *srv) {
        int r;
        if ((r = sd_event_add_signal(srv->event, NULL, SIGTERM, server_bulk_stop, srv)) < 0 ||
            (r = sd_event_add_signal(srv->event, NULL, SIGINT, server_bulk_stop, srv)) < 0 ||
            (r = sd_event_add_signal(srv->event, NULL, SIGHUP, on_sighup, srv)) < 0 ||
            (r = sd_event_add_time_relative(srv->event, NULL, CLOCK_MONOTONIC, (uint64_t)srv->heartbeat_ms * 1000, 0,
                                            on_tick, srv)) < 0)
                return log_errno(LOG_ERR, r, "event loop set-up");
        return 0;
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

/* The order, the heuristic or the dispatcher (Tetris, Greedy, LoTES: the same seed on every
 * start), and the fairness that o names. Returns 0 or -errno (logged). */
static int open_policy(const options *o, sched_order *order, sched_heuristic *policy, sched_dispatcher **dispatcher,
                       int *fairness) {
        if (sched_order_from_name(o->order, order) < 0)
                return log_errno(LOG_ERR, -EINVAL, "order must be fifo, backfill or reserve, not '%s'", o->order);
        int r = strcmp(o->policy, "lotes") == 0 ? lotes_live_new(1, dispatcher)
                                                : sched_policy_new(o->policy, 1, policy, dispatcher);
        if (r < 0)
                return log_errno(LOG_ERR, r, r == -EINVAL ? "unknown policy '%s'" : "policy %s", o->policy);
        if (options_parse_fairness(o->fairness, fairness) < 0)
                return log_errno(LOG_ERR, -EINVAL,
                                 "fairness must be hdrf, mch, drf, wdrf, c-ch, m-ch or none, not '%s'", o->fairness);
        if (*fairness >= 0 && *dispatcher)
                log_info("policy %s keeps submission order: fairness %s does not apply", o->policy, o->fairness);
        return 0;
}

/* Open the store, restore its jobs, and read the secret. Returns 0 or -errno (logged). */
static int open_state(ctl_server *srv, const options *o, ctl_lotes_options *lotes) {
        char err[ERRLEN];
        sched_order order;
        sched_heuristic policy = SCHED_FIRST_FIT;
        sched_dispatcher *dispatcher = NULL;
        int fairness;
        int r = open_policy(o, &order, &policy, &dispatcher, &fairness);
        if (r < 0)
                return r;
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
                log_msg(LOG_NOTICE,
                        "sync_commits = no: a job is acknowledged once its commit is written, before it reaches "
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
        return server_load_alpha(srv);
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
                        if (usec >= 1000000)
                                log_msg(LOG_NOTICE,
                                        "the controller's loop stalled for %lld ms: not counted as any "
                                        "agent's silence",
                                        (long long)(usec / 1000));
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

/* The log priority o names, once o is whole; -EINVAL after a message on stderr when o is unusable. */
static int log_priority(const options *o) {
        int prio = log_level_from_name(o->log_level);
        if (prio < 0 || !o->secret_file) {
                fprintf(stderr, "colony-controller: %s\n",
                        prio < 0 ? "log level must be error, warning, notice, info or debug"
                                 : "--secret-file is required");
                return -EINVAL;
        }
        if (o->node_lost_timeout_ms < o->agent_timeout_ms) {
                fprintf(stderr,
                        "colony-controller: node_lost_timeout_ms (%lld) must be at least agent_timeout_ms (%lld): "
                        "a node is not-responding before its jobs are lost\n",
                        (long long)o->node_lost_timeout_ms, (long long)o->agent_timeout_ms);
                return -EINVAL;
        }
        return prio;
}

/* The process's limits, heap and signals, before the loop starts. */
static void process_setup(void) {
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
}

/* Free what the server holds, after its last commit. */
static void close_server(ctl_server *srv, listener ls[3], remote_server *remote) {
        ctl_lotes_free(srv->lotes);
        http_stop(srv->http);
        ctl_free(&srv->state);
        sd_event_source_disable_unref(srv->end_of_turn);
        server_bulk_close(srv);
        server_output_close(srv);
        server_events_close(srv);
        jobstore_close(srv->store);
        free(srv->waiters);
        free(srv->client_uids);
        for (size_t i = 0; i < 3; i++)
                sd_event_source_disable_unref(ls[i].rest);
        tls_ctx_free(ls[1].tls); /* OpenSSL counts the references of connections still open */
        tls_ctx_free(ls[2].tls);
        remote_server_stop(remote);
        free(srv->secret);
        sd_event_unref(srv->event);
        depts_free(&srv->depts);
        cpuwin_free(&srv->cpu);
        alpha_free(&srv->alpha);
}

int main(int argc, char **argv) {
        options o = OPTIONS_UNSET;
        config cfg = { 0 };
        char err[ERRLEN];
        if (options_parse_args(argc, argv, &o) < 0)
                return 2;
        ctl_server srv = { .config_path = o.config,
                           .fairness_arg = o.fairness,
                           .preauth_refused.interval_usec = LOG_FLOOD_USEC,
                           .clients_refused.interval_usec = LOG_FLOOD_USEC };
        ctl_lotes_options lotes = CTL_LOTES_DEFAULTS;
        if (o.config && (options_apply_config(&o, &cfg, err, sizeof(err)) < 0 ||
                         depts_from_config(&cfg, &srv.depts, err, sizeof(err)) < 0 ||
                         ctl_lotes_options_from_config(&cfg, &lotes, err, sizeof(err)) < 0)) {
                fprintf(stderr, "colony-controller: %s\n", err);
                ctl_lotes_options_free(&lotes);
                config_free(&cfg);
                return 1;
        }
        options_set_defaults(&o);
        int prio = log_priority(&o);
        if (prio < 0)
                return 2;
        log_open_journal("colony-controller", prio);
        process_setup();
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
        if (r < 0 || open_state(&srv, &o, &lotes) < 0 || listen_open(&srv, &o, ls) < 0 ||
            add_signals_and_tick(&srv) < 0 || listen_open_remote(&srv, &o, &ls[2], &remote) < 0) {
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
        close_server(&srv, ls, &remote);
        ctl_lotes_options_free(&lotes);
        config_free(&cfg);
        return r < 0 ? 1 : 0;
}
