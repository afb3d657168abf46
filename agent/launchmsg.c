/* launchmsg.c - check a launch message's fields (see launchmsg.h). */
#include "launchmsg.h"
#include <errno.h>
#include <stdio.h>

/* proto_get_int for a field that must be present. */
int launchmsg_require_int(const cJSON *msg, const char *field, int64_t min, int64_t max, int64_t *out,
                          char err[PROTO_ERRLEN]) {
        int r = proto_get_int(msg, field, min, max, out, err);

        if (r == -ENOENT) {
                snprintf(err, PROTO_ERRLEN, "missing field '%s'", field);
                return -EINVAL;
        }
        return r;
}

/* The group's weights: one positive number per level of spec.group; all 1 when absent. */
int launchmsg_dept_weights(const cJSON *msg, launch_msg *m, char err[PROTO_ERRLEN]) {
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(msg, "dept_weights"), *w;
        size_t levels = 0;

        for (const char *p = m->spec.group; p && *p; p++)
                levels += *p == '/';
        levels += m->spec.group != NULL;
        if (levels > JOB_GROUP_LEVELS_MAX) {
                snprintf(err, PROTO_ERRLEN, "group: more than %d levels", JOB_GROUP_LEVELS_MAX);
                return -EINVAL;
        }
        m->ndept_weights = levels;
        for (size_t i = 0; i < levels; i++)
                m->dept_weights[i] = 1.0;
        if (!arr)
                return 0;
        if (!cJSON_IsArray(arr) || (size_t)cJSON_GetArraySize(arr) != levels) {
                snprintf(err, PROTO_ERRLEN, "dept_weights: not an array of %zu numbers (one per level of the group)",
                         levels);
                return -EINVAL;
        }
        size_t i = 0;
        cJSON_ArrayForEach(w, arr) {
                if (!cJSON_IsNumber(w) || !(w->valuedouble > 0) || w->valuedouble > 1e4) {
                        snprintf(err, PROTO_ERRLEN, "dept_weights: entry %zu is not a number in (0, 10000]", i + 1);
                        return -EINVAL;
                }
                m->dept_weights[i++] = w->valuedouble;
        }
        return 0;
}

/* Validate a launch's fields other than id into m. Returns 0 or -EINVAL with err. */
int launchmsg_parse(const cJSON *msg, launch_msg *m, char err[PROTO_ERRLEN]) {
        static const char *allowed[64]; /* job_spec_fields, the eight below, NULL */
        const size_t max_spec = sizeof(allowed) / sizeof(allowed[0]) - 9;
        int64_t uid, gid, array_first = 0, array_index = 0;
        size_t n = 0;
        int r;

        if (!allowed[0]) {
                for (const char *const *f = job_spec_fields; *f && n < max_spec; f++)
                        allowed[n++] = *f;
                allowed[n++] = "id", allowed[n++] = "uid", allowed[n++] = "gid", allowed[n++] = "user";
                allowed[n++] = "dept_weights", allowed[n++] = "attempt";
                allowed[n++] = "array_first", allowed[n++] = "array_index";
        }
        r = proto_check_fields(msg, allowed, err);
        if (r == 0)
                r = launchmsg_require_int(msg, "uid", 0, (int64_t)UINT32_MAX - 1, &uid, err);
        if (r == 0)
                r = launchmsg_require_int(msg, "gid", 0, (int64_t)UINT32_MAX - 1, &gid, err);
        if (r == 0 && (r = proto_get_str(msg, "user", &m->user, err)) == -ENOENT) {
                snprintf(err, PROTO_ERRLEN, "missing field 'user'");
                r = -EINVAL;
        }
        if (r == 0)
                r = job_spec_from_json(msg, &m->spec, err);
        if (r == 0)
                r = launchmsg_dept_weights(msg, m, err);
        if (r == 0 && (proto_get_int(msg, "array_first", 0, INT64_MAX, &array_first, err) == -EINVAL ||
                       proto_get_int(msg, "array_index", 0, UINT32_MAX, &array_index, err) == -EINVAL))
                r = -EINVAL;
        if (r < 0)
                return -EINVAL;
        m->array_first = (uint64_t)array_first;
        m->array_index = (uint32_t)array_index;
        m->uid = (uid_t)uid;
        m->gid = (gid_t)gid;
        return 0;
}
