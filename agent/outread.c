/* outread.c - the job's output read off the loop (outread.h).
 *
 * A thread per read rather than one worker: a read stuck on a dead NFS server must not hold
 * up the reads of jobs whose files are fine, and the count in flight is capped. Each thread
 * takes the job's user's file-system identity for itself only (the raw setfsuid, setfsgid and
 * setgroups system calls are per thread; glibc's wrappers of the last would change every
 * thread), so a follower reads nothing its job's user could not, whatever the output path
 * names by then. Waiting for new bytes is inotify on the files, with a short poll as the
 * fallback for files that do not exist yet. Results come back to the loop through an
 * eventfd. */
#include "outread.h"
#include "clock.h"
#include "b64.h"
#include "ctlink.h"
#include "log.h"
#include "proto.h"
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/inotify.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#define POLL_FALLBACK_MS 50

typedef struct rd {
        struct outread *o;
        uint64_t tag, id;
        uid_t uid;
        gid_t gid;
        char *path[2]; /* stdout's, stderr's (NULL: with stdout) */
        int64_t off[2];
        int wait_ms;
        bool ended; /* the job had ended when the controller asked, or here before the last read */
        unsigned char *data[2];
        size_t len[2];
        bool eof[2];  /* the read reached the file's end */
        bool none[2]; /* not a regular file (/dev/null, a terminal, a FIFO): nothing to follow */
        char error[256];
        struct rd *next;
        int wake_fd;         /* an eventfd written when the job ends (outread_job_ended), or -1 */
        struct rd *run_next; /* o->running */
} rd;

struct outread {
        pthread_mutex_t lock;
        rd *done;      /* finished reads for the loop */
        unsigned refs; /* the loop's, and each thread's */
        bool closed;
        int efd;
        unsigned in_flight;
        sd_event_source *source;
        struct ctlink *link;
        rd *running; /* reads on their threads, for outread_job_ended (under lock) */
};

static void rd_free(rd *r) {
        if (r->wake_fd >= 0)
                close(r->wake_fd);
        for (int i = 0; i < 2; i++) {
                free(r->path[i]);
                free(r->data[i]);
        }
        free(r);
}

/* Drop a reference to o; the last frees it. */
static void unref(outread *o) {
        pthread_mutex_lock(&o->lock);
        bool last = --o->refs == 0;
        pthread_mutex_unlock(&o->lock);
        if (!last)
                return;
        for (rd *r = o->done, *next; r; r = next) {
                next = r->next;
                rd_free(r);
        }
        close(o->efd);
        pthread_mutex_destroy(&o->lock);
        free(o);
}

/* Open stream i if it exists (ENOENT: not yet, fd stays -1) and is a regular file: reading a
 * terminal or a FIFO would take what is meant for someone else, and opening a device may do
 * anything (none[i]: nothing to follow). Returns 0 or -1 with r->error. */
static int open_stream(rd *r, int i, int *fd) {
        struct stat st;

        if (*fd >= 0 || !r->path[i] || r->none[i])
                return 0;
        if (stat(r->path[i], &st) == 0 && !S_ISREG(st.st_mode)) {
                r->none[i] = true;
                return 0;
        }
        /* O_NONBLOCK: should a FIFO take the file's place meanwhile, the open does not hang */
        *fd = open(r->path[i], O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK);
        if (*fd < 0 && errno == ENOENT)
                return 0;
        if (*fd >= 0 && fstat(*fd, &st) == 0) {
                if (!(r->none[i] = !S_ISREG(st.st_mode)))
                        return 0;
                close(*fd);
                *fd = -1;
                return 0;
        }
        snprintf(r->error, sizeof(r->error), "job %llu: %s: %s", (unsigned long long)r->id, r->path[i],
                 strerror(errno));
        if (*fd >= 0)
                close(*fd);
        *fd = -1;
        return -1;
}

