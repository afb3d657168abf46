/* fairorder.c - the fair order of the pending jobs (fairorder.h). */
#include "fairorder.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROOT 0

typedef struct named {
        const char *name;
        uint32_t node;
} named;

static int by_name(const void *a, const void *b) { return strcmp(((const named *)a)->name, ((const named *)b)->name); }

/* fo->sorted: the nodes by path, for fairorder_dept's binary search. Returns 0 or -ENOMEM. */
static int sort_paths(fairorder *fo) {
        named *tmp = calloc(fo->n, sizeof(*tmp));
        if (!tmp)
                return -ENOMEM;
        for (uint32_t i = 0; i < fo->n; i++)
                tmp[i] = (named){ fo->nodes[i].name, i };
        qsort(tmp, fo->n, sizeof(*tmp), by_name);
        for (size_t i = 0; i < fo->n; i++)
                fo->sorted[i] = tmp[i].node;
        free(tmp);
        return 0;
}

void fairorder_free(fairorder *fo) {
        for (size_t i = 0; fo->nodes && i < fo->n; i++)
                free((char *)fo->nodes[i].name);
        free(fo->nodes);
        free(fo->sorted);
        free(fo->used);
        free(fo->running);
        free(fo->inner);
        *fo = (fairorder){ 0 };
}

/* The node built so far named path, or -1. Linear, so building is O(D^2) for D departments:
 * a config file's handful, once per start or reload. */
static int32_t find_built(const fairorder *fo, const char *path, size_t len) {
        for (size_t i = 1; i < fo->n; i++)
                if (strlen(fo->nodes[i].name) == len && strncmp(fo->nodes[i].name, path, len) == 0)
                        return (int32_t)i;
        return -1;
}

int fairorder_init(fairorder *fo, const depts *d, fair_algo algo) {
        size_t n = d->n + 2;
        *fo = (fairorder){ .algo = algo,
                           .nodes = calloc(n, sizeof(*fo->nodes)),
                           .sorted = calloc(n, sizeof(uint32_t)),
                           .used = calloc(n, sizeof(res_t)),
                           .running = calloc(n, sizeof(uint32_t)),
                           .inner = calloc(n, sizeof(bool)) };
        if (!fo->nodes || !fo->sorted || !fo->used || !fo->running || !fo->inner)
                return fairorder_free(fo), -ENOMEM;
        fo->nodes[fo->n++] = (fair_node){ .name = strdup(""), .parent = -1, .weight = 1, .cap = 1 };
        for (size_t i = 0; i < d->n; i++) { /* depts lists every parent before its children */
                const char *path = d->v[i].path, *slash = strrchr(path, '/');
                int32_t up = slash ? find_built(fo, path, (size_t)(slash - path)) : ROOT;
                fo->nodes[fo->n++] = (fair_node){
                        .name = strdup(path), .parent = up < 0 ? ROOT : up, .weight = d->v[i].weight, .cap = d->v[i].cap
                };
        }
        fo->nodes[fo->n++] = (fair_node){ .name = strdup(FAIRORDER_DEFAULT), .parent = ROOT, .weight = 1, .cap = 1 };
        for (size_t i = 0; i < fo->n; i++) {
                if (!fo->nodes[i].name)
                        return fairorder_free(fo), -ENOMEM;
                if (fo->nodes[i].parent >= 0)
                        fo->inner[fo->nodes[i].parent] = true;
        }
        fo->inner[ROOT] = true;
        return sort_paths(fo) < 0 ? (fairorder_free(fo), -ENOMEM) : 0;
}

bool fairorder_has_depts(const fairorder *fo) {
        return fo->n > 2; /* the root and the default department are always there */
}

bool fairorder_has_caps(const fairorder *fo) {
        for (size_t i = 0; i < fo->n; i++)
                if (fo->nodes[i].cap < 1)
                        return true;
        return false;
}

