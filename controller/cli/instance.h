/* instance.h - the JSON files that describe machines and queued jobs for colony place and
 * colony sim (schemas in docs/policies.md). CPUs are cores (a number, or a string such as
 * "500m"); memory is bytes (a number) or a size string ("512M"). */
#pragma once
#include <stdbool.h>
#include "dispatch.h"
#include <cjson/cJSON.h>
#include <stddef.h>

#define INST_MAX_ITEMS 1000000

typedef struct inst_machines {
        sched_machine *machines; /* index = position; free = capacity unless free_* say less */
        char **names;            /* "name", or m1, m2, ... */
        size_t n;
} inst_machines;

/* Read {"machines": [{"name", "cpus", "mem", "free_cpus", "free_mem"}, ...]}. Returns 0, or
 * -errno with "path: machine N: reason" in err (nothing kept). */
int inst_load_machines(const char *path, inst_machines *out, char *err, size_t errlen);
void inst_machines_free(inst_machines *m);

/* Read {"jobs": [{"cpus", "mem", "count"}, ...]}: the queue in order, count (default 1) repeating
 * an entry, ids 1, 2, ... Returns 0 and sets *jobs (malloc'ed, caller frees) and *n, or -errno
 * with "path: job entry N: reason" in err (nothing kept: *jobs NULL, *n 0). */
int inst_load_jobs(const char *path, sched_job **jobs, size_t *n, char *err, size_t errlen);

/* The array under key in path's top-level object; *doc owns it (cJSON_Delete). NULL with err
 * set when the file cannot be read, is not JSON, or has no such array. */
const cJSON *inst_load_array(const char *path, const char *key, cJSON **doc, char *err, size_t errlen);
/* The CPU count field of obj (a JSON number of cores, or a string such as "500m") into *out in
 * milli-cores, positive, or also 0 when zero_ok. Returns 0, -ENOENT when absent, or -EINVAL
 * with "field: ..." in err. */
int inst_get_cpus(const cJSON *obj, const char *field, bool zero_ok, int64_t *out, char *err, size_t errlen);
/* The size field of obj (a JSON number of bytes, or a string such as "512M") into *out, at
 * least min either way. Returns 0, -ENOENT when absent, or -EINVAL with "field: ..." in err. */
int inst_get_size(const cJSON *obj, const char *field, int64_t min, int64_t *out, char *err, size_t errlen);
/* Read the CPU field cpus and the memory field mem of o into out. Returns 0 or -EINVAL with what
 * set. */
int inst_get_res(const cJSON *o, const char *cpus, const char *mem, res_t *out, char *what, size_t len);
