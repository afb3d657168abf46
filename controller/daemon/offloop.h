/* offloop.h - one call at a time on a thread of its own, its result handed back to the loop.
 *
 * The controller's loop must not wait for the disk: an fdatasync of the job store's log takes
 * 0.2 to 270 ms here, a checkpoint 35 to 110 ms. An offloop is a thread that waits for a
 * request, runs fn(arg) and reports its return value through an eventfd, so that done runs on
 * the loop like any other handler. One call at a time: offloop_start while one is running is
 * refused, as the callers keep one in flight and gather what came meanwhile into the next
 * (a sync started later covers every write made before it). The thread lives as long as the
 * offloop, so a request costs a wake-up, not a thread's creation. */
#pragma once
#include <stdbool.h>
#include <systemd/sd-event.h>

typedef struct offloop offloop;

/* What the thread runs: returns 0 or -errno, which done receives. */
typedef int (*offloop_fn)(void *arg);
/* What the loop runs when fn has returned r; it may call offloop_start again. */
typedef void (*offloop_done)(void *userdata, int r);

/* Start the thread, named name (at most 15 characters, for top and perf), with an eventfd
 * source on event. Returns 0 and *out (offloop_free), or -errno. */
int offloop_new(sd_event *event, const char *name, offloop_fn fn, offloop_done done, void *userdata, offloop **out);
/* Have the thread run fn(arg) (arg borrowed until done runs). Returns 0, or -EBUSY while a call
 * is in flight (see offloop_busy). */
int offloop_start(offloop *o, void *arg);
/* Whether a call was started and its done has not run yet. */
bool offloop_busy(const offloop *o);
/* Wait for the call started, if any (its done does not run), stop the thread and free o. NULL is fine. */
void offloop_free(offloop *o);
