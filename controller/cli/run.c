/* run.c - colony run and colony attach: a job's output followed to the terminal as it is
 * written (docs/protocol.md, "Following a job's output").
 *
 * One connection, one "output" request in flight: the answer carries the bytes from the
 * offsets asked, and the next request asks from where they end, so a follower that stops
 * reading costs the cluster one answer, and one that loses its controller or whose agent
 * restarted asks again from the same offsets. The job has ended, and everything is here, once
 * an answer read after its end (its "ended") read every file to its end; that answer carries
 * the job's record, so that nothing more is asked of the controller. */
#include "b64.h"
#include "cli.h"
#include "clock.h"
#include "client.h"
#include "format.h"
#include "jobs.h"
#include "outcome.h"
#include "proto.h"
#include "units.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* How long a read may wait on the node for new bytes before it is answered with none. */
#define FOLLOW_WAIT_MS 500
/* The pause before asking again after an error (the node away, busy) or while pending. */
#define FOLLOW_RETRY_MS 200

typedef struct follower {
        const cli *c;
        const char *sock;
        uint64_t id;
        int fd;              /* the connection, -1 between two */
        bool awaiting;       /* a request was sent on fd and its answer not read */
        int64_t off[2];      /* what was printed of stdout's file, of stderr's */
        bool cancelled;      /* colony run: an interrupt cancelled the job */
        uint64_t asked_usec; /* when the request in flight was sent (CLOCK_MONOTONIC) */
        job rec;             /* the ended job's record, when the last answer carried it */
        bool have_rec;
} follower;

static void pause_ms(int ms) { (void)poll(NULL, 0, ms); /* a signal ends it early, to be seen at once */ }

/* Send the next request, connecting first if needed. Returns 0 or -errno (err set). */
static int ask(follower *f, char *err, size_t errlen) {
        cJSON *req = proto_new("output");
        int r = req && cJSON_AddNumberToObject(req, "id", (double)f->id) &&
                                cJSON_AddNumberToObject(req, "out_offset", (double)f->off[0]) &&
                                cJSON_AddNumberToObject(req, "err_offset", (double)f->off[1]) &&
                                cJSON_AddNumberToObject(req, "wait_ms", FOLLOW_WAIT_MS)
                        ? 0
                        : -ENOMEM;

        if (r == 0 && f->fd >= 0 && (r = proto_send(f->fd, req)) < 0) {
                close(f->fd); /* the controller restarted, or closed us: a new connection */
                f->fd = -1;
                r = 0;
        }
        if (r == 0 && f->fd < 0 && (r = f->fd = client_start(f->sock, req, err, errlen)) >= 0)
                r = 0;
        if (r == -ENOMEM)
                snprintf(err, errlen, "out of memory");
        cJSON_Delete(req);
        f->awaiting = r == 0;
        f->asked_usec = clock_mono_usec();
        return r;
}

/* Print the answer's bytes of stream i ("out" or "err") and move its offset on. Returns 0 or
 * EXIT_FAIL after saying why. */
static int print_stream(follower *f, const cJSON *ans, int i) {
        static const char *const names[2] = { "out", "err" };
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(ans, names[i]);
        unsigned char *data;
        size_t len;
        int r;

        if (!cJSON_IsString(item))
                return 0;
        if ((r = b64_decode(item->valuestring, &data, &len)) < 0) {
                cli_error(f->c, "job %" PRIu64 ": bad output from the controller: %s", f->id, strerror(-r));
                return EXIT_FAIL;
        }
        /* without a stderr file of its own, the job's stderr is in stdout's: all to stdout */
        r = proto_write_all(i == 0 ? STDOUT_FILENO : STDERR_FILENO, data, len);
        free(data);
        if (r < 0) {
                cli_error(f->c, "job %" PRIu64 ": writing its output: %s", f->id, strerror(-r));
                return EXIT_FAIL;
        }
        f->off[i] += (int64_t)len;
        return 0;
}

/* Keep the record a controller adds to the last answer of an ended job's output: follow_job
 * then needs no "wait" of its own (an older controller adds none). */
static void keep_record(follower *f, const cJSON *ans) {
        const cJSON *rec = cJSON_GetObjectItemCaseSensitive(ans, "job");
        char perr[PROTO_ERRLEN];

        if (!rec || f->have_rec || job_from_json(rec, &f->rec, perr) < 0)
                return;
        f->have_rec = job_state_is_terminal(f->rec.state);
        if (!f->have_rec)
                job_free(&f->rec);
}

