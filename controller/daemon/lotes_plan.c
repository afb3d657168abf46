/* lotes_plan.c - live LoTES plans (see lotes_plan.h).
 *
 * Threads: the loop thread builds a lotes_model (plain copies of the up machines and the mix)
 * and hands it to one worker thread, which only runs lotes_model_solve on it and writes to an
 * eventfd. The loop joins the worker in the eventfd's handler and swaps the model in. Nothing
 * else is shared, so there is no lock: the model belongs to the worker from thrd_create to
 * thrd_join, and to the loop otherwise. */
#include "lotes_plan.h"
#include "clock.h"
#include "log.h"
#include "units.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <threads.h> /* C11 threads: <pthread.h> would pull <sched.h>, which policies/sched.h shadows */
#include <time.h>
#include <unistd.h>

struct ctl_lotes {
        ctl_state *st;
        ctl_lotes_options o;
        void (*resched)(void *);
        void *userdata;
        int efd;
        sd_event_source *src;
        thrd_t worker;
        bool busy;
        const char *reason;   /* why the running solve was started */
        lotes_model *solving; /* the worker's while busy */
        int solve_r;
        double solve_ms;
        char solve_err[256];
        lotes_model *failed; /* the inputs of the last solve that failed, not retried unchanged */
        unsigned version;
        char status[256];
};

/* ---- options ---- */

/* The optional fifth field of a class, "gpu:N" (N whole GPUs a job, 1 or more), into *gpus; an
 * absent one (NULL) is none. Returns 0 or -EINVAL. */
static int parse_class_gpus(const char *field, int64_t *gpus) {
        char *end;
        *gpus = 0;
        if (!field)
                return 0;
        if (strncmp(field, "gpu:", 4) != 0 || field[4] < '0' || field[4] > '9')
                return -EINVAL;
        errno = 0;
        long long n = strtoll(field + 4, &end, 10);
        if (*end || errno || n < 1 || n > RES_GPUS_MAX)
                return -EINVAL;
        *gpus = n;
        return 0;
}

/* "CPUS MEM RUNTIME_S RATE_PER_S [gpu:N]" of class k. */
static int parse_class(const config_entry *e, lotes_mix *m, size_t k, const char *path, char *err, size_t errlen) {
        char cpus[32], mem[32], gpu[32], extra;
        double runtime, rate;
        int64_t mcpu, bytes, gpus;
        int n = sscanf(e->value, "%31s %31s %lf %lf %31s %c", cpus, mem, &runtime, &rate, gpu, &extra);
        if ((n != 4 && n != 5) || units_parse_cpus(cpus, &mcpu) < 0 || mcpu <= 0 || units_parse_size(mem, &bytes) < 0 ||
            bytes <= 0 || !(runtime > 0) || !isfinite(runtime) || !(rate > 0) || !isfinite(rate) ||
            parse_class_gpus(n == 5 ? gpu : NULL, &gpus) < 0) {
                snprintf(err, errlen, "%s:%d: %s: want CPUS MEM RUNTIME_S RATE_PER_S [gpu:N], like 0.5 64M 2 1.5", path,
                         e->line, e->key);
                return -EINVAL;
        }
        if (!(m->name[k] = strdup(e->key + strlen("lotes_classes.")))) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        m->req[k] = (res_t){ .mcpu = mcpu, .mem = bytes, .gpus = gpus };
        m->runtime[k] = runtime;
        m->rate[k] = rate;
        return 0;
}

static bool is_class(const config_entry *e) { return strncmp(e->key, "lotes_classes.", strlen("lotes_classes.")) == 0; }

int ctl_lotes_options_from_config(const config *cfg, ctl_lotes_options *o, char *err, size_t errlen) {
        int64_t v;
        int r;
        if ((r = config_get_uint(cfg, "lotes.window_s", 10000000, &v, err, errlen)) == 0)
                o->window_s = v > 0 ? (double)v : 1;
        if (r == -EINVAL || (r = config_get_uint(cfg, "lotes.max_classes", 64, &v, err, errlen)) == -EINVAL)
                return -EINVAL;
        if (r == 0)
                o->max_classes = v > 0 ? (size_t)v : 1;
        if ((r = config_get_uint(cfg, "lotes.drift_percent", 1000, &v, err, errlen)) == -EINVAL)
                return -EINVAL;
        if (r == 0)
                o->drift = (double)v / 100;
        size_t n = 0;
        for (size_t i = 0; i < cfg->n; i++)
                n += is_class(&cfg->entries[i]);
        if (n == 0)
                return 0;
        if (lotes_mix_alloc(&o->classes, n) < 0) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        for (size_t i = 0, k = 0; i < cfg->n; i++)
                if (is_class(&cfg->entries[i]) &&
                    (r = parse_class(&cfg->entries[i], &o->classes, k++, cfg->path, err, errlen)) < 0)
                        return r;
        return 0;
}

