/* backfill.c - EASY backfilling with time limits (see backfill.h). */
#include "backfill.h"
#include "dispatch.h"
#include <errno.h>
#include <stdlib.h>
#include <string.h>

/* The reservation a pass holds once it found its first job that fits nowhere. */
typedef struct easy_resv {
        size_t machine; /* position */
        int64_t shadow; /* when the reserved job can start there */
        res_t extra;    /* what stays free there beside it at that time (may be negative) */
        bool hidden;    /* the machine is hidden from the chooser for the current job */
        int saved_up;   /* its up while hidden */
} easy_resv;

/* Requests that fitted nowhere earlier in the pass: free resources only shrink during a pass, so
 * a request at least as large fits nowhere either, and is not searched for again (a long queue
 * of a few job shapes behind a full cluster costs a comparison per job, not a search). Those
 * seen with the reserved machine hidden hold only while it is hidden. */
#define FAILS_MAX 8

typedef struct fails {
        res_t v[FAILS_MAX];
        size_t n;
} fails;

static bool known_to_fail(const fails *f, res_t req) {
        for (size_t i = 0; i < f->n; i++)
                if (res_fits(f->v[i], req))
                        return true;
        return false;
}

static void note_fail(fails *f, res_t req) {
        if (f->n < FAILS_MAX)
                f->v[f->n++] = req;
}

/* The machine h picks for req, or -1; failures noted in seen (all machines shown) or in
 * seen_hidden (the reserved one hidden). */
static long choose(sched_index *ix, sched_heuristic h, res_t req, bool hidden, fails *seen, fails *seen_hidden) {
        if (known_to_fail(seen, req) || (hidden && known_to_fail(seen_hidden, req)))
                return -1;
        long m = sched_index_choose(ix, h, req);
        if (m < 0)
                note_fail(hidden ? seen_hidden : seen, req);
        return m;
}

/* When a job of that limit started now ends. */
static int64_t end_of(int64_t now, int64_t limit) {
        return limit <= 0 || limit > SCHED_FOREVER - now ? SCHED_FOREVER : now + limit;
}

/* The index's scratch array which of at least n elements of size elem, or NULL. */
enum { SCRATCH_EVENTS, SCRATCH_GROUPED, SCRATCH_FIRST };
static void *scratch(sched_index *ix, int which, size_t n, size_t elem) {
        return sched_grow(&ix->easy_scratch[which], &ix->easy_cap[which], n, elem) < 0 ? NULL : ix->easy_scratch[which];
}

static int by_end(const void *x, const void *y) {
        const sched_running *a = x, *b = y;
        return (a->end_usec > b->end_usec) - (a->end_usec < b->end_usec);
}

/* ev grouped by machine (a counting sort: O(events + machines)), each machine's jobs by end: few
 * on each, where one sort of them all would cost O(events log events). Returns 0 or -ENOMEM. */
static int group_by_machine(sched_index *ix, sched_running *ev, size_t nev) {
        size_t *first = scratch(ix, SCRATCH_FIRST, ix->n + 1, sizeof(*first));
        sched_running *v = scratch(ix, SCRATCH_GROUPED, nev + 1, sizeof(*v));
        if (!first || !v)
                return -ENOMEM;
        memset(first, 0, (ix->n + 1) * sizeof(*first));
        for (size_t i = 0; i < nev; i++)
                first[ev[i].machine + 1]++;
        for (size_t m = 0; m < ix->n; m++)
                first[m + 1] += first[m];
        for (size_t i = 0; i < nev; i++)
                v[first[ev[i].machine]++] = ev[i]; /* first[m] ends as the start of m + 1 */
        memcpy(ev, v, nev * sizeof(*ev));
        for (size_t i = 0, j; i < nev; i = j) {
                for (j = i + 1; j < nev && ev[j].machine == ev[i].machine; j++)
                        ;
                if (j - i > 1)
                        qsort(&ev[i], j - i, sizeof(*ev), by_end);
        }
        return 0;
}

/* The earliest time machine m (events[*i..] are its jobs, by end) has room for req, and what is
 * left beside req then; *i moves past m's events. SCHED_FOREVER when its jobs with limits are
 * not enough. */
