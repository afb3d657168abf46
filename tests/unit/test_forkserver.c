/* test_forkserver.c - children forked by a fork server (agent/forkserver.h): ours to reap, named
 * from their start, with the message and descriptors sent, the server's memory as it was at its
 * start, none of our descriptors in the server, and our own pages left unshared. */
#include "check_main.h"
#include "forkserver.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

/* What a child reports on the descriptor it was sent. */
typedef struct child_report {
        pid_t ppid;
        char comm[16];
        int ctx_value;
        char msg[64];
        size_t nfds;
} child_report;

/* A child of the server: tells who its parent is, its name, what it sees of ctx and its
 * message, then exits with the message's first byte. */
static void report_child(void *ctx, const void *msg, size_t len, const int *fds, size_t nfds) {
        child_report rep = { .ppid = getppid(), .ctx_value = *(int *)ctx, .nfds = nfds };

        (void)prctl(PR_GET_NAME, rep.comm);
        memcpy(rep.msg, msg, len < sizeof(rep.msg) - 1 ? len : sizeof(rep.msg) - 1);
        if (nfds < 1 || write(fds[0], &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
                _exit(99);
        _exit(((const char *)msg)[0]);
}

static int ctx_value;

/* Have fs fork a child named name with msg, its report coming on a fresh pipe; the child's
 * pid, its report in *rep. */
static pid_t fork_reporting(forkserver *fs, const char *name, const char *msg, child_report *rep) {
        struct iovec iov = { .iov_base = (void *)msg, .iov_len = strlen(msg) };
        char err[256];
        int p[2];
        pid_t pid = 0;

        ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
        int r = forkserver_fork(fs, name, &iov, 1, &p[1], 1, &pid, err, sizeof(err));
        ck_assert_msg(r == 0, "forkserver_fork: %s", err);
        close(p[1]); /* the server closed its copy: end of file once the child has gone */
        ck_assert_int_eq(read(p[0], rep, sizeof(*rep)), sizeof(*rep));
        close(p[0]);
        return pid;
}

START_TEST(children_are_ours_named_and_given_their_message) {
        forkserver fs;
        child_report rep;
        char err[256];
        int status;

        ctx_value = 1;
        ck_assert_msg(forkserver_start(&fs, "test-forker", report_child, &ctx_value, err, sizeof(err)) == 0, "%s", err);
        ctx_value = 2; /* after the start: not the server's */
        pid_t pid = fork_reporting(&fs, "test-child", "A first", &rep);
        ck_assert_int_eq(rep.ppid, getpid());
        ck_assert_str_eq(rep.comm, "test-child");
        ck_assert_str_eq(rep.msg, "A first");
        ck_assert_int_eq(rep.ctx_value, 1);
        ck_assert_uint_eq(rep.nfds, 1);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid); /* ours to reap */
        ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 'A');

        /* Another, to a server that carries on; its own name is kept between the two. */
        char comm[64] = "", path[64];
        snprintf(path, sizeof(path), "/proc/%d/comm", (int)fs.pid);
        FILE *f = fopen(path, "r");
        ck_assert_ptr_nonnull(f);
        ck_assert_ptr_nonnull(fgets(comm, sizeof(comm), f));
        fclose(f);
        ck_assert_str_eq(comm, "test-forker\n");
        pid = fork_reporting(&fs, "test-child2", "B", &rep);
        ck_assert_str_eq(rep.comm, "test-child2");
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_int_eq(WEXITSTATUS(status), 'B');
        forkserver_stop(&fs);
        ck_assert_int_eq(fs.pid, 0);
}
END_TEST

/* The server keeps none of our descriptors: a pipe's write end we close is its last. */
START_TEST(the_server_holds_none_of_our_descriptors) {
        forkserver fs;
        char err[256], c;
        int p[2];

        ck_assert_int_eq(pipe(p), 0); /* not close-on-exec: a fork's child would keep it */
        ck_assert_msg(forkserver_start(&fs, "test-forker", report_child, &ctx_value, err, sizeof(err)) == 0, "%s", err);
        close(p[1]);
        ck_assert_int_eq(fcntl(p[0], F_SETFL, O_NONBLOCK), 0);
        /* Once the server has closed its copies, end of file; before, EAGAIN. */
        for (int i = 0; i < 2000 && read(p[0], &c, 1) < 0 && errno == EAGAIN; i++)
                usleep(1000);
        ck_assert_int_eq(read(p[0], &c, 1), 0);
        close(p[0]);
        forkserver_stop(&fs);
}
END_TEST

