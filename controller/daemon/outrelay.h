/* outrelay.h - followers' reads of a job's output, passed to its agent and back (outrelay.c). */
#pragma once
#include "server.h"

/* The client request "output": a read of the job's files from its agent (outrelay.c). */
void server_handle_output(ctl_server *srv, conn *c, const cJSON *msg);
/* The agent's answer to a read_output: to the client that asked, if still there. */
void server_output_answer(ctl_server *srv, ctl_node *n, const cJSON *msg);
/* c is closing: its read in flight is answered to nobody. */
void server_output_forget(ctl_server *srv, conn *c);
/* n's link closed: its reads in flight are answered with that (the followers ask again). */
void server_output_node_gone(ctl_server *srv, ctl_node *n);
/* An event of job id: its followers' parked reads are served if it started or ended. */
void server_output_job_event(ctl_server *srv, uint64_t id);
/* Free the reads in flight (at exit). */
void server_output_close(ctl_server *srv);
