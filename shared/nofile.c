/* nofile.c - the open files limit (see nofile.h). */
#include "nofile.h"
#include <errno.h>

int nofile_raise(struct rlimit *before) {
        struct rlimit rl;

        *before = (struct rlimit){0, 0};
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return -errno;
        *before = rl;
        if (rl.rlim_cur == rl.rlim_max)
                return 0;
        rl.rlim_cur = rl.rlim_max;
        return setrlimit(RLIMIT_NOFILE, &rl) < 0 ? -errno : 0;
}
