/* client.h - finding the controller and asking it one thing: one connection, one request, one
 * reply (docs/protocol.md, "Client link"). */
#pragma once
#include "cli.h"
#include <cjson/cJSON.h>
#include <stddef.h>
#include <stdint.h>

/* The directory a local cluster lives in when no --dir is given: /run/colony for root, else
 * $XDG_RUNTIME_DIR/colony, else /tmp/colony-<uid>. Writes it to buf; returns 0 or -ENAMETOOLONG. */
int client_default_dir(char *buf, size_t len);

/* The client config file (its [client] section: controller, tls_ca, munge_socket), unless
 * $COLONY_CONFIG names another. */
#define CLIENT_CONFIG_PATH "/etc/colony/colony.conf"
/* How an address names a controller on another host: CLIENT_REMOTE_PREFIX "host:port". */
#define CLIENT_REMOTE_PREFIX "tcp://"

/* The controller's address for this invocation: --socket, else <--dir>/controller.sock, else
 * $COLONY_SOCKET, else (another host) CLIENT_REMOTE_PREFIX and $COLONY_CONTROLLER, else the
 * client config's controller, else the default directory's socket. Every function below that
 * takes a socket_path takes such an address. Returns 0, -ENAMETOOLONG, or -EINVAL for a config
 * file that does not parse (its line in err, when err is not NULL). */
int client_socket_path(const cli *c, char *buf, size_t len);

/* Connect to the controller at addr: its Unix socket, or, for CLIENT_REMOTE_PREFIX, through
 * colony-connect (TLS, MUNGE), whose failures to connect or authenticate come back as an
 * "error" message in place of the first reply. Returns a blocking, close-on-exec fd the caller
 * closes, or -errno (-ENOENT for a remote address: colony-connect is not found). */
int client_connect(const char *addr);

/* Connect to socket_path, send req, and wait for the reply: up to timeout_ms, or forever when
 * timeout_ms < 0. Returns 0 with *reply (caller owns it) when it is of type want; otherwise
 * -errno with one line in err: -EREMOTEIO with the controller's own words for an "error"
 * reply, -ETIMEDOUT, -EINTR (a caught signal), -EBADMSG for a reply of another type, or the
 * connection's errno with the socket named. */
int client_call(const char *socket_path, const cJSON *req, const char *want, int timeout_ms, cJSON **reply, char *err,
                size_t errlen);

/* How many requests client_pipeline leaves unanswered at most. */
#define CLIENT_PIPELINE_WINDOW 2048

/* Make many requests over one connection without waiting for each reply before sending the
 * next (at most CLIENT_PIPELINE_WINDOW unanswered), so that the controller reads them in
 * batches. next(ud, &req, &tag) gives the next request (the pipeline owns it) and a tag to
 * know it by, returning 1, or 0 when there are no more, or -errno to stop (err is then the
 * caller's business). done(ud, tag, reply) gets each reply (borrowed), in request order, of any
 * type. Waits up to timeout_ms for each read. Returns 0 once every request sent was answered, the
 * first negative next returned, or another -errno with one line in err when the connection
 * failed (the requests after the last one answered may or may not have been carried out). */
int client_pipeline(const char *socket_path, int (*next)(void *ud, cJSON **req, uint64_t *tag),
                    void (*done)(void *ud, uint64_t tag, const cJSON *reply), void *ud, int timeout_ms, char *err,
                    size_t errlen);
/* client_call in two steps, for a request answered by more than one message: connect and send
 * req (returns the connected fd, which the caller closes, or -errno with err), then read each
 * message with client_next: want as client_call's, or NULL for any type but "error". Same
 * returns as client_call. */
int client_start(const char *socket_path, const cJSON *req, char *err, size_t errlen);
int client_next(int fd, const char *socket_path, const char *want, int timeout_ms, cJSON **reply, char *err,
                size_t errlen);

/* client_call for the common case: a request {"type": type} plus an optional "id". id 0 means
 * no id. Same returns. */
int client_simple(const char *socket_path, const char *type, uint64_t id, const char *want, int timeout_ms,
                  cJSON **reply, char *err, size_t errlen);

/* For a listing command: send req (consumed) to this invocation's controller, and print the
 * reply of type want with print, or as JSON with --json. When cursor is not NULL the reply is
 * a page of "jobs" with "more": the request is repeated with cursor set to the last job's id
 * until the listing ends, and all pages are printed as one. Returns 0 or EXIT_FAIL (the error
 * printed). */
int client_print(const cli *c, cJSON *req, const char *want, const char *cursor, int timeout_ms,
                 int (*print)(const cli *c, const cJSON *reply));
/* client_print's request and its pages, without the printing: the whole reply into *reply
 * (the caller owns it). Returns 0 or EXIT_FAIL (the error printed); req is consumed. */
int client_fetch(const cli *c, cJSON *req, const char *want, const char *cursor, int timeout_ms, cJSON **reply);

/* For a command with no operands: parse its options (the common ones only), send
 * {"type": type} and print the reply of type want as client_print does. Returns an exit status. */
int client_run_plain(cli *c, int argc, char **argv, const char *type, const char *want, int timeout_ms,
                     int (*print)(const cli *c, const cJSON *reply));