uint32_t fairorder_dept(const fairorder *fo, const char *group) {
        uint32_t deflt = (uint32_t)fo->n - 1;
        size_t lo = 0, hi = fo->n;
        while (group && lo < hi) {
                size_t mid = lo + (hi - lo) / 2;
                uint32_t node = fo->sorted[mid];
                int c = strcmp(group, fo->nodes[node].name);
                if (c == 0)
                        return fo->inner[node] ? deflt : node;
                if (c < 0)
                        hi = mid;
                else
                        lo = mid + 1;
        }
        return deflt;
}

void fairorder_charge(fairorder *fo, uint32_t dept, res_t req, int sign) {
        fo->used[dept] = sign > 0 ? res_add(fo->used[dept], req) : res_sub(fo->used[dept], req);
        fo->running[dept] = (uint32_t)((int64_t)fo->running[dept] + sign);
}

/* GPUs count only where the capacity has some: a cluster without GPUs shares cores and memory. */
static double dominant(res_t u, res_t cap) {
        double d = fmax((double)u.mcpu / (double)cap.mcpu, (double)u.mem / (double)cap.mem);
        return cap.gpus > 0 ? fmax(d, (double)u.gpus / (double)cap.gpus) : d;
}

/* One pass's order, taken a window at a time (fairorder.h). Unsolved (one department waiting
 * and no cap above it, or nothing up), the leaves' jobs merge in submission order. */
struct fairorder_walk {
        const fairorder *fo;
        fairorder_source src;
        res_t capacity;
        bool solved;
        res_t *vused; /* per node: subtree usage as the order goes */
        /* per leaf, its next job: its place in its leaf's list (UINT32_MAX: none left), its place
         * in submission order and its request */
        uint32_t *cursor;
        uint64_t *seq;
        res_t *req;
        double *entitled;
        uint32_t *heap;
        size_t nheap;
        fairorder_pick *held; /* the jobs held by caps so far, leaf by leaf as they were held */
        size_t nheld, held_cap;
        bool *leaf_held;
        bool heads_only;            /* a held leaf lists its next job only (fairorder_walk_hold_heads) */
        struct array_source *owned; /* src's lists, when the walk made them (walk_array) */
};
typedef struct fairorder_walk pass;

/* Each leaf's mean task (running and pending), wanting that many tasks; entitled[] from
 * fair_run under algo. Returns 0, -ENOMEM or -EINVAL. */
static int entitlements_under(pass *p, fair_algo algo, double *entitled) {
        const fairorder *fo = p->fo;
        fair_node *nodes = malloc(fo->n * sizeof(*nodes));
        fair_problem prob = { .nres = p->capacity.gpus > 0 ? 3 : 2,
                              .capacity = { p->capacity.mcpu, p->capacity.mem, p->capacity.gpus },
                              .nodes = nodes,
                              .nnodes = fo->n };
        fair_state *s = NULL;
        char why[256];
        if (!nodes)
                return -ENOMEM;
        for (uint32_t i = 0; i < fo->n; i++) {
                nodes[i] = fo->nodes[i];
                int64_t tasks = fo->running[i] + p->src.npend[i];
                if (fo->inner[i] || tasks == 0)
                        continue;
                res_t sum = res_add(fo->used[i], p->src.pend_sum[i]);
                nodes[i].tasks = tasks;
                nodes[i].demand[FAIR_CPU] = (sum.mcpu + tasks - 1) / tasks;
                nodes[i].demand[FAIR_MEM] = (sum.mem + tasks - 1) / tasks;
                nodes[i].demand[FAIR_GPU] = prob.nres > FAIR_GPU ? (sum.gpus + tasks - 1) / tasks : 0;
                for (size_t r = 0; r < prob.nres; r++)
                        nodes[i].demand[r] =
                                nodes[i].demand[r] < prob.capacity[r] ? nodes[i].demand[r] : prob.capacity[r];
        }
        int r = fair_new(&prob, algo, &s, why, sizeof(why));
        if (r == 0) {
                fair_run(s);
                for (size_t i = 0; i < fo->n; i++)
                        entitled[i] = fair_dominant_share(s, i);
        }
        fair_free(s);
        free(nodes);
        return r;
}

