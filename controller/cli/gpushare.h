/* gpushare.h - the GPUs each agent of a local cluster (colony up) offers: the devices, named by
 * --agent-gpu-devices or found on the host, split among the agents, so that no GPU is offered
 * twice. */
#pragma once
#include "gpus.h"
#include <stddef.h>

/* Write into buf the device nodes ("/dev/nvidia0,/dev/nvidia1"; "" for none) of agent i's
 * share of g among n agents: consecutive devices, the first agents taking one more when they
 * do not divide evenly. Returns 0, or -ENOBUFS when buf is too small. */
int gpushare_of(const gpus *g, size_t i, size_t n, char *buf, size_t len);
