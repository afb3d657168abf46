/* cgroup-internal.h - what cgroup.c shares with the per-mode implementations (crun-style: one
 * file per cgroup mode behind the ops table below, chosen once by cg_open). */
#pragma once
#include "cgroup.h"
#include <stdbool.h>
#include <stdint.h>

/* The name of the leaf the agent moves itself into (v2; v1: in the cpu hierarchy); never a job name. */
#define CG_AGENT_LEAF "agent"
/* The leaf's CPU weight relative to a job's or a department's (1.0): the highest v2 allows. A
 * shepherd woken at its job's exec, and the loop woken by its report, otherwise waited for the
 * CPU behind the job they started, as long as CFS let that job run before it preempted
 * (the wake-up did not): 0.1 to 0.4 ms for /bin/true on this v1 host, up to 11 ms in the TCG
 * guest (ftrace, docs/benchmarks.md "The agent's leaf before jobs"). The agent's own CPU time is
 * small, so jobs lose little of theirs; a job spinning on every core no longer slows the loop. */
#define CG_AGENT_WEIGHT 100.0

typedef struct cg_ops {
        /* Find the hierarchies and the own cgroup, create the subtree; set cg->subtree and
         * cg->priv. On failure nothing created is left behind. */
        int (*open)(cg_backend *cg, char *err, size_t errlen);
        int (*job_create)(cg_backend *cg, const char *job, const cg_limits *lim, char *err, size_t errlen);
        /* Make the spare cgroup spare, no limits written (NULL: cgroups cannot be renamed). */
        int (*spare_create)(cg_backend *cg, const char *spare, char *err, size_t errlen);
        /* Rename spare to its sibling job and write job's limits, as cg_job_from_spare. */
        int (*job_from_spare)(cg_backend *cg, const char *spare, const char *job, const cg_limits *lim, char *err,
                              size_t errlen);
        /* Open the file of the job's cgroup in every hierarchy that a single-threaded process
         * moves itself in by into fds (at most CG_MAX_HIERARCHIES): their number, or -errno
         * with err. */
        int (*job_procs_open)(cg_backend *cg, const char *job, int *fds, char *err, size_t errlen);
        int (*job_usage)(cg_backend *cg, const char *job, cg_usage *out);
        /* Write the job's directory whose cgroup.procs lists all of its tasks into buf. */
        int (*job_dir)(cg_backend *cg, const char *job, char *buf, size_t len);
        /* Freeze (and wait until frozen, at most until deadline_ms) or thaw the job's cgroup. */
        int (*job_freeze)(cg_backend *cg, const char *job, bool frozen, int64_t deadline_ms);
        /* Kill every task; 0 once empty, -ETIMEDOUT at deadline_ms (CLOCK_MONOTONIC). */
        int (*job_kill)(cg_backend *cg, const char *job, int64_t deadline_ms);
        /* Remove the (empty) job cgroup in every hierarchy; missing is success. */
        int (*job_remove)(cg_backend *cg, const char *job);
        int (*list_jobs)(cg_backend *cg, char ***out);
        /* Add the department cgroups of the subtree to *out (cg_add_dept_dirs), in every hierarchy. */
        int (*list_depts)(cg_backend *cg, char ***out);
        /* Create (exist ok) the department cgroup dept ("dept-a/dept-b", its parent made already)
         * with CPU weight w relative to its siblings (1.0 = default), so jobs may go below it. */
        int (*dept_create)(cg_backend *cg, const char *dept, double w, char *err, size_t errlen);
        /* Remove the department cgroup dept in every hierarchy if it is empty; -EBUSY if not. */
        int (*dept_remove)(cg_backend *cg, const char *dept);
        /* Remove the subtree when asked (its jobs are gone already) and free cg->priv. */
        void (*close)(cg_backend *cg, bool remove_subtree);
        /* The job's cpuset.cpus (malloc'ed) and the CPUs its quota allows, in millicores (0: no
         * quota). -EOPNOTSUPP without the cpuset controller. */
        int (*job_cpus)(cg_backend *cg, const char *job, char **cpus, int64_t *mcpu);
        /* Write the job's cpuset.cpus. -EOPNOTSUPP without the cpuset controller. */
        int (*job_set_cpus)(cg_backend *cg, const char *job, const char *cpus, char *err, size_t errlen);
        /* Drop the implementation's state about the job (NULL: it keeps none). job_remove
         * leaves that state alone, since it may run on a thread beside the loop. */
        void (*job_forget)(cg_backend *cg, const char *job);
} cg_ops;

struct cg_backend {
        cg_mode mode;
        const cg_ops *ops;
        char *dirname; /* "colony-<agent>" */
        char *subtree; /* set by ops->open: the v2 subtree, or v1's memory subtree */
        void *priv;    /* the implementation's state */
        int lock_fd;   /* the subtree's directory, flock'ed while the agent holds it; -1 before */
};

extern const cg_ops cg_v1_ops;
extern const cg_ops cg_v2_ops;

/* CFS period for every job; the quota scales with it (v1 cpu.cfs_*, v2 cpu.max). */
#define CG_CPU_PERIOD_US 100000
/* The CFS quota in microseconds per period for mcpu milli-cores (> 0). */
int64_t cg_cpu_quota_us(int64_t mcpu);

