/* fuzz_proto.c - the wire protocol as the controller, the agents and the CLI meet it
 * (shared/proto.c, shared/job.c, controller/core/agentmsg.c, agent/launchmsg.c): bytes off a socket through the frame
 * decoder, each message it yields through the field checks and the job model's parsers. Each
 * input is read twice: as a byte stream, and as the body of one frame.
 *
 * Besides "no crash, no leak, no undefined behaviour", two invariants abort():
 * - the incremental reader gives the same messages and the same error whether the bytes come in
 *   at once or a few at a time, and so does the blocking proto_recv;
 * - a job spec, job record or interference matrix that parses serializes to JSON that parses
 *   back to the same thing;
 * - colony's printers write valid UTF-8 that means what cJSON's printer writes (check_print). */
#include "agentmsg.h"
#include "alpha.h"
#include "job.h"
#include "launchmsg.h"
#include "proto.h"
#include "utf8.h"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* What decoding a byte stream came to: how many messages, then which error (0: none). */
typedef struct outcome {
        size_t messages;
        int error;
} outcome;

/* Parse obj as a spec, serialize it, parse that: the second spec must serialize the same. */
static void check_spec(const cJSON *obj) {
        char err[PROTO_ERRLEN];
        job_spec a = { 0 }, b = { 0 };
        if (job_spec_from_json(obj, &a, err) < 0)
                return;
        cJSON *ja = cJSON_CreateObject(), *jb = cJSON_CreateObject();
        if (!ja || !jb || job_spec_to_json(&a, ja) < 0)
                abort();
        if (job_spec_from_json(ja, &b, err) < 0 || job_spec_to_json(&b, jb) < 0 || !cJSON_Compare(ja, jb, true))
                abort();
        cJSON_Delete(ja);
        cJSON_Delete(jb);
        job_spec_free(&a);
        job_spec_free(&b);
}

/* The same for a job record, as the CLI reads show, queue, wait and history replies. */
static void check_record(const cJSON *obj) {
        char err[PROTO_ERRLEN];
        job a, b;
        if (job_from_json(obj, &a, err) < 0)
                return;
        cJSON *ja = job_to_json(&a), *jb = NULL;
        if (!ja || job_from_json(ja, &b, err) < 0 || !(jb = job_to_json(&b)) || !cJSON_Compare(ja, jb, true))
                abort();
        cJSON_Delete(ja);
        cJSON_Delete(jb);
        job_free(&a);
        job_free(&b);
}

/* The same for an interference matrix (alpha_put, alpha_get's reply). */
static void check_alpha(const cJSON *obj) {
        char err[PROTO_ERRLEN];
        alpha_matrix a, b;
        if (alpha_from_json(obj, &a, err) < 0)
                return;
        cJSON *ja = cJSON_CreateObject(), *jb = cJSON_CreateObject();
        if (!ja || !jb || alpha_to_json(&a, ja) < 0 || alpha_from_json(ja, &b, err) < 0 || alpha_to_json(&b, jb) < 0 ||
            !cJSON_Compare(ja, jb, true))
                abort();
        cJSON_Delete(ja);
        cJSON_Delete(jb);
        alpha_free(&a);
        alpha_free(&b);
}

/* For a message of valid UTF-8, proto_print's and proto_print_pretty's texts mean what cJSON's
 * mean: each reads back and is printed by cJSON as cJSON's own text is (cJSON_Compare would
 * not do: it matches an object's duplicate keys to the first). For any message, both texts
 * are valid UTF-8 (cJSON's need not be). */
static void check_print(const cJSON *msg) {
        char *texts[4] = { proto_print(msg), cJSON_PrintUnformatted(msg), proto_print_pretty(msg), cJSON_Print(msg) };
        char *again[4] = { NULL, NULL, NULL, NULL }, err[PROTO_ERRLEN];
        bool valid = proto_check_utf8(msg, err) == 0;
        for (int i = 0; i < 4; i++) {
                cJSON *back = texts[i] ? cJSON_Parse(texts[i]) : NULL;
                again[i] = back ? cJSON_PrintUnformatted(back) : NULL;
                cJSON_Delete(back);
        }
        for (int i = 0; i < 4; i += 2) {
                if (texts[i] && utf8_invalid_at(texts[i]) >= 0)
                        abort();
                if (valid && texts[i] && texts[i + 1] &&
                    (!again[i] != !again[i + 1] || (again[i] && strcmp(again[i], again[i + 1]) != 0)))
                        abort();
        }
        for (int i = 0; i < 4; i++) {
                free(texts[i]);
                free(again[i]);
        }
}

