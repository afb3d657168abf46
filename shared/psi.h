/* psi.h - pressure stall information (PSI): how much of the time tasks waited for CPU, memory
 * or I/O, as the kernel reports it per cgroup (v2 cpu.pressure, ...) and per host
 * (/proc/pressure/cpu, ...). See the kernel's Documentation/accounting/psi.rst. */
#pragma once
#include "proto.h"
#include <stdbool.h>
#include <stdint.h>

typedef struct psi_resource {
        double some_avg10;        /* % of the last 10 s in which some task stalled */
        double full_avg10;        /* % in which all non-idle tasks stalled (cpu: 0 before 5.13) */
        uint64_t some_total_usec; /* stall time since the cgroup (or boot) began */
        uint64_t full_total_usec;
} psi_resource;

typedef struct psi_stats {
        bool known; /* false where the kernel gives none (a v1 job cgroup, PSI off) */
        psi_resource cpu, memory, io;
} psi_stats;

/* Parse one pressure file's text ("some avg10=.. avg60=.. avg300=.. total=..\nfull ...") into
 * out; a missing "full" line leaves its fields 0. Returns 0 or -EINVAL. */
int psi_parse(const char *text, psi_resource *out);
/* Add p to obj as "psi": {"cpu": {"some_avg10", "full_avg10", "some_usec", "full_usec"},
 * "memory": ..., "io": ...}; nothing when !p->known. Returns 0 or -ENOMEM. */
int psi_to_json(const psi_stats *p, cJSON *obj);
/* Read obj's "psi" (as psi_to_json writes it) into out; absent leaves out->known false.
 * Returns 0 or -EINVAL with err set. */
int psi_from_json(const cJSON *obj, psi_stats *out, char err[PROTO_ERRLEN]);
