/* clients_family.c - job families for the CLI (docs/protocol.md, "Job families"): the family
 * request, the family section of show, a listed job's family id. Computed per request from the
 * family index (controller/core/family.h), in O(the family's members). */
#include "clients.h"
#include <errno.h>
#include <stdio.h>

void client_family(ctl_server *srv, conn *c, const cJSON *msg) {
        static const char *const id_only[] = { "id", NULL };
        char err[PROTO_ERRLEN];
        uint64_t id;
        cJSON *fam = NULL, *out;
        if (client_request_id(c, msg, id_only, &id) < 0)
                return;
        const job *j = ctl_job_named(&srv->state, id);
        int r = j ? ctl_family_json(&srv->state, j, server_now(), &fam) : -ENOENT;
        if (r < 0 || !fam) {
                if (r == -ENOENT)
                        snprintf(err, sizeof(err), "no job %llu", (unsigned long long)id);
                else if (r < 0)
                        snprintf(err, sizeof(err), "out of memory");
                else
                        snprintf(err, sizeof(err), "job %llu is in no family: no dependency links it to another job",
                                 (unsigned long long)id);
                client_reply_error(c, err);
                return;
        }
        if (!(out = proto_new("family")) || !cJSON_AddItemToObject(out, "family", fam)) {
                cJSON_Delete(out);
                cJSON_Delete(fam);
                client_reply_error(c, "out of memory");
                return;
        }
        client_reply(c, out);
}

int client_family_add(ctl_server *srv, const job *j, cJSON *reply) {
        cJSON *fam = NULL;
        int r = ctl_family_json(&srv->state, j, server_now(), &fam);
        if (r < 0 || !fam)
                return r;
        return cJSON_AddItemToObject(reply, "family", fam) ? 0 : (cJSON_Delete(fam), -ENOMEM);
}

int client_family_id_add(ctl_server *srv, const job *j, cJSON *rec) {
        uint64_t id = ctl_family_id(&srv->state, j);
        return !id || cJSON_AddNumberToObject(rec, "family", (double)id) ? 0 : -ENOMEM;
}
