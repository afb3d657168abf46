/* eventsrv.h - the event log's server side: events staged, stored with their job, kept in a ring,
 * and `colony events` with its followers (eventsrv.c). */
#pragma once
#include "server.h"

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
