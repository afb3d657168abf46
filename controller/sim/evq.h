/* evq.h - the simulator's events in order of time, then of their making, so that equal times
 * resolve the same way on every run: a radix heap keyed on the bits of the time (a double >= 0,
 * whose bits order as the numbers do). The virtual clock never goes back, so no event is made
 * before the last one taken, which is all a radix heap needs: 64 buckets by the highest bit in
 * which a time differs from the last one taken, plus one of the events at that time. Taking the
 * next event reads and moves events in runs of memory; a binary heap's sift missed the caches at
 * each level (docs/benchmarks.md). Events of one time stay in the order they were made: they
 * always share a bucket, which is filled by appends and emptied in order. */
#pragma once
#include <stddef.h>
#include <stdint.h>

struct ctl_node;

typedef enum { EV_ARRIVAL, EV_EXIT, EV_CYCLE } ev_kind;

typedef struct sim_event {
        double t; /* seconds, >= 0 */
        ev_kind kind;
        uint64_t job;          /* EV_EXIT: the job that ends */
        struct ctl_node *node; /* EV_EXIT: where it ran */
} sim_event;

typedef struct evq_bucket {
        sim_event *v;
        size_t n, cap;
} evq_bucket;

/* A zeroed evq is empty and holds no memory. */
typedef struct evq {
        size_t n; /* events held */
        /* private: */
        evq_bucket b[65]; /* b[0]: the events at time last, taken from head; b[i]: those whose
                           * time's bits differ from last's first in bit i - 1 (from the lowest) */
        size_t head;
        uint64_t last;     /* the bits of the time of the last event taken (0 before any) */
        uint64_t nonempty; /* bit i - 1: b[i] holds events */
} evq;

/* Add e. Returns 0, -EINVAL when e.t is before the last event taken (or not a number), or
 * -ENOMEM; q is unchanged on error. */
int evq_push(evq *q, sim_event e);
/* Take the earliest event into *out (q->n > 0). Returns 0, or -ENOMEM, after which q is only
 * fit for evq_free (some of its events may be lost). */
int evq_pop(evq *q, sim_event *out);
/* Free what q holds and empty it. */
void evq_free(evq *q);
