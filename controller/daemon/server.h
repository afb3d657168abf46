/* server.h - the controller's event loop state, shared by its client and agent handlers. */
#pragma once
#include "clock.h"
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
#define AGENT_PREAUTH_MAX       128
#define CLIENT_CONNS_PER_USER   256
#define CLIENT_CONNS_PER_ADMIN  1024

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
#define BULK_CHUNK      50
#define BULK_SLICE_USEC 20000
/* Stopping after the bulk work, how often to look whether its answers' fsync is done. */
#define STOP_RECHECK_USEC 10000

typedef struct ctl_server {
        sd_event *event;
        ctl_state state;
        jobstore *store;
        depts depts;              /* from the config file's [departments], [department_caps], [department_users] */
        const char *config_path;  /* --config, re-read on SIGHUP and `reload`; NULL: none */
        const char *fairness_arg; /* --fairness, which a reload keeps; NULL: the file's or mch */
        ctl_lotes *lotes;         /* policy = lotes: its plans */
        alpha_matrix alpha;       /* the latest interference matrix stored (version 0: none) */
        char policy_status[256];
        cpuwin cpu; /* CPU time per department over the last CPUWIN_SECONDS */
        char *secret;
        int heartbeat_ms;
        waiter *waiters;
        size_t nwaiters;
        ctl_stats stats;
        struct http_server *http;     /* NULL unless controller.http_listen is set */
        sd_event_source *end_of_turn; /* commit.c: the scheduling pass and the group commit */
        bool in_batch;                /* the store has uncommitted writes: output is held */
        conn_held_list held_conns;    /* the connections holding output until the commit */
        bool want_schedule;
        bool store_failed;   /* a commit failed: the loop is stopping */
        bool checkpoint_due; /* a tick passed: the log may be checkpointed (commit.c) */
        ev_ring events;      /* the latest events, for fast reads (eventsrv.c) */
        ev_record *staged;   /* a job's events waiting to be stored with its next persist */
        size_t nstaged, staged_cap;
        follower *followers;
        size_t nfollowers;
        bulk_task **bulk; /* requests done a slice per turn, each requester's in order (bulk.c) */
        size_t nbulk;
        sd_event_source *bulk_source;  /* a timer, due at once while bulk has any */
        size_t npreauth;               /* agent links that have not proved the secret yet */
        log_ratelimit preauth_refused; /* agentlink.c: links refused for AGENT_PREAUTH_MAX */
        uid_conns *client_uids;        /* clients.c: per uid holding any, the count */
        size_t nclient_uids;
        log_ratelimit clients_refused; /* clients.c: connections refused for the per-user cap */
        bool stopping;                 /* a signal asked to stop once the bulk work is done (bulk.c) */
        struct offloop *syncer;        /* commit.c: the fdatasync of the store's log, off the loop */
        struct offloop *checkpointer;  /* commit.c: the store's checkpoints, off the loop */
        int sync_fd;                   /* the log's descriptor the syncer fdatasyncs */
        uint64_t commits_seen;         /* the store's commits as of the last end of a turn */
        bool unsynced;                 /* commits that no sync (done or in flight) covers: output is held */
        bool syncs_deferred;           /* the store's syncs are the syncer's (set at the first write) */
        struct remote_server *remote;  /* remote.c: who may submit from another host, and how */
        struct out_pending *outputs;   /* outrelay.c: followers' reads in flight, one per client at most */
        size_t noutputs;
        uint64_t output_tag;       /* the last read_output's tag */
        struct out_parked *parked; /* outrelay.c: followers' reads of jobs not started yet */
        size_t nparked;
        sd_event_source *parked_expiry; /* the earliest parked read's wait, answered empty */
} ctl_server;

/* CLOCK_REALTIME in microseconds (job times are wall-clock for users). */
static inline int64_t server_now(void) { return clock_real_usec(); }
/* Now on both clocks, for the state machine's liveness checks. */
static inline ctl_time server_clock(void) {
        return (ctl_time){ .real_usec = clock_real_usec(), .mono_usec = clock_mono_usec() };
}
/* Read the config file again and take its departments and fairness; a file that does not parse
 * changes nothing. Returns 0, or -errno with one line in err (reload.c). */
int server_reload(ctl_server *srv, char *err, size_t errlen);
