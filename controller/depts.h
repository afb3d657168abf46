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
 * A job's --group names one of them; agents give each level of its cgroup tree the weight,
 * so the kernel divides contended CPU between departments by their weights. */
#pragma once
#include "config.h"
#include "job.h"
#include <stdbool.h>
#include <stddef.h>

#define DEPT_WEIGHT_MAX 10000.0

typedef struct dept {
        char *path;    /* "physics/astro" */
        double weight; /* > 0; relative to the siblings, 1 is a default share */
} dept;

typedef struct depts {
        dept *v;
        size_t n;
} depts;

/* Read the [departments] section of cfg into out (empty when there is none). Every path must
 * be a valid group (job_group_ok) whose parent is configured too, every
 * weight a number in (0, DEPT_WEIGHT_MAX]. Returns 0, or -EINVAL with "path:line: reason" in
 * err, or -ENOMEM. */
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
/* Free what depts_from_config allocated. */
void depts_free(depts *d);
