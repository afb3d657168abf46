/* policy.h - the live policy's side of the server: whether it places by the interference matrix
 * (coloc), the matrix it has, and the one line its state reads as (policy.c). */
#pragma once
#include "server.h"

/* Whether the policy is the colocation dispatcher, which places by the interference matrix. */
bool server_places_by_alpha(const ctl_server *srv);
/* Take m (zeroed) as the latest interference matrix, and give it to a coloc dispatcher. */
void server_set_alpha(ctl_server *srv, alpha_matrix *m);
/* One line on the policy's state (a LoTES plan, or first-fit until one), or NULL. */
const char *server_policy_status(const ctl_server *srv);
/* The latest interference matrix from the store, for alpha_get and policy = coloc. Returns 0 or
 * -errno (logged). */
int server_load_alpha(ctl_server *srv);
