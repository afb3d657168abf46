/* config.c - "key = value" files with [section] headers and # comments. */
#include "config.h"
#include "units.h"
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdbool.h>
#include <string.h>

static char *trim(char *s) {
        while (isspace((unsigned char)*s))
                s++;
        char *end = s + strlen(s);
        while (end > s && isspace((unsigned char)end[-1]))
                *--end = '\0';
        return s;
}

static const config_entry *find(const config *cfg, const char *key) {
        for (size_t i = 0; i < cfg->n; i++)
                if (strcmp(cfg->entries[i].key, key) == 0)
                        return &cfg->entries[i];
        return NULL;
}

static int add_entry(config *cfg, const char *section, const char *key, char *value, int line) {
        size_t vlen = strlen(value);
        if (vlen >= 2 && value[0] == '"' && value[vlen - 1] == '"') {
                value[vlen - 1] = '\0';
                value++;
        }
        config_entry *e = realloc(cfg->entries, (cfg->n + 1) * sizeof(*e));
        if (!e)
                return -ENOMEM;
        cfg->entries = e;
        e = &cfg->entries[cfg->n];
        *e = (config_entry){ .line = line };
        if (asprintf(&e->key, "%s%s%s", section, *section ? "." : "", key) < 0) {
                e->key = NULL;
                return -ENOMEM;
        }
        if (!(e->value = strdup(value))) {
                free(e->key);
                return -ENOMEM;
        }
        cfg->n++;
        return 0;
}

/* Parse one line into cfg, tracking the current section. Returns 0, -EINVAL (err set), -ENOMEM. */
static int parse_line(config *cfg, char *text, char *section, size_t section_len, int line, char *err, size_t errlen) {
        char *s = trim(text);
        if (*s == '\0' || *s == '#' || *s == ';')
                return 0;
        if (*s == '[') {
                char *close = strchr(s, ']');
                if (close)
                        *close = '\0';
                char *name = trim(s + 1);
                if (!close || close[1] != '\0' || !*name || strlen(name) >= section_len) {
                        snprintf(err, errlen, "%s:%d: malformed section header", cfg->path, line);
                        return -EINVAL;
                }
                snprintf(section, section_len, "%s", name);
                return 0;
        }
        char *eq = strchr(s, '=');
        if (!eq) {
                snprintf(err, errlen, "%s:%d: expected key = value", cfg->path, line);
                return -EINVAL;
        }
        *eq = '\0';
        char *key = trim(s), *value = trim(eq + 1);
        if (!*key) {
                snprintf(err, errlen, "%s:%d: empty key", cfg->path, line);
                return -EINVAL;
        }
        int r = add_entry(cfg, section, key, value, line);
        if (r < 0)
                return r;
        const config_entry *first = find(cfg, cfg->entries[cfg->n - 1].key);
        if (first != &cfg->entries[cfg->n - 1]) {
                snprintf(err, errlen, "%s:%d: %s already set on line %d", cfg->path, line, first->key, first->line);
                return -EINVAL;
        }
        return 0;
}

int config_load(const char *path, config *cfg, char *err, size_t errlen) {
        *cfg = (config){ 0 };
        FILE *f = fopen(path, "re");
        if (!f) {
                int r = -errno;
                snprintf(err, errlen, "%s: %s", path, strerror(errno));
                return r;
        }
        if (!(cfg->path = strdup(path))) {
                fclose(f);
                snprintf(err, errlen, "%s: out of memory", path);
                return -ENOMEM;
        }
        char *buf = NULL, section[128] = "";
        size_t cap = 0;
        int line = 0, r = 0;
        while (r == 0 && getline(&buf, &cap, f) >= 0)
                r = parse_line(cfg, buf, section, sizeof(section), ++line, err, errlen);
        if (r == 0 && ferror(f)) { /* a directory opens fine and fails here with EISDIR */
                r = errno ? -errno : -EIO;
                snprintf(err, errlen, "%s: %s", path, strerror(-r));
        }
        free(buf);
        fclose(f);
        if (r == -ENOMEM)
                snprintf(err, errlen, "%s: out of memory", path);
        if (r < 0)
                config_free(cfg);
        return r;
}

