/* fair.c - the fair_state: the tree in arrays, what each subtree holds, which leaves can take a
 * task (the scopes of fair_impl.h), and the calls a controller makes per decision. The choice
 * itself is the engine's: fair_flat.c (DRF, WDRF, MCH, C-CH, M-CH) or fair_hdrf.c (H-DRF). */
#include "fair_impl.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DEMAND(s, n, r) ((s)->demand[(size_t)(n) * (s)->nres + (r)])

void fair_free(fair_state *s) {
        if (!s)
                return;
        for (size_t i = 0; s->scopes && i < s->nscopes; i++)
                free(s->scopes[i].order);
        void *arrays[] = { s->parent, s->kid_start, s->kids, s->order,     s->depth,  s->omega,    s->demand,
                           s->want,   s->tasks,     s->used, s->nblock,    s->scopes, s->scope_of, s->weight,
                           s->item,   s->heap,      s->hd,   s->guarantee, s->open,   s->dirtyq };
        for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
                free(arrays[i]);
        free(s);
}

static int alloc_arrays(fair_state *s) {
        size_t n = s->nnodes, nr = n * s->nres;
        s->parent = calloc(n, sizeof(*s->parent));
        s->kid_start = calloc(n + 1, sizeof(*s->kid_start));
        s->kids = calloc(n, sizeof(*s->kids));
        s->order = calloc(n, sizeof(*s->order));
        s->depth = calloc(n, sizeof(*s->depth));
        s->omega = calloc(n, sizeof(*s->omega));
        s->demand = calloc(nr, sizeof(*s->demand));
        s->want = calloc(n, sizeof(*s->want));
        s->tasks = calloc(n, sizeof(*s->tasks));
        s->used = calloc(nr, sizeof(*s->used));
        s->nblock = calloc(n, sizeof(*s->nblock));
        s->scope_of = calloc(n, sizeof(*s->scope_of));
        s->weight = calloc(n, sizeof(*s->weight));
        s->guarantee = calloc(n, sizeof(*s->guarantee));
        bool ok = s->guarantee && s->parent && s->kid_start && s->kids && s->order && s->depth && s->omega &&
                  s->demand && s->want && s->tasks && s->used && s->nblock && s->scope_of && s->weight;
        return ok ? 0 : -ENOMEM;
}

/* Copy the nodes, list each node's children (in index order), and order the nodes from the
 * root down. fair_check has made sure it is a tree. */
static void build_tree(fair_state *s, const fair_problem *p) {
        uint32_t root = 0;
        for (size_t i = 0; i < s->nnodes; i++) {
                const fair_node *n = &p->nodes[i];
                s->parent[i] = n->parent;
                s->omega[i] = n->weight;
                if (n->parent < 0)
                        root = (uint32_t)i;
                else
                        s->kid_start[n->parent + 1]++;
        }
        for (size_t i = 0; i < s->nnodes; i++)
                s->kid_start[i + 1] += s->kid_start[i];
        uint32_t *next = s->depth; /* borrowed as a cursor per parent; depths are set below */
        for (size_t i = 0; i < s->nnodes; i++)
                next[i] = s->kid_start[i];
        for (size_t i = 0; i < s->nnodes; i++)
                if (s->parent[i] >= 0)
                        s->kids[next[s->parent[i]]++] = (uint32_t)i;
        s->order[0] = root;
        s->depth[root] = 0;
        for (size_t head = 0, tail = 1; head < tail; head++) {
                uint32_t n = s->order[head];
                for (uint32_t k = s->kid_start[n]; k < s->kid_start[n + 1]; k++) {
                        s->depth[s->kids[k]] = s->depth[n] + 1;
                        s->order[tail++] = s->kids[k];
                }
        }
        for (size_t i = 0; i < s->nnodes; i++)
                if (fair__is_leaf(s, (uint32_t)i)) {
                        s->want[i] = p->nodes[i].tasks;
                        memcpy(&DEMAND(s, i, 0), p->nodes[i].demand, s->nres * sizeof(int64_t));
                }
}

typedef struct ranked {
        int64_t demand;
        uint32_t leaf;
} ranked;

