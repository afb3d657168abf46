/* greedy.c - the Greedy dispatch policy of the LoTES paper (section 5.1): an arriving job goes
 * to the first machine, in the cluster's order, with the free resources for it; when none has
 * them it joins the queue of one machine, the one with the shortest queue (ties broken at
 * random), and waits there: each machine starts its own queue first come, first served, as
 * its resources free. Only machines whose capacity can hold the job are candidates for its
 * queue, or it would wait forever. Class-blind: it needs no estimate of anything.
 *
 * O(machines) per arrival; an exit looks only at that machine's queue; a whole pass reads every
 * queued id once (its fresh jobs, dispatch.h, are those in no queue). */
#include "dispatch.h"
#include "rng.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct fifo {
        uint64_t *ids;
        size_t head, n, cap; /* the waiting jobs are ids[head .. head + n) */
} fifo;

typedef struct greedy {
        sched_dispatcher base;
        fifo *queues; /* by machine */
        size_t nqueues;
} greedy;

static int fifo_push(fifo *q, uint64_t id) {
        if (q->head + q->n == q->cap && q->head > 0 && q->head >= q->n) { /* mostly started: slide down */
                memmove(q->ids, q->ids + q->head, q->n * sizeof(*q->ids));
                q->head = 0;
        }
        if (sched_grow(&q->ids, &q->cap, q->head + q->n + 1, sizeof(*q->ids)) < 0)
                return -ENOMEM;
        q->ids[q->head + q->n++] = id;
        return 0;
}

static int grow_queues(greedy *g, size_t n) {
        if (n <= g->nqueues)
                return 0;
        fifo *q = realloc(g->queues, n * sizeof(*q));
        if (!q)
                return -ENOMEM;
        memset(q + g->nqueues, 0, (n - g->nqueues) * sizeof(*q));
        g->queues = q;
        g->nqueues = n;
        return 0;
}

static int greedy_exit(sched_dispatcher *d, sched_pass *p, size_t m) {
        greedy *g = (greedy *)d;
        fifo *q = m < g->nqueues ? &g->queues[m] : NULL;
        while (q && q->n > 0) {
                long j = sched_pass_lookup(p, q->ids[q->head]);
                if (j < -1)
                        return (int)j;
                if (j >= 0 && !sched_pass_fits(p, (size_t)j, m))
                        return 0; /* first come, first served: the head blocks the rest */
                if (j >= 0)
                        sched_pass_assign(p, (size_t)j, m);
                q->head++, q->n--; /* started, or no longer pending (cancelled) */
        }
        return 0;
}

/* The up machine able to hold jobs[j] with the shortest queue, ties at random; -1 if none. */
static long shortest_queue(greedy *g, const sched_pass *p, size_t j) {
        long best = -1;
        size_t best_n = 0, ties = 0;
        for (size_t m = 0; m < p->nmachines; m++) {
                if (p->machines[m].up <= 0 || !res_fits(p->jobs[j].req, p->machines[m].capacity))
                        continue;
                size_t n = g->queues[m].n;
                if (best < 0 || n < best_n) {
                        best = (long)m, best_n = n, ties = 1;
                } else if (n == best_n && sched_rng_next(&g->base.rng) % ++ties == 0) {
                        best = (long)m; /* reservoir sampling: each tied machine equally likely */
                }
        }
        return best;
}

static int greedy_arrival(sched_dispatcher *d, sched_pass *p, size_t j) {
        greedy *g = (greedy *)d;
        for (size_t m = 0; m < p->nmachines; m++)
                if (sched_pass_fits(p, j, m)) {
                        sched_pass_assign(p, j, m);
                        return 0;
                }
        if (grow_queues(g, p->nmachines) < 0)
                return -ENOMEM;
        long m = shortest_queue(g, p, j);
        return m < 0 ? 0 : fifo_push(&g->queues[m], p->jobs[j].id);
}

/* A whole pass: the jobs in the machines' queues are kept; the others are fresh, arrivals. */
static int greedy_whole(sched_dispatcher *d, const sched_pass *p) {
        const greedy *g = (const greedy *)d;
        for (size_t m = 0; m < g->nqueues; m++)
                for (size_t i = g->queues[m].head; i < g->queues[m].head + g->queues[m].n; i++)
                        sched_pass_keep(p, g->queues[m].ids[i]);
        return 0;
}

static void greedy_free(sched_dispatcher *d) {
        greedy *g = (greedy *)d;
        for (size_t m = 0; m < g->nqueues; m++)
                free(g->queues[m].ids);
        free(g->queues);
        free(g);
}

static const sched_dispatcher_ops greedy_ops = {
        .name = "greedy",
        .on_exit = greedy_exit,
        .on_arrival = greedy_arrival,
        .free = greedy_free,
        .by_id = true,
        .on_whole = greedy_whole,
};

int sched_greedy_new(uint64_t seed, sched_dispatcher **out) {
        *out = sched_dispatcher_alloc(sizeof(greedy), &greedy_ops, seed);
        return *out ? 0 : -ENOMEM;
}
