/* spawn.h - start a child that shares our memory until its exec, as posix_spawn does, forked
 * straight into a cgroup where the kernel can.
 *
 * glibc's clone() starts such a child but cannot place it in a cgroup; clone3() can
 * (CLONE_INTO_CGROUP, cgroup v2, Linux 5.7), but glibc exports no wrapper of it, and a raw
 * syscall(SYS_clone3) whose child shares our memory would return into the parent's frames on a
 * stack that has none. spawn.c carries that small trampoline, for x86-64. */
#pragma once
#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>

/* Run fn(arg) in a child that shares our memory, on a stack of stack_size bytes of its own,
 * with every signal blocked across the start (fn's to unblock) and us suspended until the
 * child has exec'd or exited (CLONE_VM | CLONE_VFORK). fn must not return: it execs or _exits.
 * cg_fd >= 0: the child starts in the cgroup of that v2 directory (clone3 with
 * CLONE_INTO_CGROUP); -1: in ours. Returns the child's pid, or -1 with errno; with cg_fd >= 0,
 * ENOSYS where this build has no clone3 trampoline or the kernel no clone3 (or a seccomp
 * filter hides it), E2BIG or EINVAL from a kernel before 5.7, EPERM from seccomp: then the
 * caller starts the child with cg_fd -1 and moves it in another way. */
pid_t spawn_sharing_memory(int cg_fd, size_t stack_size, int (*fn)(void *), void *arg);
/* Whether errno, after spawn_sharing_memory with a cgroup failed, says the kernel refuses
 * CLONE_INTO_CGROUP rather than that the start failed. */
bool spawn_into_cgroup_refused(int error);
/* Run fn(arg) in a child that shares our memory, as spawn_sharing_memory with cg_fd -1, for a
 * child that waits long before its exec: instead of vfork's suspension, which a tracer cannot
 * stop (strace, detaching from us, waited for ever, and the child with it), we wait in read(2)
 * of wait_fd until end of file, every signal blocked and no memory of the child's touched.
 * wait_fd and child_end are the ends of a close-on-exec pipe; child_end, closed in us once the
 * child has its copy, is then the child's alone, so that its exec or its exit (which leaves our
 * memory first) ends the wait. What the child wrote there goes into buf (len bytes; *n says
 * how many). The child's stack is left mapped for the caller to unmap (stack_size bytes at
 * *stack_left; NULL: none to unmap, or the child may still be on it), after what it has to tell
 * first: its munmap's TLB shootdown, across the CPUs the child ran on, took 0.2 ms. Returns the
 * child's pid, to reap if it did not exec, or -1 with errno (child_end closed either way). */
pid_t spawn_sharing_memory_waiting(size_t stack_size, int (*fn)(void *), void *arg, int child_end, int wait_fd,
                                   void *buf, size_t len, size_t *n, void **stack_left);
