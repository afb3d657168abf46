/* proto.c - framing and field access for colony's JSON protocol (docs/protocol.md). */
#include "proto.h"
#include "utf8.h"
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* cJSON keeps numbers as doubles: integers beyond 2^53 are not exact. */
#define EXACT_INT_MAX 9007199254740992.0
/* 2^63: doubles below it in magnitude convert to int64_t */
#define INT64_LIMIT 9223372036854775808.0

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

/* proto_print's output: a growing string, which failed when out of memory. */
typedef struct text {
        char *s;
        size_t len, cap;
        bool failed;
} text;

static void put(text *t, const char *s, size_t n) {
        if (t->failed)
                return;
        if (t->len + n + 1 > t->cap) {
                size_t cap = t->cap ? t->cap : 512;
                while (cap < t->len + n + 1)
                        cap *= 2;
                char *grown = realloc(t->s, cap);
                if (!grown) {
                        t->failed = true;
                        return;
                }
                t->s = grown;
                t->cap = cap;
        }
        memcpy(t->s + t->len, s, n);
        t->len += n;
        t->s[t->len] = '\0';
}

/* A JSON string, escaped as cJSON escapes it (NULL: ""), but for a byte that is not valid
 * UTF-8, written as U+FFFD: colony refuses such bytes on input (proto_check_utf8), yet an
 * error that echoes them, or cuts a character with "%.64s", must not make the reply invalid. */
static void put_string(text *t, const char *s) {
        static const char specials[] = "\"\\\b\f\n\r\t", names[] = "\"\\bfnrt";
        if (!s)
                s = "";
        put(t, "\"", 1);
        while (*s) {
                size_t plain = 0, n;
                for (unsigned char b; (b = (unsigned char)s[plain]);) {
                        if (b >= 0x80 && (n = utf8_char_len(s + plain)) > 0)
                                plain += n;
                        else if (b >= 0x20 && b < 0x80 && b != '"' && b != '\\')
                                plain++;
                        else
                                break;
                }
                put(t, s, plain);
                s += plain;
                if (!*s)
                        break;
                char esc[8];
                const char *named = strchr(specials, *s);
                if (named)
                        snprintf(esc, sizeof(esc), "\\%c", names[named - specials]);
                else if ((unsigned char)*s >= 0x20)
                        snprintf(esc, sizeof(esc), "\\ufffd");
                else
                        snprintf(esc, sizeof(esc), "\\u%04x", (unsigned char)*s);
                put(t, esc, strlen(esc));
                s++;
        }
        put(t, "\"", 1);
}

/* Every integral double below 2^63 in magnitude as its digits, which strict int64 readers
 * accept: cJSON's "%1.15g" would write 1795654969639970 as 1.79565496963997e+15. Up to 2^53
 * these are the integers themselves; above, the double's exact value (colony refuses such
 * values on the wire, see proto_int_value, so only a foreign message can carry one). */
static void put_number(text *t, const cJSON *item) {
        double d = item->valuedouble;
        if (d > -INT64_LIMIT && d < INT64_LIMIT && d == (double)(int64_t)d && !(d == 0 && signbit(d))) {
                char digits[24], *p = digits + sizeof(digits);
                uint64_t v = d < 0 ? (uint64_t) - (int64_t)d : (uint64_t)d;
                do
                        *--p = (char)('0' + v % 10);
                while (v /= 10);
                if (d < 0)
                        *--p = '-';
                put(t, p, (size_t)(digits + sizeof(digits) - p));
                return;
        }
        char *other = cJSON_PrintUnformatted(item); /* fractions, NaN, infinities, -0: cJSON's way */
        if (!other)
                t->failed = true;
        else
                put(t, other, strlen(other));
        free(other);
}

static void put_indent(text *t, int depth) {
        for (int i = 0; i < depth; i++)
                put(t, "\t", 1);
}

/* item at depth (the number of open objects and arrays around it); depth < 0: no layout at all,
 * else laid out as cJSON_Print lays it out (objects one member a line, indented by a tab per
 * depth; arrays on one line, ", " between items). */