/* rep's entitled_other: the entitlements under the other of H-DRF and MCH (H-DRF for any other
 * algorithm), so `colony shares` can say where they part. Returns 0, -ENOMEM or -EINVAL. */
static int other_entitlements(pass *p, fairorder_report *rep) {
        double *other = calloc(p->fo->n, sizeof(*other));
        int r = other ? entitlements_under(p, fairorder_other_algo(p->fo), other) : -ENOMEM;
        for (size_t i = 0; r == 0 && i < p->fo->n; i++)
                rep->nodes[i].entitled_other = other[i];
        free(other);
        return r;
}

fair_algo fairorder_other_algo(const fairorder *fo) { return fo->algo == FAIR_HDRF ? FAIR_MCH : FAIR_HDRF; }

/* The heap key of leaf: share over entitlement, with one job's worth as the least entitlement. */
static double key(const pass *p, uint32_t leaf) {
        double one = dominant(p->req[leaf], p->capacity);
        return dominant(p->vused[leaf], p->capacity) / fmax(p->entitled[leaf], one);
}

/* Ties go to the department whose next job is older; unsolved, the older job goes first. */
static bool before(const pass *p, uint32_t a, uint32_t b) {
        if (!p->solved)
                return p->seq[a] < p->seq[b];
        double ka = key(p, a), kb = key(p, b);
        return ka < kb || (ka == kb && p->seq[a] < p->seq[b]);
}

static void sift_down(pass *p, size_t i) {
        for (size_t kid; (kid = 2 * i + 1) < p->nheap; i = kid) {
                if (kid + 1 < p->nheap && before(p, p->heap[kid + 1], p->heap[kid]))
                        kid++;
                if (!before(p, p->heap[kid], p->heap[i]))
                        break;
                uint32_t t = p->heap[i];
                p->heap[i] = p->heap[kid];
                p->heap[kid] = t;
        }
}

/* Move leaf's cursor to its next job (after: UINT32_MAX for its first). */
static void advance(pass *p, uint32_t leaf, uint32_t after) {
        p->cursor[leaf] = p->src.next(p->src.arg, leaf, after, &p->seq[leaf], &p->req[leaf]);
}

/* Whether job fits under the cap of every capped node from dept up. */
static bool under_caps(const pass *p, uint32_t dept, res_t req) {
        for (int32_t a = (int32_t)dept; a >= 0; a = p->fo->nodes[a].parent) {
                double cap = p->fo->nodes[a].cap;
                res_t after = res_add(p->vused[a], req);
                if (cap < 1 && ((double)after.mcpu > cap * (double)p->capacity.mcpu ||
                                (double)after.mem > cap * (double)p->capacity.mem ||
                                (p->capacity.gpus > 0 && (double)after.gpus > cap * (double)p->capacity.gpus)))
                        return false;
        }
        return true;
}

static void add_up(pass *p, uint32_t dept, res_t req) {
        for (int32_t a = (int32_t)dept; a >= 0; a = p->fo->nodes[a].parent)
                p->vused[a] = res_add(p->vused[a], req);
}

/* Hold leaf's jobs from its cursor on: they go to p->held, in submission order (only the first
 * with heads_only, the rest unread). Returns 0 or -ENOMEM (the rest of the leaf's jobs then wait
 * unnamed). */
