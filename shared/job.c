/* job.c - job states, and the job model's JSON form (docs/protocol.md, "Job records"). */
#include "job.h"
#include "units.h"
#include "outpat.h"
#include "nodesel.h"
#include "depend.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const state_names[_JOB_STATE_MAX] = {
        [JOB_PENDING] = "pending", [JOB_RUNNING] = "running",     [JOB_COMPLETED] = "completed",
        [JOB_FAILED] = "failed",   [JOB_CANCELLED] = "cancelled", [JOB_OOM_KILLED] = "oom-killed",
        [JOB_LOST] = "lost",       [JOB_TIMEOUT] = "timeout",
};

const char *job_state_name(job_state s) { return s < _JOB_STATE_MAX ? state_names[s] : "invalid"; }

static const char *const open_mode_names[_JOB_OPEN_MAX] = {
        [JOB_OPEN_DEFAULT] = "default", [JOB_OPEN_APPEND] = "append", [JOB_OPEN_TRUNCATE] = "truncate"
};

const char *job_open_mode_name(job_open_mode m) { return m < _JOB_OPEN_MAX ? open_mode_names[m] : "invalid"; }

bool job_output_truncates(job_open_mode m, uint64_t array_first, uint32_t attempt) {
        return attempt <= 1 && (m == JOB_OPEN_TRUNCATE || (m == JOB_OPEN_DEFAULT && !array_first));
}

/* The index of name in names[n], or -EINVAL. */
static int name_index(const char *const *names, int n, const char *name) {
        for (int i = 0; i < n; i++)
                if (strcmp(name, names[i]) == 0)
                        return i;
        return -EINVAL;
}

int job_open_mode_from_name(const char *name, job_open_mode *out) {
        int m = name_index(open_mode_names, _JOB_OPEN_MAX, name);
        if (m <= JOB_OPEN_DEFAULT) /* "default" is the field's absence, not a value */
                return -EINVAL;
        *out = (job_open_mode)m;
        return 0;
}

/* The optional "open_mode" field; absent leaves *out JOB_OPEN_DEFAULT. */
static int get_open_mode(const cJSON *obj, job_open_mode *out, char err[PROTO_ERRLEN]) {
        const char *s;
        int r = proto_get_str(obj, "open_mode", &s, err);
        if (r == -ENOENT)
                return 0;
        if (r == 0 && (r = job_open_mode_from_name(s, out)) < 0)
                snprintf(err, PROTO_ERRLEN, "open_mode: '%.64s' is neither append nor truncate", s);
        return r;
}

int job_state_from_name(const char *name, job_state *out) {
        int s = name_index(state_names, _JOB_STATE_MAX, name);
        if (s < 0)
                return s;
        *out = (job_state)s;
        return 0;
}

bool job_state_is_terminal(job_state s) { return s != JOB_PENDING && s != JOB_RUNNING; }

#define SPEC_FIELDS                                                                                                    \
        "argv", "env", "cwd", "stdout_path", "stderr_path", "mcpu", "mem", "mem_high", "pids", "gpus", "name",         \
                "group", "job_type", "expected_usec", "requeue", "umask", "time_limit_usec", "constraint", "nodelist", \
                "exclude", "exclusive", "share_cores", "dependency", "hold", "begin_usec", "nice", "array_throttle",   \
                "script", "open_mode"
const char *const job_spec_fields[] = { SPEC_FIELDS, NULL };
const char *const job_submit_fields[] = { SPEC_FIELDS, "array", NULL };

static int invalid(char err[PROTO_ERRLEN], const char *fmt, const char *field) {
        snprintf(err, PROTO_ERRLEN, fmt, field);
        return -EINVAL;
}

