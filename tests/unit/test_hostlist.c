/* test_hostlist.c - the controller's sets of hosts for submit_hosts and trusted_root_hosts:
 * lists of addresses and names in any separators, IPv4 matched as its mapped IPv6 form,
 * loopback told apart, and an unresolvable name refused with one line naming key and word. */
#include "check_main.h"
#include "hostlist.h"
#include <arpa/inet.h>
#include <errno.h>
#include <string.h>

/* text as the address a peer's sockaddr would give. */
static struct in6_addr peer(const char *text) {
        struct sockaddr_storage ss = { 0 };
        struct in6_addr a;
        if (strchr(text, ':')) {
                struct sockaddr_in6 *s6 = (struct sockaddr_in6 *)&ss;
                s6->sin6_family = AF_INET6;
                ck_assert_int_eq(inet_pton(AF_INET6, text, &s6->sin6_addr), 1);
        } else {
                struct sockaddr_in *s4 = (struct sockaddr_in *)&ss;
                s4->sin_family = AF_INET;
                ck_assert_int_eq(inet_pton(AF_INET, text, &s4->sin_addr), 1);
        }
        ck_assert(hostlist_addr_of((struct sockaddr *)&ss, &a));
        return a;
}

START_TEST(lists_of_addresses_in_any_separators) {
        hostlist h = { 0 };
        char err[256] = "";
        struct in6_addr a;
        ck_assert_int_eq(
                hostlist_parse(&h, "submit_hosts", " 10.0.0.5,10.0.0.6\tfd00::7 ,, 10.0.0.5", err, sizeof(err)), 0);
        ck_assert_uint_eq(h.n, 3); /* 10.0.0.5 once */
        a = peer("10.0.0.5");
        ck_assert(hostlist_has(&h, &a));
        a = peer("::ffff:10.0.0.6"); /* an IPv4 peer on a dual-stack socket */
        ck_assert(hostlist_has(&h, &a));
        a = peer("fd00::7");
        ck_assert(hostlist_has(&h, &a));
        a = peer("10.0.0.7");
        ck_assert(!hostlist_has(&h, &a));
        hostlist_addr_text(&h.addrs[1], err, sizeof(err));
        ck_assert_str_eq(err, "10.0.0.6");
        hostlist_free(&h);
        ck_assert_uint_eq(h.n, 0);
        ck_assert_int_eq(hostlist_parse(&h, "submit_hosts", NULL, err, sizeof(err)), 0);
        ck_assert_int_eq(hostlist_parse(&h, "submit_hosts", "", err, sizeof(err)), 0);
        ck_assert_uint_eq(h.n, 0);
}
END_TEST

START_TEST(names_resolve_and_bad_ones_say_so) {
        hostlist h = { 0 };
        char err[256] = "";
        struct in6_addr a = peer("127.0.0.1");
        ck_assert_int_eq(hostlist_parse(&h, "trusted_root_hosts", "localhost", err, sizeof(err)), 0);
        ck_assert(hostlist_has(&h, &a));
        ck_assert_int_eq(hostlist_parse(&h, "trusted_root_hosts", "10.0.0.1 no-such-host.invalid", err, sizeof(err)),
                         -EINVAL);
        ck_assert_msg(strncmp(err, "trusted_root_hosts: cannot resolve 'no-such-host.invalid': ", 58) == 0, "%s", err);
        a = peer("10.0.0.1"); /* what came before the bad word stays */
        ck_assert(hostlist_has(&h, &a));
        hostlist_free(&h);
}
END_TEST

START_TEST(loopback_of_both_families) {
        struct in6_addr a = peer("127.0.0.1");
        ck_assert(hostlist_is_loopback(&a));
        a = peer("127.9.8.7");
        ck_assert(hostlist_is_loopback(&a));
        a = peer("::1");
        ck_assert(hostlist_is_loopback(&a));
        a = peer("10.0.0.1");
        ck_assert(!hostlist_is_loopback(&a));
        a = peer("::2");
        ck_assert(!hostlist_is_loopback(&a));
        struct sockaddr_un_like {
                sa_family_t family;
        } unix_peer = { AF_UNIX };
        ck_assert(!hostlist_addr_of((struct sockaddr *)&unix_peer, &a));
}
END_TEST

static Suite *hostlist_suite(void) {
        Suite *s = suite_create("hostlist");
        TCase *tc = tcase_create("hostlist");
        tcase_add_test(tc, lists_of_addresses_in_any_separators);
        tcase_add_test(tc, names_resolve_and_bad_ones_say_so);
        tcase_add_test(tc, loopback_of_both_families);
        suite_add_tcase(s, tc);
        return s;
}

COLONY_CHECK_MAIN(hostlist_suite)
