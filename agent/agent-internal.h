/* agent-internal.h - what agent.c, jobstart.c, report.c and adopt.c share: the agent, its job
 * table, and the functions each offers the others. Not for any other module. */
#pragma once
#include "agent.h"
#include "cores.h"
#include "ctlink.h"
#include "jobfile.h"
#include "jobtab.h"
#include "launch.h"
#include "log.h"
#include "shepherd.h"
#include <inttypes.h>
#include <stdbool.h>
#include <stdint.h>
#include <systemd/sd-event.h>

#define JOB_KILL_TIMEOUT_MS    5000
#define START_FAILED_EXIT_CODE 127 /* what a shell reports for a command it could not run */
#define STEP_MAX               sizeof(((launch_progress *)0)->what)
#define USAGE_PERIOD_USEC      (2 * 1000000) /* how often running jobs' usage is reported */

typedef struct agent_job {
        uint64_t id; /* first: the key of the job table (jobtab.h) */
        agent *agent;
        uint32_t attempt;                /* the launch's, echoed in every report so that the controller can
                                          * tell a report of an earlier run of a requeued job */
        char cgroup[JOBFILE_CGROUP_MAX]; /* cg_job_name: "job-<id>", "dept-a/job-<id>" */
        pid_t pid;                       /* main process (the shepherd's child); 0 when re-adopted */
        pid_t shepherd;                  /* our child, or a previous agent's when adopted */
        uint64_t shepherd_start;         /* its start time, so that a reused pid is not taken for it */
        bool adopted;
        int64_t mem_limit;
        int64_t start_usec;
        bool cancelled;
        bool in_table;
        struct launch_msg *queued; /* until its turn to start comes: the launch (jobstart.h) */
        struct agent_job *queue_next;
        char user[64];                   /* who submitted it, for the log */
        bool starting;                   /* launched, its exec not confirmed yet */
        bool ending;                     /* its shepherd has ended: its cgroup is being emptied */
        char step[STEP_MAX];             /* the launch's last step begun */
        char start_error[STEP_MAX + 64]; /* why the launch failed: the job ends failed with it */
        jobfile_exit exit;               /* how the main process ended, once the shepherd has */
        bool exit_known;
        sd_event_source *watch;    /* the shepherd's end: a child source, or its pidfd when adopted;
                                    * NULL for an adopted one without pidfd: the usage tick polls it */
        sd_event_source *grace;    /* cancel: SIGKILL after the grace period */
        sd_event_source *progress; /* while starting: the report pipe */
        int steps_fd;              /* while starting: the steps pipe, read at the deadline (-1: none) */
        sd_event_source *deadline; /* while starting: the launch deadline */
        sd_event_source *kill;     /* the cgroup's kill under way (cgkill.h) */
        struct agent_job *prev, *next;
        int64_t time_limit_usec;           /* run time allowed (timelimit.h); 0 = none */
        bool timed_out;                    /* its time limit passed: it ends timeout */
        sd_event_source *limit;            /* the time limit's timer (timelimit.h) */
        bool shares_cores;                 /* a fraction of a CPU: on the cores nobody holds, moved as they change */
        bool cgroup_foreign;               /* its launch found its cgroup made already: not the job's to kill */
        uint64_t launch_msg_usec;          /* CLOCK_MONOTONIC of the turn its launch message came in: the log
                                            * says how long to its exec (tests/bench/launch.sh reads it) */
        char gpu_ids[JOBFILE_GPU_IDS_MAX]; /* the GPUs it holds, their indexes ("0,2"); "" when none */
        int64_t exec_usec;                 /* CLOCK_REALTIME when this agent learnt of its exec; 0 before,
                                            * and for a re-adopted job (timelimit.h) */
        uint64_t weights_seq;              /* the agent's weights_seq when its launch message came */
        /* The spare cgroup of the standby that took it (v1: renamed the job's, or removed once
         * the launch is told), which its shepherd, killed before that, leaves to the agent. */
        char standby_spare[JOBFILE_CGROUP_MAX];
} agent_job;

