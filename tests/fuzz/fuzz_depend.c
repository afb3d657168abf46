/* fuzz_depend.c - the dependency and --begin parsers (shared/depend.c), as submit's options and
 * a submit's "dependency" reach them. */
#include "depend.h"
#include "fuzz_file.h"
#include <errno.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Whether two lists hold the same items, field by field (a struct's padding is not theirs to
 * compare: memcmp of the items aborted on bytes nobody set). */
static bool same_items(const dep_list *a, const dep_list *b) {
        if (a->n != b->n)
                return false;
        for (size_t i = 0; i < a->n; i++)
                if (a->items[i].kind != b->items[i].kind || a->items[i].id != b->items[i].id)
                        return false;
        return true;
}

/* A dependency that parses prints to a text that parses back to the same items. */
static void dependency(const char *s) {
        char err[256];
        dep_list l, again;
        if (dep_parse(s, &l, err, sizeof(err)) < 0) {
                if (l.items || l.n || !memchr(err, '\0', sizeof(err)))
                        abort();
                return;
        }
        char *text = dep_format(&l);
        if (!text || dep_parse(text, &again, err, sizeof(err)) < 0 || !same_items(&again, &l))
                abort();
        for (size_t i = 0; i < l.n; i++)
                if ((l.items[i].kind == DEP_SINGLETON) != (l.items[i].id == 0))
                        abort();
        free(text);
        dep_list_free(&again);
        dep_list_free(&l);
}

/* A begin time that parses is within ten years and a day of now (a relative one: not before). */
static void begin(const char *s) {
        const int64_t now = 1795689000LL * 1000000, year = 366LL * 86400 * 1000000;
        char err[256];
        int64_t t = -1;
        if (dep_parse_begin(s, now, &t, err, sizeof(err)) < 0) {
                if (t != -1)
                        abort();
                return;
        }
        if (strncmp(s, "now", 3) == 0 && (t < now || t > now + 10 * year + 86400000000LL))
                abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        char *s = fuzz_string(data, size);
        if (!s)
                return 0;
        dependency(s);
        begin(s);
        free(s);
        return 0;
}
