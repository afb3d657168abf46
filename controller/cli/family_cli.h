/* family_cli.h - job families in the CLI (controller/core/family.h has what one is): show's
 * family section, and queue's and history's --families, one line per family. */
#pragma once
#include "cli.h"
#include <cjson/cJSON.h>

/* Print the family section of a show reply (nothing when its job has no "family"). */
void family_cli_show(const cJSON *reply);
/* The families of the jobs of a listing reply (their records' "family" ids), each asked of the
 * controller (the family request, over one connection), printed one line per family in id order,
 * or as {"families": [...]} with --json. Returns 0 or EXIT_FAIL after printing why. */
int family_cli_list(const cli *c, const cJSON *reply);
