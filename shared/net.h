/* net.h - socket set-up shared by the daemons and the CLI. */
#pragma once
#include <stdint.h>
#include <sys/types.h>

/* Create, bind and listen on a Unix stream socket at path (a stale socket file is replaced;
 * -EADDRINUSE while a process still listens there, -EEXIST for a file that is no socket),
 * non-blocking and close-on-exec, with the given file mode. Returns fd or -errno. */
int net_listen_unix(const char *path, mode_t mode);
/* Connect (blocking) to a Unix stream socket. Returns fd (close-on-exec) or -errno. */
int net_connect_unix(const char *path);
/* Listen on "host:port" (IPv4 or [IPv6]; port 0 picks one), non-blocking, SO_REUSEADDR, with
 * TCP_NODELAY for the connections it accepts.
 * Returns fd or -errno; *bound_port gets the actual port. */
int net_listen_tcp(const char *hostport, uint16_t *bound_port);
/* Connect (blocking, with a timeout in milliseconds for each address host resolves to) to
 * "host:port", with TCP_NODELAY. Returns fd (close-on-exec) or -errno. */
int net_connect_tcp(const char *hostport, int timeout_ms);
/* Split "host:port" / "[v6]:port" into host and port. Returns 0 or -EINVAL. */
int net_split_hostport(const char *hostport, char *host, size_t hostlen, uint16_t *port);
/* Wait until fd is readable, up to timeout_ms (< 0: forever). Returns 0, -ETIMEDOUT or -EINTR.
 * A client waiting for a reply on a Unix stream socket waits here before reading: asleep in
 * read() it would also be woken, for nothing, each time the peer consumes what it sent (the
 * socket's write space), a wake-up the peer pays for on every request. */
int net_wait_readable(int fd, int timeout_ms);
