/* eventsrv.c - the controller's event log on the loop: staging a job's events until they are
 * stored with it, publishing stored events to the ring and to followers, and the client
 * request "events" (docs/protocol.md). The log itself is events.h. */
#include "eventsrv.h"
#include "server.h"
#include "log.h"
#include "commit.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A follower whose unread events pass this is dropped: it must not make the controller buffer
 * without bound, and the loop never waits for it. This is on top of what the kernel's socket
 * buffers hold (some 200 KiB on Linux): a burst of thousands of events. */
#define FOLLOW_UNSENT_MAX    (32 * 1024)
#define EVENTS_LIMIT_MAX     1000 /* per reply: 1000 of the longest events fit a message */
#define EVENTS_LIMIT_DEFAULT 100

static void restore_event(void *userdata, const ev_record *e) { ev_ring_restore(userdata, e); }

int server_events_open(ctl_server *srv) {
        int r = ev_ring_init(&srv->events, EV_RING_DEFAULT, 1);
        if (r < 0)
                return log_errno(LOG_ERR, r, "event ring");
        long n = jobstore_events(srv->store, 0, 0, EV_RING_DEFAULT, true, restore_event, &srv->events);
        if (n < 0)
                return log_errno(LOG_ERR, (int)n, "loading events");
        log_info("restored %ld events; the next is %llu", n, (unsigned long long)srv->events.next_seq);
        return 0;
}

void server_events_close(ctl_server *srv) {
        ev_ring_free(&srv->events);
        free(srv->staged);
        free(srv->followers);
        srv->staged = NULL;
        srv->followers = NULL;
        srv->nstaged = srv->staged_cap = srv->nfollowers = 0;
}

void server_drop_follower(ctl_server *srv, conn *c) {
        size_t kept = 0;
        for (size_t i = 0; i < srv->nfollowers; i++)
                if (srv->followers[i].client != c)
                        srv->followers[kept++] = srv->followers[i];
        srv->nfollowers = kept;
}

/* Queue {"type":"event","event":{...}} for a follower, or drop it when it does not keep up. */
static void tell_follower(follower *f, const ev_record *e) {
        if (conn_unsent(f->client) > FOLLOW_UNSENT_MAX) {
                char text[PROTO_ERRLEN];
                snprintf(text, sizeof(text),
                         "dropped, more than %d KiB of events unread; follow again with "
                         "--since %llu",
                         FOLLOW_UNSENT_MAX / 1024, (unsigned long long)e->seq - 1);
                log_warning("events follower fd=%d pid=%d too slow: dropped", f->client->fd, (int)f->client->pid);
                conn_fail(f->client, text);
                f->client = NULL;
                return;
        }
        cJSON *msg = proto_new("event"), *o = ev_to_json(e);
        if (msg && o && cJSON_AddItemToObject(msg, "event", o))
                o = NULL;
        if (!msg || o || conn_send(f->client, msg) < 0)
                f->client = NULL; /* conn_send closed it; out of memory: it would miss events */
        cJSON_Delete(msg);
        cJSON_Delete(o);
}

/* A stored event: into the ring, and to every follower it concerns. */
static void publish(ctl_server *srv, const ev_record *e) {
        const ev_record *held = ev_ring_push(&srv->events, e);
        size_t kept = 0;
        for (size_t i = 0; i < srv->nfollowers; i++) {
                follower *f = &srv->followers[i];
                if (ev_matches(held, f->job))
                        tell_follower(f, held);
                if (f->client)
                        srv->followers[kept++] = *f;
        }
        srv->nfollowers = kept;
}

int server_events_store(ctl_server *srv, const job *j) {
        for (size_t i = 0; i < srv->nstaged; i++)
                srv->staged[i].seq = srv->events.next_seq + i;
        int r = jobstore_put_events(srv->store, j, srv->staged, srv->nstaged);
        for (size_t i = 0; r == 0 && i < srv->nstaged; i++)
                publish(srv, &srv->staged[i]);
        srv->nstaged = 0;
        return r;
}

void server_event(ctl_server *srv, const ctl_event *e) {
        if (srv->nstaged == srv->staged_cap) {
                size_t cap = srv->staged_cap ? 2 * srv->staged_cap : 4;
                ev_record *grown = realloc(srv->staged, cap * sizeof(*grown));
                if (!grown) {
                        log_error("job=%llu event %s not recorded: out of memory", (unsigned long long)e->job_id,
                                  e->what);
                        return;
                }
                srv->staged = grown;
                srv->staged_cap = cap;
        }
        ev_record_set(&srv->staged[srv->nstaged++], server_now(), e->job_id, e->node, e->what, e->reason);
        if (e->job_id == 0) /* a node's: no job write follows */
                (void)server_persist(srv, NULL);
}

typedef struct events_req {
        int64_t since; /* -1: the newest ones */
        int64_t job, limit;
        bool follow;
} events_req;

