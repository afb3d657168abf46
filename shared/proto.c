/* proto.c - framing and field access for colony's JSON protocol (docs/protocol.md). */
#include "proto.h"
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* cJSON keeps numbers as doubles: integers beyond 2^53 are not exact. */
#define EXACT_INT_MAX 9007199254740992.0

cJSON *proto_new(const char *type) {
        cJSON *msg = cJSON_CreateObject();
        if (!msg)
                return NULL;
        if (!cJSON_AddNumberToObject(msg, "v", PROTO_VERSION) || !cJSON_AddStringToObject(msg, "type", type)) {
                cJSON_Delete(msg);
                return NULL;
        }
        return msg;
}

cJSON *proto_error(const char *fmt, ...) {
        char text[PROTO_ERRLEN * 2];
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(text, sizeof(text), fmt, ap);
        va_end(ap);
        /* one line, whatever the caller formatted */
        for (char *p = text; *p; p++)
                if (*p == '\n' || *p == '\r')
                        *p = ' ';
        cJSON *msg = proto_new("error");
        if (msg && !cJSON_AddStringToObject(msg, "error", text)) {
                cJSON_Delete(msg);
                return NULL;
        }
        return msg;
}

const char *proto_type(const cJSON *msg) {
        const cJSON *t = cJSON_GetObjectItemCaseSensitive(msg, "type");
        return cJSON_IsString(t) ? t->valuestring : NULL;
}

int proto_frame(const cJSON *msg, char **out, size_t *len) {
        char *json = cJSON_PrintUnformatted(msg);
        if (!json)
                return -ENOMEM;
        size_t n = strlen(json);
        if (n > PROTO_MAX_MSG) {
                free(json);
                return -EMSGSIZE;
        }
        char *frame = malloc(PROTO_HEADER + n);
        if (!frame) {
                free(json);
                return -ENOMEM;
        }
        frame[0] = (char)(n >> 24);
        frame[1] = (char)(n >> 16);
        frame[2] = (char)(n >> 8);
        frame[3] = (char)n;
        memcpy(frame + PROTO_HEADER, json, n);
        free(json);
        *out = frame;
        *len = PROTO_HEADER + n;
        return 0;
}

int proto_reader_feed(proto_reader *r, const void *data, size_t n) {
        if (r->len + n > r->cap) {
                size_t cap = r->cap ? r->cap : 4096;
                while (cap < r->len + n)
                        cap *= 2;
                char *buf = realloc(r->buf, cap);
                if (!buf)
                        return -ENOMEM;
                r->buf = buf;
                r->cap = cap;
        }
        memcpy(r->buf + r->len, data, n);
        r->len += n;
        return 0;
}

static uint32_t frame_length(const char *p) {
        const unsigned char *u = (const unsigned char *)p;
        return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

/* Validate one decoded frame body. Returns 0 or -errno with err set. */
static int check_message(const cJSON *msg, char err[PROTO_ERRLEN]) {
        if (!cJSON_IsObject(msg)) {
                snprintf(err, PROTO_ERRLEN, "malformed message: not a JSON object");
                return -EBADMSG;
        }
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(msg, "v");
        if (!cJSON_IsNumber(v)) {
                snprintf(err, PROTO_ERRLEN, "protocol version missing (want %d)", PROTO_VERSION);
                return -EPROTO;
        }
        if (v->valuedouble != PROTO_VERSION) {
                snprintf(err, PROTO_ERRLEN, "protocol version %g not supported (want %d)", v->valuedouble,
                         PROTO_VERSION);
                return -EPROTO;
        }
        if (!proto_type(msg)) {
                snprintf(err, PROTO_ERRLEN, "malformed message: no \"type\" string");
                return -EBADMSG;
        }
        return 0;
}

int proto_reader_next(proto_reader *r, cJSON **msg, char err[PROTO_ERRLEN]) {
        if (r->len < PROTO_HEADER)
                return 0;
        uint32_t n = frame_length(r->buf);
        if (n == 0 || n > PROTO_MAX_MSG) {
                if (n == 0)
                        snprintf(err, PROTO_ERRLEN, "empty message");
                else
                        snprintf(err, PROTO_ERRLEN, "message of %u bytes exceeds the %d-byte limit", n,
                                 PROTO_MAX_MSG);
                return -EMSGSIZE;
        }
        if (r->len < PROTO_HEADER + (size_t)n)
                return 0;
        cJSON *m = cJSON_ParseWithLength(r->buf + PROTO_HEADER, n);
        memmove(r->buf, r->buf + PROTO_HEADER + n, r->len - PROTO_HEADER - n);
        r->len -= PROTO_HEADER + n;
        if (!m) {
                snprintf(err, PROTO_ERRLEN, "malformed message: invalid JSON");
                return -EBADMSG;
        }
        int ret = check_message(m, err);
        if (ret < 0) {
                cJSON_Delete(m);
                return ret;
        }
        *msg = m;
        return 1;
}

void proto_reader_free(proto_reader *r) {
        free(r->buf);
        *r = (proto_reader){ 0 };
}

int proto_send(int fd, const cJSON *msg) {
        char *frame;
        size_t len;
        int r = proto_frame(msg, &frame, &len);
        if (r < 0)
                return r;
        for (size_t off = 0; off < len;) {
                ssize_t n = send(fd, frame + off, len - off, MSG_NOSIGNAL);
                if (n < 0 && errno == ENOTSOCK)
                        n = write(fd, frame + off, len - off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        r = -errno;
                        break;
                }
                off += (size_t)n;
        }
        free(frame);
        return r;
}

int proto_recv(int fd, cJSON **msg, char err[PROTO_ERRLEN]) {
        proto_reader reader = { 0 };
        char buf[65536];
        int r;
        err[0] = '\0';
        while ((r = proto_reader_next(&reader, msg, err)) == 0) {
                ssize_t n = read(fd, buf, sizeof(buf));
                if (n < 0 && errno == EINTR)
                        continue;
                if (n <= 0) {
                        r = n < 0 ? -errno : -ECONNRESET;
                        break;
                }
                r = proto_reader_feed(&reader, buf, (size_t)n);
                if (r < 0)
                        break;
        }
        /* one request, one reply: bytes after the reply would be a protocol error anyway */
        proto_reader_free(&reader);
        return r < 0 ? r : 0;
}

int proto_get_int(const cJSON *msg, const char *field, int64_t min, int64_t max, int64_t *out,
                  char err[PROTO_ERRLEN]) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(msg, field);
        if (!item)
                return -ENOENT;
        double d = item->valuedouble;
        if (!cJSON_IsNumber(item) || d != floor(d) || fabs(d) > EXACT_INT_MAX || d < (double)min ||
            d > (double)max) {
                snprintf(err, PROTO_ERRLEN, "%s: must be an integer from %lld to %lld", field, (long long)min,
                         (long long)max);
                return -EINVAL;
        }
        *out = (int64_t)d;
        return 0;
}

