/* cgroup-v1.c - the backend for hosts with per-controller (v1) hierarchies.
 *
 * Each controller colony needs has its own hierarchy (or shares one, as with a co-mounted
 * "cpu,cpuacct"), its own mount point and its own "own cgroup" from /proc/self/cgroup, so the
 * subtree colony-<agent> exists once per distinct hierarchy. A job's tasks are listed in the
 * freezer hierarchy, which is also what kills them. The devices hierarchy, where mounted, keeps a
 * job from the device nodes of cg_limits.deny: devices.deny of the job's cgroup, written before
 * any of its tasks is moved there. A devices cgroup starts with its parent's list, so the
 * subtree and the departments' cgroups keep what the agent's own cgroup allows, and a job's
 * denials stay its own. The agent itself moves into <cpu subtree>/agent, as v2's leaf, for the
 * leaf's weight (CG_AGENT_WEIGHT); in the other hierarchies it stays where it was started. */
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
#include <unistd.h>

enum { V1_CPU, V1_CPUACCT, V1_MEMORY, V1_PIDS, V1_FREEZER, V1_CPUSET, V1_DEVICES, _V1_MAX };

_Static_assert(_V1_MAX <= CG_MAX_HIERARCHIES,
               "a job cgroup's cgroup.procs, one per hierarchy, fit cg_job_procs_open's fds");
static const char *const v1_names[_V1_MAX] = { "cpu", "cpuacct", "memory", "pids", "freezer", "cpuset", "devices" };

/* The controllers a host may lack, and what jobs go without then. */
static const char *const v1_optional[_V1_MAX] = {
        [V1_CPUSET] = "jobs get no cores of their own",
        [V1_DEVICES] = "jobs cannot be kept from devices (a job given GPUs fails to start)",
};

typedef struct v1_state {
        char *dir[_V1_MAX]; /* the subtree in each controller's hierarchy; an optional one's NULL
                             * when the host mounts none (v1_optional) */
        char *leaf;         /* <cpu subtree>/agent once the agent is in it */
        bool cpuset_clones; /* the kernel fills each new cpuset below the subtree (cpuset_clone) */
} v1_state;

static v1_state *state(cg_backend *cg) { return cg->priv; }

/* Whether controller i shares its hierarchy with an earlier one (co-mounted), or is not mounted
 * (cpuset, optional): either way nothing is done in it under its name. */
static bool is_dup(const v1_state *s, int i) {
        if (!s->dir[i])
                return true;
        for (int j = 0; j < i; j++)
                if (strcmp(s->dir[j], s->dir[i]) == 0)
                        return true;
        return false;
}

static int job_path(cg_backend *cg, int ctl, const char *job, char *buf, size_t len) {
        return cg_path(buf, len, state(cg)->dir[ctl], job);
}

/* The subtree's directory for controller i: <mount>/<own cgroup>/colony-<agent>. */
static int subtree_dir(cg_backend *cg, int i, char **out, char *err, size_t errlen) {
        char *mnt = NULL, *root = NULL, *own = NULL;
        int r = cg_mount_find("cgroup", v1_names[i], NULL, &mnt, &root);

        if (r == -ENOENT) {
                snprintf(err, errlen, "cgroup v1: no hierarchy with the %s controller is mounted", v1_names[i]);
                r = -EOPNOTSUPP;
        } else if (r < 0)
                snprintf(err, errlen, "cgroup v1: read /proc/self/mountinfo: %s", strerror(-r));
        if (r == 0 && (r = cg_own_dir(v1_names[i], mnt, root, &own)) < 0) {
                snprintf(err, errlen, "cgroup v1: our %s cgroup (/proc/self/cgroup) is not visible in %s: %s",
                         v1_names[i], mnt, strerror(-r));
                r = r == -ENOENT ? -EOPNOTSUPP : r;
        }
        if (r == 0 && asprintf(out, "%s/%s", own, cg->dirname) < 0) {
                snprintf(err, errlen, "out of memory");
                r = -ENOMEM;
        }
        free(mnt);
        free(root);
        free(own);
        return r;
}

