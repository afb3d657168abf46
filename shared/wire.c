/* wire.c - one framed, non-blocking stream socket, plain or TLS (see wire.h). */
#include "wire.h"
#include <errno.h>
#include <sys/epoll.h>
#include <unistd.h>

int wire_init(wire *w, int fd, tls_ctx *ctx, const char *peer_host) {
        *w = (wire){ .fd = fd };
        return ctx ? tls_conn_new(ctx, fd, peer_host, &w->tls) : 0;
}

void wire_close(wire *w) {
        tls_conn_free(w->tls);
        if (w->fd >= 0)
                close(w->fd);
        *w = (wire){ .fd = -1 };
}

uint32_t wire_events(const wire *w, bool out) { return EPOLLIN | (out || w->wants_out ? EPOLLOUT : 0); }

/* One read or write: the count (0: end of stream on a read), or -errno (-EAGAIN: wait, as
 * wire_events knows). */
static ssize_t transfer(wire *w, char *buf, size_t len, bool write) {
        ssize_t n = tls_io(w->tls, w->fd, buf, len, write);
        if (!w->tls)
                return n;
        w->wants_out = n == -EAGAIN && tls_wants_write(w->tls);
        if (write)
                w->write_waits = n == -EAGAIN && !w->wants_out;
        return n;
}

bool wire_over(const proto_reader *r, size_t frame_max) {
        return proto_reader_next_length(r) > (int64_t)frame_max || r->len - r->off > PROTO_HEADER + frame_max;
}

int wire_fill(wire *w, proto_reader *r, size_t bound, size_t frame_max) {
        char buf[WIRE_READ_CHUNK];
        for (size_t got = 0; w->tls || got < bound;) {
                ssize_t n = transfer(w, buf, sizeof(buf), false);
                if (n == -EINTR)
                        continue;
                if (n == -EAGAIN)
                        return 0;
                if (n <= 0)
                        return n == 0 ? 1 : (int)n;
                int e = proto_reader_feed(r, buf, (size_t)n);
                if (e < 0)
                        return e;
                if (frame_max && wire_over(r, frame_max))
                        return 0;
                got += (size_t)n;
                if (!w->tls && (size_t)n < sizeof(buf))
                        return 0;
        }
        return 0;
}

ssize_t wire_write(wire *w, const char *buf, size_t len) {
        size_t done = 0;
        while (done < len) {
                ssize_t n = transfer(w, (char *)buf + done, len - done, true);
                if (n == -EINTR)
                        continue;
                if (n == -EAGAIN)
                        break;
                if (n < 0)
                        return n;
                done += (size_t)n;
        }
        return (ssize_t)done;
}

const char *wire_tls_error(const wire *w) { return w->tls && *tls_conn_error(w->tls) ? tls_conn_error(w->tls) : NULL; }
