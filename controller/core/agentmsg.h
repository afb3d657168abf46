/* agentmsg.h - what the controller reads from an agent's hello (docs/protocol.md, "Agent link"),
 * checked apart from the connection so that unit tests and tests/fuzz reach it. */
#pragma once
#include "proto.h"
#include "res.h"
#include <stddef.h>
#include <stdint.h>

typedef struct agent_hello {
        const char *name;        /* borrowed from the message */
        res_t capacity;          /* mcpu, mem > 0; pids 0 when absent */
        const char *cgroup_mode; /* borrowed; "" when absent */
        const char *cgroup_root; /* borrowed; "" when absent */
        uint64_t *running;       /* job ids the agent still runs; malloc'ed, the caller frees */
        size_t nrunning;
        const char *features; /* borrowed; a nodesel.h list, NULL when absent */
        const char *gpu_type; /* borrowed; its GPUs' type (capacity.gpus counts them), NULL when absent */
} agent_hello;

/* Check a hello's fields into h; its proof of the secret is the caller's to check, first.
 * Returns 0, or -EINVAL with a one-line reason in err, or -ENOMEM; h->running is NULL on error. */
int agentmsg_hello(const cJSON *msg, agent_hello *h, char err[PROTO_ERRLEN]);
