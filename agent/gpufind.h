/* gpufind.h - the GPUs an agent offers: the device nodes its configuration names, or those
 * found on the host (NVIDIA's /dev/nvidiaN, AMD's /dev/dri/renderDN), each stat'ed for its
 * type and major:minor (gpus.h keeps them). */
#pragma once
#include "gpus.h"
#include <stddef.h>

/* The GPUs of list ("/dev/nvidia0,/dev/nvidia1"), in its order, into g (holding none). Each must
 * be a device node. Returns 0, or -errno with the path at fault in err. */
int gpufind_paths(gpus *g, const char *list, char *err, size_t errlen);
/* The GPUs found in the directory dev ("/dev"): nvidiaN by N, then dri/renderDN by N, into g
 * (holding none; none found is not an error). Returns 0, or -errno with err. */
int gpufind_host(gpus *g, const char *dev, char *err, size_t errlen);
