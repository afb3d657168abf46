/* proto.h - colony's wire protocol: JSON objects framed on stream sockets.
 *
 * A frame is a 4-byte big-endian length N (1 <= N <= PROTO_MAX_MSG) followed by N bytes of
 * UTF-8 JSON holding one object. Every object has "v" (PROTO_VERSION) and "type" (a string).
 * The message catalogue is in docs/protocol.md; this module knows framing and field access,
 * not what each message means. */
#pragma once
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define PROTO_VERSION 1
#define PROTO_MAX_MSG (1024 * 1024)
#define PROTO_HEADER  4
#define PROTO_ERRLEN  256

/* A new message {"v": PROTO_VERSION, "type": type}. Caller owns it (cJSON_Delete). */
cJSON *proto_new(const char *type);

/* A new {"v":1,"type":"error","error":"<formatted text>"}. Caller owns it. */
cJSON *proto_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* The message's "type", or NULL when absent or not a string. */
const char *proto_type(const cJSON *msg);

/* obj as JSON text, as cJSON_PrintUnformatted writes it but for integers, written as their
 * digits (every integral value below 2^63 in magnitude), never as "1.79565496963997e+15":
 * cJSON formats every number with "%1.15g", which loses digits and which strict int64 readers
 * refuse. Every JSON colony writes goes through here or proto_print_pretty. Caller frees;
 * NULL when out of memory. O(size of the text). */
char *proto_print(const cJSON *obj);
/* The same laid out for people as cJSON_Print lays it out (tab-indented objects). */
char *proto_print_pretty(const cJSON *obj);

/* Serialize msg into a malloc'ed frame (header + JSON). Returns 0 and sets *out and *len (caller
 * frees *out), or -EMSGSIZE when the JSON exceeds PROTO_MAX_MSG, -ENOMEM. */
int proto_frame(const cJSON *msg, char **out, size_t *len);

/* Incremental frame decoder for one connection. Bytes go in with proto_reader_feed; whole
 * messages come out of proto_reader_next. Its buffer never grows past one frame. */
typedef struct proto_reader {
        char *buf;
        size_t off; /* where the next frame starts: consumed frames are dropped on the next feed,
                     * not one by one, so reading n frames at once costs O(n), not O(n^2) */
        size_t len;
        size_t cap;
} proto_reader;

/* Append n bytes read from the socket. Returns 0 or -ENOMEM. Bytes after a header announcing
 * a bad length are dropped unread (proto_reader_next reports the error; the stream is dead). */
int proto_reader_feed(proto_reader *r, const void *data, size_t n);
/* Take the next whole message. Returns 1 and sets *msg (caller owns it), 0 when more bytes are
 * needed, or a negative errno with a one-line reason in err: -EMSGSIZE (length 0 or above
 * PROTO_MAX_MSG), -EBADMSG (not JSON, not an object, no "type"), -EPROTO (wrong "v").
 * After an error the stream is unusable: close the connection. */
int proto_reader_next(proto_reader *r, cJSON **msg, char err[PROTO_ERRLEN]);
/* The length the next frame's header announces (valid or not), or -1 before its 4 bytes are
 * in: for a reader that trusts its peer with less than a whole frame. */
int64_t proto_reader_next_length(const proto_reader *r);
/* Free the reader's buffer. */
void proto_reader_free(proto_reader *r);

/* Blocking helpers for clients (the CLI, tests): write one whole frame / read one whole
 * message. Return 0 or a negative errno (-ECONNRESET on EOF); recv fills err like
 * proto_reader_next. */
int proto_send(int fd, const cJSON *msg);
/* Write len bytes whole to a blocking fd (a socket without SIGPIPE, a pipe or a file): a
 * client's many frames at once, the agent's job records. Returns 0 or -errno. */
int proto_write_all(int fd, const void *data, size_t len);
/* Read exactly n bytes from a blocking fd (a frame's parts, a standby shepherd's request).
 * Returns 0, -ECONNRESET at end of file, or -errno. */
int proto_read_exact(int fd, void *buf, size_t n);
int proto_recv(int fd, cJSON **msg, char err[PROTO_ERRLEN]);

/* Field access with validation. Each returns 0, -ENOENT when the field is absent (the output
 * is left untouched, so callers can preset a default), or -EINVAL with a message in err naming
 * the field when it has the wrong JSON type or range. */
int proto_get_int(const cJSON *msg, const char *field, int64_t min, int64_t max, int64_t *out, char err[PROTO_ERRLEN]);
/* The check proto_get_int makes, for an array item: whether item is a number holding an exact
 * integer in [min, max]. Sets *out only when it is. */
bool proto_int_value(const cJSON *item, int64_t min, int64_t max, int64_t *out);
int proto_get_str(const cJSON *msg, const char *field, const char **out, char err[PROTO_ERRLEN]);
int proto_get_bool(const cJSON *msg, const char *field, bool *out, char err[PROTO_ERRLEN]);
/* A JSON array of strings into a NULL-terminated malloc'ed vector of malloc'ed strings (free
 * with strv_free). At most max_items items; empty strings are allowed only if allow_empty. */
int proto_get_strv(const cJSON *msg, const char *field, size_t max_items, bool allow_empty, char ***out,
                   char err[PROTO_ERRLEN]);

/* Reject fields not listed in allowed (a NULL-terminated list; "v" and "type" are always
 * allowed), and fields given twice. Returns 0, or -EINVAL with "unknown field 'x'" or
 * "duplicate field 'x'" in err. */
int proto_check_fields(const cJSON *msg, const char *const *allowed, char err[PROTO_ERRLEN]);
/* Reject a message with a string, or a member name, that is not valid UTF-8 (RFC 3629), at
 * any depth: JSON is UTF-8, and what colony stores it echoes. The controller checks every
 * client request with it; what colony itself wrote (agents' reports, the store) is read as
 * it is, since proto_print wrote it valid. Returns 0, or -EINVAL with the
 * field named in err ("argv item 1: not valid UTF-8 (byte 3, after \"abc\")"). */
int proto_check_utf8(const cJSON *msg, char err[PROTO_ERRLEN]);

/* Whether an "output" answer (docs/protocol.md) holds the last of a job's output: the job had
 * ended when the node read (ended), and each file the answer carries, out and err when the job
 * has one of its own, was read to its end. */
bool proto_output_all_read(const cJSON *answer, bool ended);

/* Free a NULL-terminated vector of strings and its elements. NULL is fine. */
void strv_free(char **v);
/* Number of elements of a NULL-terminated vector. */
size_t strv_length(char *const *v);
/* Deep copy of a NULL-terminated vector; NULL on allocation failure. */
char **strv_copy(char *const *v);
/* Whether two NULL-terminated vectors hold the same strings in the same order (NULL is empty). */
bool strv_equal(char *const *a, char *const *b);
