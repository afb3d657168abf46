/* evq.c - the simulator's events, a radix heap on the time's bits (see evq.h). */
#include "evq.h"
#include "dispatch.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The bits of t, which order as the times do for t >= 0 (+ 0.0 makes a -0 into 0). */
static uint64_t key_of(double t) {
        uint64_t k;
        t += 0.0;
        memcpy(&k, &t, sizeof(k));
        return k;
}

/* The bucket of key k while last is the last key taken (k >= last). */
static size_t bucket_of(uint64_t k, uint64_t last) { return k == last ? 0 : 64 - (size_t)__builtin_clzll(k ^ last); }

/* Room for more events in bucket b. Returns 0 or -ENOMEM. */
static int bucket_room(evq_bucket *b, size_t more) {
        return b->n + more <= b->cap ? 0 : sched_grow(&b->v, &b->cap, b->n + more, sizeof(*b->v));
}

static void append(evq *q, size_t i, sim_event e) {
        q->b[i].v[q->b[i].n++] = e;
        if (i > 0)
                q->nonempty |= 1ull << (i - 1);
}

int evq_push(evq *q, sim_event e) {
        if (!(e.t >= 0) || key_of(e.t) < q->last)
                return -EINVAL;
        size_t i = bucket_of(key_of(e.t), q->last);
        if (bucket_room(&q->b[i], 1) < 0)
                return -ENOMEM;
        append(q, i, e);
        q->n++;
        return 0;
}

/* b[0] is empty: the earliest bucket's earliest time becomes the last one taken, and its events
 * go down to the buckets they belong to from it (those at that time to b[0], in their order).
 * Most of these buckets hold an event or two: no pass over them but these two. Returns 0 or
 * -ENOMEM (then q is only fit for evq_free). */
static int refill(evq *q) {
        size_t from = (size_t)__builtin_ctzll(q->nonempty) + 1;
        evq_bucket *src = &q->b[from];
        uint64_t last = key_of(src->v[0].t);
        for (size_t k = 1; k < src->n; k++) {
                uint64_t key = key_of(src->v[k].t);
                last = key < last ? key : last;
        }
        q->last = last;
        q->nonempty &= ~(1ull << (from - 1));
        for (size_t k = 0; k < src->n; k++) {
                size_t i = bucket_of(key_of(src->v[k].t), last); /* below from */
                if (bucket_room(&q->b[i], 1) < 0)
                        return -ENOMEM;
                append(q, i, src->v[k]);
        }
        src->n = 0;
        return 0;
}

int evq_pop(evq *q, sim_event *out) {
        evq_bucket *now = &q->b[0];
        if (q->head == now->n) {
                now->n = q->head = 0;
                int r = refill(q);
                if (r < 0)
                        return r;
        }
        *out = now->v[q->head++];
        q->n--;
        return 0;
}

void evq_free(evq *q) {
        for (size_t i = 0; i < sizeof(q->b) / sizeof(q->b[0]); i++)
                free(q->b[i].v);
        *q = (evq){ 0 };
}
