/* kept.c - the waiting jobs a dispatcher keeps between passes (see kept.h). */
#include "kept.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

int sched_kept_push(sched_kept *k, const sched_job *job, size_t tag) {
        if (sched_grow(&k->v, &k->cap, k->n + 1, sizeof(*k->v)) < 0)
                return -ENOMEM;
        size_t at = k->n; /* behind the last job with a smaller id (dropped ones have id 0) */
        while (job->id < k->top && at > 0 && (k->v[at - 1].job.id == 0 || k->v[at - 1].job.id > job->id))
                at--;
        if (job->id > k->top)
                k->top = job->id;
        memmove(&k->v[at + 1], &k->v[at], (k->n - at) * sizeof(*k->v));
        k->v[at] = (sched_kept_job){ .job = *job, .tag = tag };
        k->n++;
        return 0;
}

void sched_kept_clear(sched_kept *k) {
        k->n = k->ndropped = 0;
        k->top = 0;
}

void sched_kept_mark(const sched_kept *k, const sched_pass *p) {
        for (size_t i = 0; i < k->n; i++)
                sched_pass_keep(p, k->v[i].job.id);
}

int sched_kept_whole(sched_kept *k, const sched_pass *p, uint64_t seen) {
        sched_kept_mark(k, p);
        if (p->run)
                return 0;
        sched_kept_clear(k);
        for (size_t j = 0; j < p->njobs; j++)
                if (p->jobs[j].id <= seen && sched_pass_kept(p, j) && sched_kept_push(k, &p->jobs[j], 0) < 0)
                        return -ENOMEM;
        return 0;
}

void sched_kept_tidy(sched_kept *k) {
        if (k->ndropped * 2 <= k->n)
                return;
        size_t kept = 0;
        for (size_t i = 0; i < k->n; i++)
                if (k->v[i].job.id)
                        k->v[kept++] = k->v[i];
        k->n = kept;
        k->ndropped = 0;
}

long sched_kept_take(sched_kept *k, size_t i, sched_pass *p) {
        long j = sched_pass_lookup(p, k->v[i].job.id);
        if (j < -1)
                return j;
        k->v[i].job.id = 0;
        k->ndropped++;
        return j;
}

void sched_kept_free(sched_kept *k) {
        free(k->v);
        *k = (sched_kept){ 0 };
}
