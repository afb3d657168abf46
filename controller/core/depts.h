/* depts.h - the departments a controller is configured with: a tree of group paths
 * ("physics", "physics/astro") with CPU weights relative to their siblings.
 *
 * From the controller's config file:
 *
 *   [departments]
 *   physics = 3
 *   physics/astro = 1
 *   cs = 1
 *
 *   [department_caps]          optional: the most of any resource a subtree may hold
 *   physics = 0.5
 *
 *   [department_users]         optional: who may submit to the subtree (root always may)
 *   physics/astro = alice bob
 *
 *   [department_default_time]  optional: the time limit of a job submitted without --time
 *   physics = 2:00:00
 *
 *   [department_max_time]      optional: the longest --time a job may ask for
 *   physics = 1-0
 *
 * A job's --group names a leaf of them; agents give each level of its cgroup tree the weight,
 * so the kernel divides contended CPU between departments by their weights, and the controller
 * starts jobs in the order fairorder.h gives. */
#pragma once
#include "config.h"
#include "job.h"
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

#define DEPT_WEIGHT_MAX 10000.0

typedef struct dept {
        char *path;    /* "physics/astro" */
        double weight; /* > 0; relative to the siblings, 1 is a default share */
        double cap;    /* (0, 1]: the fraction of the cluster the subtree may hold; 1 = no cap */
        char **users;  /* NULL-terminated user names that may submit here, or NULL: anyone */
        bool leaf;     /* no department lists it as parent */
        int64_t default_time_usec, max_time_usec; /* time limits; 0: the parent's, or the controller's */
} dept;

typedef struct depts {
        dept *v;
        size_t n;
} depts;

/* Read the [departments], [department_caps] and [department_users] sections of cfg into out
 * (empty when there are none). Every path must be a valid group (job_group_ok) whose parent is
 * configured too, every weight a number in (0, DEPT_WEIGHT_MAX]; caps and user lists must name
 * a configured department, caps be in (0, 1], users be user names. Returns 0, or -EINVAL with
 * "path:line: reason" in err, or -ENOMEM; out is empty on failure. */
int depts_from_config(const config *cfg, depts *out, char *err, size_t errlen);
/* True when group is the department path or a group below it ("a/b" is in "a", "ab" is not).
 * group may be NULL (no group: in none). */
bool depts_in(const char *group, const char *path);
/* The department named path, or NULL. */
const dept *depts_find(const depts *d, const char *path);
/* The department above path ("a" for "a/b"), or NULL for a top-level one. */
const dept *depts_parent(const depts *d, const char *path);
/* The weight of each level of group ("a/b": a's, then a/b's) into out[0..max); levels that are
 * not configured get 1. Returns the number of levels, or -E2BIG when more than max. */
long depts_weights(const depts *d, const char *group, double *out, size_t max);
/* Whether user (uid) may submit to group: root always, anyone else when every level of group
 * that has a user list names them. Returns 0, or -EPERM / -EINVAL (not a leaf department) with
 * one line in err. A NULL group (the default department) is open to all. */
int depts_may_submit(const depts *d, const char *group, uid_t uid, const char *user, char *err, size_t errlen);
/* The time limit of a job of group that asked for *limit (0: none given, JOB_TIME_UNLIMITED: no
 * limit), from the deepest department of group that sets each, else the controller's dflt and
 * max (0: none), as Slurm's DefaultTime and MaxTime: none given takes the default, or else the
 * maximum; unlimited takes the maximum. Sets *limit (0: none). Returns 0, or -EINVAL with the
 * reason in err when *limit is over the maximum. */
int depts_time_limit(const depts *d, const char *group, int64_t dflt, int64_t max, int64_t *limit, char *err,
                     size_t errlen);
/* Free what depts_from_config allocated. */
void depts_free(depts *d);
