/* jobcores.c - the agent's cores handed to its jobs through their cpusets (cores.h). */
#include "agent-internal.h"
#include "log.h"
#include <errno.h>
#include <sched.h>
#include <stdlib.h>

int jobcores_init(agent *a) {
        cpu_set_t set;
        int allowed[CORES_MAX];
        size_t n = 0;
        if (a->cfg.no_cpuset)
                return 0;
        if (sched_getaffinity(0, sizeof(set), &set) < 0) {
                log_errno(LOG_WARNING, -errno, "host=%s: cannot read our CPU affinity: jobs get no cores of their own",
                          a->cfg.name);
                return 0;
        }
        for (int cpu = 0; cpu < CPU_SETSIZE && n < CORES_MAX; cpu++)
                if (CPU_ISSET(cpu, &set))
                        allowed[n++] = cpu;
        if (!(a->cores = malloc(sizeof(*a->cores))))
                return -ENOMEM;
        if (cores_init(a->cores, allowed, n, a->cfg.capacity.mcpu) < 0) {
                free(a->cores);
                a->cores = NULL;
        }
        return 0;
}

const char *jobcores_take(agent_job *j, int64_t mcpu, char *buf, size_t len) {
        cores *c = j->agent->cores;
        int r;
        if (!c)
                return NULL;
        r = cores_whole(mcpu) ? cores_take(c, j->id, mcpu, buf, len) : cores_shared(c, buf, len);
        if (r < 0) {
                log_warning(JOB_FMT ": no %lld free cores of the agent's %zu: it shares them all", JOB_ARGS(j),
                            (long long)(mcpu / 1000), c->n);
                return NULL;
        }
        return buf;
}

void jobcores_adopt(agent_job *j) {
        cores *c = j->agent->cores;
        char *cpus = NULL;
        int64_t mcpu;
        if (c && cg_job_cpus(j->agent->cg, j->cgroup, &cpus, &mcpu) == 0 && cores_whole(mcpu) &&
            cores_count(cpus) == mcpu / 1000 && cores_hold(c, j->id, cpus) == 0)
                log_info(JOB_FMT ": holds cores %s", JOB_ARGS(j), cpus);
        free(cpus);
}

void jobcores_release(agent_job *j) {
        if (j->agent->cores)
                cores_release(j->agent->cores, j->id);
}
