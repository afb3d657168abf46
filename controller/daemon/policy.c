/* policy.c - the live policy's side of the server (see policy.h). */
#include "policy.h"
#include "coloc_dispatch.h"
#include <errno.h>
#include <stdio.h>
#include <string.h>

bool server_places_by_alpha(const ctl_server *srv) {
        const sched_dispatcher *d = srv->state.cfg.dispatcher;
        return d && strcmp(sched_dispatcher_name(d), "coloc") == 0;
}

void server_set_alpha(ctl_server *srv, alpha_matrix *m) {
        if (server_places_by_alpha(srv) &&
            coloc_dispatcher_set_alpha(srv->state.cfg.dispatcher, (const char *const *)m->types, m->n, m->alpha) < 0) {
                log_error("coloc: out of memory: still placing by interference matrix version %llu",
                          (unsigned long long)srv->alpha.version);
                alpha_free(m);
                return;
        }
        alpha_free(&srv->alpha);
        srv->alpha = *m;
        *m = (alpha_matrix){ 0 };
        if (server_places_by_alpha(srv))
                snprintf(srv->policy_status, sizeof(srv->policy_status),
                         "coloc: interference matrix version %llu, %zu types; other types count alpha 1",
                         (unsigned long long)srv->alpha.version, srv->alpha.n);
}

const char *server_policy_status(const ctl_server *srv) {
        return srv->lotes ? ctl_lotes_status(srv->lotes) : srv->policy_status[0] ? srv->policy_status : NULL;
}

int server_load_alpha(ctl_server *srv) {
        alpha_matrix m = { 0 };
        int r = jobstore_get_alpha(srv->store, 0, &m);
        if (r == -ENOENT) {
                if (server_places_by_alpha(srv))
                        snprintf(srv->policy_status, sizeof(srv->policy_status),
                                 "coloc: no interference matrix stored (colony measure): every alpha counts 1");
                log_info("%s", server_places_by_alpha(srv) ? srv->policy_status : "no interference matrix stored");
                return 0;
        }
        if (r < 0)
                return log_errno(LOG_ERR, r, "reading the interference matrix");
        server_set_alpha(srv, &m);
        log_info("interference matrix version %llu loaded: %zu types", (unsigned long long)srv->alpha.version,
                 srv->alpha.n);
        return 0;
}