/* Only on our own new subtree: the own memory cgroup may be someone else's. A refusal is
 * harmless: old kernels refuse when the parent already uses the hierarchy (so we inherit
 * it), and since 5.16 it is always on. */
static void memory_use_hierarchy(const char *dir) {
        char err[256];
        int r = cg_write(dir, "memory.use_hierarchy", "1", err, sizeof(err));

        if (r < 0 && r != -ENOENT)
                log_debug("cgroup: %s", err);
}

/* A new cpuset cgroup has no CPUs and no memory nodes, and takes no task until it has: give
 * dir its parent's, which a job's own cores (cpuset.cpus) then narrow. Only for cgroups of our
 * subtree, the subtree included, never the parent's own settings. */
static int cpuset_inherit(const char *dir, char *err, size_t errlen) {
        char parent[PATH_MAX], *cpus = NULL, *mems = NULL;
        snprintf(parent, sizeof(parent), "%s", dir);
        *strrchr(parent, '/') = '\0';
        int r = cg_read(parent, "cpuset.cpus", &cpus);
        if (r == 0)
                r = cg_read(parent, "cpuset.mems", &mems);
        if (r < 0)
                snprintf(err, errlen, "read %s/cpuset.cpus and cpuset.mems: %s", parent, strerror(-r));
        if (r == 0 && (r = cg_write(dir, "cpuset.mems", mems, err, errlen)) == 0)
                r = cg_write(dir, "cpuset.cpus", cpus, err, errlen);
        free(cpus);
        free(mems);
        return r;
}

/* Have the kernel give each new cgroup below our subtree (dir) its parent's CPUs and memory
 * nodes as it makes it (cgroup.clone_children, which new children inherit): cpuset_inherit's
 * four reads and writes left each launch's mkdir, and no other shepherd can find a
 * department's cpuset made and still empty. Returns whether it does. */
static bool cpuset_clone(const char *dir) {
        char err[256];
        int r = cg_write(dir, "cgroup.clone_children", "1", err, sizeof(err));

        if (r < 0)
                log_debug("cgroup: %s: each new cpuset is filled by hand", err);
        return r == 0;
}

/* A cpuset with no CPUs or no memory nodes yet: no task can be put in it. */
static bool cpuset_empty(const char *dir) {
        char *cpus = NULL, *mems = NULL;
        bool empty = cg_read(dir, "cpuset.cpus", &cpus) < 0 || cg_read(dir, "cpuset.mems", &mems) < 0 ||
                     !cpus[strspn(cpus, " \n")] || !mems[strspn(mems, " \n")];

        free(cpus);
        free(mems);
        return empty;
}

static void remove_subtrees(v1_state *s, const bool *created) {
        for (int i = _V1_MAX - 1; i >= 0; i--) {
                int r;

                if (!s->dir[i] || (created && !created[i]) || is_dup(s, i))
                        continue;
                if ((r = cg_rmdir(s->dir[i])) < 0)
                        log_warning("cgroup=%s: cannot remove: %s", s->dir[i], strerror(-r));
        }
}

static void free_state(v1_state *s) {
        for (int i = 0; i < _V1_MAX; i++)
                free(s->dir[i]);
        free(s->leaf);
        free(s);
}

/* Move the agent into the cpu hierarchy's leaf, with the leaf's weight. On failure nothing
 * made is left. */
static int enter_leaf(v1_state *s, char *err, size_t errlen) {
        char *leaf = NULL;
        bool made = false;
        int r = asprintf(&leaf, "%s/%s", s->dir[V1_CPU], CG_AGENT_LEAF) < 0 ? -ENOMEM : 0;

        if (r < 0) {
                snprintf(err, errlen, "out of memory");
                return r;
        }
        r = cg_mkdir(leaf, true, &made, err, errlen);
        if (r == 0)
                r = cg_write_i64(leaf, "cpu.shares", (int64_t)cg_shares_v1(CG_AGENT_WEIGHT), err, errlen);
        if (r == 0)
                r = cg_move_self(leaf, err, errlen);
        if (r < 0 && made)
                (void)cg_rmdir(leaf);
        if (r < 0)
                free(leaf);
        else
                s->leaf = leaf;
        return r;
}

