/* job.h - the job model shared by controller, agent and CLI, and its JSON form.
 *
 * A job_spec is what a user submits (and what an agent is told to launch); a job_result is
 * what an agent reports when the job ends; a job is the controller's record of both plus its
 * life cycle. Field names in JSON are exactly the C field names; docs/protocol.md lists them. */
#pragma once
#include "res.h"
#include "proto.h"
#include "psi.h"
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum job_state {
        JOB_PENDING,
        JOB_RUNNING,
        JOB_COMPLETED, /* exited with status 0 */
        JOB_FAILED,    /* exited non-zero, killed by a signal, or could not start */
        JOB_CANCELLED,
        JOB_OOM_KILLED,
        JOB_LOST,    /* its agent vanished while it ran */
        JOB_TIMEOUT, /* ran past its time limit: SIGTERM, then SIGKILL after the agent's kill_wait */
        _JOB_STATE_MAX,
} job_state;

/* "pending", "running", "completed", "failed", "cancelled", "oom-killed", "lost", "timeout". */
const char *job_state_name(job_state s);
/* Inverse of job_state_name. Returns 0 or -EINVAL. */
int job_state_from_name(const char *name, job_state *out);
/* True for every state but pending and running. */
bool job_state_is_terminal(job_state s);
/* Whether s names a group: "dept/team", at most JOB_GROUP_LEVELS_MAX components of
 * [A-Za-z0-9_.-] other than "." and "..", separated by single slashes. */
#define JOB_GROUP_LEVELS_MAX 16
bool job_group_ok(const char *s);

#define JOB_NAME_MAX 128
#define JOB_ARGV_MAX 4096
#define JOB_ENV_MAX  4096
/* Bytes a job's command line and its environment may take, each (strings and their NULs): the
 * controller keeps every pending job's command line in memory and prints it in listings, so
 * one user's jobs must not take its memory or make a listing a megabyte per job. Paths are
 * shorter than 4096 bytes (PATH_MAX). */
#define JOB_ARGV_BYTES_MAX (128 * 1024)
#define JOB_ENV_BYTES_MAX  (128 * 1024)
/* Tasks one submit's "array" may make: as many as its indexes (shared/arrayspec.h, 0 to
 * 4,000,000, Slurm's MaxArraySize). A large array is one record while its tasks wait, a few
 * bytes per range of indexes (controller/core/arrays.c); max_pending and the per-user caps still
 * count every task. */
#define JOB_ARRAY_MAX       4000001
#define JOB_ARRAY_INDEX_VAR "COLONY_ARRAY_INDEX" /* an array member's index, in its environment */
/* A submit's time_limit_usec for "--time UNLIMITED": no limit, or the configured maximum. */
#define JOB_TIME_UNLIMITED (-1)
/* The umask of a job whose submitter sent none (a client older than the field). */
#define JOB_UMASK_DEFAULT 022

/* How a job's output files are opened (Slurm's --open-mode). A requeued job's later runs always
 * append, so that its first run's output stays. */
typedef enum job_open_mode {
        JOB_OPEN_DEFAULT,  /* a job's first run truncates them (Slurm's default); an array's tasks,
                            * which may share one file, append, so that no task empties another's */
        JOB_OPEN_APPEND,   /* they keep what they held */
        JOB_OPEN_TRUNCATE, /* a first run truncates them, an array's task too (Slurm's truncate) */
        _JOB_OPEN_MAX
} job_open_mode;

/* "append", "truncate" ("default" for JOB_OPEN_DEFAULT), as --open-mode and the JSON write them. */
const char *job_open_mode_name(job_open_mode m);
/* The mode called name ("append" or "truncate"). Returns 0 or -EINVAL. */
int job_open_mode_from_name(const char *name, job_open_mode *out);
/* Whether a job's run truncates its output files: its first run, unless its mode or its being
 * an array's task (array_first != 0) says to append. */
bool job_output_truncates(job_open_mode m, uint64_t array_first, uint32_t attempt);

