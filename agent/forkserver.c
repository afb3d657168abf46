/* forkserver.c - fork children from a small process forked once (see forkserver.h). */
#include "forkserver.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

/* A request's first bytes: the child's name (comm's size). */
typedef struct request_head {
        char name[16];
} request_head;

/* A message's descriptors as SCM_RIGHTS wants them. */
typedef union fd_control {
        struct cmsghdr header;
        char space[CMSG_SPACE(sizeof(int) * FORKSERVER_MAX_FDS)];
} fd_control;

/* The descriptors a received message carried, into fds. */
static size_t received_fds(struct msghdr *mh, int *fds) {
        size_t n = 0;

        for (struct cmsghdr *c = CMSG_FIRSTHDR(mh); c; c = CMSG_NXTHDR(mh, c)) {
                if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
                        continue;
                size_t k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);

                for (size_t i = 0; i < k && n < FORKSERVER_MAX_FDS; i++)
                        memcpy(&fds[n++], CMSG_DATA(c) + i * sizeof(int), sizeof(int));
        }
        return n;
}

/* The server's descriptors: its socket (returned, above 2) and /dev/null as the standard ones;
 * every other of its parent's closed. Returns the socket, or -1. */
static int keep_only(int sock) {
        int null;

        if ((sock = fcntl(sock, F_DUPFD_CLOEXEC, 3)) < 0 || (null = open("/dev/null", O_RDWR | O_CLOEXEC)) < 0)
                return -1;
        for (int fd = 0; fd < 3; fd++)
                if (dup2(null, fd) < 0)
                        return -1;
        if (close_range(3, (unsigned)sock - 1, 0) < 0 || close_range((unsigned)sock + 1, ~0U, 0) < 0)
                return -1;
        return sock;
}

/* A child that is parent's, not ours (CLONE_PARENT), named child_name from its start: the
 * name is ours across the clone. A raw clone, whose child goes on as fork's does, on a copy of
 * our stack: glibc's fork takes no flags. The server has one thread and holds no lock of
 * libc's here, so the child needs none of fork's resets. */
static pid_t fork_for_parent(const char *child_name, const char *own_name) {
        pid_t pid;

        if (prctl(PR_SET_NAME, child_name) < 0)
                return -1;
        pid = (pid_t)syscall(SYS_clone, CLONE_PARENT | SIGCHLD, NULL, NULL, NULL, 0);
        if (pid != 0) {
                int e = errno;

                (void)prctl(PR_SET_NAME, own_name);
                errno = e;
        }
        return pid;
}

static _Noreturn void serve(int sock, pid_t parent, const char *name, forkserver_child_fn fn, void *ctx) {
        /* Dies with its parent, whose lock on its cgroup subtree (say) it must not outlive. */
        if (prctl(PR_SET_NAME, name) < 0 || prctl(PR_SET_PDEATHSIG, SIGKILL) < 0 || getppid() != parent ||
            (sock = keep_only(sock)) < 0)
                _exit(1);
        for (;;) {
                char buf[sizeof(request_head) + FORKSERVER_MAX_MSG];
                fd_control control;
                struct iovec iov = { .iov_base = buf, .iov_len = sizeof(buf) };
                struct msghdr mh = { .msg_iov = &iov,
                                     .msg_iovlen = 1,
                                     .msg_control = control.space,
                                     .msg_controllen = sizeof(control.space) };
                int fds[FORKSERVER_MAX_FDS];
                ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);
                int32_t reply;

                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0)
                        _exit(0); /* the parent closed its end, or died */
                size_t nfds = received_fds(&mh, fds);

                if (mh.msg_flags & (MSG_TRUNC | MSG_CTRUNC) || (size_t)n <= sizeof(request_head))
                        reply = -EMSGSIZE;
                else {
                        request_head head;

                        memcpy(&head, buf, sizeof(head));
                        head.name[sizeof(head.name) - 1] = 0;
                        pid_t pid = fork_for_parent(head.name, name);

                        if (pid == 0) {
                                close(sock);
                                fn(ctx, buf + sizeof(head), (size_t)n - sizeof(head), fds, nfds);
                                _exit(127);
                        }
                        reply = pid < 0 ? -errno : pid;
                }
                for (size_t i = 0; i < nfds; i++)
                        close(fds[i]);
                if (send(sock, &reply, sizeof(reply), MSG_NOSIGNAL) != (ssize_t)sizeof(reply))
                        _exit(0);
        }
}

