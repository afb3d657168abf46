/* server.h - the controller's event loop state, shared by its client and agent handlers. */
#pragma once
#include "conn.h"
#include "jobstore.h"
#include "lotes_plan.h"
#include "state.h"
#include "stats.h"
#include <systemd/sd-event.h>

typedef struct waiter {
        conn *client;
        uint64_t job_id;
} waiter;

typedef struct ctl_server {
        sd_event *event;
        ctl_state state;
        jobstore *store;
        depts depts; /* from the config file's [departments] */
        ctl_lotes *lotes; /* policy = lotes: its plans */
        alpha_matrix alpha; /* the latest interference matrix stored (version 0: none) */
        char policy_status[256];
        char *secret;
        int heartbeat_ms;
        waiter *waiters;
        size_t nwaiters;
        ctl_stats stats;
        struct http_server *http; /* NULL unless controller.http_listen is set */
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
/* Take m (zeroed) as the latest interference matrix, and give it to a coloc dispatcher. */
void server_set_alpha(ctl_server *srv, alpha_matrix *m);
/* One line on the policy's state (a LoTES plan, or first-fit until one), or NULL. */
const char *server_policy_status(const ctl_server *srv);
/* Schedule, logging a failure (both handlers call it after any change). */
void server_schedule(ctl_server *srv);
