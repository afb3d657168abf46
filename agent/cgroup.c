/* cgroup.c - cgroup mode detection, dispatch to cgroup-v1.c / cgroup-v2.c, names and checks of
 * job and department cgroups, kills (cgroupfs helpers: cgroup-fs.c).
 *
 * libcgroup or direct cgroupfs: colony uses direct cgroupfs access for everything, and no
 * libcgroup call (v2's device control is no file at all, but a BPF program: cgdev-bpf.c). Checked against
 * libcgroup 2.0.2 (Debian 12):
 *  - cgroup_init() builds its mount table from /proc/mounts, which lacks the mount's root, so
 *    on a host whose hierarchies are bind-mounted subdirectories (v1 containers without a
 *    cgroup namespace) mount point + /proc/self/cgroup path names a directory that does not
 *    exist; /proc/self/mountinfo has the root, and we strip it.
 *  - cgroup_get_current_controller_path() looks the controller up in /proc/PID/cgroup's
 *    controller lists, and the v2 line ("0::/path") has none, so it never finds a v2 cgroup;
 *    v2 needs the direct parser anyway, and one parser for both modes is simpler.
 *  - its cgroup_modify_cgroup() writes a controller's values in its own order, while v1 needs
 *    memory.limit_in_bytes before memory.memsw.limit_in_bytes and cfs_period before quota.
 * cgroup files are written with one write(2) each and never created (see cg_write). */
#include "cgroup-internal.h"
#include "clock.h"
#include "fileio.h"
#include "log.h"
#include "proto.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <linux/magic.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <sys/vfs.h>
#include <time.h>
#include <unistd.h>

/* The agent's subtree below its own cgroup. */
#define SUBTREE_FMT "colony-%s"

#define CG_ROOT        "/sys/fs/cgroup"
#define AGENT_NAME_MAX 64
/* How long to wait for a freeze to settle per kill round, and for a round's kills to land. */
#define FREEZE_WAIT_MS 1000
#define KILL_ROUND_MS  100
/* How long cg_close gives each job's kill when removing the subtree. */
#define CLOSE_KILL_MS 5000

/* SIGKILL/sig every task listed in dir's cgroup.procs. Returns 0 or -errno. */
static int signal_dir(const char *dir, int sig) {
        pid_t *pids = NULL;
        size_t n = 0;
        int r = cg_read_procs(dir, &pids, &n);

        for (size_t i = 0; r == 0 && i < n; i++)
                if (kill(pids[i], sig) < 0 && errno != ESRCH)
                        r = -errno;
        free(pids);
        return r;
}

int cg_wait_empty(cg_backend *cg, const char *job, int64_t deadline_ms) {
        for (;;) {
                int r = cg_job_is_empty(cg, job);

                if (r == 1 || r == -ENOENT)
                        return 0;
                if (r < 0)
                        return r;
                if (clock_mono_ms() >= deadline_ms)
                        return -ETIMEDOUT;
                cg_sleep_ms(5);
        }
}

static int64_t min_ms(int64_t a, int64_t b) { return a < b ? a : b; }

int cg_kill_frozen(cg_backend *cg, const char *job, int64_t deadline_ms) {
        char dir[PATH_MAX];
        int r = cg->ops->job_dir(cg, job, dir, sizeof(dir));

        /* At least one round, so that a deadline already past (cg_job_kill with no time to
         * wait, a round per turn of the agent's loop) still kills. */
        for (bool first = true; r == 0; first = false) {
                int64_t now = clock_mono_ms();
                int t;

                r = cg_job_is_empty(cg, job);
                if (r == 1 || r == -ENOENT)
                        return 0;
                if (r < 0)
                        return r;
                if (now >= deadline_ms && !first)
                        return -ETIMEDOUT;
                /* Frozen tasks cannot fork, so the list read next is complete. Should the freeze
                 * not settle (a task stuck in the kernel), kill what is listed and go round. */
                t = cg->ops->job_freeze(cg, job, true, min_ms(now + FREEZE_WAIT_MS, deadline_ms));
                if (t < 0)
                        log_debug("cgroup: job=%s: freeze did not settle: %s", job, strerror(-t));
                r = signal_dir(dir, SIGKILL);
                t = cg->ops->job_freeze(cg, job, false, 0);
                if (r == 0 || r == -ENOENT)
                        r = t == -ENOENT ? 0 : t;
                if (r == 0 && deadline_ms > now)
                        (void)cg_wait_empty(cg, job, min_ms(clock_mono_ms() + KILL_ROUND_MS, deadline_ms));
        }
        return r;
}