static int64_t earliest_room(const sched_index *ix, size_t m, const sched_running *ev, size_t nev, size_t *i, res_t req,
                             res_t *left) {
        res_t acc = ix->machines[m].free;
        int64_t at = SCHED_FOREVER;
        for (; *i < nev && ev[*i].machine == m; (*i)++) {
                if (ev[*i].end_usec == SCHED_FOREVER || (at != SCHED_FOREVER && ev[*i].end_usec > at))
                        continue; /* never ends, or ends after the room came: skip the rest of m */
                acc = res_add(acc, ev[*i].req);
                if (at == SCHED_FOREVER && res_fits(req, acc))
                        at = ev[*i].end_usec; /* the jobs ending at the same time still add */
        }
        *left = res_sub(acc, req);
        return at;
}

/* Reserve for req: the machine and time where it fits first, from the jobs' ends (sorted here).
 * Returns 0, -ENOENT when req fits the capacity of no up machine (no reservation), or -ENOMEM. */
static int reserve(sched_index *ix, res_t req, sched_running *ev, size_t nev, easy_resv *r) {
        long forever = -1; /* the first up machine whose capacity holds req */
        for (size_t m = 0; m < ix->n && forever < 0; m++)
                if (ix->machines[m].up > 0 && res_fits(req, ix->machines[m].capacity))
                        forever = (long)m;
        if (forever < 0)
                return -ENOENT;
        if (group_by_machine(ix, ev, nev) < 0)
                return -ENOMEM;
        /* should no machine get room in time: the first that can ever hold req, and what its jobs
         * with limits leave beside it (its events below say more) */
        *r = (easy_resv){ .machine = (size_t)forever,
                          .shadow = SCHED_FOREVER,
                          .extra = res_sub(ix->machines[forever].free, req) };
        bool found = false;
        for (size_t i = 0; i < nev;) {
                size_t m = ev[i].machine;
                res_t left;
                if (ix->machines[m].up <= 0 || !res_fits(req, ix->machines[m].capacity)) {
                        for (; i < nev && ev[i].machine == m; i++)
                                ;
                        continue;
                }
                int64_t at = earliest_room(ix, m, ev, nev, &i, req, &left);
                if (m == (size_t)forever && !found)
                        r->extra = left;
                if (at < r->shadow) { /* machines come in order: the earliest wins a tie */
                        *r = (easy_resv){ .machine = m, .shadow = at, .extra = left };
                        found = true;
                }
        }
        return 0;
}

/* Hide the reserved machine from the chooser, or show it again. */
static void hide(sched_index *ix, easy_resv *r, bool hidden) {
        if (r->hidden == hidden)
                return;
        sched_machine *m = &ix->machines[r->machine];
        if (hidden) {
                r->saved_up = m->up;
                m->up = 0;
        } else
                m->up = r->saved_up;
        r->hidden = hidden;
        sched_index_update(ix, r->machine);
}

/* The events a reservation is computed from: the running jobs and those the pass placed before
 * its first job that fits nowhere (ev[0..nev)), on the machines that can hold req. A job past its
 * limit is being killed: it ends now. Returns them in *all (the index's scratch). */
static int all_events(sched_index *ix, res_t req, int64_t now, sched_running_fn running, void *arg,
                      const sched_running *ev, size_t nev, sched_running **all, size_t *nall) {
        const sched_running *run;
        size_t nrun;
        int r = running(arg, &run, &nrun);
        if (r < 0)
                return r;
        if (!(*all = scratch(ix, SCRATCH_EVENTS, nrun + nev + 1, sizeof(**all))))
                return -ENOMEM;
        *nall = 0;
        for (size_t i = 0; i < nrun + nev; i++) {
                sched_running e = i < nrun ? run[i] : ev[i - nrun];
                if (e.machine >= ix->n || !res_fits(req, ix->machines[e.machine].capacity))
                        continue; /* that machine never holds req */
                e.end_usec = e.end_usec > now ? e.end_usec : now;
                (*all)[(*nall)++] = e;
        }
        return 0;
}

