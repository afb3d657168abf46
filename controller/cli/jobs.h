/* jobs.h - the job requests (submit, wait) that `colony demo` makes too, and what the job
 * commands share. */
#pragma once
#include "cli.h"
#include "format.h"
#include "job.h"
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdio.h>
#include <stdint.h>

/* Submit spec to the controller at sock: one job, or with array (NULL: none) an array of count
 * tasks in one request, array being Slurm's text of their indexes ("0-99%8", checked:
 * shared/arrayspec.h), each task with its index in COLONY_ARRAY_TASK_ID at launch. Returns 0
 * with *id, the first job's, which is the array's id (and *reply when reply is not NULL; caller
 * owns it), or -errno with one line in err: an array is refused whole. */
int jobs_submit(const char *sock, const job_spec *spec, const char *array, long count, uint64_t *id, cJSON **reply,
                char *err, size_t errlen);
/* Wait (up to timeout_ms; < 0: forever) until job id is terminal. Returns 0 with its record in
 * *out (free with job_free) and *reply when not NULL, or -errno with one line in err
 * (-ETIMEDOUT, -EINTR, ...). */
int jobs_wait(const char *sock, uint64_t id, int timeout_ms, job *out, cJSON **reply, char *err, size_t errlen);

/* The absolute path of cmd ($PATH searched when it has no '/'), checked executable, into
 * *out (malloc'ed). Returns 0, or EXIT_FAIL after printing why (*out NULL). */
int jobs_resolve_command(const cli *c, const char *cmd, const char *cwd, char **out);
/* Submit one job per line of f over one connection (pipelined): the line, split at blanks (no
 * quoting; blank lines and lines starting with '#' skipped), is the command line, the rest is
 * spec's. Prints the ids in order, or with --json each reply on a line (batch.c). Returns an
 * exit status: EXIT_FAIL when any was refused. */
int jobs_submit_lines(const cli *c, const char *sock, const job_spec *spec, FILE *f);

#define REQUEST_TIMEOUT_MS 30000 /* a controller silent this long on a plain request is stuck */

/* The controller's socket for c into buf (PATH_MAX). Prints the error; returns 0 or -errno. */
int jobs_socket_for(const cli *c, char *buf);
/* A --time operand, as submit's (UNLIMITED: JOB_TIME_UNLIMITED), into *usec. Returns 0, or
 * -EINVAL after printing why. */
int jobs_parse_time_limit(const cli *c, const char *arg, int64_t *usec);
/* A job id operand, or "A_i" for task i of array A (asked of the controller). Returns 0, or
 * EXIT_USAGE (EXIT_FAIL when the controller knows no such task) after printing why. */
int jobs_parse_id(const cli *c, const char *s, uint64_t *id);
/* A --user operand, NAME or UID, to a uid. Returns 0 or EXIT_USAGE after printing why. */
int jobs_parse_user(const cli *c, const char *s, int64_t *uid);
/* colony submit's command, or with run colony run's: the one job submitted, then followed
 * (run_submitted). Returns an exit status. */
int jobs_submit_main(cli *c, int argc, char **argv, bool run);
/* Submit spec, print its output as it comes and exit as the job did (run.c). Returns an exit
 * status: the job's (128 + N for a signal), or non-zero with one line saying why. */
int run_submitted(const cli *c, const char *sock, const job_spec *spec);

/* Parse the record in reply's "job" into j (free with job_free). Returns 0 or -EBADMSG with the
 * reason in err. */
int jobs_record_from_reply(const cJSON *reply, job *j, char *err, size_t errlen);
/* path made absolute against cwd, leading "./" dropped (malloc'ed, caller frees); NULL when out
 * of memory. */
char *jobs_absolute_path(const char *path, const char *cwd);
/* The table t of the jobs in a controller's reply: printed when r is 0, else "bad reply from the
 * controller" with perr (r's errno when perr is empty); freed either way. Returns 0 or
 * EXIT_FAIL. */
int jobs_print_table(const cli *c, fmt_table *t, int r, const char *perr);
/* The end of the option loop (its last cli_getopt result o) of a command that takes one job
 * (usage: how to call it, for the error): the job id or task A_i at optind into *id, the
 * controller's socket into sock (PATH_MAX). Returns -1 to go on, else an exit status: EXIT_USAGE,
 * or EXIT_FAIL when the controller knows no such task or its socket is unknown. */
int jobs_one_job(const cli *c, int o, int argc, char **argv, const char *usage, uint64_t *id, char *sock);
