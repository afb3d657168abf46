/* cgkill.c - kill a job's cgroup a round per turn of the loop (see cgkill.h). */
#include "cgkill.h"
#include <errno.h>
#include <stdlib.h>
#include <time.h>

#define ROUND_USEC 10000 /* between rounds: the kills of one land before the next looks */
/* The rounds' timer wakes on time: with sd-event's default accuracy (0: 250 ms) the first
 * round, and so the end of every job, waited up to 250 ms (strace -tt: 249 ms in epoll_wait
 * between a shepherd's exit and the job's end). */
#define ROUND_ACCURACY_USEC 1

typedef struct cgkill {
        cg_backend *cg;
        const char *job;
        uint64_t deadline; /* CLOCK_MONOTONIC, usec */
        cgkill_done done;
        void *userdata;
} cgkill;

static int on_round(sd_event_source *s, uint64_t usec, void *userdata) {
        cgkill *k = userdata;
        int r = cg_job_kill(k->cg, k->job, 0);

        if (r == -ETIMEDOUT && usec < k->deadline) {
                r = sd_event_source_set_time(s, usec + ROUND_USEC);
                if (r >= 0 && (r = sd_event_source_set_enabled(s, SD_EVENT_ONESHOT)) >= 0)
                        return 0;
        }
        (void)sd_event_source_set_enabled(s, SD_EVENT_OFF);
        k->done(r, k->userdata);
        return 0;
}

int cgkill_start(sd_event *e, cg_backend *cg, const char *job, int timeout_ms, bool round_done, cgkill_done done,
                 void *userdata, sd_event_source **out) {
        cgkill *k = malloc(sizeof(*k));
        uint64_t now;
        int r;

        if (!k)
                return -ENOMEM;
        *k = (cgkill){ .cg = cg, .job = job, .done = done, .userdata = userdata };
        if ((r = sd_event_now(e, CLOCK_MONOTONIC, &now)) < 0 ||
            (r = sd_event_add_time(e, out, CLOCK_MONOTONIC, round_done ? now + ROUND_USEC : now, ROUND_ACCURACY_USEC,
                                   on_round, k)) < 0) {
                free(k);
                return r;
        }
        k->deadline = now + (uint64_t)timeout_ms * 1000;
        (void)sd_event_source_set_destroy_callback(*out, free);
        return 0;
}
