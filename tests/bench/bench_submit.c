/* bench_submit.c - submissions per second over colony's client API: N clients, each on ONE
 * connection to the controller, each submitting M jobs one after another and waiting for each
 * `submitted` reply (stored with its commit) before sending the next. Not run by ctest.
 *
 *   build/bin/bench_submit --socket PATH --clients N --jobs M [--ids FILE] [--cpus N] [--mem SIZE]
 *                          [--group DEPT] [--hold] [--begin-in S] [-- CMD [ARGS...]] (prints one JSON line)
 *
 * The request is the one `colony submit --cpus N --mem SIZE -- CMD ARGS` sends: argv, the
 * working directory, this process's environment, mcpu, mem (defaults as colony submit's: 1 CPU,
 * 256M), the department (--group; none by default), on hold (--hold), waiting for a begin time S
 * seconds after the start (--begin-in); CMD defaults to /bin/true and must be an absolute path. It is serialised once
 * and sent M times, as a program calling an API in a loop would. The clients start together once all are connected;
 * what is timed is from then until the last one ends. --ids writes the acknowledged job ids, one per line (submit.sh's
 * kill probe). tests/bench/slurm_submit.c is the same loop over libslurm. */
#include "clock.h"
#include "job.h"
#include "net.h"
#include "proto.h"
#include "submit_loop.h"
#include "units.h"
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

static const char usage[] =
        "usage: bench_submit --socket PATH --clients N --jobs M [--ids FILE] [--cpus N] [--mem SIZE]\n"
        "                    [--group DEPT] [--hold] [--begin-in S] [-- CMD [ARGS...]]\n";

/* What each job asks (as colony submit's options). */
typedef struct job_shape {
        res_t req;
        char *group;
        bool hold;
        int64_t begin_usec; /* 0: none */
} job_shape;

/* One client's connection and the frame it sends. */
typedef struct colony_client {
        const char *socket;
        const char *frame;
        size_t len;
        int fd;
} colony_client;

static int colony_open(void *ud, char err[LOOP_ERRLEN]) {
        colony_client *c = ud;

        c->fd = net_connect_unix(c->socket);
        if (c->fd < 0)
                snprintf(err, LOOP_ERRLEN, "connecting to %s: %s", c->socket, strerror(-c->fd));
        return c->fd < 0 ? c->fd : 0;
}

static int colony_submit(void *ud, uint64_t *id, int *fatal, char err[LOOP_ERRLEN]) {
        char perr[PROTO_ERRLEN] = "";
        colony_client *c = ud;
        const char *text = NULL;
        cJSON *reply = NULL;
        int64_t v;
        int r;

        r = proto_write_all(c->fd, c->frame, c->len);
        if (r == 0) /* as colony's client waits: see net_wait_readable */
                r = net_wait_readable(c->fd, -1);
        if (r == 0)
                r = proto_recv(c->fd, &reply, perr);
        if (r < 0) {
                *fatal = 1;
                snprintf(err, LOOP_ERRLEN, "%s: %s", strerror(-r), perr);
                return r;
        }
        if (proto_get_int(reply, "id", 1, INT64_MAX, &v, perr) == 0 && strcmp(proto_type(reply), "submitted") == 0) {
                *id = (uint64_t)v;
        } else {
                proto_get_str(reply, "error", &text, perr);
                snprintf(err, LOOP_ERRLEN, "refused: %s", text ? text : "a reply that is not 'submitted'");
                r = -EREMOTEIO;
        }
        cJSON_Delete(reply);
        return r;
}

/* The submit request for argv with this process's cwd and environment, framed into *frame
 * (malloc'ed). Returns 0 or -errno with one line in err. */
static int make_frame(char **argv, const job_shape *shape, char **frame, size_t *len, char err[LOOP_ERRLEN]) {
        static char cwd[PATH_MAX];
        job_spec spec = { .argv = argv,
                          .env = environ,
                          .cwd = cwd,
                          .req = shape->req,
                          .group = shape->group,
                          .hold = shape->hold,
                          .begin_usec = shape->begin_usec };
        cJSON *msg;
        int r;

        if (!getcwd(cwd, sizeof(cwd))) {
                snprintf(err, LOOP_ERRLEN, "the working directory: %s", strerror(errno));
                return -errno;
        }
        msg = proto_new("submit");
        r = msg && job_spec_to_json(&spec, msg) == 0 ? proto_frame(msg, frame, len) : -ENOMEM;
        cJSON_Delete(msg);
        if (r < 0)
                snprintf(err, LOOP_ERRLEN, "the request: %s", strerror(-r));
        return r;
}

