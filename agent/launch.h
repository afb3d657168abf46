/* launch.h - start a job's process inside its cgroup, as its user. */
#pragma once
#include "cgroup.h"
#include "job.h"
#include <sys/types.h>

typedef struct launch_req {
        const job_spec *spec;
        uid_t uid;
        gid_t gid;
        cg_backend *cg;
        const char *cg_job; /* name of the job's cgroup, already created */
        int progress_fd;    /* where the child writes each step before it begins it; 0: nowhere */
} launch_req;

/* One record on a launch's progress pipe: a step the child begins ("open /x/out"; done 0), or
 * the launch's outcome (done 1, from the shepherd). Shorter than PIPE_BUF, so each record is
 * written whole even with two writers. */
typedef struct launch_progress {
        int done;
        int error;      /* the outcome's errno, 0 when the job runs */
        pid_t pid;      /* the outcome's main process */
        char what[500]; /* the step, or the failure ("chdir /nope: No such file or directory") */
} launch_progress;

/* Fork the job. The child waits until the parent has attached it to the job's cgroup, then
 * starts a new session, sets its supplementary groups, gid and uid (in that order; root only if
 * uid is 0), changes to spec->cwd, opens stdout/stderr as that user, resets signal dispositions
 * and mask, and execs spec->argv with spec->env. Returns 0 and sets *pid once the exec has
 * succeeded; before each step that may block on a path (chdir, open, execve) the child
 * writes it to req->progress_fd, so that a launch stuck on a dead file system can be told; if any step fails, returns a negative errno with the step and path in err
 * ("chdir /nope: No such file or directory") and the child has been reaped. */
int launch_job(const launch_req *req, pid_t *pid, char *err, size_t errlen);
