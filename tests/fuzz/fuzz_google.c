/* fuzz_google.c - Google cluster-data 2011 tables (controller/sim/google.c), as colony sim
 * --google and --google-machines read them: the input as a task_events table, then the job
 * stream, then the same input as a machine_events table. */
#include "fuzz_file.h"
#include "google.h"
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What google.h promises the simulator: arrivals from 0, in order; runtimes within
 * SIM_TIME_MAX; positive requests within res_in_range; known departments; every task counted
 * once at most. */
static void check_tasks(google_trace *t, sim_dept_key by) {
        sim_job j;
        double last = 0;
        if (t->jobs.n + t->never_ran + t->unfinished + t->no_submit + t->no_request > t->tasks)
                abort();
        while (sim_jobs_next(&t->jobs, &j) == 1) {
                if (j.arrival < last || j.arrival > SIM_TIME_MAX || !(j.runtime >= 0 && j.runtime <= SIM_TIME_MAX) ||
                    j.req.mcpu <= 0 || j.req.mem <= 0 || !res_in_range(j.req) ||
                    (by == SIM_DEPT_NONE ? j.dept != 0 : j.dept >= t->depts.n))
                        abort();
                last = j.arrival;
        }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        static const res_t machine = { .mcpu = 64000, .mem = (int64_t)256 << 30 };
        sim_dept_key by = (sim_dept_key[]){ SIM_DEPT_USER, SIM_DEPT_CLASS, SIM_DEPT_NONE }[size % 3];
        google_trace t;
        google_machines m;
        char err[256];
        const char *path = fuzz_file(data, size);
        if (google_load_tasks(path, machine, by, &t, err, sizeof(err)) == 0) {
                check_tasks(&t, by);
                google_free(&t);
        }
        if (google_load_machines(path, machine, &m, err, sizeof(err)) == 0) {
                for (size_t i = 0; i < m.n; i++)
                        if (m.capacity[i].mcpu <= 0 || m.capacity[i].mem <= 0 || !res_in_range(m.capacity[i]))
                                abort();
                google_machines_free(&m);
        }
        return 0;
}
