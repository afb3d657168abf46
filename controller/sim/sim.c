/* sim.c - the discrete-event simulator (see sim.h).
 *
 * Events live in a queue ordered by time, then by the order they were made, so equal times
 * resolve the same way on every run (evq.h). Arrivals are drawn one at a time, so the queue
 * holds one arrival plus the running jobs' exits. */
#include "sim.h"
#include "state.h"
#include "family.h"
#include "evq.h"
#include "figures.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct sim {
        const sim_config *cfg;
        ctl_state st;
        evq events;
        double now;
        sim_job next; /* the arrival waiting in the queue */
        bool has_next;
        double *arrival, *runtime, *start, *end; /* by job id - 1 */
        uint32_t *dept;                          /* by job id - 1, when there are departments */
        size_t times_cap;
        size_t *refused; /* by department */
        res_t capacity, used;
        double used_cpu_time, used_mem_time; /* integrals of use over time */
        double used_gpu_time, *dept_gpu;     /* of GPUs; GPU-seconds by department, as jobs end */
        sim_result *out;
        size_t samples_cap;
        size_t events_done; /* arrivals, and ends or refusals: two per job, for cfg->progress */
        int error;
        sim_families families; /* MapReduce jobs, when the source has them */
        job *owners;           /* one job per type and group whose strings the jobs borrow (owner_of) */
        size_t nowners;
        /* What the figures read of a job after ctl_forget_ended freed it, by job id - 1: its
         * CPUs for the departments' figures; its request and machine (index + 1, 0 while it
         * never ran) for the per-job rows. NULL when not asked for. */
        int64_t *mcpu;
        res_t *req;
        uint32_t *machine;
        size_t ended; /* jobs ended since the last ctl_forget_ended */
} sim;

static int64_t usec(double seconds) { return (int64_t)(seconds * 1e6); }

static int no_persist(void *userdata, const job *j) {
        (void)userdata, (void)j;
        return 0;
}

/* A simulated agent starts the job now and ends it after its runtime. */
static void sim_launch(void *userdata, ctl_node *n, const job *j) {
        sim *s = userdata;
        double runtime = s->runtime[j->id - 1];
        if (s->cfg->runtime_on)
                runtime = s->cfg->runtime_on(s->cfg->source, j->spec.job_type, runtime, n->index);
        s->start[j->id - 1] = s->now;
        if (s->machine)
                s->machine[j->id - 1] = (uint32_t)n->index + 1;
        ctl_find_job(&s->st, j->id)->start_usec = usec(s->now); /* as its agent would report it */
        s->used = res_add(s->used, j->spec.req);
        int r = evq_push(&s->events, (sim_event){ .t = s->now + runtime, .kind = EV_EXIT, .job = j->id, .node = n });
        if (r < 0)
                s->error = r; /* -EINVAL: runtime_on gave no time (sim_run says the source is at fault) */
}

static void sim_cancel(void *userdata, ctl_node *n, const job *j, int grace_ms) {
        (void)userdata, (void)n, (void)j, (void)grace_ms; /* nobody cancels in a simulation */
}

static void sim_terminal(void *userdata, const job *j) {
        sim *s = userdata;
        s->end[j->id - 1] = s->now;
        if (s->dept_gpu && j->spec.req.gpus > 0) /* now, while the job is there to ask */
                s->dept_gpu[s->dept[j->id - 1]] += (double)j->spec.req.gpus * (s->now - s->start[j->id - 1]);
}

/* Simulated agents never go silent: no link to drop. */
static const ctl_actions sim_actions = { no_persist, sim_launch, sim_cancel, sim_terminal, NULL, NULL, NULL };

/* Bring every machine up as a node. Returns 0, or -errno with a reason in err. */
static int add_machines(sim *s, char *err, size_t errlen) {
        char name[32], why[PROTO_ERRLEN];
        for (size_t i = 0; i < s->cfg->nmachines; i++) {
                ctl_node *n;
                snprintf(name, sizeof(name), "m%zu", i + 1);
                const char *as = s->cfg->machine_names ? s->cfg->machine_names[i] : name;
                int r = ctl_node_up(&s->st, as, s->cfg->machines[i], "sim", "", NULL, 0, s, (ctl_time){ 0 }, &n, why);
                if (r == -EEXIST)
                        snprintf(err, errlen, "two machines are named %s", as);
                else if (r < 0)
                        snprintf(err, errlen, "machine %s: %s", as, why);
                if (r < 0)
                        return r;
                s->capacity = res_add(s->capacity, s->cfg->machines[i]);
        }
        s->out->machines = s->cfg->nmachines;
        return 0;
}

