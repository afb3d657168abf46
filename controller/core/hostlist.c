/* hostlist.c - sets of hosts by address (see hostlist.h). */
#include "hostlist.h"
#include <arpa/inet.h>
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

bool hostlist_addr_of(const struct sockaddr *sa, struct in6_addr *out) {
        if (sa->sa_family == AF_INET6) {
                *out = ((const struct sockaddr_in6 *)sa)->sin6_addr;
                return true;
        }
        if (sa->sa_family != AF_INET)
                return false;
        memset(out, 0, sizeof(*out));
        out->s6_addr[10] = out->s6_addr[11] = 0xff;
        memcpy(&out->s6_addr[12], &((const struct sockaddr_in *)sa)->sin_addr, 4);
        return true;
}

bool hostlist_has(const hostlist *h, const struct in6_addr *a) {
        for (size_t i = 0; i < h->n; i++)
                if (memcmp(&h->addrs[i], a, sizeof(*a)) == 0)
                        return true;
        return false;
}

bool hostlist_is_loopback(const struct in6_addr *a) {
        return IN6_IS_ADDR_LOOPBACK(a) || (IN6_IS_ADDR_V4MAPPED(a) && a->s6_addr[12] == 127);
}

void hostlist_addr_text(const struct in6_addr *a, char *buf, size_t len) {
        if (IN6_IS_ADDR_V4MAPPED(a))
                inet_ntop(AF_INET, &a->s6_addr[12], buf, (socklen_t)len);
        else
                inet_ntop(AF_INET6, a, buf, (socklen_t)len);
}

/* Add every address name resolves to. Returns 0 or -errno with err set. */
static int add_name(hostlist *h, const char *key, const char *name, char *err, size_t errlen) {
        struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *res = NULL;
        int g = getaddrinfo(name, NULL, &hints, &res);
        if (g != 0) {
                snprintf(err, errlen, "%s: cannot resolve '%s': %s", key, name, gai_strerror(g));
                return -EINVAL;
        }
        int r = 0;
        for (struct addrinfo *ai = res; ai && r == 0; ai = ai->ai_next) {
                struct in6_addr a;
                if (!hostlist_addr_of(ai->ai_addr, &a) || hostlist_has(h, &a))
                        continue;
                struct in6_addr *grown = realloc(h->addrs, (h->n + 1) * sizeof(*grown));
                if (!grown) {
                        snprintf(err, errlen, "out of memory");
                        r = -ENOMEM;
                        break;
                }
                h->addrs = grown;
                h->addrs[h->n++] = a;
        }
        freeaddrinfo(res);
        return r;
}

int hostlist_parse(hostlist *h, const char *key, const char *list, char *err, size_t errlen) {
        char *copy = list ? strdup(list) : NULL, *save = NULL;
        int r = list && !copy ? -ENOMEM : 0;
        for (char *w = copy ? strtok_r(copy, " ,\t", &save) : NULL; w && r == 0; w = strtok_r(NULL, " ,\t", &save))
                r = add_name(h, key, w, err, errlen);
        if (r == -ENOMEM)
                snprintf(err, errlen, "out of memory");
        free(copy);
        return r;
}

void hostlist_free(hostlist *h) {
        free(h->addrs);
        *h = (hostlist){ 0 };
}