static bool name_ok(const char *name, size_t max) {
        size_t l = name ? strlen(name) : 0;

        return l > 0 && l <= max && !strchr(name, '/') && strcmp(name, ".") != 0 && strcmp(name, "..") != 0;
}

/* A department component ("physics") as a cgroup name may take it. */
static bool dept_component_ok(const char *c, size_t len) {
        if (len == 0 || len + strlen(CG_DEPT_PREFIX) > NAME_MAX || (len == 1 && c[0] == '.') ||
            (len == 2 && c[0] == '.' && c[1] == '.'))
                return false;
        for (size_t i = 0; i < len; i++)
                if (!isalnum((unsigned char)c[i]) && !strchr("_.-", c[i]))
                        return false;
        return true;
}

/* "job-1", or "dept-a/dept-b/job-1": departments, then a job name that is not the v2 leaf. */
static bool job_ok(const char *job) {
        const char *slash = job ? strrchr(job, '/') : NULL, *p = job;
        size_t plen = strlen(CG_DEPT_PREFIX);

        while (p && slash && p < slash) {
                const char *end = strchr(p, '/');
                if (strncmp(p, CG_DEPT_PREFIX, plen) != 0 || !dept_component_ok(p + plen, (size_t)(end - p) - plen))
                        return false;
                p = end + 1;
        }
        return p && name_ok(p, NAME_MAX) && strncmp(p, CG_DEPT_PREFIX, plen) != 0 &&
               (slash || strcmp(p, CG_AGENT_LEAF) != 0);
}

/* dept "a/b" as the cgroup path "dept-a/dept-b" into buf. Returns 0, -EINVAL, -ENAMETOOLONG. */
static int dept_path(const char *dept, char *buf, size_t len) {
        size_t used = 0;

        *buf = 0;
        for (const char *p = dept; *p;) {
                size_t n = strcspn(p, "/");
                int w;

                if (!dept_component_ok(p, n))
                        return -EINVAL;
                w = snprintf(buf + used, len - used, "%s%s%.*s", used ? "/" : "", CG_DEPT_PREFIX, (int)n, p);
                if (w < 0 || (size_t)w >= len - used)
                        return -ENAMETOOLONG;
                used += (size_t)w;
                p += n + (p[n] == '/');
                if (p[-1] == '/' && !*p)
                        return -EINVAL; /* a trailing slash */
        }
        return used ? 0 : -EINVAL;
}

int cg_job_name(const char *dept, uint64_t id, char *buf, size_t len) {
        char d[PATH_MAX] = "";
        int r = dept ? dept_path(dept, d, sizeof(d)) : 0, w;

        if (r < 0)
                return r;
        w = snprintf(buf, len, "%s%sjob-%" PRIu64, d, *d ? "/" : "", id);
        return w < 0 || (size_t)w >= len ? -ENAMETOOLONG : 0;
}

/* Level by level from the top, create (or only find, when existing_only) each department
 * cgroup of dept and write its weight; with existing_only, stop at the first level missing. */
static int dept_levels(cg_backend *cg, const char *dept, const double *weights, size_t n, bool existing_only, char *err,
                       size_t errlen) {
        char path[PATH_MAX], dir[PATH_MAX];
        size_t level = 0;
        int r = dept_path(dept, path, sizeof(path));

        if (r < 0) {
                snprintf(err, errlen, "bad department name \"%s\"", dept);
                return r;
        }
        /* Each level in turn: a cgroup's parent must exist, and hand controllers down, first. */
        for (char *p = path; r == 0; p++) {
                if (*p != '/' && *p != '\0')
                        continue;
                char saved = *p;
                if (level >= n || !(weights[level] > 0)) {
                        snprintf(err, errlen, "department \"%s\": no positive weight for level %zu", dept, level + 1);
                        return -EINVAL;
                }
                *p = 0;
                if (existing_only && (cg->ops->job_dir(cg, path, dir, sizeof(dir)) < 0 || access(dir, F_OK) < 0))
                        return 0; /* no job of it here now: its next launch writes the weight */
                r = cg->ops->dept_create(cg, path, weights[level++], err, errlen);
                *p = saved;
                if (!saved)
                        break;
        }
        if (r == 0 && level != n) {
                snprintf(err, errlen, "department \"%s\" has %zu levels, not %zu weights", dept, level, n);
                r = -EINVAL;
        }
        return r;
}

int cg_dept_prepare(cg_backend *cg, const char *dept, const double *weights, size_t n, char *err, size_t errlen) {
        return dept_levels(cg, dept, weights, n, false, err, errlen);
}

