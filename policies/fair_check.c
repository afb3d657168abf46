/* fair_check.c - the algorithms' names, and what a fair_problem must satisfy before a state is
 * built on it: a tree (one root, every node below it), weights, caps and demands in range. */
#include "fair.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const algo_names[_FAIR_ALGO_MAX] = {
        [FAIR_DRF] = "drf", [FAIR_WDRF] = "wdrf", [FAIR_HDRF] = "hdrf",
        [FAIR_MCH] = "mch", [FAIR_C_CH] = "c-ch", [FAIR_M_CH] = "m-ch",
};

static const char *const res_names[FAIR_RES_MAX] = { "cpu", "mem", "gpus", "resource 4" };

const char *fair_algo_name(fair_algo a) { return a >= 0 && a < _FAIR_ALGO_MAX ? algo_names[a] : "?"; }

int fair_algo_from_name(const char *name, fair_algo *out) {
        for (int a = 0; a < _FAIR_ALGO_MAX; a++)
                if (strcmp(name, algo_names[a]) == 0) {
                        *out = (fair_algo)a;
                        return 0;
                }
        return -EINVAL;
}

/* "node <name>: <fmt>" into why; returns -EINVAL. */
__attribute__((format(printf, 5, 6))) static int node_error(const fair_problem *p, size_t i, char *why, size_t len,
                                                            const char *fmt, ...) {
        char what[256];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(what, sizeof(what), fmt, ap);
        va_end(ap);
        if (p->nodes[i].name)
                snprintf(why, len, "node %s: %s", p->nodes[i].name, what);
        else
                snprintf(why, len, "node #%zu: %s", i, what);
        return -EINVAL;
}

static int check_sizes(const fair_problem *p, fair_algo a, char *why, size_t len) {
        if (a < 0 || a >= _FAIR_ALGO_MAX)
                return snprintf(why, len, "unknown algorithm"), -EINVAL;
        if (p->nres < 1 || p->nres > FAIR_RES_MAX || (a == FAIR_M_CH && p->nres <= FAIR_MEM))
                return snprintf(why, len, "needs 1 to %d resources (m-ch: memory too)", FAIR_RES_MAX), -EINVAL;
        for (size_t r = 0; r < p->nres; r++)
                if (p->capacity[r] < 1 || p->capacity[r] > FAIR_AMOUNT_MAX)
                        return snprintf(why, len, "capacity of %s: must be from 1 to 2^60", res_names[r]), -EINVAL;
        if (p->nnodes < 1 || p->nnodes > FAIR_NODES_MAX)
                return snprintf(why, len, "needs 1 to %d nodes", FAIR_NODES_MAX), -EINVAL;
        return 0;
}

/* Parents in range, exactly one root; has_kids[i] set for every parent. */
static int check_parents(const fair_problem *p, bool *has_kids, size_t *root, char *why, size_t len) {
        *root = p->nnodes;
        for (size_t i = 0; i < p->nnodes; i++) {
                int32_t up = p->nodes[i].parent;
                if (up == -1 && *root < p->nnodes)
                        return node_error(p, i, why, len, "a second root (no parent)");
                if (up == -1)
                        *root = i;
                else if (up < 0 || (size_t)up >= p->nnodes || (size_t)up == i)
                        return node_error(p, i, why, len, "parent %d is not another node", (int)up);
                else
                        has_kids[up] = true;
        }
        if (*root == p->nnodes)
                return snprintf(why, len, "no root: every node has a parent, so they form a cycle"), -EINVAL;
        return 0;
}

/* Every node reaches the root by its parents. state: 0 unseen, 1 on the walk, 2 below the root.
 * Each node is walked once: O(nnodes). */
static int check_cycles(const fair_problem *p, size_t root, uint8_t *state, char *why, size_t len) {
        state[root] = 2;
        for (size_t i = 0; i < p->nnodes; i++) {
                size_t n = i;
                while (state[n] == 0) {
                        state[n] = 1;
                        n = (size_t)p->nodes[n].parent;
                }
                if (state[n] == 1)
                        return node_error(p, n, why, len, "in a cycle of parents");
                for (n = i; state[n] == 1; n = (size_t)p->nodes[n].parent)
                        state[n] = 2;
        }
        return 0;
}

static int check_leaf(const fair_problem *p, size_t i, char *why, size_t len) {
        const fair_node *n = &p->nodes[i];
        bool any = false;
        if (n->tasks < 0 || n->tasks > FAIR_TASKS_MAX)
                return node_error(p, i, why, len, "tasks must be from 0 to 2^40");
        for (size_t r = 0; r < p->nres; r++) {
                if (n->demand[r] < 0)
                        return node_error(p, i, why, len, "negative demand of %s", res_names[r]);
                if (n->demand[r] > p->capacity[r])
                        return node_error(p, i, why, len, "a task needs more %s than the cluster has", res_names[r]);
                any |= n->demand[r] > 0;
        }
        if (!any && n->tasks > 0)
                return node_error(p, i, why, len, "its tasks demand nothing");
        return 0;
}

static int check_nodes(const fair_problem *p, const bool *has_kids, char *why, size_t len) {
        for (size_t i = 0; i < p->nnodes; i++) {
                const fair_node *n = &p->nodes[i];
                if (!(n->weight > 0) || !isfinite(n->weight))
                        return node_error(p, i, why, len, "weight must be a positive number");
                if (!(n->cap > 0 && n->cap <= 1))
                        return node_error(p, i, why, len, "cap must be a fraction in (0, 1]");
                if (!has_kids[i] && check_leaf(p, i, why, len) < 0)
                        return -EINVAL;
        }
        return 0;
}

int fair_check(const fair_problem *p, fair_algo a, char *why, size_t whylen) {
        int r = check_sizes(p, a, why, whylen);
        if (r < 0)
                return r;
        bool *has_kids = calloc(p->nnodes, sizeof(*has_kids));
        uint8_t *state = calloc(p->nnodes, sizeof(*state));
        size_t root;
        if (!has_kids || !state)
                r = -ENOMEM;
        if (r == 0)
                r = check_parents(p, has_kids, &root, why, whylen);
        if (r == 0)
                r = check_cycles(p, root, state, why, whylen);
        if (r == 0)
                r = check_nodes(p, has_kids, why, whylen);
        free(has_kids);
        free(state);
        return r;
}