static int hold_leaf(pass *p, uint32_t leaf) {
        int r = 0;
        p->leaf_held[leaf] = true;
        for (uint32_t at = p->cursor[leaf]; at != UINT32_MAX; at = p->cursor[leaf]) {
                if (p->nheld == p->held_cap) {
                        size_t cap = p->held_cap ? 2 * p->held_cap : 64;
                        fairorder_pick *v = realloc(p->held, cap * sizeof(*v));
                        if (!v) {
                                r = -ENOMEM;
                                break;
                        }
                        p->held = v;
                        p->held_cap = cap;
                }
                p->held[p->nheld++] = (fairorder_pick){ leaf, at };
                if (p->heads_only)
                        break;
                advance(p, leaf, at);
        }
        p->cursor[leaf] = UINT32_MAX;
        return r;
}

/* The order itself, up to max jobs: pop the least served leaf, take its next job (or hold the
 * rest of its jobs at a cap), push it back with its new key. */
static size_t interleave(pass *p, fairorder_pick *order, size_t max) {
        size_t kept = 0;
        while (kept < max && p->nheap > 0) {
                uint32_t leaf = p->heap[0];
                if (!p->solved || under_caps(p, leaf, p->req[leaf])) {
                        order[kept++] = (fairorder_pick){ leaf, p->cursor[leaf] };
                        if (p->solved)
                                add_up(p, leaf, p->req[leaf]);
                        advance(p, leaf, p->cursor[leaf]);
                } else
                        (void)hold_leaf(p, leaf);
                if (p->cursor[leaf] == UINT32_MAX)
                        p->heap[0] = p->heap[--p->nheap];
                sift_down(p, 0);
        }
        return kept;
}

static void report(const pass *p, fairorder_report *rep) {
        const fairorder *fo = p->fo;
        for (uint32_t i = 0; i < fo->n; i++) {
                rep->nodes[i].entitled = p->entitled[i];
                rep->nodes[i].running = 0;
                rep->nodes[i].pending = 0;
                rep->nodes[i].held = p->leaf_held[i];
        }
        res_t *sub = p->vused; /* reused: the running usage of each subtree */
        memset(sub, 0, fo->n * sizeof(*sub));
        for (uint32_t i = 0; i < fo->n; i++)
                for (int32_t a = (int32_t)i; a >= 0; a = fo->nodes[a].parent) {
                        sub[a] = res_add(sub[a], fo->used[i]);
                        rep->nodes[a].running += fo->running[i];
                        rep->nodes[a].pending += p->src.npend[i];
                }
        for (uint32_t i = 0; i < fo->n; i++)
                rep->nodes[i].share = dominant(sub[i], p->capacity);
}

static void array_free(struct array_source *a);

void fairorder_walk_free(fairorder_walk *p) {
        if (!p)
                return;
        void *arrays[] = { p->vused, p->cursor, p->seq, p->req, p->entitled, p->heap, p->held, p->leaf_held };
        for (size_t i = 0; i < sizeof(arrays) / sizeof(arrays[0]); i++)
                free(arrays[i]);
        array_free(p->owned);
        free(p);
}

/* The per-node arrays; vused starts at what each subtree runs, each leaf's cursor at its first
 * job. Returns 0 or -ENOMEM. */
static int prepare(pass *p) {
        size_t m = p->fo->n;
        p->vused = calloc(m, sizeof(*p->vused));
        p->cursor = malloc(m * sizeof(*p->cursor));
        p->seq = calloc(m, sizeof(*p->seq));
        p->req = calloc(m, sizeof(*p->req));
        p->entitled = calloc(m, sizeof(*p->entitled));
        p->heap = calloc(m, sizeof(*p->heap));
        p->leaf_held = calloc(m, sizeof(*p->leaf_held));
        if (!p->vused || !p->cursor || !p->seq || !p->req || !p->entitled || !p->heap || !p->leaf_held)
                return -ENOMEM;
        for (uint32_t i = 0; i < m; i++) {
                for (int32_t a = (int32_t)i; a >= 0; a = p->fo->nodes[a].parent)
                        p->vused[a] = res_add(p->vused[a], p->fo->used[i]);
                p->cursor[i] = UINT32_MAX;
                if (!p->fo->inner[i])
                        advance(p, i, UINT32_MAX);
        }
        return 0;
}

