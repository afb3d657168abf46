/* nodes.c - the nodes and their agents (state.h): hello, silence, disconnection and loss,
 * the strays a reconnecting agent lists, and a job's start, usage and end as its agent reports
 * them. Part of the state machine (state_int.h). */
#include "log.h"
#include "state_int.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where name is, or would go, in st->by_name. */
static size_t name_rank(const ctl_state *st, const char *name) {
        size_t lo = 0, hi = st->nnodes;
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (strcmp(st->by_name[mid]->name, name) < 0)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        return lo;
}

ctl_node *ctl_find_node(ctl_state *st, const char *name) {
        size_t i = name_rank(st, name);
        return i < st->nnodes && strcmp(st->by_name[i]->name, name) == 0 ? st->by_name[i] : NULL;
}

ctl_node *ctl_node_create(ctl_state *st, const char *name) {
        ctl_node **nodes = realloc(st->nodes, (st->nnodes + 1) * sizeof(*nodes));
        if (nodes)
                st->nodes = nodes;
        ctl_node **by_name = realloc(st->by_name, (st->nnodes + 1) * sizeof(*by_name));
        if (by_name)
                st->by_name = by_name;
        ctl_node *n = nodes && by_name ? calloc(1, sizeof(*n)) : NULL;
        sched_machine down = { .index = (uint32_t)st->nnodes };
        if (!n || !(n->name = strdup(name)) || sched_index_add(&st->view, down) < 0) {
                if (n)
                        free(n->name);
                free(n);
                return NULL;
        }
        size_t rank = name_rank(st, name);
        memmove(&st->by_name[rank + 1], &st->by_name[rank], (st->nnodes - rank) * sizeof(*by_name));
        st->by_name[rank] = n;
        n->index = st->nnodes;
        st->nodes[st->nnodes++] = n;
        return n;
}

static bool listed(uint64_t id, const uint64_t *ids, size_t n) {
        for (size_t i = 0; i < n; i++)
                if (ids[i] == id)
                        return true;
        return false;
}

static bool runs_on(const job *j, const ctl_node *n) {
        return j->state == JOB_RUNNING && j->node_index == n->index + 1; /* a running job was charged to its node */
}

uint32_t ctl_job_attempt(const job *j) {
        return j->attempt ? j->attempt : 1; /* records stored before attempts were counted */
}

/* Put a job whose node was lost back in the queue as its next attempt, in its submission place:
 * same id, same spec, a fresh run. */
static void requeue(ctl_state *st, job *j, const char *reason) {
        char why[PROTO_ERRLEN];
        snprintf(why, sizeof(why), "attempt %u requeued: %s", ctl_job_attempt(j), reason);
        ctl_emit(st, j, j->node, "requeued", why);
        ctl_set_state(st, j, JOB_PENDING);
        j->attempt = ctl_job_attempt(j) + 1;
        free(j->node);
        j->node = NULL;
        free(j->gpu_ids); /* the next run gets its own */
        j->gpu_ids = NULL;
        j->start_usec = 0;
        job_result_free(&j->result);
        j->result = (job_result){ .error = strdup(why) };
        (void)st->act->persist(st->userdata, j);
        if (ctl_requeue_pending(st, j) < 0) /* stored as pending: the next restart queues it */
                log_error("job=%llu out of memory requeueing it", (unsigned long long)j->id);
        ctl_family_moved(st, j, JOB_RUNNING);
        depidx_changed(st, j, JOB_RUNNING, st->clock_usec);
}

/* End a job colony lost (released from its node already): lost, or pending again when it asked
 * to be requeued. */
static void lose(ctl_state *st, job *j, const char *reason, int64_t now) {
        if (j->spec.requeue)
                requeue(st, j, reason);
        else
                ctl_finish(st, j, JOB_LOST, now, reason);
}

/* Lose every job recorded as running on n whose id is in ids (all of them when ids is NULL). */
static void lose_jobs(ctl_state *st, ctl_node *n, const uint64_t *ids, size_t nids, const char *reason, int64_t now) {
        for (size_t i = 0; i < st->njobs; i++) {
                job *j = st->jobs[i];
                if (!runs_on(j, n) || (ids && !listed(j->id, ids, nids)))
                        continue;
                ctl_release(st, n, j);
                lose(st, j, reason, now);
        }
}

