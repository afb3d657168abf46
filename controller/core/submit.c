/* submit.c - submissions (state.h): a job's or an array's checks against the nodes and the
 * caps, its ids and reservation, its jobs made, stored and queued a slice at a time. Part of the
 * state machine (state_int.h). */
#include "log.h"
#include "state_int.h"
#include "units.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Refuse what no known node could ever hold; accept anything while no node is known. */
static int check_feasible(ctl_state *st, res_t req, char err[PROTO_ERRLEN]) {
        res_t largest = { 0 };
        for (size_t i = 0; i < st->nnodes; i++) {
                if (res_fits(req, st->nodes[i]->capacity))
                        return 0;
                if (st->nodes[i]->capacity.mcpu > largest.mcpu)
                        largest.mcpu = st->nodes[i]->capacity.mcpu;
                if (st->nodes[i]->capacity.mem > largest.mem)
                        largest.mem = st->nodes[i]->capacity.mem;
                if (st->nodes[i]->capacity.gpus > largest.gpus)
                        largest.gpus = st->nodes[i]->capacity.gpus;
        }
        if (st->nnodes == 0 || largest.mcpu == 0)
                return 0;
        char want[32], have[32];
        if (req.mcpu > largest.mcpu)
                snprintf(err, PROTO_ERRLEN, "no node has %s CPUs (largest: %s)",
                         units_format_cpus(req.mcpu, want, sizeof(want)),
                         units_format_cpus(largest.mcpu, have, sizeof(have)));
        else if (req.mem > largest.mem)
                snprintf(err, PROTO_ERRLEN, "no node has %s of memory (largest: %s)",
                         units_format_size(req.mem, want, sizeof(want)),
                         units_format_size(largest.mem, have, sizeof(have)));
        else if (req.gpus > largest.gpus)
                snprintf(err, PROTO_ERRLEN, "no node has %lld GPUs (largest: %lld)", (long long)req.gpus,
                         (long long)largest.gpus);
        else
                snprintf(err, PROTO_ERRLEN, "no node has the CPUs, the memory and the GPUs asked for at once");
        return -E2BIG;
}

/* colony-<id>.out, or colony-<first>_<index>.out for an array's job (Slurm's %A_%a), in its cwd. */
int ctl_default_output(job *j) {
        char *path, name[64];
        if (j->spec.stdout_path)
                return 0;
        if (j->array_first)
                snprintf(name, sizeof(name), "colony-%llu_%u.out", (unsigned long long)j->array_first, j->array_index);
        else
                snprintf(name, sizeof(name), "colony-%llu.out", (unsigned long long)j->id);
        if (asprintf(&path, "%s%s%s", j->spec.cwd, strcmp(j->spec.cwd, "/") ? "/" : "", name) < 0)
                return -ENOMEM;
        j->spec.stdout_path = path;
        return 0;
}

/* Whether count more jobs fit below the cap max, with have pending already. */
static bool below(size_t have, size_t count, size_t max) { return have < max && count <= max - have; }

/* The refusal of count jobs (array: an array's) by the cap named cap, of max, with have pending:
 * who says whose jobs ("" for all, " for user x"). */
static int room_error(char err[PROTO_ERRLEN], const char *who, size_t have, size_t count, bool array, const char *cap,
                      size_t max) {
        if (array)
                snprintf(err, PROTO_ERRLEN,
                         "queue full%s: %zu jobs pending, and an array of %zu would pass %s (%zu): "
                         "none submitted",
                         who, have, count, cap, max);
        else
                snprintf(err, PROTO_ERRLEN, "queue full%s: %zu jobs pending (%s = %zu)", who, have, cap, max);
        return -EAGAIN;
}

/* Whether count more jobs of uid (user) in group fit below max_pending and the per-user and
 * per-department caps. Returns 0 or -EAGAIN with err set, naming the cap. */