int forkserver_start(forkserver *fs, const char *name, forkserver_child_fn fn, void *ctx, char *err, size_t errlen) {
        pid_t parent = getpid(), pid;
        int sv[2], e;

        *fs = (forkserver){ .pid = 0, .fd = -1 };
        if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
                e = errno;
                snprintf(err, errlen, "socketpair: %s", strerror(e));
                return -e;
        }
        if ((pid = fork()) == 0)
                serve(sv[1], parent, name, fn, ctx);
        e = errno;
        close(sv[1]);
        if (pid < 0) {
                close(sv[0]);
                snprintf(err, errlen, "fork: %s", strerror(e));
                return -e;
        }
        *fs = (forkserver){ .pid = pid, .fd = sv[0] };
        return 0;
}

/* The server's end, seen by its socket (end of file, or a reset), or none started: reap it. */
static int server_gone(forkserver *fs, char *err, size_t errlen) {
        snprintf(err, errlen, fs->pid > 0 ? "fork server %d has gone" : "no fork server", (int)fs->pid);
        forkserver_stop(fs);
        return -EPIPE;
}

int forkserver_fork(forkserver *fs, const char *name, const struct iovec *iov, size_t niov, const int *fds, size_t nfds,
                    pid_t *pid, char *err, size_t errlen) {
        request_head head = { 0 };
        struct iovec parts[1 + FORKSERVER_MAX_IOV] = { { .iov_base = &head, .iov_len = sizeof(head) } };
        fd_control control = { 0 };
        struct msghdr mh = { .msg_iov = parts, .msg_iovlen = 1 + niov };
        size_t len = 0;
        int32_t reply;
        ssize_t n;

        for (size_t i = 0; i < niov && i < FORKSERVER_MAX_IOV; i++) {
                parts[1 + i] = iov[i];
                len += iov[i].iov_len;
        }
        if (len > FORKSERVER_MAX_MSG) {
                snprintf(err, errlen, "fork server: a request of %zu bytes, more than %d", len, FORKSERVER_MAX_MSG);
                return -EMSGSIZE;
        }
        if (len == 0 || niov > FORKSERVER_MAX_IOV || nfds > FORKSERVER_MAX_FDS) {
                snprintf(err, errlen, "fork server: a request of %zu bytes and %zu descriptors", len, nfds);
                return -EINVAL;
        }
        if (fs->pid <= 0)
                return server_gone(fs, err, errlen);
        snprintf(head.name, sizeof(head.name), "%s", name);
        if (nfds > 0) {
                mh.msg_control = control.space;
                mh.msg_controllen = CMSG_SPACE(sizeof(int) * nfds);
                struct cmsghdr *c = CMSG_FIRSTHDR(&mh);

                c->cmsg_level = SOL_SOCKET;
                c->cmsg_type = SCM_RIGHTS;
                c->cmsg_len = CMSG_LEN(sizeof(int) * nfds);
                memcpy(CMSG_DATA(c), fds, sizeof(int) * nfds);
        }
        do
                n = sendmsg(fs->fd, &mh, MSG_NOSIGNAL);
        while (n < 0 && errno == EINTR);
        if (n < 0 && (errno == EPIPE || errno == ECONNRESET))
                return server_gone(fs, err, errlen);
        if (n < 0) {
                int e = errno;

                snprintf(err, errlen, "send to fork server %d: %s", (int)fs->pid, strerror(e));
                return -e;
        }
        do
                n = recv(fs->fd, &reply, sizeof(reply), 0);
        while (n < 0 && errno == EINTR);
        if (n != (ssize_t)sizeof(reply))
                return server_gone(fs, err, errlen);
        if (reply < 0) {
                snprintf(err, errlen, "fork server %d: fork: %s", (int)fs->pid, strerror(-reply));
                return reply;
        }
        *pid = reply;
        return 0;
}

void forkserver_stop(forkserver *fs) {
        if (fs->pid <= 0) /* none started: fd is no descriptor of its (0 in a zeroed struct) */
                return;
        close(fs->fd); /* end of file: the server exits */
        while (waitpid(fs->pid, NULL, 0) < 0 && errno == EINTR)
                ;
        *fs = (forkserver){ .pid = 0, .fd = -1 };
}
