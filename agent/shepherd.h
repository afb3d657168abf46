/* shepherd.h - the small process that parents one job, so that the job outlives its agent.
 *
 * The agent forks one shepherd per job, most often ahead of it: a standby, forked once a launch
 * is over, is handed the next job's request (shepherd_hand) and goes on as one forked for the
 * job would; on v1 it has the job's process waiting already, in a spare cgroup that becomes the
 * job's (launch_job_ahead). The shepherd stays in the agent's cgroup (on v2 the
 * agent's leaf), so it counts against neither the job's memory nor its tasks. It puts
 * /dev/null on its standard descriptors and closes every other one it inherited but its two
 * pipes (the controller socket above all), leaves the agent's session, becomes a child
 * subreaper (the job's orphans are reaped by it, not by PID 1), and makes the job's cgroup
 * (launch_cgroup: the agent's loop never waits on cgroupfs) and looks up the job user's groups
 * (usergroups.h: a standby's lookup made ahead, while current) while the agent writes the job's
 * record. It then waits for the agent's go (without one it removes the cgroup and exits),
 * launches the job exactly as launch_job() does, tells the agent the job's pid or why it could
 * not start over the report pipe, waits for the job's main process, writes how it ended to job-<id>.exit
 * in the state directory (jobdir_replace: atomic; not fsynced, see jobdir.c; through a spare
 * file the agent gave it, jobdir.h), and exits. Whether the agent still lives by then does not
 * matter. Each step of the launch that may block (the cgroup, the groups, then the child's
 * chdir, opens and exec) is told first on a pipe of its own, which the agent reads only when the
 * launch overruns its deadline, to name the step it hangs in: heard as they came, the steps
 * were five turns of the agent's loop a launch, in a cgroup v2 guest 6% of the launch and 13% of
 * a drain's time (docs/benchmarks.md). */
#pragma once
#include "forkserver.h"
#include "jobfile.h"
#include "launch.h"
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

/* What ps shows for a shepherd once the job has exec'd (or could not): 15 characters, the most
 * comm holds. */
#define SHEPHERD_NAME "colony-shepherd"
/* Its name, and its child's, from its start until then: while it makes the job's cgroup and
 * until the exec. A restarted agent tells by it a launch that may still stall. */
#define SHEPHERD_LAUNCH_NAME "colony-launch"
/* A standby's, until its job's request is read. A restarted agent takes it as a launch's: the
 * record may have been written after the request was sent, before it was read. */
#define SHEPHERD_STANDBY_NAME "colony-standby"
/* The fork server's, which forks the shepherds (shepherd_forker). */
#define SHEPHERD_FORKER_NAME "colony-forker"

typedef struct shepherd {
        pid_t pid;
        uint64_t start;                          /* its start time: /proc/PID/stat field 22 */
        int go_fd, go_peer, report_fd, steps_fd; /* the agent's pipe ends, none of them blocking */
        int go_cap;                              /* the go pipe's capacity */
        bool ready;                              /* a standby that said it waits for its request */
} shepherd;

/* The user of the job launched last. */
typedef struct shepherd_user {
        bool known;
        uid_t uid;
        gid_t gid;
        char cgroup[JOBFILE_CGROUP_MAX]; /* its job's cgroup: a standby's spare goes beside it */
} shepherd_user;

/* Where shepherds come from: the backend they make the job's cgroup with and the state
 * directory of the exit files, both fixed for the agent's life, and the fork server
 * (forkserver.h) that forks them, so that the agent's loop, which forks one a job, does not
 * pay a copy-on-write fault for each page it writes after each fork. A shepherd is the agent's
 * child either way. */
typedef struct shepherd_forker {
        cg_backend *cg;
        const char *state_dir;
        forkserver server; /* pid 0: none, the agent forks them */
        pid_t lost;        /* a server found gone since (0: none): the next standby starts another */
} shepherd_forker;