/* An optional string field; absent leaves *out NULL. */
static int get_opt_str(const cJSON *obj, const char *field, char **out, char err[PROTO_ERRLEN]) {
        const char *s;
        int r = proto_get_str(obj, field, &s, err);
        if (r == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        return (*out = strdup(s)) ? 0 : -ENOMEM;
}

static int get_path(const cJSON *obj, const char *field, bool required, char **out, char err[PROTO_ERRLEN]) {
        int r = get_opt_str(obj, field, out, err);
        if (r < 0)
                return r;
        if (!*out)
                return required ? invalid(err, "%s: required", field) : 0;
        if ((*out)[0] != '/' || strlen(*out) >= 4096)
                return invalid(err, "%s: must be an absolute path (shorter than 4096 bytes)", field);
        char why[PROTO_ERRLEN / 2];
        /* output paths are patterns (outpat.h), refused here rather than at launch; a cwd is not */
        if (strcmp(field, "cwd") != 0 && outpat_check(*out, why, sizeof(why)) < 0) {
                snprintf(err, PROTO_ERRLEN, "%s: %s", field, why);
                return -EINVAL;
        }
        return 0;
}

static bool is_printable_name(const char *s) {
        for (; *s; s++)
                if (iscntrl((unsigned char)*s))
                        return false;
        return true;
}

bool job_group_ok(const char *s) {
        size_t len = 0, levels = 0;
        for (;; s++) {
                if (*s == '/' || !*s) {
                        /* "." and ".." would be paths, not names, where groups become cgroups */
                        if (len == 0 || (len <= 2 && strncmp(s - len, "..", len) == 0) ||
                            ++levels > JOB_GROUP_LEVELS_MAX)
                                return false;
                        if (!*s)
                                return true;
                        len = 0;
                } else if (isalnum((unsigned char)*s) || strchr("_.-", *s)) {
                        len++;
                } else {
                        return false;
                }
        }
}

static int check_label(const char *value, const char *field, bool group, char err[PROTO_ERRLEN]) {
        if (!value)
                return 0;
        if (!*value || strlen(value) > JOB_NAME_MAX) {
                snprintf(err, PROTO_ERRLEN, "%s: must be 1 to %d characters", field, JOB_NAME_MAX);
                return -EINVAL;
        }
        if (group ? !job_group_ok(value) : !is_printable_name(value))
                return invalid(err,
                               group ? "%s: must look like dept/team (letters, digits, _ . -)"
                                     : "%s: must not contain control characters",
                               field);
        return 0;
}

static int check_env(char **env, char err[PROTO_ERRLEN]) {
        for (size_t i = 0; env && env[i]; i++) {
                const char *eq = strchr(env[i], '=');
                if (!eq || eq == env[i]) {
                        snprintf(err, PROTO_ERRLEN, "env: item %zu is not NAME=VALUE", i);
                        return -EINVAL;
                }
        }
        return 0;
}

static int get_request(const cJSON *obj, res_t *req, char err[PROTO_ERRLEN]) {
        int r = proto_get_int(obj, "mcpu", 1, RES_MCPU_MAX, &req->mcpu, err);
        if (r == -ENOENT)
                return invalid(err, "%s: required (milli-cores)", "mcpu");
        if (r == -EINVAL)
                return invalid(err, "%s: must be a positive number of milli-cores", "mcpu");
        r = proto_get_int(obj, "mem", 1, RES_MEM_MAX, &req->mem, err);
        if (r == -ENOENT)
                return invalid(err, "%s: required (bytes)", "mem");
        if (r == -EINVAL)
                return invalid(err, "%s: must be a positive number of bytes", "mem");
        r = proto_get_int(obj, "pids", 0, RES_PIDS_MAX, &req->pids, err);
        if (r < 0 && r != -ENOENT)
                return r;
        r = proto_get_int(obj, "gpus", 0, RES_GPUS_MAX, &req->gpus, err);
        return r == -ENOENT ? 0 : r;
}

/* An optional integer field: absent is 0. */
static int get_opt_int(const cJSON *obj, const char *field, int64_t min, int64_t max, int64_t *out,
                       char err[PROTO_ERRLEN]) {
        *out = 0;
        int r = proto_get_int(obj, field, min, max, out, err);
        return r == -ENOENT ? 0 : r;
}

static int get_mem_high(const cJSON *obj, const job_spec *spec, int64_t *out, char err[PROTO_ERRLEN]) {
        int r = proto_get_int(obj, "mem_high", 0, RES_MEM_MAX, out, err);
        if (r == -ENOENT)
                return 0;
        if (r == 0 && *out > spec->req.mem)
                return invalid(err, "%s: the soft limit must not exceed mem", "mem_high");
        return r;
}

/* "umask", JOB_UMASK_DEFAULT when absent. */
static int get_umask(const cJSON *obj, int *out, char err[PROTO_ERRLEN]) {
        int64_t v = JOB_UMASK_DEFAULT;
        int r = proto_get_int(obj, "umask", 0, 0777, &v, err);
        *out = (int)v;
        return r == -ENOENT ? 0 : r;
}

/* The name of a job submitted without one: its program's base name, made displayable. */
static int default_name(job_spec *spec) {
        const char *base = strrchr(spec->argv[0], '/') + 1;
        if (!(spec->name = strndup(*base ? base : spec->argv[0], JOB_NAME_MAX)))
                return -ENOMEM;
        for (char *p = spec->name; *p; p++)
                if (iscntrl((unsigned char)*p))
                        *p = '?';
        return 0;
}

/* Whether the strings of v (field) take at most max bytes. Returns 0 or -E2BIG with err set. */
static int check_bytes(char **v, const char *field, size_t max, char err[PROTO_ERRLEN]) {
        size_t total = 0;
        for (size_t i = 0; v && v[i]; i++)
                total += strlen(v[i]) + 1;
        if (total <= max)
                return 0;
        snprintf(err, PROTO_ERRLEN, "%s: %zu bytes, more than the %zu a job may have", field, total, max);
        return -E2BIG;
}

/* The node selection fields (nodesel.h), each checked; absent ones stay NULL / false. */
static int get_nodesel(const cJSON *obj, job_spec *spec, char err[PROTO_ERRLEN]) {
        int r;
        if ((r = get_opt_str(obj, "constraint", &spec->constraint, err)) < 0 ||
            (r = get_opt_str(obj, "nodelist", &spec->nodelist, err)) < 0 ||
            (r = get_opt_str(obj, "exclude", &spec->exclude, err)) < 0 ||
            (r = proto_get_bool(obj, "exclusive", &spec->exclusive, err)) == -EINVAL ||
            (r = proto_get_bool(obj, "share_cores", &spec->share_cores, err)) == -EINVAL)
                return r;
        if (spec->constraint && !nodesel_expr_ok(spec->constraint))
                return invalid(err,
                               "%s: must be features (letters, digits, _ . -) joined by & or , (all) and | (either)",
                               "constraint");
        if (spec->nodelist && !nodesel_list_ok(spec->nodelist))
                return invalid(err, "%s: must be node names separated by commas", "nodelist");
        if (spec->exclude && !nodesel_list_ok(spec->exclude))
                return invalid(err, "%s: must be node names separated by commas", "exclude");
        return 0;
}

/* The fields that say when it may start: dependency, hold, begin_usec, nice. */
static int start_fields_parse(const cJSON *obj, job_spec *spec, char err[PROTO_ERRLEN]) {
        int64_t nice;
        int r;
        if ((r = get_opt_str(obj, "dependency", &spec->dependency, err)) < 0 ||
            (r = proto_get_bool(obj, "hold", &spec->hold, err)) == -EINVAL ||
            (r = get_opt_int(obj, "begin_usec", 0, INT64_MAX, &spec->begin_usec, err)) < 0 ||
            (r = get_opt_int(obj, "nice", JOB_NICE_MIN, JOB_NICE_MAX, &nice, err)) < 0)
                return r;
        spec->nice = (int)nice;
        if (spec->dependency) {
                dep_list l;
                if ((r = dep_parse(spec->dependency, &l, err, PROTO_ERRLEN)) < 0)
                        return r;
                dep_list_free(&l);
        }
        return 0;
}

static bool start_fields_to_json(const job_spec *spec, cJSON *obj) {
        return (!spec->dependency || cJSON_AddStringToObject(obj, "dependency", spec->dependency)) &&
               (!spec->hold || cJSON_AddBoolToObject(obj, "hold", true)) &&
               (!spec->begin_usec || cJSON_AddNumberToObject(obj, "begin_usec", (double)spec->begin_usec)) &&
               (!spec->nice || cJSON_AddNumberToObject(obj, "nice", spec->nice));
}

/* An array's throttle (its tasks' specs carry it: a pass counts each array's running tasks). */
static int array_fields_parse(const cJSON *obj, job_spec *spec, char err[PROTO_ERRLEN]) {
        int64_t throttle;
        int r = get_opt_int(obj, "array_throttle", 0, UINT32_MAX, &throttle, err);
        spec->array_throttle = (uint32_t)throttle;
        return r;
}

static bool array_fields_to_json(const job_spec *spec, cJSON *obj) {
        return !spec->array_throttle || cJSON_AddNumberToObject(obj, "array_throttle", spec->array_throttle);
}

/* The batch script, if any, within JOB_SCRIPT_BYTES_MAX. */
static int get_script(const cJSON *obj, job_spec *spec, char err[PROTO_ERRLEN]) {
        int r = get_opt_str(obj, "script", &spec->script, err);
        if (r < 0 || !spec->script)
                return r;
        size_t len = strlen(spec->script);
        if (len > JOB_SCRIPT_BYTES_MAX) {
                snprintf(err, PROTO_ERRLEN, "script: %zu bytes, more than the %d a batch script may have", len,
                         JOB_SCRIPT_BYTES_MAX);
                return -E2BIG;
        }
        return 0;
}

static const char *const wait_names[_JOB_WAIT_MAX] = {
        [JOB_WAIT_NONE] = "",
        [JOB_WAIT_RESOURCES] = "resources",
        [JOB_WAIT_PRIORITY] = "priority",
        [JOB_WAIT_DEPENDENCY] = "dependency",
        [JOB_WAIT_DEP_NEVER] = "dependency never met",
        [JOB_WAIT_HELD] = "held",
        [JOB_WAIT_BEGIN] = "begin time",
        [JOB_WAIT_DEPT_CAP] = "department cap",
        [JOB_WAIT_USER_LIMIT] = "user limit",
        [JOB_WAIT_THROTTLE] = "throttle",
};

const char *job_wait_name(job_wait w) { return w < _JOB_WAIT_MAX ? wait_names[w] : "invalid"; }

int job_wait_from_name(const char *name, job_wait *out) {
        int w = name_index(wait_names, _JOB_WAIT_MAX, name);
        if (w < 0)
                return w;
        *out = (job_wait)w;
        return 0;
}

static int spec_parse(const cJSON *obj, job_spec *spec, char err[PROTO_ERRLEN]) {
        int r = proto_get_strv(obj, "argv", JOB_ARGV_MAX, true, &spec->argv, err);
        if (r == -ENOENT || (r == 0 && !spec->argv[0]))
                return invalid(err, "%s: required, with the program first", "argv");
        if (r < 0)
                return r;
        if (spec->argv[0][0] != '/')
                return invalid(err, "%s: the program must be an absolute path", "argv");
        r = proto_get_strv(obj, "env", JOB_ENV_MAX, false, &spec->env, err);
        if (r < 0 && r != -ENOENT)
                return r;
        if ((r = check_bytes(spec->argv, "argv", JOB_ARGV_BYTES_MAX, err)) < 0 ||
            (r = check_bytes(spec->env, "env", JOB_ENV_BYTES_MAX, err)) < 0 || (r = check_env(spec->env, err)) < 0 ||
            (r = get_path(obj, "cwd", true, &spec->cwd, err)) < 0 ||
            (r = get_path(obj, "stdout_path", false, &spec->stdout_path, err)) < 0 ||
            (r = get_path(obj, "stderr_path", false, &spec->stderr_path, err)) < 0 ||
            (r = get_opt_str(obj, "name", &spec->name, err)) < 0 ||
            (r = get_opt_str(obj, "group", &spec->group, err)) < 0 ||
            (r = get_opt_str(obj, "job_type", &spec->job_type, err)) < 0 ||
            (r = get_request(obj, &spec->req, err)) < 0 || (r = get_mem_high(obj, spec, &spec->mem_high, err)) < 0 ||
            (r = get_opt_int(obj, "expected_usec", 0, INT64_MAX, &spec->expected_usec, err)) < 0 ||
            (r = proto_get_bool(obj, "requeue", &spec->requeue, err)) == -EINVAL ||
            (r = get_open_mode(obj, &spec->open_mode, err)) < 0 || (r = get_umask(obj, &spec->umask, err)) < 0 ||
            (r = get_opt_int(obj, "time_limit_usec", JOB_TIME_UNLIMITED, UNITS_TIME_MAX_USEC, &spec->time_limit_usec,
                             err)) < 0 ||
            (r = check_label(spec->name, "name", false, err)) < 0 ||
            (r = check_label(spec->group, "group", true, err)) < 0 ||
            (r = check_label(spec->job_type, "job_type", false, err)) < 0 || (r = get_nodesel(obj, spec, err)) < 0)
                return r;
        if ((r = start_fields_parse(obj, spec, err)) < 0 || (r = array_fields_parse(obj, spec, err)) < 0 ||
            (r = get_script(obj, spec, err)) < 0)
                return r;
        return spec->name ? 0 : default_name(spec);
}

int job_spec_from_json(const cJSON *obj, job_spec *spec, char err[PROTO_ERRLEN]) {
        int r = spec_parse(obj, spec, err);
        if (r == -ENOMEM)
                snprintf(err, PROTO_ERRLEN, "out of memory");
        if (r < 0)
                job_spec_free(spec);
        return r;
}

static cJSON *strv_to_json(char *const *v) {
        cJSON *arr = cJSON_CreateArray();
        for (size_t i = 0; arr && v && v[i]; i++)
                if (!cJSON_AddItemToArray(arr, cJSON_CreateString(v[i]))) {
                        cJSON_Delete(arr);
                        return NULL;
                }
        return arr;
}

static bool add_opt_str(cJSON *obj, const char *field, const char *value) {
        return !value || cJSON_AddStringToObject(obj, field, value);
}

/* The spec without env, which the record never shows. */
static int spec_to_json_public(const job_spec *spec, cJSON *obj) {
        cJSON *argv = strv_to_json(spec->argv);
        if (!argv || !cJSON_AddItemToObject(obj, "argv", argv)) {
                cJSON_Delete(argv);
                return -ENOMEM;
        }
        if (!add_opt_str(obj, "cwd", spec->cwd) || !add_opt_str(obj, "stdout_path", spec->stdout_path) ||
            !add_opt_str(obj, "stderr_path", spec->stderr_path) || !add_opt_str(obj, "name", spec->name) ||
            !add_opt_str(obj, "group", spec->group) || !add_opt_str(obj, "job_type", spec->job_type) ||
            !cJSON_AddNumberToObject(obj, "mcpu", (double)spec->req.mcpu) ||
            !cJSON_AddNumberToObject(obj, "mem", (double)spec->req.mem) ||
            (spec->mem_high && !cJSON_AddNumberToObject(obj, "mem_high", (double)spec->mem_high)) ||
            !cJSON_AddNumberToObject(obj, "pids", (double)spec->req.pids) ||
            (spec->req.gpus && !cJSON_AddNumberToObject(obj, "gpus", (double)spec->req.gpus)) ||
            (spec->expected_usec && !cJSON_AddNumberToObject(obj, "expected_usec", (double)spec->expected_usec)) ||
            (spec->requeue && !cJSON_AddBoolToObject(obj, "requeue", true)) ||
            (spec->open_mode && !cJSON_AddStringToObject(obj, "open_mode", job_open_mode_name(spec->open_mode))) ||
            !cJSON_AddNumberToObject(obj, "umask", spec->umask) ||
            (spec->time_limit_usec &&
             !cJSON_AddNumberToObject(obj, "time_limit_usec", (double)spec->time_limit_usec)) ||
            !add_opt_str(obj, "constraint", spec->constraint) || !add_opt_str(obj, "nodelist", spec->nodelist) ||
            !add_opt_str(obj, "exclude", spec->exclude) ||
            (spec->exclusive && !cJSON_AddBoolToObject(obj, "exclusive", true)) ||
            (spec->share_cores && !cJSON_AddBoolToObject(obj, "share_cores", true)) ||
            !start_fields_to_json(spec, obj) || !array_fields_to_json(spec, obj) ||
            !add_opt_str(obj, "script", spec->script))
                return -ENOMEM;
        return 0;
}

int job_spec_to_json(const job_spec *spec, cJSON *obj) {
        int r = spec_to_json_public(spec, obj);
        if (r < 0)
                return r;
        cJSON *env = strv_to_json(spec->env);
        if (!env || !cJSON_AddItemToObject(obj, "env", env)) {
                cJSON_Delete(env);
                return -ENOMEM;
        }
        return 0;
}

/* What one string takes printed at most: each byte escaped (\u00XX), the quotes and a comma. */
static size_t str_bound(const char *str) { return str ? 6 * strlen(str) + 3 : 0; }

size_t job_spec_json_bound(const job_spec *spec) {
        enum { FIXED = 1024 }; /* braces, brackets, every key, and the numbers (at most 24 bytes each) */
        size_t n = FIXED + str_bound(spec->name) + str_bound(spec->group) + str_bound(spec->job_type) +
                   str_bound(spec->cwd) + str_bound(spec->stdout_path) + str_bound(spec->stderr_path) +
                   str_bound(spec->constraint) + str_bound(spec->nodelist) + str_bound(spec->exclude);
        for (char *const *v = spec->argv; v && *v; v++)
                n += str_bound(*v);
        for (char *const *v = spec->env; v && *v; v++)
                n += str_bound(*v);
        return n + str_bound(spec->dependency) + str_bound(spec->script);
}

void job_spec_free(job_spec *spec) {
        free(spec->name);
        free(spec->group);
        free(spec->job_type);
        strv_free(spec->argv);
        strv_free(spec->env);
        free(spec->cwd);
        free(spec->stdout_path);
        free(spec->stderr_path);
        free(spec->constraint);
        free(spec->nodelist);
        free(spec->exclude);
        free(spec->dependency);
        free(spec->script);
        *spec = (job_spec){ 0 };
}

int job_env_set(char ***env, const char *name, const char *value, bool replace) {
        size_t n = 0, len = strlen(name);
        char *item;
        while (*env && (*env)[n] && !(strncmp((*env)[n], name, len) == 0 && (*env)[n][len] == '='))
                n++;
        if (*env && (*env)[n] && !replace)
                return 0;
        if (asprintf(&item, "%s=%s", name, value) < 0)
                return -ENOMEM;
        if (*env && (*env)[n]) {
                free((*env)[n]);
                (*env)[n] = item;
                return 0;
        }
        char **grown = realloc(*env, (n + 2) * sizeof(*grown));
        if (!grown) {
                free(item);
                return -ENOMEM;
        }
        grown[n] = item;
        grown[n + 1] = NULL;
        *env = grown;
        return 0;
}

int job_usage_to_json(const job_result *r, cJSON *obj) {
        if (!cJSON_AddNumberToObject(obj, "cpu_usec", (double)r->cpu_usec) ||
            !cJSON_AddNumberToObject(obj, "mem_peak", (double)r->mem_peak) ||
            !cJSON_AddNumberToObject(obj, "oom_kills", (double)r->oom_kills) ||
            !cJSON_AddNumberToObject(obj, "io_rbytes", (double)r->io_rbytes) ||
            !cJSON_AddNumberToObject(obj, "io_wbytes", (double)r->io_wbytes) || psi_to_json(&r->psi, obj) < 0)
                return -ENOMEM;
        /* only figures the agent read: none where NVML is absent */
        if (r->gpu_known && (!cJSON_AddNumberToObject(obj, "gpu_util", r->gpu_util) ||
                             !cJSON_AddNumberToObject(obj, "gpu_mem", (double)r->gpu_mem)))
                return -ENOMEM;
        return 0;
}

int job_result_to_json(const job_result *r, cJSON *obj) {
        if (!cJSON_AddNumberToObject(obj, "exit_code", r->exit_code) ||
            !cJSON_AddNumberToObject(obj, "signal", r->signal) || job_usage_to_json(r, obj) < 0 ||
            !add_opt_str(obj, "error", r->error))
                return -ENOMEM;
        return 0;
}

/* The optional gpu_util and gpu_mem of obj, both or neither, into res. Returns 0 or -EINVAL. */
static int gpu_use_from_json(const cJSON *obj, job_result *res, char err[PROTO_ERRLEN]) {
        int64_t util = 0, mem = 0;
        int ru = proto_get_int(obj, "gpu_util", 0, 100, &util, err);
        int rm = ru == -EINVAL ? ru : proto_get_int(obj, "gpu_mem", 0, INT64_MAX, &mem, err);
        if (ru == -EINVAL || rm == -EINVAL)
                return -EINVAL;
        if ((ru == -ENOENT) != (rm == -ENOENT))
                return invalid(err, "%s: missing (gpu_util and gpu_mem go together)",
                               ru == -ENOENT ? "gpu_util" : "gpu_mem");
        res->gpu_known = ru == 0;
        res->gpu_util = res->gpu_known ? (uint32_t)util : 0;
        res->gpu_mem = res->gpu_known ? (uint64_t)mem : 0;
        return 0;
}

int job_result_from_json(const cJSON *obj, job_result *res, char err[PROTO_ERRLEN]) {
        int64_t code, sig, cpu, peak, ooms, rbytes, wbytes;
        int r;
        *res = (job_result){ 0 };
        if ((r = get_opt_int(obj, "io_rbytes", 0, INT64_MAX, &rbytes, err)) < 0 ||
            (r = get_opt_int(obj, "io_wbytes", 0, INT64_MAX, &wbytes, err)) < 0 ||
            (r = psi_from_json(obj, &res->psi, err)) < 0 ||
            (r = get_opt_int(obj, "exit_code", 0, 255, &code, err)) < 0 ||
            (r = get_opt_int(obj, "signal", 0, 128, &sig, err)) < 0 ||
            (r = get_opt_int(obj, "cpu_usec", 0, INT64_MAX, &cpu, err)) < 0 ||
            (r = get_opt_int(obj, "mem_peak", 0, INT64_MAX, &peak, err)) < 0 ||
            (r = get_opt_int(obj, "oom_kills", 0, INT64_MAX, &ooms, err)) < 0 ||
            (r = get_opt_str(obj, "error", &res->error, err)) < 0)
                return r;
        res->exit_code = (int)code;
        res->signal = (int)sig;
        res->cpu_usec = (uint64_t)cpu;
        res->mem_peak = (uint64_t)peak;
        res->oom_kills = (uint64_t)ooms;
        res->io_rbytes = (uint64_t)rbytes;
        res->io_wbytes = (uint64_t)wbytes;
        return gpu_use_from_json(obj, res, err);
}

void job_result_free(job_result *r) {
        free(r->error);
        r->error = NULL;
}

cJSON *job_to_json(const job *j) { return job_to_json_waiting(j, j->wait); }

cJSON *job_to_json_waiting(const job *j, job_wait wait) {
        cJSON *obj = cJSON_CreateObject();
        if (!obj || !cJSON_AddNumberToObject(obj, "id", (double)j->id) ||
            !cJSON_AddNumberToObject(obj, "uid", j->uid) || !cJSON_AddNumberToObject(obj, "gid", j->gid) ||
            !add_opt_str(obj, "user", j->user) || spec_to_json_public(&j->spec, obj) < 0 ||
            !cJSON_AddStringToObject(obj, "state", job_state_name(j->state)) || !add_opt_str(obj, "node", j->node) ||
            !add_opt_str(obj, "gpu_ids", j->gpu_ids) ||
            !cJSON_AddNumberToObject(obj, "submit_usec", (double)j->submit_usec) ||
            !cJSON_AddNumberToObject(obj, "start_usec", (double)j->start_usec) ||
            !cJSON_AddNumberToObject(obj, "end_usec", (double)j->end_usec) ||
            !cJSON_AddNumberToObject(obj, "attempt", j->attempt ? j->attempt : 1) ||
            (j->array_first && (!cJSON_AddNumberToObject(obj, "array_first", (double)j->array_first) ||
                                !cJSON_AddNumberToObject(obj, "array_index", j->array_index))) ||
            job_result_to_json(&j->result, obj) < 0 ||
            (j->state == JOB_RUNNING && !cJSON_AddNumberToObject(obj, "mem_current", (double)j->result.mem_current)) ||
            (j->state == JOB_PENDING && wait && !cJSON_AddStringToObject(obj, "reason", job_wait_name(wait))) ||
            (j->state == JOB_PENDING && j->reserved_start_usec &&
             !cJSON_AddNumberToObject(obj, "reserved_start_usec", (double)j->reserved_start_usec))) {
                cJSON_Delete(obj);
                return NULL;
        }
        return obj;
}

/* An optional string array; absent leaves *out NULL. */
static int get_opt_strv(const cJSON *obj, const char *field, char ***out, char err[PROTO_ERRLEN]) {
        int r = proto_get_strv(obj, field, JOB_ARGV_MAX, true, out, err);
        return r == -ENOENT ? 0 : r;
}

/* A record's start fields, and the reason a pending job waits. */
static int record_start_parse(const cJSON *obj, job *j, char err[PROTO_ERRLEN]) {
        const char *reason;
        int r = start_fields_parse(obj, &j->spec, err);
        if (r < 0 || (r = get_opt_int(obj, "reserved_start_usec", JOB_RESERVED_UNKNOWN, INT64_MAX,
                                      &j->reserved_start_usec, err)) < 0)
                return r;
        if ((r = proto_get_str(obj, "reason", &reason, err)) == -ENOENT)
                return 0;
        if (r < 0)
                return r;
        return job_wait_from_name(reason, &j->wait) < 0 ? invalid(err, "reason: unknown reason '%s'", reason) : 0;
}

static int record_parse(const cJSON *obj, job *j, char err[PROTO_ERRLEN]) {
        int64_t id, uid, gid, submit, start, end, attempt = 1, array_first, array_index;
        const char *state;
        int r;
        if ((r = proto_get_int(obj, "id", 1, INT64_MAX, &id, err)) < 0)
                return r == -ENOENT ? invalid(err, "%s: required", "id") : r;
        if ((r = proto_get_str(obj, "state", &state, err)) < 0)
                return r == -ENOENT ? invalid(err, "%s: required", "state") : r;
        if ((r = get_opt_int(obj, "uid", 0, UINT32_MAX, &uid, err)) < 0 ||
            (r = get_opt_int(obj, "gid", 0, UINT32_MAX, &gid, err)) < 0 ||
            (r = get_opt_int(obj, "submit_usec", 0, INT64_MAX, &submit, err)) < 0 ||
            (r = get_opt_int(obj, "start_usec", 0, INT64_MAX, &start, err)) < 0 ||
            (r = get_opt_int(obj, "end_usec", 0, INT64_MAX, &end, err)) < 0 ||
            (r = proto_get_int(obj, "attempt", 1, UINT32_MAX, &attempt, err)) == -EINVAL ||
            (r = get_opt_int(obj, "array_first", 0, INT64_MAX, &array_first, err)) < 0 ||
            (r = get_opt_int(obj, "array_index", 0, UINT32_MAX, &array_index, err)) < 0)
                return r;
        if (job_state_from_name(state, &j->state) < 0)
                return invalid(err, "state: unknown state '%s'", state);
        j->id = (uint64_t)id;
        j->uid = (uid_t)uid;
        j->gid = (gid_t)gid;
        j->submit_usec = submit;
        j->start_usec = start;
        j->end_usec = end;
        j->attempt = (uint32_t)attempt;
        j->array_first = (uint64_t)array_first;
        j->array_index = (uint32_t)array_index;
        if ((r = get_opt_str(obj, "user", &j->user, err)) < 0 || (r = get_opt_str(obj, "node", &j->node, err)) < 0 ||
            (r = get_opt_strv(obj, "argv", &j->spec.argv, err)) < 0 ||
            (r = get_opt_str(obj, "cwd", &j->spec.cwd, err)) < 0 ||
            (r = get_opt_str(obj, "stdout_path", &j->spec.stdout_path, err)) < 0 ||
            (r = get_opt_str(obj, "stderr_path", &j->spec.stderr_path, err)) < 0 ||
            (r = get_opt_str(obj, "name", &j->spec.name, err)) < 0 ||
            (r = get_opt_str(obj, "group", &j->spec.group, err)) < 0 ||
            (r = get_opt_str(obj, "job_type", &j->spec.job_type, err)) < 0 ||
            (r = get_opt_int(obj, "mcpu", 0, RES_MCPU_MAX, &j->spec.req.mcpu, err)) < 0 ||
            (r = get_opt_int(obj, "mem", 0, RES_MEM_MAX, &j->spec.req.mem, err)) < 0 ||
            (r = get_opt_int(obj, "mem_high", 0, RES_MEM_MAX, &j->spec.mem_high, err)) < 0 ||
            (r = get_opt_int(obj, "pids", 0, RES_PIDS_MAX, &j->spec.req.pids, err)) < 0 ||
            (r = get_opt_int(obj, "gpus", 0, RES_GPUS_MAX, &j->spec.req.gpus, err)) < 0 ||
            (r = get_opt_str(obj, "gpu_ids", &j->gpu_ids, err)) < 0 ||
            (r = get_opt_int(obj, "expected_usec", 0, INT64_MAX, &j->spec.expected_usec, err)) < 0 ||
            (r = proto_get_bool(obj, "requeue", &j->spec.requeue, err)) == -EINVAL ||
            (r = get_open_mode(obj, &j->spec.open_mode, err)) < 0 || (r = get_umask(obj, &j->spec.umask, err)) < 0 ||
            (r = get_opt_int(obj, "time_limit_usec", 0, INT64_MAX, &j->spec.time_limit_usec, err)) < 0 ||
            (r = get_nodesel(obj, &j->spec, err)) < 0)
                return r;
        int64_t current;
        if ((r = job_result_from_json(obj, &j->result, err)) < 0 ||
            (r = get_opt_int(obj, "mem_current", 0, INT64_MAX, &current, err)) < 0)
                return r;
        j->result.mem_current = (uint64_t)current;
        if ((r = array_fields_parse(obj, &j->spec, err)) < 0 ||
            (r = get_opt_str(obj, "script", &j->spec.script, err)) < 0)
                return r;
        return record_start_parse(obj, j, err);
}

int job_from_json(const cJSON *obj, job *j, char err[PROTO_ERRLEN]) {
        *j = (job){ 0 };
        int r = record_parse(obj, j, err);
        if (r == -ENOMEM)
                snprintf(err, PROTO_ERRLEN, "out of memory");
        if (r < 0)
                job_free(j);
        return r;
}

/* The string fields an array's jobs share but argv, as pointers into j, in out. */
#define SHARED_STRINGS 11
static void shared_strings(job *j, char **out[SHARED_STRINGS]) {
        out[0] = &j->user;
        out[1] = &j->spec.name;
        out[2] = &j->spec.group;
        out[3] = &j->spec.job_type;
        out[4] = &j->spec.cwd;
        out[5] = &j->spec.stderr_path;
        out[6] = &j->spec.constraint;
        out[7] = &j->spec.nodelist;
        out[8] = &j->spec.exclude;
        out[9] = &j->spec.dependency;
        out[10] = &j->spec.script;
}

void job_borrow_spec(job *member, const job *owner, bool with_stdout) {
        member->user = owner->user;
        member->spec = owner->spec;
        member->spec.env = NULL;
        member->borrows_spec = true;
        member->borrows_stdout = with_stdout;
        if (!with_stdout)
                member->spec.stdout_path = NULL;
}

static bool same_str(const char *a, const char *b) { return a == b || (a && b && strcmp(a, b) == 0); }

bool job_share_strings(job *member, job *owner) {
        char **mine[SHARED_STRINGS], **theirs[SHARED_STRINGS];
        size_t i = 0;
        if (member->borrows_spec || owner->borrows_spec || !member->spec.argv || !owner->spec.argv)
                return false;
        shared_strings(member, mine);
        shared_strings(owner, theirs);
        for (size_t f = 0; f < SHARED_STRINGS; f++)
                if (!same_str(*mine[f], *theirs[f]))
                        return false;
        while (member->spec.argv[i] && owner->spec.argv[i] && strcmp(member->spec.argv[i], owner->spec.argv[i]) == 0)
                i++;
        if (member->spec.argv[i] || owner->spec.argv[i])
                return false;
        for (size_t f = 0; f < SHARED_STRINGS; f++) {
                free(*mine[f]);
                *mine[f] = *theirs[f];
        }
        strv_free(member->spec.argv);
        member->spec.argv = owner->spec.argv;
        member->borrows_spec = true;
        if (!owner->borrows_stdout && same_str(member->spec.stdout_path, owner->spec.stdout_path)) {
                free(member->spec.stdout_path);
                member->spec.stdout_path = owner->spec.stdout_path;
                member->borrows_stdout = true;
        }
        return true;
}

void job_free(job *j) {
        if (j->borrows_spec) { /* the owner frees them */
                char **shared[SHARED_STRINGS];
                shared_strings(j, shared);
                for (size_t f = 0; f < SHARED_STRINGS; f++)
                        *shared[f] = NULL;
                j->spec.argv = NULL;
        }
        if (j->borrows_stdout)
                j->spec.stdout_path = NULL;
        free(j->user);
        free(j->node);
        free(j->gpu_ids);
        job_spec_free(&j->spec);
        job_result_free(&j->result);
        *j = (job){ 0 };
}
