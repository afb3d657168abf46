/* log.c - logging to stderr, or to the sink log_journal.c installs, control bytes escaped. */
#include "log.h"
#include "clock.h"
#include "utf8.h"
#include <pthread.h>
#include <stdbool.h>
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
/* getpid() is a system call per line: keep the pid, and forget it in a forked child (when the
 * fork handler could be set up; else ask every time). */
static pid_t log_pid;
static bool log_pid_kept;
/* log_hold: lines collected for one write; how many holds are open. Per thread: another
 * thread's lines (LoTES's solver) go out as ever. */
static _Thread_local char held[16384];
static _Thread_local size_t held_len;
static _Thread_local int holds;

int log_level_from_name(const char *name) {
        static const struct {
                const char *name;
                int priority;
        } levels[] = {
                { "err", LOG_ERR },       { "error", LOG_ERR }, { "warning", LOG_WARNING }, { "warn", LOG_WARNING },
                { "notice", LOG_NOTICE }, { "info", LOG_INFO }, { "debug", LOG_DEBUG },
        };
        for (size_t i = 0; i < sizeof(levels) / sizeof(levels[0]); i++)
                if (strcasecmp(name, levels[i].name) == 0)
                        return levels[i].priority;
        return -EINVAL;
}

static void forget_pid(void) { log_pid = 0; }

void log_open(const char *ident, log_sink *sink, int max_priority) {
        if (!log_pid_kept)
                log_pid_kept = pthread_atfork(NULL, NULL, forget_pid) == 0;
        log_ident = ident;
        log_sink_fn = sink;
        log_max_priority = max_priority;
}

static const char *priority_name(int priority) {
        static const char *const names[] = { "emerg", "alert", "crit", "error", "warning", "notice", "info", "debug" };
        return names[priority & 7];
}

static void log_flush_held(void) {
        (void)fwrite(held, 1, held_len, stderr);
        held_len = 0;
}

static void log_line(int priority, const char *text) {
        if (log_sink_fn) {
                log_sink_fn(priority & 7, log_ident, text);
                return;
        }
        struct timeval tv;
        struct tm tm;
        char stamp[32], line[2300];
        gettimeofday(&tv, NULL);
        localtime_r(&tv.tv_sec, &tm);
        strftime(stamp, sizeof(stamp), "%Y-%m-%dT%H:%M:%S", &tm);
        pid_t pid = log_pid ? log_pid : getpid();
        if (log_pid_kept)
                log_pid = pid;
        int n = snprintf(line, sizeof(line), "%s.%03ld %s[%d] %s: %s\n", stamp, (long)tv.tv_usec / 1000, log_ident,
                         (int)pid, priority_name(priority), text);
        size_t len = n < 0 ? 0 : (size_t)n < sizeof(line) ? (size_t)n : sizeof(line) - 1;
        if (holds > 0 && held_len + len > sizeof(held))
                log_flush_held();
        if (holds > 0 && len <= sizeof(held)) {
                memcpy(held + held_len, line, len);
                held_len += len;
                return;
        }
        /* stderr is unbuffered: one write per line (or per held batch of whole lines), so lines
         * of several processes sharing a terminal or file do not interleave */
        (void)fwrite(line, 1, len, stderr);
}

void log_hold(void) { holds++; }

void log_release(void) {
        if (holds > 0 && --holds == 0)
                log_flush_held();
}

static void log_vmsg(int priority, const char *suffix, const char *fmt, va_list ap) {
        if ((priority & 7) > log_max_priority)
                return;
        int saved = errno; /* callers log between a failure and its errno check */
        char text[2048];
        int n = vsnprintf(text, sizeof(text), fmt, ap);
        if (suffix && n >= 0 && (size_t)n < sizeof(text))
                snprintf(text + n, sizeof(text) - (size_t)n, ": %s", suffix);
        /* Job names, command lines and paths are users' text: a newline would forge a line of
         * its own, an escape sequence rewrite the reader's terminal. */
        char escaped[sizeof(text)];
        log_line(priority, utf8_needs_escape(text) ? utf8_escape_into(escaped, sizeof(escaped), text) : text);
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

bool log_ratelimit_ok(log_ratelimit *rl, unsigned *missed) {
        uint64_t now = (uint64_t)clock_mono_usec();
        if (now < rl->next_usec) {
                rl->missed++;
                return false;
        }
        rl->next_usec = now + rl->interval_usec;
        *missed = rl->missed;
        rl->missed = 0;
        return true;
}
