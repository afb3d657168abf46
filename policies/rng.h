/* rng.h - splitmix64, the one random generator of colony's policies and workloads: small, fast,
 * and the same sequence on every machine. Its whole state is a uint64_t the caller owns, so a
 * policy that draws (Greedy's ties, LoTES's roulette) takes the state as an input and keeps no
 * global. */
#pragma once
#include <stdint.h>

/* The next 64 random bits; advances *state. */
static inline uint64_t sched_rng_next(uint64_t *state) {
        uint64_t z = (*state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
}

/* Uniform in (0, 1]; advances *state. */
static inline double sched_rng_uniform(uint64_t *state) {
        return ((double)(sched_rng_next(state) >> 11) + 1.0) / 9007199254740992.0;
}
