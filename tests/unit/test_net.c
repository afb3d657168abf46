/* test_net.c - socket set-up: TCP links that send small messages at once, on both ends. */
#include "check_main.h"
#include "net.h"
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

static int no_delay_of(int fd) {
        int v = -1;
        socklen_t len = sizeof(v);

        ck_assert_int_eq(getsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &v, &len), 0);
        return v;
}

/* Both ends of the controller-agent link: the agent's connect and the controller's accept. */
START_TEST(tcp_link_sets_no_delay_on_both_ends) {
        uint16_t port = 0;
        char hostport[32];
        int lfd = net_listen_tcp("127.0.0.1:0", &port), cfd, afd;

        ck_assert_int_ge(lfd, 0);
        snprintf(hostport, sizeof(hostport), "127.0.0.1:%u", (unsigned)port);
        cfd = net_connect_tcp(hostport, 5000);
        ck_assert_int_ge(cfd, 0);
        afd = accept(lfd, NULL, NULL); /* the listener is non-blocking; the connect has completed */
        ck_assert_int_ge(afd, 0);
        ck_assert_int_ne(no_delay_of(cfd), 0);
        ck_assert_int_ne(no_delay_of(afd), 0);
        close(afd);
        close(cfd);
        close(lfd);
}
END_TEST

static Suite *net_suite(void) {
        Suite *s = suite_create("net");
        TCase *tc = tcase_create("net");
        tcase_add_test(tc, tcp_link_sets_no_delay_on_both_ends);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(net_suite)
