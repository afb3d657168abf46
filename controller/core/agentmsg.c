/* agentmsg.c - an agent's hello, checked (agentmsg.h). */
#include "agentmsg.h"
#include "nodesel.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const hello_fields[] = { "name", "nonce",       "proof",       "mcpu",    "mem",
                                            "pids", "cgroup_mode", "cgroup_root", "running", "features",
                                            "gpus", "gpu_type",    NULL };

/* Read hello's "running" list: job ids, exact integers like every id on the wire (a double such
 * as 1e300 does not convert to uint64_t). Returns 0 or -EINVAL / -ENOMEM with err set. */
static int running_ids(const cJSON *msg, agent_hello *h, char err[PROTO_ERRLEN]) {
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(msg, "running"), *item;
        if (!arr)
                return 0;
        if (!cJSON_IsArray(arr)) {
                snprintf(err, PROTO_ERRLEN, "running: must be an array of job ids");
                return -EINVAL;
        }
        if (!(h->running = calloc((size_t)cJSON_GetArraySize(arr) + 1, sizeof(*h->running)))) {
                snprintf(err, PROTO_ERRLEN, "out of memory");
                return -ENOMEM;
        }
        cJSON_ArrayForEach(item, arr) {
                int64_t id;
                if (!proto_int_value(item, 1, INT64_MAX, &id)) {
                        snprintf(err, PROTO_ERRLEN, "running: item %zu is not a job id", h->nrunning);
                        return -EINVAL;
                }
                h->running[h->nrunning++] = (uint64_t)id;
        }
        return 0;
}

/* Read hello's optional "features", a list of feature names. Returns 0 or -EINVAL with err set. */
static int hello_features(const cJSON *msg, agent_hello *h, char err[PROTO_ERRLEN]) {
        int r = proto_get_str(msg, "features", &h->features, err);
        if (r == -ENOENT)
                return 0;
        if (r == 0 && *h->features && !nodesel_list_ok(h->features)) {
                snprintf(err, PROTO_ERRLEN, "features: must be names (letters, digits, _ . -) separated by commas");
                return -EINVAL;
        }
        return r;
}

/* Read hello's optional "gpus" (a count) and "gpu_type" (a feature name). Returns 0 or -EINVAL
 * with err set. */
static int hello_gpus(const cJSON *msg, agent_hello *h, char err[PROTO_ERRLEN]) {
        int r = proto_get_int(msg, "gpus", 0, RES_GPUS_MAX, &h->capacity.gpus, err);
        if (r < 0 && r != -ENOENT)
                return r;
        r = proto_get_str(msg, "gpu_type", &h->gpu_type, err);
        if (r == 0 && (!nodesel_list_ok(h->gpu_type) || strchr(h->gpu_type, ','))) {
                snprintf(err, PROTO_ERRLEN, "gpu_type: must be a name (letters, digits, _ . -)");
                return -EINVAL;
        }
        return r == -ENOENT ? 0 : r;
}

static int hello_parse(const cJSON *msg, agent_hello *h, char err[PROTO_ERRLEN]) {
        int r;
        if ((r = proto_check_fields(msg, hello_fields, err)) < 0 ||
            (r = proto_get_str(msg, "name", &h->name, err)) < 0 ||
            (r = proto_get_int(msg, "mcpu", 1, RES_MCPU_MAX, &h->capacity.mcpu, err)) < 0 ||
            (r = proto_get_int(msg, "mem", 1, RES_MEM_MAX, &h->capacity.mem, err)) < 0)
                return r == -ENOENT ? (snprintf(err, PROTO_ERRLEN, "hello needs name, mcpu and mem"), -EINVAL) : r;
        if (((r = proto_get_int(msg, "pids", 0, RES_PIDS_MAX, &h->capacity.pids, err)) < 0 && r != -ENOENT) ||
            ((r = proto_get_str(msg, "cgroup_mode", &h->cgroup_mode, err)) < 0 && r != -ENOENT) ||
            ((r = proto_get_str(msg, "cgroup_root", &h->cgroup_root, err)) < 0 && r != -ENOENT) ||
            (r = hello_features(msg, h, err)) < 0 || (r = hello_gpus(msg, h, err)) < 0)
                return r;
        return running_ids(msg, h, err);
}

int agentmsg_hello(const cJSON *msg, agent_hello *h, char err[PROTO_ERRLEN]) {
        *h = (agent_hello){ .cgroup_mode = "", .cgroup_root = "" };
        int r = hello_parse(msg, h, err);
        if (r < 0) {
                free(h->running);
                h->running = NULL;
                h->nrunning = 0;
        }
        return r;
}
