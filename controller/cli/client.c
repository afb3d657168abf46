/* client.c - finding the controller's socket and making one request of it. */
#include "client.h"
#include "config.h"
#include "devcluster.h"
#include "format.h"
#include <limits.h>
#include "net.h"
#include "proto.h"
#include <errno.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#define CONNECT_PROG "colony-connect"

#define SOCKET_NAME "controller.sock"

/* dir, or dir/name when name is not NULL, into buf. Returns 0 or -ENAMETOOLONG. */
static int path_set(char *buf, size_t len, const char *dir, const char *name) {
        int n = snprintf(buf, len, "%s%s%s", dir, name ? "/" : "", name ? name : "");

        return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int client_default_dir(char *buf, size_t len) {
        const char *runtime = getenv("XDG_RUNTIME_DIR");
        char tmp[64];

        if (geteuid() == 0)
                return path_set(buf, len, "/run/colony", NULL);
        if (runtime && runtime[0] == '/')
                return path_set(buf, len, runtime, "colony");
        snprintf(tmp, sizeof(tmp), "/tmp/colony-%u", (unsigned)geteuid());
        return path_set(buf, len, tmp, NULL);
}

/* The remote controller of $COLONY_CONTROLLER or of the client config's [client] controller, as
 * CLIENT_REMOTE_PREFIX "host:port" into buf. Returns 0, -ENOENT when neither names one,
 * -ENAMETOOLONG, or -EINVAL when the config file does not parse. */
static const char *const client_keys[] = { "client.controller", "client.tls_ca", "client.munge_socket", NULL };

static int remote_address(char *buf, size_t len) {
        const char *env = getenv("COLONY_CONTROLLER"), *path = getenv("COLONY_CONFIG"), *addr;
        config cfg = { 0 };
        char err[ERRLEN];
        int n, r;
        if (env && *env) {
                n = snprintf(buf, len, "%s%s", CLIENT_REMOTE_PREFIX, env);
                return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
        }
        r = config_load(path && *path ? path : CLIENT_CONFIG_PATH, &cfg, err, sizeof(err));
        if (r == 0)
                r = config_check_keys(&cfg, client_keys, err, sizeof(err));
        if (r == -EINVAL)
                fprintf(stderr, "colony: %s\n", err);
        addr = r == 0 ? config_get(&cfg, "client.controller") : NULL;
        n = addr ? snprintf(buf, len, "%s%s", CLIENT_REMOTE_PREFIX, addr) : 0;
        config_free(&cfg);
        if (r == -EINVAL)
                return r;
        if (!addr)
                return -ENOENT;
        return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int client_socket_path(const cli *c, char *buf, size_t len) {
        const char *env = getenv("COLONY_SOCKET");
        char dir[4096];
        int r;

        if (c->socket)
                return path_set(buf, len, c->socket, NULL);
        if (c->dir)
                return path_set(buf, len, c->dir, SOCKET_NAME);
        if (env && *env)
                return path_set(buf, len, env, NULL);
        if ((r = remote_address(buf, len)) != -ENOENT)
                return r;
        r = client_default_dir(dir, sizeof(dir));
        return r < 0 ? r : path_set(buf, len, dir, SOCKET_NAME);
}

int client_connect(const char *addr) {
        size_t plen = strlen(CLIENT_REMOTE_PREFIX);
        char prog[PATH_MAX];
        int sv[2];
        if (strncmp(addr, CLIENT_REMOTE_PREFIX, plen) != 0)
                return net_connect_unix(addr);
        if (dev_find_program(CONNECT_PROG, COLONY_LIBEXECDIR, prog, sizeof(prog)) < 0)
                return -ENOENT;
        if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, sv) < 0)
                return -errno;
        /* Twice forked, so that colony-connect is nobody's child to reap: it ends when colony closes
         * its end (or exits). */
        pid_t pid = fork();
        if (pid == 0) {
                if (fork() == 0 && dup2(sv[1], 0) == 0)
                        execl(prog, prog, addr + plen, (char *)NULL);
                _exit(0);
        }
        int r = pid < 0 ? -errno : 0;
        close(sv[1]);
        if (pid > 0)
                (void)waitpid(pid, NULL, 0);
        if (r < 0)
                close(sv[0]);
        return r < 0 ? r : sv[0];
}

