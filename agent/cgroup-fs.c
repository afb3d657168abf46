/* cgroup-fs.c - the cgroupfs helpers cgroup.c, cgroup-v1.c and cgroup-v2.c share (declared in
 * cgroup-internal.h): finding mounts and our own cgroup, reading and writing attributes with one
 * system call each, making and removing directories, listing job cgroups, weights' scales. No
 * state of any backend: each takes the paths it works on. */
#include "cgroup-internal.h"
#include "fileio.h"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

/* The kernel refuses a CFS quota below 1 ms. */
#define CPU_QUOTA_MIN_US 1000

int64_t cg_cpu_quota_us(int64_t mcpu) {
        int64_t q = mcpu * (CG_CPU_PERIOD_US / 1000);

        return q < CPU_QUOTA_MIN_US ? CPU_QUOTA_MIN_US : q;
}

void cg_sleep_ms(int64_t ms) {
        struct timespec ts = { .tv_sec = ms / 1000, .tv_nsec = (ms % 1000) * 1000000 };

        while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
                ;
}

bool cg_list_has(const char *list, const char *word, const char *seps) {
        size_t wl = strlen(word);

        for (const char *p = list; *p;) {
                size_t l = strcspn(p, seps);

                if (l == wl && strncmp(p, word, wl) == 0)
                        return true;
                p += l;
                p += strspn(p, seps);
        }
        return false;
}

/* Undo mountinfo's octal escapes ("\040" for a space) in place. */
static void unescape_octal(char *s) {
        char *w = s;

        for (; *s; s++) {
                if (s[0] == '\\' && s[1] >= '0' && s[1] <= '3' && s[2] >= '0' && s[2] <= '7' && s[3] >= '0' &&
                    s[3] <= '7') {
                        *w++ = (char)((s[1] - '0') * 64 + (s[2] - '0') * 8 + (s[3] - '0'));
                        s += 3;
                } else
                        *w++ = *s;
        }
        *w = 0;
}

/* Split one mountinfo line; returns false for lines of another fstype or option. */
static bool mountinfo_match(char *line, const char *fstype, const char *option, char **root, char **mnt) {
        char *sep = strstr(line, " - "), *save = NULL, *fs, *opts;

        if (!sep)
                return false;
        *sep = 0;
        fs = strtok_r(sep + 3, " \n", &save);
        (void)strtok_r(NULL, " \n", &save); /* source */
        opts = strtok_r(NULL, " \n", &save);
        if (!fs || !opts || strcmp(fs, fstype) != 0 || (option && !cg_list_has(opts, option, ",")))
                return false;
        save = NULL;
        for (int i = 0; i < 3; i++) /* mount id, parent id, major:minor */
                if (!strtok_r(i ? NULL : line, " ", &save))
                        return false;
        *root = strtok_r(NULL, " ", &save);
        *mnt = strtok_r(NULL, " ", &save);
        if (!*root || !*mnt)
                return false;
        unescape_octal(*root);
        unescape_octal(*mnt);
        return true;
}

int cg_mount_find(const char *fstype, const char *option, const char *at, char **mnt, char **root) {
        FILE *f = fopen("/proc/self/mountinfo", "re");
        char *line = NULL, *m, *rt;
        size_t n = 0;
        int r = -ENOENT;

        if (!f)
                return -errno;
        while (getline(&line, &n, f) > 0) {
                if (!mountinfo_match(line, fstype, option, &rt, &m) || (at && strcmp(m, at) != 0))
                        continue;
                *mnt = strdup(m);
                *root = strdup(rt);
                r = 0;
                if (!*mnt || !*root) {
                        free(*mnt);
                        free(*root);
                        r = -ENOMEM;
                }
                break;
        }
        free(line);
        fclose(f);
        return r;
}

/* Our cgroup path for controller (NULL: the "0::" v2 line) from /proc/self/cgroup, malloc'ed. */
static int own_path(const char *controller, char **out) {
        FILE *f = fopen("/proc/self/cgroup", "re");
        char *line = NULL;
        size_t n = 0;
        int r = -ENOENT;

        if (!f)
                return -errno;
        while (getline(&line, &n, f) > 0) {
                char *ctls = strchr(line, ':'), *path = ctls ? strchr(ctls + 1, ':') : NULL;

                if (!path)
                        continue;
                *path++ = 0;
                *ctls++ = 0;
                path[strcspn(path, "\n")] = 0;
                if (controller ? !cg_list_has(ctls, controller, ",") : (strcmp(line, "0") != 0 || *ctls))
                        continue;
                *out = strdup(path);
                r = *out ? 0 : -ENOMEM;
                break;
        }
        free(line);
        fclose(f);
        return r;
}

