/* report.h - what the agent tells the controller about its jobs, and keeps until acknowledged.
 *
 * Every report goes through the controller link as "reliable", so one produced while the
 * controller is away is sent after the next welcome; a "finished" report is also kept in the
 * state directory until the controller acknowledges it (it has stored the job's end), and is
 * sent again after every welcome until then, so that neither an agent restart nor a controller
 * killed with the report unread loses it (docs/architecture.md, "Restarts"). Running jobs'
 * usage goes as a sample, dropped while the controller is away. */
#pragma once
#include "agent-internal.h"

/* The job's cgroup is empty, or could not be emptied: read its usage, remove it, report how
 * the job ended (stopping: the agent ended it), and free the job. */
void report_job_end(agent_job *j, bool stopping);
/* Read the exit status the job's shepherd wrote. Returns 0 or -errno (logged). */
int report_read_exit(agent *a, uint64_t id, jobfile_exit *ex);
/* Report that the job runs. */
void report_started(agent_job *j);
/* After a welcome: report again the start of every job that runs (the controller keeps one). */
void report_started_again(agent *a);
/* Report a job that never ran: st (failed or cancelled) with error. */
void report_not_run(agent *a, uint64_t id, uint32_t attempt, job_state st, const char *error);
/* The attempt a kept report of job id is about (1 when it does not say), or 0 when none is. O(1),
 * no I/O: the kept reports are remembered as they are written and found again. */
uint32_t report_kept_attempt(agent *a, uint64_t id);
/* Forget every kept report (their files stay): the agent is freed. */
void report_free_kept(agent *a);
/* The controller has stored the end of an attempt of a job: its kept report may go. */
void report_handle_ack(agent *a, const cJSON *msg);
/* ctlink's written callback: a stopping agent is done with a report once it is written. */
void report_written(uint64_t id, void *userdata);
/* Send every report kept in the state directory, a previous agent's too; each job there with
 * none goes to other (NULL: none). Returns 0 or -errno when the directory cannot be listed. */
int report_resend_kept(agent *a, void (*other)(agent *a, uint64_t id));
/* Every kept report has been written: forget them all (no acknowledgement will be read). */
void report_forget_written(agent *a);
/* The usage timer (userdata: the agent): the host's pressure and every job's usage. */
int report_usage_tick(sd_event_source *s, uint64_t usec, void *userdata);