static int check_room(ctl_state *st, uid_t uid, const char *user, const char *group, size_t count, bool array,
                      char err[PROTO_ERRLEN]) {
        const ctl_config *c = &st->cfg;
        char who[PROTO_ERRLEN / 2];
        size_t pending = st->npending - st->nstale + st->nreserved;
        if (!below(pending, count, c->max_pending))
                return room_error(err, "", pending, count, array, "max_pending", c->max_pending);
        const ctl_tally *t = ctl_tally_find(st, uid, NULL, 0, false);
        if (c->max_pending_per_user && !below(t ? t->pending : 0, count, c->max_pending_per_user)) {
                snprintf(who, sizeof(who), " for user %.32s", user);
                return room_error(err, who, t ? t->pending : 0, count, array, "max_pending_per_user",
                                  c->max_pending_per_user);
        }
        size_t len = group ? ctl_top_dept_len(group) : 0;
        t = group ? ctl_tally_find(st, 0, group, len, false) : NULL;
        if (group && c->max_pending_per_dept && !below(t ? t->pending : 0, count, c->max_pending_per_dept)) {
                snprintf(who, sizeof(who), " for department %.*s", (int)(len < 64 ? len : 64), group);
                return room_error(err, who, t ? t->pending : 0, count, array, "max_pending_per_dept",
                                  c->max_pending_per_dept);
        }
        return 0;
}

/* The index-th job of a (numbered from a->first), in made[index - a->made]: the first takes a's
 * spec and user, the others (an array's) borrow the first's strings, its output path too when
 * it was given rather than made from its id. Returns 0 or -ENOMEM. */
static int make_job(ctl_state *st, ctl_array *a, job **made, size_t index) {
        job *j = jobpool_get(&st->pool);
        if (!j)
                return -ENOMEM;
        made[index - a->made] = j;
        uint32_t task = (uint32_t)index;
        if (a->indexes.n)
                (void)array_set_take(&a->indexes, &task); /* the set holds count indexes */
        *j = (job){ .id = a->first + index,
                    .uid = a->uid,
                    .gid = a->gid,
                    .state = JOB_PENDING,
                    .submit_usec = a->now,
                    .attempt = 1,
                    .array_first = a->array ? a->first : 0,
                    .array_index = task,
                    .pool_chunk = j->pool_chunk }; /* the record stays the pool's */
        if (index > 0) {
                job_borrow_spec(j, a->owner, a->given_stdout);
        } else {
                j->spec = a->spec;
                a->spec = (job_spec){ 0 };
                j->user = a->user;
                a->user = NULL;
                j->borrows_spec = a->borrowed; /* the caller's strings (ctl_submit_borrowing) */
                j->borrows_stdout = a->borrowed && a->given_stdout;
                a->owner = j;
        }
        return ctl_default_output(j);
}

/* Free the n jobs of a slice that failed, giving a back its spec and user if the first was one. */
static void unmake_jobs(ctl_state *st, ctl_array *a, job **made, size_t n) {
        if (made[0] && made[0] == a->owner) {
                a->spec = made[0]->spec;
                made[0]->spec = (job_spec){ 0 };
                a->user = made[0]->user;
                made[0]->user = NULL;
                a->owner = NULL;
        }
        for (size_t i = n; i-- > 0;)
                if (made[i])
                        jobpool_release(&st->pool, made[i]);
}

/* Store the made jobs with their "submitted" events, the environment with the first only (an
 * array's others read it there). Returns 0 or -errno. */
int ctl_persist_jobs(ctl_state *st, job **made, size_t n) {
        int r = 0;
        for (size_t i = 0; r == 0 && i < n; i++) {
                ctl_emit(st, made[i], NULL, "submitted", NULL); /* stored with the job by persist */
                r = st->act->persist(st->userdata, made[i]);
        }
        return r;
}

/* Make room for n more jobs of uid, pending ones and their entries in the indexes, so that
 * adding them cannot fail half way. */
int ctl_reserve_jobs(ctl_state *st, uid_t uid, size_t n) {
        ctl_idset *u = ctl_user_jobs_of(st, uid, true);
        if (sched_grow(&st->jobs, &st->jobs_cap, st->njobs + n, sizeof(*st->jobs)) < 0 ||
            jobtable_reserve(&st->byid, n) < 0 || ctl_pending_reserve(st, n) < 0 || !u || ctl_idset_reserve(u, n) < 0 ||
            ctl_idset_reserve(&st->pending_ids, n) < 0)
                return -ENOMEM;
        return 0;
}

