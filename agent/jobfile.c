/* jobfile.c - the state directory's file names and contents (see jobfile.h). */
#include "jobfile.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const suffixes[_JOBFILE_KIND_MAX] = { "json", "exit", "done" };

/* Signal numbers fit well below this; anything larger is a corrupt file. */
#define SIGNAL_MAX 128

const char *jobfile_suffix(jobfile_kind kind) { return kind >= 0 && kind < _JOBFILE_KIND_MAX ? suffixes[kind] : "?"; }

int jobfile_name_parse(const char *name, uint64_t *id, jobfile_kind *kind) {
        char *end;
        unsigned long long v;

        if (strncmp(name, "job-", 4) != 0 || name[4] < '1' || name[4] > '9')
                return -EINVAL;
        errno = 0;
        v = strtoull(name + 4, &end, 10);
        if (errno || *end != '.' || v > INT64_MAX)
                return -EINVAL;
        for (int k = 0; k < _JOBFILE_KIND_MAX; k++)
                if (strcmp(end + 1, suffixes[k]) == 0) {
                        *id = v;
                        *kind = (jobfile_kind)k;
                        return 0;
                }
        return -EINVAL;
}

/* Print o as one line and free it. NULL when o is NULL or out of memory. */
static char *print_and_free(cJSON *o) {
        char *text = o ? proto_print(o) : NULL;

        cJSON_Delete(o);
        return text;
}

char *jobfile_record_format(const jobfile_record *r) {
        cJSON *o = cJSON_CreateObject();
        bool ok = o && cJSON_AddNumberToObject(o, "id", (double)r->id) &&
                  cJSON_AddStringToObject(o, "cgroup", r->cgroup) &&
                  cJSON_AddNumberToObject(o, "shepherd_pid", r->shepherd) &&
                  cJSON_AddNumberToObject(o, "shepherd_start", (double)r->shepherd_start) &&
                  cJSON_AddNumberToObject(o, "mem_limit", (double)r->mem_limit) &&
                  cJSON_AddNumberToObject(o, "start_usec", (double)r->start_usec) &&
                  cJSON_AddBoolToObject(o, "cancelled", r->cancelled) &&
                  cJSON_AddNumberToObject(o, "attempt", r->attempt ? r->attempt : 1) &&
                  cJSON_AddNumberToObject(o, "time_limit_usec", (double)r->time_limit_usec) &&
                  cJSON_AddBoolToObject(o, "timed_out", r->timed_out) &&
                  (!r->gpu_ids[0] || cJSON_AddStringToObject(o, "gpu_ids", r->gpu_ids));

        if (!ok) {
                cJSON_Delete(o);
                return NULL;
        }
        return print_and_free(o);
}

char *jobfile_exit_format(const jobfile_exit *e) {
        cJSON *o = cJSON_CreateObject();
        bool ok = o && cJSON_AddNumberToObject(o, "exit_code", e->exit_code) &&
                  cJSON_AddNumberToObject(o, "signal", e->signal) &&
                  cJSON_AddNumberToObject(o, "end_usec", (double)e->end_usec);

        if (!ok) {
                cJSON_Delete(o);
                return NULL;
        }
        return print_and_free(o);
}

typedef struct int_field {
        const char *name;
        int64_t min, max;
        int64_t *out;
} int_field;

/* Read every listed field, each of which must be present and in range. */
static int get_ints(const cJSON *o, const int_field *f, size_t n, char err[PROTO_ERRLEN]) {
        for (size_t i = 0; i < n; i++) {
                int r = proto_get_int(o, f[i].name, f[i].min, f[i].max, f[i].out, err);

                if (r == -ENOENT)
                        snprintf(err, PROTO_ERRLEN, "missing field '%s'", f[i].name);
                if (r < 0)
                        return -EINVAL;
        }
        return 0;
}

/* Parse text as a JSON object holding only the allowed fields. Caller owns *out. */
static int parse_object(const char *text, const char *const *allowed, cJSON **out, char err[PROTO_ERRLEN]) {
        cJSON *o = cJSON_Parse(text);

        if (!cJSON_IsObject(o)) {
                snprintf(err, PROTO_ERRLEN, "not a JSON object");
                cJSON_Delete(o);
                return -EINVAL;
        }
        if (proto_check_fields(o, allowed, err) < 0) {
                cJSON_Delete(o);
                return -EINVAL;
        }
        *out = o;
        return 0;
}

/* Whether path is relative and goes only down: no empty, "." or ".." component. */
static bool goes_down(const char *path) {
        for (const char *p = path;;) {
                size_t n = strcspn(p, "/");
                if (n == 0 || (n == 1 && p[0] == '.') || (n == 2 && p[0] == '.' && p[1] == '.'))
                        return false;
                if (!p[n])
                        return true;
                p += n + 1;
        }
}