/* Check that reply is of type want (any but "error" when want is NULL); turn an "error" reply
 * into its message. */
static int check_reply(const cJSON *reply, const char *want, char *err, size_t errlen) {
        const char *type = proto_type(reply), *text = NULL;
        char perr[PROTO_ERRLEN];

        if (type && (want ? strcmp(type, want) == 0 : strcmp(type, "error") != 0))
                return 0;
        if (type && strcmp(type, "error") == 0) {
                if (proto_get_str(reply, "error", &text, perr) < 0 || !text)
                        text = "the controller refused the request without saying why";
                snprintf(err, errlen, "%s", text);
                return -EREMOTEIO;
        }
        snprintf(err, errlen, "unexpected reply '%s' from the controller (want '%s')", type ? type : "?", want);
        return -EBADMSG;
}

/* Read the next message on fd into *reply. */
static int receive(int fd, const char *path, int timeout_ms, cJSON **reply, char *err, size_t errlen) {
        char perr[PROTO_ERRLEN] = "";
        int r = net_wait_readable(fd, timeout_ms);
        if (r == -ETIMEDOUT)
                snprintf(err, errlen, "no reply from the controller within %d ms", timeout_ms);
        else if (r == -EINTR)
                snprintf(err, errlen, "interrupted");
        if (r < 0)
                return r;
        r = proto_recv(fd, reply, perr);
        if (r == -ECONNRESET)
                snprintf(err, errlen, "the controller at %s closed the connection without a reply", path);
        else if (r < 0)
                snprintf(err, errlen, "bad reply from the controller at %s: %s", path, *perr ? perr : strerror(-r));
        return r;
}

/* client_connect, with one line in err when it fails. */
static int connect_or_say(const char *addr, char *err, size_t errlen) {
        int fd = client_connect(addr);
        bool remote = strncmp(addr, CLIENT_REMOTE_PREFIX, strlen(CLIENT_REMOTE_PREFIX)) == 0;
        if (fd == -ENOENT && remote)
                snprintf(err, errlen, "cannot reach the controller at %s: %s is neither next to colony nor in %s", addr,
                         CONNECT_PROG, COLONY_LIBEXECDIR);
        else if (fd < 0)
                snprintf(err, errlen, "cannot reach the controller at %s: %s%s", addr, strerror(-fd),
                         !remote && (fd == -ENOENT || fd == -ECONNREFUSED) ? " (is it running? see colony up)" : "");
        return fd;
}

int client_start(const char *socket_path, const cJSON *req, char *err, size_t errlen) {
        int fd = connect_or_say(socket_path, err, errlen), r;

        if (fd < 0)
                return fd;
        r = proto_send(fd, req);
        if (r < 0) {
                snprintf(err, errlen, "cannot send to the controller at %s: %s", socket_path, strerror(-r));
                close(fd);
                return r;
        }
        return fd;
}

int client_next(int fd, const char *socket_path, const char *want, int timeout_ms, cJSON **reply, char *err,
                size_t errlen) {
        cJSON *msg = NULL;
        int r = receive(fd, socket_path, timeout_ms, &msg, err, errlen);

        if (r == 0)
                r = check_reply(msg, want, err, errlen);
        if (r < 0) {
                cJSON_Delete(msg);
                return r;
        }
        *reply = msg;
        return 0;
}

int client_call(const char *socket_path, const cJSON *req, const char *want, int timeout_ms, cJSON **reply, char *err,
                size_t errlen) {
        int fd = client_start(socket_path, req, err, errlen), r;

        if (fd < 0)
                return fd;
        r = client_next(fd, socket_path, want, timeout_ms, reply, err, errlen);
        close(fd);
        return r;
}

