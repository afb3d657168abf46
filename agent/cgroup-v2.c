/* cgroup-v2.c - the backend for hosts with the unified (v2) hierarchy.
 *
 * One subtree, <own>/colony-<agent>, whose cgroup.subtree_control enables cpu, memory and pids
 * for the job cgroups below it. The no-internal-process rule forbids tasks in a non-root cgroup
 * that distributes controllers, so the agent first moves itself into the leaf <subtree>/agent,
 * whose cpu.weight puts it and its shepherds before the jobs (CG_AGENT_WEIGHT).
 * The controllers reach the subtree only through the own cgroup's cgroup.subtree_control:
 *  - in the root cgroup (which may hold tasks and distribute at once) they must be enabled
 *    already; colony never writes a setting of the root;
 *  - in any other cgroup they must be available (cgroup.controllers: the parent hands them
 *    down). If they are not enabled yet, the agent enables them itself, as crun and Slurm do,
 *    but only in a cgroup delegated to it: one marked with the trusted.delegate (or
 *    user.delegate) extended attribute, which systemd >= 251 sets for Delegate=yes units. Once
 *    the agent has left for its leaf the own cgroup must hold no task; the agent disables them
 *    again before it moves back to remove its subtree.
 * Otherwise cg_open fails and says which controllers are missing where.
 * A job's denied devices (cg_limits.deny) are a BPF_CGROUP_DEVICE program on its cgroup
 * (cgdev-bpf.c), attached before any of its tasks runs there. */
#include "cgdev.h"
#include "cgroup-internal.h"
#include "clock.h"
#include "log.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/xattr.h>
#include <unistd.h>

#define V2_MOUNT "/sys/fs/cgroup"

static const char *const v2_controllers[] = { "cpu", "memory", "pids", NULL };
/* Used where the parent offers it (usage: io.stat), never required. */
#define V2_OPTIONAL "io"
/* Jobs' own cores (cpuset.cpus) where the parent offers it; without it they share every core. */
#define V2_CPUSET "cpuset"

/* Highest memory.current seen per job, on kernels without memory.peak (before 5.19). */
typedef struct v2_peak {
        char *job;
        uint64_t peak;
        struct v2_peak *next;
} v2_peak;

typedef struct v2_state {
        char *own;        /* the cgroup the agent was started in */
        char *leaf;       /* <subtree>/agent, where the agent lives */
        char enabled[48]; /* "+cpu +pids"-style controllers we enabled in own's subtree_control */
        v2_peak *peaks;
} v2_state;

static v2_state *state(cg_backend *cg) { return cg->priv; }

static int v2_job_dir(cg_backend *cg, const char *job, char *buf, size_t len) {
        return cg_path(buf, len, cg->subtree, job);
}

static int find_own(v2_state *s, char *err, size_t errlen) {
        char *mnt = NULL, *root = NULL;
        int r = cg_mount_find("cgroup2", NULL, V2_MOUNT, &mnt, &root);

        if (r < 0)
                snprintf(err, errlen, "cgroup v2: find the mount at %s in /proc/self/mountinfo: %s", V2_MOUNT,
                         strerror(-r));
        else if ((r = cg_own_dir(NULL, mnt, root, &s->own)) < 0) {
                snprintf(err, errlen, "cgroup v2: our cgroup (/proc/self/cgroup) is not visible in %s: %s", mnt,
                         strerror(-r));
                r = r == -ENOENT ? -EOPNOTSUPP : r;
        }
        free(mnt);
        free(root);
        return r;
}

/* The controllers of v2_controllers missing from dir/file, as "a b" in missing (may be ""). */
static int missing_controllers(const char *dir, const char *file, char *missing, size_t len) {
        char *ctl = NULL;
        int r = cg_read(dir, file, &ctl);

        if (r < 0)
                return r;
        *missing = 0;
        for (const char *const *c = v2_controllers; *c; c++)
                if (!cg_list_has(ctl, *c, " "))
                        snprintf(missing + strlen(missing), len - strlen(missing), "%s%s", *missing ? " " : "", *c);
        free(ctl);
        return 0;
}

/* Whether the own cgroup can hand cpu, memory and pids down: enabled already at the root,
 * available (to be enabled by delegate_own) elsewhere. If not, err names the missing. */
