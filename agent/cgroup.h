/* cgroup.h - one interface over the host's cgroup mode; cgroup-v1.c and cgroup-v2.c implement it.
 *
 * colony only ever touches cgroups below the cgroup the agent was started in:
 *
 *   <own cgroup>/colony-<agent>/                       the agent's subtree (created by cg_open)
 *   <own cgroup>/colony-<agent>/job-<id>/              a job of no department, with its limits
 *   <own cgroup>/colony-<agent>/dept-<d>/dept-<e>/     department d/e, with its CPU weight
 *   <own cgroup>/colony-<agent>/dept-<d>/dept-<e>/job-<id>/   a job of department d/e
 *   <own cgroup>/colony-<agent>/[dept-.../]spare-<pid>/         v1: made by standby shepherd
 *                          <pid> ahead of its job, whose cgroup it becomes (cg_job_from_spare)
 *
 * A department's cgroups share contended CPU among its jobs, and the departments share it by
 * their weights, level by level, as the kernel does for any cgroup tree. The prefix keeps a
 * department's name from ever meaning something else (a job, or the v2 agent leaf).
 * On v1 the own cgroup is read per controller from /proc/self/cgroup (cpu, cpuacct, memory,
 * pids, freezer; cpuset and devices where mounted), so the subtree exists once per hierarchy. On
 * v2 it is one directory. The own cgroup itself is never written to. A job's cgroup refuses the
 * device nodes of cg_limits.deny before its first task runs (v1 devices.deny, v2 a
 * BPF_CGROUP_DEVICE program: cgdev.h) and leaves every other device as the own cgroup has it. Every function returns 0
 * or a negative errno and, where it takes err, a one-line reason naming the cgroup path. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include "psi.h"
#include <sys/types.h>

typedef struct cg_backend cg_backend;

typedef enum cg_mode { CG_MODE_V1, CG_MODE_V2 } cg_mode;

/* A device node, as the kernel's device controls name it. */
typedef struct cg_device {
        char type; /* 'c' (character) or 'b' (block) */
        uint32_t major, minor;
} cg_device;

typedef struct cg_limits {
        int64_t mcpu;          /* CPU bandwidth in milli-cores; 0 = unlimited */
        int64_t mem;           /* hard memory limit in bytes (swap not allowed beyond it); 0 = none */
        int64_t mem_high;      /* soft limit: above it the kernel reclaims hard (v2 memory.high, v1
                                * memory.soft_limit_in_bytes, only under host pressure); 0 = none */
        int64_t pids;          /* max tasks; 0 = unlimited */
        uint64_t cpu_weight;   /* 1..10000 (v2 cpu.weight scale, default 100); 0 = leave default */
        const char *cpus;      /* the job's cores, a cpuset list ("0-1,3"); NULL = the parent's */
        const cg_device *deny; /* device nodes the job may not open (the GPUs of other jobs): v1 */
        size_t ndeny;          /* devices.deny, v2 a BPF_CGROUP_DEVICE program; others stay open */
} cg_limits;

typedef struct cg_usage {
        uint64_t cpu_usec;             /* CPU time of every task ever in the cgroup */
        uint64_t mem_current;          /* bytes charged now */
        uint64_t mem_peak;             /* highest bytes charged */
        uint64_t oom_kills;            /* tasks killed by the OOM killer inside the cgroup */
        uint64_t io_rbytes, io_wbytes; /* block I/O (v2 io.stat, summed over devices; else 0) */
        psi_stats psi;                 /* the cgroup's pressure (v2 with PSI; else not known) */
} cg_usage;

/* Find the mode the host mounts (v2 when /sys/fs/cgroup is cgroup2 with cpu and memory
 * available to us, else v1), find our own cgroup, and create the subtree colony-<agent_name>
 * below it. Caller owns *out (cg_close). */
int cg_open(const char *agent_name, cg_backend **out, char *err, size_t errlen);
/* The agent's leaf, where it runs, relative to the cgroup it was started in:
 * "/colony-<agent_name>/agent" into buf. Returns 0 or -ENAMETOOLONG. */
int cg_agent_leaf(const char *agent_name, char *buf, size_t len);
/* Whether cg_open could build the subtree in the cgroup we run in: always on v1; on v2 in the
 * root cgroup, or in a cgroup delegated to us (trusted.delegate) that holds no other task.
 * Returns 1, 0 with *own (malloc'ed, or NULL on v1) naming that cgroup, or -errno with err. */
int cg_own_usable(char **own, char *err, size_t errlen);
/* Which implementation is in use. */
cg_mode cg_get_mode(const cg_backend *cg);
/* The subtree's path (v2) or the memory hierarchy's subtree path (v1), for logs and docs. */
const char *cg_subtree_path(const cg_backend *cg);

/* The cgroup name of job id in department dept ("physics/astro", or NULL for none) into buf:
 * "dept-physics/dept-astro/job-<id>". Returns 0, -EINVAL for a bad department name
 * (components of [A-Za-z0-9_.-], not "." or ".."), or -ENAMETOOLONG. */
int cg_job_name(const char *dept, uint64_t id, char *buf, size_t len);
/* Create the cgroups of department dept down to its last level (existing ones are kept) and
 * give level i the CPU weight weights[i] relative to its siblings (1.0: the default share of a
 * job or department; n must be the number of levels). Returns 0 or -errno with err set. */
int cg_dept_prepare(cg_backend *cg, const char *dept, const double *weights, size_t n, char *err, size_t errlen);
/* Give the levels of dept whose cgroups exist here the weights (as cg_dept_prepare), creating
 * none: a department with no job on this host gets its weight with its next one. Returns 0 or
 * -errno with err set. */
