/* google.c - Google cluster-data 2011 tables (see google.h).
 *
 * The task_events table is read in one pass: a hash table of tasks (open addressing, linear
 * probing, doubled when half full) follows each task through its first run, and the job it
 * becomes takes its slot in arrival order at its SUBMIT, so the stream needs no sort. */
#include "google.h"
#include "lines.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TASK_FIELDS    13
#define MACHINE_FIELDS 6
#define MAX_FIELDS     13
#define AFTER_TRACE    ((uint64_t)INT64_MAX) /* the schema's time of events after the end of the trace */
#define AMOUNT_MAX     1e6                   /* normalized requests and capacities: 1.0 is the largest machine */

enum { EV_SUBMIT, EV_SCHEDULE, EV_EVICT, EV_FAIL, EV_FINISH, EV_KILL, EV_LOST, EV_UPDATE_PENDING, EV_UPDATE_RUNNING };
enum { MACHINE_ADD, MACHINE_REMOVE, MACHINE_UPDATE };

/* A CSV table read line by line, each line split at commas in place. */
typedef struct csv {
        sim_lines in;
        char *field[MAX_FIELDS];
} csv;

/* Read the next line that is not blank into exactly n fields; a first line that does not start
 * with a digit is a header (the field names some exports add), skipped. Returns 1, 0 at the
 * end, or -errno with what set. */
static int csv_next(csv *c, size_t n, const char **what) {
        int r;
        do {
                if ((r = sim_lines_next(&c->in, what)) <= 0)
                        return r;
        } while (c->in.len == 0 || (c->in.lineno == 1 && (c->in.line[0] < '0' || c->in.line[0] > '9')));
        size_t k = 0;
        for (char *p = c->in.line, *comma;; p = comma + 1) {
                if (k == n) {
                        *what = n == TASK_FIELDS ? "more than 13 fields" : "more than 6 fields";
                        return -EINVAL;
                }
                c->field[k++] = p;
                if (!(comma = strchr(p, ',')))
                        break;
                *comma = '\0';
        }
        if (k < n) {
                *what = n == TASK_FIELDS ? "fewer than 13 fields" : "fewer than 6 fields";
                return -EINVAL;
        }
        return 1;
}

/* s as a whole number of at most max. Returns 0 or -EINVAL (empty, not digits, beyond max). */
static int parse_whole(const char *s, uint64_t max, uint64_t *out) {
        size_t len = strlen(s);
        if (len == 0 || len > 20 || strspn(s, "0123456789") != len)
                return -EINVAL;
        errno = 0;
        unsigned long long v = strtoull(s, NULL, 10);
        if (errno || v > max)
                return -EINVAL;
        *out = v;
        return 0;
}

/* s as an optional whole number: empty is fine. */
static bool whole_or_empty(const char *s, uint64_t max) {
        uint64_t v;
        return !*s || parse_whole(s, max, &v) == 0;
}

/* s as a normalized amount: -1 when empty, else a number in [0, AMOUNT_MAX]. Returns 0 or -EINVAL. */
static int parse_amount(const char *s, double *out) {
        char *end;
        if (!*s) {
                *out = -1;
                return 0;
        }
        double v = strtod(s, &end);
        if (*end || !(v >= 0 && v <= AMOUNT_MAX))
                return -EINVAL;
        *out = v;
        return 0;
}

/* The time field: microseconds, within SIM_TIME_MAX seconds, or AFTER_TRACE. Returns 0 or -EINVAL. */
static int parse_time(const char *s, uint64_t *usec, const char **what) {
        if (parse_whole(s, AFTER_TRACE, usec) < 0) {
                *what = "the time is not a whole number of microseconds";
                return -EINVAL;
        }
        if (*usec != AFTER_TRACE && (double)*usec > SIM_TIME_MAX * 1e6) {
                *what = "time beyond 10^9 s";
                return -EINVAL;
        }
        return 0;
}

/* A normalized amount times the machine's: at least min, 0 when unknown (amount -1). Returns 0 or
 * -EINVAL when beyond max. */
static int scale_amount(double amount, int64_t machine, int64_t min, int64_t max, int64_t *out) {
        double v = amount * (double)machine;
        if (v > (double)max)
                return -EINVAL;
        *out = amount < 0 ? 0 : (int64_t)fmax((double)min, (double)llround(v));
        return 0;
}

