/* jobs.c - what the job subcommands share: the controller's socket, job and user operands, the
 * submit and wait requests (colony demo's too), and a command's executable. */
#include "cli.h"
#include "arraycli.h"
#include "client.h"
#include "format.h"
#include "jobs.h"
#include "proto.h"
#include "units.h"
#include <errno.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int jobs_socket_for(const cli *c, char *buf) {
        int r = client_socket_path(c, buf, PATH_MAX);

        if (r < 0)
                cli_error(c, "%s",
                          r == -EINVAL ? "the client config does not parse"
                                       : "the controller's socket path is too long");
        return r;
}

int jobs_parse_id(const cli *c, const char *s, uint64_t *id) {
        int64_t v;

        if (arraycli_is_task(s))
                return arraycli_task_id(c, s, id);

        if (units_parse_uint(s, INT64_MAX, &v) < 0 || v < 1)
                return cli_usage_error(c, "'%s' is not a job id", s);
        *id = (uint64_t)v;
        return 0;
}

int jobs_record_from_reply(const cJSON *reply, job *j, char *err, size_t errlen) {
        char perr[PROTO_ERRLEN] = "";

        if (job_from_json(cJSON_GetObjectItemCaseSensitive(reply, "job"), j, perr) < 0) {
                snprintf(err, errlen, "bad job record from the controller: %s", perr);
                return -EBADMSG;
        }
        return 0;
}

int jobs_submit(const char *sock, const job_spec *spec, const char *array, long count, uint64_t *id, cJSON **reply,
                char *err, size_t errlen) {
        char perr[PROTO_ERRLEN] = "";
        cJSON *req = proto_new("submit"), *rep = NULL;
        int64_t v, made = 0;
        int r;

        if (!req || job_spec_to_json(spec, req) < 0 || (array && !cJSON_AddStringToObject(req, "array", array))) {
                cJSON_Delete(req);
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        /* the controller refuses it too; saying so before connecting spares a round trip */
        if (proto_check_utf8(req, perr) < 0) {
                cJSON_Delete(req);
                snprintf(err, errlen, "%s", perr);
                return -EINVAL;
        }
        /* the controller answers an array once all of it is stored: allow it a millisecond a job */
        r = client_call(sock, req, "submitted", REQUEST_TIMEOUT_MS + (int)count, &rep, err, errlen);
        cJSON_Delete(req);
        if (r == 0 && (proto_get_int(rep, "id", 1, INT64_MAX, &v, perr) != 0 ||
                       (count && (proto_get_int(rep, "count", count, count, &made, perr) != 0)))) {
                snprintf(err, errlen, "the controller's reply has no job id%s: %s", count ? " and count" : "", perr);
                r = -EBADMSG;
        }
        if (r == 0) {
                *id = (uint64_t)v;
                if (reply) {
                        *reply = rep;
                        rep = NULL;
                }
        }
        cJSON_Delete(rep);
        return r;
}

int jobs_wait(const char *sock, uint64_t id, int timeout_ms, job *out, cJSON **reply, char *err, size_t errlen) {
        cJSON *rep = NULL;
        int r;

        r = client_simple(sock, "wait", id, "job", timeout_ms, &rep, err, errlen);
        if (r == 0)
                r = jobs_record_from_reply(rep, out, err, errlen);
        if (r == 0 && reply) {
                *reply = rep;
                rep = NULL;
        }
        cJSON_Delete(rep);
        return r;
}

/* Is path an executable regular file? Returns 0, -ENOENT, -EISDIR or -EACCES. */
static int check_executable(const char *path) {
        struct stat st;

        if (stat(path, &st) < 0)
                return -errno;
        if (S_ISDIR(st.st_mode))
                return -EISDIR;
        if (!S_ISREG(st.st_mode) || access(path, X_OK) < 0)
                return -EACCES;
        return 0;
}

char *jobs_absolute_path(const char *path, const char *cwd) {
        char *out;

        if (path[0] == '/')
                return strdup(path);
        while (path[0] == '.' && path[1] == '/')
                path += 2 + strspn(path + 2, "/");
        if (asprintf(&out, "%s%s%s", cwd, strcmp(cwd, "/") ? "/" : "", path) < 0)
                return NULL;
        return out;
}

/* Look cmd up in $PATH as a shell does. Returns 0 with *out (absolute, malloc'ed) or -errno:
 * -ENOENT when no directory has it, -EACCES when one has it but not executable. */
static int search_path(const char *cmd, const char *cwd, char **out) {
        char fallback[256] = "/bin:/usr/bin", *cand = NULL;
        const char *p = getenv("PATH");
        int best = -ENOENT, r;

        if (!p)
                p = confstr(_CS_PATH, fallback, sizeof(fallback)) > 0 ? fallback : "/bin:/usr/bin";
        for (;;) {
                int len = (int)strcspn(p, ":");
                if (asprintf(&cand, "%.*s%s%s", len, p, len ? "/" : "", cmd) < 0)
                        return -ENOMEM;
                r = check_executable(cand);
                if (r == 0) {
                        *out = jobs_absolute_path(cand, cwd);
                        free(cand);
                        return *out ? 0 : -ENOMEM;
                }
                free(cand);
                if (r == -EACCES)
                        best = r;
                if (!p[len])
                        return best;
                p += len + 1;
        }
}

int jobs_resolve_command(const cli *c, const char *cmd, const char *cwd, char **out) {
        int r;

        if (strchr(cmd, '/')) {
                *out = jobs_absolute_path(cmd, cwd);
                r = *out ? check_executable(*out) : -ENOMEM;
        } else
                r = search_path(cmd, cwd, out);
        if (r == 0)
                return 0;
        if (r == -ENOENT || r == -ENOTDIR)
                cli_error(c, "%s: command not found", cmd);
        else if (r == -EISDIR)
                cli_error(c, "%s: is a directory", cmd);
        else if (r == -EACCES)
                cli_error(c, "%s: permission denied (not an executable file)", cmd);
        else
                cli_error(c, "%s: %s", cmd, strerror(-r));
        free(*out);
        *out = NULL;
        return EXIT_FAIL;
}

int jobs_parse_user(const cli *c, const char *s, int64_t *uid) {
        struct passwd *pw;

        if (units_parse_uint(s, UINT32_MAX - 1, uid) == 0)
                return 0;
        pw = getpwnam(s);
        if (!pw)
                return cli_usage_error(c, "--user: no user named '%s'", s);
        *uid = pw->pw_uid;
        return 0;
}

int jobs_print_table(const cli *c, fmt_table *t, int r, const char *perr) {
        if (r == 0)
                fmt_table_print(t, stdout);
        else
                cli_error(c, "bad reply from the controller: %s", *perr ? perr : strerror(-r));
        fmt_table_free(t);
        return r == 0 ? 0 : EXIT_FAIL;
}

int jobs_one_job(const cli *c, int o, int argc, char **argv, const char *usage, uint64_t *id, char *sock) {
        int r;

        if (o < 0)
                return cli_opts_status(o);
        if (argc - optind != 1)
                return cli_usage_error(c, "give one job id (%s)", usage);
        if ((r = jobs_parse_id(c, argv[optind], id)) != 0) /* an id, or an array's task A_i */
                return r;
        if (jobs_socket_for(c, sock) < 0)
                return EXIT_FAIL;
        return -1;
}