typedef struct job_spec {
        char *name;     /* optional; defaults to basename of argv[0] */
        char *group;    /* optional "dept/team" */
        char *job_type; /* optional workload type (colocation); "job_type" on the wire, since "type" names the message
                         */
        char **argv;    /* argv[0] is an absolute path */
        char **env;     /* "K=V" strings */
        char *cwd;      /* absolute */
        char *stdout_path;       /* absolute; opened by the job's user, O_APPEND|O_CREAT (O_TRUNC: open_mode) */
        char *stderr_path;       /* absolute; may equal stdout_path */
        job_open_mode open_mode; /* how its output files are opened (--open-mode) */
        res_t req;               /* mcpu and mem > 0; pids >= 0 (0 = agent default) */
        int64_t mem_high;        /* soft memory limit in bytes, <= req.mem: reclaimed hard above it; 0 = none */
        int64_t expected_usec;   /* the submitter's estimate of the run time, 0 if none (Tetris) */
        bool requeue;            /* when its node is lost, the job goes back to pending instead of ending lost */
        int umask;               /* 0..0777: the submitter's umask, the job's from its start (its output files too) */
        int64_t time_limit_usec; /* run time allowed from its start, 0 = none (the controller fills its default) */
        /* Which nodes may take it (nodesel.h), NULL when not given: a feature expression, a list of
         * nodes of which one, a list of nodes none of which; and a node of its own (an idle one, and
         * nothing else placed there while it runs). */
        char *constraint;
        char *nodelist;
        char *exclude;
        bool exclusive;
        /* No cores of its own even for whole CPUs: it runs on the cores no such job holds, as a
         * fractional job does (colony measure pins the two jobs of a pair to one core). */
        bool share_cores;
        /* When it may start (docs/protocol.md, "Dependencies, holds and begin times"). */
        char *dependency;        /* NULL, or as Slurm writes it: "afterok:1:2,afterany:3" (shared/depend.h) */
        bool hold;               /* submitted (or put) on hold: pending until released */
        int64_t begin_usec;      /* CLOCK_REALTIME microseconds before which it stays pending; 0: none */
        int nice;                /* JOB_NICE_MIN..JOB_NICE_MAX: higher goes after the user's other jobs
                                  * in its department; negative for root only */
        uint32_t array_throttle; /* an array's tasks running at once at most ("%N"), 0: no limit */
        /* A batch script's text (colony submit job.sh), NULL for a command: the job runs this copy,
         * with its "#!" line's interpreter (/bin/sh without one), argv[0] naming the file it came
         * from and argv[1..] its arguments. At most JOB_SCRIPT_BYTES_MAX bytes, valid UTF-8. */
        char *script;
} job_spec;

/* Bytes a batch script may take: it is stored in the job's record and kept in memory while the
 * job is pending, as its command line is (Slurm's default max_script_size is 4 MB; a lab's
 * scripts take a few KB). */
#define JOB_SCRIPT_BYTES_MAX (64 * 1024)

#define JOB_NICE_MIN (-10000)
#define JOB_NICE_MAX 10000

typedef struct job_result {
        int exit_code;                 /* valid when signal == 0 */
        int signal;                    /* terminating signal of the main process, 0 if it exited */
        uint64_t cpu_usec;             /* CPU time of the whole cgroup */
        uint64_t mem_peak;             /* peak memory of the whole cgroup, bytes */
        uint64_t mem_current;          /* while running: bytes charged at the last usage report */
        uint64_t oom_kills;            /* OOM kills inside the cgroup */
        uint64_t io_rbytes, io_wbytes; /* block I/O of the cgroup (v2 io.stat; 0 where unknown) */
        psi_stats psi;                 /* the cgroup's pressure (v2): averages at the last report, totals */
        char *error;                   /* why it failed to start or was killed; NULL if none */
        bool gpu_known;                /* its agent read its GPUs' use (NVML) at the last usage report: */
        uint32_t gpu_util;             /* ...their mean utilisation, percent */
        uint64_t gpu_mem;              /* ...and the device memory used on them, bytes */
} job_result;

/* Why a pending job waits ("reason" in its record): what the last scheduling pass saw. */
typedef enum job_wait {
        JOB_WAIT_NONE,       /* not looked at yet */
        JOB_WAIT_RESOURCES,  /* no up node has room for it */
        JOB_WAIT_PRIORITY,   /* a job ahead of it waits for resources (strict FIFO) */
        JOB_WAIT_DEPENDENCY, /* a job it depends on has not ended (or started) as it needs */
        JOB_WAIT_DEP_NEVER,  /* a dependency that can never be met (kill_invalid_depend = no) */
        JOB_WAIT_HELD,       /* on hold until released */
        JOB_WAIT_BEGIN,      /* its begin time has not come */
        JOB_WAIT_DEPT_CAP,   /* its department holds its cap (department_caps) */
        JOB_WAIT_USER_LIMIT, /* its user holds a per-user limit */
        JOB_WAIT_THROTTLE,   /* its array runs as many members as it may at once (%N) */
        _JOB_WAIT_MAX,
} job_wait;

/* "", "resources", "priority", "dependency", "dependency never met", "held", "begin time",
 * "department cap", "user limit", "throttle". */
const char *job_wait_name(job_wait w);
/* Inverse of job_wait_name. Returns 0 or -EINVAL. */
int job_wait_from_name(const char *name, job_wait *out);

