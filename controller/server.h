/* server.h - the controller's event loop state, shared by its client and agent handlers. */
#pragma once
#include "conn.h"
#include "events.h"
#include "jobstore.h"
#include "state.h"
#include <systemd/sd-event.h>

typedef struct waiter {
        conn *client;
        uint64_t job_id;
} waiter;

/* A client of "events" with "follow": it gets each new event of job (any when 0) as it happens. */
typedef struct follower {
        conn *client;
        uint64_t job;
} follower;

typedef struct ctl_server {
        sd_event *event;
        ctl_state state;
        jobstore *store;
        depts depts; /* from the config file's [departments] */
        char *secret;
        int heartbeat_ms;
        waiter *waiters;
        size_t nwaiters;
        ev_ring events;      /* the latest events, for fast reads (eventsrv.c) */
        ev_record *staged;   /* a job's events waiting to be stored with its next persist */
        size_t nstaged, staged_cap;
        follower *followers;
        size_t nfollowers;
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
/* Close the link of node n, which went silent, so that it counts for nothing (agentlink.c). */
void server_drop_link(ctl_server *srv, ctl_node *n, conn *c);
/* Load the latest events from the store into srv->events. Returns 0 or -errno (logged). */
int server_events_open(ctl_server *srv);
/* Free the event ring and what is staged (not the followers: their connections own them). */
void server_events_close(ctl_server *srv);
/* The state machine's event hook: a job's event is staged for its next persist, a node's is
 * stored and published at once. */
void server_event(ctl_server *srv, const ctl_event *e);
/* The state machine's persist: the job and its staged events in one transaction, then the
 * events go to the ring and the followers. Returns 0 or -EIO (staged events are dropped). */
int server_persist(ctl_server *srv, const job *j);
/* The client request "events" (docs/protocol.md). */
void server_handle_events(ctl_server *srv, conn *c, const cJSON *msg);
/* Forget c as a follower (its connection is closing). */
void server_drop_follower(ctl_server *srv, conn *c);
/* Schedule, logging a failure (both handlers call it after any change). */
void server_schedule(ctl_server *srv);
