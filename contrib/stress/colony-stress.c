/* colony-stress - the small workloads colony's demo and tests run inside job cgroups.
 *
 *   colony-stress cpu SECONDS           spin on one CPU for SECONDS of wall time
 *   colony-stress mem SIZE [SECONDS]    touch SIZE bytes (K/M/G suffix), then hold them
 *   colony-stress sleep SECONDS         sleep
 *   colony-stress tree N SECONDS        N children with a grandchild each, all ignoring
 *                                       SIGTERM and sleeping (only a cgroup kill ends them)
 *   colony-stress id                    print "uid gid"
 *
 * Fixed amounts of work, for `colony measure`: each does N units and exits, printing its
 * elapsed time, so that interference shows as a longer run rather than as less progress.
 *   colony-stress work-cpu N     N units of integer arithmetic in registers
 *   colony-stress work-membw N   N sequential read-modify-write passes over a buffer 4 times the
 *                                last-level cache (memory bandwidth)
 *   colony-stress work-cache N   N million dependent random reads over a buffer the size of the
 *                                last-level cache (it misses when a neighbour evicts it)
 *   colony-stress work-io N      N times: write 1M to a temporary file in the working directory,
 *                                fsync it, read it back (the file is unlinked once open)
 *   colony-stress work-idle N    N times: a tenth of a cpu unit, then 10 ms asleep
 *
 * Exits 0 on success, 1 when the work itself fails, 2 on a usage error. No dependencies. */
#include <errno.h>
#include <fcntl.h>
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
        "usage: colony-stress cpu SECONDS | mem SIZE[K|M|G] [SECONDS] | sleep SECONDS | tree N SECONDS | id\n"
        "       | work-cpu N | work-membw N | work-cache N | work-io N | work-idle N";

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
                case 'k':
                case 'K':
                        mult = 1ULL << 10;
                        end++;
                        break;
                case 'm':
                case 'M':
                        mult = 1ULL << 20;
                        end++;
                        break;
                case 'g':
                case 'G':
                        mult = 1ULL << 30;
                        end++;
                        break;
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
        struct timespec ts = { .tv_sec = (time_t)seconds,
                               .tv_nsec = (long)((seconds - (double)(time_t)seconds) * 1e9) };

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

/* A count from 1 to max; else a usage error that says why. */
static long parse_count(const char *s, long max, const char *why) {
        char *end;
        long v;

        errno = 0;
        v = strtol(s, &end, 10);
        if (errno || end == s || *end || v < 1 || v > max)
                usage(why);
        return v;
}

/* ---- fixed work ---- */

#define CPU_UNIT_SPINS 2000000 /* about 5 ms of one core */
#define IO_CHUNK       (1 << 20)

/* The last-level cache size. Virtual machines report anything (0, or the host's 512M), so it
 * is clamped to what a real core's share of an LLC is: 1M to 32M. */
static size_t llc_size(void) {
        long v = sysconf(_SC_LEVEL3_CACHE_SIZE);
        size_t mb = (size_t)1 << 20;

        if (v <= 0)
                v = sysconf(_SC_LEVEL2_CACHE_SIZE);
        if (v < (long)mb)
                return mb;
        return (size_t)v > 32 * mb ? 32 * mb : (size_t)v;
}

/* A buffer of size bytes, every page touched. NULL (after saying why) when it cannot be had. */
static uint64_t *alloc_touched(size_t size) {
        uint64_t *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

        if (p == MAP_FAILED) {
                fprintf(stderr, "colony-stress: mmap %zu bytes: %s\n", size, strerror(errno));
                return NULL;
        }
        for (size_t i = 0; i < size / sizeof(uint64_t); i++)
                p[i] = i;
        return p;
}

/* xorshift64: the same stream on every run, so every run does the same work. */
static uint64_t next_random(uint64_t *x) {
        *x ^= *x << 13;
        *x ^= *x >> 7;
        *x ^= *x << 17;
        return *x;
}

static void spin_units(double units) {
        volatile uint64_t sink;
        uint64_t x = 88172645463325252ULL;

        for (uint64_t i = 0; i < (uint64_t)(units * CPU_UNIT_SPINS); i++)
                next_random(&x);
        sink = x;
        (void)sink;
}

static int work_cpu(long n) {
        spin_units((double)n);
        return 0;
}

static int work_membw(long n) {
        size_t size = 4 * llc_size(), words = size / sizeof(uint64_t);
        volatile uint64_t *p = alloc_touched(size);

        if (!p)
                return 1;
        for (long pass = 0; pass < n; pass++)
                for (size_t i = 0; i < words; i += 8) /* one word per 64-byte line: all bandwidth */
                        p[i]++;
        munmap((void *)p, size);
        return 0;
}

