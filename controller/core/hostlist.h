/* hostlist.h - sets of hosts by address, from the config's lists of names and addresses
 * (submit_hosts, trusted_root_hosts: remote.h). Addresses are kept as IPv6, IPv4 ones mapped
 * (::ffff:a.b.c.d), so that one comparison serves both families. */
#pragma once
#include <netinet/in.h>
#include <stdbool.h>
#include <stddef.h>
#include <sys/socket.h>

typedef struct hostlist {
        struct in6_addr *addrs;
        size_t n;
} hostlist;

/* Add every address each word of list resolves to (words separated by spaces, tabs or commas;
 * NULL or empty: none). Names go through getaddrinfo now, once. Returns 0, or -EINVAL with
 * "key: cannot resolve 'word': reason" in err, or -ENOMEM; h keeps what was added before. */
int hostlist_parse(hostlist *h, const char *key, const char *list, char *err, size_t errlen);
/* Whether h holds a. */
bool hostlist_has(const hostlist *h, const struct in6_addr *a);
/* Free h's addresses (h emptied). */
void hostlist_free(hostlist *h);
/* sa's address as IPv6 (IPv4 mapped) into *out. Returns false for another family. */
bool hostlist_addr_of(const struct sockaddr *sa, struct in6_addr *out);
/* Whether a is a loopback address: ::1 or 127.0.0.0/8. */
bool hostlist_is_loopback(const struct in6_addr *a);
/* a as text ("10.0.0.9", "fe80::1") into buf. */
void hostlist_addr_text(const struct in6_addr *a, char *buf, size_t len);