/* An interrupt: colony run cancels the job and follows it to its end, and stops at a second
 * one; attach stops at once. Returns -1 to go on, else an exit status. */
static int interrupted(follower *f, bool cancel) {
        int sig = cli_interrupted;
        char err[ERRLEN];
        cJSON *rep = NULL;

        cli_interrupted = 0;
        if (!cancel) {
                cli_error(f->c, "stopped following job %" PRIu64 " (%s); it goes on", f->id, strsignal(sig));
                return 128 + sig;
        }
        if (f->cancelled) { /* a second one: the controller may be away for good */
                cli_error(f->c, "%s again: stopped following job %" PRIu64, strsignal(sig), f->id);
                return 128 + sig;
        }
        f->cancelled = true;
        if (client_simple(f->sock, "cancel", f->id, "cancelled", REQUEST_TIMEOUT_MS, &rep, err, sizeof(err)) < 0)
                cli_error(f->c, "%s: cancelling job %" PRIu64 ": %s", strsignal(sig), f->id, err);
        else
                cli_error(f->c, "%s: job %" PRIu64 " cancelled", strsignal(sig), f->id);
        cJSON_Delete(rep);
        return -1;
}

/* Follow the job's output to its end. Returns -1 once all of it is printed, or an exit status
 * (EXIT_FAIL: the job unknown or not ours, the output not readable after the job's end). */
static int follow(follower *f, bool cancel) {
        char err[ERRLEN];
        cJSON *ans = NULL;

        for (;;) {
                int r;
                if (cli_interrupted && (r = interrupted(f, cancel)) >= 0)
                        return r;
                if (!f->awaiting && ask(f, err, sizeof(err)) < 0) {
                        pause_ms(FOLLOW_RETRY_MS); /* the controller away: it comes back, or an interrupt ends this */
                        continue;
                }
                r = client_next(f->fd, f->sock, "output", REQUEST_TIMEOUT_MS + FOLLOW_WAIT_MS, &ans, err, sizeof(err));
                if (r == -EINTR)
                        continue; /* the answer still comes, on this connection */
                f->awaiting = false;
                if (r == -EREMOTEIO) { /* refused: no such job of ours */
                        cli_error(f->c, "%s", err);
                        return EXIT_FAIL;
                }
                if (r < 0) {
                        close(f->fd);
                        f->fd = -1;
                        pause_ms(FOLLOW_RETRY_MS);
                        continue;
                }
                const cJSON *error = cJSON_GetObjectItemCaseSensitive(ans, "error"),
                            *state = cJSON_GetObjectItemCaseSensitive(ans, "state");
                job_state st = JOB_PENDING;
                bool ended = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(ans, "ended")),
                     terminal = cJSON_IsString(state) && job_state_from_name(state->valuestring, &st) == 0 &&
                                job_state_is_terminal(st);
                if (cJSON_IsString(error)) {
                        /* while it runs: its node is away or busy, ask again; after its end: give up */
                        if (terminal && st != JOB_LOST && strstr(error->valuestring, "never started") == NULL)
                                cli_error(f->c, "job %" PRIu64 ": its output may be incomplete: %s", f->id,
                                          error->valuestring);
                        if (terminal)
                                keep_record(f, ans);
                        cJSON_Delete(ans);
                        if (terminal)
                                return -1;
                        pause_ms(FOLLOW_RETRY_MS);
                        continue;
                }
                r = print_stream(f, ans, 0);
                if (r == 0)
                        r = print_stream(f, ans, 1);
                bool done = proto_output_all_read(ans, ended);
                bool nothing = !cJSON_GetObjectItemCaseSensitive(ans, "out");
                if (done)
                        keep_record(f, ans);
                cJSON_Delete(ans);
                if (r != 0)
                        return r;
                if (done)
                        return -1;
                uint64_t since = clock_mono_usec() - f->asked_usec;
                /* Pending: the controller held the request until the wait asked was over, or (an
                 * older one) answered at once: asked no more often than this. Ended: the rest
                 * is asked for at once. */
                if (nothing && !terminal && since < FOLLOW_RETRY_MS * 1000ULL)
                        pause_ms(FOLLOW_RETRY_MS - (int)(since / 1000));
        }
}

