/* listen.c - colony-controller's listening sockets and their accepts (see listen.h). */
#include "listen.h"
#include "fileio.h"
#include "http.h"
#include "log.h"
#include "net.h"
#include "agentlink.h"
#include "clients.h"
#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>
#include <unistd.h>

static int end_backoff(sd_event_source *s, uint64_t usec, void *userdata) {
        listener *l = userdata;
        (void)s;
        (void)usec;
        return sd_event_source_set_enabled(l->src, SD_EVENT_ON);
}

/* Stop accepting on l for ACCEPT_BACKOFF_MS, logging at most once per accept_failed interval. */
static void back_off(listener *l, int err) {
        unsigned missed;
        int r = sd_event_source_set_enabled(l->src, SD_EVENT_OFF);
        if (r >= 0 && !l->rest)
                r = sd_event_add_time_relative(sd_event_source_get_event(l->src), &l->rest, CLOCK_MONOTONIC,
                                               ACCEPT_BACKOFF_MS * 1000, 0, end_backoff, l);
        else if (r >= 0 && (r = sd_event_source_set_time_relative(l->rest, ACCEPT_BACKOFF_MS * 1000)) >= 0)
                r = sd_event_source_set_enabled(l->rest, SD_EVENT_ONESHOT);
        if (r < 0) { /* without the timer, resting would be for ever */
                (void)sd_event_source_set_enabled(l->src, SD_EVENT_ON);
                log_errno(LOG_ERR, r, "%s listener: cannot back off", l->what);
        }
        if (log_ratelimit_ok(&l->accept_failed, &missed))
                log_errno(LOG_WARNING, err,
                          "accept on the %s listener: resting %d ms each time (%u more failures since "
                          "the last such line)",
                          l->what, ACCEPT_BACKOFF_MS, missed);
}

static int on_accept(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        listener *l = userdata;
        conn *c;
        (void)revents;
        int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (cfd < 0) {
                if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS || errno == ENOMEM)
                        back_off(l, -errno);
                else if (errno != EAGAIN && errno != EINTR && errno != ECONNABORTED)
                        log_errno(LOG_WARNING, -errno, "accept on the %s listener", l->what);
                return 0;
        }
        int r = conn_new(sd_event_source_get_event(s), cfd, l->tls, l->ops, l->srv, &c);
        if (r < 0)
                log_errno(LOG_WARNING, r, "new %s connection", l->what);
        return 0;
}

static int write_port_file(const char *path, uint16_t port) {
        char text[16];
        snprintf(text, sizeof(text), "%u\n", port);
        return file_write(path, text, 0644);
}

/* The agent listener's TLS context, or NULL without tls_cert. Returns 0 or -errno (logged). */
static int open_tls(const options *o, tls_ctx **out) {
        char err[TLS_ERRLEN];
        tls_files f = { .cert = o->tls_cert, .key = o->tls_key, .ca = o->tls_ca };
        *out = NULL;
        if (!o->tls_cert && !o->tls_key && !o->tls_ca)
                return 0;
        int r = tls_ctx_new_server(&f, out, err);
        return r < 0 ? log_errno(LOG_ERR, r, "%s", err) : 0;
}

int listen_open_remote(ctl_server *srv, const options *o, listener *l, remote_server *rs) {
        char err[ERRLEN];
        uint16_t port;
        tls_files f = { .cert = o->tls_cert, .key = o->tls_key };
        *l = (listener){ srv, &remote_conn_ops, "remote client", NULL, .accept_failed.interval_usec = LOG_FLOOD_USEC };
        if (!o->client_listen)
                return 0;
        int r = remote_cfg_init(&rs->cfg, o->submit_hosts, o->trusted_root_hosts, o->munge_socket, err, sizeof(err));
        if (r < 0)
                return log_errno(LOG_ERR, r, "%s", err);
        srv->remote = rs;
        if ((r = remote_server_start(rs, srv)) < 0)
                return log_errno(LOG_ERR, r, "client listener: the credentials' thread");
        if (o->tls_cert && (r = tls_ctx_new_server(&f, &l->tls, err)) < 0)
                return log_errno(LOG_ERR, r, "client listener: %s", err);
        int fd = net_listen_tcp(o->client_listen, &port);
        if (fd < 0)
                return log_errno(LOG_ERR, fd, "client listener %s", o->client_listen);
        if ((r = sd_event_add_io(srv->event, &l->src, fd, EPOLLIN, on_accept, l)) < 0) {
                close(fd);
                return log_errno(LOG_ERR, r, "client listener %s", o->client_listen);
        }
        (void)sd_event_source_set_io_fd_own(l->src, 1);
        if (o->client_port_file && (r = write_port_file(o->client_port_file, port)) < 0)
                log_errno(LOG_ERR, r, "port file %s", o->client_port_file);
        log_info("listening: clients of other hosts on %s (port %u%s), MUNGE credentials through %s", o->client_listen,
                 port, l->tls ? ", TLS" : ", no TLS: the network must be trusted",
                 o->munge_socket ? o->munge_socket : "munge's default socket");
        return 0;
}

int listen_open(ctl_server *srv, const options *o, listener ls[2]) {
        uint16_t port;
        ls[0] = (listener){ srv, &client_conn_ops, "client", NULL, .accept_failed.interval_usec = LOG_FLOOD_USEC };
        ls[1] = (listener){ srv, &agent_conn_ops, "agent", NULL, .accept_failed.interval_usec = LOG_FLOOD_USEC };
        if (open_tls(o, &ls[1].tls) < 0)
                return -EINVAL;
        int ufd = net_listen_unix(o->socket, 0666);
        if (ufd < 0)
                return log_errno(LOG_ERR, ufd, "client socket %s", o->socket);
        int tfd = net_listen_tcp(o->agent_listen, &port);
        if (tfd < 0) {
                close(ufd);
                return log_errno(LOG_ERR, tfd, "agent listener %s", o->agent_listen);
        }
        int r;
        if (o->port_file && (r = write_port_file(o->port_file, port)) < 0)
                log_errno(LOG_ERR, r, "port file %s", o->port_file);
        if ((r = sd_event_add_io(srv->event, &ls[0].src, ufd, EPOLLIN, on_accept, &ls[0])) < 0 ||
            (r = sd_event_source_set_io_fd_own(ls[0].src, 1)) < 0 ||
            (r = sd_event_add_io(srv->event, &ls[1].src, tfd, EPOLLIN, on_accept, &ls[1])) < 0 ||
            (r = sd_event_source_set_io_fd_own(ls[1].src, 1)) < 0)
                return log_errno(LOG_ERR, r, "event loop set-up");
        log_info("listening: clients on %s, agents on %s (port %u%s)", o->socket, o->agent_listen, port,
                 !ls[1].tls  ? ""
                 : o->tls_ca ? ", TLS, agents' certificates checked"
                             : ", TLS");
        if (!o->http_listen)
                return 0;
        if ((r = http_start(srv, o->http_listen, &port, &srv->http)) < 0)
                return r;
        if (o->http_port_file && (r = write_port_file(o->http_port_file, port)) < 0)
                log_errno(LOG_ERR, r, "port file %s", o->http_port_file);
        return 0;
}
