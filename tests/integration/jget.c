/* jget - print fields of one JSON document read from stdin, for the integration tests.
 *
 * Usage: jget PATH...    one line per PATH: a string raw, an integral number as digits, null
 *                        when the path leads nowhere, anything else as compact JSON.
 * A PATH is dot-separated keys; a key may index an array (`argv[1]`) or select its first element
 * whose field equals a text (`nodes[name=ct1-1].state`); `A//B` prints B when A is null
 * (`job.state//state`).
 *
 * The tests poll `colony ... --json` many times a second, and in the TCG guest that runs the
 * suite on cgroup v2 each jq process costs 0.7 s of CPU (jq 1.6 compiles its builtins at every
 * start), more than the polling it serves; this program costs what any small exec does. */
#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Whether item's value, as text, equals want (strings, and numbers in their printed form). */
static bool value_is(const cJSON *item, const char *want) {
        if (cJSON_IsString(item))
                return strcmp(item->valuestring, want) == 0;
        if (cJSON_IsNumber(item)) {
                char *end;
                errno = 0;
                double v = strtod(want, &end);
                return errno == 0 && *end == '\0' && end != want && v == item->valuedouble;
        }
        return false;
}

/* The element of array whose field key equals want, or NULL. */
static const cJSON *select_in(const cJSON *array, const char *key, const char *want) {
        const cJSON *el;
        cJSON_ArrayForEach(el, array) if (value_is(cJSON_GetObjectItemCaseSensitive(el, key), want)) return el;
        return NULL;
}

/* Follow one step ("name" or "name[key=value]", path modified in place) from at. */
static const cJSON *step(const cJSON *at, char *name) {
        char *sel = strchr(name, '[');
        if (sel)
                *sel++ = '\0';
        if (*name)
                at = cJSON_GetObjectItemCaseSensitive(at, name);
        if (!at || !sel)
                return at;
        char *eq = strchr(sel, '='), *close = strrchr(sel, ']'), *end;
        if (close && !eq) { /* an index: name[3] */
                *close = '\0';
                long i = strtol(sel, &end, 10);
                if (*sel && !*end && i >= 0)
                        return cJSON_GetArrayItem(at, (int)i);
        }
        if (!eq || !close || close < eq) {
                fprintf(stderr, "jget: bad selector [%s\n", sel);
                exit(2);
        }
        *eq = '\0';
        *close = '\0';
        return select_in(at, sel, eq + 1);
}

/* What a dot-separated path (copied, not modified) leads to from root, or NULL. */
static const cJSON *follow(const cJSON *root, const char *path) {
        char *copy = strdup(path), *save = NULL;
        if (!copy)
                exit(3);
        const cJSON *at = root;
        for (char *name = strtok_r(copy, ".", &save); name && at; name = strtok_r(NULL, ".", &save))
                at = step(at, name);
        free(copy);
        return cJSON_IsNull(at) ? NULL : at;
}

static void print_value(const cJSON *v) {
        if (!v) {
                puts("null");
        } else if (cJSON_IsString(v)) {
                puts(v->valuestring);
        } else if (cJSON_IsNumber(v) && v->valuedouble == floor(v->valuedouble) &&
                   fabs(v->valuedouble) < 9007199254740992.0) {
                printf("%.0f\n", v->valuedouble);
        } else {
                char *s = cJSON_PrintUnformatted(v);
                puts(s ? s : "null");
                free(s);
        }
}

/* The first alternative of "A//B//C" that leads somewhere, or NULL. */
static const cJSON *first_of(const cJSON *root, const char *alternatives) {
        const char *p = alternatives;
        for (;;) {
                const char *sep = strstr(p, "//");
                size_t len = sep ? (size_t)(sep - p) : strlen(p);
                char *one = strndup(p, len);
                if (!one)
                        exit(3);
                const cJSON *v = follow(root, one);
                free(one);
                if (v || !sep)
                        return v;
                p = sep + 2;
        }
}

int main(int argc, char **argv) {
        if (argc < 2) {
                fprintf(stderr, "usage: jget PATH... < JSON\n");
                return 2;
        }
        size_t cap = 1 << 16, len = 0, n;
        char *buf = malloc(cap);
        while (buf && (n = fread(buf + len, 1, cap - len - 1, stdin)) > 0) {
                len += n;
                if (len + 1 == cap && !(buf = realloc(buf, cap *= 2)))
                        break;
        }
        if (!buf)
                return 3;
        buf[len] = '\0';
        cJSON *root = cJSON_Parse(buf);
        free(buf);
        if (!root) {
                fprintf(stderr, "jget: the input is not one JSON document\n");
                return 1;
        }
        for (int i = 1; i < argc; i++)
                print_value(first_of(root, argv[i]));
        cJSON_Delete(root);
        return 0;
}
