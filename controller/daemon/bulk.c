/* bulk.c - requests too large for one turn of the loop: an array submission of more than a
 * slice of jobs, and a cancel of many jobs, done a slice per turn.
 *
 * A job's submission costs about 35 us, most of it its write to the store (measured with perf
 * on a 100,000-job array: 4 s in one turn, with agents and clients unheard meanwhile). Here a
 * timer, due at once while work is queued, does one slice per turn of the loop, chunks of jobs
 * for BULK_SLICE_USEC; the turn's end commits it (commit.c). Slices are cut by time, not by
 * jobs, since each costs a commit (an fsync: 5 to 250 ms on a busy disk) whatever its size. The timer, not a defer
 * source: sd-event dispatches the pending source that became pending first, and a defer source stays pending, so it
 * would run before every socket until the work is done; a timer fires again only after another poll, and whatever that
 * poll found waiting is dispatched first. So queue, show, agents' reports and small cancels are
 * served between two slices. The timer's priority is below the sockets' and the end of the
 * turn's (commit.c), so that what a poll found is answered, and committed, before the slice
 * that poll made due opens a batch of its own: a queue read beside a slice no longer waits for
 * that slice's fsync (storm.sh: queue p99 126-147 ms, from 223-332). Nothing starves the
 * slices: a due timer stays pending, and sd-event dispatches what is pending before it polls
 * again, so one poll's requests at most (each connection's read bounded: conn.c) go first. So are other requesters'
 * submissions: an array takes its ids when it begins (ctl_array_begin), and a plain submission is made at once,
 * numbered after it. Each requester's work is done in the order it came (its replies keep the order of its requests),
 * and the requesters take turns a slice each, so that another user's bulk cancel does not wait
 * for a 100,000-job array to be made (a cancel reaches the jobs made when it runs). The
 * requester's reply comes when its last slice is stored; if it goes away meanwhile, the work
 * goes on unanswered.
 *
 * An array is all or nothing: a SIGTERM or SIGINT while bulk work is queued stops the controller
 * only once that work is done, in one turn without slices (server_bulk_stop), committed and
 * answered. */
#include "bulk.h"
#include "server.h"
#include "log.h"
#include "commit.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

struct bulk_task {
        conn *client;  /* NULL once its connection has closed */
        cJSON *answer; /* a reply only, to a request after the client's queued work */
        bool cancel;   /* a cancel; otherwise a submission */
        /* a submission */
        uid_t uid;
        gid_t gid;
        char *user;
        job_spec spec;
        size_t count;      /* "array", 0 for one job */
        array_set indexes; /* its tasks' indexes, until the array begins */
        bool begun;
        ctl_array array;
        /* a cancel */
        ctl_cancel_filter filter; /* its ranges are the task's own */
        uint64_t cursor;
        ctl_cancel_counts counts;
};

static void task_free(bulk_task *t) {
        cJSON_Delete(t->answer);
        free(t->user);
        job_spec_free(&t->spec);
        ctl_array_free(&t->array);
        array_set_free(&t->indexes);
        free((uint64_t *)t->filter.ranges);
        free(t);
}

static void send_reply(bulk_task *t, cJSON *msg) {
        if (t->client)
                conn_reply(t->client, msg);
        else
                cJSON_Delete(msg);
}

/* The reply to a finished task (r < 0: refused or failed, err says why). */
static cJSON *task_reply(bulk_task *t, int r, const char *err) {
        cJSON *answer = t->answer;

        t->answer = NULL;
        if (answer)
                return answer;
        if (r < 0)
                return proto_error("%s", err);
        cJSON *ok = proto_new(t->cancel ? "cancelled_many" : "submitted");
        if (ok && t->cancel) {
                cJSON_AddNumberToObject(ok, "cancelled", (double)t->counts.cancelled);
                cJSON_AddNumberToObject(ok, "stopping", (double)t->counts.stopping);
                cJSON_AddNumberToObject(ok, "refused", (double)t->counts.refused);
                cJSON_AddNumberToObject(ok, "unreachable", (double)t->counts.unreachable);
        } else if (ok) {
                cJSON_AddNumberToObject(ok, "id", (double)t->array.first);
                if (t->count)
                        cJSON_AddNumberToObject(ok, "count", (double)t->count);
        }
        return ok;
}

