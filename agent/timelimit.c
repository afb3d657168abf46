/* timelimit.c - a job's time limit (timelimit.h). */
#include "timelimit.h"
#include "log.h"
#include "units.h"
#include <errno.h>

/* sd-event would otherwise coalesce the timer up to 250 ms late */
#define LIMIT_ACCURACY_USEC 10000

static int on_limit(sd_event_source *s, uint64_t usec, void *userdata) {
        agent_job *j = userdata;
        char limit[32];
        (void)s;
        (void)usec;

        j->limit = sd_event_source_unref(j->limit);
        if (j->cancelled || j->ending || j->timed_out)
                return 0;
        j->timed_out = true;
        (void)agent_job_save(j); /* so that an agent restarted meanwhile still calls it timeout */
        log_info(JOB_FMT ": time limit %s reached, SIGTERM now, SIGKILL in %d s", JOB_ARGS(j),
                 units_format_time(j->time_limit_usec, limit, sizeof(limit)), j->agent->cfg.kill_wait_s);
        agent_job_terminate(j, (int64_t)j->agent->cfg.kill_wait_s * 1000);
        return 0;
}

int timelimit_arm(agent_job *j) {
        int r;

        if (j->time_limit_usec <= 0 || j->timed_out)
                return 0;
        /* CLOCK_REALTIME, as start_usec: a restarted agent computes the same end from the record */
        uint64_t end = (uint64_t)((j->exec_usec ? j->exec_usec : j->start_usec) + j->time_limit_usec);
        if (j->limit)
                return sd_event_source_set_time(j->limit, end);
        r = sd_event_add_time(j->agent->event, &j->limit, CLOCK_REALTIME, end, LIMIT_ACCURACY_USEC, on_limit, j);
        if (r < 0)
                log_errno(LOG_WARNING, r, JOB_FMT ": cannot time its limit, it runs without", JOB_ARGS(j));
        return r < 0 ? r : 0;
}
