/* cgkill.h - kill a job's cgroup from the event loop, one round per turn, never waiting in it.
 *
 * cg_job_kill waits until the cgroup is empty, which a task stuck in the kernel (a dead NFS
 * server, a FUSE mount that never answers) can make last seconds: the agent's loop must not
 * stall meanwhile, or its heartbeats stop and the controller loses every job on the host. So
 * each turn does one round (cg_job_kill with no time to wait) and a timer brings the next. */
#pragma once
#include "cgroup.h"
#include <stdbool.h>
#include <systemd/sd-event.h>

/* Called once: 0 when the cgroup is empty (or gone), -ETIMEDOUT after the timeout, or -errno. */
typedef void (*cgkill_done)(int r, void *userdata);

/* Start killing every task of cgroup job (cg and job borrowed until done runs or *out is
 * freed): the first round in the next turn, or a round's pause later when round_done says the
 * caller has just made one (cg_job_kill with no time to wait) that left tasks. *out is the
 * caller's: unref it to stop early (done is then never called). Returns 0 or -errno. */
int cgkill_start(sd_event *e, cg_backend *cg, const char *job, int timeout_ms, bool round_done, cgkill_done done,
                 void *userdata, sd_event_source **out);