static void put_value(text *t, const cJSON *item, int depth) {
        const cJSON *c;
        bool object = cJSON_IsObject(item), pretty = depth >= 0;
        if (cJSON_IsNumber(item))
                put_number(t, item);
        else if (cJSON_IsString(item))
                put_string(t, item->valuestring);
        else if (cJSON_IsRaw(item))
                put(t, item->valuestring, strlen(item->valuestring));
        else if (cJSON_IsBool(item))
                put(t, cJSON_IsTrue(item) ? "true" : "false", cJSON_IsTrue(item) ? 4 : 5);
        else if (!object && !cJSON_IsArray(item))
                put(t, "null", 4);
        else {
                int inner = pretty ? depth + 1 : depth;
                put(t, object ? "{" : "[", 1);
                if (pretty && object)
                        put(t, "\n", 1);
                cJSON_ArrayForEach(c, item) {
                        if (object) {
                                put_indent(t, inner);
                                put_string(t, c->string);
                                put(t, pretty ? ":\t" : ":", pretty ? 2 : 1);
                        }
                        put_value(t, c, inner);
                        if (c->next)
                                put(t, pretty && !object ? ", " : ",", pretty && !object ? 2 : 1);
                        if (pretty && object)
                                put(t, "\n", 1);
                }
                if (pretty && object)
                        put_indent(t, depth);
                put(t, object ? "}" : "]", 1);
        }
}

/* obj's text with put_value at depth; NULL when out of memory. */
static char *print_at(const cJSON *obj, int depth) {
        text t = { 0 };
        put_value(&t, obj, depth);
        if (t.failed) {
                free(t.s);
                return NULL;
        }
        return t.s;
}

char *proto_print(const cJSON *obj) { return print_at(obj, -1); }

char *proto_print_pretty(const cJSON *obj) { return print_at(obj, 0); }

int proto_frame(const cJSON *msg, char **out, size_t *len) {
        char *json = proto_print(msg);
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

static uint32_t frame_length(const char *p) {
        const unsigned char *u = (const unsigned char *)p;
        return (uint32_t)u[0] << 24 | (uint32_t)u[1] << 16 | (uint32_t)u[2] << 8 | u[3];
}

static bool length_ok(uint32_t n) { return n >= 1 && n <= PROTO_MAX_MSG; }

/* True when the header at the start of the stream, completed from data if need be, announces
 * a bad length. */
static bool bad_header(const proto_reader *r, const void *data, size_t n) {
        if (r->len + n < PROTO_HEADER)
                return false;
        char header[PROTO_HEADER];
        size_t have = r->len < PROTO_HEADER ? r->len : PROTO_HEADER;
        if (have > 0)
                memcpy(header, r->buf, have);
        if (have < PROTO_HEADER)
                memcpy(header + have, data, PROTO_HEADER - have);
        return !length_ok(frame_length(header));
}

int proto_reader_feed(proto_reader *r, const void *data, size_t n) {
        /* After a bad length the stream is dead: keep the header for proto_reader_next to report,
         * and none of the body it announced. */
        if (r->off > 0) {
                memmove(r->buf, r->buf + r->off, r->len - r->off);
                r->len -= r->off;
                r->off = 0;
        }
        if (bad_header(r, data, n))
                n = r->len < PROTO_HEADER ? PROTO_HEADER - r->len : 0;
        if (n == 0)
                return 0;
        size_t need = r->len + n;
        if (need > r->cap) {
                size_t cap = r->cap ? r->cap : 4096;
                while (cap < need)
                        cap *= 2;
                /* doubling must not reserve more than one whole frame */
                if (cap > PROTO_HEADER + PROTO_MAX_MSG)
                        cap = need > PROTO_HEADER + PROTO_MAX_MSG ? need : PROTO_HEADER + PROTO_MAX_MSG;
                char *buf = realloc(r->buf, cap);
                if (!buf)
                        return -ENOMEM;
                r->buf = buf;
                r->cap = cap;
        }
        memcpy(r->buf + r->len, data, n);
        r->len = need;
        return 0;
}

/* Set err from fmt and return code (a negative errno). */
__attribute__((format(printf, 3, 4))) static int fail(int code, char err[PROTO_ERRLEN], const char *fmt, ...) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(err, PROTO_ERRLEN, fmt, ap);
        va_end(ap);
        return code;
}

