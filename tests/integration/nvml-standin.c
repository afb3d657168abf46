/* nvml-standin.c - a stand-in for NVIDIA's NVML, for nvml.sh: the few symbols colony-agent calls
 * (agent/nvml.c), answering known figures for 4 GPUs whose device minors are 240-243 (the test's
 * mknod'ed stand-in devices). GPU i (minor 240 + i) is 10 * (i + 1) % utilised and uses
 * (i + 1) * 256 MiB. Loaded through agent.nvml_library, never in place of the real library. */
#include <stdint.h>

#define NGPUS  4u
#define MINOR0 240u

typedef struct {
        unsigned int gpu, memory;
} utilization;
typedef struct {
        unsigned long long total, free, used;
} memory;

/* A device handle is its index + 1, as a pointer. */
static unsigned int index_of(const void *d) { return (unsigned int)((uintptr_t)d - 1); }

int nvmlInit_v2(void) { return 0; }
int nvmlShutdown(void) { return 0; }
int nvmlDeviceGetCount_v2(unsigned int *n) {
        *n = NGPUS;
        return 0;
}
int nvmlDeviceGetHandleByIndex_v2(unsigned int i, void **d) {
        if (i >= NGPUS)
                return 2; /* NVML_ERROR_INVALID_ARGUMENT */
        *d = (void *)(uintptr_t)(i + 1);
        return 0;
}
int nvmlDeviceGetMinorNumber(void *d, unsigned int *minor) {
        *minor = MINOR0 + index_of(d);
        return 0;
}
int nvmlDeviceGetUtilizationRates(void *d, utilization *u) {
        u->gpu = 10 * (index_of(d) + 1);
        u->memory = 5;
        return 0;
}
int nvmlDeviceGetMemoryInfo(void *d, memory *m) {
        m->total = 16ull << 30;
        m->used = (unsigned long long)(index_of(d) + 1) * (256ull << 20);
        m->free = m->total - m->used;
        return 0;
}
