/* outread.h - a job's output files read for its followers (colony run, colony attach), on
 * threads: the agent's loop never waits on a job's file, which may be on a slow or dead file
 * system (docs/protocol.md, "read_output"). */
#pragma once
#include <stdbool.h>
#include <stdint.h>
#include <cjson/cJSON.h>
#include <systemd/sd-event.h>

/* Reads in flight at once; a read_output past them is answered "busy" (the follower retries). */
#define OUTREAD_MAX 16
/* Bytes one read returns at most per file: with base64, two of them fit a frame. */
#define OUTREAD_CHUNK (128 * 1024)
/* The longest a read waits for new bytes of a running job before it answers with none. */
#define OUTREAD_WAIT_MAX_MS 5000

typedef struct outread outread;
struct ctlink;

/* A reader whose answers go out on link, reported through an eventfd source of e. Returns 0 or
 * -errno. */
int outread_new(sd_event *e, struct ctlink *link, outread **out);
/* Start the read a "read_output" message asks for, on a thread of its own, as the job's user
 * (its fsuid, fsgid and no supplementary groups), or answer it at once with an error.
 * ended_here: the job has ended on this node (the read waits for no new bytes). */
void outread_handle(outread *o, const cJSON *msg, bool ended_here);
/* Job id has ended: its reads waiting for new bytes read once more and answer now. NULL is
 * fine. */
void outread_job_ended(outread *o, uint64_t id);
/* Stop answering; reads still blocked in a file system finish on their own and free what they
 * share with the last of them. NULL is fine. */
void outread_free(outread *o);
