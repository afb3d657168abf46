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
/* Check the request's fields. Returns 0 or -EINVAL (error already sent). */
int client_request_fields(conn *c, const cJSON *msg, const char *const *fields);
/* j's record with the reason it waits as shown (ctl_wait_shown); NULL when out of memory. */
cJSON *client_job_record(const ctl_state *st, const job *j);
/* {"type":"job","job":{...}} for j; NULL when out of memory. */
cJSON *client_job_reply(const ctl_state *st, const job *j);

/* A request's handler: answers c's request msg (docs/protocol.md, "Client link"); msg stays the
 * caller's. */
typedef void client_request_fn(ctl_server *srv, conn *c, const cJSON *msg);

/* The requests of clients_change.c. */
client_request_fn client_cancel, client_hold, client_release, client_update;

/* The requests of clients_cluster.c. */
client_request_fn client_nodes, client_shares, client_reload, client_alpha_put, client_alpha_get, client_drain,
        client_resume;

/* The job families of clients_family.c: the family request; show's "family" section (nothing
 * when j has none) and a listed record's "family" id. Return 0 or -ENOMEM. */
client_request_fn client_family;
int client_family_add(ctl_server *srv, const job *j, cJSON *reply);
int client_family_id_add(ctl_server *srv, const job *j, cJSON *rec);
