/* forkserver.h - a small process, forked once while its parent is small, that forks children
 * for it, so that the parent itself never forks again.
 *
 * Why: each fork of a process makes its writable pages copy-on-write, shared with the child;
 * its next write to each costs a page fault and, its other threads having run on other CPUs, a
 * TLB shootdown across them. The agent forked a standby shepherd a job: `perf record -g` of the
 * agent over a drain of 600 `true` jobs on a PVM guest (fault 14 us, shootdown an IPI through
 * the hypervisor) put 38% of its CPU in those faults and shootdowns (malloc, its consolidation,
 * vfprintf: the loop's own writes), 55 faults a job. A child forked by the fork server instead
 * copies the server's memory, which barely changes, and the agent's stays its own.
 *
 * The children are the parent's (clone with CLONE_PARENT): it reaps them and hears of their
 * ends as of those it forks itself; the server has none. The server holds only its socket (no
 * descriptor of its parent's survives in it: a lock, a listening socket) and /dev/null as its
 * standard ones, and ends when the parent closes its end or dies. A request is a message and
 * up to FORKSERVER_MAX_FDS descriptors; the child runs fn(ctx, message, descriptors) in the
 * server's copy of the parent's memory as it was at forkserver_start. */
#pragma once
#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

#define FORKSERVER_MAX_FDS 4
#define FORKSERVER_MAX_IOV 4
/* A shepherd's whole launch request fits, as a standby's pipe takes it (64 KiB). */
#define FORKSERVER_MAX_MSG (64 * 1024)

/* What a child of the server runs; it must not return (it execs or _exits). The descriptors
 * are its own copies, close-on-exec; the server's socket is closed before the call. */
typedef void (*forkserver_child_fn)(void *ctx, const void *msg, size_t len, const int *fds, size_t nfds);

typedef struct forkserver {
        pid_t pid; /* 0: none running */
        int fd;    /* our end of its socket */
} forkserver;

/* Fork the server, named name (ps shows it; 15 characters at most), whose children run fn with
 * ctx. Returns 0, or -errno with the reason in err. */
int forkserver_start(forkserver *fs, const char *name, forkserver_child_fn fn, void *ctx, char *err, size_t errlen);
/* Have the server fork a child named name (its comm from its first instant: whoever finds its
 * pid sees it so named) with the message gathered from iov (niov <= FORKSERVER_MAX_IOV parts, 1 to
 * FORKSERVER_MAX_MSG bytes in all) and copies of fds (nfds <= FORKSERVER_MAX_FDS, ours stay
 * open); waits for its pid, our child. Returns 0 with *pid, or -errno with err: -EMSGSIZE for a
 * message too long (nothing sent), the fork's error, or -EPIPE when the server has gone
 * (stopped and reaped then: fs->pid is 0). */
int forkserver_fork(forkserver *fs, const char *name, const struct iovec *iov, size_t niov, const int *fds, size_t nfds,
                    pid_t *pid, char *err, size_t errlen);
/* End the server (its children live on) and reap it; fs->pid is 0 after. */
void forkserver_stop(forkserver *fs);
