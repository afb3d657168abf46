/* agent.h - the agent proper: controller link, job table, launching and reporting.
 *
 * One agent runs in one sd-event loop whose caller has blocked SIGCHLD (jobs are watched with
 * child sources). It launches what the controller sends, reports started/finished, and cancels
 * on request. main() owns the loop, the cgroup backend and the exit decision. */
#pragma once
#include "cgroup.h"
#include "res.h"
#include <systemd/sd-event.h>

typedef struct agent_config {
        const char *name;       /* this host's agent name */
        const char *controller; /* "host:port" */
        const char *secret;     /* shared secret sent in hello */
        res_t capacity;         /* mcpu, mem, pids (0 = unlimited) offered to the controller */
        int64_t default_pids;   /* pids.max for jobs that asked for 0 (0 = unlimited) */
} agent_config;

typedef struct agent agent;

/* Kill and remove the job cgroups a previous agent left in cg's subtree, warning about each.
 * Returns how many were removed, or -errno when the subtree cannot be listed. */
int agent_clear_leftovers(cg_backend *cg);

/* Create an agent on loop e using cg (borrowed, as are cfg's strings, for the agent's life) and
 * start connecting to the controller. A refusal that retrying cannot fix ends the loop with
 * sd_event_exit(e, 1). Returns 0 or -errno. */
int agent_new(sd_event *e, const agent_config *cfg, cg_backend *cg, agent **out);
/* Stop every job: kill its cgroup, remove it, and report it cancelled ("agent stopped") if the
 * controller is connected, waiting a bounded time for the reports to be written. */
void agent_stop(agent *a);
/* Free the agent (its jobs must have been stopped). NULL is fine. */
void agent_free(agent *a);
