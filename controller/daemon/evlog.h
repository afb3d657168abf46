/* evlog.h - the controller's log line of a transition the core reports (a ctl_event): the core
 * logs nothing but its errors, so these lines, which users and tests grep, are written here.
 *
 *   job=7 node=lab3 state=running reason=placed policy=first-fit attempt=1
 *   node=lab3 state=not-responding reason=silent for 9000 ms: 2 running kept for up to 60000 ms
 *
 * Pure but for evlog_write, which hands the line to log.c. */
#pragma once
#include "state.h"
#include <stddef.h>

/* Write e's line into buf (cut at len), the node it names looked up in st. Returns the line's
 * syslog priority (LOG_WARNING for a node lost or silent, else LOG_INFO), or -ENOENT when e is
 * of no kind known here (buf is then empty). */
int evlog_format(ctl_state *st, const ctl_event *e, char *buf, size_t len);
/* Log e's line (nothing for a kind not known here). */
void evlog_write(ctl_state *st, const ctl_event *e);