/* Start s's fork server (cg and state_dir set): as early as can be, the agent still small and
 * with one thread. Returns 0, or -errno with err (shepherds are then forked by the agent). */
int shepherd_forker_start(shepherd_forker *s, char *err, size_t errlen);
/* Stop s's fork server (the shepherds it forked live on). */
void shepherd_forker_stop(shepherd_forker *s);
/* Fork the shepherd of job id (req as for launch_job) and read its start time; it makes the
 * job's cgroup and waits for shepherd_go or shepherd_abort. spare: a spare file's number
 * (jobsync_take_spare, 0: none) that the shepherd, once let go, takes for its exit file.
 * Returns 0, or -errno with the reason in err. */
int shepherd_spawn(shepherd_forker *s, const launch_req *req, uint64_t id, uint64_t spare, shepherd *sh, char *err,
                   size_t errlen);
/* Fork a standby: a shepherd for a job not come yet, set up as far as it can be without one,
 * waiting under SHEPHERD_STANDBY_NAME for shepherd_hand, with last's groups looked up meanwhile
 * for a next job of that user. It takes the fork and that lookup off the next launch's path; it
 * exits when its pipe closes (shepherd_abort, or the agent's end). A server s->lost is
 * replaced first (where that fails, the agent forks). Returns 0, or -errno with the reason in
 * err. */
int shepherd_spawn_standby(shepherd_forker *s, const shepherd_user *last, shepherd *sh, char *err, size_t errlen);
/* The spare cgroup (cg_spare_name) that standby pid, forked with last, starts its job's process
 * in ahead where it can (v1): beside last's job. Into buf; returns 0 or -ENAMETOOLONG. */
int shepherd_spare_cgroup(const shepherd_user *last, pid_t pid, char *buf, size_t len);
/* The request that makes a standby the shepherd of job id (arguments as shepherd_spawn's), in
 * *msg (malloc'ed) of *len bytes. Returns 0, -ESRCH when the standby is gone, -EBUSY while it is
 * not waiting for a request yet (still in its lookup: a name service that does not answer
 * holds it, not the launch), -EMSGSIZE when its pipe cannot take the request whole (either way
 * the standby stays, fit for another), or -errno. */
int shepherd_request(shepherd *sh, const launch_req *req, uint64_t id, uint64_t spare, char **msg, size_t *len);
/* Give the standby its request (msg, freed), without waiting: from then on it is the job's
 * shepherd as shepherd_spawn leaves one, making the job's cgroup and waiting for shepherd_go or
 * shepherd_abort. Returns 0, or -errno with err and the standby reaped. */
int shepherd_hand(shepherd *sh, char *msg, size_t len, char *err, size_t errlen);
/* Let the shepherd launch the job, without waiting: from then on report_fd carries the
 * launch's outcome and steps_fd the steps it begins (launch_progress records, read with
 * shepherd_read_progress; both the caller's to close). Returns 0, or -errno with err and the
 * shepherd reaped; the go pipe is closed either way. */
int shepherd_go(shepherd *sh, char *err, size_t errlen);
/* Read one record of a launch's progress from fd. Returns 1 with *m, 0 at end of file (the
 * shepherd has gone), -EAGAIN when there is none yet, or -errno (-EIO: a torn record). */
int shepherd_read_progress(int fd, launch_progress *m);
/* Before the go: make the shepherd exit without starting anything (the cgroup it made goes
 * with it), reap it, close the pipes. */
void shepherd_abort(shepherd *sh);

/* The start time of process pid. Returns 0, -ESRCH when it is gone or a zombie, or -errno. */
int shepherd_proc_start(pid_t pid, uint64_t *start);
/* True while the process pid that started at start runs (a reused pid is another process). */
bool shepherd_alive(pid_t pid, uint64_t start);
/* Wait until that shepherd has ended, reaping it when it is our child. Returns 0, or
 * -ETIMEDOUT after timeout_ms. */
int shepherd_wait_gone(pid_t pid, uint64_t start, bool our_child, int timeout_ms);
