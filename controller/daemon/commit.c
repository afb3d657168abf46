/* commit.c - group commit: the writes of one turn of the event loop share one transaction, and
 * its fsync runs on a thread while the next turns go on.
 *
 * Every handler the loop dispatches after one poll (each readable client and agent, the
 * tick) writes to the store inside one batch; a post source, which sd-event marks pending
 * whenever another source is dispatched and which sorts after the sources made pending by the
 * same poll (sd-event orders pending sources of one priority by the iteration that made them
 * pending), runs the scheduling pass those handlers asked for and then commits the batch. (A
 * lower priority would not do: a socket that is always writable would starve it.) The commit
 * puts the turn's writes in the kernel (synchronous=NORMAL, jobstore_defer_syncs); the syncer
 * thread makes them durable with one fdatasync of the log, and reports through an eventfd.
 *
 * Until then every connection's output is held (conn_ops.held), so no client learns a job id
 * and no agent a launch before the job is on disk: a turn's output is marked (conn_held_mark)
 * as waiting for the sync in flight when the turn committed nothing new, else for the next
 * one, and written when that sync is reported (conn_release_held). One sync is in flight at
 * a time; the commits made meanwhile, however many turns, share the next one, which starts as
 * soon as the last ends. Output of a turn that wrote nothing waits too while any sync is due:
 * it may report a commit of an earlier turn. A failed commit or fsync stops the loop with the
 * output still held: what was not stored was never acknowledged. When a signal ends the loop
 * in the middle of a turn, the turn's writes are committed and synced on the way out (an
 * agent's report must not be lost) but its replies are not sent. With sync_commits = no
 * nothing waits for a sync: the output goes right after the commit.
 *
 * A sync starts only when someone waits for it: a connection holds output, or the loop is
 * stopping. A turn that committed and told nobody (a job's start, which an agent reports again
 * after any reconnect and with the job's end) leaves its commit in the kernel, and the next
 * turn that holds output syncs it with its own. Durability is the guarantee to whoever is told,
 * and nobody has been told of such a commit: a machine crash loses it as it loses what the
 * kernel had not written yet. Syncing it at once made the next end of a job, which follows its
 * start within milliseconds for a short job, wait behind that sync for its own (two fdatasyncs
 * and their thread round trips per job; strace, docs/benchmarks.md).
 *
 * Checkpoints (copying SQLite's write-ahead log into the database file, with an fsync of each)
 * take 35 to 110 ms here. SQLite would run one inside whichever commit finds the log past 1000
 * pages; here the checkpointer thread runs one through a second connection of the store
 * (jobstore_checkpoint_apart) while the loop goes on writing, once per tick at most (the tick
 * sets checkpoint_due). A burst of submissions so runs without one and the next tick copies it
 * all at once (pages written many times are copied once). Under writes that never pause the
 * log never starts again from its beginning (SQLite does so at a commit that finds all of it
 * copied, which a checkpoint that copies what was committed before it started rarely leaves):
 * past WAL_PAGES_MAX the loop copies the rest itself, in a turn (what came since the
 * checkpointer's last copy), and the next commit starts the log again. */
#include "commit.h"
#include "policy.h"
#include "server.h"
#include "log.h"
#include "offloop.h"
#include "eventsrv.h"
#include <errno.h>
#include <string.h>
#include <systemd/sd-daemon.h>
#include <unistd.h>

enum {
        WAL_PAGES_CHECKPOINT = 1000, /* SQLite's own threshold: at a tick, checkpoint past it */
        WAL_PAGES_MAX = 16384,       /* 64 MiB of 4 KiB pages: the loop copies the rest now */
};

static void checkpoint_if_grown(ctl_server *srv) {
        size_t pages = jobstore_wal_pages(srv->store);
        bool due = srv->checkpoint_due && pages >= WAL_PAGES_CHECKPOINT;
        if (offloop_busy(srv->checkpointer))
                return; /* checkpoint_due stays: the next end of a turn after it may start another */
        srv->checkpoint_due = false;
        if (pages >= WAL_PAGES_MAX)
                (void)jobstore_checkpoint(srv->store); /* logged; the log keeps the data meanwhile */
        else if (due)
                (void)offloop_start(srv->checkpointer, srv->store); /* not busy: cannot fail */
}

static int checkpoint_apart(void *store) { return jobstore_checkpoint_apart(store); }

static void checkpoint_done(void *userdata, int r) {
        (void)userdata;
        (void)r; /* logged by the thread; the log keeps the data meanwhile */
}

static int sync_log(void *fd) { return fdatasync(*(int *)fd) < 0 ? -errno : 0; }

