/* launch.h - start a job's process inside its cgroup, as its user. */
#pragma once
#include "cgroup.h"
#include "job.h"
#include "usergroups.h"
#include <sys/resource.h>
#include <sys/types.h>

typedef struct launch_req {
        const job_spec *spec;
        uid_t uid;
        gid_t gid;
        cg_backend *cg;
        const char *cg_job;   /* name of the job's cgroup (cg_job_name) */
        int progress_fd;      /* where the child writes each step before it begins it; 0: nowhere */
        struct rlimit nofile; /* the job's open files limit; rlim_max 0: the launcher's own */
        bool truncate_output; /* open the output files with O_TRUNC (job_output_truncates) */
        /* The user's groups, looked up for this launch (the shepherd's, before the go), used as
         * they are; NULL: launch_job looks them up. */
        const usergroups *groups;
        /* For launch_cgroup: the job cgroup's limits, and its department (NULL: none) with a
         * weight per level, as cg_dept_prepare takes them. */
        const cg_limits *lim;
        const char *spare_cg; /* a cgroup made ahead (cg_spare_create) to rename the job's; NULL: none */
        const char *dept;
        const double *dept_weights;
        size_t ndept_weights;
} launch_req;

/* One record of a launch: on its steps pipe a step begun ("open /x/out"; done 0), by the
 * shepherd or the child, or on its report pipe the launch's outcome (done 1, from the shepherd).
 * Shorter than PIPE_BUF, so each record is written whole even with two writers. */
typedef struct launch_progress {
        int done;
        int error;          /* the outcome's errno, 0 when the job runs */
        pid_t pid;          /* the outcome's main process */
        char what[500];     /* the step, or the failure ("chdir /nope: No such file or directory") */
        int foreign_cgroup; /* the outcome: the job's cgroup existed already, so is not the job's
                             * to kill or remove */
} launch_progress;

/* Make the job's cgroup as req says: its department's levels (kept if they exist), then the
 * job's with its limits (req->spare_cg renamed, cg_job_from_spare, else cg_job_create), again
 * should a department be removed meanwhile (the last job of it ending: another process may
 * prune it between the two). Returns 0, 1 when the spare could not become the job's and the
 * job's was made anew, -EEXIST when the job's cgroup existed already (it is left as it was), or
 * -errno with err. */
int launch_cgroup(const launch_req *req, char *err, size_t errlen);
/* Start the job in its cgroup, made already (launch_cgroup), in a child that shares our memory
 * until its exec (CLONE_VM | CLONE_VFORK): on cgroup v2 the kernel starts it there (clone3
 * with CLONE_INTO_CGROUP); where it refuses (spawn.h says which refusals), and on v1, the
 * child moves itself in. Once
 * in its cgroup the child starts a new session, sets its supplementary groups,
 * gid and uid (in that order; root only if uid is 0), changes to spec->cwd, opens stdout/stderr as that user, resets
 * signal dispositions and mask, and execs spec->argv with spec->env. Returns 0 and sets *pid once the exec has
 * succeeded; before each step that may block on a path (chdir, open, execve) the child
 * writes it to req->progress_fd, so that a launch stuck on a dead file system can be told; if any step fails, returns a
 * negative errno with the step and path in err
 * ("chdir /nope: No such file or directory") and the child has been reaped. */
int launch_job(const launch_req *req, pid_t *pid, char *err, size_t errlen);
/* A launch whose child starts before its job comes (a standby shepherd's), in a spare cgroup
 * (cg_spare_create), so that the job's launch neither makes a cgroup nor moves a process into
 * one: the spare is renamed the job's (cg_job_from_spare) with the child in it. */
typedef struct launch_ahead {
        const int *procs_fds; /* the spare's, from cg_job_procs_open: the child moves itself in */
        int nprocs;
        /* Called in the child once it is in the spare, as the parent's code (it runs on the
         * parent's memory, the parent suspended): waits for the job, makes its cgroup (setting
         * move when that is not the spare), and returns its request, or NULL to end without a
         * job. */
        const launch_req *(*wait)(void *arg);
        void *arg;
        bool entered; /* set in the child: it is in the spare */
        bool move;    /* set by wait: the child moves itself into req's cgroup (cg_job_procs_open) */
        void *stack;  /* the child's, once it exec'd: for launch_ahead_release */
} launch_ahead;

/* Start the child of a (launch_ahead), sharing our memory, with us suspended until it has
 * exec'd or ended; given a job it runs as launch_job's child does. Returns 0 and sets *pid once
 * the job's exec has succeeded; 1 when the child ended without a job (a->entered says whether
 * it got into the spare); or -errno with err when the launch failed (the child reaped). */
int launch_job_ahead(launch_ahead *a, pid_t *pid, char *err, size_t errlen);
/* Unmap the stack a child that exec'd left (a->stack), once the launch's outcome is told:
 * spawn_sharing_memory_waiting says why not before. a NULL: nothing. */
void launch_ahead_release(launch_ahead *a);
/* Write the step "step arg" about to begin to fd (a launch_progress record; fd <= 0: nowhere),
 * so that should it hang (a dead NFS server, a FUSE mount that never answers) the agent names
 * it. Never waits on a non-blocking fd: a full pipe drops the step. Async-signal-safe. */
void launch_tell_step(int fd, const char *step, const char *arg);
