/* coloc_fill.c - the algorithms that fill machines one after another up to a threshold:
 * FillGreedy (Sec. 4.2), GreedyForTwoTypes (Sec. 6.2) and FillRebalance (Sec. 7.1.2).
 *
 * All three take the clusters of compatible types in order (coloc_clusters), each cluster's jobs
 * by decreasing load (the paper sorts them so for FillGreedy in its experiments, 7.1.2; we do the
 * same for the other two, which it calls modifications of FillGreedy), and put jobs on the
 * current machine until the next one would take its load above the threshold L; the first job
 * of a cluster always opens a new machine, and an empty machine takes any job. */
#include "coloc_internal.h"
#include <errno.h>
#include <math.h>
#include <stdlib.h>

typedef struct fill {
        const coloc_instance *in;
        uint32_t *key;  /* job -> its type's cluster */
        uint32_t *jobs; /* by cluster, then decreasing load */
        double hi;      /* a threshold above any load or cost a schedule can have */
        coloc__machines s;
} fill;

static void fill_free(fill *f) {
        free(f->key);
        free(f->jobs);
        coloc__machines_free(&f->s);
}

static int fill_init(fill *f, const coloc_instance *in) {
        size_t T = in->ntypes;
        uint32_t *cluster_of = malloc(T * sizeof(*cluster_of));
        double w = 0, amax = 1;
        *f = (fill){ .in = in, .key = malloc((in->njobs + 1) * sizeof(*f->key)) };
        long K = cluster_of && f->key ? coloc_clusters(in, cluster_of) : -ENOMEM;
        for (size_t j = 0; K >= 0 && j < in->njobs; j++) {
                f->key[j] = cluster_of[in->type[j]];
                w += in->load[j];
        }
        for (size_t a = 0; a < T * T; a++)
                amax = fmax(amax, in->alpha[a]);
        f->hi = 2 * w * amax; /* no cost exceeds W * alpha_max, no load W; 2x: room for rounding */
        free(cluster_of);
        if (K < 0 || !(f->jobs = coloc__sorted_jobs(in, f->key)) ||
            coloc__machines_init(&f->s, in, in->nmachines) < 0) {
                fill_free(f);
                return -ENOMEM;
        }
        return 0;
}

/* Fill up to L. Returns how many of f->jobs found a machine before the m-th machine was full;
 * *spill gets the machine where the paper's GreedyForTwoTypes sends the rest: the last machine
 * of the cluster before the one that ran out (of the same cluster if it is the first). */
static size_t fill_to(const fill *f, double L, uint32_t *machine_of, uint32_t *spill) {
        size_t n = f->in->njobs, m = f->in->nmachines;
        uint32_t k = 0, prev_last = UINT32_MAX;
        double load = 0;
        for (size_t i = 0; i < n; i++) {
                uint32_t j = f->jobs[i];
                double p = f->in->load[j];
                bool new_cluster = i > 0 && f->key[j] != f->key[f->jobs[i - 1]];
                if (new_cluster)
                        prev_last = k;
                if (i > 0 && (new_cluster || load + p > L)) {
                        if (k + 1 == m) {
                                *spill = prev_last == UINT32_MAX ? k : prev_last;
                                return i;
                        }
                        k++;
                        load = 0;
                }
                machine_of[j] = k;
                load += p;
        }
        return n;
}

/* One attempt at threshold L: 1 when every job found a machine, 0 when not, or -errno. */
typedef int (*fill_try)(fill *f, double L, uint32_t *machine_of);

/* The smallest threshold in (0, hi] at which try succeeds, by bisection to a relative 1e-9,
 * and the schedule at it in machine_of. For FillGreedy success is monotone in L (a larger
 * threshold never opens more machines: next-fit's state is lexicographically no further along
 * with more room), so this finds the smallest. Returns 0, -ENOSPC when hi fails, or -errno. */
static int smallest_threshold(fill *f, fill_try try, uint32_t *machine_of) {
        double lo = 0, hi = f->hi;
        int r = try(f, hi, machine_of);
        while (r > 0 && hi - lo > 1e-9 * hi) {
                double mid = lo + (hi - lo) / 2;
                if ((r = try(f, mid, machine_of)) >= 0) {
                        hi = r ? mid : hi;
                        lo = r ? lo : mid;
                        r = 1;
                }
        }
        if (r > 0)
                r = try(f, hi, machine_of);
        return r > 0 ? 0 : r == 0 ? -ENOSPC : r;
}

