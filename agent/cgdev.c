/* cgdev.c - the check of a job's denied devices, the same in both cgroup modes. */
#include "cgdev.h"

#include <errno.h>
#include <stdio.h>

/* The kernel's dev_t: 12 bits of major, 20 of minor (MINORBITS). */
#define CGDEV_MAJOR_MAX 0xfffu
#define CGDEV_MINOR_MAX 0xfffffu

int cgdev_check(const char *job, const cg_device *deny, size_t n, char *err, size_t errlen) {
        for (size_t i = 0; i < n; i++) {
                const cg_device *d = &deny[i];

                if ((d->type != 'c' && d->type != 'b') || d->major > CGDEV_MAJOR_MAX || d->minor > CGDEV_MINOR_MAX) {
                        snprintf(err, errlen, "job %s: bad device to deny: type '%c' (want c or b), %u:%u", job,
                                 d->type > ' ' && d->type < 127 ? d->type : '?', d->major, d->minor);
                        return -EINVAL;
                }
        }
        return 0;
}
