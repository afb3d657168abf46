/* launchpack.c - a launch request flattened into bytes, and rebuilt (see launchpack.h).
 *
 * Both ends are the same binary (the standby shepherd is a fork of the agent), so numbers and
 * structs go as they lie in memory; what must be checked is only that the bytes are one whole
 * request. Layout: the head, the denied devices, the department weights, then the strings, each
 * a presence byte and, when present, its text with its NUL; a vector is a count and strings. */
#include "launchpack.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

typedef struct pack_head {
        uint64_t id, exit_spare;
        uint32_t uid, gid;
        struct rlimit nofile;
        int64_t mcpu, mem, mem_high, pids;
        uint64_t cpu_weight;
        uint32_t ndeny, ndept_weights;
        int32_t umask;
        uint8_t truncate_output;
} pack_head;

/* Written twice: once with no buffer, to count the bytes, then into one of that size. */
typedef struct packer {
        char *buf;
        size_t len;
} packer;

static void put(packer *p, const void *data, size_t n) {
        if (p->buf && n) /* data may be NULL when n is 0 */
                memcpy(p->buf + p->len, data, n);
        p->len += n;
}

static void put_str(packer *p, const char *s) {
        uint8_t present = s != NULL;

        put(p, &present, 1);
        if (s)
                put(p, s, strlen(s) + 1);
}

static void put_strv(packer *p, char *const *v) {
        uint32_t n = 0;

        while (v && v[n])
                n++;
        put(p, &n, sizeof(n));
        for (uint32_t i = 0; i < n; i++)
                put_str(p, v[i]);
}

static void put_request(packer *p, const launch_req *req, const pack_head *h) {
        const job_spec *s = req->spec;
        const cg_limits *l = req->lim;

        put(p, h, sizeof(*h));
        put(p, l->deny, l->ndeny * sizeof(*l->deny));
        put(p, req->dept_weights, req->ndept_weights * sizeof(*req->dept_weights));
        put_str(p, req->cg_job);
        put_str(p, req->dept);
        put_str(p, l->cpus);
        put_str(p, s->cwd);
        put_str(p, s->stdout_path);
        put_str(p, s->stderr_path);
        put_str(p, s->script);
        put_strv(p, s->argv);
        put_strv(p, s->env);
}

int launch_pack(const launch_req *req, uint64_t id, uint64_t exit_spare, char **buf, size_t *len) {
        const cg_limits *l = req->lim;
        pack_head h = { .id = id,
                        .exit_spare = exit_spare,
                        .uid = req->uid,
                        .gid = req->gid,
                        .nofile = req->nofile,
                        .mcpu = l->mcpu,
                        .mem = l->mem,
                        .mem_high = l->mem_high,
                        .pids = l->pids,
                        .cpu_weight = l->cpu_weight,
                        .ndeny = (uint32_t)l->ndeny,
                        .ndept_weights = (uint32_t)req->ndept_weights,
                        .umask = req->spec->umask,
                        .truncate_output = req->truncate_output };
        packer p = { 0 };

        put_request(&p, req, &h);
        if (!(p.buf = malloc(p.len)))
                return -ENOMEM;
        p.len = 0;
        put_request(&p, req, &h);
        *buf = p.buf;
        *len = p.len;
        return 0;
}

typedef struct reader {
        const char *buf;
        size_t len, off;
} reader;

static int get(reader *r, void *out, size_t n) {
        if (n > r->len - r->off)
                return -EBADMSG;
        if (n == 0) /* out may be NULL then */
                return 0;
        memcpy(out, r->buf + r->off, n);
        r->off += n;
        return 0;
}

/* A string of the buffer, in place: *out NULL when absent. */
static int get_str(reader *r, const char **out) {
        uint8_t present;
        const char *end;

        if (get(r, &present, 1) < 0 || present > 1)
                return -EBADMSG;
        *out = NULL;
        if (!present)
                return 0;
        if (!(end = memchr(r->buf + r->off, 0, r->len - r->off)))
                return -EBADMSG;
        *out = r->buf + r->off;
        r->off = (size_t)(end - r->buf) + 1;
        return 0;
}

/* A vector: *out a malloc'ed array of the buffer's strings, NULL-terminated. */
static int get_strv(reader *r, char ***out) {
        uint32_t n;

        if (get(r, &n, sizeof(n)) < 0 || n > r->len - r->off) /* each string takes a byte at least */
                return -EBADMSG;
        if (!(*out = calloc((size_t)n + 1, sizeof(char *))))
                return -ENOMEM;
        for (uint32_t i = 0; i < n; i++) {
                const char *s;

                if (get_str(r, &s) < 0 || !s)
                        return -EBADMSG;
                (*out)[i] = (char *)s;
        }
        return 0;
}

/* An array of n items of size bytes, copied out of the buffer (which need not be aligned). */
static int get_array(reader *r, size_t n, size_t size, void **out) {
        *out = NULL;
        if (n > (r->len - r->off) / size)
                return -EBADMSG;
        if (n && !(*out = malloc(n * size)))
                return -ENOMEM;
        return get(r, *out, n * size);
}

int launch_unpack(const char *buf, size_t len, launch_unpacked *out) {
        reader r = { .buf = buf, .len = len };
        launch_unpacked *u = out;
        pack_head h;
        const char *cpus, *cwd, *out_path, *err_path, *script;
        int e;

        *u = (launch_unpacked){ 0 };
        if ((e = get(&r, &h, sizeof(h))) < 0 ||
            (e = get_array(&r, h.ndeny, sizeof(cg_device), (void **)&u->deny)) < 0 ||
            (e = get_array(&r, h.ndept_weights, sizeof(double), (void **)&u->dept_weights)) < 0 ||
            (e = get_str(&r, &u->req.cg_job)) < 0 || (e = get_str(&r, &u->req.dept)) < 0 ||
            (e = get_str(&r, &cpus)) < 0 || (e = get_str(&r, &cwd)) < 0 || (e = get_str(&r, &out_path)) < 0 ||
            (e = get_str(&r, &err_path)) < 0 || (e = get_str(&r, &script)) < 0 ||
            (e = get_strv(&r, &u->spec.argv)) < 0 || (e = get_strv(&r, &u->spec.env)) < 0)
                goto fail;
        if (r.off != len || !u->req.cg_job) {
                e = -EBADMSG;
                goto fail;
        }
        u->id = h.id;
        u->exit_spare = h.exit_spare;
        u->spec.cwd = (char *)cwd;
        u->spec.stdout_path = (char *)out_path;
        u->spec.stderr_path = (char *)err_path;
        u->spec.script = (char *)script;
        u->spec.umask = h.umask;
        u->lim = (cg_limits){ .mcpu = h.mcpu,
                              .mem = h.mem,
                              .mem_high = h.mem_high,
                              .pids = h.pids,
                              .cpu_weight = h.cpu_weight,
                              .cpus = cpus,
                              .deny = u->deny,
                              .ndeny = h.ndeny };
        u->req.spec = &u->spec;
        u->req.uid = h.uid;
        u->req.gid = h.gid;
        u->req.nofile = h.nofile;
        u->req.truncate_output = h.truncate_output;
        u->req.lim = &u->lim;
        u->req.dept_weights = u->dept_weights;
        u->req.ndept_weights = h.ndept_weights;
        return 0;
fail:
        launch_unpacked_free(u);
        return e;
}

void launch_unpacked_free(launch_unpacked *u) {
        free(u->spec.argv);
        free(u->spec.env);
        free(u->deny);
        free(u->dept_weights);
        *u = (launch_unpacked){ 0 };
}
