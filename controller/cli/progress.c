/* progress.c - the CLI's progress line (progress.h). */
#include "progress.h"
#include "clock.h"
#include "format.h"
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <time.h>
#include <unistd.h>

char *progress_line(const char *what, const char *unit, size_t done, size_t total, int64_t elapsed_usec,
                    const char *note, char *buf, size_t len) {
        char spent[FMT_BUF], left[FMT_BUF] = "";
        double frac = total ? (double)(done < total ? done : total) / (double)total : 0;
        fmt_duration(elapsed_usec, spent, sizeof(spent));
        if (done > 0 && done < total) {
                char d[FMT_BUF];
                snprintf(left, sizeof(left), ", about %s left",
                         fmt_duration((int64_t)((double)elapsed_usec * (1 - frac) / frac), d, sizeof(d)));
        }
        snprintf(buf, len, "%s: %d%% (%zu/%zu %s), %s%s%s%s", what, (int)(frac * 100), done, total, unit, spent, left,
                 note && *note ? ": " : "", note ? note : "");
        return buf;
}

bool progress_due(int64_t drawn, int64_t now, size_t done, size_t total) {
        return drawn == 0 || done >= total || now - drawn >= PROGRESS_PERIOD_USEC;
}

static void draw(progress *p, int64_t now) {
        char line[512];
        progress_line(p->what, p->unit, p->done, p->total, now - p->start, p->note, line, sizeof(line));
        /* One column short of the width: a line that fills it wraps, and \r no longer reaches its start. */
        int width = p->columns > 1 ? p->columns - 1 : (int)sizeof(line);
        fprintf(stderr, "\r%.*s\033[K", width, line);
        fflush(stderr);
        p->drawn = now;
}

void progress_start(progress *p, const char *what, const char *unit, size_t total) {
        struct winsize ws;
        *p = (progress){ .what = what, .unit = unit, .total = total, .on = isatty(STDERR_FILENO) == 1 };
        if (!p->on)
                return;
        if (ioctl(STDERR_FILENO, TIOCGWINSZ, &ws) == 0)
                p->columns = ws.ws_col;
        p->start = clock_mono_usec();
        draw(p, p->start);
}

void progress_update(progress *p, size_t done, const char *note) {
        if (!p->on)
                return;
        int64_t now = clock_mono_usec();
        bool new_note = note && strcmp(note, p->note) != 0;
        p->done = done;
        if (new_note)
                snprintf(p->note, sizeof(p->note), "%s", note);
        if (new_note || progress_due(p->drawn, now, done, p->total))
                draw(p, now);
}

void progress_hook(void *arg, size_t done) { progress_update(arg, done, NULL); }

void progress_end(progress *p) {
        if (p->on)
                fputs("\r\033[K", stderr);
        p->on = false;
}
