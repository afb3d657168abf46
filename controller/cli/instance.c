/* instance.c - the JSON files that describe a cluster and a queue (docs/policies.md), read by
 * colony place and colony sim. */
#include "instance.h"
#include "proto.h"
#include "units.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void inst_machines_free(inst_machines *m) {
        for (size_t i = 0; m->names && i < m->n; i++)
                free(m->names[i]);
        free(m->names);
        free(m->machines);
        *m = (inst_machines){ 0 };
}

/* A CPU count: a JSON number of cores or a string units_parse_cpus accepts; also 0 when zero_ok
 * (a machine with no core free). */
int inst_get_cpus(const cJSON *obj, const char *field, bool zero_ok, int64_t *out, char *err, size_t errlen) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, field);
        char number[64];
        const char *text = cJSON_IsString(v) ? v->valuestring : number;
        if (!v)
                return -ENOENT;
        /* a string is parsed whole: a copy cut to a buffer could read "000...0015" as 1 */
        if (cJSON_IsNumber(v))
                snprintf(number, sizeof(number), "%.6g", v->valuedouble);
        if ((!cJSON_IsNumber(v) && !cJSON_IsString(v)) ||
            (units_parse_cpus(text, out) < 0 && !(zero_ok && units_parse_uint(text, 0, out) == 0))) {
                snprintf(err, errlen, "%s: not a CPU count (like 2, 0.5 or \"500m\")", field);
                return -EINVAL;
        }
        return 0;
}

/* A size: a JSON number of bytes or a string units_parse_size accepts, from min bytes up; the
 * same range either way ("mem": "0" is no more a machine than "mem": 0). */
int inst_get_size(const cJSON *obj, const char *field, int64_t min, int64_t *out, char *err, size_t errlen) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, field);
        char perr[PROTO_ERRLEN];
        int64_t bytes = 0;
        if (!v)
                return -ENOENT;
        if (cJSON_IsString(v) ? units_parse_size(v->valuestring, &bytes) < 0 || bytes < min
                              : proto_get_int(obj, field, min, RES_MEM_MAX, &bytes, perr) < 0) {
                snprintf(err, errlen, "%s: not a size (like 512M or 4G, or a number of bytes)", field);
                return -EINVAL;
        }
        *out = bytes;
        return 0;
}

/* Read a required resource pair, then an optional one defaulting to it. */
int inst_get_res(const cJSON *o, const char *cpus, const char *mem, res_t *out, char *err, size_t errlen) {
        int r = inst_get_cpus(o, cpus, false, &out->mcpu, err, errlen);
        if (r == 0)
                r = inst_get_size(o, mem, 1, &out->mem, err, errlen);
        if (r == -ENOENT)
                snprintf(err, errlen, "needs \"%s\" and \"%s\"", cpus, mem);
        return r < 0 ? -EINVAL : 0;
}

static int optional_res(const cJSON *o, res_t *free_res, char *err, size_t errlen) {
        int r = inst_get_cpus(o, "free_cpus", true, &free_res->mcpu, err, errlen);
        if (r == -EINVAL || (r = inst_get_size(o, "free_mem", 0, &free_res->mem, err, errlen)) == -EINVAL)
                return -EINVAL;
        return 0;
}

/* The array under key in file's top-level object. *doc owns it. */
const cJSON *inst_load_array(const char *path, const char *key, cJSON **doc, char *err, size_t errlen) {
        FILE *f = fopen(path, "re");
        char *text = NULL;
        size_t cap = 0;
        if (!f) {
                snprintf(err, errlen, "%s: %s", path, strerror(errno));
                return NULL;
        }
        ssize_t n = getdelim(&text, &cap, '\0', f);
        fclose(f);
        *doc = n > 0 ? cJSON_Parse(text) : NULL;
        free(text);
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(*doc, key);
        if (!*doc)
                snprintf(err, errlen, "%s: not valid JSON", path);
        else if (!cJSON_IsArray(arr) || cJSON_GetArraySize(arr) > INST_MAX_ITEMS)
                snprintf(err, errlen, "%s: needs an object with a \"%s\" array (at most %d items)", path, key,
                         INST_MAX_ITEMS);
        else
                return arr;
        return NULL;
}

/* The optional "gpus" of a machine or a job (absent: none) into r->gpus. Returns 0 or -EINVAL
 * with what set. */
static int get_gpus(const cJSON *o, res_t *r, char *what, size_t len) {
        char perr[PROTO_ERRLEN];
        if (proto_get_int(o, "gpus", 0, RES_GPUS_MAX, &r->gpus, perr) == -EINVAL)
                return snprintf(what, len, "gpus: a whole number of devices from 0 to %lld", (long long)RES_GPUS_MAX),
                       -EINVAL;
        return 0;
}

