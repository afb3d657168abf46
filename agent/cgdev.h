/* cgdev.h - keeping a job from device nodes (cg_limits.deny, the GPUs it was not given): the
 * check both cgroup modes make first, and v2's BPF_CGROUP_DEVICE program (cgdev-bpf.c). v1 needs
 * no program: cgroup-v1.c writes the job cgroup's devices.deny. */
#pragma once
#include "cgroup.h"

#include <stddef.h>

/* Check the n devices of deny before anything is made: type 'c' or 'b', major below 2^12 and
 * minor below 2^20 (the kernel's dev_t). Returns 0, or -EINVAL with err naming job and the first
 * bad device. */
int cgdev_check(const char *job, const cg_device *deny, size_t n, char *err, size_t errlen);
/* Attach to the cgroup directory dir a BPF_CGROUP_DEVICE program that refuses any access to the
 * n devices of deny and allows every other, run beside the programs of the cgroups above
 * (BPF_F_ALLOW_MULTI: all must allow). The cgroup holds the program; its rmdir frees it. Returns
 * 0 or -errno with err naming dir. */
int cgdev_bpf_deny(const char *dir, const cg_device *deny, size_t n, char *err, size_t errlen);