typedef struct job {
        uint64_t id;
        uid_t uid;
        gid_t gid;
        char *user; /* user name at submit time, for display */
        job_spec spec;
        job_state state;
        char *node;           /* agent name while/after running; NULL when pending */
        char *gpu_ids;        /* the GPUs its agent gave it, as their indexes ("0,2"); NULL when none */
        int64_t submit_usec;  /* CLOCK_REALTIME microseconds */
        int64_t start_usec;   /* 0 until started */
        int64_t end_usec;     /* 0 until terminal */
        uint32_t attempt;     /* 1 for the first run, one more each time it is requeued (0 read as 1) */
        uint32_t array_index; /* its index in its array (Slurm's --array: 1,3,5-7 gives 1, 3, 5, 6, 7) */
        uint64_t array_first; /* the id of the first job of its array (one submit of many), 0 when none */
        job_result result;
        /* What job_free leaves alone because another job, which outlives this one, owns it: the
         * strings every member of an array shares (user, name, group, job_type, argv, cwd,
         * stderr_path), and stdout_path when it was given rather than made from the id. */
        bool borrows_spec, borrows_stdout;
        job_wait wait;       /* why a pending job has not started, as the last scheduling pass saw it */
        uint32_t deps_unmet; /* the controller's count of its dependencies not met yet */
        bool deps_never;     /* one of them can never be met (it stays pending: kill_invalid_depend = no) */
        bool singleton;      /* its dependency has "singleton": it starts when no job of its user and name runs */
        /* The start the last EASY backfill pass reserved for this pending job (policies/backfill.h),
         * in memory only: 0 none, JOB_RESERVED_UNKNOWN when a job without a time limit holds the
         * node it needs ("reserved_start_usec" in its record). */
        int64_t reserved_start_usec;
        size_t running_pos; /* while it runs, its place in the controller's running array (reservation.c) */
        void *pool_chunk;   /* the controller's chunk its record was cut from (jobpool.h), NULL when malloc'ed */
        /* The controller's index of its node (ctl_node.index) + 1 since it was charged to it, 0
         * before: beside node, so that finding whether a running job runs on a node compares
         * integers, not a name out of the caches. */
        uint32_t node_index;
        /* The controller's node of its department in the fair order (fairorder_dept) + 1, 0 until
         * looked up: a pass reads it for every pending job (ctl_job_dept). */
        uint32_t fair_dept;
} job;

#define JOB_RESERVED_UNKNOWN (-1)

/* Validate and copy a submit/launch JSON object's spec fields into spec (which the caller
 * zeroed). Returns 0, or -EINVAL with a one-line reason in err and spec left empty. */
int job_spec_from_json(const cJSON *obj, job_spec *spec, char err[PROTO_ERRLEN]);
/* At least the length of job_spec_to_json's object printed unformatted, cheaply (no JSON is
 * built): each string counted as if every byte were escaped. */
size_t job_spec_json_bound(const job_spec *spec);
/* Add spec's fields to obj. Returns 0 or -ENOMEM. */
int job_spec_to_json(const job_spec *spec, cJSON *obj);
/* The spec field names, NULL-terminated, for proto_check_fields. */
extern const char *const job_spec_fields[];
/* The same and "array": the fields of a submit request. */
extern const char *const job_submit_fields[];
/* Free the strings of a spec (not the struct). */
void job_spec_free(job_spec *spec);
/* Set name=value in the malloc'ed environment *env (grown as needed), replacing the variable when
 * replace, else leaving one already set alone. Returns 0 or -ENOMEM. */
int job_env_set(char ***env, const char *name, const char *value, bool replace);

/* Add result's fields to obj / read them back (for the agent's "finished" message). */
int job_result_to_json(const job_result *r, cJSON *obj);
/* Add only the usage fields of r (cpu_usec, mem_peak, oom_kills, io_*, psi) to obj, for the
 * agent's "usage" samples. Returns 0 or -ENOMEM. */
int job_usage_to_json(const job_result *r, cJSON *obj);
int job_result_from_json(const cJSON *obj, job_result *r, char err[PROTO_ERRLEN]);
void job_result_free(job_result *r);

/* The whole record as a JSON object (for show, queue, wait replies). Caller owns it. */
cJSON *job_to_json(const job *j);
/* job_to_json with wait as a pending job's reason, in place of j->wait (the controller's
 * reason as shown, which a pass that did not read j may have changed). */
cJSON *job_to_json_waiting(const job *j, job_wait wait);
/* Parse a record produced by job_to_json (the CLI's view). Returns 0 or -EINVAL. */
int job_from_json(const cJSON *obj, job *j, char err[PROTO_ERRLEN]);
/* Free a record's strings (not the struct), except those it borrows. */
void job_free(job *j);
/* Give member owner's user and spec but env (NULL), its strings borrowed rather than copied
 * (stdout_path only when with_stdout, else NULL): an array's jobs hold them once. member must
 * have none of its own; owner must outlive it. */
void job_borrow_spec(job *member, const job *owner, bool with_stdout);
/* When member's shared strings (as job_borrow_spec's) equal owner's, free member's and borrow
 * owner's instead (stdout_path too when equal): jobs of an array read back from the store hold
 * them once again. Neither may borrow already; owner must outlive member. Returns whether it
 * did. */
bool job_share_strings(job *member, job *owner);
