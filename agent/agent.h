/* agent.h - the agent proper: controller link, job table, launching and reporting.
 *
 * One agent runs in one sd-event loop whose caller has blocked SIGCHLD (each job's shepherd,
 * shepherd.h, is watched with a child source, or a pidfd once re-adopted). It launches what the
 * controller sends, reports started/finished, cancels on request, and keeps in its state
 * directory what a restarted agent needs to take its jobs over. main() owns the loop, the
 * cgroup backend and the exit decision. */
#pragma once
#include "cgroup.h"
#include "gpus.h"
#include "nvml.h"
#include "res.h"
#include "tls.h"
#include <stdbool.h>
#include <stddef.h>
#include <sys/resource.h>
#include <systemd/sd-event.h>

typedef struct agent_config {
        const char *name;            /* this host's agent name */
        const char *controller;      /* "host:port" */
        const char *secret;          /* shared secret sent in hello */
        res_t capacity;              /* mcpu, mem, pids (0 = unlimited) offered to the controller */
        int64_t default_pids;        /* pids.max for jobs that asked for 0 (0 = unlimited) */
        const char *state_dir;       /* the jobs' records (jobdir.h), created by the caller */
        bool stop_jobs_on_exit;      /* agent_stop kills the jobs rather than leave them running */
        int launch_timeout_ms;       /* a job not exec'd by then fails, naming the step it hangs in */
        struct rlimit job_nofile;    /* the open files limit jobs start with (rlim_max 0: the agent's) */
        tls_ctx *tls;                /* TLS to the controller (tls.h), or NULL for plain TCP */
        const char *tls_server_name; /* the name its certificate must carry (NULL: the controller's host) */
        int kill_wait_s;             /* a job past its time limit: SIGTERM, and SIGKILL this much later */
        const char *features;        /* this host's features (nodesel.h list) for --constraint, or NULL */
        bool no_cpuset;              /* whole-CPU jobs get no cores of their own (a quota only) */
        gpus gpus;                   /* the GPUs offered (gpufind.h): the agent's copy says who holds each */
        const char *gpu_type;        /* their type ("a100"), also one of the node's features; NULL: none */
        nvml *nvml;                  /* their use, where NVML is present (nvml.h), or NULL: the caller's */
} agent_config;

typedef struct agent agent;

/* What `colony-agent --cleanup` does after an agent died: kill every job a previous agent left
 * (recorded in state_dir or not), wait for their shepherds, remove the job cgroups and the
 * state directory's files, warning about each. Returns how many unrecorded cgroups were
 * removed, or -errno when the subtree or the directory cannot be listed. */
int agent_clear_leftovers(cg_backend *cg, const char *state_dir);

/* Create an agent on loop e using cg (borrowed, as are cfg's strings, for the agent's life) and
 * start connecting to the controller. A refusal that retrying cannot fix ends the loop with
 * sd_event_exit(e, 1). Returns 0 or -errno. */
int agent_new(sd_event *e, const agent_config *cfg, cg_backend *cg, agent **out);
/* Take over what a previous agent left (before the loop runs, so that the first hello lists
 * it): a job whose shepherd still runs is re-adopted and watched; one whose shepherd has ended
 * is reported finished from its exit file; a report that agent kept is sent again; a job cgroup
 * no record claims is killed and removed. Returns 0 or -errno when the state directory or the
 * subtree cannot be listed (logged). */
int agent_adopt(agent *a);
/* With stop_jobs_on_exit, stop every job: kill its cgroup, remove it, and report it cancelled
 * ("agent stopped"); else leave the jobs running for the next agent. Then, if the controller is
 * connected, wait a bounded time for the reports to be written. Returns how many jobs are left
 * running. */
size_t agent_stop(agent *a);
/* Free the agent. Its jobs, if any, keep running: nothing here signals them. NULL is fine. */
void agent_free(agent *a);