int client_simple(const char *socket_path, const char *type, uint64_t id, const char *want, int timeout_ms,
                  cJSON **reply, char *err, size_t errlen) {
        cJSON *req = proto_new(type);
        int r;

        if (!req || (id && !cJSON_AddNumberToObject(req, "id", (double)id))) {
                cJSON_Delete(req);
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        r = client_call(socket_path, req, want, timeout_ms, reply, err, errlen);
        cJSON_Delete(req);
        return r;
}

/* A growing buffer of frames to send. */
typedef struct outbuf {
        char *data;
        size_t len, cap;
} outbuf;

static int outbuf_add(outbuf *o, const cJSON *msg) {
        char *frame;
        size_t len;
        int r = proto_frame(msg, &frame, &len);
        if (r < 0)
                return r;
        if (o->len + len > o->cap) {
                size_t cap = o->cap ? o->cap : 65536;
                while (cap < o->len + len)
                        cap *= 2;
                char *p = realloc(o->data, cap);
                if (!p) {
                        free(frame);
                        return -ENOMEM;
                }
                o->data = p;
                o->cap = cap;
        }
        memcpy(o->data + o->len, frame, len);
        o->len += len;
        free(frame);
        return 0;
}

/* The state of one pipelined exchange: tags of the requests sent and not yet answered, in a ring. */
typedef struct pipeline {
        int fd;
        uint64_t tags[CLIENT_PIPELINE_WINDOW];
        size_t sent, answered;
        proto_reader reader;
} pipeline;

/* Read what the controller sent and hand every whole reply to done. Returns 0 or -errno. */
static int pipeline_read(pipeline *p, void (*done)(void *ud, uint64_t tag, const cJSON *reply), void *ud,
                         int timeout_ms, char *err, size_t errlen) {
        char buf[65536], perr[PROTO_ERRLEN];
        cJSON *msg;
        int r = net_wait_readable(p->fd, timeout_ms);
        ssize_t n = r < 0 ? -1 : read(p->fd, buf, sizeof(buf));
        if (r == 0 && n < 0)
                r = errno == EINTR ? 0 : -errno;
        else if (r == 0 && n == 0)
                r = -ECONNRESET;
        if (r == 0 && n > 0)
                r = proto_reader_feed(&p->reader, buf, (size_t)n);
        while (r == 0 && p->answered < p->sent && (r = proto_reader_next(&p->reader, &msg, perr)) > 0) {
                done(ud, p->tags[p->answered++ % CLIENT_PIPELINE_WINDOW], msg);
                cJSON_Delete(msg);
                r = 0;
        }
        if (r == -ETIMEDOUT)
                snprintf(err, errlen, "no reply from the controller within %d ms", timeout_ms);
        else if (r == -ECONNRESET)
                snprintf(err, errlen, "the controller closed the connection after %zu of %zu replies", p->answered,
                         p->sent);
        else if (r < 0)
                snprintf(err, errlen, "reading the controller's replies: %s",
                         r == -EBADMSG || r == -EPROTO || r == -EMSGSIZE ? perr : strerror(-r));
        return r;
}

int client_pipeline(const char *socket_path, int (*next)(void *ud, cJSON **req, uint64_t *tag),
                    void (*done)(void *ud, uint64_t tag, const cJSON *reply), void *ud, int timeout_ms, char *err,
                    size_t errlen) {
        pipeline p = { .fd = connect_or_say(socket_path, err, errlen) };
        outbuf out = { 0 };
        bool more = true;
        int r = 0;

        if (p.fd < 0)
                return p.fd;
        while (r == 0 && (more || p.answered < p.sent)) {
                while (r == 0 && more && p.sent - p.answered < CLIENT_PIPELINE_WINDOW) {
                        cJSON *req = NULL;
                        uint64_t tag = 0;
                        int k = next(ud, &req, &tag);
                        if (k > 0 && (r = outbuf_add(&out, req)) == 0)
                                p.tags[p.sent++ % CLIENT_PIPELINE_WINDOW] = tag;
                        else if (k > 0)
                                snprintf(err, errlen, "a request cannot be framed: %s", strerror(-r));
                        cJSON_Delete(req);
                        more = k > 0;
                        if (k < 0)
                                r = k;
                }
                if (out.len > 0 && r == 0 && (r = proto_write_all(p.fd, out.data, out.len)) < 0)
                        snprintf(err, errlen, "cannot send to the controller at %s: %s", socket_path, strerror(-r));
                out.len = 0;
                if (r == 0 && p.answered < p.sent)
                        r = pipeline_read(&p, done, ud, timeout_ms, err, errlen);
        }
        free(out.data);
        proto_reader_free(&p.reader);
        close(p.fd);
        return r;
}

/* The id of the last job of a "jobs" reply, or 0. */
static int64_t last_job_id(const cJSON *reply) {
        const cJSON *jobs = cJSON_GetObjectItemCaseSensitive(reply, "jobs");
        const cJSON *last = cJSON_IsArray(jobs) ? cJSON_GetArrayItem(jobs, cJSON_GetArraySize(jobs) - 1) : NULL;
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(last, "id");
        return cJSON_IsNumber(id) ? (int64_t)id->valuedouble : 0;
}

/* client_call, then while the reply says "more", again from its last job on, moving each
 * page's jobs into the first reply's. */
static int call_pages(const char *sock, cJSON *req, const char *want, const char *cursor, int timeout_ms, cJSON **out,
                      char *err, size_t errlen) {
        cJSON *all = NULL, *page = NULL;
        int r = client_call(sock, req, want, timeout_ms, &all, err, errlen);
        while (r == 0 && cursor && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(all, "more"))) {
                int64_t last = last_job_id(all);
                cJSON_DeleteItemFromObject(req, cursor);
                if (last <= 0 || !cJSON_AddNumberToObject(req, cursor, (double)last)) {
                        snprintf(err, errlen, last <= 0 ? "bad page from the controller" : "out of memory");
                        r = last <= 0 ? -EBADMSG : -ENOMEM;
                        break;
                }
                if ((r = client_call(sock, req, want, timeout_ms, &page, err, errlen)) < 0)
                        break;
                cJSON *into = cJSON_GetObjectItemCaseSensitive(all, "jobs"), *item;
                cJSON *from = cJSON_GetObjectItemCaseSensitive(page, "jobs");
                while (cJSON_IsArray(into) && cJSON_IsArray(from) && (item = cJSON_DetachItemFromArray(from, 0)))
                        cJSON_AddItemToArray(into, item);
                cJSON_ReplaceItemInObject(all, "more",
                                          cJSON_CreateBool(cJSON_IsTrue(cJSON_GetObjectItem(page, "more"))));
                cJSON_Delete(page);
                page = NULL;
        }
        if (r < 0)
                cJSON_Delete(all);
        else
                *out = all;
        return r;
}

