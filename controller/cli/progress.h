/* progress.h - one self-updating status line on stderr for the CLI's long work (colony sim,
 * colony measure): percent, items done of all, time elapsed and an estimate of the time left.
 * Drawn only when stderr is a terminal, at most every PROGRESS_PERIOD_USEC; nothing at all when
 * it is a pipe or a file, so logs and scripts see the results alone. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROGRESS_PERIOD_USEC 100000 /* about 10 redraws a second at most */
#define PROGRESS_NOTE_MAX    96

typedef struct progress {
        const char *what, *unit; /* "colony sim", "jobs": static strings */
        size_t total, done;
        bool on;              /* stderr is a terminal */
        int columns;          /* the terminal's width when started; 0: unknown */
        int64_t start, drawn; /* CLOCK_MONOTONIC microseconds: start, last redraw (0: never) */
        char note[PROGRESS_NOTE_MAX];
} progress;

/* Start a line for total items of unit (what and unit must outlive p); draws the first line
 * when stderr is a terminal. */
void progress_start(progress *p, const char *what, const char *unit, size_t total);
/* done items are finished, now working on note (NULL: the same as before); redraws if due
 * (progress_due) or at once for a new note: notes are for steps slow enough to be worth seeing. */
void progress_update(progress *p, size_t done, const char *note);
/* progress_update(arg, done, NULL), as a callback for code that knows nothing of progress
 * (sim_config.progress). */
void progress_hook(void *arg, size_t done);
/* Erase the line, leaving the terminal as it was before progress_start. */
void progress_end(progress *p);

/* The line itself (pure): "what: 45% (4500/10000 unit), 12.0 s, about 14.7 s left: note",
 * the estimate from the mean rate so far, none before the first item is done. Returns buf. */
char *progress_line(const char *what, const char *unit, size_t done, size_t total, int64_t elapsed_usec,
                    const char *note, char *buf, size_t len);
/* Whether a redraw is due at now for a line last drawn at drawn (0: never): the first one, the
 * last item, or PROGRESS_PERIOD_USEC since the previous. */
bool progress_due(int64_t drawn, int64_t now, size_t done, size_t total);
