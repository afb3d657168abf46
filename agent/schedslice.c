/* schedslice.c - the calling thread's requested time slice (see schedslice.h). glibc 2.36 has
 * no sched_setattr wrapper: raw system calls, which the launch's child may make (its ids'
 * changes are raw for the same reason, launch.c). */
#include "schedslice.h"

#include <errno.h>
#include <linux/sched.h>
#include <sched.h>
#include <sys/syscall.h>
#include <unistd.h>

/* The kernel's struct sched_attr, of its first published size (48 bytes), which every kernel
 * since 3.14 takes. */
typedef struct slice_attr {
        uint32_t size, policy;
        uint64_t flags;
        int32_t nice;
        uint32_t priority;
        uint64_t runtime, deadline, period;
} slice_attr;

int sched_slice_set(uint64_t ns) {
        slice_attr a = { 0 };

        if (syscall(SYS_sched_getattr, 0, &a, sizeof(a), 0) < 0)
                return -errno;
        if (a.policy != SCHED_OTHER && a.policy != SCHED_BATCH && a.policy != SCHED_IDLE)
                return -EINVAL;
        a.size = sizeof(a);
        a.flags = 0;
        a.runtime = ns;
        a.deadline = a.period = 0;
        return syscall(SYS_sched_setattr, 0, &a, 0) < 0 ? -errno : 0;
}
