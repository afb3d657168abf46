/* clock.c - the monotonic and real-time clocks in milli- and microseconds (see clock.h). */
#include "clock.h"
#include <time.h>

/* clock_gettime cannot fail for these clocks on Linux: its result is not checked. */
static int64_t usec_of(clockid_t id) {
        struct timespec ts;
        clock_gettime(id, &ts);
        return (int64_t)ts.tv_sec * 1000000 + ts.tv_nsec / 1000;
}

int64_t clock_mono_ms(void) { return usec_of(CLOCK_MONOTONIC) / 1000; }

int64_t clock_mono_usec(void) { return usec_of(CLOCK_MONOTONIC); }

int64_t clock_real_usec(void) { return usec_of(CLOCK_REALTIME); }
