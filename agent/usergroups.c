/* usergroups.c - a job user's supplementary groups, looked up or taken from a lookup made ahead
 * (see usergroups.h). */
#include "usergroups.h"
#include "clock.h"

#include <errno.h>
#include <grp.h>
#include <pwd.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const stamped_files[2] = { "/etc/passwd", "/etc/group" };

/* The stamp of path; all zero when it cannot be read (a host without the file). */
static usergroups_stamp stamp_of(const char *path) {
        struct stat st;

        if (stat(path, &st) < 0)
                return (usergroups_stamp){ 0 };
        return (usergroups_stamp){ .dev = st.st_dev, .ino = st.st_ino, .size = st.st_size, .mtime = st.st_mtim };
}

static bool same_stamp(const usergroups_stamp *a, const usergroups_stamp *b) {
        return a->dev == b->dev && a->ino == b->ino && a->size == b->size && a->mtime.tv_sec == b->mtime.tv_sec &&
               a->mtime.tv_nsec == b->mtime.tv_nsec;
}

/* The groups of uid's passwd entry, including gid; just gid when there is none. */
static int resolve(uid_t uid, gid_t gid, gid_t **out, size_t *n) {
        struct passwd pw, *res = NULL;
        char buf[4096];
        int cnt = 16, r = getpwuid_r(uid, &pw, buf, sizeof(buf), &res);

        if (r != 0 || !res) {
                if (!(*out = malloc(sizeof(gid_t))))
                        return -ENOMEM;
                (*out)[0] = gid;
                *n = 1;
                return 0;
        }
        for (;;) {
                gid_t *g = malloc((size_t)cnt * sizeof(gid_t));
                int want = cnt;

                if (!g)
                        return -ENOMEM;
                if (getgrouplist(res->pw_name, gid, g, &want) >= 0) {
                        *out = g;
                        *n = (size_t)want;
                        return 0;
                }
                free(g);
                /* want now holds the number needed. */
                cnt = want > cnt ? want : cnt * 2;
        }
}

int usergroups_lookup(uid_t uid, gid_t gid, usergroups *g) {
        usergroups got = { .uid = uid, .gid = gid, .looked_up_ms = clock_mono_ms() };
        int r;

        /* Stamped before the lookup: a change made during it makes the next check fail. */
        for (size_t i = 0; i < 2; i++)
                got.files[i] = stamp_of(stamped_files[i]);
        if ((r = resolve(uid, gid, &got.list, &got.n)) < 0) {
                *g = (usergroups){ 0 };
                return r;
        }
        *g = got;
        return 0;
}

bool usergroups_current(const usergroups *g, uid_t uid, gid_t gid, int64_t now_ms) {
        if (!g || !g->list || g->uid != uid || g->gid != gid || now_ms - g->looked_up_ms >= USERGROUPS_TTL_MS ||
            now_ms < g->looked_up_ms)
                return false;
        for (size_t i = 0; i < 2; i++) {
                usergroups_stamp now = stamp_of(stamped_files[i]);

                if (!same_stamp(&now, &g->files[i]))
                        return false;
        }
        return true;
}

void usergroups_free(usergroups *g) {
        free(g->list);
        *g = (usergroups){ 0 };
}

/* Every shepherd looks up its job's groups in a fork of the agent: cold, each read
 * nsswitch.conf and dlopened libnss_systemd again, 0.45 to 1.7 ms a fork against 0.22 to 0.29 ms
 * once the parent had looked up once (fork, getpwuid_r, getgrouplist, exit; this host, 200
 * forks a run). */
void usergroups_warm(void) {
        usergroups g;

        if (usergroups_lookup(getuid(), getgid(), &g) == 0)
                usergroups_free(&g);
}