int proto_get_str(const cJSON *msg, const char *field, const char **out, char err[PROTO_ERRLEN]) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(msg, field);
        if (!item)
                return -ENOENT;
        if (!cJSON_IsString(item)) {
                snprintf(err, PROTO_ERRLEN, "%s: must be a string", field);
                return -EINVAL;
        }
        *out = item->valuestring;
        return 0;
}

int proto_get_bool(const cJSON *msg, const char *field, bool *out, char err[PROTO_ERRLEN]) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(msg, field);
        if (!item)
                return -ENOENT;
        if (!cJSON_IsBool(item)) {
                snprintf(err, PROTO_ERRLEN, "%s: must be true or false", field);
                return -EINVAL;
        }
        *out = cJSON_IsTrue(item);
        return 0;
}

int proto_get_strv(const cJSON *msg, const char *field, size_t max_items, bool allow_empty, char ***out,
                   char err[PROTO_ERRLEN]) {
        const cJSON *arr = cJSON_GetObjectItemCaseSensitive(msg, field);
        if (!arr)
                return -ENOENT;
        if (!cJSON_IsArray(arr)) {
                snprintf(err, PROTO_ERRLEN, "%s: must be an array of strings", field);
                return -EINVAL;
        }
        size_t n = (size_t)cJSON_GetArraySize(arr);
        if (n > max_items) {
                snprintf(err, PROTO_ERRLEN, "%s: more than %zu items", field, max_items);
                return -EINVAL;
        }
        char **v = calloc(n + 1, sizeof(*v));
        if (!v)
                return -ENOMEM;
        size_t i = 0;
        const cJSON *item;
        cJSON_ArrayForEach(item, arr) {
                if (!cJSON_IsString(item) || (!allow_empty && !*item->valuestring)) {
                        snprintf(err, PROTO_ERRLEN, "%s: item %zu must be a non-empty string", field, i);
                        strv_free(v);
                        return -EINVAL;
                }
                if (!(v[i++] = strdup(item->valuestring))) {
                        strv_free(v);
                        return -ENOMEM;
                }
        }
        *out = v;
        return 0;
}

int proto_check_fields(const cJSON *msg, const char *const *allowed, char err[PROTO_ERRLEN]) {
        const cJSON *item;
        cJSON_ArrayForEach(item, msg) {
                if (strcmp(item->string, "v") == 0 || strcmp(item->string, "type") == 0)
                        continue;
                const char *const *a = allowed;
                while (*a && strcmp(*a, item->string) != 0)
                        a++;
                if (!*a) {
                        snprintf(err, PROTO_ERRLEN, "unknown field '%.64s' in %s", item->string,
                                 proto_type(msg) ? proto_type(msg) : "message");
                        return -EINVAL;
                }
        }
        return 0;
}

void strv_free(char **v) {
        if (!v)
                return;
        for (char **p = v; *p; p++)
                free(*p);
        free(v);
}

size_t strv_length(char *const *v) {
        size_t n = 0;
        while (v && v[n])
                n++;
        return n;
}

char **strv_copy(char *const *v) {
        size_t n = strv_length(v);
        char **copy = calloc(n + 1, sizeof(*copy));
        if (!copy)
                return NULL;
        for (size_t i = 0; i < n; i++)
                if (!(copy[i] = strdup(v[i]))) {
                        strv_free(copy);
                        return NULL;
                }
        return copy;
}