static int by_demand_desc(const void *a, const void *b) {
        const ranked *x = a, *y = b;
        return x->demand != y->demand ? (x->demand < y->demand ? 1 : -1) : (x->leaf > y->leaf) - (x->leaf < y->leaf);
}

/* Row r of sc's order: its leaves (taken from row 0) by demand on r, largest first. */
static void sort_row(fair_state *s, fair_scope *sc, size_t r, ranked *tmp) {
        for (uint32_t i = 0; i < sc->nleaves; i++)
                tmp[i] = (ranked){ DEMAND(s, sc->order[i], r), sc->order[i] };
        qsort(tmp, sc->nleaves, sizeof(*tmp), by_demand_desc);
        for (uint32_t i = 0; i < sc->nleaves; i++)
                sc->order[r * sc->nleaves + i] = tmp[i].leaf;
}

/* Each scope's leaves: a walk up from every leaf, O(leaves x depth), once to count, once to fill. */
static int list_scope_leaves(fair_state *s) {
        for (int pass = 0; pass < 2; pass++) {
                for (size_t i = 0; i < s->nscopes; i++) {
                        fair_scope *sc = &s->scopes[i];
                        if (pass == 1 && !(sc->order = calloc(s->nres * sc->nleaves + 1, sizeof(*sc->order))))
                                return -ENOMEM;
                        sc->nleaves = 0;
                }
                for (uint32_t l = 0; l < s->nnodes; l++)
                        for (int32_t n = (int32_t)l; fair__is_leaf(s, l) && n >= 0; n = s->parent[n])
                                if (s->scope_of[n] >= 0) {
                                        fair_scope *sc = &s->scopes[s->scope_of[n]];
                                        if (pass == 1)
                                                sc->order[sc->nleaves] = l;
                                        sc->nleaves++;
                                }
        }
        return 0;
}

/* A scope for the root and for every capped node; their leaves sorted per resource. */
static int build_scopes(fair_state *s, const fair_problem *p) {
        for (size_t i = 0; i < s->nnodes; i++)
                s->scope_of[i] = p->nodes[i].parent < 0 || p->nodes[i].cap < 1 ? (int32_t)s->nscopes++ : -1;
        if (!(s->scopes = calloc(s->nscopes, sizeof(*s->scopes))))
                return -ENOMEM;
        for (size_t i = 0; i < s->nnodes; i++) {
                if (s->scope_of[i] < 0)
                        continue;
                fair_scope *sc = &s->scopes[s->scope_of[i]];
                sc->node = (uint32_t)i;
                for (size_t r = 0; r < s->nres; r++) /* 1 x capacity in doubles could round up */
                        sc->limit[r] = p->nodes[i].cap < 1 ? (int64_t)floor(p->nodes[i].cap * (double)s->capacity[r])
                                                           : s->capacity[r];
        }
        int r = list_scope_leaves(s);
        ranked *tmp = r == 0 ? calloc(s->nnodes, sizeof(*tmp)) : NULL;
        if (!tmp)
                return -ENOMEM;
        for (size_t i = 0; i < s->nscopes; i++)
                for (size_t res = s->nres; res-- > 0;)
                        sort_row(s, &s->scopes[i], res, tmp);
        free(tmp);
        return 0;
}

/* One more (+1) or one fewer (-1) reason for leaf to be blocked; the engine hears of a change
 * once it runs (notify). */
static void block(fair_state *s, uint32_t leaf, int delta, bool notify) {
        bool was = s->nblock[leaf] > 0;
        s->nblock[leaf] = (uint32_t)((int64_t)s->nblock[leaf] + delta);
        if (notify && was != (s->nblock[leaf] > 0))
                s->engine->flip(s, leaf);
}

/* Move sc's cuts to what its node holds now: leaves whose task no longer fits are blocked, those
 * whose task fits again are unblocked. O(1) per leaf that changes. */
static void scope_update(fair_state *s, fair_scope *sc, bool notify) {
        for (size_t r = 0; r < s->nres; r++) {
                int64_t room = sc->limit[r] - s->used[(size_t)sc->node * s->nres + r];
                const uint32_t *row = &sc->order[r * sc->nleaves];
                while (sc->cut[r] < sc->nleaves && DEMAND(s, row[sc->cut[r]], r) > room)
                        block(s, row[sc->cut[r]++], +1, notify);
                while (sc->cut[r] > 0 && DEMAND(s, row[sc->cut[r] - 1], r) <= room)
                        block(s, row[--sc->cut[r]], -1, notify);
        }
}

