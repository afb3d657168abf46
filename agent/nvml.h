/* nvml.h - the utilisation and memory of the agent's NVIDIA GPUs, from NVIDIA's management
 * library when the host has it: libnvidia-ml.so.1 (or the file agent.nvml_library names) is
 * opened with dlopen() at start, so colony neither builds against it nor depends on it (Debian
 * ships it in non-free). Without it nothing is read, and nothing is reported. */
#pragma once
#include "gpus.h"
#include <stddef.h>
#include <stdint.h>

typedef struct nvml nvml;

/* Open the library at path (NULL: libnvidia-ml.so.1, found as dlopen finds it), initialise it
 * and list its GPUs by their device minor numbers (/dev/nvidiaN's N). Returns 0 with *out,
 * -ENOENT (with err) when the file cannot be loaded, or -errno with err when it is not a usable
 * NVML (a symbol missing, its init failing). */
int nvml_open(const char *path, nvml **out, char *err, size_t errlen);
/* The mean utilisation (percent) and the memory used (bytes, summed) of the GPUs of g whose
 * indexes list names ("0,2"). Returns 0, or -ENODEV when one of them is not an NVIDIA GPU the
 * library knows, -EIO when it cannot read one (nothing is set then). */
int nvml_read(const nvml *n, const gpus *g, const char *list, uint32_t *util, uint64_t *mem);
/* Shut the library down and close it. NULL is fine. */
void nvml_close(nvml *n);
