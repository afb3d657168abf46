/* family_cli.c - job families in the CLI (see family_cli.h). */
#include "family_cli.h"
#include "client.h"
#include "format.h"
#include "jobs.h"
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int64_t number(const cJSON *o, const char *key) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
        return cJSON_IsNumber(v) ? (int64_t)v->valuedouble : 0;
}

static const char *text(const cJSON *o, const char *key) {
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
        return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* "200 completed, 37 running": o's "counts", pending and running first, into buf. */
static char *counts_text(const cJSON *o, char *buf, size_t len) {
        const cJSON *counts = cJSON_GetObjectItemCaseSensitive(o, "counts");
        size_t at = 0;
        buf[0] = '\0';
        for (int s = 0; s < _JOB_STATE_MAX; s++) {
                int64_t n = number(counts, job_state_name((job_state)s));
                if (n && at < len)
                        at += (size_t)snprintf(buf + at, len - at, "%s%" PRId64 " %s", at ? ", " : "", n,
                                               job_state_name((job_state)s));
        }
        return buf;
}

void family_cli_show(const cJSON *reply) {
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(reply, "family"), *u;
        const cJSON *units = cJSON_GetObjectItemCaseSensitive(f, "units");
        char counts[256], flow[FMT_BUF], from[FMT_BUF], to[FMT_BUF], unlimited[FMT_BUF];
        if (!cJSON_IsObject(f))
                return;
        int64_t members = number(f, "members"), left_off = number(f, "units_left_off");
        fmt_line(stdout, "%-13s%" PRId64 ": %d jobs and arrays, %" PRId64 " job%s: %s", "family:", number(f, "id"),
                 cJSON_GetArraySize(units) + (int)left_off, members, members == 1 ? "" : "s",
                 counts_text(f, counts, sizeof(counts)));
        cJSON_ArrayForEach(u, units) {
                const char *dep = text(u, "dependency");
                fmt_line(stdout, "%-13s%s %" PRId64 " (%s, %s): %" PRId64 " job%s: %s%s%s", "",
                         cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(u, "array")) ? "array" : "job", number(u, "id"),
                         text(u, "name") ? text(u, "name") : "?", text(u, "user") ? text(u, "user") : "?",
                         number(u, "members"), number(u, "members") == 1 ? "" : "s",
                         counts_text(u, counts, sizeof(counts)), dep ? "; " : "", dep ? dep : "");
        }
        if (left_off)
                fmt_line(stdout, "%-13sand %" PRId64 " more", "", left_off);
        fmt_duration(number(f, "flow_usec"), flow, sizeof(flow));
        fmt_time(number(f, "arrival_usec"), from, sizeof(from));
        if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "ended"))) {
                fmt_line(stdout, "%-13s%s so far, from %s", "flow time:", flow, from);
                return;
        }
        fmt_time(number(f, "end_usec"), to, sizeof(to));
        if (cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(f, "unlimited_flow_usec")))
                fmt_line(stdout, "%-13s%s, from %s to %s; %s with unlimited machines", "flow time:", flow, from, to,
                         fmt_duration(number(f, "unlimited_flow_usec"), unlimited, sizeof(unlimited)));
        else
                fmt_line(stdout, "%-13s%s, from %s to %s", "flow time:", flow, from, to);
}

/* The families asked and answered, over one connection. */
typedef struct family_ask {
        uint64_t *ids;
        size_t n, next;
        cJSON *families; /* the answers, in id order */
        int r;
        char err[PROTO_ERRLEN];
} family_ask;

static int ask_next(void *ud, cJSON **req, uint64_t *tag) {
        family_ask *a = ud;
        if (a->next == a->n)
                return 0;
        *tag = a->ids[a->next];
        if (!(*req = proto_new("family")) || !cJSON_AddNumberToObject(*req, "id", (double)a->ids[a->next])) {
                cJSON_Delete(*req);
                return -ENOMEM;
        }
        a->next++;
        return 1;
}

static void ask_done(void *ud, uint64_t tag, const cJSON *reply) {
        family_ask *a = ud;
        const cJSON *f = cJSON_GetObjectItemCaseSensitive(reply, "family");
        cJSON *copy = cJSON_IsObject(f) ? cJSON_Duplicate(f, true) : NULL;
        if (copy) {
                cJSON_AddItemToArray(a->families, copy);
        } else if (a->r == 0) {
                a->r = -EBADMSG;
                snprintf(a->err, sizeof(a->err), "family of job %" PRIu64 ": %s", tag,
                         text(reply, "error") ? text(reply, "error") : "bad reply from the controller");
        }
}