static void init_blocking(fair_state *s) {
        for (uint32_t i = 0; i < s->nnodes; i++)
                s->nblock[i] = fair__is_leaf(s, i) && s->want[i] == 0;
        for (size_t i = 0; i < s->nscopes; i++)
                scope_update(s, &s->scopes[i], false);
}

int fair_new(const fair_problem *p, fair_algo a, fair_state **out, char *why, size_t whylen) {
        int r = fair_check(p, a, why, whylen);
        fair_state *s = r == 0 ? calloc(1, sizeof(*s)) : NULL;
        if (r < 0)
                return r;
        if (!s)
                return snprintf(why, whylen, "out of memory"), -ENOMEM;
        *s = (fair_state){ .algo = a, .nres = p->nres, .nnodes = p->nnodes, .first_saturated = -1 };
        s->engine = a == FAIR_HDRF ? &fair__hdrf_engine : &fair__flat_engine;
        memcpy(s->capacity, p->capacity, sizeof(s->capacity));
        if ((r = alloc_arrays(s)) == 0) {
                build_tree(s, p);
                fair__guarantees(s, p);
                r = build_scopes(s, p);
        }
        if (r == 0 && (r = fair__weights(s)) == 0) {
                init_blocking(s);
                r = s->engine->init(s);
        }
        if (r < 0) {
                fair_free(s);
                return snprintf(why, whylen, "out of memory"), r;
        }
        *out = s;
        return 0;
}

/* Add sign x leaf's demand to what it and each ancestor hold, then move the cuts of the scopes
 * on that path. */
static void move(fair_state *s, uint32_t leaf, int sign) {
        for (int32_t n = (int32_t)leaf; n >= 0; n = s->parent[n])
                for (size_t r = 0; r < s->nres; r++)
                        s->used[(size_t)n * s->nres + r] += sign * DEMAND(s, leaf, r);
        s->engine->touch(s, leaf);
        for (int32_t n = (int32_t)leaf; n >= 0; n = s->parent[n])
                if (s->scope_of[n] >= 0)
                        scope_update(s, &s->scopes[s->scope_of[n]], true);
}

int fair_charge(fair_state *s, size_t leaf) {
        if (leaf >= s->nnodes || !fair__is_leaf(s, (uint32_t)leaf))
                return -EINVAL;
        if (s->nblock[leaf] > 0)
                return -ENOSPC;
        s->tasks[leaf]++;
        move(s, (uint32_t)leaf, +1);
        if (s->tasks[leaf] == s->want[leaf])
                block(s, (uint32_t)leaf, +1, true);
        s->engine->settle(s);
        return 0;
}

int fair_release(fair_state *s, size_t leaf) {
        if (leaf >= s->nnodes || !fair__is_leaf(s, (uint32_t)leaf))
                return -EINVAL;
        if (s->tasks[leaf] == 0)
                return -ENOENT;
        if (s->tasks[leaf] == s->want[leaf])
                block(s, (uint32_t)leaf, -1, true);
        s->tasks[leaf]--;
        move(s, (uint32_t)leaf, -1);
        s->engine->settle(s);
        return 0;
}

long fair_next(const fair_state *s) { return s->engine->next(s); }

size_t fair_run(fair_state *s) {
        size_t placed = 0;
        for (long leaf; (leaf = fair_next(s)) >= 0 && fair_charge(s, (size_t)leaf) == 0;)
                placed++;
        return placed;
}

int64_t fair_tasks(const fair_state *s, size_t node) { return s->tasks[node]; }

int64_t fair_used(const fair_state *s, size_t node, size_t r) { return s->used[node * s->nres + r]; }

double fair_dominant_share(const fair_state *s, size_t node) {
        double most = 0;
        for (size_t r = 0; r < s->nres; r++)
                most = fmax(most, (double)fair_used(s, node, r) / (double)s->capacity[r]);
        return most;
}

double fair_weight(const fair_state *s, size_t node) { return s->weight[node]; }

int fair_first_saturated(const fair_state *s) { return s->first_saturated; }
