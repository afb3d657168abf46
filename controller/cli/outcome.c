/* outcome.c - a job's end as an exit status and as a short phrase. */
#include "outcome.h"
#include "format.h"
#include <signal.h>
#include <stdio.h>

#define EXIT_NOT_STARTED 127 /* what a shell reports for a command it could not run */

int outcome_exit_status(const job *j) {
        switch (j->state) {
        case JOB_PENDING:
        case JOB_RUNNING: return -1;
        case JOB_COMPLETED: return 0;
        case JOB_LOST: return 1;
        default: break;
        }
        if (j->result.signal > 0 && j->result.signal < 128)
                return 128 + j->result.signal;
        /* Cancelled before it ran, or it caught the SIGTERM and exited: still a cancellation. */
        if (j->state == JOB_CANCELLED)
                return 128 + SIGTERM;
        if (j->start_usec == 0)
                return EXIT_NOT_STARTED;
        /* Failed or OOM-killed with an exit code; 0 would claim success it did not have. */
        return j->result.exit_code > 0 && j->result.exit_code < 256 ? j->result.exit_code : 1;
}

char *outcome_describe(const job *j, char *buf, size_t len) {
        if (!job_state_is_terminal(j->state))
                snprintf(buf, len, "-");
        else if (j->state == JOB_LOST)
                snprintf(buf, len, "unknown");
        else if (j->result.signal > 0)
                fmt_signal(j->result.signal, buf, len);
        else if (j->start_usec == 0 && j->state != JOB_COMPLETED)
                snprintf(buf, len, "not started");
        else
                snprintf(buf, len, "exit %d", j->result.exit_code);
        return buf;
}