int cg_dept_reweight(cg_backend *cg, const char *dept, const double *weights, size_t n, char *err, size_t errlen) {
        return dept_levels(cg, dept, weights, n, true, err, errlen);
}

/* Remove the department cgroups above job that are empty, deepest first. */
static void prune_depts(cg_backend *cg, const char *job) {
        char path[PATH_MAX];
        char *slash;

        snprintf(path, sizeof(path), "%s", job);
        while ((slash = strrchr(path, '/'))) {
                *slash = 0;
                if (cg->ops->dept_remove(cg, path) < 0)
                        return;
        }
}

/* v2 when /sys/fs/cgroup is a cgroup2 mount whose root offers cpu and memory. */
static int detect_mode(cg_mode *mode, char *err, size_t errlen) {
        struct statfs fs;
        char *ctls = NULL;
        int r;

        if (statfs(CG_ROOT, &fs) < 0) {
                r = -errno;
                snprintf(err, errlen, "statfs %s: %s", CG_ROOT, strerror(errno));
                return r == -ENOENT ? -EOPNOTSUPP : r;
        }
        *mode = CG_MODE_V1;
        if (fs.f_type != CGROUP2_SUPER_MAGIC)
                return 0;
        r = file_read_small(CG_ROOT "/cgroup.controllers", 0, &ctls);
        if (r < 0) {
                snprintf(err, errlen, "read %s/cgroup.controllers: %s", CG_ROOT, strerror(-r));
                return r;
        }
        if (cg_list_has(ctls, "cpu", " ") && cg_list_has(ctls, "memory", " "))
                *mode = CG_MODE_V2;
        free(ctls);
        return 0;
}

/* How long a lock held by another process is waited for before it is taken for a live agent's:
 * a shepherd forked just before its agent died shares the agent's open lock until its first
 * steps close it, and a supervisor may start the next agent within milliseconds (timelimit.sh
 * did, and found it held). */
#define CG_LOCK_WAIT_MS 2000

int cg_lock_subtree(cg_backend *cg, const char *dir, char *err, size_t errlen) {
        int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC), r = fd < 0 ? -errno : 0;

        for (int waited = 0; r == 0 && flock(fd, LOCK_EX | LOCK_NB) < 0; waited += 10) {
                r = -errno;
                if (r == -EWOULDBLOCK && waited < CG_LOCK_WAIT_MS) {
                        r = 0;
                        cg_sleep_ms(10);
                }
        }
        if (r == -EWOULDBLOCK)
                snprintf(err, errlen,
                         "cgroup %s is held by another colony-agent of this name in this cgroup; "
                         "give this one another --name",
                         dir);
        else if (r < 0)
                snprintf(err, errlen, "lock cgroup %s: %s", dir, strerror(-r));
        if (r < 0) {
                if (fd >= 0)
                        close(fd);
                return r == -EWOULDBLOCK ? -EBUSY : r;
        }
        cg->lock_fd = fd;
        return 0;
}

