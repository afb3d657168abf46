/* jobenv.c - a launch's environment and output names on its node (jobenv.h). */
#include "jobenv.h"
#include "outpat.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *const jobenv_thread_vars[] = { "OMP_NUM_THREADS",
                                           "OPENBLAS_NUM_THREADS",
                                           "MKL_NUM_THREADS",
                                           "NUMEXPR_NUM_THREADS",
                                           "VECLIB_MAXIMUM_THREADS",
                                           "BLIS_NUM_THREADS",
                                           NULL };

/* The COLONY_* variables: what Slurm's SLURM_JOB_ID and the like say, under colony's names. */
static int set_colony_vars(launch_msg *m, const char *node) {
        char id[24], first[24], index[16], cpus[24], mem[24];
        int64_t whole = (m->spec.req.mcpu + 999) / 1000;
        const struct {
                const char *name, *value;
                bool array_only;
        } vars[] = {
                { "COLONY_JOB_ID", id, false },         { "COLONY_JOB_NAME", m->spec.name, false },
                { "COLONY_NODE", node, false },         { "COLONY_CPUS", cpus, false },
                { "COLONY_MEM", mem, false },           { "COLONY_SUBMIT_DIR", m->spec.cwd, false },
                { "COLONY_ARRAY_JOB_ID", first, true }, { "COLONY_ARRAY_TASK_ID", index, true },
                { JOB_ARRAY_INDEX_VAR, index, true },
        };

        snprintf(id, sizeof(id), "%" PRIu64, m->id);
        snprintf(first, sizeof(first), "%" PRIu64, m->array_first);
        snprintf(index, sizeof(index), "%" PRIu32, m->array_index);
        snprintf(cpus, sizeof(cpus), "%" PRId64, whole > 0 ? whole : 1);
        snprintf(mem, sizeof(mem), "%" PRId64, m->spec.req.mem >> 20); /* MiB, as Slurm's SLURM_MEM_PER_NODE */
        for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
                if ((!vars[i].array_only || m->array_first) && vars[i].value &&
                    job_env_set(&m->spec.env, vars[i].name, vars[i].value, true) < 0)
                        return -ENOMEM;
        for (size_t i = 0; jobenv_thread_vars[i]; i++)
                if (job_env_set(&m->spec.env, jobenv_thread_vars[i], cpus, false) < 0)
                        return -ENOMEM;
        return 0;
}

/* Expand *path (NULL: none) in place. */
static int expand(char **path, const outpat_vars *v) {
        char *out;
        int r;

        if (!*path)
                return 0;
        if ((r = outpat_expand(*path, v, &out)) < 0)
                return r;
        free(*path);
        *path = out;
        return 0;
}

int jobenv_prepare(launch_msg *m, const char *node, char *err, size_t errlen) {
        const outpat_vars v = { .id = m->id,
                                .array_first = m->array_first,
                                .array_index = m->array_index,
                                .user = m->user,
                                .name = m->spec.name,
                                .node = node };
        int r = set_colony_vars(m, node);

        if (r == 0 && (r = expand(&m->spec.stdout_path, &v)) == 0)
                r = expand(&m->spec.stderr_path, &v);
        if (r < 0)
                snprintf(err, errlen, "%s",
                         r == -ENOMEM ? "out of memory setting up the job's environment"
                                      : "output path: unknown %-pattern");
        return r;
}

int jobenv_gpus(launch_msg *m, const char *ids, char *err, size_t errlen) {
        static const char *const vars[] = { "COLONY_GPUS", "CUDA_VISIBLE_DEVICES", "ROCR_VISIBLE_DEVICES" };

        for (size_t i = 0; *ids && i < sizeof(vars) / sizeof(vars[0]); i++)
                if (job_env_set(&m->spec.env, vars[i], ids, true) < 0) {
                        snprintf(err, errlen, "out of memory setting up the job's environment");
                        return -ENOMEM;
                }
        return 0;
}
