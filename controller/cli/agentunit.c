/* agentunit.c - see agentunit.h. */
#include "agentunit.h"
#include <stdint.h>
#include <stdio.h>

void agent_unit_name(char *out, size_t len, const char *dir, const char *name) {
        uint32_t h = 2166136261u; /* FNV-1a: short, stable across runs and hosts */

        for (const unsigned char *p = (const unsigned char *)dir; *p; p++)
                h = (h ^ *p) * 16777619u;
        snprintf(out, len, "colony-%08x-%s.scope", (unsigned)h, name);
}