/* Check what every message must have: an object with "v" and "type". Returns 0 or -errno. */
static int check_envelope(const cJSON *m, char err[PROTO_ERRLEN]) {
        if (!cJSON_IsObject(m))
                return fail(-EBADMSG, err, "malformed message: not a JSON object");
        const cJSON *v = cJSON_GetObjectItemCaseSensitive(m, "v");
        if (!v)
                return fail(-EPROTO, err, "protocol version missing (want %d)", PROTO_VERSION);
        if (!cJSON_IsNumber(v))
                return fail(-EPROTO, err, "protocol version is not a number (want %d)", PROTO_VERSION);
        if (v->valuedouble != PROTO_VERSION)
                return fail(-EPROTO, err, "protocol version %g not supported (want %d)", v->valuedouble, PROTO_VERSION);
        if (!proto_type(m))
                return fail(-EBADMSG, err, "malformed message: no \"type\" string");
        return 0;
}

static bool is_json_space(char c) { return c == ' ' || c == '\t' || c == '\r' || c == '\n'; }

/* Parse one frame body: exactly one JSON object. Returns 0 and sets *msg, or -errno with err set. */
static int parse_body(const char *body, size_t n, cJSON **msg, char err[PROTO_ERRLEN]) {
        const char *end = NULL;
        cJSON *m = cJSON_ParseWithLengthOpts(body, n, &end, false);
        if (!m)
                return fail(-EBADMSG, err, "malformed JSON");
        /* whitespace may follow the object; anything else is a second value or garbage */
        while (end < body + n && is_json_space(*end))
                end++;
        int r = end == body + n ? check_envelope(m, err) : fail(-EBADMSG, err, "malformed JSON: data after the object");
        if (r < 0)
                cJSON_Delete(m);
        else
                *msg = m;
        return r;
}

/* Check a frame header. Returns the body length, or -EMSGSIZE with err set. */
static int64_t check_header(const char *header, char err[PROTO_ERRLEN]) {
        uint32_t n = frame_length(header);
        if (length_ok(n))
                return n;
        if (n == 0)
                return fail(-EMSGSIZE, err, "empty message (length 0)");
        return fail(-EMSGSIZE, err, "message of %" PRIu32 " bytes exceeds the %d-byte limit", n, PROTO_MAX_MSG);
}

int proto_reader_next(proto_reader *r, cJSON **msg, char err[PROTO_ERRLEN]) {
        const char *at = r->buf + r->off;
        size_t avail = r->len - r->off;
        if (avail < PROTO_HEADER)
                return 0;
        int64_t n = check_header(at, err);
        if (n < 0)
                return (int)n;
        size_t frame = PROTO_HEADER + (size_t)n;
        if (avail < frame)
                return 0;
        int ret = parse_body(at + PROTO_HEADER, (size_t)n, msg, err);
        r->off += frame;
        if (r->off == r->len)
                r->off = r->len = 0;
        return ret < 0 ? ret : 1;
}

int64_t proto_reader_next_length(const proto_reader *r) {
        return r->len - r->off < PROTO_HEADER ? -1 : (int64_t)frame_length(r->buf + r->off);
}

void proto_reader_free(proto_reader *r) {
        free(r->buf);
        *r = (proto_reader){ 0 };
}

int proto_write_all(int fd, const void *data, size_t len) {
        const char *p = data;
        for (size_t off = 0; off < len;) {
                ssize_t n = send(fd, p + off, len - off, MSG_NOSIGNAL);
                if (n < 0 && errno == ENOTSOCK)
                        n = write(fd, p + off, len - off);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0)
                        return -errno;
                off += (size_t)n;
        }
        return 0;
}