/* A random cyclic permutation of the buffer's lines (Sattolo), chased: every read depends on
 * the last, so its latency, hit or miss, is the whole cost. */
static int work_cache(long n) {
        size_t size = llc_size(), lines = size / 64, stride = 64 / sizeof(uint64_t), at = 0;
        uint64_t *p = alloc_touched(size), x = 88172645463325252ULL;

        if (!p)
                return 1;
        for (size_t i = 0; i < lines; i++)
                p[i * stride] = i;
        for (size_t i = lines - 1; i > 0; i--) {
                size_t k = next_random(&x) % i, t = p[i * stride];
                p[i * stride] = p[k * stride];
                p[k * stride] = t;
        }
        for (long r = 0; r < n * 1000000L; r++)
                at = p[at * stride];
        munmap(p, size);
        return at == lines ? 1 : 0; /* never true; keeps the chase from being optimised away */
}

/* Write, fsync and read back IO_CHUNK bytes at the start of fd. Returns 0 or -errno. */
static int io_round(int fd, char *buf) {
        if (pwrite(fd, buf, IO_CHUNK, 0) != IO_CHUNK || fsync(fd) < 0)
                return errno ? -errno : -EIO;
        /* Drop the cached copy so that the read goes to the device too. */
        posix_fadvise(fd, 0, IO_CHUNK, POSIX_FADV_DONTNEED);
        if (pread(fd, buf, IO_CHUNK, 0) != IO_CHUNK)
                return errno ? -errno : -EIO;
        return 0;
}

static int work_io(long n) {
        char path[] = "colony-stress-io-XXXXXX", *buf = malloc(IO_CHUNK);
        int fd = mkstemp(path), r = 0;

        if (fd < 0 || !buf) {
                fprintf(stderr, "colony-stress: temporary file in the working directory: %s\n", strerror(errno));
                free(buf);
                return 1;
        }
        unlink(path); /* gone from the directory at once, even if the job is killed */
        memset(buf, 'c', IO_CHUNK);
        for (long i = 0; i < n && r == 0; i++)
                r = io_round(fd, buf);
        if (r < 0)
                fprintf(stderr, "colony-stress: write, fsync, read: %s\n", strerror(-r));
        close(fd);
        free(buf);
        return r < 0 ? 1 : 0;
}

static int work_idle(long n) {
        for (long i = 0; i < n; i++) {
                spin_units(0.1);
                sleep_for(0.01);
        }
        return 0;
}

static const struct {
        const char *name;
        int (*run)(long n);
} works[] = {
        { "work-cpu", work_cpu }, { "work-membw", work_membw }, { "work-cache", work_cache },
        { "work-io", work_io },   { "work-idle", work_idle },
};

/* Run the fixed work named cmd, if it is one, and print how long it took. Returns its exit
 * status, or -1 when cmd is not a fixed work. */
static int run_work(const char *cmd, int argc, char **argv) {
        for (size_t i = 0; i < sizeof(works) / sizeof(works[0]); i++) {
                if (strcmp(cmd, works[i].name) != 0)
                        continue;
                if (argc != 3)
                        usage("a fixed work takes one argument, N");
                long n = parse_count(argv[2], 100000000, "N must be a number of units from 1 to 100000000");
                double t0 = now();
                int r = works[i].run(n);
                printf("%s %s: %.3f s\n", cmd, argv[2], now() - t0);
                return r;
        }
        return -1;
}

int main(int argc, char **argv) {
        const char *cmd = argc > 1 ? argv[1] : "";
        int work = run_work(cmd, argc, argv);

        if (work >= 0)
                return work;

        if (strcmp(cmd, "cpu") == 0 && argc == 3)
                return run_cpu(parse_seconds(argv[2]));
        if (strcmp(cmd, "mem") == 0 && (argc == 3 || argc == 4))
                return run_mem(parse_size(argv[2]), argc == 4 ? parse_seconds(argv[3]) : 0);
        if (strcmp(cmd, "sleep") == 0 && argc == 3) {
                sleep_for(parse_seconds(argv[2]));
                return 0;
        }
        if (strcmp(cmd, "tree") == 0 && argc == 4)
                return run_tree(parse_count(argv[2], 1000, "N must be a number from 1 to 1000"),
                                parse_seconds(argv[3]));
        if (strcmp(cmd, "id") == 0 && argc == 2) {
                printf("%u %u\n", (unsigned)getuid(), (unsigned)getgid());
                return fflush(stdout) == 0 ? 0 : 1;
        }
        usage(argc > 1 ? "unknown command or wrong arguments" : "no command");
}
