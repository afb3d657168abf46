/* res.h - resource vectors: what a job asks for and what a machine has.
 *
 * CPU is counted in milli-cores (1000 = one core), memory in bytes, pids in tasks, GPUs in whole
 * devices. A field of 0 in a request means "no limit asked" for pids and "none" for gpus; mcpu
 * and mem are required. */
#pragma once
#include <stdbool.h>
#include <stdint.h>

typedef struct res {
        int64_t mcpu; /* milli-cores */
        int64_t mem;  /* bytes */
        int64_t pids; /* max tasks; 0 = unlimited */
        int64_t gpus; /* whole GPU devices (a pool, like mcpu and mem) */
} res_t;

/* Largest values any request or capacity may hold; beyond them arithmetic could overflow. */
#define RES_MCPU_MAX ((int64_t)1 << 40)
#define RES_MEM_MAX  ((int64_t)1 << 60)
#define RES_PIDS_MAX ((int64_t)1 << 30)
#define RES_GPUS_MAX ((int64_t)1024)

/* a + b, field by field (pids included). */
res_t res_add(res_t a, res_t b);
/* a - b, field by field; may go negative (callers check with res_fits first). */
res_t res_sub(res_t a, res_t b);
/* The least of a and b on cpu, memory and GPUs (pids 0): what fits wherever either fits. */
res_t res_min(res_t a, res_t b);
/* True when req fits in avail on cpu, memory and GPUs (pids are a per-job limit, not a pool). */
bool res_fits(res_t req, res_t avail);
/* True when every field is within [0, *_MAX]. */
bool res_in_range(res_t r);
/* True when a is lexicographically equal to b. */
bool res_equal(res_t a, res_t b);