/* Sleep ms milliseconds (restarting after signals). */
void cg_sleep_ms(int64_t ms);
/* True when word is one of the items of list, which are separated by any char of seps. */
bool cg_list_has(const char *list, const char *word, const char *seps);

/* The first mount of fstype in /proc/self/mountinfo whose super options include option (if
 * not NULL) and whose mount point is at (if not NULL). *mnt and *root (the mounted cgroup,
 * "/" unless bind-mounted) are malloc'ed. Returns 0, -ENOENT, or -errno. */
int cg_mount_find(const char *fstype, const char *option, const char *at, char **mnt, char **root);
/* The directory of our own cgroup for controller (NULL: the v2 entry) below mount mnt whose
 * root is root, from /proc/self/cgroup. *out is malloc'ed. Returns 0, -ENOENT when we have no
 * cgroup for it or it is outside the mount, or -errno. */
int cg_own_dir(const char *controller, const char *mnt, const char *root, char **out);
/* cg_own_usable on v2: 1 in the root, or alone in a delegated cgroup; else 0. */
int cg_v2_own_usable(char **own, char *err, size_t errlen);
/* dir + "/" + name into buf. Returns 0 or -ENAMETOOLONG. */
int cg_path(char *buf, size_t len, const char *dir, const char *name);

/* Write value to dir/file in one write(2), never creating it (a missing attribute is -ENOENT).
 * On failure err says "write VALUE to PATH: REASON". Returns 0 or -errno. */
int cg_write(const char *dir, const char *file, const char *value, char *err, size_t errlen);
/* dir/file opened write-only and close-on-exec: the descriptor, or -errno. */
int cg_open_write(const char *dir, const char *file);
/* cg_write of a number. */
int cg_write_i64(const char *dir, const char *file, int64_t value, char *err, size_t errlen);
/* Move this process, every thread of it, into dir (its cgroup.procs). Returns 0 or -errno with err. */
int cg_move_self(const char *dir, char *err, size_t errlen);
/* Read dir/file (small, trailing whitespace removed) into malloc'ed *out. Returns 0 or -errno. */
int cg_read(const char *dir, const char *file, char **out);
/* Read dir/file as one unsigned number. Returns 0 or -errno (-EINVAL if not a number). */
int cg_read_u64(const char *dir, const char *file, uint64_t *out);
/* Read the value of "key value" line key from dir/file. Returns 0, -ENOENT if absent, -errno. */
int cg_read_key(const char *dir, const char *file, const char *key, uint64_t *out);
/* Read dir/cgroup.procs. *pids is malloc'ed (may be NULL when *n is 0). Returns 0 or -errno. */
int cg_read_procs(const char *dir, pid_t **pids, size_t *n);

/* mkdir path 0755; an existing directory is success when exist_ok, else -EEXIST. *created
 * (if not NULL) says whether this call made it. err names the path. Returns 0 or -errno. */
int cg_mkdir(const char *path, bool exist_ok, bool *created, char *err, size_t errlen);
/* Take the subtree dir for cg alone (flock) into cg->lock_fd, before anything in it is touched:
 * two agents of one name in one cgroup would remove each other's jobs. A lock held by another
 * process is waited for up to 2 s (a dead agent's newest shepherd may hold it an instant).
 * Returns 0, -EBUSY when another process holds it still, or -errno; err says which. */
int cg_lock_subtree(cg_backend *cg, const char *dir, char *err, size_t errlen);
/* rmdir path, retrying briefly while the kernel still holds exiting tasks. Missing is success.
 * Returns 0 or -errno. */
int cg_rmdir(const char *path);
/* Add the job cgroups below dir (except skip, if not NULL, at its top) that *list lacks to
 * the NULL-terminated *list (which may be NULL), as paths relative to dir: every directory
 * but a department's (CG_DEPT_PREFIX), whose jobs are added instead. A missing dir adds
 * nothing. Returns 0 or -errno. */
int cg_add_job_dirs(const char *dir, const char *skip, char ***list);
/* Add the department cgroups below dir to *list (as cg_add_job_dirs), each after those below it.
 * Returns 0 or -errno. */
int cg_add_dept_dirs(const char *dir, char ***list);
/* What every department cgroup's name starts with. */
#define CG_DEPT_PREFIX "dept-"
/* A relative weight (1.0 = default) on v2's cpu.weight scale (1..10000, default 100) and on
 * v1's cpu.shares scale (2..262144, default 1024). */
uint64_t cg_weight_v2(double w);
uint64_t cg_shares_v1(double w);

/* Kill a job the v1 way, which no task escapes by forking: freeze, SIGKILL every task, thaw,
 * repeat until the cgroup is empty (0) or deadline_ms (-ETIMEDOUT). */
int cg_kill_frozen(cg_backend *cg, const char *job, int64_t deadline_ms);
/* Poll until the job's cgroup is empty (0) or deadline_ms (-ETIMEDOUT). */
int cg_wait_empty(cg_backend *cg, const char *job, int64_t deadline_ms);
