/* fair_heap.c - the binary heaps of fair_impl.h: a slice of node indices ordered by item[].key, the
 * least first, ties to the lowest index; s->item[node].pos is the node's place in its slice. The flat
 * engine keeps one over all leaves, H-DRF one per internal node over its children. */
#include "fair_impl.h"

static bool before(const fair_state *s, uint32_t a, uint32_t b) {
        return s->item[a].key < s->item[b].key || (s->item[a].key == s->item[b].key && a < b);
}

static void place(fair_state *s, uint32_t *slot, size_t i, uint32_t node) {
        slot[i] = node;
        s->item[node].pos = (uint32_t)i;
}

static void sift_up(fair_state *s, uint32_t *slot, size_t i) {
        uint32_t node = slot[i];
        for (; i > 0 && before(s, node, slot[(i - 1) / 2]); i = (i - 1) / 2)
                place(s, slot, i, slot[(i - 1) / 2]);
        place(s, slot, i, node);
}

static void sift_down(fair_state *s, uint32_t *slot, size_t n, size_t i) {
        uint32_t node = slot[i];
        for (size_t kid; (kid = 2 * i + 1) < n; i = kid) {
                if (kid + 1 < n && before(s, slot[kid + 1], slot[kid]))
                        kid++;
                if (!before(s, slot[kid], node))
                        break;
                place(s, slot, i, slot[kid]);
        }
        place(s, slot, i, node);
}

void fair__heap_insert(fair_state *s, uint32_t *slot, uint32_t *n, uint32_t node) {
        place(s, slot, (*n)++, node);
        sift_up(s, slot, *n - 1);
}

void fair__heap_erase(fair_state *s, uint32_t *slot, uint32_t *n, uint32_t node) {
        size_t i = s->item[node].pos;
        uint32_t last = slot[--*n];
        s->item[node].pos = FAIR_NOWHERE;
        if (i == *n)
                return;
        place(s, slot, i, last);
        sift_up(s, slot, i);
        sift_down(s, slot, *n, s->item[last].pos);
}

void fair__heap_fix(fair_state *s, uint32_t *slot, size_t n, uint32_t node) {
        sift_up(s, slot, s->item[node].pos);
        sift_down(s, slot, n, s->item[node].pos);
}

void fair__heap_raised(fair_state *s, uint32_t *slot, size_t n, uint32_t node) {
        sift_down(s, slot, n, s->item[node].pos);
}
