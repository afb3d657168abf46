/* http.c - the read-only HTTP side on the controller's loop (http.h). */
#include "http.h"
#include "log.h"
#include "metrics.h"
#include "net.h"
#include "status.h"
#include <errno.h>
#include <microhttpd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* The status page, embedded at build time from status_page.html (status_page.c). */
extern const char status_page_html[];
extern const size_t status_page_html_len;

/* Enough for a browser's headers; a request beyond it is refused by libmicrohttpd. */
#define HTTP_MEMORY_LIMIT    (32 * 1024)
#define HTTP_CONNECTIONS_MAX 256 /* so that slow clients from 16 addresses (HTTP_PER_IP_MAX each) leave room */
#define HTTP_PER_IP_MAX      16
#define HTTP_IDLE_SECONDS    10

struct http_server {
        ctl_server *srv;
        struct MHD_Daemon *daemon;
        sd_event_source *io, *timer, *sampler;
};

/* No resource from elsewhere, no framing, no sniffing: the page is all inline. */
static const char csp[] = "default-src 'none'; script-src 'unsafe-inline'; style-src 'unsafe-inline'; "
                          "connect-src 'self'; img-src data:; frame-ancestors 'none'";

static enum MHD_Result respond(struct MHD_Connection *c, unsigned status, const char *type, void *body, size_t len,
                               enum MHD_ResponseMemoryMode mode) {
        struct MHD_Response *resp = MHD_create_response_from_buffer(len, body, mode);
        if (!resp) {
                if (mode == MHD_RESPMEM_MUST_FREE)
                        free(body);
                return MHD_NO;
        }
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, type);
        (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
        (void)MHD_add_response_header(resp, "X-Content-Type-Options", "nosniff");
        (void)MHD_add_response_header(resp, "Content-Security-Policy", csp);
        if (status == MHD_HTTP_METHOD_NOT_ALLOWED)
                (void)MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
        enum MHD_Result r = MHD_queue_response(c, status, resp);
        MHD_destroy_response(resp);
        return r;
}

static enum MHD_Result send_text(struct MHD_Connection *c, unsigned status, const char *text) {
        return respond(c, status, "text/plain; charset=utf-8", (void *)text, strlen(text), MHD_RESPMEM_PERSISTENT);
}

static enum MHD_Result serve_status(ctl_server *srv, struct MHD_Connection *c) {
        cJSON *doc = status_document(srv, server_now());
        char *text = doc ? proto_print(doc) : NULL;
        cJSON_Delete(doc);
        if (!text)
                return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
        return respond(c, MHD_HTTP_OK, "application/json", text, strlen(text), MHD_RESPMEM_MUST_FREE);
}

static enum MHD_Result serve_metrics(ctl_server *srv, struct MHD_Connection *c) {
        char *text;
        size_t len;
        if (metrics_render(srv, server_now(), &text, &len) < 0)
                return send_text(c, MHD_HTTP_INTERNAL_SERVER_ERROR, "out of memory\n");
        return respond(c, MHD_HTTP_OK, "text/plain; version=0.0.4; charset=utf-8", text, len, MHD_RESPMEM_MUST_FREE);
}

/* Answered on the first call, before any body is read: a GET has none worth reading, and
 * libmicrohttpd closes a connection whose body was left unread. */
static enum MHD_Result on_request(void *cls, struct MHD_Connection *c, const char *url, const char *method,
                                  const char *version, const char *upload_data, size_t *upload_data_size,
                                  void **con_cls) {
        ctl_server *srv = cls;
        (void)version, (void)upload_data, (void)upload_data_size, (void)con_cls;
        if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0)
                return send_text(c, MHD_HTTP_METHOD_NOT_ALLOWED, "read-only: GET or HEAD\n");
        if (strcmp(url, "/") == 0)
                return respond(c, MHD_HTTP_OK, "text/html; charset=utf-8", (void *)status_page_html,
                               status_page_html_len, MHD_RESPMEM_PERSISTENT);
        if (strcmp(url, "/api/status") == 0)
                return serve_status(srv, c);
        if (strcmp(url, "/metrics") == 0)
                return serve_metrics(srv, c);
        return send_text(c, MHD_HTTP_NOT_FOUND, "not found: try /, /api/status or /metrics\n");
}

/* Mostly what a client did wrong (a header too large, a reset): worth a line, not a warning,
 * and one per LOG_FLOOD_USEC, as a flood of clients gets one each. */