int cg_dept_reweight(cg_backend *cg, const char *dept, const double *weights, size_t n, char *err, size_t errlen);

/* Create the job's cgroup (in every hierarchy on v1) and write its limits. An existing cgroup
 * of that name is an error (-EEXIST). job is a name from cg_job_name, whose department (if
 * any) cg_dept_prepare made. */
int cg_job_create(cg_backend *cg, const char *job, const cg_limits *lim, char *err, size_t errlen);
/* The spare cgroup that process pid makes ahead of a job, beside the cgroup beside (a job's, as
 * cg_job_name gives it): "dept-a/job-7" gives "dept-a/spare-<pid>", "job-7" "spare-<pid>". Into
 * buf; returns 0, or -ENAMETOOLONG. */
int cg_spare_name(const char *beside, pid_t pid, char *buf, size_t len);
/* Whether name (from cg_list_jobs) is a spare cgroup, which no job's record ever names. */
bool cg_is_spare(const char *name);
/* Make spare (cg_spare_name) a cgroup in every hierarchy, no limits written, in its department's
 * cgroup, which must exist: a job's cgroup made before the job came, which cg_job_from_spare
 * gives to it. Only where a cgroup can be renamed: -EOPNOTSUPP on v2. Returns 0 or -errno with
 * err (nothing left made). */
int cg_spare_create(cg_backend *cg, const char *spare, char *err, size_t errlen);
/* Make spare the job's cgroup: rename it to job in every hierarchy, then write the job's limits
 * as cg_job_create does. -EEXIST when job's cgroup exists; -EXDEV when spare cannot become it
 * (not job's sibling, or a rename failed): make the job's anew. On these spare is left as it
 * was; a failure after the rename leaves the cgroup named job (the tasks in it are the
 * caller's). Returns 0 or -errno with err. */
int cg_job_from_spare(cg_backend *cg, const char *spare, const char *job, const cg_limits *lim, char *err,
                      size_t errlen);
/* The most hierarchies a job's cgroup spans (one per v1 controller colony uses). */
#define CG_MAX_HIERARCHIES 8
/* Open the file of the job's cgroup in every hierarchy (close-on-exec) into fds, which holds
 * CG_MAX_HIERARCHIES, that a single-threaded process writing "0" to each moves itself in by
 * (v1 tasks, v2 cgroup.procs). Returns their number, or -errno with err. */
int cg_job_procs_open(cg_backend *cg, const char *job, int *fds, char *err, size_t errlen);
/* The job's cgroup directory opened (O_CLOEXEC) for clone3's CLONE_INTO_CGROUP: the fd,
 * -EOPNOTSUPP on v1 (a task is in one cgroup per hierarchy there), or -errno. */
int cg_job_open(cg_backend *cg, const char *job);
/* Read the job's usage counters. */
int cg_job_usage(cg_backend *cg, const char *job, cg_usage *out);
/* True when no task is left in the job's cgroup. Returns 1, 0, or -errno. */
int cg_job_is_empty(cg_backend *cg, const char *job);
/* Send sig to every task in the job's cgroup. */
int cg_job_signal(cg_backend *cg, const char *job, int sig);
/* Kill every task in the job's cgroup so that none can escape by forking (v2: cgroup.kill; v1:
 * freeze, SIGKILL each task, thaw, repeat). Returns once the cgroup is empty, or -ETIMEDOUT
 * after timeout_ms. With timeout_ms 0 it kills one round and waits for nothing: 0 when the
 * cgroup is empty then, else -ETIMEDOUT (cgkill.h calls it so, a round per turn). */
int cg_job_kill(cg_backend *cg, const char *job, int timeout_ms);
/* Remove the job's cgroup everywhere, then its department's cgroups that are left empty.
 * -EBUSY if tasks remain. A missing cgroup is success. */
int cg_job_remove(cg_backend *cg, const char *job);
/* cg_job_remove without the emptiness check (rmdir says -EBUSY itself, after a retry of up to
 * 0.5 s while killed tasks leave): system calls only, no allocation and no logging, and no state
 * of the backend changed, so a thread beside the agent's loop may call it (jobsync.h). */
int cg_job_rmdir(cg_backend *cg, const char *job);
/* Drop what the backend keeps about the job (v2: its peak memory), once its usage was read for
 * the last time; on the loop, which reads the usage. */
void cg_job_forget(cg_backend *cg, const char *job);
/* Names of the job cgroups present in the subtree, departments' included (for re-adoption and
 * cleanup); NULL-terminated, free with strv_free. */
int cg_list_jobs(cg_backend *cg, char ***out);
/* The job's cores (cpuset.cpus, malloc'ed into *cpus) and its CPU quota in millicores (0: none),
 * as a restarted agent finds them. Returns 0, -EOPNOTSUPP without the cpuset controller, or
 * -errno. */
int cg_job_cpus(cg_backend *cg, const char *job, char **cpus, int64_t *mcpu);
/* Move the job to the cores of cpus (a cpuset list), its tasks with it. Returns 0, -EOPNOTSUPP
 * without the cpuset controller, or -errno with err set (err may be NULL). System calls only,
 * as cg_job_rmdir: the sync thread calls it. */
int cg_job_set_cpus(cg_backend *cg, const char *job, const char *cpus, char *err, size_t errlen);
/* Release the backend. When remove_subtree, kill and remove every job cgroup and the subtree. */
void cg_close(cg_backend *cg, bool remove_subtree);
