/* conn.h - one framed, non-blocking connection on the controller's sd-event loop.
 *
 * Reads are decoded into whole messages and handed to on_message; writes are queued and
 * flushed as the socket allows, so a slow peer never blocks the loop. A peer whose unsent
 * output passes CONN_OUTPUT_MAX is dropped. Output may be held back until the owner's writes are
 * durable (conn_ops.held). Agent links may run over TLS (tls.h); the messages are the same. Closing is deferred to the
 * loop's next iteration, so a connection may be closed anywhere, even from inside its own on_message. */
#pragma once
#include "auth.h"
#include "tls.h"
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <systemd/sd-event.h>

#define CONN_OUTPUT_MAX    (8 * 1024 * 1024)
#define CONN_READ_PER_TURN (1024 * 1024) /* bytes read from one plain peer per turn of the loop, at most */

typedef struct conn conn;

/* The connections whose output waits for the end of a hold (conn_ops.held_list). */
typedef struct conn_held_list {
        conn *first;
} conn_held_list;

typedef struct conn_ops {
        /* The connection was just accepted (optional): the place to speak first. */
        void (*on_open)(conn *c);
        /* A whole message arrived; msg is borrowed for the call. */
        void (*on_message)(conn *c, const cJSON *msg);
        /* The connection is going away (peer closed, error, or conn_close); c->data is the
         * owner's to release. Called once. */
        void (*on_close)(conn *c);
        /* Optional: while it returns true, output is queued but not written, because the state
         * it reports is not durable yet; it is written once the loop finds the socket writable
         * again after held turned false (the owner must turn it false before the loop polls),
         * or, with held_list, when the owner calls conn_release_held, up to where
         * conn_held_mark said (a hold in stages: the output of one step waits for that step). */
        bool (*held)(conn *c);
        /* Optional, with held: the owner's list that a connection with held output joins, so
         * that the owner writes it the moment the hold ends, without a turn of the loop and
         * two epoll changes per connection. */
        conn_held_list *(*held_list)(conn *c);
} conn_ops;

struct conn {
        int fd;
        sd_event_source *io;
        const conn_ops *ops;
        void *owner; /* the server */
        void *data;  /* what the owner keeps per connection */
        uid_t uid;   /* peer credentials (Unix sockets) */
        gid_t gid;
        pid_t pid;
        char challenge[AUTH_HEX_LEN + 1]; /* the nonce an agent link must answer ("" on others) */
        char *out;
        size_t out_len, out_off, out_cap;
        size_t input_max; /* 0, or the peer may send one frame of at most this many bytes: a larger one, or
                           * more input, gets an error and the close. An owner sets it until it
                           * trusts the peer, so that a stranger cannot park a megabyte of partial
                           * frame in the controller */
        bool closed, close_after_flush;
        conn *held_next, **held_prev; /* on the held list when held_prev is set */
        uint64_t out_queued;          /* bytes queued since the connection opened */
        uint64_t hold_mark[2];        /* conn_held_mark: as out_queued, what waits for the step in flight, the next */
        uint64_t out_free;            /* as out_queued: while held, what may be written (conn_release_held) */
};

/* Wrap an accepted, non-blocking fd (the conn owns it), as the TLS server of tls when it is not
 * NULL (borrowed for the connection's life: give the peer a deadline, conn_set_deadline, or a
 * peer that never completes the handshake stays). Unix peers' credentials are read with
 * SO_PEERCRED. Returns 0 and *out, or -errno (fd closed). */
int conn_new(sd_event *event, int fd, tls_ctx *tls, const conn_ops *ops, void *owner, conn **out);
/* Queue one message. Returns 0, -EMSGSIZE when the message is larger than a frame may be (the
 * connection stays open), or another -errno when the peer is gone or too slow (it is closed). */
int conn_send(conn *c, const cJSON *msg);
/* Send msg (taken; NULL: nothing); one past the message limit is answered with an error
 * instead. */
void conn_reply(conn *c, cJSON *msg);
/* Bytes queued for the peer and not yet taken by its socket. */
size_t conn_unsent(const conn *c);
/* Write what every connection on l holds and empty l; while held is still true for one, only
 * what waited for the step in flight (conn_held_mark) goes, and it stays on l with the rest.
 * What a socket does not take at once waits for it to be writable. */
void conn_release_held(conn_held_list *l);
/* For an owner whose steps towards durability overlap (a commit's fsync runs while the next turn
 * works): the output queued so far on every connection of l waits for the step in flight (next
 * false: it reports nothing newer) or for the next one (next true). */
void conn_held_mark(conn_held_list *l, bool next);
/* The owner's next step starts: on every connection of l, what waited for it waits for the
 * step in flight. */
void conn_held_advance(conn_held_list *l);
/* Close c, logging "no <what> within N s", unless conn_set_deadline is called again first; ms 0
 * clears the deadline (what is then unused). what is borrowed: a string literal. A TLS peer
 * still in its handshake at the deadline is logged as such. Returns 0 or -errno. */
int conn_set_deadline(conn *c, uint64_t ms, const char *what);
/* Send {"type":"error"} with text, then close once it is flushed. */
void conn_fail(conn *c, const char *text);
/* Stop reading and writing now; on_close runs and memory is freed on the next loop iteration.
 * Safe to call twice. */
void conn_close(conn *c);