/* True when the order needs no solving: one department with pending jobs, no cap above it. */
static bool trivial(const pass *p) {
        size_t active = 0;
        uint32_t only = 0;
        for (uint32_t i = 0; i < p->fo->n; i++)
                if (p->cursor[i] != UINT32_MAX) {
                        active++;
                        only = i;
                }
        if (active > 1)
                return false;
        for (int32_t a = (int32_t)only; active == 1 && a >= 0; a = p->fo->nodes[a].parent)
                if (p->fo->nodes[a].cap < 1)
                        return false;
        return true;
}

/* Heap the leaves with pending jobs, by key once solved. */
static void heap_leaves(pass *p) {
        for (uint32_t i = 0; i < p->fo->n; i++)
                if (p->cursor[i] != UINT32_MAX)
                        p->heap[p->nheap++] = i;
        for (size_t i = p->nheap; i-- > 0;)
                sift_down(p, i);
}

/* Start a walk; solve it even where the order needs no solving when all is set (a report). */
static int walk_start(const fairorder *fo, res_t capacity, const fairorder_source *src, bool all,
                      fairorder_walk **out) {
        pass *p = calloc(1, sizeof(*p));
        *out = NULL;
        if (!p)
                return -ENOMEM;
        *p = (pass){ .fo = fo, .src = *src, .capacity = capacity };
        int r = prepare(p);
        bool up = capacity.mcpu > 0 && capacity.mem > 0; /* nothing up: nothing to place, no share to speak of */
        if (r == 0 && up && (all || !trivial(p)) && (r = entitlements_under(p, fo->algo, p->entitled)) == 0)
                p->solved = true;
        if (r < 0) {
                fairorder_walk_free(p);
                return r;
        }
        heap_leaves(p);
        *out = p;
        return 0;
}

int fairorder_walk_start(const fairorder *fo, res_t capacity, const fairorder_source *src, fairorder_walk **out) {
        return walk_start(fo, capacity, src, false, out);
}

size_t fairorder_walk_next(fairorder_walk *w, fairorder_pick *order, size_t max) { return interleave(w, order, max); }

void fairorder_walk_hold_heads(fairorder_walk *w) { w->heads_only = true; }

size_t fairorder_walk_stop(fairorder_walk *w, const fairorder_pick **held) {
        for (size_t i = 0; w->solved && i < w->nheap; i++) {
                uint32_t leaf = w->heap[i];
                if (!under_caps(w, leaf, w->req[leaf]))
                        (void)hold_leaf(w, leaf);
        }
        w->nheap = 0;
        *held = w->held;
        return w->nheld;
}

/* --- a walk over an array of pending jobs (fairorder_walk_jobs, fairorder_rank) ------------- */

/* Each leaf's jobs of the array as a list in submission order; the counts and sums per node. */
typedef struct array_source {
        const fairorder_job *jobs;
        uint32_t *first, *next_of, *npend;
        res_t *pend_sum;
} array_source;

static uint32_t array_next(void *arg, uint32_t leaf, uint32_t after, uint64_t *seq, res_t *req) {
        const array_source *a = arg;
        uint32_t j = after == UINT32_MAX ? a->first[leaf] : a->next_of[after];
        if (j != UINT32_MAX) {
                *seq = j;
                *req = a->jobs[j].req;
        }
        return j;
}

static void array_free(array_source *a) {
        if (!a)
                return;
        free(a->first);
        free(a->next_of);
        free(a->npend);
        free(a->pend_sum);
        free(a);
}