/* Read stream i from its offset, up to OUTREAD_CHUNK. Returns 0 or -1 with r->error. */
static int read_stream(rd *r, int i, int fd) {
        if (fd < 0) {
                r->eof[i] = true;
                return 0;
        }
        while (r->len[i] < OUTREAD_CHUNK) {
                ssize_t n = pread(fd, r->data[i] + r->len[i], OUTREAD_CHUNK - r->len[i], r->off[i] + (off_t)r->len[i]);
                if (n < 0 && errno == EINTR)
                        continue;
                if (n < 0) {
                        snprintf(r->error, sizeof(r->error), "job %llu: read %s: %s", (unsigned long long)r->id,
                                 r->path[i], strerror(errno));
                        return -1;
                }
                if (n == 0)
                        break;
                r->len[i] += (size_t)n;
        }
        r->eof[i] = r->len[i] < OUTREAD_CHUNK;
        return 0;
}

/* Read what is there; while nothing is and the job runs, wait up to wait_ms for more, watching
 * the files through the inotify instance ifd (-1: none, poll instead). */
static void read_all(rd *r, int ifd) {
        int fd[2] = { -1, -1 };
        bool watched[2] = { false, false };
        int64_t deadline = clock_mono_ms() + r->wait_ms;

        for (;;) {
                for (int i = 0; i < 2; i++) {
                        if (!r->path[i])
                                continue;
                        if (open_stream(r, i, &fd[i]) < 0)
                                goto out;
                        /* watched before it is read: a write between the two still wakes us */
                        if (ifd >= 0 && fd[i] >= 0 && !watched[i])
                                watched[i] = inotify_add_watch(ifd, r->path[i], IN_MODIFY | IN_CLOSE_WRITE) >= 0;
                        if (read_stream(r, i, fd[i]) < 0)
                                goto out;
                }
                int64_t left = deadline - clock_mono_ms();
                if (r->len[0] || r->len[1] || r->ended || left <= 0)
                        break;
                struct pollfd p[2] = { { .fd = ifd, .events = POLLIN }, { .fd = r->wake_fd, .events = POLLIN } };
                /* a file not there yet, or no inotify: look again soon */
                bool all_watched = (!r->path[0] || watched[0]) && (!r->path[1] || watched[1]);
                (void)poll(p, 2, (int)(all_watched || left < POLL_FALLBACK_MS ? left : POLL_FALLBACK_MS));
                /* The job ended: what it wrote last is read once more, then answered, rather
                 * than waiting out wait_ms for bytes an ended job never writes. */
                if (p[1].revents & POLLIN)
                        r->ended = true;
                char drain[4096];
                while (ifd >= 0 && read(ifd, drain, sizeof(drain)) > 0)
                        ;
        }
out:
        for (int i = 0; i < 2; i++)
                if (fd[i] >= 0)
                        close(fd[i]);
}

static void *reader(void *arg) {
        rd *r = arg;
        outread *o = r->o;
        uint64_t one = 1;
        int ifd = -1;

        /* this thread's identity only: see the top of the file */
        if (syscall(SYS_setgroups, 0, NULL) < 0 || syscall(SYS_setfsgid, r->gid) < 0 ||
            syscall(SYS_setfsuid, r->uid) < 0 || (uid_t)syscall(SYS_setfsuid, -1) != r->uid)
                snprintf(r->error, sizeof(r->error), "job %llu: cannot take uid %u to read its output",
                         (unsigned long long)r->id, (unsigned)r->uid);
        else {
                if (!r->ended && r->wait_ms > 0)
                        ifd = inotify_init1(IN_CLOEXEC | IN_NONBLOCK);
                read_all(r, ifd);
        }
        pthread_mutex_lock(&o->lock);
        for (rd **p = &o->running; *p; p = &(*p)->run_next)
                if (*p == r) {
                        *p = r->run_next;
                        break;
                }
        r->next = o->done;
        o->done = r;
        pthread_mutex_unlock(&o->lock);
        (void)!write(o->efd, &one, sizeof(one));
        /* After the answer is on its way (r is the loop's now): closing an inotify instance
         * waits for an SRCU grace period in the kernel (fsnotify_destroy_group), 15 ms under
         * strace here, which every colony run's read of a job's end waited for. */
        if (ifd >= 0)
                close(ifd);
        unref(o);
        return NULL;
}

/* The answer to read r: its bytes in base64 (absent for a stream it did not read), whether
 * each read reached the end and whether it was made after the job's end, or the error. NULL
 * when out of memory. */
