/* agent-state.c - the state rules a job's end is judged by (docs/protocol.md, "State rules"). */
#include "agent-state.h"
#include "units.h"
#include <stdio.h>
#include <string.h>

job_state agent_state_decide(const job_result *r, bool cancelled) {
        bool clean_exit = r->signal == 0 && r->exit_code == 0;

        /* An OOM kill that the main process survived with status 0 did not end the job. */
        if (r->oom_kills > 0 && !clean_exit)
                return JOB_OOM_KILLED;
        if (cancelled)
                return JOB_CANCELLED;
        return clean_exit ? JOB_COMPLETED : JOB_FAILED;
}

/* "killed by signal 9 (SIGKILL)", or without the name when libc does not know the signal. */
static void format_signal(int sig, char *buf, size_t len) {
        const char *abbrev = sigabbrev_np(sig);

        if (abbrev)
                snprintf(buf, len, "killed by signal %d (SIG%s)", sig, abbrev);
        else
                snprintf(buf, len, "killed by signal %d", sig);
}

const char *agent_state_error(job_state s, const job_result *r, int64_t mem_limit, char *buf, size_t len) {
        char size[32], sig[64];

        switch (s) {
        case JOB_OOM_KILLED:
                if (mem_limit > 0)
                        snprintf(buf, len, "killed by the OOM killer (memory limit %s)",
                                 units_format_size(mem_limit, size, sizeof(size)));
                else
                        snprintf(buf, len, "killed by the OOM killer");
                return buf;
        case JOB_CANCELLED:
                if (r->signal == 0) {
                        snprintf(buf, len, "cancelled");
                        return buf;
                }
                format_signal(r->signal, sig, sizeof(sig));
                snprintf(buf, len, "cancelled: %s", sig);
                return buf;
        case JOB_FAILED:
                if (r->signal == 0)
                        return NULL;
                format_signal(r->signal, buf, len);
                return buf;
        default: return NULL;
        }
}
