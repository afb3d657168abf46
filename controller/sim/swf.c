/* swf.c - Standard Workload Format traces (see swf.h). */
#include "swf.h"
#include "lines.h"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define SWF_FIELDS 18

/* Parse one job line into f[]. Returns 0, or -EINVAL with what set. */
static int parse_fields(char *line, double f[SWF_FIELDS], const char **what) {
        char *save = NULL, *tok = strtok_r(line, " \t\r\n", &save);
        int n = 0;
        for (; tok; tok = strtok_r(NULL, " \t\r\n", &save)) {
                char *end;
                if (n == SWF_FIELDS) {
                        *what = "more than 18 fields";
                        return -EINVAL;
                }
                f[n++] = strtod(tok, &end);
                if (*end || !isfinite(f[n - 1])) {
                        *what = "a field is not a number";
                        return -EINVAL;
                }
        }
        if (n != SWF_FIELDS) {
                *what = "fewer than 18 fields";
                return -EINVAL;
        }
        return 0;
}

/* The first known (non-negative) of two values, else the fallback. */
static double known(double a, double b, double fallback) { return a >= 0 ? a : b >= 0 ? b : fallback; }

/* The job of a line whose submit time, run time and processors are known. */
static int job_from_fields(const double f[SWF_FIELDS], double procs, int64_t mem_per_proc, sim_job *j,
                           const char **what) {
        if (procs > 1e6) {
                *what = "more than 10^6 processors";
                return -EINVAL;
        }
        if (f[1] > SWF_TIME_MAX || f[3] > SWF_TIME_MAX) {
                *what = "submit or run time beyond 10^9 s";
                return -EINVAL;
        }
        /* in double, and checked before the conversion: a corrupt field reads as 1e80 KB */
        double mem = fmax(1 << 20, known(f[9], f[6], (double)mem_per_proc / 1024) * 1024 * procs);
        if (mem > (double)RES_MEM_MAX) {
                *what = "memory beyond 1 EiB";
                return -EINVAL;
        }
        *j = (sim_job){
                .arrival = f[1],
                .runtime = f[3],
                .req = { .mcpu = (int64_t)fmax(1, (double)llround(procs * 1000)), .mem = (int64_t)mem },
                .limit = f[8] > 0 && f[8] <= SWF_TIME_MAX ? f[8] : 0,
        };
        return 0;
}

/* Number the job's department, from its user (field 12) or group (13) ID. Returns 0 or -errno
 * with what set. */
static int set_dept(swf_trace *t, const double f[SWF_FIELDS], sim_dept_key dept_by, sim_job *j, const char **what) {
        if (dept_by == SIM_DEPT_NONE)
                return 0;
        double id = f[dept_by == SIM_DEPT_USER ? 11 : 12];
        char name[32] = "unknown";
        if (id != -1 && (id < 0 || id > 1e15 || id != floor(id))) {
                *what = dept_by == SIM_DEPT_USER ? "the user ID is not -1 or a whole number"
                                                 : "the group ID is not -1 or a whole number";
                return -EINVAL;
        }
        if (id >= 0)
                snprintf(name, sizeof(name), "%c%.0f", dept_by == SIM_DEPT_USER ? 'u' : 'g', id);
        int r = sim_names_intern(&t->depts, name, &j->dept);
        if (r < 0)
                *what = r == -ENOMEM ? "out of memory" : "more than 2^32 departments";
        return r;
}

static int by_arrival(const void *a, const void *b) {
        double x = ((const sim_job *)a)->arrival, y = ((const sim_job *)b)->arrival;
        return (x > y) - (x < y);
}

/* Add the job on line to t, or count it as skipped when the format says a value it needs is
 * unknown (-1): its submit time, its run time (a job cancelled before it ran), or its
 * processors, requested (field 8) or else allocated (5). Returns 0, or -errno with what set. */
static int add_line(swf_trace *t, char *line, int64_t mem_per_proc, sim_dept_key dept_by, const char **what) {
        double f[SWF_FIELDS];
        sim_job j;
        int r = parse_fields(line, f, what);
        if (r < 0)
                return r;
        double procs = f[7] > 0 ? f[7] : f[4] > 0 ? f[4] : -1;
        if (f[3] < 0) {
                t->skipped++;
                return 0;
        }
        if (procs < 0) {
                t->no_procs++;
                return 0;
        }
        if (f[1] < 0) {
                t->no_submit++;
                return 0;
        }
        if ((r = job_from_fields(f, procs, mem_per_proc, &j, what)) < 0 || (r = set_dept(t, f, dept_by, &j, what)) < 0)
                return r;
        if ((r = sim_jobs_push(&t->jobs, &j)) < 0)
                *what = "out of memory";
        return r;
}

int swf_load(const char *path, int64_t mem_per_proc, sim_dept_key dept_by, swf_trace *out, char *err, size_t errlen) {
        sim_lines in;
        *out = (swf_trace){ 0 };
        int r = sim_lines_open(&in, path, err, errlen);
        if (r < 0)
                return r;
        const char *what = NULL;
        while (r == 0 && (r = sim_lines_next(&in, &what)) > 0) {
                r = 0;
                const char *p = in.line + strspn(in.line, " \t");
                if (*p == '\0' || *p == ';') /* a blank line, a comment or the header's */
                        continue;
                r = add_line(out, in.line, mem_per_proc, dept_by, &what);
        }
        if (r == 0 && out->jobs.n == 0)
                snprintf(err, errlen, "%s: no job with a submit time, a run time and processors", in.name);
        else if (r < 0)
                snprintf(err, errlen, "%s:%zu: %s", in.name, in.lineno + (r == -EIO), what);
        if (r == 0 && out->jobs.n == 0)
                r = -EINVAL;
        sim_lines_close(&in);
        if (r < 0) {
                swf_free(out);
                return r;
        }
        qsort(out->jobs.v, out->jobs.n, sizeof(*out->jobs.v), by_arrival);
        double first = out->jobs.v[0].arrival;
        for (size_t i = 0; i < out->jobs.n; i++)
                out->jobs.v[i].arrival -= first;
        return 0;
}

void swf_free(swf_trace *t) {
        sim_jobs_free(&t->jobs);
        sim_names_free(&t->depts);
        *t = (swf_trace){ 0 };
}
