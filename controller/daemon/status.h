/* status.h - the cluster as JSON, for the CLI's "nodes" reply and the HTTP side's /api/status
 * (docs/protocol.md, "HTTP"). Builders only: they read the state and allocate cJSON. */
#pragma once
#include "server.h"
#include <cjson/cJSON.h>

/* How many records /api/status lists at most of the queue, of running jobs, and of finished ones;
 * the counts beside them say how many there are in all. */
#define STATUS_QUEUE_MAX   200
#define STATUS_RUNNING_MAX 500
#define STATUS_RECENT_MAX  20
#define STATUS_EVENTS_MAX  30 /* the event log's last events on the page */
/* Bytes of a job's command line a record of /api/status holds at most: the page shows a line
 * of it, and 720 records of 128 KiB command lines would make a 90 MB reply, built in one turn
 * of the loop. A cut record says "argv_truncated": true. */
#define STATUS_ARGV_BYTES 1024

/* One node as the "nodes" reply and /api/status list it. Caller owns it; NULL when out of memory. */
cJSON *status_node(const ctl_node *n);
/* The array of every node's status_node. Caller owns it; NULL when out of memory. */
cJSON *status_nodes(const ctl_state *st);
/* The whole /api/status document at now (CLOCK_REALTIME usec). Caller owns it; NULL when out of
 * memory. */
cJSON *status_document(const ctl_server *srv, int64_t now);
