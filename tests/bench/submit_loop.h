/* submit_loop.h - the client side of an API submission benchmark, whatever the scheduler:
 * N forked clients, each submitting M jobs one after another, each waiting for its
 * acknowledgement before the next; one JSON line of throughput and latency.
 *
 * bench_submit.c (colony's socket) and slurm_submit.c (libslurm) share it, so both sides are
 * timed by the same code. Plain libc only: submit.sh compiles it beside slurm_submit.c with cc,
 * outside colony's build. */
#pragma once
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#define LOOP_ERRLEN      256
#define LOOP_CLIENTS_MAX 256
#define LOOP_TOTAL_MAX   10000000 /* clients x jobs: the latencies and ids are kept in memory */

/* The getopt_long entries of the options loop_option parses. */
#define LOOP_OPTIONS                                                                                                   \
        { "clients", required_argument, NULL, 'c' }, { "jobs", required_argument, NULL, 'j' }, {                       \
                "ids", required_argument, NULL, 'i'                                                                    \
        }

/* What one client does, called in its own forked process. */
typedef struct loop_client {
        /* Before the clock starts: connect or set up. Returns 0, or -errno with one line in err. */
        int (*open)(void *ud, char err[LOOP_ERRLEN]);
        /* One submission, returning once it is acknowledged: 0 with the job's id, or -errno with
         * one line in err. *fatal set to 1 means the client cannot go on (its connection died). */
        int (*submit)(void *ud, uint64_t *id, int *fatal, char err[LOOP_ERRLEN]);
        void *ud;
} loop_client;

/* The options both programs take. */
typedef struct loop_args {
        int clients;
        int jobs;             /* per client */
        const char *ids_path; /* NULL, or where to write the acknowledged ids */
} loop_args;

/* Parse one of LOOP_OPTIONS (opt: getopt_long's return, arg its value) into a. Returns 0, or
 * -EINVAL with one line in err for a bad value or an option not among them. */
int loop_option(loop_args *a, int opt, const char *arg, char err[LOOP_ERRLEN]);
/* 0 when a has --clients and --jobs within LOOP_TOTAL_MAX, else -EINVAL with one line in err. */
int loop_check(const loop_args *a, char err[LOOP_ERRLEN]);

/* Fork a->clients processes running c, start them together once all have opened, wait for all.
 * Writes to out one JSON line: clients, jobs (attempted), jobs_per_s (acknowledged ones over
 * the wall time from the start to the last client's end), failed, latency_us_p50/p99 (of the
 * acknowledged submissions; 0 when none). With a->ids_path, the acknowledged ids are written
 * there one per line. Returns 0 when every submission was acknowledged, 1 when some failed
 * (each client's first error on stderr), or -errno before any submission was made. */
int loop_run(const loop_args *a, const loop_client *c, FILE *out);
