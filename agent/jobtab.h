/* jobtab.h - the agent's jobs by id: an idmap (idmap.h) for the O(1) lookup by id, and the jobs
 * linked newest first (agent_job's prev/next) for the walks of the table, in which a caller may
 * remove the job it is on after taking its next. The jobs are the caller's; a zeroed jobtab is
 * empty. No I/O, no event loop: tests/unit/test_jobtab.c links it alone. */
#pragma once
#include "idmap.h"
#include <stddef.h>
#include <stdint.h>

struct agent_job;

typedef struct jobtab {
        idmap ids;
        struct agent_job *head; /* the newest */
} jobtab;

/* Make room for one more job, so that the next jobtab_insert cannot fail for memory. Returns 0
 * or -ENOMEM. */
int jobtab_reserve(jobtab *t);
/* Add j (its in_table set) at the head. Returns 0, -EEXIST when t holds its id already (t
 * unchanged), or -ENOMEM. */
int jobtab_insert(jobtab *t, struct agent_job *j);
/* The job of that id, or NULL. O(1). */
struct agent_job *jobtab_find(const jobtab *t, uint64_t id);
/* Unlink j (in_table cleared), which t holds. */
void jobtab_remove(jobtab *t, struct agent_job *j);
/* The newest job, or NULL when t is empty; agent_job's next is the one before it. */
struct agent_job *jobtab_first(const jobtab *t);
/* How many jobs t holds. */
size_t jobtab_count(const jobtab *t);
/* Free t's memory (not the jobs); t is empty after. */
void jobtab_free(jobtab *t);
