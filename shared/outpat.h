/* outpat.h - the %-patterns of a job's output file names, as Slurm's --output takes them:
 * %j job id, %A its array's first job id (the job id outside an array), %a its index in the
 * array (0 outside one), %u user, %x job name, %N node, %% a '%'. Checked at submit, expanded
 * by the agent at launch, where the node is known. */
#pragma once
#include <stddef.h>
#include <stdint.h>

typedef struct outpat_vars {
        uint64_t id, array_first; /* array_first 0: not in an array */
        uint32_t array_index;
        const char *user, *name, *node;
} outpat_vars;

/* Whether every '%' of pattern starts one of the patterns above. Returns 0, or -EINVAL with
 * the reason ("unknown pattern %q in ...") in err. */
int outpat_check(const char *pattern, char *err, size_t errlen);
/* pattern with its %-patterns replaced from v (a '/' in a name or node becomes '_', so that a
 * name cannot reach another directory), malloc'ed into *out. Returns 0, -EINVAL (an unknown
 * pattern) or -ENOMEM. */
int outpat_expand(const char *pattern, const outpat_vars *v, char **out);
