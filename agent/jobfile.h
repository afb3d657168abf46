/* jobfile.h - the text of the files a job leaves in the agent's state directory, so that a
 * restarted agent can re-adopt the job or report how it ended. Pure: parsing and formatting
 * only (jobdir.h reads and writes the files), so that it is unit-tested without a disk.
 *
 * Per job id N, in the state directory (docs/architecture.md, "Restarts"):
 *
 *   job-N.json   the record: written by the agent at launch, before the job may start
 *                {"id":7,"cgroup":"job-7","shepherd_pid":4242,"shepherd_start":987654,
 *                 "mem_limit":67108864,"start_usec":1767225600000000,"cancelled":false,"attempt":1,
 *                 "time_limit_usec":3600000000,"timed_out":false,"gpu_ids":"0,2"}
 *   job-N.exit   how the main process ended: written by the shepherd once it has reaped it
 *                {"exit_code":3,"signal":0,"end_usec":1767225660000000}
 *   job-N.done   the "finished" report itself: written by the agent before the job's cgroup is
 *                removed, deleted with the other two once the controller acknowledged it */
#pragma once
#include "proto.h"
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum jobfile_kind { JOBFILE_RECORD, JOBFILE_EXIT, JOBFILE_DONE, _JOBFILE_KIND_MAX } jobfile_kind;

#define JOBFILE_CGROUP_MAX  1024 /* department paths included */
#define JOBFILE_GPU_IDS_MAX 256  /* a GPU index list, gpus.h's GPUS_LIST_MAX */

typedef struct jobfile_record {
        uint64_t id;
        char cgroup[JOBFILE_CGROUP_MAX];   /* the job's cgroup, relative to the agent's subtree */
        pid_t shepherd;                    /* the shepherd's pid... */
        uint64_t shepherd_start;           /* ...and its start time (/proc/PID/stat field 22), so
                                            * that a reused pid is not taken for it */
        int64_t mem_limit;                 /* bytes, for the OOM error text; 0 = none */
        int64_t start_usec;                /* CLOCK_REALTIME when the job was let go */
        bool cancelled;                    /* a cancel arrived before the job ended */
        uint32_t attempt;                  /* which run of the job this is (the launch's; 1 when a
                                            * record written before attempts has none) */
        int64_t time_limit_usec;           /* run time allowed from start_usec; 0 = none (or absent) */
        bool timed_out;                    /* its time limit passed: it ends timeout (absent: false) */
        char gpu_ids[JOBFILE_GPU_IDS_MAX]; /* the GPUs it holds ("0,2"; absent: "", none) */
} jobfile_record;

typedef struct jobfile_exit {
        int exit_code; /* valid when signal == 0 */
        int signal;    /* the main process's terminating signal, 0 if it exited */
        int64_t end_usec;
} jobfile_exit;

/* The file name suffix of a kind: "json", "exit", "done". */
const char *jobfile_suffix(jobfile_kind kind);
/* Split a state directory entry name "job-<id>.<suffix>" into id and kind. Returns 0, or
 * -EINVAL for any other name (temporary files included). */
int jobfile_name_parse(const char *name, uint64_t *id, jobfile_kind *kind);

/* The record / exit status as one line of JSON, malloc'ed (NULL when out of memory). */
char *jobfile_record_format(const jobfile_record *r);
char *jobfile_exit_format(const jobfile_exit *e);
/* Parse what the formatters wrote. Returns 0, or -EINVAL with the field at fault in err
 * (unknown and missing fields are errors: a record half understood must not be acted on). */
int jobfile_record_parse(const char *text, jobfile_record *r, char err[PROTO_ERRLEN]);
int jobfile_exit_parse(const char *text, jobfile_exit *e, char err[PROTO_ERRLEN]);

/* From the text of /proc/PID/stat, the process state letter ('R', 'S', 'Z'...) and start time
 * (field 22, clock ticks after boot). The command name may hold spaces and parentheses, so
 * fields are counted after its last ')'. Returns 0 or -EINVAL. */
int jobfile_stat_parse(const char *stat, char *state, uint64_t *start);
