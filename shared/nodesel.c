/* nodesel.c - node features and a job's node selection (nodesel.h). */
#include "nodesel.h"
#include <string.h>

static bool name_char(char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_' || c == '.' ||
               c == '-';
}

/* Whether s is names separated by single characters of seps, none empty. */
static bool names_ok(const char *s, const char *seps) {
        size_t len = 0;
        if (!s || strlen(s) > NODESEL_MAX)
                return false;
        for (; *s; s++) {
                if (name_char(*s))
                        len++;
                else if (strchr(seps, *s) && len > 0)
                        len = 0;
                else
                        return false;
        }
        return len > 0;
}

bool nodesel_list_ok(const char *list) { return names_ok(list, ","); }

/* Whether the names in [s, end), separated by any of seps, include the name [name, name+len). */
static bool span_has(const char *s, const char *end, const char *seps, const char *name, size_t len) {
        while (s < end) {
                size_t n = strcspn(s, seps);
                if (s + n > end)
                        n = (size_t)(end - s);
                if (n == len && memcmp(s, name, len) == 0)
                        return true;
                s += n + 1;
        }
        return false;
}

bool nodesel_list_has(const char *list, const char *name) {
        return list && span_has(list, list + strlen(list), ",", name, strlen(name));
}

bool nodesel_expr_ok(const char *expr) { return names_ok(expr, "&,|"); }

/* Whether features hold every feature of the conjunction [s, end). */
static bool all_of(const char *s, const char *end, const char *features) {
        while (s < end) {
                size_t n = strcspn(s, "&,|");
                if (!features || !span_has(features, features + strlen(features), ",", s, n))
                        return false;
                s += n + 1;
        }
        return true;
}

bool nodesel_expr_match(const char *expr, const char *features) {
        for (const char *s = expr;;) {
                size_t n = strcspn(s, "|");
                if (all_of(s, s + n, features))
                        return true;
                if (!s[n])
                        return false;
                s += n + 1;
        }
}

bool nodesel_eligible(const char *constraint, const char *nodelist, const char *exclude, const char *name,
                      const char *features) {
        return (!constraint || nodesel_expr_match(constraint, features)) &&
               (!nodelist || nodesel_list_has(nodelist, name)) && !nodesel_list_has(exclude, name);
}