void ctl_lotes_options_free(ctl_lotes_options *o) { lotes_mix_free(&o->classes); }

/* ---- the worker ---- */

static int solve(void *arg) {
        ctl_lotes *l = arg;
        int64_t t0 = clock_mono_usec();
        l->solve_r = lotes_model_solve(l->solving, l->solve_err, sizeof(l->solve_err));
        l->solve_ms = (double)(clock_mono_usec() - t0) / 1e3;
        lotes_thread_done();
        uint64_t one = 1;
        if (write(l->efd, &one, sizeof(one)) < 0) /* an eventfd write of 1 fails only on overflow */
                abort();
        return 0;
}

static void set_status(ctl_lotes *l) {
        const lotes_model *m = lotes_live_model(l->st->cfg.dispatcher);
        if (!m)
                snprintf(l->status, sizeof(l->status), "lotes: first-fit until the first plan%s%s",
                         l->busy ? " (solving)" : "", l->failed ? " (the last solve failed)" : "");
        else
                snprintf(l->status, sizeof(l->status),
                         "lotes: plan %u, %zu classes on %zu configurations, lambda* %.3g jobs/s%s", l->version,
                         m->problem.nclasses, m->problem.nconfigs, m->plan.lambda_lp,
                         l->busy ? " (solving a new one)" : "");
}

static int on_plan(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        ctl_lotes *l = userdata;
        uint64_t n;
        (void)s, (void)revents;
        if (read(fd, &n, sizeof(n)) < 0 || !l->busy)
                return 0;
        thrd_join(l->worker, NULL);
        l->busy = false;
        lotes_model *m = l->solving;
        l->solving = NULL;
        lotes_model_free(l->failed);
        l->failed = NULL;
        if (l->solve_r < 0) {
                log_warning("lotes: no plan for %zu machines and %zu classes (%s): %s", m->nmachines, m->mix.n,
                            l->reason, l->solve_err);
                l->failed = m;
        } else {
                size_t nconfigs = m->problem.nconfigs, nclasses = m->problem.nclasses;
                double lambda = m->plan.lambda_lp;
                if (lotes_live_swap(l->st->cfg.dispatcher, m) < 0) {
                        log_error("lotes: out of memory swapping in a plan");
                } else {
                        ctl_schedule_dirty(l->st); /* the new plan rescans every machine: the next pass must run */
                        log_info("lotes: plan %u solved (%s) in %.1f ms: %zu configurations, %zu classes, lambda* %.4g "
                                 "jobs/s",
                                 ++l->version, l->reason, l->solve_ms, nconfigs, nclasses, lambda);
                }
        }
        set_status(l);
        l->resched(l->userdata);
        return 0;
}

/* ---- when to solve ---- */

/* The jobs submitted in the window, newest first (jobs are in id order, so in submission order). */
static int samples(const ctl_state *st, double now, double window, lotes_sample **out, size_t *n) {
        size_t first = st->njobs;
        while (first > 0 && (double)st->jobs[first - 1]->submit_usec / 1e6 > now - window)
                first--;
        lotes_sample *s = calloc(st->njobs - first + 1, sizeof(*s));
        if (!s)
                return -ENOMEM;
        for (size_t i = first; i < st->njobs; i++) {
                const job *j = st->jobs[i];
                double ran = j->start_usec > 0 && job_state_is_terminal(j->state) && j->end_usec >= j->start_usec
                                     ? (double)(j->end_usec - j->start_usec) / 1e6
                                     : -1;
                s[i - first] =
                        (lotes_sample){ .req = j->spec.req,
                                        .submit = (double)j->submit_usec / 1e6,
                                        .runtime = ran >= 0                    ? ran
                                                   : j->spec.expected_usec > 0 ? (double)j->spec.expected_usec / 1e6
                                                                               : -1 };
        }
        *out = s;
        *n = st->njobs - first;
        return 0;
}

