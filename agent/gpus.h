/* gpus.h - the agent's GPUs and the jobs holding them.
 *
 * Each GPU is an index (0, 1, ...: its place in the agent's list, as CUDA_VISIBLE_DEVICES and
 * COLONY_GPUS name it) and its device node. A job asking for N GPUs holds N free ones alone
 * until it ends; the controller counts them as a pool, so a launch never asks for more than are
 * free. Pure bookkeeping: gpufind.h finds the devices, the caller writes the cgroups. */
#pragma once
#include "cgroup.h"
#include <stddef.h>
#include <stdint.h>

#define GPUS_MAX      64
#define GPUS_PATH_MAX 256
#define GPUS_LIST_MAX 256 /* "0,1,2,...,63" */

typedef struct gpu_dev {
        char path[GPUS_PATH_MAX]; /* its device node ("/dev/nvidia0") */
        cg_device dev;            /* the node's type and major:minor */
} gpu_dev;

typedef struct gpus {
        size_t n;
        gpu_dev dev[GPUS_MAX];
        uint64_t holder[GPUS_MAX]; /* the job holding each, 0 when free */
} gpus;

/* Give job n free GPUs, the lowest indexes first, and write their indexes into buf ("0,2";
 * "" for n 0). Returns 0, -EBUSY when fewer are free (nothing taken), or -ENOBUFS. */
int gpus_take(gpus *g, uint64_t job, int64_t n, char *buf, size_t len);
/* Mark the GPUs of list ("0,2") as job's, as its record says after a restart. Returns 0, or
 * -EINVAL for a bad list or an index not ours or held by another job (nothing marked). */
int gpus_hold(gpus *g, uint64_t job, const char *list);
/* Free job's GPUs. */
void gpus_release(gpus *g, uint64_t job);
/* The device nodes of every GPU job does not hold into out (room for GPUS_MAX): what its
 * cgroup must deny it. Returns how many. */
size_t gpus_deny(const gpus *g, uint64_t job, cg_device *out);
