/* fuzz_instance.c - the machines and jobs files of colony place and colony sim
 * (controller/cli/instance.c). One input is read as both: a file may hold either array. */
#include "fuzz_file.h"
#include "instance.h"
#include <stdlib.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        const char *path = fuzz_file(data, size);
        char err[512];
        inst_machines m = { 0 };
        sched_job *jobs;
        size_t n;
        if (inst_load_machines(path, &m, err, sizeof(err)) == 0)
                for (size_t i = 0; i < m.n; i++) /* what the policies rely on */
                        if (!res_in_range(m.machines[i].capacity) ||
                            !res_fits(m.machines[i].free, m.machines[i].capacity))
                                abort();
        inst_machines_free(&m);
        if (inst_load_jobs(path, &jobs, &n, err, sizeof(err)) == 0)
                for (size_t i = 0; i < n; i++)
                        if (jobs[i].id != i + 1 || jobs[i].req.mcpu <= 0 || jobs[i].req.mem <= 0 ||
                            !res_in_range(jobs[i].req))
                                abort();
        free(jobs);
        return 0;
}
