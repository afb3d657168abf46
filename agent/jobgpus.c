/* jobgpus.c - the agent's GPUs handed to its jobs (gpus.h): their indexes in the job's
 * environment and record, the others' device nodes denied to its cgroup. */
#include "agent-internal.h"
#include "log.h"
#include <errno.h>
#include <stdio.h>

int jobgpus_take(agent_job *j, int64_t n, cg_device *deny, size_t *ndeny, char *err, size_t errlen) {
        gpus *g = &j->agent->cfg.gpus;
        int r = gpus_take(g, j->id, n, j->gpu_ids, sizeof(j->gpu_ids));

        if (r < 0) {
                snprintf(err, errlen, "asks for %lld GPUs, fewer are free on this agent (of %zu)", (long long)n, g->n);
                j->gpu_ids[0] = '\0';
                return r;
        }
        *ndeny = gpus_deny(g, j->id, deny);
        return 0;
}

void jobgpus_adopt(agent_job *j, const char *ids) {
        if (!*ids)
                return;
        if (gpus_hold(&j->agent->cfg.gpus, j->id, ids) < 0) {
                log_warning(JOB_FMT ": its record's GPUs %s are not this agent's free GPUs: it is counted on none",
                            JOB_ARGS(j), ids);
                return;
        }
        snprintf(j->gpu_ids, sizeof(j->gpu_ids), "%s", ids);
        log_info(JOB_FMT ": holds GPUs %s", JOB_ARGS(j), ids);
}

void jobgpus_release(agent_job *j) { gpus_release(&j->agent->cfg.gpus, j->id); }
