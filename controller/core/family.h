/* family.h - job families: the jobs and arrays connected by dependencies, in either direction
 * (a MapReduce job's array of mappers and the array of reducers that waits on it), shown as one
 * in queue, show and history with the family's flow time (docs/protocol.md, "Job families").
 *
 * The index is a union-find over units (a plain job by its id, an array by its first id) that a
 * dependency links: each set is a family, named by its smallest unit id, and its units form a
 * ring so that a family is walked in O(its units). Units are kept sorted by id (ids grow, so an
 * insertion appends but for a dependency on an old job that was in no family yet).
 *
 * Each unit keeps what its members are at (how many in each state, the earliest submit, the
 * latest end, the longest run), counted once by walking its jobs when a request first asks
 * (O(its members): after a restore, every job is back by then), then kept by the transitions and
 * the jobs made since (O(1) each): a family's answer is O(its units), whatever its size. */
#pragma once
#include "job.h"
#include <stddef.h>
#include <stdint.h>

typedef struct famidx_unit {
        uint64_t id;     /* a plain job's id, or an array's first id */
        uint64_t parent; /* the next unit towards the set's root; its own id at the root */
        uint64_t next;   /* the next unit of its family's ring */
        uint64_t min;    /* at the root: the family's smallest unit id, which names it */
        uint32_t rank;
        bool counted;          /* the fields below are kept; until then, nothing is */
        uint32_t members, ran; /* ran: members that ended after they started */
        uint32_t counts[_JOB_STATE_MAX];
        int64_t submit_usec, end_usec, run_usec; /* earliest submit, latest end, longest run */
} famidx_unit;

typedef struct famidx {
        famidx_unit *v; /* sorted by id */
        size_t n, cap;
} famidx;

struct ctl_state;
struct cJSON;

/* Link j's unit with the units its dependency names (already checked at submit), once per
 * unit: an array's later tasks share its first task's dependency and are skipped. Ids no longer
 * known are skipped. Returns 0 or -ENOMEM (j is then left out of the families). */
int ctl_family_link(struct ctl_state *st, const job *j);
/* Count in its unit job j just made (submitted), pending: a unit counted before it existed. */
void ctl_family_made(struct ctl_state *st, const job *j);
/* Job j went from state was to j->state (placed, requeued, ended: after its times are set). */
void ctl_family_moved(struct ctl_state *st, const job *j, job_state was);
/* n tasks of array (its id) not made yet were cancelled with it (arrays.h). */
void ctl_family_unmade_ended(struct ctl_state *st, uint64_t array, size_t n);
/* The id of j's family (its smallest unit id), or 0 when no dependency links j to another job.
 * O(log units) per step to the root. */
uint64_t ctl_family_id(struct ctl_state *st, const job *j);
/* j's family as JSON into *out (NULL when j has none; the caller owns it): {"id", "members",
 * "counts" (per state name, non-zero ones), "arrival_usec" (earliest submit), "ended", "end_usec"
 * (the last member's end, 0 until all ended), "flow_usec" (end - arrival, or now - arrival so
 * far), "unlimited_flow_usec" (when every member ran: the longest path over the dependencies of
 * the members' run times, from each unit's submit), "units" (at most FAMILY_UNITS_SHOWN, by id:
 * {"id", "name", "user", "array", "members", "counts", "dependency", "submit_usec",
 * "end_usec"}), "units_left_off" (when more)}. Returns 0 or -ENOMEM. O(units log units), and the
 * first time a unit is asked about, O(its members). */
int ctl_family_json(struct ctl_state *st, const job *j, int64_t now, struct cJSON **out);
/* Units listed in a family's JSON at most: a family of arrays has a few; a chain of 100,000
 * plain jobs would make a reply of megabytes. */
#define FAMILY_UNITS_SHOWN 64
/* Free the index. */
void famidx_free(famidx *f);
