/* jobsync.c - the agent's slow state directory and cgroup work, on a thread (see jobsync.h). */
#include "jobsync.h"
#include "cgroup.h"
#include "jobdir.h"
#include "log.h"
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

typedef enum op_kind { OP_REMOVE_ALL, OP_REMOVE_REPORT, OP_REMOVE_CGROUP, OP_SET_CPUS } op_kind;

typedef struct op {
        op_kind kind;
        uint64_t id;
        char *text; /* OP_REMOVE_CGROUP, OP_SET_CPUS: the cgroup's name */
        int r;      /* the outcome, set by the thread */
        struct op *next;
        cg_backend *cg; /* OP_REMOVE_CGROUP, OP_SET_CPUS */
        char *cpus;     /* OP_SET_CPUS */
} op;

/* A queue and the thread that works it: one for the state directory's files, one for cgroupfs,
 * so that a removal of a job's files, which a new attempt's record waits for, never waits
 * behind a cgroupfs that does not answer. */
typedef struct lane {
        struct jobsync *s;
        pthread_t thread;
        bool started;
        pthread_cond_t wake;   /* its thread's: work queued, or quit */
        op *todo, **todo_tail; /* queued, oldest first */
        op *working;           /* the batch under way */
} lane;

enum { LANE_FILES, LANE_CGROUPS, _LANE_MAX };

struct jobsync {
        char *dir;
        lane lanes[_LANE_MAX];
        pthread_mutex_t lock;
        pthread_cond_t idle;   /* the loop's: a batch is done */
        op *done, **done_tail; /* done, for the loop */
        bool quit;
        int efd;
        sd_event_source *source;
        void (*on_done)(void *userdata); /* jobsync_on_done's hook */
        void *on_done_userdata;
        uint64_t spare_lo, spare_hi; /* the spares on disk: numbers [lo, hi) (jobdir.h), under lock */
};

/* Append the list l to the list ending at *tail; returns the new tail. */
static op **append(op **tail, op *l) {
        *tail = l;
        while (*tail)
                tail = &(*tail)->next;
        return tail;
}

/* Retire the job's files to spares, up to JOBDIR_SPARES_MAX of them: only the thread adds
 * spares, so the numbers from spare_hi on are its own until it publishes them. */
static int retire(jobsync *s, uint64_t id, bool all) {
        uint64_t next, limit;
        int r;

        pthread_mutex_lock(&s->lock);
        next = s->spare_hi;
        limit = s->spare_lo + JOBDIR_SPARES_MAX;
        pthread_mutex_unlock(&s->lock);
        r = jobdir_retire(s->dir, id, all, &next, limit);
        pthread_mutex_lock(&s->lock);
        s->spare_hi = next;
        pthread_mutex_unlock(&s->lock);
        return r;
}

/* The thread's work on a batch, in the order queued. */
static void run_batch(jobsync *s, op *batch) {
        for (op *o = batch; o; o = o->next)
                if (o->kind == OP_REMOVE_CGROUP)
                        o->r = cg_job_rmdir(o->cg, o->text);
                else if (o->kind == OP_SET_CPUS)
                        o->r = cg_job_set_cpus(o->cg, o->text, o->cpus, NULL, 0);
                else
                        o->r = retire(s, o->id, o->kind == OP_REMOVE_ALL);
}

static void *thread_main(void *userdata) {
        lane *l = userdata;
        jobsync *s = l->s;
        uint64_t one = 1;

        pthread_mutex_lock(&s->lock);
        for (;;) {
                while (!l->todo && !s->quit)
                        pthread_cond_wait(&l->wake, &s->lock);
                if (!l->todo)
                        break;
                l->working = l->todo;
                l->todo = NULL;
                l->todo_tail = &l->todo;
                pthread_mutex_unlock(&s->lock);
                run_batch(s, l->working);
                pthread_mutex_lock(&s->lock);
                s->done_tail = append(s->done_tail, l->working);
                l->working = NULL;
                pthread_cond_broadcast(&s->idle);
                /* Cannot fail but for an overflow of 2^64 batches unread. */
                (void)!write(s->efd, &one, sizeof(one));
        }
        pthread_mutex_unlock(&s->lock);
        return NULL;
}

