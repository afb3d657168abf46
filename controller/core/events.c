/* events.c - the event ring and the event's JSON form (see events.h). */
#include "events.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int ev_ring_init(ev_ring *r, size_t cap, uint64_t next_seq) {
        *r = (ev_ring){ .next_seq = next_seq ? next_seq : 1 };
        if (cap == 0)
                return -EINVAL;
        r->buf = calloc(cap, sizeof(*r->buf));
        if (!r->buf)
                return -ENOMEM;
        r->cap = cap;
        return 0;
}

void ev_ring_free(ev_ring *r) {
        free(r->buf);
        *r = (ev_ring){ 0 };
}

void ev_record_set(ev_record *e, int64_t time_usec, uint64_t job, const char *node, const char *what,
                   const char *reason) {
        *e = (ev_record){ .time_usec = time_usec, .job = job };
        snprintf(e->node, sizeof(e->node), "%s", node ? node : "");
        snprintf(e->what, sizeof(e->what), "%s", what ? what : "");
        snprintf(e->reason, sizeof(e->reason), "%s", reason ? reason : "");
}

/* Store a copy of e as the newest event, dropping the oldest when the ring is full. */
static ev_record *append(ev_ring *r, const ev_record *e) {
        ev_record *slot = &r->buf[(r->head + r->len) % r->cap];
        if (r->len == r->cap)
                r->head = (r->head + 1) % r->cap;
        else
                r->len++;
        *slot = *e;
        return slot;
}

const ev_record *ev_ring_push(ev_ring *r, const ev_record *e) {
        ev_record *slot = append(r, e);
        slot->seq = r->next_seq++;
        return slot;
}

void ev_ring_restore(ev_ring *r, const ev_record *e) {
        append(r, e);
        if (e->seq >= r->next_seq)
                r->next_seq = e->seq + 1;
}

uint64_t ev_ring_oldest(const ev_ring *r) { return r->len ? r->buf[r->head].seq : r->next_seq; }

const ev_record *ev_ring_get(const ev_ring *r, uint64_t seq) {
        size_t lo = 0, hi = r->len; /* seqs increase through the ring; a failed write leaves a gap */
        while (lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                if (r->buf[(r->head + mid) % r->cap].seq < seq)
                        lo = mid + 1;
                else
                        hi = mid;
        }
        const ev_record *e = lo < r->len ? &r->buf[(r->head + lo) % r->cap] : NULL;
        return e && e->seq == seq ? e : NULL;
}

size_t ev_last(const ev_ring *r, size_t n, const ev_record **out) {
        size_t k = n < r->len ? n : r->len;
        for (size_t i = 0; i < k; i++)
                out[i] = &r->buf[(r->head + r->len - k + i) % r->cap];
        return k;
}

bool ev_matches(const ev_record *e, uint64_t job) { return job == 0 || e->job == job; }

cJSON *ev_to_json(const ev_record *e) {
        cJSON *o = cJSON_CreateObject();
        if (!o || !cJSON_AddNumberToObject(o, "seq", (double)e->seq) ||
            !cJSON_AddNumberToObject(o, "time_usec", (double)e->time_usec) ||
            !cJSON_AddNumberToObject(o, "job", (double)e->job) || !cJSON_AddStringToObject(o, "what", e->what) ||
            (e->node[0] && !cJSON_AddStringToObject(o, "node", e->node)) ||
            (e->reason[0] && !cJSON_AddStringToObject(o, "reason", e->reason))) {
                cJSON_Delete(o);
                return NULL;
        }
        return o;
}

int ev_from_json(const cJSON *obj, ev_record *e, char err[PROTO_ERRLEN]) {
        static const char *const fields[] = { "seq", "time_usec", "job", "node", "what", "reason", NULL };
        int64_t seq, time, job = 0;
        const char *node = NULL, *what = NULL, *reason = NULL;
        *err = '\0';
        if (!cJSON_IsObject(obj)) {
                snprintf(err, PROTO_ERRLEN, "an event must be an object");
                return -EINVAL;
        }
        if (proto_check_fields(obj, fields, err) < 0 || proto_get_int(obj, "seq", 1, INT64_MAX, &seq, err) < 0 ||
            proto_get_int(obj, "time_usec", 0, INT64_MAX, &time, err) < 0 ||
            proto_get_int(obj, "job", 0, INT64_MAX, &job, err) == -EINVAL ||
            proto_get_str(obj, "what", &what, err) < 0 || proto_get_str(obj, "node", &node, err) == -EINVAL ||
            proto_get_str(obj, "reason", &reason, err) == -EINVAL) {
                if (!*err)
                        snprintf(err, PROTO_ERRLEN, "seq, time_usec and what: required");
                return -EINVAL;
        }
        ev_record_set(e, time, (uint64_t)job, node, what, reason);
        e->seq = (uint64_t)seq;
        return 0;
}
