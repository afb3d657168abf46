/* commit.c - group commit: the writes of one turn of the event loop share one transaction.
 *
 * Every handler the loop dispatches after one poll (each readable client and agent, the
 * tick) writes to the store inside one batch; a post source, which sd-event marks pending
 * whenever another source is dispatched and which sorts after the sources made pending by the
 * same poll (sd-event orders pending sources of one priority by the iteration that made them
 * pending), runs the scheduling pass those handlers asked for and then commits the batch: one
 * fsync for all the submissions read in that turn. (A lower priority would not do: a socket
 * that is always writable would starve it.) Until the commit, every connection's output is held (conn_ops.held),
 * so no client learns a job id and no agent a launch before the job is on disk; right after
 * it, the connections that hold output are written to (conn_release_held). A failed commit
 * stops the loop with the output still held: what was not stored was never acknowledged. When
 * a signal ends the loop in the middle of a turn, the turn's writes are committed on the way
 * out (an agent's report must not be lost) but its replies are not sent.
 *
 * Checkpoints (copying SQLite's write-ahead log into the database file, with an fsync of each)
 * take milliseconds. SQLite would run one inside whichever commit finds the log past 1000
 * pages, stalling the replies of that turn; here the end of a turn runs one after its replies
 * are out, once per tick at most (the tick sets checkpoint_due) or when the log is past
 * WAL_PAGES_MAX whatever the tick says. A burst of submissions so runs without one and the
 * next tick copies it all at once (pages written many times are copied once). */
#include "server.h"
#include "log.h"
#include <errno.h>
#include <string.h>
#include <systemd/sd-daemon.h>

enum {
        WAL_PAGES_CHECKPOINT = 1000, /* SQLite's own threshold: at a tick, checkpoint past it */
        WAL_PAGES_MAX = 16384,       /* 64 MiB of 4 KiB pages: checkpoint now, tick or not */
};

static void checkpoint_if_grown(ctl_server *srv) {
        size_t pages = jobstore_wal_pages(srv->store);
        if (pages >= WAL_PAGES_MAX || (srv->checkpoint_due && pages >= WAL_PAGES_CHECKPOINT))
                (void)jobstore_checkpoint(srv->store); /* logged; the log keeps the data meanwhile */
        srv->checkpoint_due = false;
}

static int end_of_turn(sd_event_source *s, void *userdata) {
        ctl_server *srv = userdata;
        (void)s;
        if (srv->want_schedule) {
                srv->want_schedule = false;
                bool work = srv->state.npending > 0; /* passes over an empty queue would swamp the histogram */
                int64_t t0 = server_clock().mono_usec;
                long n = ctl_schedule(&srv->state);
                if (work)
                        stats_note_pass(&srv->stats, (double)(server_clock().mono_usec - t0) / 1e6);
                if (n < 0)
                        log_error("scheduling pass failed: %s", strerror((int)-n));
                const char *policy = server_policy_status(srv);
                (void)sd_notifyf(0, "STATUS=%zu pending, %zu jobs known, %zu nodes%s%s", srv->state.npending,
                                 srv->state.njobs, srv->state.nnodes, policy ? "; " : "", policy ? policy : "");
        }
        if (srv->in_batch) {
                if (jobstore_batch_commit(srv->store) < 0) {
                        srv->store_failed = true; /* keeps the output held until the loop is gone */
                        return sd_event_exit(srv->event, -EIO);
                }
                srv->in_batch = false;
                conn_release_held(&srv->held_conns);
        }
        checkpoint_if_grown(srv);
        return 0;
}

int server_commit_init(ctl_server *srv) {
        return sd_event_add_post(srv->event, &srv->end_of_turn, end_of_turn, srv);
}

int server_persist(ctl_server *srv, const job *j) {
        int r;
        if (srv->store_failed)
                return -EIO;
        if (!srv->in_batch) {
                if ((r = jobstore_batch_begin(srv->store)) < 0)
                        return r;
                srv->in_batch = true;
        }
        return server_events_store(srv, j);
}

void server_checkpoint_due(ctl_server *srv) {
        srv->checkpoint_due = true;
}

void server_schedule(ctl_server *srv) {
        srv->want_schedule = true;
}

bool server_output_held(conn *c) {
        const ctl_server *srv = c->owner;
        return srv->in_batch || srv->store_failed;
}

conn_held_list *server_held_list(conn *c) {
        ctl_server *srv = c->owner;
        return &srv->held_conns;
}

void server_commit_last(ctl_server *srv) {
        if (srv->in_batch && !srv->store_failed && jobstore_batch_commit(srv->store) == 0)
                srv->in_batch = false;
}
