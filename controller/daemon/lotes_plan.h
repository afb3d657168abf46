/* lotes_plan.h - `policy = lotes` in the controller: the job classes (configured in
 * [lotes_classes] or learned from the jobs submitted in a window), when to re-solve the
 * offline stages (machines joined or left, the class mix drifted), and solving them on a worker
 * thread so that the event loop never waits for GLPK. The loop swaps the plan into the
 * dispatcher (policies/lotes_live.h) when the thread's result arrives through an eventfd.
 *
 * Config (colony-controller(8)):
 *   [lotes]          window_s = 600, max_classes = 4, drift_percent = 20
 *   [lotes_classes]  NAME = CPUS MEM RUNTIME_S RATE_PER_S   (e.g. small = 0.5 64M 2 1.5)
 * With classes configured nothing is learned: jobs join the class their --type names, else
 * the one of the nearest request. */
#pragma once
#include "config.h"
#include "lotes_live.h"
#include "state.h"
#include <systemd/sd-event.h>

typedef struct ctl_lotes ctl_lotes;

typedef struct ctl_lotes_options {
        double window_s;    /* learn from the jobs submitted this long ago at most */
        size_t max_classes; /* learned classes at most */
        double drift;       /* re-solve when the mix moves by more than this (lotes_drifted) */
        lotes_mix classes;  /* configured classes; n = 0: learn them */
} ctl_lotes_options;

#define CTL_LOTES_DEFAULTS                                                                                             \
        { .window_s = 600, .max_classes = 4, .drift = 0.2 }

/* Read [lotes] and [lotes_classes] into o (absent keys leave o's values). Returns 0 or -EINVAL with
 * "path:line: reason" in err; o is to be freed with ctl_lotes_options_free either way. */
int ctl_lotes_options_from_config(const config *cfg, ctl_lotes_options *o, char *err, size_t errlen);
/* Free o's configured classes. */
void ctl_lotes_options_free(ctl_lotes_options *o);

/* Drive st's dispatcher (made by lotes_live_new, owned by st) with plans solved off the loop;
 * after each swap, call resched(userdata). Takes o's classes. Returns 0 or -errno. */
int ctl_lotes_new(sd_event *event, ctl_state *st, ctl_lotes_options *o, void (*resched)(void *), void *userdata,
                  ctl_lotes **out);
/* Start solving if the machines or the class mix changed since the current plan and no solve
 * runs now. now_usec: CLOCK_REALTIME, the jobs' clock. */
void ctl_lotes_tick(ctl_lotes *l, int64_t now_usec);
/* One line for `colony nodes` and the service status: the plan in use, or first-fit and why. */
const char *ctl_lotes_status(const ctl_lotes *l);
/* Wait for a running solve, then free l (NULL is fine). */
void ctl_lotes_free(ctl_lotes *l);
