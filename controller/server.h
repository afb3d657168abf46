/* server.h - the controller's event loop state, shared by its client and agent handlers. */
#pragma once
#include "conn.h"
#include "events.h"
#include "jobstore.h"
#include "cpuwin.h"
#include "log.h"
#include "lotes_plan.h"
#include "state.h"
#include "stats.h"
#include <systemd/sd-event.h>

/* Limits on peers not yet trusted (docs/architecture.md, "Limits"). An agent link must complete
 * its TLS handshake and hello within AGENT_HELLO_DEADLINE_MS, in one frame of at most
 * AGENT_PREAUTH_INPUT_MAX bytes (a hello listing some 7,000 running jobs fits); at most
 * AGENT_PREAUTH_MAX links may be at that stage at once, so strangers hold at most about 8 MiB.
 * A user may hold CLIENT_CONNS_PER_USER client connections at once; root and the controller's
 * own user CLIENT_CONNS_PER_ADMIN. */
#define AGENT_HELLO_DEADLINE_MS 10000
#define AGENT_PREAUTH_INPUT_MAX (64 * 1024)
#define AGENT_PREAUTH_MAX 128
#define CLIENT_CONNS_PER_USER 256
#define CLIENT_CONNS_PER_ADMIN 1024

/* How many client connections one uid holds (clients.c). */
typedef struct uid_conns {
        uid_t uid;
        unsigned n;
} uid_conns;

typedef struct waiter {
        conn *client;
        uint64_t job_id;
} waiter;

/* A client of "events" with "follow": it gets each new event of job (any when 0) as it happens. */
typedef struct follower {
        conn *client;
        uint64_t job;
} follower;

/* A request done a slice per turn of the loop (bulk.c). */
typedef struct bulk_task bulk_task;
/* A slice of bulk work runs chunks of BULK_CHUNK jobs (submitted, or looked at to cancel) for
 * BULK_SLICE_USEC (bulk.c). An array of at most BULK_CHUNK jobs is submitted in its turn. */
#define BULK_CHUNK 50
#define BULK_SLICE_USEC 20000
/* Stopping after the bulk work, how often to look whether its answers' fsync is done. */
#define STOP_RECHECK_USEC 10000

typedef struct ctl_server {
        sd_event *event;
        ctl_state state;
        jobstore *store;
        depts depts; /* from the config file's [departments], [department_caps], [department_users] */
        const char *config_path;  /* --config, re-read on SIGHUP and `reload`; NULL: none */
        const char *fairness_arg; /* --fairness, which a reload keeps; NULL: the file's or mch */
        ctl_lotes *lotes; /* policy = lotes: its plans */
        alpha_matrix alpha; /* the latest interference matrix stored (version 0: none) */
        char policy_status[256];
        cpuwin cpu;  /* CPU time per department over the last CPUWIN_SECONDS */
        char *secret;
        int heartbeat_ms;
        waiter *waiters;
        size_t nwaiters;
        ctl_stats stats;
        struct http_server *http; /* NULL unless controller.http_listen is set */
        sd_event_source *end_of_turn; /* commit.c: the scheduling pass and the group commit */
        bool in_batch;                /* the store has uncommitted writes: output is held */
        conn_held_list held_conns;    /* the connections holding output until the commit */
        bool want_schedule;
        bool store_failed;            /* a commit failed: the loop is stopping */
        bool checkpoint_due;          /* a tick passed: the log may be checkpointed (commit.c) */
        ev_ring events;      /* the latest events, for fast reads (eventsrv.c) */
        ev_record *staged;   /* a job's events waiting to be stored with its next persist */
        size_t nstaged, staged_cap;
        follower *followers;
        size_t nfollowers;
        bulk_task **bulk;    /* requests done a slice per turn, each requester's in order (bulk.c) */
        size_t nbulk;
        sd_event_source *bulk_source; /* a timer, due at once while bulk has any */
        size_t npreauth;              /* agent links that have not proved the secret yet */
        log_ratelimit preauth_refused; /* agentlink.c: links refused for AGENT_PREAUTH_MAX */
        uid_conns *client_uids;       /* clients.c: per uid holding any, the count */
        size_t nclient_uids;
        log_ratelimit clients_refused; /* clients.c: connections refused for the per-user cap */
        bool stopping;                /* a signal asked to stop once the bulk work is done (bulk.c) */
        struct offloop *syncer;       /* commit.c: the fdatasync of the store's log, off the loop */
        struct offloop *checkpointer; /* commit.c: the store's checkpoints, off the loop */
        int sync_fd;                  /* the log's descriptor the syncer fdatasyncs */
        uint64_t commits_seen;        /* the store's commits as of the last end of a turn */
        bool unsynced;                /* commits that no sync (done or in flight) covers: output is held */
        bool syncs_deferred;          /* the store's syncs are the syncer's (set at the first write) */
        struct remote_server *remote; /* remote.c: who may submit from another host, and how */
        struct out_pending *outputs;  /* outrelay.c: followers' reads in flight, one per client at most */
        size_t noutputs;
        uint64_t output_tag;          /* the last read_output's tag */
} ctl_server;

