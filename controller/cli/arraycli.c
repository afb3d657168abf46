/* arraycli.c - job arrays on the command line (arraycli.h). */
#include "arraycli.h"
#include "client.h"
#include "jobs.h"
#include "proto.h"
#include "units.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool arraycli_is_task(const char *s) { return strchr(s, '_') != NULL; }

/* Ask the controller at sock about array id (and its task index, when index >= 0). Returns 0
 * with *last and *task (0 without index), or -errno with err set. */
static int ask_array(const char *sock, uint64_t id, int64_t index, uint64_t *last, uint64_t *task, char *err,
                     size_t errlen) {
        char perr[PROTO_ERRLEN] = "";
        cJSON *req = proto_new("array"), *rep = NULL;
        int64_t l, t = 0;
        int r = -ENOMEM;
        if (req && cJSON_AddNumberToObject(req, "id", (double)id) &&
            (index < 0 || cJSON_AddNumberToObject(req, "index", (double)index)))
                r = client_call(sock, req, "array", REQUEST_TIMEOUT_MS, &rep, err, errlen);
        else
                snprintf(err, errlen, "out of memory");
        if (r == 0 && (proto_get_int(rep, "last", 1, INT64_MAX, &l, perr) != 0 ||
                       (index >= 0 && proto_get_int(rep, "task", 1, INT64_MAX, &t, perr) != 0))) {
                snprintf(err, errlen, "bad reply from the controller: %s", perr);
                r = -EBADMSG;
        }
        if (r == 0) {
                *last = (uint64_t)l;
                *task = (uint64_t)t;
        }
        cJSON_Delete(req);
        cJSON_Delete(rep);
        return r;
}

int arraycli_task_id(const cli *c, const char *s, uint64_t *id) {
        char head[24], sock[PATH_MAX], err[ERRLEN];
        const char *us = strchr(s, '_');
        int64_t array, index;
        uint64_t last;
        size_t n = (size_t)(us - s);
        if (n == 0 || n >= sizeof(head))
                return cli_usage_error(c, "'%s' is not a job id (ID, or ARRAY_INDEX for an array's task)", s);
        memcpy(head, s, n);
        head[n] = '\0';
        if (units_parse_uint(head, INT64_MAX, &array) < 0 || array < 1 ||
            units_parse_uint(us + 1, ARRAY_INDEX_MAX, &index) < 0)
                return cli_usage_error(c, "'%s' is not a job id (ID, or ARRAY_INDEX for an array's task)", s);
        if (jobs_socket_for(c, sock) < 0)
                return EXIT_FAIL;
        if (ask_array(sock, (uint64_t)array, index, &last, id, err, sizeof(err)) < 0) {
                cli_error(c, "%s: %s", s, err);
                return EXIT_FAIL;
        }
        return 0;
}

int arraycli_resolve_tasks(const cli *c, const char *text, char **out) {
        size_t len = strlen(text), cap = len + 1, used = 0;
        char *buf = malloc(cap), tok[64];
        *out = NULL;
        if (!buf) {
                cli_error(c, "out of memory");
                return EXIT_FAIL;
        }
        for (const char *p = text; *p;) {
                size_t n = strcspn(p, ":,");
                const char *piece = p;
                uint64_t id;
                if (n < sizeof(tok) && memchr(p, '_', n)) { /* a task: its id, at most 20 digits */
                        memcpy(tok, p, n);
                        tok[n] = '\0';
                        int r = arraycli_task_id(c, tok, &id);
                        if (r != 0) {
                                free(buf);
                                return r;
                        }
                        n = (size_t)snprintf(tok, sizeof(tok), "%" PRIu64, id);
                        piece = tok;
                }
                char *grown = used + n + 2 > cap ? realloc(buf, cap = used + n + 2 + len) : buf;
                if (!grown) {
                        free(buf);
                        cli_error(c, "out of memory");
                        return EXIT_FAIL;
                }
                buf = grown;
                memcpy(buf + used, piece, n);
                used += n;
                p += piece == tok ? strcspn(p, ":,") : n;
                if (*p)
                        buf[used++] = *p++;
        }
        buf[used] = '\0';
        *out = buf;
        return 0;
}

int arraycli_last(const char *sock, uint64_t id, uint64_t *last, char *err, size_t errlen) {
        uint64_t task;
        return ask_array(sock, id, -1, last, &task, err, errlen);
}

int arraycli_add_tasks(cJSON *reply, const char *spec, uint64_t first) {
        char err[256];
        array_set set = { 0 };
        uint32_t throttle, index;
        cJSON *tasks = NULL;
        int r = array_spec_parse(spec, JOB_ARRAY_MAX, &set, &throttle, err, sizeof(err));
        if (r == 0 && !(tasks = cJSON_AddArrayToObject(reply, "tasks")))
                r = -ENOMEM;
        for (uint64_t id = first; r == 0 && array_set_take(&set, &index) == 0; id++) {
                cJSON *t = cJSON_CreateObject();
                if (!t || !cJSON_AddItemToArray(tasks, t) || !cJSON_AddNumberToObject(t, "id", (double)id) ||
                    !cJSON_AddNumberToObject(t, "index", index))
                        r = -ENOMEM;
        }
        array_set_free(&set);
        return r;
}

bool arraycli_folds(const job *prev, const job *j) {
        return prev->array_first && j->array_first == prev->array_first && prev->state == JOB_PENDING &&
               j->state == JOB_PENDING && j->wait == prev->wait;
}