static void mhd_log(void *cls, const char *fmt, va_list ap) {
        static log_ratelimit lines = { .interval_usec = LOG_FLOOD_USEC };
        char text[512];
        unsigned missed;
        (void)cls;
        if (!log_ratelimit_ok(&lines, &missed))
                return;
        vsnprintf(text, sizeof(text), fmt, ap);
        text[strcspn(text, "\n")] = '\0';
        log_info("http: %s (%u more messages since the last)", text, missed);
}

/* Let libmicrohttpd do what its fds allow, then arm the timer for its next deadline. */
static int run_daemon(http_server *h) {
        MHD_UNSIGNED_LONG_LONG ms;
        uint64_t now;
        if (MHD_run(h->daemon) != MHD_YES)
                log_warning("http: MHD_run failed");
        if (MHD_get_timeout(h->daemon, &ms) != MHD_YES)
                return sd_event_source_set_enabled(h->timer, SD_EVENT_OFF);
        int r = sd_event_now(sd_event_source_get_event(h->timer), CLOCK_MONOTONIC, &now);
        if (r >= 0)
                r = sd_event_source_set_time(h->timer, now + (uint64_t)ms * 1000);
        return r < 0 ? r : sd_event_source_set_enabled(h->timer, SD_EVENT_ONESHOT);
}

static int on_io(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        (void)s, (void)fd, (void)revents;
        return run_daemon(userdata);
}

static int on_timer(sd_event_source *s, uint64_t usec, void *userdata) {
        (void)s, (void)usec;
        return run_daemon(userdata);
}

static int on_sample(sd_event_source *s, uint64_t usec, void *userdata) {
        http_server *h = userdata;
        stats_take_sample(&h->srv->stats, &h->srv->state, server_now());
        int r = sd_event_source_set_time(s, usec + STATS_SAMPLE_USEC);
        return r < 0 ? r : sd_event_source_set_enabled(s, SD_EVENT_ONESHOT);
}

static int add_sources(http_server *h) {
        const union MHD_DaemonInfo *info = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_EPOLL_FD);
        if (!info)
                return -EIO;
        int r = sd_event_add_io(h->srv->event, &h->io, info->epoll_fd, EPOLLIN, on_io, h);
        if (r >= 0)
                r = sd_event_add_time(h->srv->event, &h->timer, CLOCK_MONOTONIC, 0, 0, on_timer, h);
        if (r >= 0)
                r = sd_event_add_time_relative(h->srv->event, &h->sampler, CLOCK_MONOTONIC, 0, 0, on_sample, h);
        return r < 0 ? r : run_daemon(h);
}

int http_start(ctl_server *srv, const char *hostport, uint16_t *port, http_server **out) {
        http_server *h = calloc(1, sizeof(*h));
        if (!h)
                return log_errno(LOG_ERR, -ENOMEM, "http listener");
        int fd = net_listen_tcp(hostport, port);
        if (fd < 0) {
                free(h);
                return log_errno(LOG_ERR, fd, "http listener %s", hostport);
        }
        h->srv = srv;
        /* MHD_USE_EPOLL without MHD_USE_INTERNAL_POLLING_THREAD: no thread, we poll its epoll fd */
        h->daemon = MHD_start_daemon(
                MHD_USE_EPOLL | MHD_USE_ERROR_LOG, 0, NULL, NULL, on_request, srv, MHD_OPTION_EXTERNAL_LOGGER, mhd_log,
                NULL, /* first, or it warns */
                MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_MEMORY_LIMIT, (size_t)HTTP_MEMORY_LIMIT,
                MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTP_CONNECTIONS_MAX, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
                (unsigned)HTTP_PER_IP_MAX, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)HTTP_IDLE_SECONDS, MHD_OPTION_END);
        if (!h->daemon) {
                close(fd);
                free(h);
                return log_errno(LOG_ERR, -EIO, "http listener %s: libmicrohttpd would not start", hostport);
        }
        int r = add_sources(h);
        if (r < 0) {
                http_stop(h);
                return log_errno(LOG_ERR, r, "http listener %s: event loop set-up", hostport);
        }
        log_info("listening: http on %s (port %u)", hostport, *port);
        *out = h;
        return 0;
}

void http_stop(http_server *h) {
        if (!h)
                return;
        sd_event_source_disable_unref(h->io);
        sd_event_source_disable_unref(h->timer);
        sd_event_source_disable_unref(h->sampler);
        MHD_stop_daemon(h->daemon); /* closes the listening socket it was given */
        free(h);
}
