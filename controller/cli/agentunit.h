/* agentunit.h - the name of the transient systemd scope an agent of a local cluster runs in
 * where the cgroup `colony up` runs in cannot be its own (colony-agent --scope). */
#pragma once
#include <stddef.h>

/* "colony-<8 hex digits of dir's hash>-<name>.scope" into out: one per cluster directory and
 * agent, so that two clusters' agents of the same name never share a unit. */
void agent_unit_name(char *out, size_t len, const char *dir, const char *name);