const char *arraycli_row_id(const job *j, const array_set *set, char *buf, size_t len) {
        if (!j->array_first) {
                snprintf(buf, len, "%" PRIu64, j->id);
        } else if (set && array_set_count(set) > 1) {
                /* a table's column: cut as squeue cuts it, the throttle kept (--json has it all) */
                char fold[ARRAYCLI_FOLD_WIDTH + 1], limit[16] = "";
                size_t n = array_set_format(set, 0, fold, sizeof(fold));
                if (j->spec.array_throttle)
                        snprintf(limit, sizeof(limit), "%%%" PRIu32, j->spec.array_throttle);
                snprintf(buf, len, "%" PRIu64 "_[%s%s%s]", j->array_first, fold, n >= sizeof(fold) ? "..." : "", limit);
        } else {
                snprintf(buf, len, "%" PRIu64 "_%" PRIu32, j->array_first, j->array_index);
        }
        return buf;
}

/* Add the fold of the run from first, whose indexes set holds, to list. Returns 0 or -ENOMEM. */
static int add_fold(cJSON *list, const job *first, const array_set *set) {
        char fold[1024];
        cJSON *o = cJSON_CreateObject();
        array_set_format(set, first->spec.array_throttle, fold, sizeof(fold));
        if (!o || !cJSON_AddItemToArray(list, o) || !cJSON_AddNumberToObject(o, "id", (double)first->array_first) ||
            !cJSON_AddStringToObject(o, "pending", fold) ||
            !cJSON_AddNumberToObject(o, "count", (double)array_set_count(set)))
                return -ENOMEM;
        return 0;
}

int arraycli_add_folds(cJSON *reply) {
        const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(reply, "jobs"), *item;
        cJSON *list = cJSON_AddArrayToObject(reply, "arrays");
        char perr[PROTO_ERRLEN];
        array_set set = { 0 };
        job prev = { 0 };
        int r = list ? 0 : -ENOMEM;
        cJSON_ArrayForEach(item, jobs) {
                job j = { 0 };
                if (r < 0 || job_from_json(item, &j, perr) < 0) {
                        job_free(&j);
                        continue; /* the table says what is wrong with a record; here it is left out */
                }
                uint32_t index = j.array_index;
                if (arraycli_folds(&prev, &j)) {
                        job_free(&j);
                } else {
                        if (array_set_count(&set) > 1)
                                r = add_fold(list, &prev, &set);
                        array_set_free(&set);
                        job_free(&prev);
                        prev = j;
                }
                if (r == 0 && prev.array_first && prev.state == JOB_PENDING && array_set_put(&set, index) == -ENOMEM)
                        r = -ENOMEM;
        }
        if (r == 0 && array_set_count(&set) > 1)
                r = add_fold(list, &prev, &set);
        array_set_free(&set);
        job_free(&prev);
        return r;
}

int arraycli_record_row(const cJSON *rec, job *j, array_set *set, char err[PROTO_ERRLEN]) {
        int64_t id, next, throttle = 0, mcpu = 0, mem = 0, limit = 0, submit = 0, gpus = 0;
        const char *pending, *user = NULL, *name = NULL;
        bool hold = false;
        uint32_t ignored;
        int r;
        *j = (job){ 0 };
        if (proto_get_int(rec, "id", 1, INT64_MAX, &id, err) != 0 ||
            proto_get_int(rec, "next_id", 1, INT64_MAX, &next, err) != 0 ||
            proto_get_str(rec, "pending", &pending, err) != 0 ||
            proto_get_int(rec, "throttle", 0, UINT32_MAX, &throttle, err) == -EINVAL ||
            proto_get_int(rec, "mcpu", 0, INT64_MAX, &mcpu, err) == -EINVAL ||
            proto_get_int(rec, "mem", 0, INT64_MAX, &mem, err) == -EINVAL ||
            proto_get_int(rec, "gpus", 0, INT64_MAX, &gpus, err) == -EINVAL ||
            proto_get_int(rec, "time_limit_usec", INT64_MIN, INT64_MAX, &limit, err) == -EINVAL ||
            proto_get_int(rec, "submit_usec", 0, INT64_MAX, &submit, err) == -EINVAL ||
            proto_get_bool(rec, "hold", &hold, err) == -EINVAL || proto_get_str(rec, "user", &user, err) == -EINVAL ||
            proto_get_str(rec, "name", &name, err) == -EINVAL)
                return -EBADMSG;
        if ((r = array_spec_parse(pending, SIZE_MAX, set, &ignored, err, PROTO_ERRLEN)) < 0)
                return r == -ENOMEM ? r : -EBADMSG;
        *j = (job){ .id = (uint64_t)next,
                    .state = JOB_PENDING,
                    .array_first = (uint64_t)id,
                    .submit_usec = submit,
                    .wait = hold ? JOB_WAIT_HELD : JOB_WAIT_PRIORITY };
        (void)array_set_at(set, 0, &j->array_index);
        j->spec.array_throttle = (uint32_t)throttle;
        j->spec.req = (res_t){ .mcpu = mcpu, .mem = mem, .gpus = gpus };
        j->spec.time_limit_usec = limit;
        if ((user && !(j->user = strdup(user))) || (name && !(j->spec.name = strdup(name)))) {
                snprintf(err, PROTO_ERRLEN, "out of memory");
                return -ENOMEM;
        }
        return 0;
}