/* One entry of the machines file into m and *name. Returns 0 or -EINVAL with what set. */
static int read_machine(const cJSON *o, size_t i, sched_machine *m, char **name, char *what, size_t len) {
        const cJSON *n = cJSON_GetObjectItemCaseSensitive(o, "name");
        res_t cap = { 0 };
        if (inst_get_res(o, "cpus", "mem", &cap, what, len) < 0 || get_gpus(o, &cap, what, len) < 0)
                return -EINVAL;
        *m = (sched_machine){ .index = (uint32_t)i, .capacity = cap, .free = cap, .up = 1 };
        if (optional_res(o, &m->free, what, len) < 0)
                return -EINVAL;
        if (!res_fits(m->free, cap)) {
                snprintf(what, len, "free_cpus and free_mem cannot exceed cpus and mem");
                return -EINVAL;
        }
        if (cJSON_IsString(n))
                *name = strdup(n->valuestring);
        else if (asprintf(name, "m%zu", i + 1) < 0)
                *name = NULL;
        return *name ? 0 : -ENOMEM;
}

int inst_load_machines(const char *path, inst_machines *in, char *err, size_t errlen) {
        cJSON *doc = NULL;
        const cJSON *arr = inst_load_array(path, "machines", &doc, err, errlen), *m;
        size_t n = arr ? (size_t)cJSON_GetArraySize(arr) : 0;
        int r = arr ? 0 : -EINVAL;
        if (r == 0 && (!(in->machines = calloc(n + 1, sizeof(*in->machines))) ||
                       !(in->names = calloc(n + 1, sizeof(*in->names)))))
                r = -ENOMEM;
        const cJSON *list = r == 0 ? arr : NULL;
        cJSON_ArrayForEach(m, list) {
                char what[256] = "out of memory";
                size_t i = in->n;
                if ((r = read_machine(m, i, &in->machines[i], &in->names[i], what, sizeof(what))) < 0) {
                        snprintf(err, errlen, "%s: machine %zu: %s", path, i + 1, what);
                        break;
                }
                in->n++;
        }
        cJSON_Delete(doc);
        return r;
}

/* One entry of the jobs file: its request and how many jobs it stands for, given how many the
 * entries before it made. */
static int read_job_entry(const cJSON *o, size_t so_far, res_t *req, int64_t *count, char *what, size_t len) {
        char perr[PROTO_ERRLEN];
        *count = 1;
        if (inst_get_res(o, "cpus", "mem", req, what, len) < 0 || get_gpus(o, req, what, len) < 0)
                return -EINVAL;
        if (proto_get_int(o, "count", 1, INST_MAX_ITEMS, count, perr) == -EINVAL) {
                snprintf(what, len, "count: a whole number from 1 to %d", INST_MAX_ITEMS);
                return -EINVAL;
        }
        if (so_far + (size_t)*count > INST_MAX_ITEMS) {
                snprintf(what, len, "more than %d jobs in all", INST_MAX_ITEMS);
                return -EINVAL;
        }
        return 0;
}

/* Append count jobs asking for req to *jobs, numbering them on from *n. Returns 0 or -ENOMEM. */
static int add_jobs(sched_job **jobs, size_t *n, res_t req, int64_t count) {
        sched_job *p = realloc(*jobs, (*n + (size_t)count) * sizeof(*p));
        if (!p)
                return -ENOMEM;
        *jobs = p;
        for (int64_t k = 0; k < count; k++, (*n)++)
                p[*n] = (sched_job){ .id = *n + 1, .req = req };
        return 0;
}

int inst_load_jobs(const char *path, sched_job **jobs, size_t *n, char *err, size_t errlen) {
        cJSON *doc = NULL;
        const cJSON *arr = inst_load_array(path, "jobs", &doc, err, errlen), *o;
        int r = arr ? 0 : -EINVAL;
        size_t entry = 0;
        *jobs = NULL;
        *n = 0;
        const cJSON *list = r == 0 ? arr : NULL;
        cJSON_ArrayForEach(o, list) {
                char what[256];
                res_t req = { 0 };
                int64_t count;
                entry++;
                if (read_job_entry(o, *n, &req, &count, what, sizeof(what)) < 0) {
                        snprintf(err, errlen, "%s: job entry %zu: %s", path, entry, what);
                        r = -EINVAL;
                        break;
                }
                if ((r = add_jobs(jobs, n, req, count)) < 0) {
                        snprintf(err, errlen, "%s: out of memory", path);
                        break;
                }
        }
        cJSON_Delete(doc);
        if (r < 0) {
                free(*jobs);
                *jobs = NULL;
                *n = 0;
        }
        return r;
}
