/* stats.c - histograms, utilization samples and department figures (stats.h). */
#include "stats.h"
#include <string.h>

/* A pass over a few thousand pending jobs takes milliseconds; LoTES's can take seconds. */
const double stats_pass_bounds[] = { 0.0001, 0.0005, 0.001, 0.005, 0.01, 0.05, 0.1, 0.5, 1, 5 };
const size_t stats_npass_bounds = sizeof(stats_pass_bounds) / sizeof(stats_pass_bounds[0]);
/* A turn of the loop should take milliseconds; the goal is none over 50 ms. */
const double stats_turn_bounds[] = { 0.001, 0.005, 0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 5 };
const size_t stats_nturn_bounds = sizeof(stats_turn_bounds) / sizeof(stats_turn_bounds[0]);
/* Waits run from an idle cluster's fraction of a second to a busy one's hours. */
const double stats_wait_bounds[] = { 0.1, 0.5, 1, 5, 10, 30, 60, 300, 900, 3600, 14400, 86400 };
const size_t stats_nwait_bounds = sizeof(stats_wait_bounds) / sizeof(stats_wait_bounds[0]);

void stats_hist_init(stats_hist *h, const double *bounds, size_t nbounds) {
        *h = (stats_hist){ .bounds = bounds, .nbounds = nbounds < STATS_BUCKETS_MAX ? nbounds : STATS_BUCKETS_MAX };
}

void stats_init(ctl_stats *s, int64_t start_usec) {
        memset(s, 0, sizeof(*s));
        s->start_usec = start_usec;
        stats_hist_init(&s->pass, stats_pass_bounds, stats_npass_bounds);
        stats_hist_init(&s->turn, stats_turn_bounds, stats_nturn_bounds);
}

void stats_observe(stats_hist *h, double v) {
        for (size_t i = 0; i < h->nbounds; i++)
                if (v <= h->bounds[i])
                        h->counts[i]++;
        h->count++;
        h->sum += v;
}

void stats_note_pass(ctl_stats *s, double seconds) {
        stats_observe(&s->pass, seconds);
        s->last_pass_seconds = seconds;
}

void stats_note_turn(ctl_stats *s, double seconds) {
        stats_observe(&s->turn, seconds);
        if (seconds > s->max_turn_seconds)
                s->max_turn_seconds = seconds;
}

void stats_waits(const ctl_state *st, stats_hist *out) {
        stats_hist_init(out, stats_wait_bounds, stats_nwait_bounds);
        for (size_t i = 0; i < st->njobs; i++) {
                const job *j = st->jobs[i];
                if (j->start_usec <= 0)
                        continue;
                /* the start time is the agent's clock: a skewed host must not make a wait negative */
                int64_t wait = j->start_usec > j->submit_usec ? j->start_usec - j->submit_usec : 0;
                stats_observe(out, (double)wait / 1e6);
        }
}

stats_sample stats_now(const ctl_state *st, int64_t now) {
        stats_sample smp = { .time_usec = now, .pending = (uint32_t)st->npending };
        for (size_t i = 0; i < st->nnodes; i++) {
                const ctl_node *n = st->nodes[i];
                /* a down node's jobs may still run (kept for the reconnect window): count them */
                smp.used_mcpu += n->used.mcpu;
                smp.used_mem += n->used.mem;
                smp.running += (uint32_t)n->running;
                if (!n->up)
                        continue;
                smp.nodes_up++;
                smp.mcpu += n->capacity.mcpu;
                smp.mem += n->capacity.mem;
        }
        return smp;
}

void stats_take_sample(ctl_stats *s, const ctl_state *st, int64_t now) {
        s->ring[s->ring_next] = stats_now(st, now);
        s->ring_next = (s->ring_next + 1) % STATS_SAMPLES;
        if (s->ring_len < STATS_SAMPLES)
                s->ring_len++;
}

const stats_sample *stats_sample_at(const ctl_stats *s, size_t i) {
        size_t oldest = (s->ring_next + STATS_SAMPLES - s->ring_len) % STATS_SAMPLES;
        return &s->ring[(oldest + i) % STATS_SAMPLES];
}

/* The department's weight over the sum of its siblings' (itself included). */
static double sibling_fraction(const depts *d, const dept *x) {
        const dept *parent = depts_parent(d, x->path);
        double sum = 0;
        for (size_t i = 0; i < d->n; i++)
                if (depts_parent(d, d->v[i].path) == parent)
                        sum += d->v[i].weight;
        return sum > 0 ? x->weight / sum : 0;
}

static double share_of(const depts *d, const dept *x) {
        double share = 1;
        for (; x; x = depts_parent(d, x->path))
                share *= sibling_fraction(d, x);
        return share;
}

void stats_depts(const ctl_state *st, const depts *d, stats_dept *out) {
        for (size_t k = 0; k < d->n; k++)
                out[k] = (stats_dept){ .path = d->v[k].path, .weight = d->v[k].weight, .share = share_of(d, &d->v[k]) };
        for (size_t i = 0; i < st->njobs; i++) {
                const job *j = st->jobs[i];
                if (job_state_is_terminal(j->state) || !j->spec.group)
                        continue;
                for (size_t k = 0; k < d->n; k++) {
                        if (!depts_in(j->spec.group, d->v[k].path))
                                continue;
                        if (j->state == JOB_PENDING) {
                                out[k].pending++;
                                continue;
                        }
                        out[k].running++;
                        out[k].used_mcpu += j->spec.req.mcpu;
                        out[k].used_mem += j->spec.req.mem;
                }
        }
}

void stats_job_states(const ctl_state *st, uint64_t counts[_JOB_STATE_MAX]) {
        memset(counts, 0, sizeof(uint64_t) * _JOB_STATE_MAX);
        for (size_t i = 0; i < st->njobs; i++)
                counts[st->jobs[i]->state]++;
}

size_t stats_recent_finished(const ctl_state *st, const job **out, size_t n) {
        size_t found = 0;
        for (size_t i = 0; i < st->njobs && n > 0; i++) {
                const job *j = st->jobs[i];
                if (!job_state_is_terminal(j->state) || (found == n && j->end_usec <= out[n - 1]->end_usec))
                        continue;
                /* insertion into out, kept newest first; the oldest falls off a full list */
                size_t at = found < n ? found++ : n - 1;
                while (at > 0 && out[at - 1]->end_usec < j->end_usec) {
                        out[at] = out[at - 1];
                        at--;
                }
                out[at] = j;
        }
        return found;
}