struct agent {
        sd_event *event;
        agent_config cfg;
        cg_backend *cg;
        ctlink *link;
        jobtab jobs; /* the job table */
        idmap kept;  /* the reports kept in the state directory, by job id (report.c) */
        sd_event_source *usage_timer;
        agent_job *queue, **queue_tail;         /* jobs waiting for their turn to start, oldest first */
        sd_event_source *launcher;              /* starts the queue's first job, a job per turn */
        agent_job *awaiting;                    /* queued jobs whose earlier run's cgroup is being removed */
        shepherd_forker forker;                 /* where shepherds come from: their fork server */
        shepherd standby;                       /* forked ahead for the next launch (pid 0: none) */
        sd_event_source *standby_watch;         /* its end, should it end before it gets a job */
        sd_event_source *standby_fork;          /* forks the next standby once no launch waits */
        shepherd_user last_user;                /* of the job launched last: the standby looks up its groups,
                                                 * and makes its spare beside its cgroup */
        char standby_spare[JOBFILE_CGROUP_MAX]; /* the standby's spare cgroup (shepherd_spare_cgroup) */
        bool stopping;           /* agent_stop: no ack will be waited for, a report written is done with */
        struct jobsync *sync;    /* the state directory's removals and the cgroups' slow writes, off the loop */
        cores *cores;            /* the cores whole-CPU jobs hold (jobcores.c); NULL: jobs get no cpuset */
        struct outread *outread; /* jobs' output read for their followers, off the loop (outread.h) */
        /* The last department weights a reload sent ("weights"), and how many such messages came:
         * a shepherd writes the weights its launch message carried, which may be older. */
        cJSON *weights;
        uint64_t weights_seq;
};

/* Cores of their own (jobcores.c). */
/* Find the agent's cores (its CPU affinity, as many as its capacity), unless cfg.no_cpuset.
 * Returns 0 or -ENOMEM. */
int jobcores_init(agent *a);
/* The cores job j starts on into buf: its own for a whole number of CPUs (mcpu), else those
 * nobody holds; the jobs sharing those are moved off cores a whole job takes. Returns buf, or
 * NULL for no cpuset (none configured, or no core free: logged). */
const char *jobcores_take(agent_job *j, int64_t mcpu, char *buf, size_t len);
/* An adopted job holds the cores its cgroup's cpuset names when it asked for that many. */
void jobcores_adopt(agent_job *j);
/* Free j's cores (it ended, or never started), for the jobs sharing the others. */
void jobcores_release(agent_job *j);

/* GPUs of their own (jobgpus.c). */
/* Give j n of the agent's free GPUs (j->gpu_ids names them) and write into deny (room for
 * GPUS_MAX) the device nodes of all the others, which its cgroup must deny it; *ndeny says how
 * many. Returns 0, or -EBUSY with err set when fewer are free. */
int jobgpus_take(agent_job *j, int64_t n, cg_device *deny, size_t *ndeny, char *err, size_t errlen);
/* An adopted job holds again the GPUs of its record (ids, "" for none), when they are the agent's
 * and free; else it keeps none (logged). */
void jobgpus_adopt(agent_job *j, const char *ids);
/* Free j's GPUs (it ended, or never started). */
void jobgpus_release(agent_job *j);

/* Log prefix naming a job and its cgroup. */
#define JOB_FMT     "job=%" PRIu64 " cgroup=%s/%s"
#define JOB_ARGS(j) (j)->id, cg_subtree_path((j)->agent->cg), (j)->cgroup

/* Jobs' table: jobtab.h; agent.c frees its jobs. */
/* Unlink (if in the table) and free a job with its event sources. */
void agent_job_free(agent_job *j);
/* Write the job's record to the state directory. Returns 0 or -errno (logged). */
int agent_job_save(agent_job *j);
/* The shepherd has ended: empty the job's cgroup without waiting in the loop, then report it. */
void agent_job_reap(agent_job *j);
/* j's shepherd has made its department's cgroups with the weights of j's launch message: give
 * them the weights of a reload that came since, which the shepherd's may have overwritten. */
void agent_dept_weights_recheck(agent_job *j);
/* Kill every task of the job, without waiting in the loop; its shepherd's end then ends it. */
void agent_job_kill(agent_job *j);
/* SIGTERM to every task of the job now, and its whole cgroup killed after grace_ms (a cancel, a
 * time limit); a grace timer already running is replaced. */
void agent_job_terminate(agent_job *j, int64_t grace_ms);
/* An adopted shepherd's pidfd became readable: it has ended. */
int agent_on_shepherd_fd(sd_event_source *s, int fd, uint32_t revents, void *userdata);