/* A job cgroup below the subtree: "job-7", or "dept-a/job-7" for a department's job. */
static int copy_cgroup(const cJSON *o, char *dst, char err[PROTO_ERRLEN]) {
        const char *cg = NULL;
        int r = proto_get_str(o, "cgroup", &cg, err);

        if (r == -ENOENT)
                snprintf(err, PROTO_ERRLEN, "missing field 'cgroup'");
        else if (r == 0 && (!goes_down(cg) || strlen(cg) >= JOBFILE_CGROUP_MAX)) {
                snprintf(err, PROTO_ERRLEN, "cgroup: not a job cgroup name");
                r = -EINVAL;
        }
        if (r < 0)
                return -EINVAL;
        strcpy(dst, cg);
        return 0;
}

/* The record's optional "gpu_ids" into dst ("" when absent: a job of no GPU, or an agent's older
 * than GPUs); the indexes themselves are checked against the agent's GPUs when adopted. */
static int copy_gpu_ids(const cJSON *o, char *dst, char err[PROTO_ERRLEN]) {
        const char *ids = NULL;
        int r = proto_get_str(o, "gpu_ids", &ids, err);

        if (r == -ENOENT)
                return 0;
        if (r == 0 && strlen(ids) >= JOBFILE_GPU_IDS_MAX) {
                snprintf(err, PROTO_ERRLEN, "gpu_ids: too long");
                r = -EINVAL;
        }
        if (r < 0)
                return -EINVAL;
        strcpy(dst, ids);
        return 0;
}

int jobfile_record_parse(const char *text, jobfile_record *r, char err[PROTO_ERRLEN]) {
        static const char *const allowed[] = {
                "id",        "cgroup",  "shepherd_pid",    "shepherd_start", "mem_limit", "start_usec",
                "cancelled", "attempt", "time_limit_usec", "timed_out",      "gpu_ids",   NULL
        };
        int64_t id, pid, start, mem, start_usec, attempt = 1, limit = 0;
        const int_field ints[] = {
                { "id", 1, INT64_MAX, &id },
                { "shepherd_pid", 1, INT_MAX, &pid },
                { "shepherd_start", 0, INT64_MAX, &start },
                { "mem_limit", 0, INT64_MAX, &mem },
                { "start_usec", 0, INT64_MAX, &start_usec },
        };
        jobfile_record out = { 0 };
        cJSON *o;
        int k;

        if (parse_object(text, allowed, &o, err) < 0)
                return -EINVAL;
        k = get_ints(o, ints, sizeof(ints) / sizeof(ints[0]), err);
        if (k == 0)
                k = copy_cgroup(o, out.cgroup, err);
        if (k == 0 && (k = proto_get_bool(o, "cancelled", &out.cancelled, err)) == -ENOENT) {
                snprintf(err, PROTO_ERRLEN, "missing field 'cancelled'");
                k = -EINVAL;
        }
        if (k == 0 && proto_get_int(o, "attempt", 1, UINT32_MAX, &attempt, err) == -EINVAL)
                k = -EINVAL;
        /* both absent in a record of an agent older than time limits */
        if (k == 0 && (proto_get_int(o, "time_limit_usec", 0, INT64_MAX, &limit, err) == -EINVAL ||
                       proto_get_bool(o, "timed_out", &out.timed_out, err) == -EINVAL))
                k = -EINVAL;
        out.time_limit_usec = limit;
        if (k == 0)
                k = copy_gpu_ids(o, out.gpu_ids, err);
        cJSON_Delete(o);
        if (k < 0)
                return -EINVAL;
        out.attempt = (uint32_t)attempt;
        out.id = (uint64_t)id;
        out.shepherd = (pid_t)pid;
        out.shepherd_start = (uint64_t)start;
        out.mem_limit = mem;
        out.start_usec = start_usec;
        *r = out;
        return 0;
}

int jobfile_exit_parse(const char *text, jobfile_exit *e, char err[PROTO_ERRLEN]) {
        static const char *const allowed[] = { "exit_code", "signal", "end_usec", NULL };
        int64_t code, sig, end;
        const int_field ints[] = {
                { "exit_code", 0, 255, &code },
                { "signal", 0, SIGNAL_MAX, &sig },
                { "end_usec", 0, INT64_MAX, &end },
        };
        cJSON *o;
        int k;

        if (parse_object(text, allowed, &o, err) < 0)
                return -EINVAL;
        k = get_ints(o, ints, sizeof(ints) / sizeof(ints[0]), err);
        cJSON_Delete(o);
        if (k < 0)
                return -EINVAL;
        *e = (jobfile_exit){ .exit_code = (int)code, .signal = (int)sig, .end_usec = end };
        return 0;
}

int jobfile_stat_parse(const char *stat, char *state, uint64_t *start) {
        const char *p = strrchr(stat, ')');
        unsigned long long v;
        char *end;

        /* After the name: " S ppid ...", where S is field 3 and the start time field 22. */
        if (!p || p[1] != ' ' || !p[2] || p[3] != ' ')
                return -EINVAL;
        *state = p[2];
        p += 3; /* the space before field 4 */
        for (int field = 4; field < 22; field++) {
                p = strchr(p + 1, ' ');
                if (!p)
                        return -EINVAL;
        }
        errno = 0;
        v = strtoull(p + 1, &end, 10);
        if (errno || end == p + 1 || (*end != ' ' && *end != '\n' && *end))
                return -EINVAL;
        *start = v;
        return 0;
}
