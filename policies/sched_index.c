/* sched_index.c - the indexed machines (see sched_index.h): a segment tree for First-Fit, and a
 * treap per resource for Best-Fit and Worst-Fit. The heuristics themselves, and which of these
 * queries each one asks, live in fit.c. */
#include "sched_index.h"
#include "rng.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define NIL UINT32_MAX

/* A machine that can take nothing, for the segment tree: below any request. */
#define NONE INT64_MIN

void sched_index_init(sched_index *ix) { *ix = (sched_index){ .by_mcpu.root = NIL, .by_mem.root = NIL }; }

static void tree_free(sched_tree *t) {
        free(t->left);
        free(t->right);
        free(t->key);
        free(t->other);
        free(t->max_other);
        free(t->in);
}

void sched_index_free(sched_index *ix) {
        free(ix->machines);
        free(ix->seg);
        free(ix->reserved);
        tree_free(&ix->by_mcpu);
        tree_free(&ix->by_mem);
        for (size_t i = 0; i < 3; i++)
                free(ix->easy_scratch[i]);
        sched_index_init(ix);
}

/* --- the treaps ---------------------------------------------------------------------------- */

/* A node's priority: a hash of its position, so the tree is balanced in expectation whatever
 * the keys, and the same on every run. */
static uint64_t priority(uint32_t x) {
        uint64_t s = x;
        return sched_rng_next(&s);
}

/* a before b in the tree's order: by key, then by position. */
static bool before(const sched_tree *t, uint32_t a, uint32_t b) {
        return t->key[a] < t->key[b] || (t->key[a] == t->key[b] && a < b);
}

static int64_t max_other_of(const sched_tree *t, uint32_t x) { return x == NIL ? NONE : t->max_other[x]; }

static void pull(sched_tree *t, uint32_t x) {
        int64_t m = t->other[x], l = max_other_of(t, t->left[x]), r = max_other_of(t, t->right[x]);
        t->max_other[x] = m > l ? (m > r ? m : r) : (l > r ? l : r);
}

/* Split the subtree at x into the nodes before pivot (*a) and the rest (*b). */
static void split(sched_tree *t, uint32_t x, uint32_t pivot, uint32_t *a, uint32_t *b) {
        if (x == NIL) {
                *a = *b = NIL;
        } else if (before(t, x, pivot)) {
                split(t, t->right[x], pivot, &t->right[x], b);
                pull(t, x);
                *a = x;
        } else {
                split(t, t->left[x], pivot, a, &t->left[x]);
                pull(t, x);
                *b = x;
        }
}

/* Join two subtrees, every node of a before every node of b. */
static uint32_t merge(sched_tree *t, uint32_t a, uint32_t b) {
        if (a == NIL || b == NIL)
                return a == NIL ? b : a;
        if (priority(a) > priority(b)) {
                t->right[a] = merge(t, t->right[a], b);
                pull(t, a);
                return a;
        }
        t->left[b] = merge(t, a, t->left[b]);
        pull(t, b);
        return b;
}

static uint32_t insert(sched_tree *t, uint32_t root, uint32_t x) {
        if (root == NIL || priority(x) > priority(root)) {
                split(t, root, x, &t->left[x], &t->right[x]);
                pull(t, x);
                return x;
        }
        if (before(t, x, root))
                t->left[root] = insert(t, t->left[root], x);
        else
                t->right[root] = insert(t, t->right[root], x);
        pull(t, root);
        return root;
}

static uint32_t erase(sched_tree *t, uint32_t root, uint32_t x) {
        if (root == x)
                return merge(t, t->left[x], t->right[x]);
        if (before(t, x, root))
                t->left[root] = erase(t, t->left[root], x);
        else
                t->right[root] = erase(t, t->right[root], x);
        pull(t, root);
        return root;
}

/* Put machine x back in the tree at its new key, or take it out if it is not up. */
static void tree_update(sched_tree *t, uint32_t x, int64_t key, int64_t other, bool up) {
        if (t->in[x])
                t->root = erase(t, t->root, x);
        t->in[x] = up;
        if (!up)
                return;
        t->key[x] = key;
        t->other[x] = other;
        t->root = insert(t, t->root, x);
}

/* The earliest node in order with key >= lo and other >= need, or NIL. One path down, plus one
 * successful descent: O(depth). */
static uint32_t first_from(const sched_tree *t, uint32_t x, int64_t lo, int64_t need) {
        while (x != NIL && t->max_other[x] >= need) {
                if (t->key[x] < lo) {
                        x = t->right[x];
                        continue;
                }
                uint32_t r = first_from(t, t->left[x], lo, need);
                if (r != NIL)
                        return r;
                if (t->other[x] >= need)
                        return x;
                x = t->right[x];
        }
        return NIL;
}