/* Append id to a malloc'ed array. Returns 0 or -ENOMEM. */
static int id_append(uint64_t **ids, size_t *n, uint64_t id) {
        uint64_t *grown = realloc(*ids, (*n + 1) * sizeof(*grown));
        if (!grown)
                return -ENOMEM;
        *ids = grown;
        grown[(*n)++] = id;
        return 0;
}

/* Sum what n's strays hold into n->stray_held, from the records of the jobs they are attempts
 * of (a job the controller has no record of holds nothing it could count), and resync the view. */
static void hold_strays(ctl_state *st, ctl_node *n) {
        n->stray_held = (res_t){ 0 };
        for (size_t i = 0; i < n->nstrays; i++) {
                const job *j = ctl_find_job(st, n->strays[i]);
                if (j)
                        n->stray_held = res_add(n->stray_held, j->spec.req);
        }
        ctl_view_sync(st, n);
}

static void forget_strays(ctl_state *st, ctl_node *n) {
        if (n->nstrays)
                st->settled = false; /* the jobs they held may be placed again */
        st->nstrays -= n->nstrays;
        free(n->strays);
        n->strays = NULL;
        n->nstrays = 0;
        hold_strays(st, n);
}

void ctl_stray_ended(ctl_state *st, ctl_node *n, uint64_t id) {
        for (size_t i = 0; i < n->nstrays; i++)
                if (n->strays[i] == id) {
                        n->strays[i] = n->strays[--n->nstrays];
                        st->nstrays--;
                        hold_strays(st, n);
                        st->settled = false; /* the job it held may be placed again */
                        ctl_report(st, &(ctl_event){ .job_id = id, .node = n->name, .what = "stray-ended" }, false);
                        return;
                }
}

bool ctl_node_has_stray(const ctl_node *n, uint64_t id) { return listed(id, n->strays, n->nstrays); }

/* Whether a node's agent may still run job id beside the controller's record of it. */
static bool held(const ctl_state *st, uint64_t id) {
        for (size_t i = 0; st->nstrays && i < st->nnodes; i++)
                if (listed(id, st->nodes[i]->strays, st->nodes[i]->nstrays))
                        return true;
        return false;
}

/* Keep, in order, the jobs no node still runs an earlier attempt of; returns how many. */
size_t ctl_drop_held(const ctl_state *st, sched_job *jobs, size_t njobs) {
        size_t kept = 0;
        for (size_t i = 0; i < njobs; i++)
                if (!held(st, jobs[i].id))
                        jobs[kept++] = jobs[i];
        return kept;
}

static void forget_unconfirmed(ctl_node *n) {
        free(n->unconfirmed);
        n->unconfirmed = NULL;
        n->nunconfirmed = 0;
}

/* Note the jobs running on n that the reconnecting agent did not list, and those it listed that
 * do not run there (its strays). Returns 0 or -ENOMEM. */
static int note_unconfirmed(ctl_state *st, ctl_node *n, const uint64_t *running, size_t nrunning, ctl_time now) {
        forget_unconfirmed(n);
        forget_strays(st, n);
        for (size_t i = 0; i < st->njobs; i++) {
                job *j = st->jobs[i];
                if (runs_on(j, n) && !listed(j->id, running, nrunning) &&
                    id_append(&n->unconfirmed, &n->nunconfirmed, j->id) < 0)
                        return -ENOMEM;
        }
        for (size_t i = 0; i < nrunning; i++) {
                job *j = ctl_find_job(st, running[i]);
                if ((!j || !runs_on(j, n)) && !listed(running[i], n->strays, n->nstrays)) {
                        if (id_append(&n->strays, &n->nstrays, running[i]) < 0)
                                return -ENOMEM;
                        st->nstrays++;
                }
        }
        hold_strays(st, n);
        n->confirm_by_mono_usec = now.mono_usec + st->cfg.agent_timeout_usec;
        return 0;
}

static int set_str(char **dst, const char *src) {
        char *copy = strdup(src ? src : "");
        if (!copy)
                return -ENOMEM;
        free(*dst);
        *dst = copy;
        return 0;
}