/* A commit that could not be made durable: stop with the output held (see above). */
static void store_fail(ctl_server *srv) {
        srv->store_failed = true;
        (void)sd_event_exit(srv->event, -EIO);
}

/* Start a sync of every commit so far, unless one is in flight, none is due, or nobody waits for
 * it (no output held, the loop not stopping: see above). */
static void sync_next(ctl_server *srv) {
        if (!srv->unsynced || offloop_busy(srv->syncer) || (!srv->held_conns.first && !srv->stopping))
                return;
        if (jobstore_sync_prepare(srv->store, &srv->sync_fd) < 0) {
                store_fail(srv);
                return;
        }
        conn_held_advance(&srv->held_conns);
        srv->unsynced = false;
        (void)offloop_start(srv->syncer, &srv->sync_fd); /* not busy: cannot fail */
}

static void sync_done(void *userdata, int r) {
        ctl_server *srv = userdata;
        if (r < 0) {
                log_errno(LOG_ERR, r, "fdatasync of the job store's write-ahead log: stopping with the replies held");
                store_fail(srv);
                return;
        }
        conn_release_held(&srv->held_conns);
        sync_next(srv);
}

/* After the turn's commit: hold its output until the sync it needs, or write it now. */
static void hold_until_durable(ctl_server *srv) {
        uint64_t n = jobstore_commits(srv->store);
        srv->unsynced = jobstore_sync_wanted(srv->store) && (srv->unsynced || n != srv->commits_seen);
        srv->commits_seen = n;
        if (srv->unsynced)
                conn_held_mark(&srv->held_conns, true);
        else if (offloop_busy(srv->syncer))
                conn_held_mark(&srv->held_conns, false);
        else
                conn_release_held(&srv->held_conns);
        sync_next(srv);
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
        if (srv->store_failed)
                return 0;
        if (srv->in_batch) {
                if (jobstore_batch_commit(srv->store) < 0) {
                        store_fail(srv); /* keeps the output held until the loop is gone */
                        return 0;
                }
                srv->in_batch = false;
        }
        hold_until_durable(srv);
        if (!srv->store_failed)
                checkpoint_if_grown(srv);
        return 0;
}

int server_commit_init(ctl_server *srv) {
        int r = sd_event_add_post(srv->event, &srv->end_of_turn, end_of_turn, srv);
        if (r >= 0)
                r = offloop_new(srv->event, "colony-sync", sync_log, sync_done, srv, &srv->syncer);
        if (r >= 0)
                r = offloop_new(srv->event, "colony-ckpt", checkpoint_apart, checkpoint_done, srv, &srv->checkpointer);
        return r;
}

/* Open the turn's batch, when it is not yet. Returns 0 or -errno. */
static int batch_open(ctl_server *srv) {
        int r;
        if (srv->store_failed)
                return -EIO;
        if (!srv->syncs_deferred) { /* the store is opened after server_commit_init */
                if ((r = jobstore_defer_syncs(srv->store)) < 0)
                        return r;
                srv->syncs_deferred = true;
        }
        if (!srv->in_batch) {
                if ((r = jobstore_batch_begin(srv->store)) < 0)
                        return r;
                srv->in_batch = true;
        }
        return 0;
}

int server_persist(ctl_server *srv, const job *j) {
        int r = batch_open(srv);
        return r < 0 ? r : server_events_store(srv, j);
}

int server_persist_array(ctl_server *srv, uint64_t id, const char *record) {
        int r = batch_open(srv);
        return r < 0 ? r : jobstore_put_array(srv->store, id, record);
}

void server_checkpoint_due(ctl_server *srv) { srv->checkpoint_due = true; }

void server_schedule(ctl_server *srv) { srv->want_schedule = true; }

bool server_writes_undurable(const ctl_server *srv) {
        return srv->in_batch || srv->unsynced || (srv->syncer && offloop_busy(srv->syncer));
}

bool server_output_held(conn *c) {
        const ctl_server *srv = c->owner;
        return srv->store_failed || server_writes_undurable(srv);
}

conn_held_list *server_held_list(conn *c) {
        ctl_server *srv = c->owner;
        return &srv->held_conns;
}

void server_commit_last(ctl_server *srv) {
        offloop_free(srv->syncer);
        offloop_free(srv->checkpointer);
        srv->syncer = srv->checkpointer = NULL;
        if (!srv->store || srv->store_failed)
                return;
        if (srv->in_batch && jobstore_batch_commit(srv->store) == 0)
                srv->in_batch = false;
        int fd, r = jobstore_sync_wanted(srv->store) ? jobstore_sync_prepare(srv->store, &fd) : -ENOENT;
        if (r == 0 && fdatasync(fd) < 0)
                log_errno(LOG_ERR, -errno, "fdatasync of the job store's write-ahead log at exit");
}
