/* agentlink.h - the agent link: agents' connections, their hello, and what the controller sends
 * them (agentlink.c). */
#pragma once
#include "server.h"

/* Accept-side ops for agent connections. */
extern const conn_ops agent_conn_ops;
/* Send a launch or cancel to the node's agent (agentlink.c). */
void server_send_launch(ctl_server *srv, ctl_node *n, const job *j);
void server_send_cancel(ctl_server *srv, ctl_node *n, const job *j, int grace_ms);
/* Send every up agent the departments' weights, for the department cgroups it has (agentlink.c). */
void server_send_weights(ctl_server *srv);
/* Close the link of node n, which went silent, so that it counts for nothing (agentlink.c). */
void server_drop_link(ctl_server *srv, ctl_node *n, conn *c);