static cJSON *answer(const rd *r) {
        static const char *const names[2][2] = { { "out", "out_eof" }, { "err", "err_eof" } };
        cJSON *msg = proto_new("output");
        bool ok = msg && cJSON_AddNumberToObject(msg, "tag", (double)r->tag) &&
                  cJSON_AddNumberToObject(msg, "id", (double)r->id);

        if (ok && r->error[0])
                return cJSON_AddStringToObject(msg, "error", r->error) ? msg : (cJSON_Delete(msg), NULL);
        for (int i = 0; ok && i < 2; i++) {
                if (!r->path[i])
                        continue;
                char *text = b64_encode(r->data[i], r->len[i]);
                ok = text && cJSON_AddStringToObject(msg, names[i][0], text) &&
                     cJSON_AddBoolToObject(msg, names[i][1], r->eof[i]);
                free(text);
        }
        /* read after the job's end here: its files are whole, the follower need not ask again
         * to learn it (the controller checks the end is the one it knows) */
        if (ok && r->ended)
                ok = cJSON_AddBoolToObject(msg, "ended", true) != NULL;
        if (!ok)
                cJSON_Delete(msg);
        return ok ? msg : NULL;
}

static void send_answer(outread *o, const rd *r) {
        cJSON *msg = answer(r);
        int k = msg ? ctlink_send(o->link, msg, false) : -ENOMEM;
        if (k < 0 && k != -ENOTCONN) /* not connected: the follower asks again after the reconnect */
                log_errno(LOG_WARNING, k, "job=%llu: the output read could not be sent", (unsigned long long)r->id);
        cJSON_Delete(msg);
}

static int on_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        outread *o = userdata;
        uint64_t n;
        (void)s;
        (void)revents;
        (void)!read(fd, &n, sizeof(n));
        pthread_mutex_lock(&o->lock);
        rd *list = o->done;
        o->done = NULL;
        pthread_mutex_unlock(&o->lock);
        for (rd *r = list, *next; r; r = next) {
                next = r->next;
                o->in_flight--;
                send_answer(o, r);
                rd_free(r);
        }
        return 0;
}

int outread_new(sd_event *e, struct ctlink *link, outread **out) {
        outread *o = calloc(1, sizeof(*o));
        int r;

        if (!o)
                return -ENOMEM;
        o->link = link;
        o->refs = 1;
        o->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        if (o->efd < 0) {
                r = -errno;
                free(o);
                return r;
        }
        pthread_mutex_init(&o->lock, NULL);
        if ((r = sd_event_add_io(e, &o->source, o->efd, EPOLLIN, on_done, o)) < 0) {
                unref(o);
                return r;
        }
        *out = o;
        return 0;
}

/* The read a read_output message asks for into *out. Returns 0 or -EINVAL/-ENOMEM with err. */
static int parse_request(const cJSON *msg, rd **out, char err[PROTO_ERRLEN]) {
        static const char *const fields[] = { "tag",        "id",         "uid",     "gid",   "out_path", "err_path",
                                              "out_offset", "err_offset", "wait_ms", "ended", NULL };
        int64_t tag, id, uid, gid, wait_ms = 0, off[2] = { 0, 0 };
        const char *path[2] = { NULL, NULL };
        bool ended = false;
        rd *r;
        int k;

        if ((k = proto_check_fields(msg, fields, err)) < 0 ||
            (k = proto_get_int(msg, "tag", 1, INT64_MAX, &tag, err)) < 0 ||
            (k = proto_get_int(msg, "id", 1, INT64_MAX, &id, err)) < 0 ||
            (k = proto_get_int(msg, "uid", 0, UINT32_MAX - 1, &uid, err)) < 0 ||
            (k = proto_get_int(msg, "gid", 0, UINT32_MAX - 1, &gid, err)) < 0 ||
            (k = proto_get_str(msg, "out_path", &path[0], err)) < 0 ||
            (k = proto_get_str(msg, "err_path", &path[1], err)) == -EINVAL ||
            (k = proto_get_int(msg, "out_offset", 0, INT64_MAX, &off[0], err)) < 0 ||
            (k = proto_get_int(msg, "err_offset", 0, INT64_MAX, &off[1], err)) == -EINVAL ||
            (k = proto_get_int(msg, "wait_ms", 0, OUTREAD_WAIT_MAX_MS, &wait_ms, err)) == -EINVAL ||
            (k = proto_get_bool(msg, "ended", &ended, err)) == -EINVAL)
                return -EINVAL;
        if (!(r = calloc(1, sizeof(*r)))) {
                snprintf(err, PROTO_ERRLEN, "out of memory");
                return -ENOMEM;
        }
        *r = (rd){ .tag = (uint64_t)tag,
                   .id = (uint64_t)id,
                   .uid = (uid_t)uid,
                   .gid = (gid_t)gid,
                   .off = { off[0], off[1] },
                   .wait_ms = (int)wait_ms,
                   .ended = ended,
                   .wake_fd = -1 };
        for (int i = 0; i < 2; i++)
                if (path[i] && (!(r->path[i] = strdup(path[i])) || !(r->data[i] = malloc(OUTREAD_CHUNK)))) {
                        rd_free(r);
                        snprintf(err, PROTO_ERRLEN, "out of memory");
                        return -ENOMEM;
                }
        *out = r;
        return 0;
}