/* The CPU (cpu_field) and memory fields scaled to machine into *r (0 where unknown). */
static int parse_capacity(char *const *f, size_t cpu_field, res_t machine, res_t *r, const char **what) {
        double cpu, mem;
        if (parse_amount(f[cpu_field], &cpu) < 0 || parse_amount(f[cpu_field + 1], &mem) < 0) {
                *what = "CPU or memory is not empty or a number from 0 to 10^6";
                return -EINVAL;
        }
        if (scale_amount(cpu, machine.mcpu, 1, RES_MCPU_MAX, &r->mcpu) < 0 ||
            scale_amount(mem, machine.mem, 1 << 20, RES_MEM_MAX, &r->mem) < 0) {
                *what = "CPU or memory beyond what colony counts";
                return -EINVAL;
        }
        return 0;
}

/* ---- task_events ---- */

enum { T_EMPTY, T_PENDING, T_RUNNING, T_DONE };

typedef struct task {
        uint64_t job, index;
        uint64_t start; /* microseconds, while running */
        size_t slot;    /* its job in google_trace.jobs */
        uint8_t state;
} task;

typedef struct loader {
        google_trace *out;
        res_t machine;
        sim_dept_key dept_by;
        task *tasks; /* the hash table */
        size_t ntasks, nslots;
        uint64_t last_time;
} loader;

static size_t task_hash(uint64_t job, uint64_t index) {
        uint64_t x = job * 0x9e3779b97f4a7c15ULL ^ index; /* splitmix64's finalizer over both */
        x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
        x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
        return (size_t)(x ^ (x >> 31));
}

/* The task's slot, or the empty slot where it would go. nslots is a power of two. */
static task *task_slot(task *tasks, size_t nslots, uint64_t job, uint64_t index) {
        size_t i = task_hash(job, index) & (nslots - 1);
        while (tasks[i].state != T_EMPTY && (tasks[i].job != job || tasks[i].index != index))
                i = (i + 1) & (nslots - 1);
        return &tasks[i];
}

/* Make room for one more task. Returns 0 or -ENOMEM. */
static int grow_tasks(loader *L) {
        if ((L->ntasks + 1) * 2 <= L->nslots)
                return 0;
        size_t nslots = L->nslots ? L->nslots * 2 : 1024;
        task *v = calloc(nslots, sizeof(*v));
        if (!v)
                return -ENOMEM;
        for (size_t i = 0; i < L->nslots; i++)
                if (L->tasks[i].state != T_EMPTY)
                        *task_slot(v, nslots, L->tasks[i].job, L->tasks[i].index) = L->tasks[i];
        free(L->tasks);
        L->tasks = v;
        L->nslots = nslots;
        return 0;
}

/* The department of the task whose SUBMIT is on f, into *dept. */
static int task_dept(loader *L, char *const *f, uint32_t *dept, const char **what) {
        char name[32] = "unknown";
        const char *user = f[6];
        uint64_t cls;
        if (L->dept_by == SIM_DEPT_NONE)
                return 0;
        if (L->dept_by == SIM_DEPT_CLASS && parse_whole(f[7], 3, &cls) == 0)
                snprintf(name, sizeof(name), "class%llu", (unsigned long long)cls);
        int r = sim_names_intern(&L->out->depts, L->dept_by == SIM_DEPT_USER && *user ? user : name, dept);
        if (r < 0)
                *what = r == -ENOMEM ? "out of memory" : "more than 2^32 departments";
        return r;
}

/* A new task: a job in the next slot if this is its SUBMIT, else one to leave out. */
static int new_task(loader *L, task *t, uint64_t job, uint64_t index, uint64_t type, uint64_t time, char *const *f,
                    res_t req, const char **what) {
        google_trace *out = L->out;
        *t = (task){ .job = job, .index = index, .state = T_DONE };
        L->ntasks++;
        out->tasks++;
        if (type != EV_SUBMIT) {
                out->no_submit++;
                return 0;
        }
        sim_job j = { .arrival = (double)time / 1e6, .runtime = -1, .req = req };
        int r = task_dept(L, f, &j.dept, what);
        if (r == 0 && (r = sim_jobs_push(&out->jobs, &j)) < 0)
                *what = "out of memory";
        if (r < 0)
                return r;
        t->state = T_PENDING;
        t->slot = out->jobs.n - 1;
        return 0;
}

/* Take the known requests of a pending task's event. */
static void update_request(sim_job *j, res_t req) {
        if (req.mcpu)
                j->req.mcpu = req.mcpu;
        if (req.mem)
                j->req.mem = req.mem;
}