/* CLOCK_REALTIME in microseconds (job times are wall-clock for users). */
int64_t server_now(void);
/* Now on both clocks, for the state machine's liveness checks. */
ctl_time server_clock(void);
/* Accept-side ops for client connections (clients.c) and agent connections (agentlink.c). */
extern const conn_ops client_conn_ops;
extern const conn_ops agent_conn_ops;
/* Answer every client waiting for j, now that it is terminal (clients.c). */
void server_answer_waiters(ctl_server *srv, const job *j);
/* Send a launch or cancel to the node's agent (agentlink.c). */
void server_send_launch(ctl_server *srv, ctl_node *n, const job *j);
void server_send_cancel(ctl_server *srv, ctl_node *n, const job *j, int grace_ms);
/* Send every up agent the departments' weights, for the department cgroups it has (agentlink.c). */
void server_send_weights(ctl_server *srv);
/* Close the link of node n, which went silent, so that it counts for nothing (agentlink.c). */
void server_drop_link(ctl_server *srv, ctl_node *n, conn *c);
/* Read the config file again and take its departments and fairness; a file that does not parse
 * changes nothing. Returns 0, or -errno with one line in err (controller.c). */
int server_reload(ctl_server *srv, char *err, size_t errlen);
/* Take m (zeroed) as the latest interference matrix, and give it to a coloc dispatcher. */
void server_set_alpha(ctl_server *srv, alpha_matrix *m);
/* One line on the policy's state (a LoTES plan, or first-fit until one), or NULL. */
const char *server_policy_status(const ctl_server *srv);
/* Load the latest events from the store into srv->events. Returns 0 or -errno (logged). */
int server_events_open(ctl_server *srv);
/* Free the event ring and what is staged (not the followers: their connections own them). */
void server_events_close(ctl_server *srv);
/* The state machine's event hook: a job's event is staged for its next persist, a node's is
 * stored and published at once. */
void server_event(ctl_server *srv, const ctl_event *e);
/* Write the job (NULL: none) and its staged events into the store's open batch, then hand the
 * events to the ring and the followers (whose output is held until the batch commits). Returns 0
 * or -EIO (staged events are dropped). */
