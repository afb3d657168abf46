/* nofile.c - the open files limit (see nofile.h). */
#include "nofile.h"
#include "log.h"
#include <errno.h>

static int raise_to_hard(struct rlimit *before) {
        struct rlimit rl;

        *before = (struct rlimit){ 0, 0 };
        if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
                return -errno;
        *before = rl;
        if (rl.rlim_cur == rl.rlim_max)
                return 0;
        rl.rlim_cur = rl.rlim_max;
        return setrlimit(RLIMIT_NOFILE, &rl) < 0 ? -errno : 0;
}

int nofile_raise(struct rlimit *before) {
        int r = raise_to_hard(before);

        if (r < 0)
                log_errno(LOG_WARNING, r, "cannot raise the open files limit from %llu",
                          (unsigned long long)before->rlim_cur);
        else if (before->rlim_cur != before->rlim_max)
                log_info("open files limit raised from %llu to %llu", (unsigned long long)before->rlim_cur,
                         (unsigned long long)before->rlim_max);
        return r;
}
