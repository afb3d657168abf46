/* clients.h - what the files answering the colony CLI's requests share: clients.c reads them
 * and dispatches by type; clients_change.c changes jobs already submitted (cancel, hold,
 * release, update); clients_cluster.c answers about and changes the cluster (nodes, shares,
 * reload, the interference matrix, drain, resume). Each handler answers c itself. */
#pragma once
#include "server.h"

/* Accept-side ops for client connections. */
extern const conn_ops client_conn_ops;
/* Answer every client waiting for j, now that it is terminal (clients.c). */
void server_answer_waiters(ctl_server *srv, const job *j);

/* Answer c now, or after the work it queued in bulk before this request; msg is consumed. */
void client_reply(conn *c, cJSON *msg);
/* client_reply with {"type":"error"} and text. */
void client_reply_error(conn *c, const char *text);
/* Check the request's fields and read its "id". Returns 0 or -EINVAL (error already sent). */
int client_request_id(conn *c, const cJSON *msg, const char *const *fields, uint64_t *id);
/* {"type":"job","job":{...}} for j; NULL when out of memory. */
cJSON *client_job_reply(const job *j);

/* The requests of clients_change.c (docs/protocol.md, "Client link"). */
void client_cancel(ctl_server *srv, conn *c, const cJSON *msg);
void client_hold(ctl_server *srv, conn *c, const cJSON *msg);
void client_release(ctl_server *srv, conn *c, const cJSON *msg);
void client_update(ctl_server *srv, conn *c, const cJSON *msg);

/* The requests of clients_cluster.c. */
void client_nodes(ctl_server *srv, conn *c, const cJSON *msg);
void client_shares(ctl_server *srv, conn *c, const cJSON *msg);
void client_reload(ctl_server *srv, conn *c, const cJSON *msg);
void client_alpha_put(ctl_server *srv, conn *c, const cJSON *msg);
void client_alpha_get(ctl_server *srv, conn *c, const cJSON *msg);
void client_drain(ctl_server *srv, conn *c, const cJSON *msg);
void client_resume(ctl_server *srv, conn *c, const cJSON *msg);

/* The job families of clients_family.c: the family request; show's "family" section (nothing
 * when j has none) and a listed record's "family" id. Return 0 or -ENOMEM. */
void client_family(ctl_server *srv, conn *c, const cJSON *msg);
int client_family_add(ctl_server *srv, const job *j, cJSON *reply);
int client_family_id_add(ctl_server *srv, const job *j, cJSON *rec);
