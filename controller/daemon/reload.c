/* reload.c - the config file read again on SIGHUP or `colony reload`: departments, fairness,
 * time and running limits, sync_commits, who may use the remote listener (see server.h). */
#include "server.h"
#include "agentlink.h"
#include "commit.h"
#include "options.h"
#include "remote.h"
#include <errno.h>
#include <stdio.h>

int server_reload(ctl_server *srv, char *err, size_t errlen) {
        config cfg = { 0 };
        depts fresh;
        options o = OPTIONS_UNSET;
        int fairness = srv->state.cfg.fairness, r;
        o.fairness = srv->fairness_arg;
        o.config = srv->config_path;
        if (!srv->config_path)
                return snprintf(err, errlen, "the controller was started without --config"), -ENOENT;
        if ((r = options_apply_config(&o, &cfg, err, errlen)) < 0 ||
            (r = depts_from_config(&cfg, &fresh, err, errlen)) < 0) {
                config_free(&cfg);
                return r;
        }
        if (o.fairness && options_parse_fairness(o.fairness, &fairness) < 0) {
                snprintf(err, errlen, "%s: controller.fairness: '%s' is not hdrf, mch, drf, wdrf, c-ch, m-ch or none",
                         cfg.path, o.fairness);
                depts_free(&fresh);
                config_free(&cfg);
                return -EINVAL;
        }
        remote_cfg hosts = { 0 }; /* the listener stays; who may use it is read again */
        if (srv->remote &&
            (r = remote_cfg_init(&hosts, o.submit_hosts, o.trusted_root_hosts, o.munge_socket, err, errlen)) < 0) {
                depts_free(&fresh);
                config_free(&cfg);
                return r;
        }
        config_free(&cfg);
        if ((r = jobstore_set_sync(srv->store, o.sync_commits != 0)) < 0) {
                depts_free(&fresh);
                remote_cfg_free(&hosts);
                return snprintf(err, errlen, "the database refused sync_commits"), r;
        }
        if (srv->remote) {
                remote_cfg_free(&srv->remote->cfg);
                srv->remote->cfg = hosts;
        }
        depts_free(&srv->depts);
        srv->depts = fresh; /* the state machine's cfg.depts points here */
        srv->state.cfg.default_time_usec = o.default_time_usec;
        srv->state.cfg.max_time_usec = o.max_time_usec;
        srv->state.cfg.max_running_per_user = (size_t)o.max_running_per_user;
        srv->state.cfg.max_running_per_dept = (size_t)o.max_running_per_dept;
        srv->state.cfg.max_mcpu_per_user = o.max_mcpu_per_user;
        if ((r = ctl_set_depts(&srv->state, fairness)) < 0)
                return snprintf(err, errlen, "out of memory: the fair order is off"), r;
        log_info("reloaded %s: %zu departments, fairness %s", srv->config_path, srv->depts.n,
                 fairness < 0 ? "none" : fair_algo_name(fairness));
        server_send_weights(srv);
        server_schedule(srv);
        return 0;
}