const char *config_get(const config *cfg, const char *key) {
        const config_entry *e = find(cfg, key);
        return e ? e->value : NULL;
}

typedef int (*value_parser)(const char *s, int64_t max, int64_t *out);

static int parse_size_any(const char *s, int64_t max, int64_t *out) {
        (void)max;
        return units_parse_size(s, out);
}

static int parse_cpus_any(const char *s, int64_t max, int64_t *out) {
        (void)max;
        return units_parse_cpus(s, out);
}

static int get_typed(const config *cfg, const char *key, value_parser parse, int64_t max, const char *what,
                     int64_t *out, char *err, size_t errlen) {
        const config_entry *e = find(cfg, key);
        if (!e)
                return -ENOENT;
        if (parse(e->value, max, out) < 0) {
                snprintf(err, errlen, "%s:%d: %s: '%s' is not %s", cfg->path, e->line, key, e->value, what);
                return -EINVAL;
        }
        return 0;
}

int config_get_size(const config *cfg, const char *key, int64_t *out, char *err, size_t errlen) {
        return get_typed(cfg, key, parse_size_any, 0, "a size (like 512M or 4G)", out, err, errlen);
}

static int parse_mem_any(const char *s, int64_t max, int64_t *out) {
        (void)max;
        return units_parse_mem(s, out);
}

int config_get_mem(const config *cfg, const char *key, int64_t *out, char *err, size_t errlen) {
        return get_typed(cfg, key, parse_mem_any, 0, "a memory size of at least 1M (like 512M, 4G, or 4096 for MiB)",
                         out, err, errlen);
}

int config_get_cpus(const config *cfg, const char *key, int64_t *out, char *err, size_t errlen) {
        return get_typed(cfg, key, parse_cpus_any, 0, "a CPU count (like 2 or 0.5)", out, err, errlen);
}

static int parse_bool(const char *s, int64_t max, int64_t *out) {
        (void)max;
        static const char *const yes[] = { "yes", "true", "on", "1" }, *const no[] = { "no", "false", "off", "0" };
        for (size_t i = 0; i < sizeof(yes) / sizeof(yes[0]); i++)
                if (strcmp(s, yes[i]) == 0 || strcmp(s, no[i]) == 0)
                        return *out = strcmp(s, yes[i]) == 0, 0;
        return -EINVAL;
}

int config_get_bool(const config *cfg, const char *key, bool *out, char *err, size_t errlen) {
        int64_t v;
        int r = get_typed(cfg, key, parse_bool, 1, "yes or no", &v, err, errlen);
        if (r == 0)
                *out = v != 0;
        return r;
}

int config_get_uint(const config *cfg, const char *key, int64_t max, int64_t *out, char *err, size_t errlen) {
        char what[64];
        snprintf(what, sizeof(what), "a whole number from 0 to %lld", (long long)max);
        return get_typed(cfg, key, units_parse_uint, max, what, out, err, errlen);
}

/* key matches pattern: equal, or pattern is "section.*" and key is in that section. */
static bool key_matches(const char *pattern, const char *key) {
        size_t n = strlen(pattern);
        if (n >= 2 && strcmp(pattern + n - 2, ".*") == 0)
                return strncmp(pattern, key, n - 1) == 0 && key[n - 1] != 0;
        return strcmp(pattern, key) == 0;
}

int config_check_keys(const config *cfg, const char *const *allowed, char *err, size_t errlen) {
        for (size_t i = 0; i < cfg->n; i++) {
                const char *const *a = allowed;
                while (*a && !key_matches(*a, cfg->entries[i].key))
                        a++;
                if (!*a) {
                        snprintf(err, errlen, "%s:%d: unknown key %s", cfg->path, cfg->entries[i].line,
                                 cfg->entries[i].key);
                        return -EINVAL;
                }
        }
        return 0;
}

void config_free(config *cfg) {
        for (size_t i = 0; i < cfg->n; i++) {
                free(cfg->entries[i].key);
                free(cfg->entries[i].value);
        }
        free(cfg->entries);
        free(cfg->path);
        *cfg = (config){ 0 };
}