/* The last node in order with other >= need, or NIL. O(depth). */
static uint32_t last_with(const sched_tree *t, int64_t need) {
        uint32_t x = t->root;
        if (x == NIL || t->max_other[x] < need)
                return NIL;
        for (;;) {
                if (t->right[x] != NIL && t->max_other[t->right[x]] >= need)
                        x = t->right[x];
                else if (t->other[x] >= need)
                        return x;
                else
                        x = t->left[x]; /* the subtree's maximum is there */
        }
}

/* The least (most = false) or most key >= lo among nodes with other >= need, the earliest
 * position on a tie; -1 when none. */
static long tree_extreme(const sched_tree *t, bool most, int64_t lo, int64_t need) {
        if (most) {
                uint32_t top = last_with(t, need);
                if (top == NIL || t->key[top] < lo)
                        return -1;
                lo = t->key[top]; /* nothing after it has enough of the other: find its key's first */
        }
        uint32_t x = first_from(t, t->root, lo, need);
        return x == NIL ? -1 : (long)x;
}

/* --- the segment tree ---------------------------------------------------------------------- */

/* The least of a machine's cores and its memory at about 4 GiB a core (a common server's
 * ratio), in milli-cores and units of 4 MiB: a machine req fits has both amounts >= req's, so
 * its corner >= req's corner (both terms only grow). A subtree whose largest corner is below the
 * request's holds no fit even when its most free cores and its most free memory (on different
 * machines) are both enough: unlike a weighted sum, which an idle core on one machine and idle
 * memory on another lift together, the least of the two is small on a machine short of either.
 * It replaced the sum (4 x milli-cores + MiB): 4 times fewer nodes per search on lotes-google
 * (docs/benchmarks.md). Division, not a shift, so that negative amounts stay in order too. */
static int64_t corner(int64_t mcpu, int64_t mem) {
        int64_t m = mem / (4 << 20);
        return mcpu < m ? mcpu : m;
}

static void seg_set_leaf(sched_index *ix, size_t pos) {
        const sched_machine *m = pos < ix->n ? &ix->machines[pos] : NULL;
        bool up = m && m->up > 0;
        ix->seg[ix->leaves + pos] = (sched_seg){ .mcpu = up ? m->free.mcpu : NONE,
                                                 .mem = up ? m->free.mem : NONE,
                                                 .corner = up ? corner(m->free.mcpu, m->free.mem) : NONE,
                                                 .gpus = up ? m->free.gpus : NONE };
}

static int64_t max64(int64_t a, int64_t b) { return a > b ? a : b; }

static void seg_pull(sched_index *ix, size_t i) {
        const sched_seg *l = &ix->seg[2 * i], *r = &ix->seg[2 * i + 1];
        ix->seg[i] = (sched_seg){ .mcpu = max64(l->mcpu, r->mcpu),
                                  .mem = max64(l->mem, r->mem),
                                  .corner = max64(l->corner, r->corner),
                                  .gpus = max64(l->gpus, r->gpus) };
}

static bool seg_same(const sched_seg *a, const sched_seg *b) {
        return a->mcpu == b->mcpu && a->mem == b->mem && a->corner == b->corner && a->gpus == b->gpus;
}

/* Up from the leaf, until a node's maxima come out as they were: the nodes above it read only
 * those, so they hold already (most updates change a machine that is not its subtree's most free,
 * and stop a few levels up instead of at the root). */
static void seg_update(sched_index *ix, size_t pos) {
        seg_set_leaf(ix, pos);
        for (size_t i = (ix->leaves + pos) / 2; i >= 1; i /= 2) {
                sched_seg was = ix->seg[i];
                seg_pull(ix, i);
                if (seg_same(&was, &ix->seg[i]))
                        break;
        }
}

/* Rebuild the segment tree with room for leaves machines. Returns 0 or -ENOMEM (unchanged). */
static int seg_resize(sched_index *ix, size_t leaves) {
        sched_seg *seg = malloc(2 * leaves * sizeof(*seg));
        if (!seg)
                return -ENOMEM;
        free(ix->seg);
        ix->seg = seg;
        ix->leaves = leaves;
        for (size_t pos = 0; pos < leaves; pos++)
                seg_set_leaf(ix, pos);
        for (size_t i = leaves - 1; i >= 1; i--)
                seg_pull(ix, i);
        return 0;
}

/* Node s's maxima say req may fit below it: necessary, not sufficient, since the maxima may
 * come from different machines. */