/* Move a known task along its first run. */
static void task_event(google_trace *out, task *t, uint64_t type, uint64_t time, res_t req) {
        bool ends = type >= EV_EVICT && type <= EV_LOST;
        if (t->state == T_DONE) {
                out->resubmitted += type == EV_SUBMIT;
        } else if (t->state == T_PENDING && ends) {
                out->never_ran++;
                t->state = T_DONE;
        } else if (t->state == T_PENDING && type != EV_UPDATE_RUNNING) {
                update_request(&out->jobs.v[t->slot], req); /* SUBMIT again, UPDATE_PENDING, SCHEDULE */
                if (type == EV_SCHEDULE) {
                        t->state = T_RUNNING;
                        t->start = time;
                }
        } else if (t->state == T_RUNNING && ends) {
                sim_job *j = &out->jobs.v[t->slot];
                if (j->req.mcpu && j->req.mem)
                        j->runtime = (double)(time - t->start) / 1e6;
                else
                        out->no_request++;
                t->state = T_DONE;
        }
}

/* Check the fields the model does not use, so that a broken line is caught wherever it breaks. */
static int check_other_fields(char *const *f, const char **what) {
        double disk;
        if (!whole_or_empty(f[1], 2) || !whole_or_empty(f[4], UINT64_MAX) || !whole_or_empty(f[7], 3) ||
            !whole_or_empty(f[8], 1000) || parse_amount(f[11], &disk) < 0 || !whole_or_empty(f[12], 1)) {
                *what = "missing info, machine ID, class, priority, disk or restriction is not what the schema says";
                return -EINVAL;
        }
        for (const char *u = f[6]; *u; u++)
                if (*u <= ' ' || *u > '~' || *u == '"') {
                        *what = "the user is not a printable name";
                        return -EINVAL;
                }
        return 0;
}

static int task_line(loader *L, char *const *f, const char **what) {
        uint64_t time, job, index, type;
        res_t req = { 0 };
        int r = parse_time(f[0], &time, what);
        if (r < 0)
                return r;
        if (parse_whole(f[2], UINT64_MAX, &job) < 0 || parse_whole(f[3], UINT64_MAX, &index) < 0) {
                *what = "the job ID or task index is not a whole number";
                return -EINVAL;
        }
        if (parse_whole(f[5], EV_UPDATE_RUNNING, &type) < 0) {
                *what = "the event type is not 0 to 8";
                return -EINVAL;
        }
        if ((r = check_other_fields(f, what)) < 0 || (r = parse_capacity(f, 9, L->machine, &req, what)) < 0)
                return r;
        if (time == AFTER_TRACE)
                return 0;
        if (time < L->last_time) {
                *what = "time goes backwards (the events must be in time order)";
                return -EINVAL;
        }
        L->last_time = time;
        if ((r = grow_tasks(L)) < 0) {
                *what = "out of memory";
                return r;
        }
        task *t = task_slot(L->tasks, L->nslots, job, index);
        if (t->state == T_EMPTY)
                return new_task(L, t, job, index, type, time, f, req, what);
        task_event(L->out, t, type, time, req);
        return 0;
}

/* Drop the jobs whose first run did not end, counting the unfinished, and start arrivals at 0. */
static void finish_tasks(loader *L) {
        google_trace *out = L->out;
        for (size_t i = 0; i < L->nslots; i++)
                out->unfinished += L->tasks[i].state == T_PENDING || L->tasks[i].state == T_RUNNING;
        size_t kept = 0;
        for (size_t i = 0; i < out->jobs.n; i++)
                if (out->jobs.v[i].runtime >= 0)
                        out->jobs.v[kept++] = out->jobs.v[i];
        out->jobs.n = kept;
        for (size_t i = kept; i-- > 0;)
                out->jobs.v[i].arrival -= out->jobs.v[0].arrival;
}

int google_load_tasks(const char *path, res_t machine, sim_dept_key dept_by, google_trace *out, char *err,
                      size_t errlen) {
        loader L = { .out = out, .machine = machine, .dept_by = dept_by };
        const char *what = NULL;
        csv c;
        *out = (google_trace){ 0 };
        int r = sim_lines_open(&c.in, path, err, errlen);
        if (r < 0)
                return r;
        while ((r = csv_next(&c, TASK_FIELDS, &what)) > 0 && (r = task_line(&L, c.field, &what)) == 0)
                ;
        if (r == 0)
                finish_tasks(&L);
        if (r < 0)
                snprintf(err, errlen, "%s:%zu: %s", c.in.name, c.in.lineno + (r == -EIO), what);
        else if (out->jobs.n == 0)
                snprintf(err, errlen, "%s: no task ran (a job is a task's first run, from SUBMIT to its end)",
                         c.in.name);
        if (r == 0 && out->jobs.n == 0)
                r = -EINVAL;
        if (r < 0)
                google_free(out);
        sim_lines_close(&c.in);
        free(L.tasks);
        return r;
}