/* Make room for cap jobs in the arrays of what forgotten jobs leave (sim.mcpu), when asked for. */
static int grow_kept(sim *s, size_t cap) {
        if (s->cfg->ndepts) {
                int64_t *mcpu = realloc(s->mcpu, cap * sizeof(*mcpu));
                if (!mcpu)
                        return -ENOMEM;
                s->mcpu = mcpu;
        }
        if (!s->cfg->each_job)
                return 0;
        res_t *req = realloc(s->req, cap * sizeof(*req));
        if (req)
                s->req = req;
        uint32_t *machine = req ? realloc(s->machine, cap * sizeof(*machine)) : NULL;
        if (!machine)
                return -ENOMEM;
        s->machine = machine;
        return 0;
}

/* Make room for the times of job id. */
static int grow_times(sim *s, uint64_t id) {
        if (id <= s->times_cap)
                return 0;
        size_t cap = s->times_cap ? s->times_cap * 2 : 4096;
        while (cap < id)
                cap *= 2;
        double **arrays[] = { &s->arrival, &s->runtime, &s->start, &s->end };
        for (size_t i = 0; i < 4; i++) {
                double *p = realloc(*arrays[i], cap * sizeof(double));
                if (!p)
                        return -ENOMEM;
                *arrays[i] = p;
        }
        if (s->cfg->ndepts) {
                uint32_t *d = realloc(s->dept, cap * sizeof(*d));
                if (!d)
                        return -ENOMEM;
                s->dept = d;
        }
        if (grow_kept(s, cap) < 0)
                return -ENOMEM;
        s->times_cap = cap;
        return 0;
}

/* Draw the next job from the source and put its arrival in the queue. Returns 0 or -errno. */
static int queue_next_arrival(sim *s) {
        int r = s->cfg->next_job(s->cfg->source, &s->next);
        s->has_next = r > 0;
        if (r <= 0)
                return r;
        if (s->next.arrival < s->now || s->next.runtime < 0 || (s->cfg->ndepts && s->next.dept >= s->cfg->ndepts))
                return -EINVAL; /* sources promise arrival order, real runtimes and known departments */
        return evq_push(&s->events, (sim_event){ .t = s->next.arrival, .kind = EV_ARRIVAL });
}

/* gpus as a fraction of the cluster's GPUs; 0 for a cluster without. */
static double gpu_fraction(const sim *s, double gpus) {
        return s->capacity.gpus > 0 ? gpus / (double)s->capacity.gpus : 0;
}

/* Account the time since the last event at the current use, and emit due samples. */
static int advance(sim *s, double t) {
        double dt = t - s->now;
        s->used_cpu_time += dt * (double)s->used.mcpu;
        s->used_mem_time += dt * (double)s->used.mem;
        s->used_gpu_time += dt * (double)s->used.gpus;
        double period = s->cfg->sample_seconds;
        while (period > 0 && (double)s->out->nsamples * period <= t) {
                if (s->out->nsamples == s->samples_cap) {
                        size_t cap = s->samples_cap ? s->samples_cap * 2 : 256;
                        sim_sample *v = realloc(s->out->samples, cap * sizeof(*v));
                        if (!v)
                                return -ENOMEM;
                        s->out->samples = v;
                        s->samples_cap = cap;
                }
                s->out->samples[s->out->nsamples] = (sim_sample){
                        .t = (double)s->out->nsamples * period,
                        .cpu = (double)s->used.mcpu / (double)s->capacity.mcpu,
                        .mem = (double)s->used.mem / (double)s->capacity.mem,
                        .gpu = gpu_fraction(s, (double)s->used.gpus),
                };
                s->out->nsamples++;
        }
        s->now = t;
        return 0;
}

/* The strings of the jobs' specs (user, cwd, stdout, an empty argv, their type, their group):
 * the same for every job of a type and group. Returns a new spec, empty on -ENOMEM. */
static int sim_spec(const char *type, const char *group, job_spec *spec) {
        *spec = (job_spec){ .cwd = strdup("/"),
                            .stdout_path = strdup("/dev/null"),
                            .argv = calloc(1, sizeof(char *)),
                            .job_type = type ? strdup(type) : NULL,
                            .group = group ? strdup(group) : NULL };
        if (spec->cwd && spec->stdout_path && spec->argv && (!type || spec->job_type) && (!group || spec->group))
                return 0;
        job_spec_free(spec);
        return -ENOMEM;
}

