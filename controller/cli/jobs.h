/* jobs.h - the job requests (submit, wait) that `colony demo` makes too. */
#pragma once
#include "job.h"
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* Submit spec to the controller at sock. Returns 0 with *id (and *reply when reply is not NULL;
 * caller owns it), or -errno with one line in err. */
int jobs_submit(const char *sock, const job_spec *spec, uint64_t *id, cJSON **reply, char *err,
                size_t errlen);
/* Wait (up to timeout_ms; < 0: forever) until job id is terminal. Returns 0 with its record in
 * *out (free with job_free) and *reply when not NULL, or -errno with one line in err
 * (-ETIMEDOUT, -EINTR, ...). */
int jobs_wait(const char *sock, uint64_t id, int timeout_ms, job *out, cJSON **reply, char *err,
              size_t errlen);