/* Back to the cpu cgroup the agent was started in (the subtree's parent), and the leaf removed:
 * the subtree can go then. */
static void leave_leaf(v1_state *s) {
        char own[PATH_MAX], err[512];
        int r;

        if (!s->leaf)
                return;
        snprintf(own, sizeof(own), "%s", s->dir[V1_CPU]);
        *strrchr(own, '/') = '\0';
        if ((r = cg_move_self(own, err, sizeof(err))) < 0)
                log_warning("cgroup=%s: cannot leave the agent's leaf: %s", s->leaf, err);
        else if ((r = cg_rmdir(s->leaf)) < 0)
                log_warning("cgroup=%s: cannot remove: %s", s->leaf, strerror(-r));
}

static int v1_open(cg_backend *cg, char *err, size_t errlen) {
        v1_state *s = calloc(1, sizeof(*s));
        bool created[_V1_MAX] = { false };
        int r = s ? 0 : -ENOMEM;

        cg->priv = s;
        for (int i = 0; r == 0 && i < _V1_MAX; i++) {
                r = subtree_dir(cg, i, &s->dir[i], err, errlen);
                if (r == -EOPNOTSUPP && v1_optional[i]) {
                        log_msg(LOG_NOTICE, "cgroup v1: %s: %s", err, v1_optional[i]);
                        r = 0;
                        continue;
                }
                if (r == 0 && !is_dup(s, i))
                        r = cg_mkdir(s->dir[i], true, &created[i], err, errlen);
                if (r == 0 && i == V1_MEMORY && created[i])
                        memory_use_hierarchy(s->dir[i]);
                if (r == 0 && i == V1_CPUSET && !is_dup(s, i) && (r = cpuset_inherit(s->dir[i], err, errlen)) == 0)
                        s->cpuset_clones = cpuset_clone(s->dir[i]);
        }
        /* The memory subtree stands for all: every agent has one. Losing it to another agent,
         * even one that came second to mkdir, leaves the subtree to that one. */
        if (r == 0 && (r = cg_lock_subtree(cg, s->dir[V1_MEMORY], err, errlen)) < 0)
                memset(created, 0, sizeof(created));
        if (r == 0 && !(cg->subtree = strdup(s->dir[V1_MEMORY])))
                r = -ENOMEM;
        if (r == 0 && (r = enter_leaf(s, err, errlen)) < 0) {
                free(cg->subtree);
                cg->subtree = NULL;
        }
        if (r < 0) {
                if (r == -ENOMEM)
                        snprintf(err, errlen, "out of memory");
                if (s) {
                        remove_subtrees(s, created);
                        free_state(s);
                }
                cg->priv = NULL;
        }
        return r;
}

/* Whether the devices.list text list still lets the cgroup's tasks at d. In the default mode
 * the list reads "a *:* rwm" whatever was denied, and a deny always holds. Below a cgroup that
 * allows listed devices only (a container's), the list names those, and a deny takes out an
 * entry of exactly d only: a range ("c 195:* rwm") stays, and d in it. */
static bool device_listed(const char *list, const cg_device *d) {
        if (strcmp(list, "a *:* rwm") == 0)
                return false;
        for (const char *p = list; p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
                char type, major[16], minor[16];

                if (sscanf(p, "%c %15[^:]:%15s", &type, major, minor) == 3 && (type == 'a' || type == d->type) &&
                    (strcmp(major, "*") == 0 || strtoul(major, NULL, 10) == d->major) &&
                    (strcmp(minor, "*") == 0 || strtoul(minor, NULL, 10) == d->minor))
                        return true;
        }
        return false;
}