int cg_own_dir(const char *controller, const char *mnt, const char *root, char **out) {
        char *path = NULL;
        const char *rel;
        size_t rl = strlen(root);
        int r = own_path(controller, &path);

        if (r < 0)
                return r;
        /* A bind-mounted hierarchy shows only the part below root; our path must lie inside. */
        if (strcmp(root, "/") == 0)
                rel = path;
        else if (strncmp(path, root, rl) == 0 && (path[rl] == 0 || path[rl] == '/'))
                rel = path + rl;
        else {
                free(path);
                return -ENOENT;
        }
        if (strcmp(rel, "/") == 0)
                rel = "";
        r = asprintf(out, "%s%s", mnt, rel) < 0 ? -ENOMEM : 0;
        free(path);
        return r;
}

int cg_path(char *buf, size_t len, const char *dir, const char *name) {
        int n = snprintf(buf, len, "%s/%s", dir, name);

        return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int cg_open_write(const char *dir, const char *file) {
        char path[PATH_MAX];
        int fd, r = cg_path(path, sizeof(path), dir, file);

        /* No O_CREAT: cgroupfs cannot create files, and would report a missing one as EACCES. */
        if (r == 0 && (fd = open(path, O_WRONLY | O_CLOEXEC)) < 0)
                r = -errno;
        return r < 0 ? r : fd;
}

int cg_write(const char *dir, const char *file, const char *value, char *err, size_t errlen) {
        size_t len = strlen(value);
        ssize_t w;
        int fd = cg_open_write(dir, file), r = fd < 0 ? fd : 0;

        if (r == 0) {
                w = write(fd, value, len);
                r = w < 0 ? -errno : (size_t)w != len ? -EIO : 0;
                close(fd);
        }
        if (r < 0 && err)
                snprintf(err, errlen, "write %s to %s/%s: %s", value, dir, file, strerror(-r));
        return r;
}

int cg_write_i64(const char *dir, const char *file, int64_t value, char *err, size_t errlen) {
        char v[24];

        snprintf(v, sizeof(v), "%" PRId64, value);
        return cg_write(dir, file, v, err, errlen);
}

int cg_move_self(const char *dir, char *err, size_t errlen) {
        return cg_write_i64(dir, "cgroup.procs", getpid(), err, errlen);
}

int cg_read(const char *dir, const char *file, char **out) {
        char path[PATH_MAX];
        int r = cg_path(path, sizeof(path), dir, file);

        return r < 0 ? r : file_read_small(path, 0, out);
}

int cg_read_u64(const char *dir, const char *file, uint64_t *out) {
        char *s = NULL, *end;
        int r = cg_read(dir, file, &s);

        if (r < 0)
                return r;
        errno = 0;
        *out = strtoull(s, &end, 10);
        r = errno || end == s || *end ? -EINVAL : 0;
        free(s);
        return r;
}

int cg_read_key(const char *dir, const char *file, const char *key, uint64_t *out) {
        char *s = NULL, *save = NULL;
        size_t kl = strlen(key);
        int r = cg_read(dir, file, &s);

        if (r < 0)
                return r;
        r = -ENOENT;
        for (char *l = strtok_r(s, "\n", &save); l; l = strtok_r(NULL, "\n", &save)) {
                char *end;

                if (strncmp(l, key, kl) != 0 || l[kl] != ' ')
                        continue;
                errno = 0;
                *out = strtoull(l + kl + 1, &end, 10);
                r = errno || end == l + kl + 1 ? -EINVAL : 0;
                break;
        }
        free(s);
        return r;
}

/* Streamed rather than file_read_small: a big job's cgroup.procs can exceed its 64 KiB. */
int cg_read_procs(const char *dir, pid_t **pids, size_t *n) {
        char path[PATH_MAX];
        pid_t *v = NULL;
        size_t cap = 0, cnt = 0;
        long pid;
        FILE *f;
        int r = cg_path(path, sizeof(path), dir, "cgroup.procs");

        if (r < 0)
                return r;
        if (!(f = fopen(path, "re")))
                return -errno;
        while (fscanf(f, "%ld", &pid) == 1) {
                if (cnt == cap) {
                        pid_t *nv = realloc(v, (cap = cap ? 2 * cap : 64) * sizeof(*v));

                        if (!nv) {
                                r = -ENOMEM;
                                break;
                        }
                        v = nv;
                }
                v[cnt++] = (pid_t)pid;
        }
        if (r == 0 && ferror(f))
                r = -EIO;
        fclose(f);
        if (r < 0) {
                free(v);
                return r;
        }
        *pids = v;
        *n = cnt;
        return 0;
}

int cg_mkdir(const char *path, bool exist_ok, bool *created, char *err, size_t errlen) {
        int r = mkdir(path, 0755) < 0 ? -errno : 0;

        if (created)
                *created = r == 0;
        if (r == -EEXIST && exist_ok)
                r = 0;
        if (r < 0)
                snprintf(err, errlen, "create cgroup %s: %s", path, strerror(-r));
        return r;
}

int cg_rmdir(const char *path) {
        for (int i = 0;; i++) {
                if (rmdir(path) == 0 || errno == ENOENT)
                        return 0;
                /* Tasks that were just killed may still be leaving the cgroup. */
                if (errno != EBUSY || i == 50)
                        return -errno;
                cg_sleep_ms(10);
        }
}

/* Append a copy of s to the NULL-terminated *list of *n items. */
static int strv_push(char ***list, size_t n, const char *s) {
        char **v = realloc(*list, (n + 2) * sizeof(*v));

        if (!v)
                return -ENOMEM;
        *list = v;
        if (!(v[n] = strdup(s)))
                return -ENOMEM;
        v[n + 1] = NULL;
        return 0;
}

static bool strv_has(char *const *list, size_t n, const char *s) {
        for (size_t i = 0; i < n; i++)
                if (strcmp(list[i], s) == 0)
                        return true;
        return false;
}

/* cg_add_job_dirs for the directory base/rel (rel "" at the top), or with depts
 * cg_add_dept_dirs. */
static int add_dirs_below(const char *base, const char *rel, const char *skip, bool depts, char ***list) {
        char dir[PATH_MAX], name[PATH_MAX];
        DIR *d;
        struct dirent *e;
        int r = 0;

        if (snprintf(dir, sizeof(dir), "%s%s%s", base, *rel ? "/" : "", rel) >= (int)sizeof(dir))
                return -ENAMETOOLONG;
        if (!(d = opendir(dir)))
                return errno == ENOENT ? 0 : -errno;
        while (r == 0 && (e = readdir(d))) {
                size_t n = *list ? strv_length(*list) : 0;

                if (e->d_type != DT_DIR || e->d_name[0] == '.' || (!*rel && skip && strcmp(e->d_name, skip) == 0))
                        continue;
                if (snprintf(name, sizeof(name), "%s%s%s", rel, *rel ? "/" : "", e->d_name) >= (int)sizeof(name))
                        r = -ENAMETOOLONG;
                else if (strncmp(e->d_name, CG_DEPT_PREFIX, strlen(CG_DEPT_PREFIX)) == 0) {
                        if ((r = add_dirs_below(base, name, NULL, depts, list)) == 0 && depts)
                                r = strv_push(list, *list ? strv_length(*list) : 0, name); /* after its own */
                } else if (!depts && !strv_has(*list, n, name))
                        r = strv_push(list, n, name);
        }
        closedir(d);
        return r;
}

int cg_add_job_dirs(const char *dir, const char *skip, char ***list) {
        return add_dirs_below(dir, "", skip, false, list);
}

int cg_add_dept_dirs(const char *dir, char ***list) { return add_dirs_below(dir, "", NULL, true, list); }

static uint64_t scale_weight(double w, double unit, uint64_t lo, uint64_t hi) {
        double v = w * unit + 0.5;

        return !(v >= (double)lo) ? lo : v > (double)hi ? hi : (uint64_t)v;
}

uint64_t cg_weight_v2(double w) { return scale_weight(w, 100, 1, 10000); }

uint64_t cg_shares_v1(double w) { return scale_weight(w, 1024, 2, 262144); }
