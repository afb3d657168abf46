/* sdscope.h - a transient systemd scope with Delegate=yes for the agent, where the cgroup it
 * was started in is not one it may build its subtree in (a login session's scope on a
 * unified-hierarchy host): what `systemd-run --scope -p Delegate=yes` does, through systemd's
 * D-Bus API. Every function returns 0 or -errno with a one-line reason in err. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* Whether systemd is the init system (sd_booted), so that it can make a scope. */
bool sdscope_available(void);
/* Move this process into a new transient scope unit ("NAME.scope", with description), with
 * Delegate=yes, CollectMode=inactive-or-failed and a stop that SIGKILLs after 10 s, and wait
 * until systemd has done so; the scope ends by itself when its last process does. When unit
 * exists (a dead agent's scope, kept alive by its jobs), join it instead, in its sub-cgroup
 * leaf (the dead agent's own leaf, "/colony-NAME/agent"), so that this agent can adopt the
 * jobs; *joined says which it did. */
int sdscope_enter(const char *unit, const char *description, const char *leaf, bool *joined, char *err, size_t errlen);
/* Stop unit and wait until it is stopped: systemd kills what still runs in it and removes its
 * cgroups. A unit systemd does not know is stopped already: 0. */
int sdscope_stop(const char *unit, char *err, size_t errlen);
