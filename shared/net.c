/* net.c - socket set-up for the daemons and the CLI. */
#include "net.h"
#include "clock.h"
#include <arpa/inet.h>
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

static int unix_address(const char *path, struct sockaddr_un *sa) {
        *sa = (struct sockaddr_un){ .sun_family = AF_UNIX };
        if (strlen(path) >= sizeof(sa->sun_path))
                return -ENAMETOOLONG;
        strcpy(sa->sun_path, path);
        return 0;
}

static int fail_close(int fd, int r) {
        close(fd);
        return r;
}

/* Remove a stale socket file at path. Anything but a socket is left alone (-EEXIST), and so is
 * a socket some process still listens on (-EADDRINUSE): a second daemon must not steal it. */
static int remove_stale_socket(const char *path, const struct sockaddr_un *sa) {
        struct stat st;
        if (lstat(path, &st) < 0)
                return errno == ENOENT ? 0 : -errno;
        if (!S_ISSOCK(st.st_mode))
                return -EEXIST;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        /* non-blocking: a listener with a full backlog answers EAGAIN instead of stalling us */
        int live = connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) == 0 || errno == EAGAIN;
        close(fd);
        if (live)
                return -EADDRINUSE;
        return unlink(path) < 0 && errno != ENOENT ? -errno : 0;
}

int net_listen_unix(const char *path, mode_t mode) {
        struct sockaddr_un sa;
        int r = unix_address(path, &sa);
        if (r < 0 || (r = remove_stale_socket(path, &sa)) < 0)
                return r;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return fail_close(fd, -errno);
        if (chmod(path, mode) < 0 || listen(fd, 128) < 0) {
                r = -errno;
                unlink(path);
                return fail_close(fd, r);
        }
        return fd;
}

int net_connect_unix(const char *path) {
        struct sockaddr_un sa;
        int r = unix_address(path, &sa);
        if (r < 0)
                return r;
        int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
                return fail_close(fd, -errno);
        return fd;
}

int net_split_hostport(const char *hostport, char *host, size_t hostlen, uint16_t *port) {
        const char *colon, *start = hostport, *end;
        if (*hostport == '[') {
                start = hostport + 1;
                end = strchr(start, ']');
                if (!end || end[1] != ':')
                        return -EINVAL;
                colon = end + 1;
        } else {
                colon = strrchr(hostport, ':');
                if (!colon || memchr(hostport, ':', (size_t)(colon - hostport)))
                        return -EINVAL;
                end = colon;
        }
        size_t len = (size_t)(end - start);
        if (len == 0 || len >= hostlen)
                return -EINVAL;
        char *stop;
        /* digits only: strtoul would also take "+80", " 80" and "-0" */
        if (!isdigit((unsigned char)colon[1]))
                return -EINVAL;
        unsigned long p = strtoul(colon + 1, &stop, 10);
        if (*stop || p > 65535)
                return -EINVAL;
        memcpy(host, start, len);
        host[len] = '\0';
        *port = (uint16_t)p;
        return 0;
}

/* Resolve a numeric or named host:port into *res (freeaddrinfo). */
static int resolve(const char *hostport, int passive, struct addrinfo **res) {
        char host[256], service[8];
        uint16_t port;
        if (net_split_hostport(hostport, host, sizeof(host), &port) < 0)
                return -EINVAL;
        snprintf(service, sizeof(service), "%u", port);
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = passive ? AI_PASSIVE : 0 };
        int r = getaddrinfo(host, service, &hints, res);
        if (r == EAI_SYSTEM)
                return -errno;
        return r ? -EADDRNOTAVAIL : 0;
}

/* Small messages go out at once. With Nagle's algorithm a message sent right after another
 * ("finished" after "started", a launch after an ack) waits for the peer's delayed ACK, about
 * 40 ms on Linux: most of a short job's turnaround. Returns 0 or -errno. */
static int no_delay(int fd) {
        int one = 1;

        return setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0 ? -errno : 0;
}

int net_listen_tcp(const char *hostport, uint16_t *bound_port) {
        struct addrinfo *ai;
        int r = resolve(hostport, 1, &ai);
        if (r < 0)
                return r;
        int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0) {
                r = -errno;
                freeaddrinfo(ai);
                return r;
        }
        int one = 1;
        (void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        /* Accepted connections inherit it (Linux copies the listener's TCP options). */
        if ((r = no_delay(fd)) < 0) {
                freeaddrinfo(ai);
                return fail_close(fd, r);
        }
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) < 0 || listen(fd, 128) < 0) {
                r = -errno;
                freeaddrinfo(ai);
                return fail_close(fd, r);
        }
        freeaddrinfo(ai);
        struct sockaddr_storage ss;
        socklen_t len = sizeof(ss);
        if (getsockname(fd, (struct sockaddr *)&ss, &len) < 0)
                return fail_close(fd, -errno);
        *bound_port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                     : ((struct sockaddr_in *)&ss)->sin_port);
        return fd;
}

/* Finish a non-blocking connect within timeout_ms. Returns 0 or -errno. */
static int await_connect(int fd, int timeout_ms) {
        struct pollfd p = { .fd = fd, .events = POLLOUT };
        int n;
        while ((n = poll(&p, 1, timeout_ms)) < 0 && errno == EINTR)
                ;
        if (n < 0)
                return -errno;
        if (n == 0)
                return -ETIMEDOUT;
        int soerr = 0;
        socklen_t len = sizeof(soerr);
        if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &len) < 0)
                return -errno;
        return -soerr;
}

/* Connect to one resolved address within timeout_ms. Returns a blocking fd or -errno. */
static int connect_one(const struct addrinfo *ai, int timeout_ms) {
        int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
                return -errno;
        int r = no_delay(fd);

        if (r == 0)
                r = connect(fd, ai->ai_addr, ai->ai_addrlen) < 0 ? -errno : 0;
        if (r == -EINPROGRESS)
                r = await_connect(fd, timeout_ms);
        int flags = r < 0 ? 0 : fcntl(fd, F_GETFL);
        if (r == 0 && (flags < 0 || fcntl(fd, F_SETFL, flags & ~O_NONBLOCK) < 0))
                r = -errno;
        return r < 0 ? fail_close(fd, r) : fd;
}

int net_connect_tcp(const char *hostport, int timeout_ms) {
        struct addrinfo *res;
        int r = resolve(hostport, 0, &res);
        if (r < 0)
                return r;
        /* "localhost" may give ::1 first while the controller listens on 127.0.0.1: try each */
        for (const struct addrinfo *ai = res; ai; ai = ai->ai_next)
                if ((r = connect_one(ai, timeout_ms)) >= 0)
                        break;
        freeaddrinfo(res);
        return r;
}

int net_wait_readable(int fd, int timeout_ms) {
        int64_t deadline = clock_mono_ms() + timeout_ms;
        struct pollfd p = { .fd = fd, .events = POLLIN };

        for (;;) {
                int left = timeout_ms < 0 ? -1 : (int)(deadline - clock_mono_ms());
                if (timeout_ms >= 0 && left < 0)
                        left = 0;
                int n = poll(&p, 1, left);
                if (n > 0)
                        return 0;
                if (n == 0)
                        return -ETIMEDOUT;
                if (errno == EINTR)
                        return -EINTR;
        }
}
