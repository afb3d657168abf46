/* log.h - one logging entry point: stderr with a timestamp, or the journal under systemd
 * (log_journal.h: only the daemons link libsystemd, so the CLI loads without it).
 *
 * Every message should carry its context as key=value text (job=42 host=node1 cgroup=/...).
 * Functions that fail return -errno; callers log once, where the decision is made. */
#pragma once
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <syslog.h>

/* Where a line goes instead of stderr: priority (0..7), the program's ident, the formatted text. */
typedef void log_sink(int priority, const char *ident, const char *text);

/* Choose the sink and the threshold. ident names the program ("colony-agent"); sink NULL is
 * stderr. */
void log_open(const char *ident, log_sink *sink, int max_priority);

/* The syslog priority a level name means: "error" (or "err"), "warning" (or "warn"), "notice",
 * "info", "debug", in any case. Returns the priority or -EINVAL. */
int log_level_from_name(const char *name);

/* Log at a syslog priority (LOG_ERR ... LOG_DEBUG). */
void log_msg(int priority, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Log with strerror(-err) appended, and return err (pass a negative errno). */
int log_errno(int priority, int err, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* Until the matching log_release, collect the lines bound for stderr and write them together,
 * whole lines by the 16 KiB, instead of one write(2) each: for a burst of lines (an array's
 * submissions) that nothing can interrupt. Holds nest, and hold the calling thread's lines
 * only; the journal is not held. */
void log_hold(void);
/* End a log_hold; the outermost writes what was held. */
void log_release(void);

/* A condition that may recur thousands of times a second (a flood of connections): one line
 * per interval at most, saying how many were left out. Zero-initialise, then set interval_usec. */
typedef struct log_ratelimit {
        uint64_t interval_usec;
        uint64_t next_usec; /* CLOCK_MONOTONIC: no line before then */
        unsigned missed;    /* occurrences not logged since the last line */
} log_ratelimit;

/* The interval for a flood's warnings (refused or cut connections, failed accepts). */
#define LOG_FLOOD_USEC (10 * 1000000ULL)
/* The size of a buffer for a one-line error (char err[ERRLEN], or err and errlen), the same for
 * the daemons and the CLI; a protocol's own limits stay theirs (PROTO_ERRLEN, TLS_ERRLEN). */
#define ERRLEN 512

/* Whether this occurrence may be logged: true at most once per interval, with *missed set to
 * the occurrences left out since the last line (and reset); false counts one more. */
bool log_ratelimit_ok(log_ratelimit *rl, unsigned *missed);

#define log_error(...)   log_msg(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...)    log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)   log_msg(LOG_DEBUG, __VA_ARGS__)
