/* depend.h - job dependencies as Slurm writes them ("afterok:1:2,afterany:3", "singleton") and
 * begin times ("now+1hour", "16:00", "2026-11-27T08:00"): parsing and printing, no state. The
 * controller keeps who waits on whom (controller/core/depindex.h); the CLI checks what users type
 * before it sends it. */
#pragma once
#include <stddef.h>
#include <stdint.h>

typedef enum dep_kind {
        DEP_AFTER,      /* the job has started (or ended without starting) */
        DEP_AFTEROK,    /* the job completed (exit 0); a whole array: every member did */
        DEP_AFTERNOTOK, /* the job ended otherwise (failed, cancelled, oom-killed, lost) */
        DEP_AFTERANY,   /* the job ended, however */
        DEP_SINGLETON,  /* no earlier job of the same user and name is still pending or running */
        _DEP_KIND_MAX,
} dep_kind;

typedef struct dep_item {
        dep_kind kind;
        uint64_t id; /* 0 for singleton; an array's first id names the whole array */
} dep_item;

typedef struct dep_list {
        dep_item *items; /* owned */
        size_t n;
} dep_list;

/* A job waits on at most this many jobs (one comma list on a command line). */
#define DEP_ITEMS_MAX 1024

/* "after", "afterok", "afternotok", "afterany", "singleton". */
const char *dep_kind_name(dep_kind k);
/* Parse a dependency as Slurm's --dependency takes it: KIND:ID[:ID...] or singleton, separated
 * by commas (all must hold). '?' (any may hold) and "+time" are refused, by name. Ids are
 * decimal and not 0; duplicates are kept. Returns 0 with *out filled (free with dep_list_free),
 * or -EINVAL/-ERANGE/-ENOMEM with one line in err and *out empty. */
int dep_parse(const char *s, dep_list *out, char *err, size_t errlen);
/* The canonical text of l ("afterok:1:2,singleton"), malloc'ed, or NULL (no memory). */
char *dep_format(const dep_list *l);
void dep_list_free(dep_list *l);

/* Parse a --begin time in local time against now_usec (CLOCK_REALTIME microseconds): "now",
 * "now+N" with an optional unit (seconds, minutes, hours, days, weeks, or s, min, h, d, w),
 * "HH:MM[:SS]" (today, or tomorrow when that time has passed), "YYYY-MM-DD" (midnight) or
 * "YYYY-MM-DDTHH:MM[:SS]". Returns 0 with *out_usec, or -EINVAL/-ERANGE with one line in err. */
int dep_parse_begin(const char *s, int64_t now_usec, int64_t *out_usec, char *err, size_t errlen);
