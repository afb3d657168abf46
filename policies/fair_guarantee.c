/* fair_guarantee.c - the hierarchical share guarantee (Bhattacharya et al., SoCC 2013): what
 * each node is promised, and how far below it a node is while the promise is owed. H-DRF keeps
 * it (tests/unit/test_fair.c, the_default_keeps_every_guarantee); MCH does not always. */
#include "fair_impl.h"
#include <math.h>

/* Parents first; each node's children summed once: O(nnodes). */
void fair__guarantees(fair_state *s, const fair_problem *p) {
        s->guarantee[s->order[0]] = 1;
        for (size_t i = 0; i < s->nnodes; i++) {
                uint32_t n = s->order[i];
                double sum = 0;
                for (uint32_t k = s->kid_start[n]; k < s->kid_start[n + 1]; k++)
                        sum += s->omega[s->kids[k]];
                for (uint32_t k = s->kid_start[n]; k < s->kid_start[n + 1]; k++) {
                        uint32_t c = s->kids[k];
                        s->guarantee[c] = fmin(p->nodes[c].cap, s->guarantee[n] * s->omega[c] / sum);
                }
        }
}

double fair_guarantee(const fair_state *s, size_t node) { return s->guarantee[node]; }

/* The scope nearest above leaf that its next task does not fit, or -1. */
static int32_t nearest_block(const fair_state *s, uint32_t leaf) {
        for (int32_t n = (int32_t)leaf; n >= 0; n = s->parent[n]) {
                if (s->scope_of[n] < 0)
                        continue;
                const fair_scope *sc = &s->scopes[s->scope_of[n]];
                for (size_t r = 0; r < s->nres; r++) {
                        int64_t d = s->demand[(size_t)leaf * s->nres + r];
                        if (d > 0 && s->used[(size_t)n * s->nres + r] + d > sc->limit[r])
                                return n;
                }
        }
        return -1;
}

void fair_shortfalls(const fair_state *s, double *out) {
        for (size_t n = 0; n < s->nnodes; n++)
                out[n] = 0;
        for (uint32_t l = 0; l < s->nnodes; l++) {
                int32_t stop = fair__is_leaf(s, l) && s->tasks[l] < s->want[l] ? nearest_block(s, l) : -1;
                for (int32_t n = (int32_t)l; stop >= 0 && n >= 0; n = n == stop ? -1 : s->parent[n])
                        out[n] = 1; /* owed: held back by stop, which is n or above it */
        }
        for (size_t n = 0; n < s->nnodes; n++)
                out[n] = out[n] > 0 ? fmax(0, s->guarantee[n] - fair_dominant_share(s, n)) : 0;
}