/* One chunk of t. Returns 1 when t is done, 0 when more remains, -errno with err set. */
static int task_chunk(ctl_server *srv, bulk_task *t, char err[PROTO_ERRLEN]) {
        int r;
        if (t->answer)
                return 1;
        if (t->cancel)
                return ctl_cancel_some(&srv->state, &t->filter, t->uid, server_now(), &t->cursor, BULK_CHUNK,
                                       &t->counts);
        if (!t->begun) {
                if ((r = ctl_array_begin(&srv->state, t->uid, t->gid, t->user, &t->spec, t->count, server_now(),
                                         &t->array, err)) < 0)
                        return r;
                t->begun = true;
                t->array.indexes = t->indexes;
                t->indexes = (array_set){ 0 };
        }
        log_hold(); /* a line per job, written together */
        r = ctl_array_more(&srv->state, &t->array, BULK_CHUNK, err);
        log_release();
        return r;
}

/* Run the next slice after the next poll. Returns 0 or -errno. */
static int bulk_arm_in(ctl_server *srv, uint64_t usec) {
        int r = sd_event_source_set_time_relative(srv->bulk_source, usec);
        return r < 0 ? r : sd_event_source_set_enabled(srv->bulk_source, SD_EVENT_ONESHOT);
}

static int bulk_arm(ctl_server *srv) { return bulk_arm_in(srv, 0); }

/* Whether t is the requester's (c's) work, or t itself when the requester has gone. */
static bool same_requester(const bulk_task *t, const bulk_task *head) {
        return t == head || (head->client && t->client == head->client);
}

/* Move the work of the first task's requester behind the others', its order kept: the
 * requesters take turns. O(tasks queued). */
static void bulk_rotate(ctl_server *srv) {
        bulk_task *head = srv->bulk[0], **mine = malloc(srv->nbulk * sizeof(*mine));
        size_t kept = 0, nmine = 0;
        if (!mine)
                return; /* the head goes on first: slower for the others, never wrong */
        for (size_t i = 0; i < srv->nbulk; i++)
                if (same_requester(srv->bulk[i], head))
                        mine[nmine++] = srv->bulk[i];
                else
                        srv->bulk[kept++] = srv->bulk[i];
        memcpy(&srv->bulk[kept], mine, nmine * sizeof(*mine));
        free(mine);
}

/* Whether the slice that began at start may go on: always while the controller is stopping. */
static bool slice_left(const ctl_server *srv, int64_t start) {
        return srv->stopping || server_clock().mono_usec - start < BULK_SLICE_USEC;
}

/* A slice: chunks of the work queued, in order, until it is done or BULK_SLICE_USEC have passed
 * (so that a requester's pipeline of small submissions queued behind its array shares a
 * commit); unfinished, the requester's work goes behind the others'. */
static int bulk_run(sd_event_source *s, uint64_t usec, void *userdata) {
        ctl_server *srv = userdata;
        char err[PROTO_ERRLEN];
        int64_t start = server_clock().mono_usec;
        int r;
        (void)s;
        (void)usec;
        if (srv->stopping && srv->nbulk == 0) { /* after the turn that committed and answered the last */
                /* The answers wait for their commit's fsync (commit.c): look again shortly. */
                if (server_writes_undurable(srv) && !srv->store_failed && bulk_arm_in(srv, STOP_RECHECK_USEC) == 0)
                        return 0;
                return sd_event_exit(srv->event, 0);
        }
        while (srv->nbulk > 0) {
                bulk_task *t = srv->bulk[0];
                while ((r = task_chunk(srv, t, err)) == 0 && slice_left(srv, start))
                        ;
                /* A cancel of pending jobs frees nothing: its pass (over the whole queue, 60 ms
                 * at 100,000) runs once, after its last slice, unless something else asks first. */
                if (!t->answer && (!t->cancel || r != 0 || t->counts.stopping))
                        server_schedule(srv);
                if (r == 0) {
                        bulk_rotate(srv);
                        break;
                }
                send_reply(t, task_reply(t, r, err));
                task_free(t);
                memmove(&srv->bulk[0], &srv->bulk[1], --srv->nbulk * sizeof(*srv->bulk));
                if (!slice_left(srv, start))
                        break;
        }
        if ((srv->nbulk || srv->stopping) && (r = bulk_arm(srv)) < 0) { /* the next request queued tries again */
                log_errno(LOG_ERR, r, "cannot arm the timer of the bulk work: %zu requests wait", srv->nbulk);
                if (srv->stopping)
                        return sd_event_exit(srv->event, 0);
        }
        return 0;
}

