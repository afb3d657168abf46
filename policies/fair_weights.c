/* fair_weights.c - the weight each flat algorithm gives a leaf: 1 (DRF), its own (WDRF, H-DRF,
 * which uses the tree instead), the collapsed hierarchy's (C-CH, M-CH), or MCH's.
 *
 * MCH (You, Wang, Xu, Luo, Chen and Li, "Low complexity hierarchical scheduling for diverse
 * datacenter jobs", section III-A). A leaf's normalised demand is s = d / (c mu),
 * mu = max_j d_j / c_j, so its largest entry is 1. An internal node's demand is the sum of its
 * active children's (eq. 2; we weight each child by its weight, which the paper, with all
 * weights 1, does not need), and its mu the largest entry of that sum: when the children grow
 * their dominant shares together, mu is how fast the node's own grows. So a child's dominant
 * share is its weight / mu of its parent's; down a path that is the paper's
 *   w_i = prod over ancestors a below the root of 1 / mu_a           (full-type jobs)
 * and w_i = 1 for a job that demands none of the first saturated resource k' (partial-type,
 * sub-case 1), the full-type weight for one that does (sub-case 2). The paper does not say how
 * to find k'; we take the resource the root consumes fastest in that joint growth, the largest
 * entry of the root's summed demand (ties: every tied resource counts as k'). A job of two or
 * more but not all resources (which the paper leaves out) is treated by the same rule: the
 * full-type weight when it needs k', else its own weight. O(nnodes x nres). */
#include "fair_impl.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>

/* Resources within this relative distance of the fastest count as saturating with it. */
#define TIE 1e-9

/* active[n]: n's subtree holds a leaf that wants tasks. The paper's C(i) is the active children. */
static void mark_active(const fair_state *s, bool *active) {
        for (size_t i = s->nnodes; i-- > 0;) {
                uint32_t n = s->order[i];
                if (fair__is_leaf(s, n))
                        active[n] = s->want[n] > 0;
                if (active[n] && s->parent[n] >= 0)
                        active[s->parent[n]] = true;
        }
}

/* Bottom up: each active node's normalised demand norm (nres per node) and its mu. */
static void normalise(const fair_state *s, const bool *active, double *norm, double *mu) {
        size_t m = s->nres;
        for (size_t i = s->nnodes; i-- > 0;) {
                uint32_t n = s->order[i];
                double *v = &norm[(size_t)n * m];
                for (uint32_t k = s->kid_start[n]; k < s->kid_start[n + 1]; k++)
                        for (size_t r = 0; r < m && active[s->kids[k]]; r++)
                                v[r] += s->omega[s->kids[k]] * norm[(size_t)s->kids[k] * m + r];
                for (size_t r = 0; r < m && fair__is_leaf(s, n); r++)
                        v[r] = (double)s->demand[(size_t)n * m + r] / (double)s->capacity[r];
                mu[n] = 0;
                for (size_t r = 0; r < m; r++)
                        mu[n] = fmax(mu[n], v[r]);
                for (size_t r = 0; r < m && active[n]; r++)
                        v[r] /= mu[n];
        }
}

/* k' from the root's normalised demand: saturates[r] for every resource tied for the fastest;
 * returns the first of them. */
static int first_saturated(const fair_state *s, const double *root_norm, bool *saturates) {
        double fastest = 0;
        int first = -1;
        for (size_t r = 0; r < s->nres; r++)
                fastest = fmax(fastest, root_norm[r]);
        for (size_t r = 0; r < s->nres; r++) {
                saturates[r] = fastest > 0 && root_norm[r] >= fastest * (1 - TIE);
                if (saturates[r] && first < 0)
                        first = (int)r;
        }
        return first;
}

/* Top down: w[n] = w[parent] x omega[n] / per[parent], w[root] = 1; the root's own per divides
 * its children only when at_root (MCH leaves it out, as the paper does: a constant factor). */
static void path_product(const fair_state *s, const double *per, bool at_root, double *w) {
        uint32_t root = s->order[0];
        w[root] = 1;
        for (size_t i = 1; i < s->nnodes; i++) {
                uint32_t n = s->order[i];
                int32_t up = s->parent[n];
                double div = per[up] > 0 && ((uint32_t)up != root || at_root) ? per[up] : 1;
                w[n] = w[up] * s->omega[n] / div;
        }
}

static bool needs_any(const fair_state *s, uint32_t leaf, const bool *which) {
        for (size_t r = 0; r < s->nres; r++)
                if (which[r] && s->demand[(size_t)leaf * s->nres + r] > 0)
                        return true;
        return false;
}

static void mch(fair_state *s, const bool *active, double *norm, double *mu, double *w) {
        bool saturates[FAIR_RES_MAX];
        normalise(s, active, norm, mu);
        s->first_saturated = first_saturated(s, &norm[(size_t)s->order[0] * s->nres], saturates);
        path_product(s, mu, false, w);
        for (uint32_t n = 0; n < s->nnodes; n++)
                s->weight[n] = needs_any(s, n, saturates) ? w[n] : s->omega[n];
}

/* Collapsed hierarchy: a child's fraction of its parent is its weight over its active
 * siblings' (the single-resource CH of Chandra and Shenoy), a leaf's weight the product of the
 * fractions on its path: its share of the cluster. */
static void collapsed(fair_state *s, const bool *active, double *sibling_sum) {
        for (uint32_t n = 0; n < s->nnodes; n++)
                if (active[n] && s->parent[n] >= 0)
                        sibling_sum[s->parent[n]] += s->omega[n];
        path_product(s, sibling_sum, true, s->weight);
}

int fair__weights(fair_state *s) {
        bool *active = calloc(s->nnodes, sizeof(*active));
        double *norm = calloc(s->nnodes * s->nres, sizeof(*norm));
        double *mu = calloc(s->nnodes, sizeof(*mu)), *w = calloc(s->nnodes, sizeof(*w));
        int r = active && norm && mu && w ? 0 : -ENOMEM;
        if (r == 0) {
                mark_active(s, active);
                if (s->algo == FAIR_MCH)
                        mch(s, active, norm, mu, w);
                else if (s->algo == FAIR_C_CH || s->algo == FAIR_M_CH)
                        collapsed(s, active, mu);
                for (uint32_t n = 0; n < s->nnodes; n++)
                        if (s->algo == FAIR_DRF || s->algo == FAIR_WDRF || s->algo == FAIR_HDRF)
                                s->weight[n] = s->algo == FAIR_DRF ? 1 : s->omega[n];
                for (uint32_t n = 0; n < s->nnodes; n++)
                        if (!fair__is_leaf(s, n) || !active[n])
                                s->weight[n] = 0;
        }
        free(active);
        free(norm);
        free(mu);
        free(w);
        return r;
}
