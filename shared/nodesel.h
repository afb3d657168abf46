/* nodesel.h - which nodes a job may run on: node features, --constraint, --nodelist, --exclude.
 *
 * Pure string logic shared by the CLI (to refuse bad input before it is sent), the controller
 * (placement) and the agent (its configured features). Lists are comma-separated names of
 * [A-Za-z0-9_.-]: "ssd,avx512", "node1,node2". A constraint is Slurm's feature expression cut
 * to what a lab uses: terms joined by '|' (either), each a conjunction of features joined by
 * '&' or ',' (all of them): "ssd&avx512", "ssd,gpu|bigmem". No parentheses, no counts. */
#pragma once
#include <stdbool.h>
#include <stddef.h>

/* Longest list or expression accepted (bytes). */
#define NODESEL_MAX 1024

/* Whether list is a non-empty comma-separated list of names. */
bool nodesel_list_ok(const char *list);
/* Whether name is one of list's names; a NULL list has none. */
bool nodesel_list_has(const char *list, const char *name);
/* Whether expr is a valid constraint (see above). */
bool nodesel_expr_ok(const char *expr);
/* Whether a node with features (a list, or NULL: none) satisfies constraint expr (valid). */
bool nodesel_expr_match(const char *expr, const char *features);
/* Whether a node named name with features may take a job with this constraint, nodelist and
 * exclude (each NULL when not given). */
bool nodesel_eligible(const char *constraint, const char *nodelist, const char *exclude, const char *name,
                      const char *features);