/* One line on an end that is not the job's own exit. */
static void say_end(const follower *f, const job *j) {
        char buf[64];

        if (j->state == JOB_FAILED && !j->start_usec)
                cli_error(f->c, "job %" PRIu64 " failed to start: %s", j->id, j->result.error ? j->result.error : "?");
        else if (j->state == JOB_TIMEOUT)
                cli_error(f->c, "job %" PRIu64 " timed out: it ran past its time limit (%s)", j->id,
                          units_format_time(j->spec.time_limit_usec, buf, sizeof(buf)));
        else if (j->state == JOB_CANCELLED && !f->cancelled)
                cli_error(f->c, "job %" PRIu64 " was cancelled", j->id);
        else if (j->state == JOB_OOM_KILLED)
                cli_error(f->c, "job %" PRIu64 " was OOM-killed (its memory limit)", j->id);
        else if (j->state == JOB_LOST)
                cli_error(f->c, "job %" PRIu64 " was lost with its node %s", j->id, j->node ? j->node : "?");
}

/* Follow job id to its end; with cancel, an interrupt cancels it. Returns its exit status
 * (outcome.h), or one of follow's. */
static int follow_job(const cli *c, const char *sock, uint64_t id, bool cancel) {
        follower f = { .c = c, .sock = sock, .id = id, .fd = -1 };
        char err[ERRLEN];
        job j = { 0 };
        int r;

        cli_catch_signals();
        fflush(stdout);
        r = follow(&f, cancel);
        if (f.fd >= 0)
                close(f.fd);
        if (r >= 0) {
                if (f.have_rec)
                        job_free(&f.rec);
                return r;
        }
        r = 0;
        if (f.have_rec)
                j = f.rec;
        else
                while ((r = jobs_wait(sock, id, -1, &j, NULL, err, sizeof(err))) == -EINTR)
                        ;
        if (r < 0) {
                cli_error(c, "job %" PRIu64 ": %s", id, err);
                return EXIT_FAIL;
        }
        say_end(&f, &j);
        r = outcome_exit_status(&j);
        job_free(&j);
        return r;
}

int run_submitted(const cli *c, const char *sock, const job_spec *spec) {
        char err[ERRLEN];
        uint64_t id;

        if (jobs_submit(sock, spec, NULL, 0, &id, NULL, err, sizeof(err)) < 0) {
                cli_error(c, "%s", err);
                return EXIT_FAIL;
        }
        return follow_job(c, sock, id, true);
}

static const char run_usage[] =
        "Usage: colony run [submit options] [--] CMD [ARGS...]\n"
        "Run CMD as one job, as `colony submit` would (the same options, see colony submit --help;\n"
        "no --array, --stdin), print its output here as it is written, and exit as it did: its exit\n"
        "code, 128+N when a signal N ended it, non-zero with one line saying why when it failed to\n"
        "start, timed out, was cancelled or was lost. Its standard error goes to this standard\n"
        "error when the job has a file of its own for it (--error), else with its output to\n"
        "standard output. The job's files are written as for any job: what is printed is read\n"
        "from them. Ctrl-C (SIGINT), SIGTERM and SIGHUP cancel the job, then its end is awaited;\n"
        "a second one stops waiting.\n";

static int run_run(cli *c, int argc, char **argv) { return jobs_submit_main(c, argc, argv, true); }

const cli_command cmd_run = { "run", "run a job and follow its output: colony run [options] -- CMD [ARGS...]",
                              run_usage, true, run_run };

static const char attach_usage[] =
        "Usage: colony attach JOB\n"
        "Print a job's output from its start, then follow it as it is written until the job ends,\n"
        "and exit as the job did (as colony run). A job of your own (root: any). Ctrl-C stops\n"
        "following; the job goes on. JOB is a job id, or A_i for task i of array A.\n";

static int run_attach(cli *c, int argc, char **argv) {
        char sock[PATH_MAX];
        uint64_t id;
        int o;

        while ((o = cli_getopt(c, argc, argv, NULL)) > 0)
                ;
        if ((o = jobs_one_job(c, o, argc, argv, "colony attach JOB", &id, sock)) >= 0)
                return o;
        return follow_job(c, sock, id, false);
}

const cli_command cmd_attach = { "attach", "follow a job's output until it ends: colony attach JOB", attach_usage,
                                 false, run_attach };