int ctl_node_up(ctl_state *st, const char *name, res_t capacity, const char *cgroup_mode, const char *cgroup_root,
                const uint64_t *running, size_t nrunning, void *link, ctl_time now, ctl_node **out,
                char err[PROTO_ERRLEN]) {
        ctl_node *n = ctl_find_node(st, name);
        /* A not-responding node's link may be dead without our knowing (a reboot, a reset the
         * controller never saw): an agent that proves the secret again replaces it, as after a
         * disconnect, rather than wait out the node-lost timeout refused. */
        if (n && n->up && n->silent) {
                if (n->link && st->act->drop_link)
                        st->act->drop_link(st->userdata, n, n->link);
                ctl_node_disconnected(st, n);
        }
        if (n && n->up) {
                snprintf(err, PROTO_ERRLEN, "an agent named %s is already connected", name);
                return -EEXIST;
        }
        if ((!n && !(n = ctl_node_create(st, name))) || set_str(&n->cgroup_mode, cgroup_mode) < 0 ||
            set_str(&n->cgroup_root, cgroup_root) < 0) {
                snprintf(err, PROTO_ERRLEN, "out of memory");
                return -ENOMEM;
        }
        if (note_unconfirmed(st, n, running, nrunning, now) < 0) {
                snprintf(err, PROTO_ERRLEN, "out of memory");
                return -ENOMEM;
        }
        n->capacity = capacity;
        n->up = true;
        n->silent = false;
        n->link = link;
        ctl_view_sync(st, n);
        (void)ctl_node_heard(st, n, now);
        char why[PROTO_ERRLEN];
        snprintf(why, sizeof(why), "running %zu, not confirmed %zu, strays to stop %zu", nrunning - n->nstrays,
                 n->nunconfirmed, n->nstrays);
        ctl_emit(st, NULL, name, "node-up", why);
        *out = n;
        return 0;
}

void ctl_node_down(ctl_state *st, ctl_node *n, const char *reason, int64_t now) {
        char why[PROTO_ERRLEN];
        snprintf(why, sizeof(why), "agent %s %s", n->name, reason);
        n->up = false;
        n->silent = false;
        n->link = NULL;
        ctl_view_sync(st, n);
        forget_unconfirmed(n);
        forget_strays(st, n);
        ctl_emit(st, NULL, n->name, "node-down", why);
        lose_jobs(st, n, NULL, 0, why, now);
}

void ctl_node_disconnected(ctl_state *st, ctl_node *n) {
        n->up = false;
        n->silent = false;
        n->link = NULL;
        ctl_view_sync(st, n);
        forget_unconfirmed(n);
        /* Its jobs stay running and charged: ctl_check_silence loses them if it stays silent. */
        char why[PROTO_ERRLEN];
        snprintf(why, sizeof(why), "%zu running kept for %lld ms", n->running,
                 (long long)(st->cfg.node_lost_timeout_usec / 1000));
        ctl_emit(st, NULL, n->name, "node-disconnected", why);
}

bool ctl_node_heard(ctl_state *st, ctl_node *n, ctl_time now) {
        int64_t silence = now.mono_usec - n->last_heard_mono_usec;
        n->last_heard_usec = now.real_usec;
        n->last_heard_mono_usec = now.mono_usec;
        if (!n->silent)
                return false;
        n->silent = false;
        ctl_view_sync(st, n);
        char why[PROTO_ERRLEN];
        snprintf(why, sizeof(why), "responding again after %lld ms of silence, %zu running",
                 (long long)(silence / 1000), n->running);
        ctl_emit(st, NULL, n->name, "node-up", why);
        return true;
}

const char *ctl_node_state_name(const ctl_node *n) {
        if (n->up && !n->silent && n->drain_reason)
                return n->running ? "draining" : "drained";
        return !n->up ? "down" : n->silent ? "not-responding" : "up";
}

void ctl_node_sync(ctl_state *st, ctl_node *n) { ctl_view_sync(st, n); }

void ctl_credit_stall(ctl_state *st, int64_t stall_usec, ctl_time now) {
        for (size_t i = 0; i < st->nnodes; i++) {
                ctl_node *n = st->nodes[i];
                n->last_heard_mono_usec += stall_usec;
                if (n->last_heard_mono_usec > now.mono_usec) /* heard from during the stalled turn */
                        n->last_heard_mono_usec = now.mono_usec;
                n->confirm_by_mono_usec += stall_usec;
        }
}

/* The node's agent is connected but silent: place nothing more there, and leave its jobs
 * running (a stopped, swapping or partitioned agent is slow, not dead). */
static void not_responding(ctl_state *st, ctl_node *n, int64_t silence_usec) {
        n->silent = true;
        ctl_view_sync(st, n);
        char why[PROTO_ERRLEN];
        snprintf(why, sizeof(why), "silent for %lld ms: %zu running kept for up to %lld ms",
                 (long long)(silence_usec / 1000), n->running, (long long)(st->cfg.node_lost_timeout_usec / 1000));
        ctl_emit(st, NULL, n->name, "node-not-responding", why);
}