int client_fetch(const cli *c, cJSON *req, const char *want, const char *cursor, int timeout_ms, cJSON **reply) {
        char sock[PATH_MAX], err[ERRLEN];
        int r = client_socket_path(c, sock, sizeof(sock));
        *reply = NULL;
        if (r < 0)
                cli_error(c, "%s",
                          r == -EINVAL ? "the client config does not parse"
                                       : "the controller's socket path is too long");
        else if ((r = call_pages(sock, req, want, cursor, timeout_ms, reply, err, sizeof(err))) < 0)
                cli_error(c, "%s", err);
        cJSON_Delete(req);
        return r == 0 ? 0 : EXIT_FAIL;
}

int client_print(const cli *c, cJSON *req, const char *want, const char *cursor, int timeout_ms,
                 int (*print)(const cli *c, const cJSON *reply)) {
        cJSON *reply = NULL;
        int r = client_fetch(c, req, want, cursor, timeout_ms, &reply);
        if (r == 0)
                r = c->json ? fmt_json(reply) : print(c, reply);
        cJSON_Delete(reply);
        return r == 0 ? 0 : EXIT_FAIL;
}

int client_run_plain(cli *c, int argc, char **argv, const char *type, const char *want, int timeout_ms,
                     int (*print)(const cli *c, const cJSON *reply)) {
        int r = cli_no_operands(c, argc, argv);
        if (r >= 0)
                return r;
        cJSON *req = proto_new(type);
        if (!req) {
                cli_error(c, "out of memory");
                return EXIT_FAIL;
        }
        return client_print(c, req, want, NULL, timeout_ms, print);
}