static int current_mix(const ctl_lotes *l, int64_t now_usec, lotes_mix *mix) {
        if (l->o.classes.n)
                return lotes_mix_copy(mix, &l->o.classes);
        lotes_sample *s = NULL;
        size_t n = 0;
        double now = (double)now_usec / 1e6;
        int r = samples(l->st, now, l->o.window_s, &s, &n);
        if (r == 0)
                r = lotes_learn(s, n, now, l->o.window_s, l->o.max_classes, mix);
        free(s);
        return r;
}

/* Why m (the plan in use, or the last failed try) is out of date for these inputs, or NULL. */
static const char *stale(const ctl_lotes *l, const lotes_model *m, const sched_machine *ms, size_t n,
                         const lotes_mix *mix) {
        if (!lotes_model_same_machines(m, ms, n))
                return "machines changed";
        if (!l->o.classes.n && lotes_drifted(&m->mix, mix, l->o.drift))
                return "class mix drifted";
        return NULL;
}

static sched_machine *machines_now(const ctl_state *st) {
        sched_machine *ms = calloc(st->nnodes + 1, sizeof(*ms));
        for (size_t i = 0; ms && i < st->nnodes; i++)
                ms[i] = (sched_machine){ .index = (uint32_t)i,
                                         .capacity = st->nodes[i]->capacity,
                                         .up = st->nodes[i]->up };
        return ms;
}

void ctl_lotes_tick(ctl_lotes *l, int64_t now_usec) {
        if (l->busy)
                return;
        const lotes_model *cur = lotes_live_model(l->st->cfg.dispatcher);
        lotes_mix mix = { 0 };
        sched_machine *ms = machines_now(l->st);
        const char *why = NULL;
        if (ms && current_mix(l, now_usec, &mix) == 0 && mix.n > 0) {
                why = cur ? stale(l, cur, ms, l->st->nnodes, &mix) : "first plan";
                if (why && l->failed && !stale(l, l->failed, ms, l->st->nnodes, &mix))
                        why = NULL; /* it failed on these very inputs */
        }
        char err[256];
        lotes_model *m = NULL;
        if (why && lotes_model_new(ms, l->st->nnodes, &mix, &m, err, sizeof(err)) < 0)
                why = NULL; /* no machine up: nothing to plan for yet */
        if (why) {
                l->solving = m;
                l->reason = why;
                if (thrd_create(&l->worker, solve, l) == thrd_success)
                        l->busy = true;
                else {
                        log_warning("lotes: could not start the solver thread");
                        lotes_model_free(m);
                        l->solving = NULL;
                }
                set_status(l);
        }
        lotes_mix_free(&mix);
        free(ms);
}

const char *ctl_lotes_status(const ctl_lotes *l) { return l->status; }

int ctl_lotes_new(sd_event *event, ctl_state *st, ctl_lotes_options *o, void (*resched)(void *), void *userdata,
                  ctl_lotes **out) {
        ctl_lotes *l = calloc(1, sizeof(*l));
        if (!l)
                return -ENOMEM;
        *l = (ctl_lotes){ .st = st, .o = *o, .resched = resched, .userdata = userdata };
        o->classes = (lotes_mix){ 0 };
        l->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        int r = l->efd < 0 ? -errno : sd_event_add_io(event, &l->src, l->efd, EPOLLIN, on_plan, l);
        if (r < 0) {
                if (l->efd >= 0)
                        close(l->efd);
                lotes_mix_free(&l->o.classes);
                free(l);
                return r;
        }
        set_status(l);
        log_info("%s; %s", l->status,
                 l->o.classes.n ? "classes from [lotes_classes]" : "classes learned from the jobs submitted");
        *out = l;
        return 0;
}

void ctl_lotes_free(ctl_lotes *l) {
        if (!l)
                return;
        if (l->busy)
                thrd_join(l->worker, NULL);
        lotes_model_free(l->solving);
        lotes_model_free(l->failed);
        sd_event_source_disable_unref(l->src);
        close(l->efd);
        lotes_mix_free(&l->o.classes);
        free(l);
}
