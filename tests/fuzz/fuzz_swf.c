/* fuzz_swf.c - Standard Workload Format traces (controller/sim/swf.c), as colony sim --trace reads
 * them: the whole file, then the job stream the simulator draws from it. */
#include "fuzz_file.h"
#include "swf.h"
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        swf_trace t;
        sim_job j;
        char err[256];
        if (swf_load(fuzz_file(data, size), (int64_t)1 << 30, SIM_DEPT_GROUP, &t, err, sizeof(err)) < 0)
                return 0;
        /* what swf.h promises the simulator: arrivals from 0, in order; requests it can add up */
        double last = 0;
        while (sim_jobs_next(&t.jobs, &j) == 1) {
                if (j.arrival < last || j.arrival > SWF_TIME_MAX || !(j.runtime >= 0 && j.runtime <= SWF_TIME_MAX) ||
                    j.req.mcpu <= 0 || j.req.mem <= 0 || !res_in_range(j.req))
                        abort();
                last = j.arrival;
        }
        swf_free(&t);
        return 0;
}