void google_free(google_trace *t) {
        sim_jobs_free(&t->jobs);
        sim_names_free(&t->depts);
        *t = (google_trace){ 0 };
}

/* ---- machine_events ---- */

typedef struct machine_id {
        uint64_t id;
        size_t lineno;
} machine_id;

typedef struct machine_loader {
        google_machines *out;
        machine_id *ids; /* of the machines added at time 0, parallel to out->capacity */
        size_t cap;
} machine_loader;

static int add_machine(machine_loader *M, uint64_t id, size_t lineno, res_t capacity) {
        google_machines *out = M->out;
        if (out->n == M->cap) {
                size_t cap = M->cap ? M->cap * 2 : 1024;
                res_t *v = realloc(out->capacity, cap * sizeof(*v));
                if (v)
                        out->capacity = v;
                machine_id *ids = v ? realloc(M->ids, cap * sizeof(*ids)) : NULL;
                if (!ids)
                        return -ENOMEM;
                M->ids = ids;
                M->cap = cap;
        }
        out->capacity[out->n] = capacity;
        M->ids[out->n++] = (machine_id){ id, lineno };
        return 0;
}

static int machine_line(machine_loader *M, char *const *f, size_t lineno, res_t machine, const char **what) {
        uint64_t time, id, type;
        res_t capacity = { 0 };
        int r = parse_time(f[0], &time, what);
        if (r < 0)
                return r;
        if (parse_whole(f[1], UINT64_MAX, &id) < 0 || parse_whole(f[2], MACHINE_UPDATE, &type) < 0) {
                *what = "the machine ID is not a whole number or the event type is not 0 to 2";
                return -EINVAL;
        }
        if ((r = parse_capacity(f, 4, machine, &capacity, what)) < 0)
                return r;
        if (time != 0 || type != MACHINE_ADD)
                M->out->ignored++;
        else if (!capacity.mcpu || !capacity.mem)
                M->out->no_capacity++;
        else if ((r = add_machine(M, id, lineno, capacity)) < 0)
                *what = "out of memory";
        return r;
}

static int by_id(const void *a, const void *b) {
        const machine_id *x = a, *y = b;
        return x->id != y->id ? (x->id > y->id) - (x->id < y->id) : (x->lineno > y->lineno) - (x->lineno < y->lineno);
}

/* The line of the second ADD at time 0 of a machine added twice, or 0. Sorts ids. */
static size_t added_twice(machine_id *ids, size_t n) {
        if (n < 2)
                return 0;
        qsort(ids, n, sizeof(*ids), by_id);
        for (size_t i = 1; i < n; i++)
                if (ids[i].id == ids[i - 1].id)
                        return ids[i].lineno;
        return 0;
}

int google_load_machines(const char *path, res_t machine, google_machines *out, char *err, size_t errlen) {
        machine_loader M = { .out = out };
        const char *what = NULL;
        csv c;
        *out = (google_machines){ 0 };
        int r = sim_lines_open(&c.in, path, err, errlen);
        if (r < 0)
                return r;
        while ((r = csv_next(&c, MACHINE_FIELDS, &what)) > 0 &&
               (r = machine_line(&M, c.field, c.in.lineno, machine, &what)) == 0)
                ;
        size_t twice = r == 0 ? added_twice(M.ids, out->n) : 0;
        if (r < 0)
                snprintf(err, errlen, "%s:%zu: %s", c.in.name, c.in.lineno + (r == -EIO), what);
        else if (twice)
                snprintf(err, errlen, "%s:%zu: a machine added twice at time 0", c.in.name, twice);
        else if (out->n == 0)
                snprintf(err, errlen, "%s: no machine added at time 0 with a CPU and memory figure", c.in.name);
        if (r == 0 && (twice || out->n == 0))
                r = -EINVAL;
        if (r < 0)
                google_machines_free(out);
        sim_lines_close(&c.in);
        free(M.ids);
        return r;
}

void google_machines_free(google_machines *m) {
        free(m->capacity);
        *m = (google_machines){ 0 };
}