static int parse_events(const cJSON *msg, events_req *q, char err[PROTO_ERRLEN]) {
        static const char *const fields[] = { "since", "job", "limit", "follow", NULL };
        *q = (events_req){ .since = -1, .limit = EVENTS_LIMIT_DEFAULT };
        if (proto_check_fields(msg, fields, err) < 0 ||
            proto_get_int(msg, "since", 0, INT64_MAX, &q->since, err) == -EINVAL ||
            proto_get_int(msg, "job", 1, INT64_MAX, &q->job, err) == -EINVAL ||
            proto_get_int(msg, "limit", 1, EVENTS_LIMIT_MAX, &q->limit, err) == -EINVAL ||
            proto_get_bool(msg, "follow", &q->follow, err) == -EINVAL)
                return -EINVAL;
        return 0;
}

static void add_event(void *userdata, const ev_record *e) {
        cJSON *o = ev_to_json(e);
        if (!o || !cJSON_AddItemToArray(userdata, o))
                cJSON_Delete(o);
}

/* Up to q->limit events of q->job after seq after (the newest ones when newest) into arr, from
 * the ring when it holds them all, else from the store. Returns how many, or -EIO. */
static long collect(ctl_server *srv, const events_req *q, uint64_t after, bool newest, cJSON *arr) {
        const ev_ring *r = &srv->events;
        bool ring_has_all = ev_ring_oldest(r) <= after + 1 || ev_ring_oldest(r) == 1;
        if (newest && q->job == 0 && (r->len >= (size_t)q->limit || ev_ring_oldest(r) == 1)) {
                const ev_record *last[EVENTS_LIMIT_MAX];
                size_t n = ev_last(r, (size_t)q->limit, last);
                for (size_t i = 0; i < n; i++)
                        add_event(arr, last[i]);
                return (long)n;
        }
        if (!newest && ring_has_all) {
                long n = 0;
                for (uint64_t seq = after + 1; seq < r->next_seq && n < q->limit; seq++) {
                        const ev_record *e = ev_ring_get(r, seq);
                        if (e && ev_matches(e, (uint64_t)q->job)) {
                                add_event(arr, e);
                                n++;
                        }
                }
                return n;
        }
        return jobstore_events(srv->store, after, (uint64_t)q->job, (size_t)q->limit, newest, add_event, arr);
}

/* Send one page of events; *after moves to the last seq sent. Returns 1 when more follow, 0 when
 * done, -errno (error replied). */
static int send_page(ctl_server *srv, conn *c, const events_req *q, uint64_t *after, bool newest) {
        cJSON *out = proto_new("events"), *arr = out ? cJSON_AddArrayToObject(out, "events") : NULL;
        long n = arr ? collect(srv, q, *after, newest, arr) : -ENOMEM;
        if (n < 0) {
                cJSON_Delete(out);
                cJSON *err = proto_error("%s", n == -ENOMEM ? "out of memory" : "cannot read the event store");
                (void)conn_send(c, err);
                cJSON_Delete(err);
                return (int)n;
        }
        cJSON *last = cJSON_GetArrayItem(arr, cJSON_GetArraySize(arr) - 1);
        uint64_t last_seq = last ? (uint64_t)cJSON_GetObjectItemCaseSensitive(last, "seq")->valuedouble : *after;
        /* without a job filter the ring says whether events follow; with one, a full page may */
        bool more = !newest && n == q->limit && last_seq + 1 < srv->events.next_seq;
        cJSON_AddBoolToObject(out, "more", more);
        cJSON_AddNumberToObject(out, "last_seq", (double)(srv->events.next_seq - 1));
        int r = conn_send(c, out);
        cJSON_Delete(out);
        *after = newest ? srv->events.next_seq - 1 : last_seq;
        return r < 0 ? r : more;
}

void server_handle_events(ctl_server *srv, conn *c, const cJSON *msg) {
        char err[PROTO_ERRLEN];
        events_req q;
        if (parse_events(msg, &q, err) < 0) {
                cJSON *e = proto_error("%s", err);
                (void)conn_send(c, e);
                cJSON_Delete(e);
                return;
        }
        uint64_t after = q.since < 0 ? 0 : (uint64_t)q.since;
        int r = send_page(srv, c, &q, &after, q.since < 0);
        /* a follower is brought up to date page by page, as far as its buffer allows */
        while (q.follow && r == 1 && conn_unsent(c) <= FOLLOW_UNSENT_MAX)
                r = send_page(srv, c, &q, &after, false);
        if (!q.follow || r < 0)
                return;
        if (r == 1) {
                char text[PROTO_ERRLEN];
                snprintf(text, sizeof(text), "too many events to catch up at once; follow again with --since %llu",
                         (unsigned long long)after);
                conn_fail(c, text);
                return;
        }
        follower *f = realloc(srv->followers, (srv->nfollowers + 1) * sizeof(*f));
        if (!f) {
                conn_fail(c, "out of memory");
                return;
        }
        srv->followers = f;
        srv->followers[srv->nfollowers++] = (follower){ .client = c, .job = (uint64_t)q.job };
}
