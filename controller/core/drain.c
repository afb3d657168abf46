/* drain.c - nodes chosen by jobs and drained by root (state.h, "nodes chosen and drained"). */
#include "state.h"
#include "state_int.h"
#include "nodesel.h"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Replace *dst by a copy of src (NULL: none). Returns 0 or -ENOMEM. */
static int replace_str(char **dst, const char *src) {
        char *copy = NULL;
        if (src && !(copy = strdup(src)))
                return -ENOMEM;
        free(*dst);
        *dst = copy;
        return 0;
}

int ctl_node_set_features(ctl_state *st, ctl_node *n, const char *features) {
        int r = replace_str(&n->features, features && *features ? features : NULL);
        ctl_schedule_dirty(st); /* a pending job may now have a node, or no longer */
        return r;
}

int ctl_node_set_gpu_type(ctl_state *st, ctl_node *n, const char *features, const char *gpu_type) {
        char *all = NULL;
        int r;
        if (!gpu_type || !*gpu_type) {
                (void)replace_str(&n->gpu_type, NULL); /* frees, allocates nothing */
                return ctl_node_set_features(st, n, features);
        }
        if (nodesel_list_has(features, gpu_type))
                all = strdup(features);
        else if (asprintf(&all, "%s%s%s", features && *features ? features : "", features && *features ? "," : "",
                          gpu_type) < 0)
                all = NULL;
        if (!all || replace_str(&n->gpu_type, gpu_type) < 0) {
                free(all);
                return -ENOMEM;
        }
        r = ctl_node_set_features(st, n, all);
        free(all);
        return r;
}

int ctl_node_drain(ctl_state *st, const char *name, const char *reason, ctl_node **out) {
        ctl_node *n = ctl_find_node(st, name);
        if (!n) {
                /* A drain read back at start-up, before its agent's hello: the node is created down,
                 * as ctl_restore does for a running job's node. */
                if (!(n = ctl_node_create(st, name)))
                        return -ENOMEM;
        }
        if (replace_str(&n->drain_reason, reason && *reason ? reason : "drained") < 0)
                return -ENOMEM;
        ctl_node_sync(st, n);
        /* the log's alone: a drain read back at start-up comes here too, and is no new event */
        ctl_report(st, &(ctl_event){ .node = n->name, .what = "node-drained", .reason = n->drain_reason }, false);
        *out = n;
        return 0;
}

int ctl_node_resume(ctl_state *st, ctl_node *n) {
        if (!n->drain_reason)
                return -EALREADY;
        free(n->drain_reason);
        n->drain_reason = NULL;
        ctl_node_sync(st, n);
        ctl_report(st, &(ctl_event){ .node = n->name, .what = "node-resumed" }, false);
        return 0;
}

int ctl_check_nodesel(ctl_state *st, const job_spec *spec, char err[PROTO_ERRLEN]) {
        const char *s = spec->nodelist;
        while (s && *s) {
                size_t len = strcspn(s, ",");
                char name[NODESEL_MAX + 1];
                snprintf(name, sizeof(name), "%.*s", (int)len, s);
                if (!ctl_find_node(st, name)) {
                        snprintf(err, PROTO_ERRLEN, "nodelist: no node named %.64s", name);
                        return -EINVAL;
                }
                s += len + (s[len] == ',');
        }
        return 0;
}

bool ctl_node_selected(const ctl_node *n, const job_spec *spec) {
        return nodesel_eligible(spec->constraint, spec->nodelist, spec->exclude, n->name, n->features);
}

bool ctl_spec_selective(const job_spec *spec) {
        return spec->constraint || spec->nodelist || spec->exclude || spec->exclusive;
}
