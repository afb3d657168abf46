/* http.h - the controller's read-only HTTP side (libmicrohttpd), off unless
 * controller.http_listen is set: the status page at /, its data at /api/status, and Prometheus
 * metrics at /metrics (docs/protocol.md, "HTTP").
 *
 * libmicrohttpd runs without a thread of its own: its epoll fd is an IO source of the
 * controller's sd-event loop and its timeout a time source, so every request is answered from
 * the loop, reading the state directly, between two events of the state machine. Connections,
 * request headers and idle time are bounded, so a slow or stuck client costs one slot and never
 * the loop. */
#pragma once
#include "server.h"

typedef struct http_server http_server;

/* Listen on hostport ("127.0.0.1:9180"; port 0 picks one, *port tells which) and serve from
 * srv's loop; also starts the utilization sampler. Returns 0 and *out, or -errno (logged). */
int http_start(ctl_server *srv, const char *hostport, uint16_t *port, http_server **out);
/* Stop serving and free h (NULL is fine). */
void http_stop(http_server *h);