/* Log what the thread could not do, with the job and the path. */
static void log_failure(const jobsync *s, const op *o) {
        switch (o->kind) {
        case OP_REMOVE_CGROUP:
                log_errno(LOG_WARNING, o->r, "job=%" PRIu64 " cgroup=%s/%s: cannot remove the job's cgroup", o->id,
                          cg_subtree_path(o->cg), o->text);
                break;
        case OP_SET_CPUS: /* a cgroup gone, or not made yet (its shepherd takes the cores then) */
                if (o->r != -ENOENT)
                        log_errno(LOG_WARNING, o->r,
                                  "job=%" PRIu64 " cgroup=%s/%s: cannot move it to the shared cores %s", o->id,
                                  cg_subtree_path(o->cg), o->text, o->cpus);
                break;
        default: log_errno(LOG_WARNING, o->r, "job=%" PRIu64 " dir=%s: cannot remove the job's files", o->id, s->dir);
        }
}

/* Take the done list and log what failed in it. */
static void run_done(jobsync *s) {
        op *l;

        pthread_mutex_lock(&s->lock);
        l = s->done;
        s->done = NULL;
        s->done_tail = &s->done;
        pthread_mutex_unlock(&s->lock);
        while (l) {
                op *o = l;

                l = o->next;
                if (o->r < 0)
                        log_failure(s, o);
                free(o->text);
                free(o->cpus);
                free(o);
        }
}

static int on_done(sd_event_source *src, int fd, uint32_t revents, void *userdata) {
        uint64_t n;
        (void)src;
        (void)revents;

        jobsync *s = userdata;

        (void)!read(fd, &n, sizeof(n)); /* EAGAIN: another turn took the batch already */
        run_done(s);
        if (s->on_done)
                s->on_done(s->on_done_userdata);
        return 0;
}

void jobsync_on_done(jobsync *s, void (*fn)(void *userdata), void *userdata) {
        s->on_done = fn;
        s->on_done_userdata = userdata;
}

/* Queue o (text and cpus freed on failure). Returns 0 or -ENOMEM. */
static int queue(jobsync *s, op_kind kind, uint64_t id, char *text, cg_backend *cg, char *cpus) {
        op *o = malloc(sizeof(*o));

        if (!o) {
                free(text);
                free(cpus);
                return -ENOMEM;
        }
        lane *l = &s->lanes[kind == OP_REMOVE_CGROUP || kind == OP_SET_CPUS ? LANE_CGROUPS : LANE_FILES];

        *o = (op){ .kind = kind, .id = id, .text = text, .cg = cg, .cpus = cpus };
        pthread_mutex_lock(&s->lock);
        *l->todo_tail = o;
        l->todo_tail = &o->next;
        pthread_cond_signal(&l->wake);
        pthread_mutex_unlock(&s->lock);
        return 0;
}

int jobsync_remove(jobsync *s, uint64_t id, bool all) {
        return queue(s, all ? OP_REMOVE_ALL : OP_REMOVE_REPORT, id, NULL, NULL, NULL);
}

int jobsync_remove_cgroup(jobsync *s, cg_backend *cg, uint64_t id, const char *cgroup) {
        char *name = strdup(cgroup);

        return name ? queue(s, OP_REMOVE_CGROUP, id, name, cg, NULL) : -ENOMEM;
}

int jobsync_set_cpus(jobsync *s, cg_backend *cg, uint64_t id, const char *cgroup, const char *cpus) {
        char *name = strdup(cgroup), *list = strdup(cpus);

        if (!name || !list) {
                free(name);
                free(list);
                return -ENOMEM;
        }
        return queue(s, OP_SET_CPUS, id, name, cg, list);
}

/* The kinds of operation as a set, for holds(). */
#define KIND(k)  (1u << (k))
#define REMOVALS (KIND(OP_REMOVE_ALL) | KIND(OP_REMOVE_REPORT))

/* Whether the list l holds an operation on id of one of the kinds in the set. */
static bool holds(const op *l, uint64_t id, unsigned kinds) {
        for (; l; l = l->next)
                if (l->id == id && (kinds & KIND(l->kind)))
                        return true;
        return false;
}

/* pending() with the lock held. */
static bool pending_locked(jobsync *s, uint64_t id, unsigned kinds) {
        for (int i = 0; i < _LANE_MAX; i++)
                if (holds(s->lanes[i].todo, id, kinds) || holds(s->lanes[i].working, id, kinds))
                        return true;
        return false;
}

static bool pending(jobsync *s, uint64_t id, unsigned kinds) {
        bool r;

        pthread_mutex_lock(&s->lock);
        r = pending_locked(s, id, kinds);
        pthread_mutex_unlock(&s->lock);
        return r;
}

