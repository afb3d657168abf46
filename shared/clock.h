/* clock.h - the time in the units colony counts in: the monotonic clock for durations and
 * deadlines, the real-time clock for what users read (jobs' times). One place instead of a
 * private wrapper per file. */
#pragma once
#include <stdint.h>

/* CLOCK_MONOTONIC in milliseconds. */
int64_t clock_mono_ms(void);
/* CLOCK_MONOTONIC in microseconds. */
int64_t clock_mono_usec(void);
/* CLOCK_REALTIME in microseconds since the epoch. */
int64_t clock_real_usec(void);