/* Compute the reservation of job head: *r and *resv. Returns 0 or -errno. */
static int make_reservation(sched_index *ix, const sched_job *head, int64_t now, sched_running_fn running, void *arg,
                            const sched_running *ev, size_t nev, easy_resv *r, sched_reservation *resv) {
        sched_running *all;
        size_t nall;
        int e = all_events(ix, head->req, now, running, arg, ev, nev, &all, &nall);
        if (e < 0)
                return e;
        e = reserve(ix, head->req, all, nall, r);
        if (e == 0)
                *resv = (sched_reservation){ head->id, ix->machines[r->machine].index, r->shadow };
        else
                *r = (easy_resv){ .shadow = SCHED_FOREVER, .machine = SIZE_MAX };
        return e == -ENOMEM ? e : 0;
}

/* Whether no job of the list can be placed now: nothing at least its floor fits any machine
 * (the reserved one shown). Known without a search while a failure as small is remembered. */
static bool nothing_fits(sched_index *ix, easy_resv *r, res_t floor, fails *seen) {
        if (known_to_fail(seen, floor))
                return true;
        if (r->machine != SIZE_MAX)
                hide(ix, r, false);
        return sched_index_choose(ix, SCHED_FIRST_FIT, floor) < 0;
}

long sched_easy_place_from(sched_index *ix, sched_heuristic h, const sched_job_list *list, sched_running_fn running,
                           void *arg, bool want_start, int64_t now, sched_assignment *out, sched_reservation *resv) {
        *resv = (sched_reservation){ 0 };
        if (h >= SCHED_MAX_JOBS)
                return -EINVAL;
        /* the jobs this pass places before its first job that fits nowhere */
        sched_running *ev = malloc((list->max + 1) * sizeof(*ev));
        if (!ev)
                return -ENOMEM;
        size_t nev = 0, placed = 0;
        easy_resv r = { .machine = SIZE_MAX };
        sched_job head = { 0 };                   /* the first job that fits nowhere but could fit some machine */
        bool have_head = false, computed = false; /* r holds head's reservation (machine SIZE_MAX: none) */
        long err = 0;
        fails seen = { .n = 0 }, seen_hidden = { .n = 0 };
        sched_job job;
        for (size_t j = 0; j < list->max && err == 0; j++) {
                if (have_head && nothing_fits(ix, &r, list->floor, &seen))
                        break; /* the jobs left wait: the reservation is head's already */
                if (list->next(list->arg, &job) <= 0)
                        break;
                res_t req = job.req;
                bool before = false; /* it ends by the reserved start */
                if (have_head && !computed) {
                        if (choose(ix, h, req, false, &seen, &seen_hidden) < 0)
                                continue; /* fits nowhere now: no need to know the reservation yet */
                        err = make_reservation(ix, &head, now, running, arg, ev, nev, &r, resv);
                        computed = true;
                        if (err < 0)
                                break;
                }
                if (computed && r.machine != SIZE_MAX) {
                        before = job.limit_usec > 0 && job.limit_usec <= r.shadow - now;
                        hide(ix, &r, !before && !res_fits(req, r.extra));
                }
                long m = choose(ix, h, req, r.hidden, &seen, &seen_hidden);
                if (m < 0) {
                        if (!have_head && sched_can_ever_fit(ix->machines, ix->n, req)) {
                                head = job;
                                have_head = true;
                        }
                        continue;
                }
                ix->machines[m].free = res_sub(ix->machines[m].free, req);
                sched_index_update(ix, (size_t)m);
                out[placed++] = (sched_assignment){ .job_id = job.id, .machine = ix->machines[m].index };
                if (!have_head)
                        ev[nev++] = (sched_running){ (size_t)m, req, end_of(now, job.limit_usec) };
                else if ((size_t)m == r.machine && !before)
                        r.extra = res_sub(r.extra, req); /* it runs beside the reserved job */
        }
        if (computed && r.machine != SIZE_MAX)
                hide(ix, &r, false);
        if (err == 0 && have_head && !computed && want_start)
                err = make_reservation(ix, &head, now, running, arg, ev, nev, &r, resv);
        free(ev);
        return err < 0 ? err : (long)placed;
}

long sched_easy_place(sched_index *ix, sched_heuristic h, const sched_job *jobs, size_t njobs, sched_running_fn running,
                      void *arg, bool want_start, int64_t now, sched_assignment *out, sched_reservation *resv) {
        sched_job_array a = { jobs, njobs, 0 };
        sched_job_list list = { sched_job_array_next, &a, njobs, { 0 } };
        return sched_easy_place_from(ix, h, &list, running, arg, want_start, now, out, resv);
}
