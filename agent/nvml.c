/* nvml.c - GPUs' use through a dlopen()ed NVML (nvml.h). The few declarations below are NVML's
 * ABI as its nvml.h documents it (nvmlReturn_t 0 is NVML_SUCCESS). */
#include "nvml.h"
#include <dlfcn.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define NVML_DEFAULT "libnvidia-ml.so.1"
#define NVIDIA_MAJOR 195 /* /dev/nvidiaN's character major (NVIDIA's driver, Linux devices.txt) */

typedef struct nvml_device_st *nvml_device;
typedef struct {
        unsigned int gpu, memory; /* percent of the last sample period */
} nvml_utilization;
typedef struct {
        unsigned long long total, free, used; /* bytes */
} nvml_memory;

struct nvml {
        void *lib;
        int (*shutdown)(void);
        int (*utilization)(nvml_device, nvml_utilization *);
        int (*memory)(nvml_device, nvml_memory *);
        size_t n;
        unsigned int minor[GPUS_MAX];
        nvml_device dev[GPUS_MAX];
};

/* Resolve name in n->lib into *fn. Returns 0 or -ENOSYS with err. */
static int symbol(nvml *n, const char *name, void *fn, const char *path, char *err, size_t errlen) {
        void *p = dlsym(n->lib, name);
        if (!p) {
                snprintf(err, errlen, "NVML %s: no symbol %s", path, name);
                return -ENOSYS;
        }
        memcpy(fn, &p, sizeof(p)); /* a data pointer to a function pointer, as POSIX allows */
        return 0;
}

/* List the library's GPUs by minor number. Returns 0 or -EIO with err. */
static int list_devices(nvml *n, const char *path, char *err, size_t errlen) {
        int (*count)(unsigned int *), (*by_index)(unsigned int, nvml_device *), (*minor)(nvml_device, unsigned int *);
        unsigned int total = 0;
        int r = symbol(n, "nvmlDeviceGetCount_v2", &count, path, err, errlen);
        if (r == 0)
                r = symbol(n, "nvmlDeviceGetHandleByIndex_v2", &by_index, path, err, errlen);
        if (r == 0)
                r = symbol(n, "nvmlDeviceGetMinorNumber", &minor, path, err, errlen);
        if (r < 0)
                return r;
        if (count(&total) != 0) {
                snprintf(err, errlen, "NVML %s: cannot count its GPUs", path);
                return -EIO;
        }
        for (unsigned int i = 0; i < total && n->n < GPUS_MAX; i++)
                if (by_index(i, &n->dev[n->n]) == 0 && minor(n->dev[n->n], &n->minor[n->n]) == 0)
                        n->n++;
        return 0;
}

int nvml_open(const char *path, nvml **out, char *err, size_t errlen) {
        const char *file = path ? path : NVML_DEFAULT;
        int (*init)(void);
        nvml *n = calloc(1, sizeof(*n));
        int r;
        if (!n)
                return -ENOMEM;
        if (!(n->lib = dlopen(file, RTLD_NOW | RTLD_LOCAL))) {
                snprintf(err, errlen, "NVML %s", dlerror()); /* "FILE: why" */
                free(n);
                return -ENOENT;
        }
        r = symbol(n, "nvmlInit_v2", &init, file, err, errlen);
        if (r == 0)
                r = symbol(n, "nvmlShutdown", &n->shutdown, file, err, errlen);
        if (r == 0)
                r = symbol(n, "nvmlDeviceGetUtilizationRates", &n->utilization, file, err, errlen);
        if (r == 0)
                r = symbol(n, "nvmlDeviceGetMemoryInfo", &n->memory, file, err, errlen);
        if (r == 0 && init() != 0) {
                snprintf(err, errlen, "NVML %s: nvmlInit_v2 failed (no driver loaded?)", file);
                r = -EIO;
                n->shutdown = NULL; /* nothing to shut down */
        }
        if (r == 0)
                r = list_devices(n, file, err, errlen);
        if (r < 0) {
                nvml_close(n);
                return r;
        }
        *out = n;
        return 0;
}

/* The library's handle of the GPU at index k of g, or NULL. */
static nvml_device device_of(const nvml *n, const gpus *g, unsigned long k) {
        if (k >= g->n || g->dev[k].dev.type != 'c' || g->dev[k].dev.major != NVIDIA_MAJOR)
                return NULL;
        for (size_t i = 0; i < n->n; i++)
                if (n->minor[i] == g->dev[k].dev.minor)
                        return n->dev[i];
        return NULL;
}

int nvml_read(const nvml *n, const gpus *g, const char *list, uint32_t *util, uint64_t *mem) {
        unsigned long sum = 0, count = 0;
        uint64_t used = 0;
        for (const char *p = list; *p;) {
                char *end;
                nvml_device d = device_of(n, g, strtoul(p, &end, 10));
                nvml_utilization u;
                nvml_memory m;
                if (end == p || !d)
                        return -ENODEV;
                if (n->utilization(d, &u) != 0 || n->memory(d, &m) != 0)
                        return -EIO;
                sum += u.gpu;
                used += m.used;
                count++;
                p = *end == ',' ? end + 1 : end;
        }
        if (!count)
                return -ENODEV;
        *util = (uint32_t)(sum / count);
        *mem = used;
        return 0;
}

void nvml_close(nvml *n) {
        if (!n)
                return;
        if (n->shutdown)
                n->shutdown();
        dlclose(n->lib);
        free(n);
}