/* Set up, search the smallest threshold with try, tear down. */
static int fill_search(const coloc_instance *in, fill_try try, uint32_t *machine_of) {
        fill f;
        int r = fill_init(&f, in);
        if (r == 0)
                r = smallest_threshold(&f, try, machine_of);
        fill_free(&f);
        return r;
}

static int fill_greedy_try(fill *f, double L, uint32_t *machine_of) {
        uint32_t spill;
        return fill_to(f, L, machine_of, &spill) == f->in->njobs;
}

/* FillGreedy: the paper fills to Lmax = max(2L, L + p_max), L = W / (m - T), and proves that
 * m machines suffice when m > T (its text says m "smaller than or equal to" the number of
 * clusters, which the proof contradicts: it needs m - T > 0). In its experiments it searches
 * the smallest threshold that still fits in m machines instead, which is what runs here; since
 * Lmax fits, the result is no worse than the proof's. */
int coloc__fill_greedy(const coloc_instance *in, uint32_t *machine_of) {
        return fill_search(in, fill_greedy_try, machine_of);
}

/* GreedyForTwoTypes (Sec. 6.2), stated for two types: fill to W/m + max(W/m, p_max); when a
 * job would open machine m + 1, it and every later job go to the last machine of type 1. With
 * more types (the paper runs it on 3 and 4 in Sec. 7) we fill cluster by cluster, as
 * FillGreedy, and send the rest to the last machine of the cluster before the one that ran out:
 * for two incompatible types that is exactly the paper's rule. */
int coloc__greedy_for_2_types(const coloc_instance *in, uint32_t *machine_of) {
        fill f;
        int r = fill_init(&f, in);
        double w = 0, pmax = 0;
        for (size_t j = 0; r == 0 && j < in->njobs; j++) {
                w += in->load[j];
                pmax = fmax(pmax, in->load[j]);
        }
        if (r == 0) {
                double L = w / (double)in->nmachines + fmax(w / (double)in->nmachines, pmax);
                uint32_t spill = 0;
                for (size_t i = fill_to(&f, L, machine_of, &spill); i < in->njobs; i++)
                        machine_of[f.jobs[i]] = spill;
        }
        fill_free(&f);
        return r;
}

/* The machine where job j's arrival leaves the lowest machine cost (the lowest index on a
 * tie), or -1 when that cost exceeds L everywhere. */
static long cheapest_fit(const coloc__machines *s, uint32_t j, double L) {
        long best = -1;
        double best_cost = L;
        for (size_t k = 0; k < s->m; k++) {
                double c = coloc__machine_cost_with(s, k, j);
                if (c < best_cost || (best < 0 && c <= L)) {
                        best = (long)k;
                        best_cost = c;
                }
        }
        return best;
}

/* FillRebalance (Sec. 7.1.2) fills as above; the jobs left when the machines run out go, one
 * by one, where they "fit", tested on the cost rather than the load. The paper does not say
 * which machine among those that fit; we take the one with the lowest cost after the job,
 * which spreads the rest best, so that a job fits when that cost is at most L. */
static int fill_rebalance_try(fill *f, double L, uint32_t *machine_of) {
        uint32_t spill;
        size_t placed = fill_to(f, L, machine_of, &spill);
        coloc__machines_clear(&f->s);
        for (size_t i = 0; placed < f->in->njobs && i < placed; i++)
                coloc__machines_add(&f->s, machine_of[f->jobs[i]], f->jobs[i]);
        for (size_t i = placed; i < f->in->njobs; i++) {
                long k = cheapest_fit(&f->s, f->jobs[i], L);
                if (k < 0)
                        return 0;
                machine_of[f->jobs[i]] = (uint32_t)k;
                coloc__machines_add(&f->s, (size_t)k, f->jobs[i]);
        }
        return 1;
}

/* Bisection as for FillGreedy, though success need not be monotone in L here: the result is
 * the smallest threshold bisection meets that works, and any threshold as high as every
 * possible cost works. */
int coloc__fill_rebalance(const coloc_instance *in, uint32_t *machine_of) {
        return fill_search(in, fill_rebalance_try, machine_of);
}