/* Everything the daemons and the CLI read from a message, whatever its type says it is. */
static void check_message(const cJSON *msg) {
        char err[PROTO_ERRLEN];
        job_result res;
        agent_hello hello;
        launch_msg launch = { 0 };
        const cJSON *item;
        (void)proto_check_fields(msg, job_spec_fields, err);
        (void)proto_check_fields(msg, job_submit_fields, err);
        check_print(msg);
        if (job_result_from_json(msg, &res, err) == 0)
                job_result_free(&res);
        if (agentmsg_hello(msg, &hello, err) == 0)
                free(hello.running);
        (void)launchmsg_parse(msg, &launch, err); /* what it parsed is the caller's, even on failure */
        job_spec_free(&launch.spec);
        check_spec(msg);
        check_alpha(msg);
        check_record(msg);
        check_record(cJSON_GetObjectItemCaseSensitive(msg, "job"));
        cJSON_ArrayForEach(item, cJSON_GetObjectItemCaseSensitive(msg, "jobs")) check_record(item);
}

/* Drain every whole message from r. Returns 0 when it needs more bytes, or the error. */
static int drain(proto_reader *r, outcome *o) {
        char err[PROTO_ERRLEN];
        cJSON *msg;
        int k;
        while ((k = proto_reader_next(r, &msg, err)) == 1) {
                check_message(msg);
                cJSON_Delete(msg);
                o->messages++;
        }
        return k;
}

/* Feed data to a reader chunk bytes at a time, draining after each read as conn.c does. */
static outcome decode(const uint8_t *data, size_t size, size_t chunk) {
        proto_reader r = { 0 };
        outcome o = { 0 };
        for (size_t off = 0; off < size && o.error == 0; off += chunk) {
                size_t n = size - off < chunk ? size - off : chunk;
                if (proto_reader_feed(&r, data + off, n) < 0)
                        abort();
                o.error = drain(&r, &o);
        }
        proto_reader_free(&r);
        return o;
}

/* The blocking client path: proto_recv over a pipe holding data, until an error or the end. */
static outcome receive(const uint8_t *data, size_t size) {
        outcome o = { 0 };
        char err[PROTO_ERRLEN];
        cJSON *msg;
        int fds[2];
        /* a pipe holds 64 KiB: a longer input would block the write */
        if (pipe2(fds, O_CLOEXEC) < 0 || write(fds[1], data, size) != (ssize_t)size)
                abort();
        close(fds[1]);
        while ((o.error = proto_recv(fds[0], &msg, err)) == 0) {
                cJSON_Delete(msg);
                o.messages++;
        }
        close(fds[0]);
        /* at the end of the stream the reader waits for more where proto_recv sees the peer gone */
        if (o.error == -ECONNRESET)
                o.error = 0;
        return o;
}

static bool same(outcome a, outcome b) { return a.messages == b.messages && a.error == b.error; }

/* Decode the stream every way a peer's bytes arrive; all must agree. */
static void check_stream(const uint8_t *data, size_t size) {
        outcome whole = decode(data, size, size ? size : 1);
        if (!same(whole, decode(data, size, 3)))
                abort();
        if (size <= 65536 && !same(whole, receive(data, size)))
                abort();
}

/* The input as the body of one well-framed message: a mutation of a stream rarely keeps its
 * length headers right, so this is how the fuzzer reaches the JSON and the field checks. */
static void check_body(const uint8_t *data, size_t size) {
        if (size == 0 || size > PROTO_MAX_MSG)
                return;
        uint8_t *frame = malloc(PROTO_HEADER + size);
        if (!frame)
                abort();
        frame[0] = (uint8_t)(size >> 24);
        frame[1] = (uint8_t)(size >> 16);
        frame[2] = (uint8_t)(size >> 8);
        frame[3] = (uint8_t)size;
        memcpy(frame + PROTO_HEADER, data, size);
        check_stream(frame, PROTO_HEADER + size);
        free(frame);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
        check_stream(data, size);
        check_body(data, size);
        return 0;
}