static int check_available(const char *own, char *err, size_t errlen) {
        bool root = strcmp(own, V2_MOUNT) == 0;
        const char *file = root ? "cgroup.subtree_control" : "cgroup.controllers";
        char missing[32];
        int r = missing_controllers(own, file, missing, sizeof(missing));

        if (r < 0)
                snprintf(err, errlen, "cgroup v2: read %s/%s: %s", own, file, strerror(-r));
        else if (*missing) {
                if (root)
                        snprintf(err, errlen,
                                 "cgroup v2: the root cgroup does not enable the controllers %s for "
                                 "its children (%s/cgroup.subtree_control)",
                                 missing, own);
                else
                        snprintf(err, errlen,
                                 "cgroup v2: the controllers %s are not available in our cgroup %s: "
                                 "its parent must enable them in cgroup.subtree_control (systemd: Delegate=yes)",
                                 missing, own);
                r = -EOPNOTSUPP;
        }
        return r;
}

/* Whether dir was delegated to us: systemd marks a Delegate=yes unit's cgroup so. */
static bool is_delegated(const char *dir) {
        static const char *const names[] = { "trusted.delegate", "user.delegate", NULL };
        char v[8];

        for (const char *const *n = names; *n; n++) {
                ssize_t len = getxattr(dir, *n, v, sizeof(v) - 1);
                if (len > 0) {
                        v[len] = 0;
                        if (strcmp(v, "1") == 0)
                                return true;
                }
        }
        return false;
}

int cg_v2_own_usable(char **own, char *err, size_t errlen) {
        v2_state s = { 0 };
        pid_t *pids = NULL;
        size_t n = 0;
        int r = find_own(&s, err, errlen);

        if (r < 0)
                return r;
        if (strcmp(s.own, V2_MOUNT) == 0)
                r = 1;
        else if (is_delegated(s.own)) {
                /* The agent must leave for its leaf before it enables the controllers here. */
                if ((r = cg_read_procs(s.own, &pids, &n)) < 0)
                        snprintf(err, errlen, "cgroup v2: read %s/cgroup.procs: %s", s.own, strerror(-r));
                else
                        r = n == 1 && pids[0] == getpid();
        }
        free(pids);
        *own = s.own;
        return r;
}

/* Whether controller ctl is available in dir (its parent hands it down) but not yet enabled
 * for dir's children. */
static bool available(const char *dir, const char *ctl) {
        char *have = NULL, *on = NULL;
        bool r = cg_read(dir, "cgroup.controllers", &have) == 0 && cg_list_has(have, ctl, " ") &&
                 cg_read(dir, "cgroup.subtree_control", &on) == 0 && !cg_list_has(on, ctl, " ");

        free(have);
        free(on);
        return r;
}

/* Hand cpu, memory and pids down to dir's children, and io where dir has it. */
static int hand_down(const char *dir, char *err, size_t errlen) {
        int r = cg_write(dir, "cgroup.subtree_control", "+cpu +memory +pids", err, errlen);

        if (r == 0 && available(dir, V2_OPTIONAL))
                (void)cg_write(dir, "cgroup.subtree_control", "+" V2_OPTIONAL, NULL, 0);
        if (r == 0 && available(dir, V2_CPUSET))
                (void)cg_write(dir, "cgroup.subtree_control", "+" V2_CPUSET, NULL, 0);
        return r;
}

/* Enable in the (non-root) own cgroup's subtree_control what it lacks, now that the agent has
 * left it; remembered in s->enabled for undo_own. Fails with -EBUSY while tasks remain there. */