int cg_open(const char *agent_name, cg_backend **out, char *err, size_t errlen) {
        cg_backend *cg;
        cg_mode mode = CG_MODE_V1;
        int r;

        if (!name_ok(agent_name, AGENT_NAME_MAX)) {
                snprintf(err, errlen, "bad agent name for a cgroup: \"%s\"", agent_name ? agent_name : "");
                return -EINVAL;
        }
        if ((r = detect_mode(&mode, err, errlen)) < 0)
                return r;
        if (!(cg = calloc(1, sizeof(*cg))) || asprintf(&cg->dirname, SUBTREE_FMT, agent_name) < 0) {
                free(cg);
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        cg->mode = mode;
        cg->ops = mode == CG_MODE_V2 ? &cg_v2_ops : &cg_v1_ops;
        cg->lock_fd = -1;
        if ((r = cg->ops->open(cg, err, errlen)) < 0) {
                if (cg->lock_fd >= 0)
                        close(cg->lock_fd);
                free(cg->dirname);
                free(cg);
                return r;
        }
        log_info("cgroup: %s, subtree %s", mode == CG_MODE_V2 ? "v2" : "v1", cg->subtree);
        *out = cg;
        return 0;
}

int cg_agent_leaf(const char *agent_name, char *buf, size_t len) {
        int n = snprintf(buf, len, "/" SUBTREE_FMT "/" CG_AGENT_LEAF, agent_name);

        return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

int cg_own_usable(char **own, char *err, size_t errlen) {
        cg_mode mode = CG_MODE_V1;
        int r = detect_mode(&mode, err, errlen);

        *own = NULL;
        if (r < 0)
                return r;
        return mode == CG_MODE_V2 ? cg_v2_own_usable(own, err, errlen) : 1;
}

cg_mode cg_get_mode(const cg_backend *cg) { return cg->mode; }

const char *cg_subtree_path(const cg_backend *cg) { return cg->subtree; }

/* Limits a job's cgroup may be given: none negative, a weight on v2's scale. */
static bool limits_ok(const cg_limits *lim) {
        return lim->mcpu >= 0 && lim->mem >= 0 && lim->mem_high >= 0 && lim->pids >= 0 && lim->cpu_weight <= 10000;
}

int cg_job_create(cg_backend *cg, const char *job, const cg_limits *lim, char *err, size_t errlen) {
        if (!job_ok(job) || !limits_ok(lim)) {
                snprintf(err, errlen, "bad job cgroup name or limits: \"%s\"", job ? job : "");
                return -EINVAL;
        }
        int r = cg->ops->job_create(cg, job, lim, err, errlen);
        if (r < 0)
                prune_depts(cg, job); /* cg_dept_prepare may have made them for this job alone */
        return r;
}

/* The length of job's department part, up to its last '/' (0: none). */
static size_t parent_len(const char *job) {
        const char *slash = strrchr(job, '/');

        return slash ? (size_t)(slash - job) : 0;
}

/* What every spare cgroup's name starts with: no job's ("job-<id>") or department's does. */
#define SPARE_PREFIX "spare-"

int cg_spare_name(const char *beside, pid_t pid, char *buf, size_t len) {
        size_t plen = parent_len(beside);
        int n = snprintf(buf, len, "%.*s%s" SPARE_PREFIX "%d", (int)plen, beside, plen ? "/" : "", (int)pid);

        return n < 0 || (size_t)n >= len ? -ENAMETOOLONG : 0;
}

bool cg_is_spare(const char *name) {
        const char *last = strrchr(name, '/');

        return strncmp(last ? last + 1 : name, SPARE_PREFIX, strlen(SPARE_PREFIX)) == 0;
}

int cg_spare_create(cg_backend *cg, const char *spare, char *err, size_t errlen) {
        if (!job_ok(spare)) {
                snprintf(err, errlen, "bad spare cgroup name: \"%s\"", spare ? spare : "");
                return -EINVAL;
        }
        if (!cg->ops->spare_create) {
                snprintf(err, errlen, "cgroup %s: cgroups cannot be renamed here", cg->subtree);
                return -EOPNOTSUPP;
        }
        return cg->ops->spare_create(cg, spare, err, errlen);
}

int cg_job_from_spare(cg_backend *cg, const char *spare, const char *job, const cg_limits *lim, char *err,
                      size_t errlen) {
        if (!job_ok(spare) || !job_ok(job) || !limits_ok(lim)) {
                snprintf(err, errlen, "bad job cgroup name or limits: \"%s\"", job ? job : "");
                return -EINVAL;
        }
        if (!cg->ops->job_from_spare) {
                snprintf(err, errlen, "cgroup %s: cgroups cannot be renamed here", cg->subtree);
                return -EOPNOTSUPP;
        }
        /* rename(2) in cgroupfs keeps a cgroup below its parent (v1 says EIO otherwise). */
        if (parent_len(spare) != parent_len(job) || strncmp(spare, job, parent_len(job)) != 0) {
                snprintf(err, errlen, "spare cgroup %s is not beside %s", spare, job);
                return -EXDEV;
        }
        return cg->ops->job_from_spare(cg, spare, job, lim, err, errlen);
}

int cg_job_procs_open(cg_backend *cg, const char *job, int *fds, char *err, size_t errlen) {
        if (!job_ok(job)) {
                snprintf(err, errlen, "bad job cgroup name: \"%s\"", job ? job : "");
                return -EINVAL;
        }
        return cg->ops->job_procs_open(cg, job, fds, err, errlen);
}

int cg_job_open(cg_backend *cg, const char *job) {
        char dir[PATH_MAX];
        int r = job_ok(job) ? 0 : -EINVAL, fd;

        if (r == 0 && cg->mode != CG_MODE_V2)
                r = -EOPNOTSUPP;
        if (r == 0)
                r = cg->ops->job_dir(cg, job, dir, sizeof(dir));
        if (r < 0)
                return r;
        fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
        return fd < 0 ? -errno : fd;
}

int cg_job_usage(cg_backend *cg, const char *job, cg_usage *out) {
        if (!job_ok(job))
                return -EINVAL;
        *out = (cg_usage){ 0 };
        return cg->ops->job_usage(cg, job, out);
}

int cg_job_cpus(cg_backend *cg, const char *job, char **cpus, int64_t *mcpu) {
        *cpus = NULL;
        *mcpu = 0;
        return job_ok(job) ? cg->ops->job_cpus(cg, job, cpus, mcpu) : -EINVAL;
}

int cg_job_set_cpus(cg_backend *cg, const char *job, const char *cpus, char *err, size_t errlen) {
        return job_ok(job) ? cg->ops->job_set_cpus(cg, job, cpus, err, errlen) : -EINVAL;
}

int cg_job_is_empty(cg_backend *cg, const char *job) {
        char dir[PATH_MAX];
        pid_t *pids = NULL;
        size_t n = 0;
        int r = job_ok(job) ? cg->ops->job_dir(cg, job, dir, sizeof(dir)) : -EINVAL;

        if (r == 0)
                r = cg_read_procs(dir, &pids, &n);
        free(pids);
        return r < 0 ? r : n == 0;
}

int cg_job_signal(cg_backend *cg, const char *job, int sig) {
        char dir[PATH_MAX];
        int r = job_ok(job) ? cg->ops->job_dir(cg, job, dir, sizeof(dir)) : -EINVAL;

        return r < 0 ? r : signal_dir(dir, sig);
}

int cg_job_kill(cg_backend *cg, const char *job, int timeout_ms) {
        if (!job_ok(job) || timeout_ms < 0)
                return -EINVAL;
        return cg->ops->job_kill(cg, job, clock_mono_ms() + timeout_ms);
}

int cg_job_remove(cg_backend *cg, const char *job) {
        int r = job_ok(job) ? cg_job_is_empty(cg, job) : -EINVAL;

        if (r == 0)
                return -EBUSY;
        if (r < 0 && r != -ENOENT)
                return r;
        if ((r = cg_job_rmdir(cg, job)) == 0)
                cg_job_forget(cg, job);
        return r;
}

int cg_job_rmdir(cg_backend *cg, const char *job) {
        int r = job_ok(job) ? cg->ops->job_remove(cg, job) : -EINVAL;

        if (r == 0)
                prune_depts(cg, job);
        return r;
}

void cg_job_forget(cg_backend *cg, const char *job) {
        if (cg->ops->job_forget)
                cg->ops->job_forget(cg, job);
}

int cg_list_jobs(cg_backend *cg, char ***out) {
        char **v = NULL;
        int r = cg->ops->list_jobs(cg, &v);

        if (r == 0 && !v && !(v = calloc(1, sizeof(*v))))
                r = -ENOMEM;
        if (r < 0) {
                strv_free(v);
                return r;
        }
        *out = v;
        return 0;
}

/* Kill and remove every job cgroup of the subtree; failures are logged, not fatal. */
static void remove_jobs(cg_backend *cg) {
        char **jobs = NULL, **depts = NULL;
        int r = cg_list_jobs(cg, &jobs);

        if (r < 0)
                log_errno(LOG_WARNING, r, "cgroup=%s: cannot list job cgroups", cg->subtree);
        for (char **j = jobs; j && *j; j++) {
                r = cg_job_kill(cg, *j, CLOSE_KILL_MS);
                if (r == 0)
                        r = cg_job_remove(cg, *j);
                if (r < 0)
                        log_errno(LOG_WARNING, r, "cgroup=%s/%s: cannot kill and remove", cg->subtree, *j);
        }
        strv_free(jobs);
        /* Departments no job's removal pruned (an agent that died between the department's
         * mkdir and the job's): the subtree goes whole. */
        if ((r = cg->ops->list_depts(cg, &depts)) < 0)
                log_errno(LOG_WARNING, r, "cgroup=%s: cannot list department cgroups", cg->subtree);
        for (char **d = depts; d && *d; d++)
                if ((r = cg->ops->dept_remove(cg, *d)) < 0)
                        log_errno(LOG_WARNING, r, "cgroup=%s/%s: cannot remove", cg->subtree, *d);
        strv_free(depts);
}

void cg_close(cg_backend *cg, bool remove_subtree) {
        if (!cg)
                return;
        if (remove_subtree)
                remove_jobs(cg);
        cg->ops->close(cg, remove_subtree);
        close(cg->lock_fd); /* last: the next agent may take the subtree once it is gone */
        free(cg->subtree);
        free(cg->dirname);
        free(cg);
}