/* Deny the job's devices in its devices cgroup dir, then check that each is denied indeed. */
static int deny_devices(const char *dir, const cg_limits *lim, char *err, size_t errlen) {
        char v[32], *list = NULL;
        int r = 0;

        for (size_t i = 0; r == 0 && i < lim->ndeny; i++) {
                snprintf(v, sizeof(v), "%c %" PRIu32 ":%" PRIu32 " rwm", lim->deny[i].type, lim->deny[i].major,
                         lim->deny[i].minor);
                r = cg_write(dir, "devices.deny", v, err, errlen);
        }
        if (r == 0 && (r = cg_read(dir, "devices.list", &list)) < 0)
                snprintf(err, errlen, "read %s/devices.list: %s", dir, strerror(-r));
        for (size_t i = 0; r == 0 && i < lim->ndeny; i++)
                if (device_listed(list, &lim->deny[i])) {
                        snprintf(err, errlen,
                                 "cgroup=%s: the devices cgroups above allow listed devices only, "
                                 "and a range of them still holds %c %" PRIu32 ":%" PRIu32 " after devices.deny",
                                 dir, lim->deny[i].type, lim->deny[i].major, lim->deny[i].minor);
                        r = -EPERM;
                }
        free(list);
        return r;
}

/* The limits of one controller; a cgroup made just now holds defaults for those left out. */
static int write_limits(int ctl, const char *dir, const cg_limits *lim, char *err, size_t errlen) {
        char v[32];
        int r = 0;

        if (ctl == V1_CPU && lim->mcpu > 0) {
                r = cg_write_i64(dir, "cpu.cfs_period_us", CG_CPU_PERIOD_US, err, errlen);
                if (r == 0)
                        r = cg_write_i64(dir, "cpu.cfs_quota_us", cg_cpu_quota_us(lim->mcpu), err, errlen);
        }
        if (ctl == V1_CPU && r == 0 && lim->cpu_weight > 0) {
                /* v2's weight 100 is v1's 1024 shares; the kernel accepts 2..262144. */
                uint64_t shares = lim->cpu_weight * 1024 / 100;

                snprintf(v, sizeof(v), "%" PRIu64, shares < 2 ? 2 : shares > 262144 ? 262144 : shares);
                r = cg_write(dir, "cpu.shares", v, err, errlen);
        }
        if (ctl == V1_MEMORY && lim->mem > 0) {
                snprintf(v, sizeof(v), "%" PRId64, lim->mem);
                /* limit first: memsw may never be below it. Equal values allow no swap. */
                r = cg_write(dir, "memory.limit_in_bytes", v, err, errlen);
                if (r == 0 && (r = cg_write(dir, "memory.memsw.limit_in_bytes", v, err, errlen)) == -ENOENT)
                        r = 0; /* no swap accounting on this host, so no swap to limit */
        }
        if (ctl == V1_MEMORY && r == 0 && lim->mem_high > 0)
                r = cg_write_i64(dir, "memory.soft_limit_in_bytes", lim->mem_high, err, errlen);
        if (ctl == V1_PIDS && lim->pids > 0)
                r = cg_write_i64(dir, "pids.max", lim->pids, err, errlen);
        if (ctl == V1_CPUSET && lim->cpus)
                r = cg_write(dir, "cpuset.cpus", lim->cpus, err, errlen);
        if (ctl == V1_DEVICES && lim->ndeny > 0)
                r = deny_devices(dir, lim, err, errlen);
        return r;
}

/* Remove the job's cgroup in every hierarchy (or those marked in only). First error wins. */
static int remove_job_dirs(cg_backend *cg, const char *job, const bool *only) {
        char path[PATH_MAX];
        int r = 0;

        for (int i = _V1_MAX - 1; i >= 0; i--) {
                int k;

                if (is_dup(state(cg), i) || (only && !only[i]))
                        continue;
                k = job_path(cg, i, job, path, sizeof(path));
                if (k == 0)
                        k = cg_rmdir(path);
                if (k < 0 && r == 0)
                        r = k;
        }
        return r;
}

static int v1_job_remove(cg_backend *cg, const char *job) { return remove_job_dirs(cg, job, NULL); }