/* A server gone (killed) says so, and is reaped; a request too long is refused unsent. */
START_TEST(a_server_gone_is_said_and_reaped) {
        struct iovec iov = { .iov_base = "x", .iov_len = 1 };
        forkserver fs;
        char err[256];
        pid_t pid = 0, server;

        ck_assert_msg(forkserver_start(&fs, "test-forker", report_child, &ctx_value, err, sizeof(err)) == 0, "%s", err);
        char *big = calloc(1, FORKSERVER_MAX_MSG + 1);
        ck_assert_ptr_nonnull(big);
        struct iovec too_long = { .iov_base = big, .iov_len = FORKSERVER_MAX_MSG + 1 };
        ck_assert_int_eq(forkserver_fork(&fs, "c", &too_long, 1, NULL, 0, &pid, err, sizeof(err)), -EMSGSIZE);
        free(big);
        server = fs.pid;
        ck_assert_int_eq(kill(server, SIGKILL), 0);
        ck_assert_int_eq(forkserver_fork(&fs, "c", &iov, 1, NULL, 0, &pid, err, sizeof(err)), -EPIPE);
        ck_assert_int_eq(fs.pid, 0);
        ck_assert_int_eq(waitpid(server, NULL, WNOHANG), -1); /* reaped already */
        ck_assert_int_eq(errno, ECHILD);
        ck_assert_int_eq(forkserver_fork(&fs, "c", &iov, 1, NULL, 0, &pid, err, sizeof(err)), -EPIPE);
        forkserver_stop(&fs); /* a no-op now */
}
END_TEST

/* The point of it: after a child forked by the server, writing our own pages takes no fault;
 * after a fork of ours, each page written faults (copy on write). Page counts, not times. */
static long minor_faults(void) {
        struct rusage ru;

        ck_assert_int_eq(getrusage(RUSAGE_SELF, &ru), 0);
        return ru.ru_minflt;
}

static long faults_writing(char *pages, size_t n, size_t page) {
        long before = minor_faults();

        for (size_t i = 0; i < n; i++)
                pages[i * page]++;
        return minor_faults() - before;
}

START_TEST(our_pages_stay_ours_after_a_served_fork) {
        const size_t page = (size_t)sysconf(_SC_PAGESIZE), n = 256;
        forkserver fs;
        child_report rep;
        char err[256];
        int status;

        ck_assert_msg(forkserver_start(&fs, "test-forker", report_child, &ctx_value, err, sizeof(err)) == 0, "%s", err);
        /* Mapped after the server's start, and every page touched: ours alone. */
        char *pages = mmap(NULL, n * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
        ck_assert_ptr_ne(pages, MAP_FAILED);
        ck_assert_int_eq(madvise(pages, n * page, MADV_NOHUGEPAGE), 0);
        memset(pages, 1, n * page);

        pid_t pid = fork_reporting(&fs, "test-child", "C", &rep);
        long served = faults_writing(pages, n, page);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);

        /* The same after a fork of our own, its child waiting until we have written. */
        int p[2];
        ck_assert_int_eq(pipe(p), 0);
        if ((pid = fork()) == 0) {
                char c;
                close(p[1]);
                _exit(read(p[0], &c, 1) < 0);
        }
        ck_assert_int_gt(pid, 0);
        close(p[0]);
        long own = faults_writing(pages, n, page);
        close(p[1]);
        ck_assert_int_eq(waitpid(pid, &status, 0), pid);
        ck_assert_msg(own >= (long)n, "a fork of ours: %ld faults writing %zu pages", own, n);
        ck_assert_msg(served < (long)n / 8, "a served fork: %ld faults writing %zu pages (our fork: %ld)", served, n,
                      own);
        munmap(pages, n * page);
        forkserver_stop(&fs);
}
END_TEST

static Suite *forkserver_suite(void) {
        Suite *s = suite_create("forkserver");
        TCase *tc = tcase_create("core");

        tcase_add_test(tc, children_are_ours_named_and_given_their_message);
        tcase_add_test(tc, the_server_holds_none_of_our_descriptors);
        tcase_add_test(tc, a_server_gone_is_said_and_reaped);
        tcase_add_test(tc, our_pages_stay_ours_after_a_served_fork);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(forkserver_suite)
