/* fit.c - First-Fit placement. Later heuristics (Best/Worst-Fit, Mix-Fit, Max-Jobs) join it here. */
#include "sched.h"

static int first_machine_that_fits(const sched_machine *machines, size_t nmachines, res_t req) {
        for (size_t i = 0; i < nmachines; i++)
                if (machines[i].up && res_fits(req, machines[i].free))
                        return (int)i;
        return -1;
}

size_t sched_first_fit(sched_machine *machines, size_t nmachines, const sched_job *jobs, size_t njobs,
                       sched_order order, sched_assignment *out) {
        size_t placed = 0;

        for (size_t j = 0; j < njobs; j++) {
                int m = first_machine_that_fits(machines, nmachines, jobs[j].req);
                if (m < 0) {
                        if (order == SCHED_STRICT_FIFO)
                                break;
                        continue;
                }
                machines[m].free = res_sub(machines[m].free, jobs[j].req);
                out[placed++] = (sched_assignment){ .job_id = jobs[j].id, .machine = machines[m].index };
        }
        return placed;
}

int sched_can_ever_fit(const sched_machine *machines, size_t nmachines, res_t req) {
        for (size_t i = 0; i < nmachines; i++)
                if (machines[i].up && res_fits(req, machines[i].capacity))
                        return 1;
        return 0;
}
