/* adopt.h - taking over what a previous agent left: jobs whose shepherd still runs, reports
 * not yet acknowledged, job cgroups no record claims (agent_adopt, agent_clear_leftovers in
 * agent.h). */
#pragma once
#include "agent-internal.h"

/* Adopted jobs that no pidfd watches: end those whose shepherd has gone. */
void adopt_poll(agent *a);
