/* jobcores.c - the agent's cores handed to its jobs through their cpusets (cores.h). */
#include "agent-internal.h"
#include "jobsync.h"
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

/* Move the jobs that share cores onto those nobody holds now: by the sync thread, in order,
 * since a write to a cgroup's cpuset.cpus waits on the kernel's cgroup locks as a mkdir does. */
static void reshare(agent *a) {
        char list[CORES_LIST_MAX];
        if (cores_shared(a->cores, list, sizeof(list)) < 0)
                return;
        for (agent_job *j = jobtab_first(&a->jobs); j; j = j->next) {
                int r;
                if (!j->shares_cores || j->ending || j->queued)
                        continue;
                if ((r = jobsync_set_cpus(a->sync, a->cg, j->id, j->cgroup, list)) < 0)
                        log_errno(LOG_WARNING, r, JOB_FMT ": cannot queue its move to the shared cores %s", JOB_ARGS(j),
                                  list);
        }
}

const char *jobcores_take(agent_job *j, int64_t mcpu, char *buf, size_t len) {
        cores *c = j->agent->cores;
        int r;
        if (!c)
                return NULL;
        j->shares_cores = !cores_whole(mcpu);
        r = j->shares_cores ? cores_shared(c, buf, len) : cores_take(c, j->id, mcpu, buf, len);
        if (r < 0) { /* an agent offering more CPUs than it has cores (colony up --agent-cpus 200) */
                log_info(JOB_FMT ": fewer than %lld of the agent's %zu cores are free: it shares them all", JOB_ARGS(j),
                         (long long)(mcpu / 1000), c->n);
                j->shares_cores = false; /* nothing to move: it is on all of them */
                return NULL;
        }
        if (!j->shares_cores)
                reshare(j->agent);
        return buf;
}

void jobcores_adopt(agent_job *j) {
        cores *c = j->agent->cores;
        char *cpus = NULL;
        int64_t mcpu;
        if (c && cg_job_cpus(j->agent->cg, j->cgroup, &cpus, &mcpu) == 0) {
                if (cores_whole(mcpu) && cores_count(cpus) == mcpu / 1000 && cores_hold(c, j->id, cpus) == 0)
                        log_info(JOB_FMT ": holds cores %s", JOB_ARGS(j), cpus);
                else
                        j->shares_cores = true;
        }
        free(cpus);
}

void jobcores_release(agent_job *j) {
        if (!j->agent->cores || j->shares_cores)
                return;
        cores_release(j->agent->cores, j->id);
        reshare(j->agent);
}
