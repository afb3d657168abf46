/* proto-poke - send one hand-made frame to a colony socket and print the reply, for tests of
 * what the controller does with bad input.
 *
 *   proto-poke SOCKET json TEXT     frame TEXT as it is (it need not be valid JSON)
 *   proto-poke SOCKET header N      send only a length header announcing N bytes
 *
 * Prints the reply as one JSON line. Exit 0 with a reply, 3 when the peer closed without one.
 * SOCKET may be HOST:PORT, an agent listener: then every message until the controller closes
 * is printed, the challenge it speaks first included. */
#include "net.h"
#include "proto.h"
#include <arpa/inet.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int write_all(int fd, const void *buf, size_t len) {
        const char *p = buf;
        while (len > 0) {
                ssize_t n = write(fd, p, len);
                if (n < 0)
                        return -1;
                p += n;
                len -= (size_t)n;
        }
        return 0;
}

int main(int argc, char **argv) {
        if (argc != 4) {
                fprintf(stderr, "usage: proto-poke SOCKET json TEXT | SOCKET header N\n");
                return 2;
        }
        bool tcp = !strchr(argv[1], '/') && strchr(argv[1], ':');
        int fd = tcp ? net_connect_tcp(argv[1], 2000) : net_connect_unix(argv[1]);
        if (fd < 0) {
                fprintf(stderr, "proto-poke: connect %s: %s\n", argv[1], strerror(-fd));
                return 1;
        }
        uint32_t len =
                strcmp(argv[2], "header") == 0 ? (uint32_t)strtoul(argv[3], NULL, 10) : (uint32_t)strlen(argv[3]);
        uint32_t be = htonl(len);
        if (write_all(fd, &be, sizeof(be)) < 0 || (strcmp(argv[2], "json") == 0 && write_all(fd, argv[3], len) < 0)) {
                perror("proto-poke: write");
                return 1;
        }
        cJSON *reply = NULL;
        char err[PROTO_ERRLEN] = "";
        int replies = 0;
        while ((replies == 0 || tcp) && proto_recv(fd, &reply, err) == 0) {
                char *text = proto_print(reply);
                puts(text);
                free(text);
                cJSON_Delete(reply);
                replies++;
        }
        close(fd);
        if (replies == 0)
                fprintf(stderr, "proto-poke: no reply%s%s\n", *err ? ": " : "", err);
        return replies ? 0 : 3;
}
