/* gres.h - Slurm's ways of asking for GPUs, as colony submit and #SBATCH lines take them:
 * --gpus [TYPE:]N and --gres gpu[:TYPE][:N] (N defaults to 1 there, as in Slurm). A type is a
 * requirement on the node (its agent's gpu_type, one of its features): gres_constraint adds it
 * to the job's --constraint. Pure string logic. */
#pragma once
#include <stddef.h>
#include <stdint.h>

#define GRES_TYPE_MAX 64 /* a type name and its NUL */

/* --gpus's value: "2" or "a100:2" into *n and type ("" when none). Returns 0, or -EINVAL for
 * anything else (a count beyond RES_GPUS_MAX included). */
int gres_parse_gpus(const char *arg, int64_t *n, char type[GRES_TYPE_MAX]);
/* --gres's value: "gpu", "gpu:2", "gpu:a100" or "gpu:a100:2" into *n and type ("" when none).
 * Returns 0, -EOPNOTSUPP for a resource other than gpu ("mps:10"), or -EINVAL. */
int gres_parse(const char *arg, int64_t *n, char type[GRES_TYPE_MAX]);
/* The constraint expression (nodesel.h; NULL or "" for none) with type required in each of its
 * alternatives: "ssd|nvme" and "a100" give "ssd&a100|nvme&a100", into buf. Returns 0 or
 * -ENAMETOOLONG. */
int gres_constraint(const char *constraint, const char *type, char *buf, size_t len);
