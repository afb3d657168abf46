/* launchmsg.h - a launch message from the controller, checked field by field (pure: no I/O). */
#pragma once
#include "job.h"
#include "proto.h"
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/* A launch as the agent acts on it; user and spec's strings borrow from or copy the message
 * as job_spec_from_json does. */
typedef struct launch_msg {
        uint64_t id;
        uint32_t attempt;
        double dept_weights[JOB_GROUP_LEVELS_MAX]; /* one per level of spec.group */
        size_t ndept_weights;
        uid_t uid;
        gid_t gid;
        const char *user;
        job_spec spec;
        uint64_t array_first; /* its array's first job id, 0 when not in an array */
        uint32_t array_index; /* its index in that array */
} launch_msg;

/* proto_get_int for a field that must be present: -EINVAL with err when it is missing. */
int launchmsg_require_int(const cJSON *msg, const char *field, int64_t min, int64_t max, int64_t *out,
                          char err[PROTO_ERRLEN]);
/* The group's weights into m: one number in (0, 10000] per level of m->spec.group, all 1 when
 * msg has none. Returns 0 or -EINVAL with err. */
int launchmsg_dept_weights(const cJSON *msg, launch_msg *m, char err[PROTO_ERRLEN]);
/* Validate a launch's fields other than id and attempt into m (m->spec is the caller's to free
 * with job_spec_free, whatever it returns). Returns 0 or -EINVAL with err. */
int launchmsg_parse(const cJSON *msg, launch_msg *m, char err[PROTO_ERRLEN]);