int ctl_submit(ctl_state *st, uid_t uid, gid_t gid, const char *user, job_spec *spec, int64_t now, uint64_t *id,
               char err[PROTO_ERRLEN]) {
        return ctl_submit_array(st, uid, gid, user, spec, 0, NULL, now, id, err);
}

/* A submission's dependency, nice value and begin time. Returns 0 or -errno with err set. */
static int check_start_fields(ctl_state *st, uid_t uid, const job_spec *spec, char err[PROTO_ERRLEN]) {
        if (spec->nice < 0 && uid != 0) {
                snprintf(err, PROTO_ERRLEN, "nice: only root may give a negative value (%d)", spec->nice);
                return -EPERM;
        }
        return depidx_check(st, spec, err);
}

/* ctl_array_begin; borrowed: the jobs borrow user and spec's strings (ctl_submit_borrowing). */
static int begin(ctl_state *st, uid_t uid, gid_t gid, const char *user, job_spec *spec, size_t count, int64_t now,
                 bool borrowed, ctl_array *a, char err[PROTO_ERRLEN]) {
        size_t n = count ? count : 1;
        int r = check_feasible(st, spec->req, err);
        if (r < 0 || (r = ctl_check_nodesel(st, spec, err)) < 0)
                return r;
        if ((r = depts_may_submit(st->cfg.depts, spec->group, uid, user, err, PROTO_ERRLEN)) < 0 ||
            (r = depts_time_limit(st->cfg.depts, spec->group, st->cfg.default_time_usec, st->cfg.max_time_usec,
                                  &spec->time_limit_usec, err, PROTO_ERRLEN)) < 0 ||
            (r = check_room(st, uid, user, spec->group, n, count > 0, err)) < 0 ||
            (r = check_start_fields(st, uid, spec, err)) < 0)
                return r;
        *a = (ctl_array){ .uid = uid,
                          .gid = gid,
                          .user = borrowed ? (char *)user : strdup(user), /* borrowed: never freed */
                          .borrowed = borrowed,
                          .count = n,
                          .array = count > 0,
                          .given_stdout = spec->stdout_path != NULL,
                          .first = st->next_id,
                          .now = now };
        if (!a->user) {
                snprintf(err, PROTO_ERRLEN, "out of memory");
                return -ENOMEM;
        }
        a->spec = *spec;
        *spec = (job_spec){ 0 };
        /* Its ids and its place below the caps are taken now: other submissions are made
         * between its slices, numbered after it (ctl_array_more counts the jobs made). */
        st->next_id = a->first + n;
        st->nreserved += n;
        ctl_tally_by(st, uid, a->spec.group, (ssize_t)n);
        return 0;
}

int ctl_array_begin(ctl_state *st, uid_t uid, gid_t gid, const char *user, job_spec *spec, size_t count, int64_t now,
                    ctl_array *a, char err[PROTO_ERRLEN]) {
        return begin(st, uid, gid, user, spec, count, now, false, a, err);
}

/* The reservation of n jobs of a (ctl_array_begin) ends: they are made, or never will be. */
void ctl_unreserve(ctl_state *st, const ctl_array *a, size_t n) {
        st->nreserved -= n;
        ctl_tally_by(st, a->uid, a->owner ? a->owner->spec.group : a->spec.group, -(ssize_t)n);
}

/* Index the dependency of the n jobs just queued (the last n), and say why they wait. */
static void start_fields_made(ctl_state *st, const ctl_array *a, size_t n) {
        if (a->now > st->clock_usec)
                st->clock_usec = a->now;
        for (size_t i = st->npending - n; i < st->npending; i++) {
                if (depidx_add(st, st->pending[i]) < 0)
                        log_error("job=%llu out of memory indexing its dependency: it waits for a restart",
                                  (unsigned long long)st->pending[i]->id);
                if (ctl_family_link(st, st->pending[i]) < 0)
                        log_error("job=%llu out of memory linking its family: shown alone until a restart",
                                  (unsigned long long)st->pending[i]->id);
                ctl_family_made(st, st->pending[i]);
        }
        (void)ctl_wait_mark(st, st->npending - n, n);
}

