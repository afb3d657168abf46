/* figures.c - the simulator's summaries (see figures.h and sim.h). */
#include "figures.h"
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int compare_doubles(const void *a, const void *b) {
        double x = *(const double *)a, y = *(const double *)b;
        return (x > y) - (x < y);
}

/* RADIX_BITS-bit digits: the counts of a digit's values fit in the L1 cache. */
#define RADIX_BITS   11
#define RADIX_PASSES ((64 + RADIX_BITS - 1) / RADIX_BITS)

/* A key whose unsigned order is the order of the doubles (NaNs aside): the sign bit set on a
 * positive value, every bit flipped on a negative one. */
static uint64_t radix_key(double x) {
        uint64_t k;
        memcpy(&k, &x, sizeof(k));
        return k >> 63 ? ~k : k | 1ull << 63;
}

/* Sort v[0..n) ascending with a least-significant-digit radix sort:
 * O(n), where qsort's O(n log n) compares through a function pointer were 5% of a replay's
 * time at 600,000 jobs and grow with it. Stable, as glibc's merge sort is, so equal values keep
 * their order and the sums are the same. A digit every value shares costs no pass. Returns 0, or
 * -ENOMEM with v left as it was. */
static int radix_sort(double *v, size_t n) {
        size_t(*count)[1u << RADIX_BITS] = calloc(RADIX_PASSES, sizeof(*count));
        double *tmp = malloc(n * sizeof(*tmp));
        const uint64_t mask = (1u << RADIX_BITS) - 1;
        if (!count || !tmp) {
                free(count);
                free(tmp);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++)
                for (unsigned p = 0; p < RADIX_PASSES; p++)
                        count[p][radix_key(v[i]) >> (p * RADIX_BITS) & mask]++;
        double *from = v, *to = tmp;
        for (unsigned p = 0; p < RADIX_PASSES; p++) {
                size_t *c = count[p], shift = p * RADIX_BITS, sum = 0;
                if (c[radix_key(from[0]) >> shift & mask] == n)
                        continue;
                for (size_t d = 0; d <= mask; d++) {
                        size_t here = c[d];
                        c[d] = sum;
                        sum += here;
                }
                for (size_t i = 0; i < n; i++)
                        to[c[radix_key(from[i]) >> shift & mask]++] = from[i];
                double *was = from;
                from = to;
                to = was;
        }
        if (from != v)
                memcpy(v, from, n * sizeof(*v));
        free(count);
        free(tmp);
        return 0;
}

sim_stats sim_summarize(double *v, size_t n) {
        sim_stats st = { 0 };
        if (n == 0)
                return st;
        if (radix_sort(v, n) < 0) /* in place, slower: a summary has no error to return */
                qsort(v, n, sizeof(*v), compare_doubles);
        double sum = 0;
        for (size_t i = 0; i < n; i++)
                sum += v[i];
        st.mean = sum / (double)n;
        st.p50 = v[(n - 1) / 2];
        st.p95 = v[(size_t)((double)(n - 1) * 0.95)];
        st.p99 = v[(size_t)((double)(n - 1) * 0.99)];
        st.max = v[n - 1];
        return st;
}

/* Summarize values[] per department: group them by department into buf (a counting sort by the
 * starts in first[], which it leaves as the ends) and summarize each group. */
static void summarize_by_dept(const sim_job_values *v, const double *values, size_t *first, size_t ndepts, double *buf,
                              sim_stats *out) {
        size_t *next = first + ndepts; /* scratch: where the next value of each department goes */
        for (size_t d = 0; d < ndepts; d++)
                next[d] = first[d];
        for (size_t i = 0; i < v->n; i++)
                buf[next[v->dept[i]]++] = values[i];
        for (size_t d = 0; d < ndepts; d++)
                out[d] = sim_summarize(buf + first[d], next[d] - first[d]);
}

int sim_dept_figures(const sim_job_values *v, const size_t *refused, const char *const *names, size_t ndepts,
                     sim_result *out) {
        sim_dept *d = calloc(ndepts + 1, sizeof(*d));
        size_t *first = calloc(2 * ndepts + 1, sizeof(*first));
        sim_stats *stats = calloc(ndepts + 1, sizeof(*stats));
        double *buf = malloc((v->n + 1) * sizeof(*buf)), total = 0;
        int r = d && first && stats && buf ? 0 : -ENOMEM;
        for (size_t i = 0; r == 0 && i < v->n; i++) {
                d[v->dept[i]].jobs++;
                d[v->dept[i]].cpu_seconds += v->cpu_seconds[i];
                total += v->cpu_seconds[i];
        }
        for (size_t k = 1; r == 0 && k < ndepts; k++)
                first[k] = first[k - 1] + d[k - 1].jobs;
        if (r == 0) {
                summarize_by_dept(v, v->wait, first, ndepts, buf, stats);
                for (size_t k = 0; k < ndepts; k++)
                        d[k].wait = stats[k];
                summarize_by_dept(v, v->response, first, ndepts, buf, stats);
                out->ndepts = 0;
                for (size_t k = 0; k < ndepts; k++) {
                        d[k].name = names[k];
                        d[k].response = stats[k];
                        d[k].refused = refused[k];
                        d[k].jobs += refused[k];
                        d[k].cpu_share = total > 0 ? d[k].cpu_seconds / total : 0;
                        if (d[k].jobs > 0)
                                d[out->ndepts++] = d[k];
                }
                out->depts = d;
                d = NULL;
        }
        free(d);
        free(first);
        free(stats);
        free(buf);
        return r;
}

void sim_dept_gpu_figures(const double *gpu_seconds, const char *const *names, size_t ndepts, sim_result *out) {
        double total = 0;
        for (size_t k = 0; k < ndepts; k++)
                total += gpu_seconds[k];
        /* out->depts keeps names' order, less the departments without a job */
        for (size_t k = 0, i = 0; k < ndepts && i < out->ndepts; k++) {
                if (out->depts[i].name != names[k])
                        continue;
                out->depts[i].gpu_seconds = gpu_seconds[k];
                out->depts[i].gpu_share = total > 0 ? gpu_seconds[k] / total : 0;
                i++;
        }
}
