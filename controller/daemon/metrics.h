/* metrics.h - the controller's figures in Prometheus' text exposition format 0.0.4, for
 * /metrics (names and meanings in docs/protocol.md, "HTTP"). */
#pragma once
#include "server.h"
#include <stddef.h>

/* The whole exposition at now (CLOCK_REALTIME usec), NUL-terminated, into *out (caller frees)
 * and its length into *len. O(jobs). Returns 0 or -ENOMEM. */
int metrics_render(const ctl_server *srv, int64_t now, char **out, size_t *len);
