/* commit.h - the end of each turn of the loop: the scheduling pass, the group commit, its fsync
 * and the checkpoints off the loop, and output held until then (commit.c). */
#pragma once
#include "server.h"

/* Schedule once this turn of the loop is over, logging a failure (both handlers call it after
 * any change; commit.c). */
void server_schedule(ctl_server *srv);
/* Let the end of this turn checkpoint the store's log if it has grown (commit.c; the tick
 * calls it, so that checkpoints come at most once per heartbeat unless the log is huge). */
void server_checkpoint_due(ctl_server *srv);
/* Add the end-of-turn source to srv->event, and start the threads that sync and checkpoint the
 * store (commit.c; server_commit_last stops them). Returns 0 or -errno. */
int server_commit_init(ctl_server *srv);
/* Store j (NULL: only the staged events) in this turn's batch, opening it if needed (commit.c): durable once the turn
 * ends, and until then every connection's output is held. Returns 0 or -errno. */
int server_persist(ctl_server *srv, const job *j);
/* Store an array's record (its id, its text) in the turn's batch, as server_persist does a job.
 * Returns 0 or -errno. */
int server_persist_array(ctl_server *srv, uint64_t id, const char *record);
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