static int delegate_own(v2_state *s, char *err, size_t errlen) {
        char missing[32];
        int r;

        if (strcmp(s->own, V2_MOUNT) == 0)
                return 0;
        if ((r = missing_controllers(s->own, "cgroup.subtree_control", missing, sizeof(missing))) < 0) {
                snprintf(err, errlen, "cgroup v2: read %s/cgroup.subtree_control: %s", s->own, strerror(-r));
                return r;
        }
        if (!*missing)
                return 0;
        if (!is_delegated(s->own)) {
                snprintf(err, errlen,
                         "cgroup v2: %s does not enable %s for its children and is not delegated to "
                         "us (no trusted.delegate=1 attribute), so colony will not write its settings; start the "
                         "agent in a delegated cgroup (systemd: Delegate=yes) or enable them there",
                         s->own, missing);
                return -EPERM;
        }
        for (const char *const *c = v2_controllers; *c; c++)
                if (cg_list_has(missing, *c, " "))
                        snprintf(s->enabled + strlen(s->enabled), sizeof(s->enabled) - strlen(s->enabled), "%s+%s",
                                 *s->enabled ? " " : "", *c);
        if (available(s->own, V2_OPTIONAL))
                snprintf(s->enabled + strlen(s->enabled), sizeof(s->enabled) - strlen(s->enabled), " +%s", V2_OPTIONAL);
        if (available(s->own, V2_CPUSET))
                snprintf(s->enabled + strlen(s->enabled), sizeof(s->enabled) - strlen(s->enabled), " +%s", V2_CPUSET);
        r = cg_write(s->own, "cgroup.subtree_control", s->enabled, err, errlen);
        if (r == -EBUSY)
                snprintf(err, errlen,
                         "cgroup v2: cannot enable %s in %s/cgroup.subtree_control: other tasks than "
                         "the agent are in %s; start the agent alone in a delegated cgroup (systemd: Delegate=yes) "
                         "or in the root cgroup",
                         missing, s->own, s->own);
        if (r < 0)
                *s->enabled = 0;
        return r;
}

/* Disable what delegate_own enabled (and so, first, the subtree's own delegation), so that
 * the agent may move back into the own cgroup. */
static int undo_own(v2_state *s, const char *subtree) {
        char v[sizeof(s->enabled)], err[512];
        int r;

        if (!*s->enabled)
                return 0;
        (void)cg_write(subtree, "cgroup.subtree_control", "-" V2_OPTIONAL, NULL, 0);
        (void)cg_write(subtree, "cgroup.subtree_control", "-" V2_CPUSET, NULL, 0);
        (void)cg_write(subtree, "cgroup.subtree_control", "-cpu -memory -pids", NULL, 0);
        snprintf(v, sizeof(v), "%s", s->enabled);
        for (char *p = v; (p = strchr(p, '+'));)
                *p = '-';
        if ((r = cg_write(s->own, "cgroup.subtree_control", v, err, sizeof(err))) < 0)
                log_warning("cgroup=%s: cannot undo our delegation: %s", s->own, err);
        else
                *s->enabled = 0;
        return r;
}

static void free_state(v2_state *s) {
        while (s->peaks) {
                v2_peak *p = s->peaks;

                s->peaks = p->next;
                free(p->job);
                free(p);
        }
        free(s->own);
        free(s->leaf);
        free(s);
}

/* Remove the leaf and the subtree (each only if asked). While the agent is in the leaf, it
 * first goes back to the cgroup it was started in: the only way to empty the leaf. */
static void remove_subtree(v2_state *s, const char *subtree, bool in_leaf, bool leaf, bool sub) {
        char err[512];
        int r;

        if (in_leaf && undo_own(s, subtree) < 0)
                return;
        if (in_leaf && (r = cg_move_self(s->own, err, sizeof(err))) < 0) {
                log_warning("cgroup=%s: cannot leave the agent's leaf: %s", s->leaf, err);
                return;
        }
        if (leaf && (r = cg_rmdir(s->leaf)) < 0)
                log_warning("cgroup=%s: cannot remove: %s", s->leaf, strerror(-r));
        if (sub && (r = cg_rmdir(subtree)) < 0)
                log_warning("cgroup=%s: cannot remove: %s", subtree, strerror(-r));
}

/* An agent that joined a dead agent's scope (sdscope_enter) starts in that agent's leaf,
 * <own>/<dirname>/agent: its own cgroup is the one above the subtree, as for that agent. */
static void leave_dead_agents_leaf(v2_state *s, const char *dirname) {
        size_t len = strlen(s->own), tail = strlen(dirname) + strlen(CG_AGENT_LEAF) + 2;
        char *at = len > tail ? s->own + len - tail : NULL;

        if (at && at[0] == '/' && strncmp(at + 1, dirname, strlen(dirname)) == 0 &&
            strcmp(at + 1 + strlen(dirname), "/" CG_AGENT_LEAF) == 0)
                *at = '\0';
}

