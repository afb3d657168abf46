/* peer-flood - hold many connections to one of the controller's listeners, as a flood of
 * strangers would, and report what the controller did with them.
 *
 *   peer-flood MODE ADDRESS N STATUS_FILE
 *
 * MODE: idle (connect and send nothing), partial (send a frame header announcing 1 MiB and
 * 256 KiB of its body), slow-http (send half an HTTP request, then a header line every 2 s).
 * ADDRESS is HOST:PORT or a Unix socket path. Connections are opened one after the other;
 * then, until SIGTERM, STATUS_FILE is rewritten each second as
 *   connected C open O closed X
 *   first TEXT
 * where closed counts connections the controller ended, and TEXT is the first bytes any of them
 * received, printable characters only (a refusal's error message). */
#include "net.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { PARTIAL_ANNOUNCED = 1024 * 1024, PARTIAL_SENT = 256 * 1024, SLOW_PERIOD_S = 2 };

static volatile sig_atomic_t stop;

static void on_term(int sig) {
        (void)sig;
        stop = 1;
}

static void write_status(const char *path, int connected, int open, int closed, const char *first) {
        char tmp[4096];
        snprintf(tmp, sizeof(tmp), "%s.tmp", path);
        FILE *f = fopen(tmp, "w");
        if (!f)
                return;
        fprintf(f, "connected %d open %d closed %d\nfirst %s\n", connected, open, closed, first);
        if (fclose(f) == 0)
                (void)rename(tmp, path);
}

/* Send what the mode sends first; best effort: a peer that was cut at accept takes nothing. */
static void greet(int fd, const char *mode) {
        static char body[PARTIAL_SENT];
        if (strcmp(mode, "partial") == 0) {
                unsigned char h[4] = { PARTIAL_ANNOUNCED >> 24, (PARTIAL_ANNOUNCED >> 16) & 0xff, 0, 0 };
                memset(body, ' ', sizeof(body));
                (void)!write(fd, h, sizeof(h));
                (void)!write(fd, body, sizeof(body));
        } else if (strcmp(mode, "slow-http") == 0)
                (void)!write(fd, "GET /metrics HTTP/1.1\r\nHost: x\r\n", 32);
}

/* Keep the printable bytes of the first thing received. */
static void keep_first(char *first, size_t cap, const char *buf, ssize_t n) {
        size_t len = 0;
        if (*first)
                return;
        for (ssize_t i = 0; i < n && len + 1 < cap; i++)
                if (buf[i] >= 32 && buf[i] < 127)
                        first[len++] = buf[i];
        first[len] = '\0';
}

int main(int argc, char **argv) {
        if (argc != 5 || atoi(argv[3]) <= 0) {
                fprintf(stderr, "usage: peer-flood idle|partial|slow-http ADDRESS N STATUS_FILE\n");
                return 2;
        }
        const char *mode = argv[1], *addr = argv[2], *status = argv[4];
        int n = atoi(argv[3]), connected = 0, closed = 0;
        struct pollfd *p = calloc((size_t)n, sizeof(*p));
        char first[256] = "", buf[65536];
        if (!p)
                return 1;
        signal(SIGTERM, on_term);
        signal(SIGPIPE, SIG_IGN);
        bool unix_path = strchr(addr, '/') != NULL;
        for (int i = 0; i < n && !stop; i++) {
                int fd = unix_path ? net_connect_unix(addr) : net_connect_tcp(addr, 30000);
                p[i] = (struct pollfd){ .fd = -1 };
                if (fd < 0) {
                        fprintf(stderr, "peer-flood: connection %d to %s: %s\n", i, addr, strerror(-fd));
                        continue;
                }
                (void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
                greet(fd, mode);
                p[i] = (struct pollfd){ .fd = fd, .events = POLLIN };
                connected++;
        }
        time_t next_slow = time(NULL) + SLOW_PERIOD_S;
        while (!stop) {
                write_status(status, connected, connected - closed, closed, first);
                if (poll(p, (nfds_t)n, 1000) < 0 && errno != EINTR)
                        return 1;
                for (int i = 0; i < n; i++) {
                        if (p[i].fd < 0 || !p[i].revents)
                                continue;
                        ssize_t k = read(p[i].fd, buf, sizeof(buf));
                        if (k > 0)
                                keep_first(first, sizeof(first), unix_path ? buf + 4 : buf, unix_path ? k - 4 : k);
                        else if (k == 0 || (errno != EAGAIN && errno != EINTR)) {
                                close(p[i].fd);
                                p[i].fd = -1;
                                closed++;
                        }
                }
                if (strcmp(mode, "slow-http") == 0 && time(NULL) >= next_slow) {
                        next_slow = time(NULL) + SLOW_PERIOD_S;
                        for (int i = 0; i < n; i++)
                                if (p[i].fd >= 0)
                                        (void)!write(p[i].fd, "X-Slow: 1\r\n", 11);
                }
        }
        return 0;
}