/* mkdir rel (a job or department) in every hierarchy; made[i] says which this call made. */
static int mkdir_everywhere(cg_backend *cg, const char *rel, bool exist_ok, bool *made, char *err, size_t errlen) {
        char path[PATH_MAX];
        int r = 0;

        for (int i = 0; r == 0 && i < _V1_MAX; i++) {
                if (is_dup(state(cg), i))
                        continue;
                if ((r = job_path(cg, i, rel, path, sizeof(path))) < 0)
                        snprintf(err, errlen, "cgroup path too long: %s", rel);
                else
                        r = cg_mkdir(path, exist_ok, &made[i], err, errlen);
                /* Another job's shepherd may have made a department's cpuset and not yet
                 * filled it: an empty one is filled here too (the same values from the parent). */
                if (r == 0 && i == V1_CPUSET && !state(cg)->cpuset_clones && (made[i] || cpuset_empty(path)))
                        r = cpuset_inherit(path, err, errlen);
        }
        return r;
}

/* Whether the job's devices can be denied here, before anything is made for it. */
static int devices_check(cg_backend *cg, const char *job, const cg_limits *lim, char *err, size_t errlen) {
        int r = cgdev_check(job, lim->deny, lim->ndeny, err, errlen);

        if (r == 0 && lim->ndeny > 0 && !state(cg)->dir[V1_DEVICES]) {
                snprintf(err, errlen,
                         "cgroup v1: job %s may not open %zu devices, but no devices hierarchy is "
                         "mounted to keep it from them",
                         job, lim->ndeny);
                r = -EOPNOTSUPP;
        }
        return r;
}

/* The job's limits in each hierarchy of its cgroup. */
static int write_job_limits(cg_backend *cg, const char *job, const cg_limits *lim, char *err, size_t errlen) {
        char path[PATH_MAX];
        int r = 0;

        for (int i = 0; r == 0 && i < _V1_MAX; i++)
                if (state(cg)->dir[i] && (r = job_path(cg, i, job, path, sizeof(path))) == 0)
                        r = write_limits(i, path, lim, err, errlen);
        return r;
}

static int v1_job_create(cg_backend *cg, const char *job, const cg_limits *lim, char *err, size_t errlen) {
        bool made[_V1_MAX] = { false };
        int r = devices_check(cg, job, lim, err, errlen);

        if (r == 0)
                r = mkdir_everywhere(cg, job, false, made, err, errlen);
        if (r == 0)
                r = write_job_limits(cg, job, lim, err, errlen);
        /* Undo only what this call made: an existing cgroup (-EEXIST) is not ours to remove. */
        if (r < 0)
                (void)remove_job_dirs(cg, job, made);
        return r;
}

static int v1_spare_create(cg_backend *cg, const char *spare, char *err, size_t errlen) {
        bool made[_V1_MAX] = { false };
        int r = mkdir_everywhere(cg, spare, false, made, err, errlen);

        if (r < 0)
                (void)remove_job_dirs(cg, spare, made);
        return r;
}

/* spare's and job's paths in hierarchy i into from and to (PATH_MAX each). */
static int rename_paths(cg_backend *cg, int i, const char *spare, const char *job, char *from, char *to) {
        int r = job_path(cg, i, spare, from, PATH_MAX);

        return r < 0 ? r : job_path(cg, i, job, to, PATH_MAX);
}

/* All or nothing: a job's cgroup found in one hierarchy (a crash's leftover) puts the spare back
 * in the others. The paths are made again for that rather than kept: the launch's child calls
 * this on a small stack (launch_job_ahead). */
static int v1_job_from_spare(cg_backend *cg, const char *spare, const char *job, const cg_limits *lim, char *err,
                             size_t errlen) {
        char from[PATH_MAX], to[PATH_MAX];
        bool renamed[_V1_MAX] = { false };
        int r = devices_check(cg, job, lim, err, errlen);

        for (int i = 0; r == 0 && i < _V1_MAX; i++) {
                if (is_dup(state(cg), i))
                        continue;
                if ((r = rename_paths(cg, i, spare, job, from, to)) < 0)
                        snprintf(err, errlen, "cgroup path too long: %s", job);
                else if (rename(from, to) < 0) {
                        r = errno == ENOTEMPTY || errno == EEXIST ? -EEXIST : -EXDEV;
                        snprintf(err, errlen, "rename cgroup %s to %s: %s", from, to, strerror(errno));
                } else
                        renamed[i] = true;
        }
        for (int i = 0; r < 0 && i < _V1_MAX; i++)
                if (renamed[i] && rename_paths(cg, i, spare, job, from, to) == 0)
                        (void)rename(to, from);
        return r < 0 ? r : write_job_limits(cg, job, lim, err, errlen);
}