static int v2_open(cg_backend *cg, char *err, size_t errlen) {
        v2_state *s = calloc(1, sizeof(*s));
        char *subtree = NULL;
        bool made_sub = false, made_leaf = false, moved = false;
        int r;

        if (!s) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        r = find_own(s, err, errlen);
        if (r == 0) {
                leave_dead_agents_leaf(s, cg->dirname);
                r = check_available(s->own, err, errlen);
        }
        if (r == 0 && (asprintf(&subtree, "%s/%s", s->own, cg->dirname) < 0 ||
                       asprintf(&s->leaf, "%s/%s", subtree, CG_AGENT_LEAF) < 0)) {
                snprintf(err, errlen, "out of memory");
                r = -ENOMEM;
        }
        if (r == 0)
                r = cg_mkdir(subtree, true, &made_sub, err, errlen);
        /* Lost to another agent, even one that came second to mkdir: the subtree is its own. */
        if (r == 0 && (r = cg_lock_subtree(cg, subtree, err, errlen)) < 0)
                made_sub = false;
        if (r == 0)
                r = cg_mkdir(s->leaf, true, &made_leaf, err, errlen);
        if (r == 0)
                moved = (r = cg_move_self(s->leaf, err, errlen)) == 0;
        if (r == 0)
                r = delegate_own(s, err, errlen);
        if (r == 0)
                r = hand_down(subtree, err, errlen);
        if (r == 0)
                r = cg_write_i64(s->leaf, "cpu.weight", (int64_t)cg_weight_v2(CG_AGENT_WEIGHT), err, errlen);
        if (r == 0) {
                cg->subtree = subtree;
                cg->priv = s;
                return 0;
        }
        remove_subtree(s, subtree, moved, made_leaf, made_sub);
        free_state(s);
        free(subtree);
        return r;
}

static int v2_job_create(cg_backend *cg, const char *job, const cg_limits *lim, char *err, size_t errlen) {
        char dir[PATH_MAX], v[48];
        int r = v2_job_dir(cg, job, dir, sizeof(dir));

        if (r < 0) {
                snprintf(err, errlen, "cgroup path too long for job %s", job);
                return r;
        }
        if ((r = cgdev_check(job, lim->deny, lim->ndeny, err, errlen)) < 0)
                return r;
        if ((r = cg_mkdir(dir, false, NULL, err, errlen)) < 0)
                return r;
        if (lim->mcpu > 0) {
                snprintf(v, sizeof(v), "%" PRId64 " %d", cg_cpu_quota_us(lim->mcpu), CG_CPU_PERIOD_US);
                r = cg_write(dir, "cpu.max", v, err, errlen);
        }
        if (r == 0 && lim->cpu_weight > 0)
                r = cg_write_i64(dir, "cpu.weight", (int64_t)lim->cpu_weight, err, errlen);
        if (r == 0 && lim->mem > 0) {
                r = cg_write_i64(dir, "memory.max", lim->mem, err, errlen);
                /* Absent without swap accounting, where there is no swap to forbid. */
                if (r == 0 && (r = cg_write(dir, "memory.swap.max", "0", err, errlen)) == -ENOENT)
                        r = 0;
        }
        if (r == 0 && lim->mem_high > 0)
                r = cg_write_i64(dir, "memory.high", lim->mem_high, err, errlen);
        if (r == 0 && lim->pids > 0)
                r = cg_write_i64(dir, "pids.max", lim->pids, err, errlen);
        if (r == 0 && lim->cpus && (r = cg_write(dir, "cpuset.cpus", lim->cpus, err, errlen)) == -ENOENT) {
                log_warning("cgroup=%s: no cpuset controller here: the job shares every core", dir);
                r = 0;
        }
        if (r == 0 && lim->ndeny > 0)
                r = cgdev_bpf_deny(dir, lim->deny, lim->ndeny, err, errlen);
        if (r < 0)
                (void)cg_rmdir(dir);
        return r;
}

static int v2_job_procs_open(cg_backend *cg, const char *job, int *fds, char *err, size_t errlen) {
        char dir[PATH_MAX];
        int r = v2_job_dir(cg, job, dir, sizeof(dir));

        if (r == 0 && (r = cg_open_write(dir, "cgroup.procs")) >= 0) {
                fds[0] = r;
                return 1;
        }
        snprintf(err, errlen, "open cgroup.procs of %s: %s", job, strerror(-r));
        return r;
}