static bool same_string(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

/* The job of that type and group whose strings the jobs submitted borrow (ctl_submit_borrowing:
 * they are a third of a job's memory, and 25 million jobs are held at once), made on first use.
 * NULL: no memory. */
static job *owner_of(sim *s, const char *type, const char *group) {
        for (size_t i = 0; i < s->nowners; i++)
                if (same_string(type, s->owners[i].spec.job_type) && same_string(group, s->owners[i].spec.group))
                        return &s->owners[i];
        /* the jobs borrow the strings, not the struct: the owners may move */
        job *v = realloc(s->owners, (s->nowners + 1) * sizeof(*v));
        if (!v)
                return NULL;
        s->owners = v;
        job *o = &v[s->nowners];
        *o = (job){ .user = strdup("sim") };
        if (!o->user || sim_spec(type, group, &o->spec) < 0) {
                job_free(o);
                return NULL;
        }
        s->nowners++;
        return o;
}

/* One more job arrived, or left the simulation. Each costs about one pass, so the count grows at
 * a steady rate of work even while jobs queue, when ends lag behind arrivals. */
static void event_done(sim *s) {
        s->events_done++;
        if (s->cfg->progress)
                s->cfg->progress(s->cfg->progress_arg, s->events_done);
}

static int family_refused(sim *s, const sim_job *j);

/* What the figures need of job id's request once the job is forgotten. */
static void keep_request(sim *s, uint64_t id, res_t req) {
        if (s->mcpu)
                s->mcpu[id - 1] = req.mcpu;
        if (s->req) {
                s->req[id - 1] = req;
                s->machine[id - 1] = 0;
        }
}

/* Submit task j (the arriving job, or a reduce its family's barrier released) now through the
 * controller's own path. Returns 0 or -errno. */
static int submit(sim *s, const sim_job *j) {
        char err[PROTO_ERRLEN];
        uint64_t id;
        s->out->jobs++;
        event_done(s);
        const char *group = s->cfg->fair && s->cfg->ndepts ? s->cfg->dept_names[j->dept] : NULL;
        const job *o = owner_of(s, j->type, group);
        if (!o)
                return -ENOMEM;
        job_spec spec = o->spec; /* its strings, which outlive the jobs */
        /* the runtime is the job's estimate, exact here: Tetris reads it */
        spec.req = j->req;
        spec.expected_usec = usec(j->runtime);
        /* EASY backfill reads the limit: the trace's requested time, else the runtime itself */
        int64_t limit = usec(j->limit > 0 ? j->limit : j->runtime);
        spec.time_limit_usec = limit > 0 ? limit : 1;
        if (grow_times(s, s->st.next_id) < 0)
                return -ENOMEM;
        if (ctl_submit_borrowing(&s->st, 0, 0, o->user, &spec, usec(s->now), &id, err) < 0) {
                s->out->refused++; /* it fits no machine: refused, as the controller would */
                if (s->cfg->ndepts)
                        s->refused[j->dept]++;
                event_done(s);
                return j->family ? family_refused(s, j) : 0;
        }
        s->arrival[id - 1] = s->now;
        s->runtime[id - 1] = j->runtime;
        if (s->cfg->ndepts)
                s->dept[id - 1] = j->dept;
        keep_request(s, id, j->req);
        return j->family ? fam_task_accepted(&s->families, id, j) : 0;
}

/* Submit the reduces a family's barrier let go. */
static int release(sim *s, sim_job *v, size_t n) {
        int r = 0;
        for (size_t i = 0; r == 0 && i < n; i++)
                r = submit(s, &v[i]);
        return r;
}

static int family_refused(sim *s, const sim_job *j) {
        sim_job *v;
        size_t n;
        fam_task_refused(&s->families, j, s->now, &v, &n);
        return release(s, v, n);
}

/* The arriving job: submitted, or held by its family's barrier; then draw the next one. */
static int arrive(sim *s) {
        bool held = false;
        int r = s->next.family ? fam_task_arrives(&s->families, &s->next, s->now, &held) : 0;
        if (r == 0 && !held)
                r = submit(s, &s->next);
        return r < 0 ? r : queue_next_arrival(s);
}

/* A job's end is recorded (sim_terminal) and its family told: once the ended jobs are half of
 * those held, free them (ctl_forget_ended), so that memory follows the live jobs and the sweep
 * costs O(1) per job; the arrays by id keep what the figures read. */
static void forget_ended(sim *s) {
        if (++s->ended <= 1024 || s->ended * 2 <= s->st.njobs)
                return;
        ctl_forget_ended(&s->st);
        s->ended = 0;
}

static int job_exit(sim *s, const sim_event *e) {
        job_result res = { 0 };
        const job *j = ctl_find_job(&s->st, e->job);
        s->used = res_sub(s->used, j->spec.req);
        event_done(s);
        int r = ctl_job_finished(&s->st, e->node, e->job, JOB_COMPLETED, &res, usec(s->now));
        if (r == 0 && fam_of_job(&s->families, e->job)) {
                sim_job *v;
                size_t n;
                fam_task_ended(&s->families, e->job, s->now, s->now - s->start[e->job - 1], &v, &n);
                r = release(s, v, n);
        }
        if (r == 0)
                forget_ended(s);
        return r;
}

static int schedule(sim *s) {
        s->out->passes++;
        ctl_wait_tick(&s->st, usec(s->now)); /* the time the pass reads (EASY's reservations) */
        long r = ctl_schedule(&s->st);
        return r < 0 ? (int)r : s->error;
}

static int run_events(sim *s) {
        int r = queue_next_arrival(s);
        if (r == 0 && s->cfg->cycle_seconds > 0)
                r = evq_push(&s->events, (sim_event){ .t = s->cfg->cycle_seconds, .kind = EV_CYCLE });
        while (r == 0 && s->events.n > 0) {
                sim_event e;
                if ((r = evq_pop(&s->events, &e)) < 0)
                        break;
                bool work_left = s->has_next || s->st.npending > 0 || s->events.n > 0;
                if (e.kind == EV_CYCLE && !work_left)
                        break;
                if ((r = advance(s, e.t)) < 0)
                        break;
                if (e.kind == EV_ARRIVAL)
                        r = arrive(s);
                else if (e.kind == EV_EXIT)
                        r = job_exit(s, &e);
                else
                        r = evq_push(&s->events, (sim_event){ .t = s->now + s->cfg->cycle_seconds, .kind = EV_CYCLE });
                if (r == 0 && (s->cfg->cycle_seconds <= 0 || e.kind == EV_CYCLE))
                        r = schedule(s);
        }
        return r;
}

/* The accepted jobs: ids 1 to n, as refused ones take none. */
static size_t accepted(const sim *s) { return (size_t)(s->st.next_id - 1); }

/* Whether job id never started: a job still pending at the end (the forgotten ones all ended). */
static bool never_ran(sim *s, uint64_t id) {
        const job *j = ctl_find_job(&s->st, id);
        return j && j->state == JOB_PENDING;
}

/* Hand each accepted job to cfg->each_job, in id order. */
static int report_jobs(sim *s) {
        for (uint64_t id = 1; id <= accepted(s); id++) {
                bool ran = !never_ran(s, id);
                uint32_t m = s->machine[id - 1];
                sim_job_record rec = {
                        .id = id,
                        .dept = s->cfg->ndepts ? s->cfg->dept_names[s->dept[id - 1]] : NULL,
                        .machine = m ? s->st.nodes[m - 1]->name : NULL,
                        .arrival = s->arrival[id - 1],
                        .start = ran ? s->start[id - 1] : NAN,
                        .end = ran ? s->end[id - 1] : NAN,
                        .req = s->req[id - 1],
                        .family = fam_of_job(&s->families, id),
                        .reduce = fam_is_reduce(&s->families, id),
                };
                int r = s->cfg->each_job(s->cfg->each_job_data, &rec);
                if (r < 0)
                        return r;
        }
        return 0;
}

/* Per-department figures, from the accepted jobs' waits and responses (before they are sorted). */
static int collect_depts(sim *s, const double *wait, const double *resp) {
        size_t n = accepted(s);
        double *cpu = malloc((n + 1) * sizeof(*cpu));
        int r = cpu ? 0 : -ENOMEM;
        for (size_t i = 0; r == 0 && i < n; i++) {
                double ran = never_ran(s, i + 1) ? 0 : s->end[i] - s->start[i];
                cpu[i] = (double)s->mcpu[i] / 1000 * ran;
        }
        sim_job_values v = { .dept = s->dept, .wait = wait, .response = resp, .cpu_seconds = cpu, .n = n };
        if (r == 0)
                r = sim_dept_figures(&v, s->refused, s->cfg->dept_names, s->cfg->ndepts, s->out);
        free(cpu);
        return r;
}

static int collect(sim *s) {
        size_t n = accepted(s);
        double *wait = malloc((n + 1) * sizeof(*wait)), *resp = malloc((n + 1) * sizeof(*resp));
        if (!wait || !resp) {
                free(wait);
                free(resp);
                return -ENOMEM;
        }
        for (size_t i = 0; i < n; i++) {
                wait[i] = s->start[i] - s->arrival[i];
                resp[i] = s->end[i] - s->arrival[i];
        }
        int r = s->cfg->ndepts ? collect_depts(s, wait, resp) : 0;
        if (r == 0 && s->dept_gpu)
                sim_dept_gpu_figures(s->dept_gpu, s->cfg->dept_names, s->cfg->ndepts, s->out);
        if (r == 0 && s->cfg->each_job)
                r = report_jobs(s);
        if (r == 0 && s->families.n)
                r = fam_figures(&s->families, s->out);
        s->out->completed = n - s->st.npending;
        s->out->wait = sim_summarize(wait, n);
        s->out->response = sim_summarize(resp, n);
        s->out->makespan = s->now;
        if (s->now > 0) {
                s->out->mean_cpu = s->used_cpu_time / (s->now * (double)s->capacity.mcpu);
                s->out->mean_mem = s->used_mem_time / (s->now * (double)s->capacity.mem);
                s->out->mean_gpu = gpu_fraction(s, s->used_gpu_time / s->now);
        }
        s->out->gpus = s->capacity.gpus;
        free(wait);
        free(resp);
        return r;
}

/* With cfg->fair, the departments as the controller's flat tree, for cc (out->v borrows the names:
 * free it alone). Returns 0 or -ENOMEM. */
static int fair_tree(const sim_config *cfg, ctl_config *cc, depts *out) {
        if (!cfg->fair || !cfg->ndepts)
                return 0;
        if (!(out->v = calloc(cfg->ndepts, sizeof(*out->v))))
                return -ENOMEM;
        for (size_t i = 0; i < cfg->ndepts; i++)
                out->v[i] = (dept){ .path = (char *)cfg->dept_names[i], .weight = 1, .cap = 1, .leaf = true };
        out->n = cfg->ndepts;
        cc->depts = out;
        cc->fairness = (int)cfg->fair_algo;
        return 0;
}

int sim_run(const sim_config *cfg, sim_result *out, char *err, size_t errlen) {
        sim s = { .cfg = cfg, .out = out };
        *out = (sim_result){ 0 };
        ctl_config cc = { .policy = cfg->policy,
                          .order = cfg->order,
                          .dispatcher = cfg->dispatcher,
                          .scan = cfg->scan,
                          .max_pending = SIZE_MAX,
                          .kill_grace_ms = 0,
                          .agent_timeout_usec = INT64_MAX,
                          .node_lost_timeout_usec = INT64_MAX,
                          .unwatched = true };
        depts fair_depts = { 0 };
        int fr = fair_tree(cfg, &cc, &fair_depts);
        ctl_init(&s.st, &cc, &sim_actions, &s);
        int r = fr < 0 ? fr : cfg->nmachines == 0 ? -EINVAL : add_machines(&s, err, errlen);
        if (r == 0 && fair_depts.n)
                r = ctl_set_depts(&s.st, (int)cfg->fair_algo);
        bool told = r < 0 && cfg->nmachines; /* add_machines said why */
        if (r == 0 && cfg->ndepts && !(s.refused = calloc(cfg->ndepts, sizeof(*s.refused))))
                r = -ENOMEM;
        if (r == 0 && cfg->ndepts && s.capacity.gpus > 0 && !(s.dept_gpu = calloc(cfg->ndepts, sizeof(*s.dept_gpu))))
                r = -ENOMEM;
        if (r == 0)
                r = run_events(&s);
        if (r == 0)
                r = collect(&s);
        if (r == -EINVAL && !told)
                snprintf(err, errlen,
                         cfg->nmachines ? "the job source gave a job out of arrival order or of no department"
                                        : "a simulation needs at least one machine");
        else if (r < 0 && !told)
                snprintf(err, errlen, "simulation failed: %s", strerror(-r));
        if (r < 0)
                sim_result_free(out);
        ctl_free(&s.st); /* before the owners: its jobs borrow their strings */
        for (size_t i = 0; i < s.nowners; i++)
                job_free(&s.owners[i]);
        free(s.owners);
        free(s.dept_gpu);
        free(fair_depts.v);
        evq_free(&s.events);
        free(s.arrival);
        free(s.runtime);
        free(s.start);
        free(s.end);
        free(s.dept);
        free(s.refused);
        free(s.mcpu);
        free(s.req);
        free(s.machine);
        fam_free(&s.families);
        return r;
}

void sim_result_free(sim_result *r) {
        free(r->samples);
        free(r->depts);
        r->samples = NULL;
        r->nsamples = 0;
        r->depts = NULL;
        r->ndepts = 0;
}
