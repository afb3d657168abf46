/* log.c - logging to stderr, or to the sink log_journal.c installs. */
#include "log.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static const char *log_ident = "colony";
static log_sink *log_sink_fn; /* NULL: stderr */
static int log_max_priority = LOG_INFO;

int log_level_from_name(const char *name) {
        static const struct {
                const char *name;
                int priority;
        } levels[] = {
                { "err", LOG_ERR },       { "error", LOG_ERR },   { "warning", LOG_WARNING }, { "warn", LOG_WARNING },
                { "notice", LOG_NOTICE }, { "info", LOG_INFO },   { "debug", LOG_DEBUG },
        };
        for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
                if (strcasecmp(name, levels[i].name) == 0)
                        return levels[i].priority;
        return -EINVAL;
}

void log_open(const char *ident, log_sink *sink, int max_priority) {
        log_ident = ident;
        log_sink_fn = sink;
        log_max_priority = max_priority;
}

static const char *priority_name(int priority) {
        static const char *const names[] = { "emerg", "alert", "crit", "error", "warning", "notice", "info", "debug" };
        return names[priority & 7];
}

static void log_line(int priority, const char *text) {
        if (log_sink_fn) {
                log_sink_fn(priority & 7, log_ident, text);
                return;
        }
        struct timeval tv;
        struct tm tm;
        char stamp[32];
        gettimeofday(&tv, NULL);
        localtime_r(&tv.tv_sec, &tm);
        strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
        /* stderr is unbuffered: glibc formats the whole line and writes it at once, so lines of
         * several processes sharing a terminal or file do not interleave */
        fprintf(stderr, "%s.%03ld %s[%d] %s: %s\n", stamp, (long)tv.tv_usec / 1000, log_ident, (int)getpid(),
                priority_name(priority), text);
}

static void log_vmsg(int priority, const char *suffix, const char *fmt, va_list ap) {
        if ((priority & 7) > log_max_priority)
                return;
        int saved = errno; /* callers log between a failure and its errno check */
        char text[2048];
        int n = vsnprintf(text, sizeof(text), fmt, ap);
        if (suffix && n >= 0 && (size_t)n < sizeof(text))
                snprintf(text + n, sizeof(text) - (size_t)n, ": %s", suffix);
        log_line(priority, text);
        errno = saved;
}

void log_msg(int priority, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        log_vmsg(priority, NULL, fmt, ap);
        va_end(ap);
}

int log_errno(int priority, int err, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        log_vmsg(priority, strerror(err < 0 ? -err : err), fmt, ap);
        va_end(ap);
        return err;
}
