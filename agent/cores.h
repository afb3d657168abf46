/* cores.h - which of the agent's cores each whole-CPU job holds (its cpuset).
 *
 * The agent offers the first ceil(capacity) CPUs it may run on (its affinity: an agent with
 * --cpus 2 on a 2-core host has cores 0-1). A job asking for a whole number N of CPUs holds N of
 * them alone; every other job (a fraction of a CPU) shares the cores nobody holds when it
 * starts. The controller accounts CPUs in millicores, so whole jobs never ask for more cores
 * than are free. Pure bookkeeping: the caller reads the affinity and writes the cgroups. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define CORES_MAX      1024
#define CORES_LIST_MAX 4096 /* a cpuset list such as "0-3,8,10-11" */

typedef struct cores {
        size_t n;                   /* the agent's cores */
        int cpu[CORES_MAX];         /* their CPU numbers, ascending */
        uint64_t holder[CORES_MAX]; /* the job holding each, 0 when free */
} cores;

/* The first ceil(mcpu / 1000) of the CPUs in allowed (ascending, nallowed of them), all free.
 * Returns 0 or -EINVAL when allowed is empty. */
int cores_init(cores *c, const int *allowed, size_t nallowed, int64_t mcpu);
/* Whether mcpu asks for whole cores (1000, 2000, ...). */
bool cores_whole(int64_t mcpu);
/* Give job mcpu / 1000 free cores, the lowest first, and write their list into buf. Returns 0,
 * -EBUSY when too few are free (nothing taken), or -ENOBUFS. */
int cores_take(cores *c, uint64_t job, int64_t mcpu, char *buf, size_t len);
/* The list of the cores nobody holds (all of them when every one is held) into buf. Returns 0
 * or -ENOBUFS. */
int cores_shared(const cores *c, char *buf, size_t len);
/* Mark the cores of list ("0-1,3") as job's, as its cgroup says after a restart. Returns 0, or
 * -EINVAL for a bad list or a core not ours or held by another job (nothing marked). */
int cores_hold(cores *c, uint64_t job, const char *list);
/* Free job's cores. */
void cores_release(cores *c, uint64_t job);
/* How many CPUs list names, or -EINVAL. */
int cores_count(const char *list);