/* Make, persist and queue up to max more jobs of a (ctl_array_more). */
int ctl_make_slice(ctl_state *st, ctl_array *a, size_t max, char err[PROTO_ERRLEN]) {
        size_t n = a->count - a->made < max ? a->count - a->made : max;
        job **made = calloc(n + 1, sizeof(*made));
        int r = made ? ctl_reserve_jobs(st, a->uid, n) : -ENOMEM;
        for (size_t i = 0; r == 0 && i < n; i++)
                r = make_job(st, a, made, a->made + i);
        if (r == 0)
                r = ctl_persist_jobs(st, made, n);
        if (r < 0) {
                snprintf(err, PROTO_ERRLEN, "could not record the job%s: %s (%zu of %zu stored)", a->array ? "s" : "",
                         strerror(-r), a->made, a->count);
                if (made)
                        unmake_jobs(st, a, made, n);
                free(made);
                /* the ids stay skipped: some may be in the store's batch, or their events sent */
                ctl_unreserve(st, a, a->count - a->made);
                a->made = a->count;
                return r;
        }
        if (a->made == 0) {
                strv_free(a->owner->spec.env); /* stored: pending jobs can be many, and environments large */
                a->owner->spec.env = NULL;
        }
        ctl_unreserve(st, a, n); /* queue_pending counts them */
        for (size_t i = 0; i < n; i++) {
                job *j = made[i];
                (void)ctl_append_job(st, j); /* room reserved */
                (void)ctl_queue_pending(st, j);
                (void)ctl_index_add(st, j);
        }
        free(made);
        start_fields_made(st, a, n);
        a->made += n;
        return a->made == a->count;
}

int ctl_array_more(ctl_state *st, ctl_array *a, size_t max, char err[PROTO_ERRLEN]) {
        if (a->array && a->made == 0 && a->count > ARRAY_WINDOW)
                return ctl_array_record(st, a, max, err);
        return ctl_make_slice(st, a, max, err);
}

void ctl_array_free(ctl_array *a) {
        if (!a->borrowed) {
                job_spec_free(&a->spec);
                free(a->user);
        }
        array_set_free(&a->indexes);
        *a = (ctl_array){ 0 };
}

/* ctl_submit_array, or ctl_submit_borrowing when borrowed. */
static int submit(ctl_state *st, uid_t uid, gid_t gid, const char *user, job_spec *spec, size_t count,
                  array_set *indexes, int64_t now, bool borrowed, uint64_t *first, char err[PROTO_ERRLEN]) {
        ctl_array a;
        int r = begin(st, uid, gid, user, spec, count, now, borrowed, &a, err);
        if (r < 0)
                return r;
        if (indexes) {
                a.indexes = *indexes;
                *indexes = (array_set){ 0 };
        }
        r = ctl_array_more(st, &a, SIZE_MAX, err);
        *first = a.first;
        ctl_array_free(&a);
        return r < 0 ? r : 0;
}

int ctl_submit_array(ctl_state *st, uid_t uid, gid_t gid, const char *user, job_spec *spec, size_t count,
                     array_set *indexes, int64_t now, uint64_t *first, char err[PROTO_ERRLEN]) {
        return submit(st, uid, gid, user, spec, count, indexes, now, false, first, err);
}

int ctl_submit_borrowing(ctl_state *st, uid_t uid, gid_t gid, const char *user, const job_spec *spec, int64_t now,
                         uint64_t *id, char err[PROTO_ERRLEN]) {
        job_spec mine = *spec; /* the checks may fill in its numbers (its time limit), not the caller's */
        mine.env = NULL;       /* the job would free it */
        return submit(st, uid, gid, user, &mine, 0, NULL, now, true, id, err);
}

int ctl_request_feasible(ctl_state *st, res_t req, char err[PROTO_ERRLEN]) { return check_feasible(st, req, err); }
