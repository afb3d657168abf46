/* alpha_cli.h - colony measure's side of the controller's interference matrix: upload it,
 * print a stored version as a table, draw it as a heatmap (docs/protocol.md, alpha_put and
 * alpha_get). */
#pragma once
#include "cli.h"
#include <cjson/cJSON.h>
#include <stdint.h>

/* Send the matrix in measured ("types", "alpha", and "ci95_low"/"ci95_high" when present; other
 * fields are left out) to the controller at sock. Returns 0 with *version, or EXIT_FAIL with
 * the controller's one-line reason printed. */
int alpha_cli_upload(const cli *c, const char *sock, const cJSON *measured, uint64_t *version);
/* Read a JSON file (colony measure --json's output) and upload it; print the version stored.
 * Returns 0 or EXIT_FAIL (printed). */
int alpha_cli_upload_file(const cli *c, const char *sock, const char *path);
/* Fetch version (0: the latest) and print it: a table, the reply as JSON with --json, and a
 * heatmap drawn by gnuplot into png when not NULL. Returns 0 or EXIT_FAIL (printed). */
int alpha_cli_show(const cli *c, const char *sock, uint64_t version, const char *png);
