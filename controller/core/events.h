/* events.h - the controller's event log: every state transition of a job or a node, numbered.
 *
 * An event is {seq, time, job, node, what, reason}, for instance
 *
 *   {"seq":42,"time_usec":1767225600000000,"job":7,"node":"lab3","what":"requeued",
 *    "reason":"attempt 1 requeued: agent lab3 timed out"}
 *
 * "what" is one of: submitted, placed, started, completed, failed, cancelled, oom-killed, lost,
 * requeued, held, released, updated (a job's), node-up, node-not-responding, node-down,
 * node-disconnected (a node's, job 0). seq numbers
 * increase with every event stored and are never reused (a failed write may skip one), so a
 * reader that has seen up to seq N asks for what follows N.
 *
 * This module holds the last events in memory, in a ring of fixed capacity: appending is O(1)
 * and never allocates, finding an event by seq is O(log n), and ev_last() serves "the last N
 * events" (a status page) without touching the disk. The job store keeps every event
 * (jobstore_put_events, in the same transaction as the job change it belongs to); reads older
 * than the ring go there. Pure: no I/O, no clock. */
#pragma once
#include "proto.h"
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define EV_WHAT_MAX     24
#define EV_NODE_MAX     64
#define EV_REASON_MAX   PROTO_ERRLEN
#define EV_RING_DEFAULT 4096 /* ~1.4 MB: what the controller keeps in memory */

typedef struct ev_record {
        uint64_t seq;           /* 1, 2, ... in the order the events were stored */
        int64_t time_usec;      /* CLOCK_REALTIME microseconds */
        uint64_t job;           /* 0 for a node's event */
        char node[EV_NODE_MAX]; /* "" when none; longer names are cut */
        char what[EV_WHAT_MAX];
        char reason[EV_REASON_MAX]; /* "" when none; longer reasons are cut */
} ev_record;

typedef struct ev_ring {
        ev_record *buf;
        size_t cap, len;   /* capacity, and how many are held (the newest len events) */
        size_t head;       /* index of the oldest held event */
        uint64_t next_seq; /* the seq the next event will get */
} ev_ring;

/* An empty ring holding up to cap events (cap > 0), whose first event will be seq next_seq.
 * Returns 0, -EINVAL or -ENOMEM. */
int ev_ring_init(ev_ring *r, size_t cap, uint64_t next_seq);
/* Free the ring's memory. */
void ev_ring_free(ev_ring *r);

/* Fill e from its parts (seq 0: ev_ring_push numbers it); NULL node and reason become "". */
void ev_record_set(ev_record *e, int64_t time_usec, uint64_t job, const char *node, const char *what,
                   const char *reason);
/* Append e as event number r->next_seq (e->seq is ignored), dropping the oldest when full.
 * Returns the stored copy, valid until cap more events are pushed. O(1). */
const ev_record *ev_ring_push(ev_ring *r, const ev_record *e);
/* Append a copy of e keeping its seq (events read back from the store at start-up, in seq
 * order); r->next_seq moves past it. */
void ev_ring_restore(ev_ring *r, const ev_record *e);
/* The seq of the oldest event held, or r->next_seq when none is. */
uint64_t ev_ring_oldest(const ev_ring *r);
/* The event with that seq, or NULL when the ring does not hold it. O(log held). */
const ev_record *ev_ring_get(const ev_ring *r, uint64_t seq);
/* The last n events held (fewer when fewer are held), oldest first, as pointers into the ring
 * (valid until the next push) written to out[0..]. Returns how many were written. O(n). */
size_t ev_last(const ev_ring *r, size_t n, const ev_record **out);

/* Whether e concerns job (every event does when job is 0). */
bool ev_matches(const ev_record *e, uint64_t job);
/* The event as a JSON object (fields as above; "node" and "reason" only when not empty). Caller
 * owns it; NULL when out of memory. */
cJSON *ev_to_json(const ev_record *e);
/* Read an object ev_to_json wrote. Returns 0 or -EINVAL with the field at fault in err. */
int ev_from_json(const cJSON *obj, ev_record *e, char err[PROTO_ERRLEN]);
