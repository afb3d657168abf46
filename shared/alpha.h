/* alpha.h - the interference matrix the controller stores (`colony measure` uploads it,
 * `policy = coloc` places by it): the types, alpha, and the 95% intervals of each entry.
 *
 * alpha[a * n + b] is how much a unit of type a's load slows a job of type b (row a, column b),
 * as in policies/coloc.h. On the wire and in the store it is one JSON object:
 *   {"types": ["cpu", "io"], "alpha": [[1, 0.1], [0.2, 1]],
 *    "ci95_low": [[...]], "ci95_high": [[...]],      optional, both or neither
 *    "version": 3, "time_usec": 1700000000000000}     set by the controller when stored */
#pragma once
#include "proto.h"
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

#define ALPHA_MAX_TYPES 64
#define ALPHA_MAX_NAME  64

typedef struct alpha_matrix {
        size_t n;
        char **types;             /* n names, distinct, [A-Za-z0-9_.-]{1,64} */
        double *alpha;            /* n x n, finite, >= 0 */
        double *ci_low, *ci_high; /* n x n, finite, low <= high; NULL when not measured */
        uint64_t version;         /* 0 until the controller stores it */
        int64_t time_usec;        /* when it was stored (CLOCK_REALTIME) */
} alpha_matrix;

/* Read and check a matrix from o's "types", "alpha", "ci95_low", "ci95_high" (and "version",
 * "time_usec" when present). Fills out (alpha_free) on success; on failure out is left zeroed
 * and err holds one line naming what is wrong ("alpha[1][0]: -0.5 is negative"). Returns 0,
 * -EINVAL or -ENOMEM. */
int alpha_from_json(const cJSON *o, alpha_matrix *out, char err[PROTO_ERRLEN]);
/* Add m's fields to o (the same names). Returns 0 or -ENOMEM. */
int alpha_to_json(const alpha_matrix *m, cJSON *o);
/* The index of type name in m, or -1. */
long alpha_type_index(const alpha_matrix *m, const char *name);
/* Free m's arrays and zero it (a zeroed m is fine). */
void alpha_free(alpha_matrix *m);
