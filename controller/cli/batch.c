/* batch.c - colony submit --stdin: a job per line, over one connection.
 *
 * A process per job costs its start-up and a round trip each; here the requests are pipelined
 * (client_pipeline), so the controller reads them in batches and stores each batch with one
 * commit. Replies come back in request order; each id is printed as soon as it is known.
 * (--array needs none of this: it is one request, jobs.c.) */
#include "client.h"
#include "format.h"
#include "jobs.h"
#include "proto.h"
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct batch {
        const cli *c;
        job_spec spec; /* the options'; argv is swapped per job */
        FILE *lines;
        unsigned line_no;
        size_t failed;
} batch;

static cJSON *submit_request(const job_spec *spec) {
        cJSON *req = proto_new("submit");
        if (req && job_spec_to_json(spec, req) < 0) {
                cJSON_Delete(req);
                req = NULL;
        }
        return req;
}

/* A reply, in order: print the id, or say which job was refused. */
static void batch_done(void *ud, uint64_t tag, const cJSON *reply) {
        batch *b = ud;
        char perr[PROTO_ERRLEN];
        const char *text = NULL;
        int64_t id;
        if (b->c->json) {
                char *line = proto_print(reply);
                if (line)
                        puts(line);
                free(line);
        }
        if (strcmp(proto_type(reply), "submitted") == 0 && proto_get_int(reply, "id", 1, INT64_MAX, &id, perr) == 0) {
                if (!b->c->json)
                        printf("%" PRId64 "\n", id);
                return;
        }
        b->failed++;
        if (proto_get_str(reply, "error", &text, perr) < 0 || !text)
                text = "unexpected reply from the controller";
        cli_error(b->c, "line %" PRIu64 ": %s", tag, text);
}

/* Split line at blanks into a NULL-terminated vector pointing into it (malloc'ed). */
static char **split_words(char *line) {
        size_t n = 0, cap = 8;
        char **v = malloc(cap * sizeof(char *)), *save = NULL;
        for (char *w = strtok_r(line, " \t\r\n", &save); v && w; w = strtok_r(NULL, " \t\r\n", &save)) {
                if (n + 2 > cap) {
                        char **p = realloc(v, (cap *= 2) * sizeof(char *));
                        if (!p) {
                                free(v);
                                return NULL;
                        }
                        v = p;
                }
                v[n++] = w;
        }
        if (v)
                v[n] = NULL;
        return v;
}

/* The request for the next line that names a command; lines whose command cannot run are
 * reported and skipped. */
static int lines_next(void *ud, cJSON **req, uint64_t *tag) {
        batch *b = ud;
        char *line = NULL, perr[PROTO_ERRLEN];
        size_t cap = 0;
        int r = 0;
        while (r == 0 && getline(&line, &cap, b->lines) >= 0) {
                char **argv = split_words(line), *cmd = NULL;
                b->line_no++;
                if (!argv)
                        r = -ENOMEM;
                else if (!argv[0] || argv[0][0] == '#')
                        ;
                else if (jobs_resolve_command(b->c, argv[0], b->spec.cwd, &cmd) != 0) {
                        fprintf(stderr, "colony: submit: (line %u skipped)\n", b->line_no);
                        b->failed++;
                } else {
                        argv[0] = cmd;
                        b->spec.argv = argv;
                        *tag = b->line_no;
                        r = (*req = submit_request(&b->spec)) ? 1 : -ENOMEM;
                        /* Refused here: the printer would send its bytes replaced, unseen. */
                        if (r == 1 && proto_check_utf8(*req, perr) < 0) {
                                cli_error(b->c, "line %u: %s", b->line_no, perr);
                                b->failed++;
                                cJSON_Delete(*req);
                                *req = NULL;
                                r = 0;
                        }
                }
                free(cmd);
                free(argv);
        }
        free(line);
        b->spec.argv = NULL;
        if (r == 0 && ferror(b->lines))
                r = -EIO;
        return r;
}

int jobs_submit_lines(const cli *c, const char *sock, const job_spec *spec, FILE *f) {
        batch b = { .c = c, .spec = *spec, .lines = f };
        char err[ERRLEN] = "";
        int r = client_pipeline(sock, lines_next, batch_done, &b, REQUEST_TIMEOUT_MS, err, sizeof(err));
        if (r < 0 && !*err)
                snprintf(err, sizeof(err), "%s", r == -EIO ? "reading the standard input failed" : strerror(-r));
        if (r < 0)
                cli_error(c, "%s", err);
        return r < 0 || b.failed ? EXIT_FAIL : 0;
}
