/* bulk.h - requests too large for one turn (arrays, bulk cancels) done a slice per turn, and
 * replies kept in order behind them (bulk.c). */
#pragma once
#include "server.h"

/* Submit count jobs (0: one) of spec (taken, zeroed) for c's user, with the indexes of *indexes
 * (taken, zeroed; empty: 0 to count - 1), a slice per turn after the work c queued before,
 * taking turns with other requesters'; c gets the reply once all are stored (bulk.c). Returns 0
 * or -errno. */
int server_bulk_submit(ctl_server *srv, conn *c, const char *user, job_spec *spec, size_t count, array_set *indexes);
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
/* c is closing: its queued work goes on, unanswered. */
void server_bulk_forget(ctl_server *srv, conn *c);
/* Free the queued work (at exit). */
void server_bulk_close(ctl_server *srv);
