/* config.h - "key = value" configuration files, with # comments and [section] headers.
 *
 * Keys are read as "section.key" ("key" outside any section). Unknown keys are the caller's
 * to reject with config_check_keys, so a typo is an error and not a silent default. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct config_entry {
        char *key;   /* "section.key" */
        char *value; /* trimmed; surrounding double quotes removed */
        int line;
} config_entry;

typedef struct config {
        config_entry *entries;
        size_t n;
        char *path;
} config;

/* Read and parse path into cfg. Returns 0, -errno when it cannot be read, or -EINVAL with
 * "path:line: reason" in err for a malformed line or a duplicate key. */
int config_load(const char *path, config *cfg, char *err, size_t errlen);
/* The value of key, or NULL. */
const char *config_get(const config *cfg, const char *key);
/* Typed getters: 0 and *out set, -ENOENT when absent (out untouched), -EINVAL with a message
 * naming path:line:key otherwise. Sizes and CPUs use units.h syntax. */
int config_get_size(const config *cfg, const char *key, int64_t *out, char *err, size_t errlen);
/* A memory size as units_parse_mem reads it: a bare number is MiB, as in Slurm; at least 1M. */
int config_get_mem(const config *cfg, const char *key, int64_t *out, char *err, size_t errlen);
int config_get_cpus(const config *cfg, const char *key, int64_t *out, char *err, size_t errlen);
int config_get_uint(const config *cfg, const char *key, int64_t max, int64_t *out, char *err, size_t errlen);
/* yes/true/on/1 or no/false/off/0. */
int config_get_bool(const config *cfg, const char *key, bool *out, char *err, size_t errlen);
/* Reject keys not in allowed (NULL-terminated; "section.*" allows any key of that section).
 * Returns 0 or -EINVAL with a message. */
int config_check_keys(const config *cfg, const char *const *allowed, char *err, size_t errlen);
/* Free everything config_load allocated. */
void config_free(config *cfg);