int proto_send(int fd, const cJSON *msg) {
        char *frame;
        size_t len;
        int r = proto_frame(msg, &frame, &len);
        if (r < 0)
                return r;
        r = proto_write_all(fd, frame, len);
        free(frame);
        return r;
}

int proto_read_exact(int fd, void *buf, size_t n) {
        for (size_t off = 0; off < n;) {
                ssize_t k = read(fd, (char *)buf + off, n - off);
                if (k < 0 && errno == EINTR)
                        continue;
                if (k < 0)
                        return -errno;
                if (k == 0)
                        return -ECONNRESET;
                off += (size_t)k;
        }
        return 0;
}

int proto_recv(int fd, cJSON **msg, char err[PROTO_ERRLEN]) {
        /* Read the frame and not a byte more: what follows belongs to the caller's next call. */
        char header[PROTO_HEADER];
        err[0] = '\0';
        int r = proto_read_exact(fd, header, PROTO_HEADER);
        if (r < 0)
                return r;
        int64_t n = check_header(header, err);
        if (n < 0)
                return (int)n;
        char *body = malloc((size_t)n);
        if (!body)
                return -ENOMEM;
        r = proto_read_exact(fd, body, (size_t)n);
        if (r == 0)
                r = parse_body(body, (size_t)n, msg, err);
        free(body);
        return r;
}

bool proto_int_value(const cJSON *item, int64_t min, int64_t max, int64_t *out) {
        if (!cJSON_IsNumber(item))
                return false;
        double d = item->valuedouble;
        if (d != floor(d) || fabs(d) > EXACT_INT_MAX || d < (double)min || d > (double)max)
                return false;
        *out = (int64_t)d;
        return true;
}

int proto_get_int(const cJSON *msg, const char *field, int64_t min, int64_t max, int64_t *out, char err[PROTO_ERRLEN]) {
        const cJSON *item = cJSON_GetObjectItemCaseSensitive(msg, field);
        if (!item)
                return -ENOENT;
        if (!proto_int_value(item, min, max, out)) {
                snprintf(err, PROTO_ERRLEN, "%s: must be an integer from %lld to %lld", field, (long long)min,
                         (long long)max);
                return -EINVAL;
        }
        return 0;
}

/* msg's field into *item when is() holds for it: -ENOENT when msg has none, -EINVAL with
 * "<field>: must be <what>" in err when it is of another type. */
static int get_typed(const cJSON *msg, const char *field, cJSON_bool (*is)(const cJSON *), const char *what,
                     const cJSON **item, char err[PROTO_ERRLEN]) {
        *item = cJSON_GetObjectItemCaseSensitive(msg, field);
        if (!*item)
                return -ENOENT;
        if (!is(*item)) {
                snprintf(err, PROTO_ERRLEN, "%s: must be %s", field, what);
                return -EINVAL;
        }
        return 0;
}

int proto_get_str(const cJSON *msg, const char *field, const char **out, char err[PROTO_ERRLEN]) {
        const cJSON *item;
        int r = get_typed(msg, field, cJSON_IsString, "a string", &item, err);
        if (r == 0)
                *out = item->valuestring;
        return r;
}

int proto_get_bool(const cJSON *msg, const char *field, bool *out, char err[PROTO_ERRLEN]) {
        const cJSON *item;
        int r = get_typed(msg, field, cJSON_IsBool, "true or false", &item, err);
        if (r == 0)
                *out = cJSON_IsTrue(item);
        return r;
}