/* tasks, not cgroup.procs: the child that writes "0" there is single-threaded, so moving the
 * thread moves the process, and a thread moving itself takes no cgroup_threadgroup_rwsem for
 * writing (Debian 12's 6.1 and this host's 6.18), whose taking waits for an RCU grace period
 * whenever no other writer has just taken it. Launches 50 ms apart (launch_floor, this v1
 * host): 9.7 ms p50 into a memory cgroup through cgroup.procs, 0.55 ms through tasks; 13 to
 * 17 ms into a job's seven hierarchies, 1.25 ms; in the 6.1 guest (a v1 freezer hierarchy,
 * TCG) 17 to 18 ms against 0.2. Back to back the two are the same (0.6 to 0.7 ms here). */
static int v1_job_procs_open(cg_backend *cg, const char *job, int *fds, char *err, size_t errlen) {
        char path[PATH_MAX];
        int n = 0, r = 0;

        for (int i = 0; r == 0 && i < _V1_MAX; i++) {
                if (is_dup(state(cg), i))
                        continue;
                if ((r = job_path(cg, i, job, path, sizeof(path))) == 0 && (r = cg_open_write(path, "tasks")) >= 0) {
                        fds[n++] = r;
                        r = 0;
                } else
                        snprintf(err, errlen, "open tasks of %s in the %s hierarchy: %s", job, v1_names[i],
                                 strerror(-r));
        }
        if (r < 0)
                while (n > 0)
                        close(fds[--n]);
        return r < 0 ? r : n;
}

static int v1_job_usage(cg_backend *cg, const char *job, cg_usage *out) {
        char cpu[PATH_MAX], mem[PATH_MAX];
        uint64_t ns = 0;
        int r = job_path(cg, V1_CPUACCT, job, cpu, sizeof(cpu));

        if (r == 0)
                r = job_path(cg, V1_MEMORY, job, mem, sizeof(mem));
        if (r == 0)
                r = cg_read_u64(cpu, "cpuacct.usage", &ns);
        out->cpu_usec = ns / 1000;
        if (r == 0)
                r = cg_read_u64(mem, "memory.usage_in_bytes", &out->mem_current);
        if (r == 0)
                r = cg_read_u64(mem, "memory.max_usage_in_bytes", &out->mem_peak);
        if (r == 0)
                r = cg_read_key(mem, "memory.oom_control", "oom_kill", &out->oom_kills);
        return r;
}

static int v1_job_dir(cg_backend *cg, const char *job, char *buf, size_t len) {
        return job_path(cg, V1_FREEZER, job, buf, len);
}

static int v1_job_freeze(cg_backend *cg, const char *job, bool frozen, int64_t deadline_ms) {
        char dir[PATH_MAX];
        const char *want = frozen ? "FROZEN" : "THAWED";
        int r = v1_job_dir(cg, job, dir, sizeof(dir));

        if (r == 0)
                r = cg_write(dir, "freezer.state", want, NULL, 0);
        if (r < 0 || !frozen)
                return r;
        /* The write starts freezing; the state reads FREEZING until every task has stopped. */
        for (;;) {
                char *st = NULL;
                bool done;

                if ((r = cg_read(dir, "freezer.state", &st)) < 0)
                        return r;
                done = strcmp(st, want) == 0;
                free(st);
                if (done)
                        return 0;
                if (clock_mono_ms() >= deadline_ms)
                        return -ETIMEDOUT;
                cg_sleep_ms(1);
        }
}

/* The job (or with depts, department) cgroups of every hierarchy: a crash may have left a job's
 * cgroup in some only, and a prune a department (v1_dept_remove). A department is listed once
 * per hierarchy it is in, each time after those below it. */
static int list_union(cg_backend *cg, bool depts, char ***out) {
        int r = 0;

        for (int i = 0; r == 0 && i < _V1_MAX; i++)
                if (!is_dup(state(cg), i))
                        r = depts ? cg_add_dept_dirs(state(cg)->dir[i], out)
                                  : cg_add_job_dirs(state(cg)->dir[i], CG_AGENT_LEAF, out);
        return r;
}

