/* offloop.c - a call on a thread of its own (see offloop.h).
 *
 * The loop writes request and arg under the lock and signals; the thread takes them, runs fn
 * outside the lock, stores the result under it and writes 1 to the eventfd. busy belongs to the
 * loop alone: set by offloop_start, cleared by the eventfd's handler before done runs. */
#include "offloop.h"
#include <errno.h>
#include <stdio.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/eventfd.h>
#include <sys/prctl.h>
#include <threads.h> /* C11 threads: <pthread.h> would pull <sched.h>, which policies/sched.h shadows */
#include <unistd.h>

struct offloop {
        mtx_t lock;
        cnd_t wake;
        thrd_t thread;
        bool request, quit; /* under lock */
        void *arg;          /* under lock */
        int result;         /* under lock */
        bool busy;          /* the loop's */
        offloop_fn fn;
        offloop_done done;
        void *userdata;
        int efd;
        sd_event_source *src;
        char name[16];
};

static int run(void *p) {
        offloop *o = p;
        (void)prctl(PR_SET_NAME, o->name); /* a hint for top and perf: a failure costs nothing */
        mtx_lock(&o->lock);
        for (;;) {
                while (!o->request && !o->quit)
                        cnd_wait(&o->wake, &o->lock);
                if (!o->request)
                        break; /* quit, and no call started: a started one runs first */
                o->request = false;
                void *arg = o->arg;
                mtx_unlock(&o->lock);
                int r = o->fn(arg);
                mtx_lock(&o->lock);
                o->result = r;
                uint64_t one = 1;
                if (write(o->efd, &one, sizeof(one)) < 0) /* an eventfd write of 1 fails only on overflow */
                        abort();
        }
        mtx_unlock(&o->lock);
        return 0;
}

static int on_done(sd_event_source *s, int fd, uint32_t revents, void *userdata) {
        offloop *o = userdata;
        uint64_t n;
        (void)s;
        (void)revents;
        if (read(fd, &n, sizeof(n)) < 0) /* EAGAIN: a wake-up for nothing */
                return 0;
        mtx_lock(&o->lock);
        int r = o->result;
        mtx_unlock(&o->lock);
        o->busy = false;
        o->done(o->userdata, r);
        return 0;
}

int offloop_new(sd_event *event, const char *name, offloop_fn fn, offloop_done done, void *userdata, offloop **out) {
        offloop *o = calloc(1, sizeof(*o));
        if (!o)
                return -ENOMEM;
        *o = (offloop){ .fn = fn, .done = done, .userdata = userdata, .efd = -1 };
        snprintf(o->name, sizeof(o->name), "%s", name);
        if (mtx_init(&o->lock, mtx_plain) != thrd_success) {
                free(o);
                return -ENOMEM;
        }
        if (cnd_init(&o->wake) != thrd_success) {
                mtx_destroy(&o->lock);
                free(o);
                return -ENOMEM;
        }
        o->efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
        int r = o->efd < 0 ? -errno : sd_event_add_io(event, &o->src, o->efd, EPOLLIN, on_done, o);
        if (r >= 0 && thrd_create(&o->thread, run, o) != thrd_success)
                r = -EAGAIN;
        if (r < 0) {
                sd_event_source_disable_unref(o->src);
                if (o->efd >= 0)
                        close(o->efd);
                cnd_destroy(&o->wake);
                mtx_destroy(&o->lock);
                free(o);
                return r;
        }
        *out = o;
        return 0;
}

int offloop_start(offloop *o, void *arg) {
        if (o->busy)
                return -EBUSY;
        mtx_lock(&o->lock);
        o->arg = arg;
        o->request = true;
        cnd_signal(&o->wake);
        mtx_unlock(&o->lock);
        o->busy = true;
        return 0;
}

bool offloop_busy(const offloop *o) { return o->busy; }

void offloop_free(offloop *o) {
        if (!o)
                return;
        mtx_lock(&o->lock);
        o->quit = true; /* a call started runs first: the thread looks at quit only without a request */
        cnd_signal(&o->wake);
        mtx_unlock(&o->lock);
        thrd_join(o->thread, NULL);
        sd_event_source_disable_unref(o->src);
        close(o->efd);
        cnd_destroy(&o->wake);
        mtx_destroy(&o->lock);
        free(o);
}