/* Options into a, socket and shape; returns 0, or -EINVAL with one line in err. */
static int parse(int argc, char **argv, loop_args *a, const char **socket, job_shape *shape, char err[LOOP_ERRLEN]) {
        static const struct option options[] = {
                LOOP_OPTIONS,
                { "socket", required_argument, NULL, 's' },
                { "cpus", required_argument, NULL, 'p' },
                { "mem", required_argument, NULL, 'm' },
                { "group", required_argument, NULL, 'g' },
                { "hold", no_argument, NULL, 'H' },
                { "begin-in", required_argument, NULL, 'b' },
                { 0 },
        };
        int o, r = 0;

        opterr = 0;
        while (r == 0 && (o = getopt_long(argc, argv, "", options, NULL)) != -1) {
                switch (o) {
                case 's': *socket = optarg; break;
                case 'p':
                        if (units_parse_cpus(optarg, &shape->req.mcpu) < 0)
                                r = -EINVAL, snprintf(err, LOOP_ERRLEN, "--cpus: '%s' is not a CPU count", optarg);
                        break;
                case 'm':
                        if (units_parse_size(optarg, &shape->req.mem) < 0 || shape->req.mem == 0)
                                r = -EINVAL, snprintf(err, LOOP_ERRLEN, "--mem: '%s' is not a memory size", optarg);
                        break;
                case 'g': shape->group = optarg; break;
                case 'H': shape->hold = true; break;
                case 'b': {
                        char *end;
                        long s = strtol(optarg, &end, 10);
                        if (*optarg == '\0' || *end || s <= 0 || s > 365L * 86400)
                                r = -EINVAL,
                                snprintf(err, LOOP_ERRLEN, "--begin-in: '%s' is not a number of seconds", optarg);
                        else
                                shape->begin_usec = clock_real_usec() + (int64_t)s * 1000000;
                        break;
                }
                case '?': r = -EINVAL, snprintf(err, LOOP_ERRLEN, "bad option '%s'", argv[optind - 1]); break;
                default: r = loop_option(a, o, optarg, err);
                }
        }
        if (r == 0 && !*socket)
                r = -EINVAL, snprintf(err, LOOP_ERRLEN, "--socket is required");
        if (r == 0 && optind < argc && argv[optind][0] != '/')
                r = -EINVAL, snprintf(err, LOOP_ERRLEN, "the command must be an absolute path, not '%s'", argv[optind]);
        return r < 0 ? r : loop_check(a, err);
}

int main(int argc, char **argv) {
        static char *default_cmd[] = { "/bin/true", NULL };
        char err[LOOP_ERRLEN] = "", *frame = NULL;
        job_shape shape = { .req = { .mcpu = 1000, .mem = (int64_t)256 << 20 } };
        colony_client c = { .fd = -1 };
        loop_args a = { 0 };
        int r;

        if (argc == 2 && strcmp(argv[1], "--help") == 0)
                return fputs(usage, stdout), 0;
        if (parse(argc, argv, &a, &c.socket, &shape, err) < 0) {
                fprintf(stderr, "bench_submit: %s\n%s", err, usage);
                return 2;
        }
        if (make_frame(optind < argc ? argv + optind : default_cmd, &shape, &frame, &c.len, err) < 0) {
                fprintf(stderr, "bench_submit: %s\n", err);
                return 1;
        }
        c.frame = frame;
        r = loop_run(&a, &(loop_client){ .open = colony_open, .submit = colony_submit, .ud = &c }, stdout);
        if (r < 0)
                fprintf(stderr, "bench_submit: %s\n", r == -ECONNREFUSED ? "a client could not connect" : strerror(-r));
        free(frame);
        return r == 0 ? 0 : 1;
}
