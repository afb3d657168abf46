/* log.c - stderr or journal logging. */
#include "log.h"
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <systemd/sd-journal.h>
#include <time.h>
#include <unistd.h>

static const char *log_ident = "colony";
static int log_to_journal;
static int log_max_priority = LOG_INFO;

void log_open(const char *ident, int to_journal, int max_priority) {
        log_ident = ident;
        log_to_journal = to_journal < 0 ? getenv("JOURNAL_STREAM") != NULL : to_journal;
        log_max_priority = max_priority;
}

static const char *priority_name(int priority) {
        static const char *const names[] = { "emerg", "alert", "crit", "error", "warning", "notice", "info", "debug" };
        return names[priority & 7];
}

static void log_line(int priority, const char *text) {
        if (log_to_journal) {
                sd_journal_print(priority, "%s", text);
                return;
        }
        struct timeval tv;
        struct tm tm;
        char stamp[32];
        gettimeofday(&tv, NULL);
        localtime_r(&tv.tv_sec, &tm);
        strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
        fprintf(stderr, "%s.%03ld %s[%d] %s: %s\n", stamp, (long)tv.tv_usec / 1000, log_ident, (int)getpid(),
                priority_name(priority), text);
}

static void log_vmsg(int priority, const char *suffix, const char *fmt, va_list ap) {
        if (priority > log_max_priority)
                return;
        char text[2048];
        int n = vsnprintf(text, sizeof(text), fmt, ap);
        if (suffix && n >= 0 && (size_t)n < sizeof(text))
                snprintf(text + n, sizeof(text) - (size_t)n, ": %s", suffix);
        log_line(priority, text);
}

void log_msg(int priority, const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        log_vmsg(priority, NULL, fmt, ap);
        va_end(ap);
}

int log_errno(int priority, int err, const char *fmt, ...) {
        int saved = errno;
        va_list ap;
        va_start(ap, fmt);
        log_vmsg(priority, strerror(err < 0 ? -err : err), fmt, ap);
        va_end(ap);
        errno = saved;
        return err;
}