static int v1_list_jobs(cg_backend *cg, char ***out) { return list_union(cg, false, out); }

static int v1_list_depts(cg_backend *cg, char ***out) { return list_union(cg, true, out); }

/* A department's cgroup in every hierarchy; its CPU weight is cpu.shares. A department made by
 * this call in some hierarchies only is left for dept_remove (it is empty). */
static int v1_dept_create(cg_backend *cg, const char *dept, double w, char *err, size_t errlen) {
        char path[PATH_MAX];
        bool made[_V1_MAX];
        int r = mkdir_everywhere(cg, dept, true, made, err, errlen);

        if (r == 0 && (r = job_path(cg, V1_CPU, dept, path, sizeof(path))) == 0)
                r = cg_write_i64(path, "cpu.shares", (int64_t)cg_shares_v1(w), err, errlen);
        return r;
}

/* A department busy in its first hierarchy is in use: the others are not tried. Once removed
 * from one, it goes from every other it can: a hierarchy that refused (a child cgroup of the
 * cpu controller still going, under load) no longer keeps those after it too. */
static int v1_dept_remove(cg_backend *cg, const char *dept) {
        char path[PATH_MAX];
        bool removed = false;
        int r = 0;

        for (int i = _V1_MAX - 1; i >= 0; i--) {
                if (is_dup(state(cg), i))
                        continue;
                int e = job_path(cg, i, dept, path, sizeof(path));
                if (e == 0 && rmdir(path) < 0 && errno != ENOENT)
                        e = -errno;
                removed |= e == 0;
                if (e < 0 && r == 0)
                        r = e;
                if (r < 0 && !removed)
                        break; /* busy where it was tried first: in use */
        }
        return r;
}

static int v1_job_cpus(cg_backend *cg, const char *job, char **cpus, int64_t *mcpu) {
        char path[PATH_MAX];
        int64_t quota = 0;
        char *text = NULL;
        int r = is_dup(state(cg), V1_CPUSET) ? -EOPNOTSUPP : job_path(cg, V1_CPUSET, job, path, sizeof(path));
        if (r == 0 && (r = cg_read(path, "cpuset.cpus", cpus)) == 0 &&
            (r = job_path(cg, V1_CPU, job, path, sizeof(path))) == 0 &&
            (r = cg_read(path, "cpu.cfs_quota_us", &text)) == 0)
                quota = strtoll(text, NULL, 10);
        free(text);
        *mcpu = quota > 0 ? quota * 1000 / CG_CPU_PERIOD_US : 0;
        return r;
}

static int v1_job_set_cpus(cg_backend *cg, const char *job, const char *cpus, char *err, size_t errlen) {
        char path[PATH_MAX];
        int r = is_dup(state(cg), V1_CPUSET) ? -EOPNOTSUPP : job_path(cg, V1_CPUSET, job, path, sizeof(path));
        return r < 0 ? r : cg_write(path, "cpuset.cpus", cpus, err, errlen);
}

static void v1_close(cg_backend *cg, bool remove_subtree) {
        if (remove_subtree) {
                leave_leaf(state(cg));
                remove_subtrees(state(cg), NULL);
        }
        free_state(state(cg));
        cg->priv = NULL;
}

const cg_ops cg_v1_ops = {
        .open = v1_open,
        .job_create = v1_job_create,
        .spare_create = v1_spare_create,
        .job_from_spare = v1_job_from_spare,
        .job_procs_open = v1_job_procs_open,
        .job_usage = v1_job_usage,
        .job_dir = v1_job_dir,
        .job_freeze = v1_job_freeze,
        .job_kill = cg_kill_frozen, /* v1 has no cgroup.kill */
        .job_remove = v1_job_remove,
        .list_jobs = v1_list_jobs,
        .list_depts = v1_list_depts,
        .dept_create = v1_dept_create,
        .dept_remove = v1_dept_remove,
        .close = v1_close,
        .job_cpus = v1_job_cpus,
        .job_set_cpus = v1_job_set_cpus,
};
