/* evlog.c - a transition's log line (see evlog.h). */
#include "evlog.h"
#include "log.h"
#include "proto.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <syslog.h>

static bool is(const ctl_event *e, const char *what) { return strcmp(e->what, what) == 0; }

static const char *or_dash(const char *s) { return s ? s : "-"; }

/* A submitted job's line, with its array's place when it has one. */
static void submitted(const job *j, char *buf, size_t len) {
        const char *name = or_dash(j->spec.name); /* escaped by log.c */
        if (j->array_first)
                snprintf(buf, len, "job=%llu user=%s state=pending reason=submitted array=%llu index=%u name=%s",
                         (unsigned long long)j->id, or_dash(j->user), (unsigned long long)j->array_first,
                         j->array_index, name);
        else
                snprintf(buf, len, "job=%llu user=%s state=pending reason=submitted name=%s", (unsigned long long)j->id,
                         or_dash(j->user), name);
}

/* The line of an event of the job e->job names. Returns LOG_INFO, or -ENOENT for another kind. */
static int job_line(const ctl_event *e, char *buf, size_t len) {
        const job *j = e->job;
        unsigned long long id = (unsigned long long)e->job_id;
        const char *node = or_dash(e->node), *reason = or_dash(e->reason);
        job_state s;
        if (is(e, "submitted"))
                submitted(j, buf, len);
        else if (is(e, "placed"))
                snprintf(buf, len, "job=%llu node=%s state=running reason=placed policy=%s attempt=%u", id, node,
                         reason, ctl_job_attempt(j));
        else if (is(e, "started"))
                snprintf(buf, len, "job=%llu node=%s started", id, node);
        else if (is(e, "requeued"))
                snprintf(buf, len, "job=%llu node=%s state=pending reason=%s", id, node, reason);
        else if (is(e, "cancel-requested"))
                snprintf(buf, len, "job=%llu node=%s cancel requested uid=%u", id, node, (unsigned)e->uid);
        else if (is(e, "held") || is(e, "released") || is(e, "updated"))
                snprintf(buf, len, "job=%llu %s uid=%u", id, e->what, (unsigned)e->uid);
        else if (is(e, "kept-pending"))
                snprintf(buf, len, "job=%llu %s: kept pending (kill_invalid_depend = no)", id, reason);
        else if (job_state_from_name(e->what, &s) == 0 && job_state_is_terminal(s))
                snprintf(buf, len, "job=%llu node=%s state=%s%s%s", id, node, e->what, e->reason ? " reason=" : "",
                         e->reason ? e->reason : "");
        else
                return -ENOENT;
        return LOG_INFO;
}

/* The line of a node's event (or of a job colony holds no record of). Returns its priority, or
 * -ENOENT for another kind. */
static int node_line(ctl_state *st, const ctl_event *e, char *buf, size_t len) {
        const ctl_node *n = e->node ? ctl_find_node(st, e->node) : NULL;
        const char *node = or_dash(e->node), *reason = or_dash(e->reason);
        if (is(e, "node-up") && n)
                snprintf(buf, len, "node=%s state=up mcpu=%lld mem=%lld cgroup=%s:%s reason=%s", node,
                         (long long)n->capacity.mcpu, (long long)n->capacity.mem, or_dash(n->cgroup_mode),
                         or_dash(n->cgroup_root), reason);
        else if (is(e, "node-drained") && n)
                snprintf(buf, len, "node=%s drained reason=%s running=%zu", node, reason, n->running);
        else if (is(e, "node-resumed"))
                snprintf(buf, len, "node=%s resumed", node);
        else if (is(e, "stray-ended"))
                snprintf(buf, len, "job=%llu node=%s the stray has ended", (unsigned long long)e->job_id, node);
        else if (is(e, "array-cancelled"))
                snprintf(buf, len, "array=%llu state=cancelled tasks=%zu not made yet uid=%u",
                         (unsigned long long)e->job_id, e->count, (unsigned)e->uid);
        else if (is(e, "node-down"))
                snprintf(buf, len, "node=%s state=down reason=%s", node, reason);
        else if (is(e, "node-disconnected"))
                snprintf(buf, len, "node=%s state=down reason=disconnected %s", node, reason);
        else if (is(e, "node-not-responding"))
                snprintf(buf, len, "node=%s state=not-responding reason=%s", node, reason);
        else
                return -ENOENT;
        return is(e, "node-down") || is(e, "node-disconnected") || is(e, "node-not-responding") ? LOG_WARNING
                                                                                                : LOG_INFO;
}

int evlog_format(ctl_state *st, const ctl_event *e, char *buf, size_t len) {
        int prio = e->job ? job_line(e, buf, len) : -ENOENT;
        if (prio == -ENOENT)
                prio = node_line(st, e, buf, len);
        if (prio < 0 && len)
                *buf = '\0';
        return prio;
}

void evlog_write(ctl_state *st, const ctl_event *e) {
        char line[2 * PROTO_ERRLEN];
        int prio = evlog_format(st, e, line, sizeof(line));
        if (prio >= 0)
                log_msg(prio, "%s", line);
}
