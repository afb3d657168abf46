/* submit_loop.c - N forked clients submitting in a loop, timed together (submit_loop.h). */
#include "submit_loop.h"
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* One submission's outcome, written by its client into memory shared with the parent. */
typedef struct slot {
        uint64_t id; /* 0: not acknowledged */
        double latency_us;
} slot;

static double now_s(void) {
        struct timespec t;

        clock_gettime(CLOCK_MONOTONIC, &t);
        return (double)t.tv_sec + (double)t.tv_nsec * 1e-9;
}

static int parse_count(const char *s, int max, int *out) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || end == s || *end || v < 1 || v > max)
                return -EINVAL;
        *out = (int)v;
        return 0;
}

int loop_option(loop_args *a, int opt, const char *arg, char err[LOOP_ERRLEN]) {
        switch (opt) {
        case 'c':
                if (parse_count(arg, LOOP_CLIENTS_MAX, &a->clients) == 0)
                        return 0;
                snprintf(err, LOOP_ERRLEN, "--clients: '%s' is not a count from 1 to %d", arg, LOOP_CLIENTS_MAX);
                return -EINVAL;
        case 'j':
                if (parse_count(arg, LOOP_TOTAL_MAX, &a->jobs) == 0)
                        return 0;
                snprintf(err, LOOP_ERRLEN, "--jobs: '%s' is not a count from 1 to %d", arg, LOOP_TOTAL_MAX);
                return -EINVAL;
        case 'i': a->ids_path = arg; return 0;
        }
        snprintf(err, LOOP_ERRLEN, "unknown option (try --help)");
        return -EINVAL;
}

int loop_check(const loop_args *a, char err[LOOP_ERRLEN]) {
        if (a->clients < 1 || a->jobs < 1) {
                snprintf(err, LOOP_ERRLEN, "--clients and --jobs are required");
                return -EINVAL;
        }
        if ((long long)a->clients * a->jobs > LOOP_TOTAL_MAX) {
                snprintf(err, LOOP_ERRLEN, "--clients x --jobs is above %d", LOOP_TOTAL_MAX);
                return -EINVAL;
        }
        return 0;
}

/* A forked client: open, say so on ready, wait for the parent's go byte (EOF: give up), then
 * submit jobs times into its slots. Never returns. */
static void client(const loop_args *a, const loop_client *c, int k, slot *slots, int ready, int go) {
        char err[LOOP_ERRLEN] = "", ok = 1, b;
        int fatal = 0, reported = 0;

        signal(SIGPIPE, SIG_IGN); /* a dead connection is an error from write, not death */
        if (c->open(c->ud, err) < 0) {
                fprintf(stderr, "client %d: %s\n", k, err);
                ok = 0;
        }
        if (write(ready, &ok, 1) != 1 || !ok || read(go, &b, 1) != 1)
                _exit(1);
        for (int i = 0; i < a->jobs && !fatal; i++) {
                double t0 = now_s();
                uint64_t id = 0;

                if (c->submit(c->ud, &id, &fatal, err) < 0) {
                        if (!reported++)
                                fprintf(stderr, "client %d, submission %d: %s\n", k, i + 1, err);
                        continue;
                }
                slots[i] = (slot){ .id = id, .latency_us = (now_s() - t0) * 1e6 };
        }
        _exit(0);
}

static int by_value(const void *x, const void *y) {
        double a = *(const double *)x, b = *(const double *)y;

        return (a > b) - (a < b);
}

/* The p-th percentile (nearest rank) of sorted v[0..n), 0 when n is 0. */
static double percentile(const double *v, size_t n, double p) {
        size_t rank = (size_t)ceil(p * (double)n);

        return n ? v[rank ? rank - 1 : 0] : 0;
}

static int write_ids(const char *path, const slot *slots, size_t n) {
        FILE *f = fopen(path, "w");
        int r = 0;

        if (!f)
                return -errno;
        for (size_t i = 0; i < n; i++)
                if (slots[i].id && fprintf(f, "%llu\n", (unsigned long long)slots[i].id) < 0)
                        r = -EIO;
        if (fclose(f) != 0 && r == 0)
                r = -errno;
        return r;
}

/* Fork the clients with the pipes' ends they need; returns how many were forked. */
static int fork_clients(const loop_args *a, const loop_client *c, slot *slots, int ready[2], int go[2]) {
        int n = 0;

        for (; n < a->clients; n++) {
                pid_t pid = fork();

                if (pid < 0)
                        break;
                if (pid == 0) {
                        close(ready[0]);
                        close(go[1]);
                        client(a, c, n, slots + (size_t)n * (size_t)a->jobs, ready[1], go[0]);
                }
        }
        return n;
}

/* Read one byte per forked client from ready: how many opened. */
static int count_ready(int fd, int forked) {
        int opened = 0;
        char ok;

        for (int i = 0; i < forked && read(fd, &ok, 1) == 1; i++)
                opened += ok;
        return opened;
}

static void report(const loop_args *a, const slot *slots, double seconds, FILE *out) {
        size_t total = (size_t)a->clients * (size_t)a->jobs, acked = 0;
        double *lat = malloc((total ? total : 1) * sizeof(*lat));

        for (size_t i = 0; lat && i < total; i++)
                if (slots[i].id)
                        lat[acked++] = slots[i].latency_us;
        if (!lat)
                acked = 0;
        qsort(lat, acked, sizeof(*lat), by_value);
        fprintf(out,
                "{\"clients\":%d,\"jobs\":%zu,\"seconds\":%.3f,\"jobs_per_s\":%.1f,\"failed\":%zu,"
                "\"latency_us_p50\":%.0f,\"latency_us_p99\":%.0f}\n",
                a->clients, total, seconds, (double)acked / seconds, total - acked, percentile(lat, acked, 0.5),
                percentile(lat, acked, 0.99));
        free(lat);
}

int loop_run(const loop_args *a, const loop_client *c, FILE *out) {
        size_t total = (size_t)a->clients * (size_t)a->jobs, acked = 0, size = total * sizeof(slot);
        int ready[2], go[2], forked, opened, r = 0;
        char start[LOOP_CLIENTS_MAX];
        double t0 = 0, t1;
        slot *slots;

        slots = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
        if (slots == MAP_FAILED)
                return -errno;
        if (pipe(ready) < 0 || pipe(go) < 0) {
                r = -errno;
                munmap(slots, size);
                return r;
        }
        fflush(NULL); /* or the children's exits would not flush, but their copies would be */
        forked = fork_clients(a, c, slots, ready, go);
        close(ready[1]);
        close(go[0]);
        opened = count_ready(ready[0], forked);
        if (opened == a->clients) {
                memset(start, 'g', sizeof(start));
                t0 = now_s();
                if (write(go[1], start, (size_t)a->clients) != a->clients)
                        r = -EIO;
        } else {
                r = forked < a->clients ? -EAGAIN : -ECONNREFUSED;
        }
        close(go[1]); /* EOF tells clients still waiting to give up */
        close(ready[0]);
        while (wait(NULL) > 0)
                ;
        t1 = now_s();
        if (r == 0) {
                report(a, slots, t1 - t0, out);
                for (size_t i = 0; i < total; i++)
                        acked += slots[i].id != 0;
                r = acked == total ? 0 : 1;
                if (a->ids_path && write_ids(a->ids_path, slots, total) < 0)
                        r = -EIO;
        }
        munmap(slots, size);
        return r;
}
