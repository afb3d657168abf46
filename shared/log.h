/* log.h - one logging entry point: stderr with a timestamp, or the journal under systemd.
 *
 * Every message should carry its context as key=value text (job=42 host=node1 cgroup=/...).
 * Functions that fail return -errno; callers log once, where the decision is made. */
#pragma once
#include <errno.h>
#include <stdarg.h>
#include <syslog.h>

/* Choose the sink and the threshold. ident names the program ("colony-agent").
 * to_journal: 1 = journal, 0 = stderr, -1 = journal when $JOURNAL_STREAM says stderr is
 * connected to it. */
void log_open(const char *ident, int to_journal, int max_priority);

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

#define log_error(...) log_msg(LOG_ERR, __VA_ARGS__)
#define log_warning(...) log_msg(LOG_WARNING, __VA_ARGS__)
#define log_info(...) log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...) log_msg(LOG_DEBUG, __VA_ARGS__)