/* Answer a request with an error at once. */
static void refuse(outread *o, const cJSON *msg, const char *why) {
        rd r = { 0 };
        const cJSON *tag = cJSON_GetObjectItemCaseSensitive(msg, "tag"),
                    *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
        r.tag = cJSON_IsNumber(tag) ? (uint64_t)tag->valuedouble : 0;
        r.id = cJSON_IsNumber(id) ? (uint64_t)id->valuedouble : 0;
        snprintf(r.error, sizeof(r.error), "%s", why);
        send_answer(o, &r);
}

void outread_handle(outread *o, const cJSON *msg, bool ended_here) {
        char err[PROTO_ERRLEN] = "", why[PROTO_ERRLEN + 32];
        sigset_t all, old;
        pthread_attr_t attr;
        pthread_t t;
        rd *r;

        if (o->in_flight >= OUTREAD_MAX) {
                snprintf(why, sizeof(why), "busy: %d output reads in progress on this node", OUTREAD_MAX);
                refuse(o, msg, why);
                return;
        }
        if (parse_request(msg, &r, err) < 0) {
                snprintf(why, sizeof(why), "read_output: %s", err);
                refuse(o, msg, why);
                return;
        }
        r->o = o;
        r->ended |= ended_here;
        r->wake_fd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK); /* none: the read waits out its wait */
        /* the thread takes no signal: they are the loop's (sd-event's signalfds) */
        sigfillset(&all);
        pthread_sigmask(SIG_BLOCK, &all, &old);
        pthread_attr_init(&attr);
        pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
        pthread_attr_setstacksize(&attr, 64 * 1024);
        pthread_mutex_lock(&o->lock);
        o->refs++;
        r->run_next = o->running;
        o->running = r;
        pthread_mutex_unlock(&o->lock);
        int k = pthread_create(&t, &attr, reader, r);
        pthread_attr_destroy(&attr);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
        if (k != 0) {
                pthread_mutex_lock(&o->lock);
                o->refs--; /* no thread: the loop still holds its own */
                o->running = r->run_next;
                pthread_mutex_unlock(&o->lock);
                snprintf(why, sizeof(why), "job %llu: cannot start a reader: %s", (unsigned long long)r->id,
                         strerror(k));
                rd_free(r);
                refuse(o, msg, why);
                return;
        }
        o->in_flight++;
}

void outread_job_ended(outread *o, uint64_t id) {
        uint64_t one = 1;

        if (!o)
                return;
        pthread_mutex_lock(&o->lock);
        for (rd *r = o->running; r; r = r->run_next)
                if (r->id == id && r->wake_fd >= 0)
                        (void)!write(r->wake_fd, &one, sizeof(one));
        pthread_mutex_unlock(&o->lock);
}

void outread_free(outread *o) {
        if (!o)
                return;
        sd_event_source_disable_unref(o->source);
        o->source = NULL;
        unref(o);
}