/* The lists of the n jobs of pending over fo's m nodes. Returns them, or NULL. */
static array_source *array_lists(const fairorder_job *pending, size_t n, size_t m) {
        array_source *a = malloc(sizeof(*a));
        if (!a)
                return NULL;
        *a = (array_source){ .jobs = pending,
                             .first = malloc(m * sizeof(*a->first)),
                             .next_of = malloc((n + 1) * sizeof(*a->next_of)),
                             .npend = calloc(m, sizeof(*a->npend)),
                             .pend_sum = calloc(m, sizeof(*a->pend_sum)) };
        if (!a->first || !a->next_of || !a->npend || !a->pend_sum) {
                array_free(a);
                return NULL;
        }
        for (size_t i = 0; i < m; i++)
                a->first[i] = UINT32_MAX;
        for (size_t j = n; j-- > 0;) { /* backwards, so that each list is in submission order */
                uint32_t d = pending[j].dept;
                a->npend[d]++;
                a->pend_sum[d] = res_add(a->pend_sum[d], pending[j].req);
                if (pending[j].waits)
                        continue; /* on no list: it takes no turn */
                a->next_of[j] = a->first[d];
                a->first[d] = (uint32_t)j;
        }
        return a;
}

/* walk_start over the n jobs of pending, their lists made for the walk. */
static int walk_array(const fairorder *fo, res_t capacity, const fairorder_job *pending, size_t n, bool all,
                      fairorder_walk **out) {
        array_source *a = array_lists(pending, n, fo->n);
        *out = NULL;
        if (!a)
                return -ENOMEM;
        int r = walk_start(fo, capacity, &(fairorder_source){ a->npend, a->pend_sum, array_next, a }, all, out);
        if (r < 0)
                array_free(a);
        else
                (*out)->owned = a;
        return r;
}

int fairorder_walk_jobs(const fairorder *fo, res_t capacity, const fairorder_job *pending, size_t n,
                        fairorder_walk **out) {
        return walk_array(fo, capacity, pending, n, false, out);
}

int fairorder_rank(const fairorder *fo, res_t capacity, const fairorder_job *pending, size_t n, uint32_t *order,
                   size_t *nkept, fairorder_report *rep) {
        fairorder_walk *w = NULL;
        fairorder_pick *picks = malloc((n + 1) * sizeof(*picks));
        int r = picks ? 0 : -ENOMEM;
        if (r == 0 && (n > 0 || rep))
                r = walk_array(fo, capacity, pending, n, rep != NULL, &w);
        *nkept = n;
        if (w) {
                *nkept = fairorder_walk_next(w, picks, n);
                for (size_t i = 0; i < *nkept; i++)
                        order[i] = picks[i].at;
                for (size_t i = 0; i < w->nheld; i++)
                        order[*nkept + i] = w->held[i].at;
                for (size_t i = 0, at = *nkept + w->nheld; i < n; i++)
                        if (pending[i].waits)
                                order[at++] = (uint32_t)i;
        }
        if (rep) {
                memset(rep->nodes, 0, fo->n * sizeof(*rep->nodes));
                rep->next = *nkept > 0 ? (long)order[0] : -1;
                rep->next_dept = *nkept > 0 ? pending[order[0]].dept : 0;
        }
        if (w && w->solved && rep) {
                report(w, rep);
                r = other_entitlements(w, rep);
        }
        fairorder_walk_free(w);
        free(picks);
        if (r < 0) {
                for (size_t i = 0; i < n; i++)
                        order[i] = (uint32_t)i;
                *nkept = n;
        }
        return r;
}

void fairorder_why(const fairorder *fo, const fairorder_report *rep, char *buf, size_t len) {
        const fairorder_share *d = &rep->nodes[rep->next_dept];
        const char *name = fo->nodes[rep->next_dept].name;
        if (rep->next < 0)
                snprintf(buf, len, "%s", "");
        else if (d->entitled - d->share >= 0.005) /* what the two decimals would show as below */
                snprintf(buf, len, "%s is %.2f below its entitlement (%.2f of %.2f)", name, d->entitled - d->share,
                         d->share, d->entitled);
        else
                snprintf(buf, len, "%s holds %.2f of its %.2f entitlement, the least of the departments waiting", name,
                         d->share, d->entitled);
}
