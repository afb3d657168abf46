/* colony-stress - the small workloads colony's demo and tests run inside job cgroups.
 *
 *   colony-stress cpu SECONDS           spin on one CPU for SECONDS of wall time
 *   colony-stress mem SIZE [SECONDS]    touch SIZE bytes (K/M/G suffix), then hold them
 *   colony-stress sleep SECONDS         sleep
 *   colony-stress tree N SECONDS        N children with a grandchild each, all ignoring
 *                                       SIGTERM and sleeping (only a cgroup kill ends them)
 *   colony-stress id                    print "uid gid"
 *
 * Exits 0 on success, 1 when the work itself fails, 2 on a usage error. No dependencies. */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *usage_line =
        "usage: colony-stress cpu SECONDS | mem SIZE[K|M|G] [SECONDS] | sleep SECONDS | tree N SECONDS | id";

static _Noreturn void usage(const char *why) {
        fprintf(stderr, "colony-stress: %s; %s\n", why, usage_line);
        exit(2);
}

static double parse_seconds(const char *s) {
        char *end;
        double v;

        errno = 0;
        v = strtod(s, &end);
        if (errno || end == s || *end || !isfinite(v) || v < 0 || v > 1e7)
                usage("SECONDS must be a number from 0 to 10000000");
        return v;
}

static size_t parse_size(const char *s) {
        char *end;
        unsigned long long v, mult = 1;

        errno = 0;
        v = strtoull(s, &end, 10);
        if (*end && !end[1])
                switch (*end) {
                case 'k': case 'K': mult = 1ULL << 10; end++; break;
                case 'm': case 'M': mult = 1ULL << 20; end++; break;
                case 'g': case 'G': mult = 1ULL << 30; end++; break;
                }
        if (errno || end == s || *end || s[0] == '-' || v == 0 || v > SIZE_MAX / mult)
                usage("SIZE must be a positive number of bytes with an optional K, M or G suffix");
        return (size_t)(v * mult);
}

static double now(void) {
        struct timespec ts;

        clock_gettime(CLOCK_MONOTONIC, &ts);
        return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void sleep_for(double seconds) {
        struct timespec ts = {.tv_sec = (time_t)seconds,
                              .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9)};

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

static int run_cpu(double seconds) {
        volatile uint64_t spins = 0;
        double end = now() + seconds;

        while (now() < end)
                for (int i = 0; i < 100000; i++)
                        spins++;
        return 0;
}

static int run_mem(size_t size, double seconds) {
        long page = sysconf(_SC_PAGESIZE);
        volatile unsigned char *p;
        uint64_t sum = 0, want = 0;

        p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        if (p == MAP_FAILED) {
                fprintf(stderr, "colony-stress: mmap %zu bytes: %s\n", size, strerror(errno));
                return 1;
        }
        /* Write every page, then read every page back: each one has to be real memory. */
        for (size_t off = 0; off < size; off += (size_t)page) {
                p[off] = (unsigned char)((off / (size_t)page) | 1);
                want += p[off];
        }
        for (size_t off = 0; off < size; off += (size_t)page)
                sum += p[off];
        if (sum != want) {
                fprintf(stderr, "colony-stress: memory read back wrong\n");
                return 1;
        }
        printf("mem: touched %zu bytes\n", size);
        fflush(stdout);
        sleep_for(seconds);
        munmap((void *)p, size);
        return 0;
}

/* Sleep, then reap whatever children this process has. */
static void sleep_and_reap(double seconds) {
        sleep_for(seconds);
        while (wait(NULL) > 0 || errno == EINTR)
                ;
}

static int run_tree(long n, double seconds) {
        /* Inherited by every child and grandchild. */
        signal(SIGTERM, SIG_IGN);
        for (long i = 0; i < n; i++) {
                pid_t child = fork();

                if (child < 0) {
                        fprintf(stderr, "colony-stress: fork: %s\n", strerror(errno));
                        return 1;
                }
                if (child == 0) {
                        pid_t grandchild = fork();

                        if (grandchild < 0)
                                _exit(1);
                        sleep_and_reap(seconds);
                        _exit(0);
                }
        }
        sleep_and_reap(seconds);
        return 0;
}

static long parse_count(const char *s) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || end == s || *end || v < 1 || v > 1000)
                usage("N must be a number from 1 to 1000");
        return v;
}

int main(int argc, char **argv) {
        const char *cmd = argc > 1 ? argv[1] : "";

        if (strcmp(cmd, "cpu") == 0 && argc == 3)
                return run_cpu(parse_seconds(argv[2]));
        if (strcmp(cmd, "mem") == 0 && (argc == 3 || argc == 4))
                return run_mem(parse_size(argv[2]), argc == 4 ? parse_seconds(argv[3]) : 0);
        if (strcmp(cmd, "sleep") == 0 && argc == 3) {
                sleep_for(parse_seconds(argv[2]));
                return 0;
        }
        if (strcmp(cmd, "tree") == 0 && argc == 4)
                return run_tree(parse_count(argv[2]), parse_seconds(argv[3]));
        if (strcmp(cmd, "id") == 0 && argc == 2) {
                printf("%u %u\n", (unsigned)getuid(), (unsigned)getgid());
                return fflush(stdout) == 0 ? 0 : 1;
        }
        usage(argc > 1 ? "unknown command or wrong arguments" : "no command");
}
