/* stats.h - what the controller's HTTP side reports beyond the state machine itself: histograms,
 * a ring of cluster-wide utilization samples for the status page's plots, and per-department
 * figures derived from the jobs.
 *
 * Pure: times come in as arguments, nothing here reads a clock or does I/O, so unit tests drive
 * it with plain structs (tests/unit/test_stats.c). */
#pragma once
#include "state.h"
#include <stddef.h>
#include <stdint.h>

#define STATS_BUCKETS_MAX 16
/* One sample every 5 s, an hour of them. */
#define STATS_SAMPLE_USEC 5000000
#define STATS_SAMPLES     720

/* A Prometheus-style histogram: counts[i] is the number of observations <= bounds[i]
 * (cumulative, as the exposition format wants); count and sum cover every observation. */
typedef struct stats_hist {
        const double *bounds; /* ascending, nbounds <= STATS_BUCKETS_MAX; borrowed */
        size_t nbounds;
        uint64_t counts[STATS_BUCKETS_MAX];
        uint64_t count;
        double sum;
} stats_hist;

/* The cluster at one instant: what up nodes offer and what running jobs are charged. */
typedef struct stats_sample {
        int64_t time_usec; /* CLOCK_REALTIME */
        int64_t mcpu, used_mcpu, mem, used_mem;
        uint32_t nodes_up, running, pending;
} stats_sample;

typedef struct ctl_stats {
        int64_t start_usec; /* when the controller started (CLOCK_REALTIME) */
        stats_hist pass;    /* scheduling passes that had pending jobs, seconds */
        double last_pass_seconds;
        stats_hist turn; /* turns of the event loop: one source's dispatch, seconds */
        double max_turn_seconds;
        stats_sample ring[STATS_SAMPLES];
        size_t ring_next, ring_len;
} ctl_stats;

/* A department's figures: the jobs of its group and of the groups below it, as its cgroup
 * holds them. share is its fraction of contended CPU from its weight: weight over the sum of
 * its siblings' weights, times its parent's share. */
typedef struct stats_dept {
        const char *path; /* borrowed from the depts */
        double weight, share;
        uint32_t running, pending;
        int64_t used_mcpu, used_mem;
} stats_dept;

/* Bucket bounds (seconds) for scheduling passes and for the wait from submit to start. */
extern const double stats_pass_bounds[];
extern const size_t stats_npass_bounds;
extern const double stats_turn_bounds[]; /* and for the loop's turns */
extern const size_t stats_nturn_bounds;
extern const double stats_wait_bounds[];
extern const size_t stats_nwait_bounds;

/* Start empty at start_usec, with the pass histogram's bounds set. */
void stats_init(ctl_stats *s, int64_t start_usec);
/* An empty histogram over bounds (borrowed; at most STATS_BUCKETS_MAX of them). */
void stats_hist_init(stats_hist *h, const double *bounds, size_t nbounds);
/* Count one observation v. */
void stats_observe(stats_hist *h, double v);
/* Note a scheduling pass that took seconds. */
void stats_note_pass(ctl_stats *s, double seconds);
/* Note a turn of the event loop (the dispatch of one source) that took seconds. */
void stats_note_turn(ctl_stats *s, double seconds);
/* The histogram of submit-to-start waits of every job that has started, from st's jobs.
 * O(jobs). */
void stats_waits(const ctl_state *st, stats_hist *out);
/* The cluster's totals now (time_usec = now). O(nodes + pending). */
stats_sample stats_now(const ctl_state *st, int64_t now);
/* Append the totals now to the ring, dropping the oldest sample when it is full. */
void stats_take_sample(ctl_stats *s, const ctl_state *st, int64_t now);
/* The i-th sample held, oldest first (i < s->ring_len). */
const stats_sample *stats_sample_at(const ctl_stats *s, size_t i);
/* Figures for each configured department, out[i] for d->v[i] (out holds d->n). O(jobs x depth). */
void stats_depts(const ctl_state *st, const depts *d, stats_dept *out);
/* Count the jobs that are in each state now into counts (indexed by job_state). O(jobs). */
void stats_job_states(const ctl_state *st, uint64_t counts[_JOB_STATE_MAX]);
/* The n terminal jobs that ended last, newest first, into out (which holds n). Returns how many
 * were found (<= n). O(jobs x n). */
size_t stats_recent_finished(const ctl_state *st, const job **out, size_t n);