int server_events_store(ctl_server *srv, const job *j);
/* The client request "events" (docs/protocol.md). */
void server_handle_events(ctl_server *srv, conn *c, const cJSON *msg);
/* Forget c as a follower (its connection is closing). */
void server_drop_follower(ctl_server *srv, conn *c);
/* The client request "output": a read of the job's files from its agent (outrelay.c). */
void server_handle_output(ctl_server *srv, conn *c, const cJSON *msg);
/* The agent's answer to a read_output: to the client that asked, if still there. */
void server_output_answer(ctl_server *srv, ctl_node *n, const cJSON *msg);
/* c is closing: its read in flight is answered to nobody. */
void server_output_forget(ctl_server *srv, conn *c);
/* n's link closed: its reads in flight are answered with that (the followers ask again). */
void server_output_node_gone(ctl_server *srv, ctl_node *n);
/* Free the reads in flight (at exit). */
void server_output_close(ctl_server *srv);
/* Schedule once this turn of the loop is over, logging a failure (both handlers call it after
 * any change; commit.c). */
void server_schedule(ctl_server *srv);
/* Let the end of this turn checkpoint the store's log if it has grown (commit.c; the tick
 * calls it, so that checkpoints come at most once per heartbeat unless the log is huge). */
void server_checkpoint_due(ctl_server *srv);
/* Add the end-of-turn source to srv->event, and start the threads that sync and checkpoint the
 * store (commit.c; server_commit_last stops them). Returns 0 or -errno. */
int server_commit_init(ctl_server *srv);
/* Store j (NULL: only the staged events) in this turn's batch, opening it if needed (commit.c): durable once the turn ends,
 * and until then every connection's output is held. Returns 0 or -errno. */
int server_persist(ctl_server *srv, const job *j);
/* Store an array's record (its id, its text) in the turn's batch, as server_persist does a job.
 * Returns 0 or -errno. */
int server_persist_array(ctl_server *srv, uint64_t id, const char *record);
/* Submit count jobs (0: one) of spec (taken, zeroed) for c's user, with the indexes of *indexes
 * (taken, zeroed; empty: 0 to count - 1), a slice per turn after the work c queued before,
 * taking turns with other requesters'; c gets the reply once all are stored (bulk.c). Returns 0
 * or -errno. */
int server_bulk_submit(ctl_server *srv, conn *c, const char *user, job_spec *spec, size_t count,
                       array_set *indexes);
/* Cancel the jobs f names (ranges: f's, malloc'ed, taken) on behalf of c's user, a slice per turn
 * after the work c queued before, taking turns with other requesters'; c gets the counts at the
 * end (bulk.c). Returns 0 or -errno. */
int server_bulk_cancel(ctl_server *srv, conn *c, const ctl_cancel_filter *f, uint64_t *ranges);
/* Answer c with msg (taken) after the work c queued before, so that a client matching replies
 * to its pipelined requests by order gets them in order (bulk.c). Returns 0, or -ENOMEM and
 * msg is freed unsent. */
int server_bulk_reply(ctl_server *srv, conn *c, cJSON *msg);
/* SIGTERM and SIGINT: stop the loop, at once, or once the bulk work queued is done, without
 * slices, stored and answered: no array is left half made (bulk.c). */
int server_bulk_stop(sd_event_source *s, const struct signalfd_siginfo *si, void *userdata);
/* True while work c queued waits in bulk: c's next replies must come after it. */
bool server_bulk_has(const ctl_server *srv, const conn *c);
/* Send msg (taken) to a client; one past the message limit is answered with an error instead
 * (clients.c). */
void server_reply(conn *c, cJSON *msg);
/* c is closing: its queued work goes on, unanswered. */
void server_bulk_forget(ctl_server *srv, conn *c);
/* Free the queued work (at exit). */
void server_bulk_close(ctl_server *srv);
/* After the loop: commit what its last turn wrote, if it was cut short, stop the sync and
 * checkpoint threads, and sync what they had not (commit.c). */
void server_commit_last(ctl_server *srv);
/* Whether writes of the store are not committed, or a commit not on disk yet: output waits. */
bool server_writes_undurable(const ctl_server *srv);
/* conn_ops.held for every connection: true while this turn's writes are not committed, or a
 * commit is not on disk yet. */
bool server_output_held(conn *c);
/* The list of connections whose output waits for the turn's commit (conn_ops.held_list). */
conn_held_list *server_held_list(conn *c);