bool jobsync_pending(jobsync *s, uint64_t id) { return pending(s, id, REMOVALS); }

bool jobsync_cgroup_pending(jobsync *s, uint64_t id) { return pending(s, id, KIND(OP_REMOVE_CGROUP)); }

int jobsync_replace(jobsync *s, uint64_t id, jobfile_kind kind, const char *text) {
        uint64_t n;

        /* A removal of the job's files would take the new file: wait for it (the files' lane
         * alone, so never for cgroupfs). */
        pthread_mutex_lock(&s->lock);
        while (pending_locked(s, id, REMOVALS))
                pthread_cond_wait(&s->idle, &s->lock);
        pthread_mutex_unlock(&s->lock);
        /* A spare gone (another process took it) or not renamed: jobdir_replace makes the file. */
        if ((n = jobsync_take_spare(s)))
                (void)jobdir_take_spare(s->dir, n, id, kind);
        return jobdir_replace(s->dir, id, kind, text);
}

uint64_t jobsync_take_spare(jobsync *s) {
        uint64_t n = 0;

        pthread_mutex_lock(&s->lock);
        if (s->spare_lo < s->spare_hi)
                n = s->spare_lo++;
        pthread_mutex_unlock(&s->lock);
        return n;
}

/* Whether a lane has work queued or under way. */
static bool busy(const jobsync *s) {
        for (int i = 0; i < _LANE_MAX; i++)
                if (s->lanes[i].todo || s->lanes[i].working)
                        return true;
        return false;
}

void jobsync_drain(jobsync *s) {
        pthread_mutex_lock(&s->lock);
        while (busy(s))
                pthread_cond_wait(&s->idle, &s->lock);
        pthread_mutex_unlock(&s->lock);
        run_done(s);
}

int jobsync_new(sd_event *e, const char *dir, jobsync **out) {
        jobsync *s = calloc(1, sizeof(*s));
        sigset_t all, old;
        int r;

        if (!s || !(s->dir = strdup(dir))) {
                free(s);
                return -ENOMEM;
        }
        for (int i = 0; i < _LANE_MAX; i++) {
                s->lanes[i].s = s;
                s->lanes[i].todo_tail = &s->lanes[i].todo;
                pthread_cond_init(&s->lanes[i].wake, NULL);
        }
        s->done_tail = &s->done;
        /* A previous agent's spares: one of its shepherds may take one yet (jobdir_take_spare's
         * -ENOENT then makes the file), so they are not counted on; numbers start afresh. */
        (void)jobdir_clear_spares(dir);
        s->spare_lo = s->spare_hi = 1;
        pthread_mutex_init(&s->lock, NULL);
        pthread_cond_init(&s->idle, NULL);
        s->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        r = s->efd < 0 ? -errno : sd_event_add_io(e, &s->source, s->efd, EPOLLIN, on_done, s);
        if (r >= 0) {
                /* Every signal stays the loop's (signalfd, SIGCHLD for the shepherds). */
                sigfillset(&all);
                pthread_sigmask(SIG_BLOCK, &all, &old);
                for (int i = 0; r >= 0 && i < _LANE_MAX; i++)
                        if ((r = -pthread_create(&s->lanes[i].thread, NULL, thread_main, &s->lanes[i])) == 0)
                                s->lanes[i].started = true;
                pthread_sigmask(SIG_SETMASK, &old, NULL);
        }
        if (r < 0) {
                jobsync_free(s);
                return r;
        }
        *out = s;
        return 0;
}

void jobsync_free(jobsync *s) {
        if (!s)
                return;
        pthread_mutex_lock(&s->lock);
        s->quit = true;
        for (int i = 0; i < _LANE_MAX; i++)
                pthread_cond_signal(&s->lanes[i].wake);
        pthread_mutex_unlock(&s->lock);
        for (int i = 0; i < _LANE_MAX; i++)
                if (s->lanes[i].started)
                        pthread_join(s->lanes[i].thread, NULL);
        while (s->done) {
                op *o = s->done;

                s->done = o->next;
                free(o->text);
                free(o->cpus);
                free(o);
        }
        sd_event_source_disable_unref(s->source);
        if (s->efd >= 0)
                close(s->efd);
        pthread_mutex_destroy(&s->lock);
        for (int i = 0; i < _LANE_MAX; i++)
                pthread_cond_destroy(&s->lanes[i].wake);
        pthread_cond_destroy(&s->idle);
        free(s->dir);
        free(s);
}