static bool seg_may_fit(const sched_seg *s, res_t req, int64_t need) {
        return !((s->mcpu < req.mcpu) | (s->mem < req.mem) | (s->corner < need) | (s->gpus < req.gpus));
}

/* The earliest fit; need is the request's corner. A depth-first search, left first, without
 * recursion: a node that fails hands over to the next subtree in that order, the right sibling
 * of its nearest ancestor that is a left child (the root's index, 1, is odd: 0 ends it). */
static long seg_first(const sched_index *ix, res_t req, int64_t need) {
        size_t i = 1;
        for (;;) {
                if (seg_may_fit(&ix->seg[i], req, need)) {
                        if (i < ix->leaves) {
                                i = 2 * i;
                                continue;
                        }
                        size_t pos = i - ix->leaves; /* a leaf's maxima are its own machine's */
                        if (pos < ix->n && ix->machines[pos].up > 0)
                                return (long)pos;
                }
                while (i & 1)
                        i /= 2;
                if (i == 0)
                        return -1;
                i++;
        }
}

/* --- growth and updates -------------------------------------------------------------------- */

static int grow(void *array, size_t cap, size_t elem) {
        void *p = realloc(*(void **)array, cap * elem);
        if (!p)
                return -ENOMEM;
        *(void **)array = p;
        return 0;
}

static int tree_grow(sched_tree *t, size_t cap) {
        if (grow(&t->left, cap, sizeof(*t->left)) < 0 || grow(&t->right, cap, sizeof(*t->right)) < 0 ||
            grow(&t->key, cap, sizeof(*t->key)) < 0 || grow(&t->other, cap, sizeof(*t->other)) < 0 ||
            grow(&t->max_other, cap, sizeof(*t->max_other)) < 0 || grow(&t->in, cap, sizeof(*t->in)) < 0)
                return -ENOMEM;
        return 0;
}

/* Room for cap machines in every array; the segment tree keeps its size. */
static int reserve_room(sched_index *ix, size_t cap) {
        if (cap > NIL)
                return -ENOMEM; /* positions are 32-bit in the trees */
        if (grow(&ix->machines, cap, sizeof(*ix->machines)) < 0 ||
            grow(&ix->reserved, cap, sizeof(*ix->reserved)) < 0 || tree_grow(&ix->by_mcpu, cap) < 0 ||
            tree_grow(&ix->by_mem, cap) < 0)
                return -ENOMEM;
        for (size_t pos = ix->cap; pos < cap; pos++)
                ix->by_mcpu.in[pos] = ix->by_mem.in[pos] = false;
        ix->cap = cap;
        return 0;
}

int sched_index_add(sched_index *ix, sched_machine m) {
        if (ix->n == ix->cap && reserve_room(ix, ix->cap ? 2 * ix->cap : 16) < 0)
                return -ENOMEM;
        if (ix->n == ix->leaves && seg_resize(ix, ix->leaves ? 2 * ix->leaves : 16) < 0)
                return -ENOMEM;
        ix->machines[ix->n++] = m;
        sched_index_update(ix, ix->n - 1);
        return 0;
}

static void trees_update(sched_index *ix, size_t pos) {
        const sched_machine *m = &ix->machines[pos];
        bool up = m->up > 0;
        tree_update(&ix->by_mcpu, (uint32_t)pos, m->free.mcpu, m->free.mem, up);
        tree_update(&ix->by_mem, (uint32_t)pos, m->free.mem, m->free.mcpu, up);
}

void sched_index_update(sched_index *ix, size_t pos) {
        ix->gpus |= ix->machines[pos].capacity.gpus > 0;
        seg_update(ix, pos);
        if (ix->trees)
                trees_update(ix, pos);
}

/* Build the treaps, the first time a query needs them: First-Fit alone never pays for them. */
static void need_trees(sched_index *ix) {
        if (ix->trees)
                return;
        ix->trees = true;
        for (size_t pos = 0; pos < ix->n; pos++)
                trees_update(ix, pos);
}

/* --- queries ------------------------------------------------------------------------------- */

long sched_index_first_fit(const sched_index *ix, res_t req) {
        return ix->n ? seg_first(ix, req, corner(req.mcpu, req.mem)) : -1;
}

long sched_index_extreme(sched_index *ix, res_t req, bool by_mem, bool most) {
        need_trees(ix);
        return by_mem ? tree_extreme(&ix->by_mem, most, req.mem, req.mcpu)
                      : tree_extreme(&ix->by_mcpu, most, req.mcpu, req.mem);
}

long sched_index_roomiest(sched_index *ix) {
        need_trees(ix);
        return tree_extreme(&ix->by_mem, true, INT64_MIN, INT64_MIN);
}