static int by_id(const void *a, const void *b) {
        uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
        return x < y ? -1 : x > y;
}

/* The distinct "family" ids of the reply's jobs, sorted, into a->ids. Returns 0 or -ENOMEM. */
static int family_ids(const cJSON *reply, family_ask *a) {
        const cJSON *item;
        size_t cap = (size_t)cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(reply, "jobs"));
        if (!(a->ids = calloc(cap + 1, sizeof(*a->ids))))
                return -ENOMEM;
        cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(reply, "jobs")) if (number(item, "family") > 0 &&
                                                                                      a->n < cap) a->ids[a->n++] =
                (uint64_t)number(item, "family");
        qsort(a->ids, a->n, sizeof(*a->ids), by_id);
        size_t kept = 0;
        for (size_t i = 0; i < a->n; i++)
                if (kept == 0 || a->ids[kept - 1] != a->ids[i])
                        a->ids[kept++] = a->ids[i];
        a->n = kept;
        return 0;
}

static int family_add_row(fmt_table *t, const cJSON *f) {
        const cJSON *first = cJSON_GetArrayItem(cJSON_GetObjectItemCaseSensitive(f, "units"), 0);
        const cJSON *counts = cJSON_GetObjectItemCaseSensitive(f, "counts");
        bool ended = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(f, "ended"));
        int64_t members = number(f, "members"), pending = number(counts, "pending");
        int64_t running = number(counts, "running"), done = number(counts, "completed");
        char id[24], units[24], nm[24], np[24], nr[24], nd[24], no[24], flow[FMT_BUF], unl[FMT_BUF];
        snprintf(id, sizeof(id), "%" PRId64, number(f, "id"));
        snprintf(units, sizeof(units), "%d",
                 cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(f, "units")) + (int)number(f, "units_left_off"));
        snprintf(nm, sizeof(nm), "%" PRId64, members);
        snprintf(np, sizeof(np), "%" PRId64, pending);
        snprintf(nr, sizeof(nr), "%" PRId64, running);
        snprintf(nd, sizeof(nd), "%" PRId64, done);
        snprintf(no, sizeof(no), "%" PRId64, members - pending - running - done);
        bool has_unl = cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(f, "unlimited_flow_usec"));
        return fmt_table_row(t, id, text(first, "name"), text(first, "user"), ended ? "ended" : "live", units, nm, np,
                             nr, nd, no, fmt_duration(number(f, "flow_usec"), flow, sizeof(flow)),
                             has_unl ? fmt_duration(number(f, "unlimited_flow_usec"), unl, sizeof(unl)) : NULL);
}

static int print_families(const cJSON *families) {
        static const char *const headers[] = { "FAMILY",  "NAME",    "USER",      "STATE", "UNITS", "JOBS",
                                               "PENDING", "RUNNING", "COMPLETED", "OTHER", "FLOW",  "UNLIMITED" };
        const cJSON *f;
        fmt_table t;
        int r = fmt_table_init(&t, 12, headers);
        cJSON_ArrayForEach(f, families) if (r == 0) r = family_add_row(&t, f);
        if (r == 0)
                fmt_table_print(&t, stdout);
        fmt_table_free(&t);
        return r;
}

int family_cli_list(const cli *c, const cJSON *reply) {
        char sock[PATH_MAX], err[PROTO_ERRLEN] = "";
        family_ask a = { .families = cJSON_CreateArray() };
        cJSON *out = NULL;
        int r = a.families ? family_ids(reply, &a) : -ENOMEM;
        if (r == 0 && (r = jobs_socket_for(c, sock)) < 0) {
                free(a.ids);
                cJSON_Delete(a.families);
                return EXIT_FAIL; /* said why */
        }
        if (r == 0 && a.n)
                r = client_pipeline(sock, ask_next, ask_done, &a, REQUEST_TIMEOUT_MS, err, sizeof(err));
        if (r == 0 && a.r < 0) {
                r = a.r;
                snprintf(err, sizeof(err), "%s", a.err);
        }
        if (r == 0 && c->json) {
                if ((out = cJSON_CreateObject()) && cJSON_AddItemToObject(out, "families", a.families))
                        a.families = NULL;
                r = out && !a.families ? fmt_json(out) : -ENOMEM;
        } else if (r == 0) {
                r = print_families(a.families);
        }
        if (r < 0)
                cli_error(c, "%s", *err ? err : strerror(-r));
        free(a.ids);
        cJSON_Delete(a.families);
        cJSON_Delete(out);
        return r == 0 ? 0 : EXIT_FAIL;
}