int proto_get_strv(const cJSON *msg, const char *field, size_t max_items, bool allow_empty, char ***out,
                   char err[PROTO_ERRLEN]) {
        const cJSON *arr;
        int r = get_typed(msg, field, cJSON_IsArray, "an array of strings", &arr, err);
        if (r < 0)
                return r;
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
                        snprintf(err, PROTO_ERRLEN, "%s: item %zu must be a %sstring", field, i,
                                 allow_empty ? "" : "non-empty ");
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

/* True when a field before item has item's name. */
static bool seen_before(const cJSON *msg, const cJSON *item) {
        for (const cJSON *prev = msg->child; prev != item; prev = prev->next)
                if (strcmp(prev->string, item->string) == 0)
                        return true;
        return false;
}

/* Whether every string in item, member names included, is valid UTF-8. */
static bool all_utf8(const cJSON *item) {
        const cJSON *c;
        if (item->string && utf8_invalid_at(item->string) >= 0)
                return false;
        if (cJSON_IsString(item))
                return utf8_invalid_at(item->valuestring) < 0;
        cJSON_ArrayForEach(c, item) {
                if (!all_utf8(c))
                        return false;
        }
        return true;
}

/* Say where s, a string of field (item index, or -1 for the field itself), stops being UTF-8,
 * with up to 32 bytes before, cut at a character, to find it by: an environment's twelfth
 * variable is hard to find by its index. Returns -EINVAL. */
static int not_utf8(const char *field, int index, const char *s, char err[PROTO_ERRLEN]) {
        long at = utf8_invalid_at(s), shown = at < 32 ? at : 32;
        char item[32] = "";
        while (shown > 0 && ((unsigned char)s[shown] & 0xC0) == 0x80)
                shown--;
        if (index >= 0)
                snprintf(item, sizeof(item), " item %d", index);
        if (at == 0)
                return fail(-EINVAL, err, "%.64s%s: not valid UTF-8 (byte 0)", field, item);
        return fail(-EINVAL, err, "%.64s%s: not valid UTF-8 (byte %ld, after \"%.*s\")", field, item, at, (int)shown,
                    s);
}

int proto_check_utf8(const cJSON *msg, char err[PROTO_ERRLEN]) {
        const cJSON *field, *c;
        cJSON_ArrayForEach(field, msg) {
                if (utf8_invalid_at(field->string) >= 0)
                        return fail(-EINVAL, err, "a field name is not valid UTF-8");
                if (cJSON_IsString(field) && utf8_invalid_at(field->valuestring) >= 0)
                        return not_utf8(field->string, -1, field->valuestring, err);
                int i = 0;
                cJSON_ArrayForEach(c, field) {
                        if (cJSON_IsArray(field) && cJSON_IsString(c) && utf8_invalid_at(c->valuestring) >= 0)
                                return not_utf8(field->string, i, c->valuestring, err);
                        if (!all_utf8(c))
                                return fail(-EINVAL, err, "%.64s: not valid UTF-8", field->string);
                        i++;
                }
        }
        return 0;
}

int proto_check_fields(const cJSON *msg, const char *const *allowed, char err[PROTO_ERRLEN]) {
        if (!cJSON_IsObject(msg))
                return fail(-EINVAL, err, "malformed message: not a JSON object");
        const char *type = proto_type(msg) ? proto_type(msg) : "message";
        const cJSON *item;
        /* Fields before the current one are known and distinct, so seen_before stays short even
         * for a hostile message of a million fields. */
        cJSON_ArrayForEach(item, msg) {
                if (seen_before(msg, item))
                        return fail(-EINVAL, err, "duplicate field '%.64s' in %s", item->string, type);
                if (strcmp(item->string, "v") == 0 || strcmp(item->string, "type") == 0)
                        continue;
                const char *const *a = allowed;
                while (*a && strcmp(*a, item->string) != 0)
                        a++;
                if (!*a)
                        return fail(-EINVAL, err, "unknown field '%.64s' in %.64s", item->string, type);
        }
        return 0;
}

bool proto_output_all_read(const cJSON *answer, bool ended) {
        return ended && cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(answer, "out_eof")) &&
               (!cJSON_GetObjectItemCaseSensitive(answer, "err") ||
                cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(answer, "err_eof")));
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

bool strv_equal(char *const *a, char *const *b) {
        size_t i = 0;
        for (; a && b && a[i] && b[i]; i++)
                if (strcmp(a[i], b[i]) != 0)
                        return false;
        return !(a && a[i]) && !(b && b[i]);
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