int server_bulk_stop(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata) {
        ctl_server *srv = userdata;
        (void)s;
        if (srv->stopping)
                return 0;
        /* Replies held for their commit's fsync (commit.c) go out first: an array stored in one
         * turn is acknowledged before the loop ends, or its requester would take it for lost. */
        if ((srv->nbulk == 0 && !server_writes_undurable(srv)) || bulk_arm(srv) < 0)
                return sd_event_exit(srv->event, 0);
        srv->stopping = true;
        log_info("signal %u: stopping once the bulk work queued is done and its replies are on disk, requests: %zu "
                 "(an array is all or none)",
                 si->ssi_signo, srv->nbulk);
        return 0;
}

/* Queue t, the requester's (c) work. Returns 0 or -ENOMEM (t is then freed). */
static int bulk_queue(ctl_server *srv, conn *c, bulk_task *t) {
        int r;
        if (!srv->bulk_source &&
            ((r = sd_event_add_time_relative(srv->event, &srv->bulk_source, CLOCK_MONOTONIC, 0, 1, bulk_run, srv)) <
                     0 ||
             (r = sd_event_source_set_priority(srv->bulk_source, SD_EVENT_PRIORITY_NORMAL + 1)) < 0)) {
                srv->bulk_source = sd_event_source_disable_unref(srv->bulk_source);
                task_free(t);
                return r;
        }
        bulk_task **grown = realloc(srv->bulk, (srv->nbulk + 1) * sizeof(*grown));
        if (!grown) {
                task_free(t);
                return -ENOMEM;
        }
        srv->bulk = grown;
        t->client = c;
        srv->bulk[srv->nbulk++] = t;
        int enabled = SD_EVENT_OFF;
        (void)sd_event_source_get_enabled(srv->bulk_source, &enabled);
        return enabled == SD_EVENT_OFF ? bulk_arm(srv) : 0;
}

int server_bulk_submit(ctl_server *srv, conn *c, const char *user, job_spec *spec, size_t count, array_set *indexes) {
        bulk_task *t = calloc(1, sizeof(*t));
        if (!t || !(t->user = strdup(user))) {
                free(t);
                return -ENOMEM;
        }
        t->uid = c->uid;
        t->gid = c->gid;
        t->count = count;
        t->spec = *spec;
        *spec = (job_spec){ 0 };
        t->indexes = *indexes;
        *indexes = (array_set){ 0 };
        return bulk_queue(srv, c, t);
}

int server_bulk_cancel(ctl_server *srv, conn *c, const ctl_cancel_filter *f, uint64_t *ranges) {
        bulk_task *t = calloc(1, sizeof(*t));
        if (!t) {
                free(ranges);
                return -ENOMEM;
        }
        *t = (bulk_task){ .cancel = true, .uid = c->uid, .filter = *f, .cursor = 1 };
        t->filter.ranges = ranges;
        return bulk_queue(srv, c, t);
}

int server_bulk_reply(ctl_server *srv, conn *c, cJSON *msg) {
        bulk_task *t = calloc(1, sizeof(*t));
        if (!t) {
                cJSON_Delete(msg);
                return -ENOMEM;
        }
        t->answer = msg;
        return bulk_queue(srv, c, t);
}

bool server_bulk_has(const ctl_server *srv, const conn *c) {
        for (size_t i = 0; i < srv->nbulk; i++)
                if (srv->bulk[i]->client == c)
                        return true;
        return false;
}

void server_bulk_forget(ctl_server *srv, conn *c) {
        for (size_t i = 0; i < srv->nbulk; i++)
                if (srv->bulk[i]->client == c)
                        srv->bulk[i]->client = NULL;
}

void server_bulk_close(ctl_server *srv) {
        for (size_t i = 0; i < srv->nbulk; i++)
                task_free(srv->bulk[i]);
        free(srv->bulk);
        srv->bulk = NULL;
        srv->nbulk = 0;
        srv->bulk_source = sd_event_source_disable_unref(srv->bulk_source);
}