void ctl_check_silence(ctl_state *st, ctl_time now) {
        for (size_t i = 0; i < st->nnodes; i++) {
                ctl_node *n = st->nodes[i];
                int64_t silence = now.mono_usec - n->last_heard_mono_usec;
                /* a down node with strays times out too: the jobs they hold must not wait forever */
                if ((n->up || n->running > 0 || n->nstrays > 0) && silence > st->cfg.node_lost_timeout_usec) {
                        if (n->link && st->act->drop_link)
                                st->act->drop_link(st->userdata, n, n->link);
                        ctl_node_down(st, n, "timed out", now.real_usec);
                } else if (n->up && !n->silent && silence > st->cfg.agent_timeout_usec) {
                        not_responding(st, n, silence);
                } else if (n->nunconfirmed && now.mono_usec >= n->confirm_by_mono_usec) {
                        char reason[PROTO_ERRLEN];
                        snprintf(reason, sizeof(reason), "agent %s came back without it", n->name);
                        lose_jobs(st, n, n->unconfirmed, n->nunconfirmed, reason, now.real_usec);
                        forget_unconfirmed(n);
                }
        }
}

/* The job running on n with that id, or NULL. */
static job *running_on(ctl_state *st, ctl_node *n, uint64_t id) {
        job *j = ctl_find_job(st, id);
        return j && runs_on(j, n) ? j : NULL;
}

bool ctl_job_runs_on(ctl_state *st, ctl_node *n, uint64_t id) { return running_on(st, n, id) != NULL; }

int ctl_job_started(ctl_state *st, ctl_node *n, uint64_t id, int64_t start_usec) {
        job *j = running_on(st, n, id);
        if (!j)
                return -ENOENT;
        for (size_t i = 0; i < n->nunconfirmed; i++) /* a launch sent again after a reconnect took */
                if (n->unconfirmed[i] == id)
                        n->unconfirmed[i] = n->unconfirmed[--n->nunconfirmed];
        /* An agent reports a start again after each welcome, since the first may have died
         * unread with it or with us: the first one read is the job's. */
        if (j->start_usec)
                return 0;
        j->start_usec = start_usec;
        ctl_running_started(st, j);
        ctl_emit(st, j, n->name, "started", NULL);
        (void)st->act->persist(st->userdata, j);
        return 0;
}

int ctl_job_set_gpus(ctl_state *st, ctl_node *n, uint64_t id, const char *gpu_ids) {
        job *j = running_on(st, n, id);
        char *copy = NULL;
        if (!j)
                return -ENOENT;
        if (gpu_ids && *gpu_ids && !(copy = strdup(gpu_ids))) {
                log_error("job=%llu node=%s: out of memory for its GPUs %s: its record names none",
                          (unsigned long long)id, n->name, gpu_ids);
                return -ENOMEM;
        }
        free(j->gpu_ids);
        j->gpu_ids = copy;
        return 0;
}

int ctl_job_usage(ctl_state *st, ctl_node *n, uint64_t id, const job_result *sample) {
        job *j = running_on(st, n, id);
        if (!j)
                return -ENOENT;
        j->result.cpu_usec = sample->cpu_usec;
        j->result.mem_current = sample->mem_current;
        j->result.mem_peak = sample->mem_peak;
        j->result.oom_kills = sample->oom_kills;
        j->result.io_rbytes = sample->io_rbytes;
        j->result.io_wbytes = sample->io_wbytes;
        j->result.psi = sample->psi;
        j->result.gpu_known = sample->gpu_known;
        j->result.gpu_util = sample->gpu_util;
        j->result.gpu_mem = sample->gpu_mem;
        return 0;
}

int ctl_job_finished(ctl_state *st, ctl_node *n, uint64_t id, job_state state, job_result *result, int64_t end_usec) {
        job *j = running_on(st, n, id);
        if (!j) {
                ctl_stray_ended(st, n, id);
                return -ENOENT;
        }
        if (!job_state_is_terminal(state))
                return -EINVAL;
        job_result_free(&j->result);
        j->result = *result;
        *result = (job_result){ 0 };
        ctl_release(st, n, j);
        if (state == JOB_LOST)
                lose(st, j, j->result.error ? j->result.error : "its agent lost it", end_usec);
        else
                ctl_finish(st, j, state, end_usec, NULL);
        return 0;
}