/* Raise the job's recorded high-water mark to cur and return it. */
static uint64_t peak_update(v2_state *s, const char *job, uint64_t cur) {
        v2_peak *p = s->peaks;

        while (p && strcmp(p->job, job) != 0)
                p = p->next;
        if (!p) {
                if (!(p = calloc(1, sizeof(*p))) || !(p->job = strdup(job))) {
                        free(p);
                        return cur;
                }
                p->next = s->peaks;
                s->peaks = p;
        }
        if (cur > p->peak)
                p->peak = cur;
        return p->peak;
}

static void peak_forget(v2_state *s, const char *job) {
        for (v2_peak **pp = &s->peaks; *pp; pp = &(*pp)->next)
                if (strcmp((*pp)->job, job) == 0) {
                        v2_peak *p = *pp;

                        *pp = p->next;
                        free(p->job);
                        free(p);
                        return;
                }
}

/* Bytes read and written by the cgroup, summed over the devices of io.stat; absent (no io
 * controller here) is 0. */
static void read_io(const char *dir, cg_usage *out) {
        char *text = NULL;

        if (cg_read(dir, "io.stat", &text) < 0)
                return;
        for (const char *p = text; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
                const char *r = strstr(p, " rbytes="), *w = strstr(p, " wbytes="), *end = strchr(p, '\n');
                if (r && (!end || r < end))
                        out->io_rbytes += strtoull(r + 8, NULL, 10);
                if (w && (!end || w < end))
                        out->io_wbytes += strtoull(w + 8, NULL, 10);
        }
        free(text);
}

/* The cgroup's cpu, memory and io pressure; not known when the kernel has no PSI. */
static void read_pressure(const char *dir, psi_stats *out) {
        static const char *const files[] = { "cpu.pressure", "memory.pressure", "io.pressure" };
        psi_resource *dst[] = { &out->cpu, &out->memory, &out->io };

        for (size_t i = 0; i < 3; i++) {
                char *text = NULL;
                int r = cg_read(dir, files[i], &text);

                if (r == 0)
                        r = psi_parse(text, dst[i]);
                free(text);
                if (r < 0)
                        return;
        }
        out->known = true;
}

static int v2_job_usage(cg_backend *cg, const char *job, cg_usage *out) {
        char dir[PATH_MAX];
        int r = v2_job_dir(cg, job, dir, sizeof(dir));

        if (r == 0)
                r = cg_read_key(dir, "cpu.stat", "usage_usec", &out->cpu_usec);
        if (r == 0)
                r = cg_read_u64(dir, "memory.current", &out->mem_current);
        if (r == 0 && (r = cg_read_u64(dir, "memory.peak", &out->mem_peak)) == -ENOENT) {
                out->mem_peak = peak_update(state(cg), job, out->mem_current);
                r = 0;
        }
        if (r == 0)
                r = cg_read_key(dir, "memory.events", "oom_kill", &out->oom_kills);
        if (r == 0) {
                read_io(dir, out);
                read_pressure(dir, &out->psi);
        }
        return r;
}

static int v2_job_freeze(cg_backend *cg, const char *job, bool frozen, int64_t deadline_ms) {
        char dir[PATH_MAX];
        uint64_t done = 0;
        int r = v2_job_dir(cg, job, dir, sizeof(dir));

        if (r == 0)
                r = cg_write(dir, "cgroup.freeze", frozen ? "1" : "0", NULL, 0);
        /* Freezing takes a while; cgroup.events says "frozen 1" once every task has stopped. */
        while (r == 0 && frozen) {
                if ((r = cg_read_key(dir, "cgroup.events", "frozen", &done)) < 0 || done)
                        break;
                if (clock_mono_ms() >= deadline_ms)
                        return -ETIMEDOUT;
                cg_sleep_ms(1);
        }
        return r;
}

