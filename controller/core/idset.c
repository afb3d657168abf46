/* idset.c - jobs ordered by id, with stale entries (see idset.h). */
#include "idset.h"
#include "idrank.h"
#include "dispatch.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* id_rank's key: the id of the job v[i] points to. */
static uint64_t job_ptr_id(const void *v, size_t i) { return ((job *const *)v)[i]->id; }

size_t ctl_jobs_rank(job *const *v, size_t lo, size_t hi, uint64_t id) { return id_rank(v, lo, hi, id, job_ptr_id); }

bool ctl_idset_member(const ctl_idset *s, const job *j) {
        return s->state < 0 ? !job_state_is_terminal(j->state) : (int)j->state == s->state;
}

size_t ctl_idset_rank(const ctl_idset *s, uint64_t id) { return ctl_jobs_rank(s->v, 0, s->n, id); }

int ctl_idset_reserve(ctl_idset *s, size_t n) { return sched_grow(&s->v, &s->cap, s->n + n, sizeof(*s->v)); }

int ctl_idset_join_at(ctl_idset *s, job *j, size_t *at) {
        size_t i = *at = s->n > 0 && s->v[s->n - 1]->id < j->id ? s->n : ctl_idset_rank(s, j->id);
        if (i < s->n && s->v[i] == j) { /* its stale entry: live again */
                if (s->nstale > 0)
                        s->nstale--;
                return 0;
        }
        if (ctl_idset_reserve(s, 1) < 0)
                return -ENOMEM;
        memmove(&s->v[i + 1], &s->v[i], (s->n - i) * sizeof(*s->v));
        s->v[i] = j;
        s->n++;
        return 0;
}

int ctl_idset_join(ctl_idset *s, job *j) {
        size_t at;
        return ctl_idset_join_at(s, j, &at);
}

void ctl_idset_compact(ctl_idset *s) {
        size_t kept = 0;
        for (size_t i = 0; i < s->n; i++)
                if (ctl_idset_member(s, s->v[i]))
                        s->v[kept++] = s->v[i];
        s->n = kept;
        s->nstale = 0;
}

void ctl_idset_leave(ctl_idset *s) {
        if (++s->nstale * 2 > s->n)
                ctl_idset_compact(s);
}

void ctl_idset_free(ctl_idset *s) {
        free(s->v);
        *s = (ctl_idset){ 0 };
}