static int v2_job_kill(cg_backend *cg, const char *job, int64_t deadline_ms) {
        char dir[PATH_MAX];
        int r = v2_job_dir(cg, job, dir, sizeof(dir)), empty = r == 0 ? cg_job_is_empty(cg, job) : r;

        /* Most jobs leave nothing when they end: a read, not a write in cgroupfs, on the loop. */
        if (empty == 1 || empty == -ENOENT)
                return 0;
        /* cgroup.kill also kills what a task forks meanwhile. */
        if (r == 0 && (r = cg_write(dir, "cgroup.kill", "1", NULL, 0)) == -ENOENT)
                /* Either no such cgroup (nothing to kill) or a kernel before 5.14. */
                return access(dir, F_OK) == 0 ? cg_kill_frozen(cg, job, deadline_ms) : 0;
        return r < 0 ? r : cg_wait_empty(cg, job, deadline_ms);
}

static int v2_job_remove(cg_backend *cg, const char *job) {
        char dir[PATH_MAX];
        int r = v2_job_dir(cg, job, dir, sizeof(dir));

        return r < 0 ? r : cg_rmdir(dir);
}

static void v2_job_forget(cg_backend *cg, const char *job) { peak_forget(state(cg), job); }

static int v2_list_jobs(cg_backend *cg, char ***out) { return cg_add_job_dirs(cg->subtree, CG_AGENT_LEAF, out); }

static int v2_list_depts(cg_backend *cg, char ***out) { return cg_add_dept_dirs(cg->subtree, out); }

static int v2_dept_create(cg_backend *cg, const char *dept, double w, char *err, size_t errlen) {
        char dir[PATH_MAX];
        int r = v2_job_dir(cg, dept, dir, sizeof(dir));

        if (r < 0) {
                snprintf(err, errlen, "cgroup path too long for department %s", dept);
                return r;
        }
        if ((r = cg_mkdir(dir, true, NULL, err, errlen)) == 0 &&
            (r = cg_write_i64(dir, "cpu.weight", (int64_t)cg_weight_v2(w), err, errlen)) == 0)
                r = hand_down(dir, err, errlen);
        return r;
}

static int v2_dept_remove(cg_backend *cg, const char *dept) {
        char dir[PATH_MAX];
        int r = v2_job_dir(cg, dept, dir, sizeof(dir));

        return r < 0 ? r : rmdir(dir) < 0 && errno != ENOENT ? -errno : 0;
}

static int v2_job_cpus(cg_backend *cg, const char *job, char **cpus, int64_t *mcpu) {
        char dir[PATH_MAX], *max = NULL;
        long long quota = 0, period = 0;
        int r = v2_job_dir(cg, job, dir, sizeof(dir));
        if (r == 0 && (r = cg_read(dir, "cpuset.cpus", cpus)) == -ENOENT)
                r = -EOPNOTSUPP;
        if (r == 0 && (r = cg_read(dir, "cpu.max", &max)) == 0 && sscanf(max, "%lld %lld", &quota, &period) == 2 &&
            period > 0)
                *mcpu = quota * 1000 / period;
        free(max);
        return r;
}

static int v2_job_set_cpus(cg_backend *cg, const char *job, const char *cpus, char *err, size_t errlen) {
        char dir[PATH_MAX];
        int r = v2_job_dir(cg, job, dir, sizeof(dir));
        if (r == 0 && (r = cg_write(dir, "cpuset.cpus", cpus, err, errlen)) == -ENOENT)
                r = -EOPNOTSUPP;
        return r;
}

static void v2_close(cg_backend *cg, bool remove) {
        if (remove)
                remove_subtree(state(cg), cg->subtree, true, true, true);
        free_state(state(cg));
        cg->priv = NULL;
}

const cg_ops cg_v2_ops = {
        .open = v2_open,
        .job_create = v2_job_create,
        .job_procs_open = v2_job_procs_open,
        .job_usage = v2_job_usage,
        .job_dir = v2_job_dir,
        .job_freeze = v2_job_freeze,
        .job_kill = v2_job_kill,
        .job_remove = v2_job_remove,
        .list_jobs = v2_list_jobs,
        .list_depts = v2_list_depts,
        .dept_create = v2_dept_create,
        .dept_remove = v2_dept_remove,
        .close = v2_close,
        .job_cpus = v2_job_cpus,
        .job_set_cpus = v2_job_set_cpus,
        .job_forget = v2_job_forget,
};
