/* spawn.c - start a child sharing our memory, into a cgroup where the kernel can (spawn.h).
 *
 * Forking the job's process out of the shepherd copied the page tables of a process of 110
 * mappings (the agent's, which the shepherd is a fork of) only for the exec to tear them down;
 * on v1 colony stopped doing so in 9b7c094, and this gives v2 the same with clone3 placing the
 * child in its cgroup. */
#include "spawn.h"

#include <errno.h>
#include <linux/sched.h>
#include <sched.h>
#include <signal.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#if defined(__x86_64__)
/* clone3(args, size) whose child, on the stack args gives it, calls fn(arg) and exits with
 * its result; the parent gets the system call's return: the pid, or -errno. fn and arg ride
 * in rdx and r8, which the syscall instruction leaves alone (it clobbers rcx and r11). */
long colony_clone3_call(struct clone_args *args, size_t size, int (*fn)(void *), void *arg)
        __attribute__((visibility("hidden")));
__asm__(".text\n"
        ".globl colony_clone3_call\n"
        ".hidden colony_clone3_call\n"
        ".type colony_clone3_call, @function\n"
        "colony_clone3_call:\n"
        "        mov %rcx, %r8\n"
        "        mov $435, %eax\n" /* __NR_clone3 */
        "        syscall\n"
        "        test %rax, %rax\n"
        "        jz 1f\n"
        "        ret\n"
        "1:      xor %ebp, %ebp\n" /* the child: the outermost frame */
        "        and $-16, %rsp\n"
        "        mov %r8, %rdi\n"
        "        call *%rdx\n"
        "        mov %eax, %edi\n"
        "        mov $60, %eax\n" /* __NR_exit */
        "        syscall\n"
        "        hlt\n"
        ".size colony_clone3_call, .-colony_clone3_call\n");
_Static_assert(SYS_clone3 == 435 && SYS_exit == 60, "x86-64 system call numbers");

static pid_t clone3_into(int cg_fd, void *stack, size_t size, int (*fn)(void *), void *arg) {
        struct clone_args args = { .flags = CLONE_VM | CLONE_VFORK | CLONE_INTO_CGROUP,
                                   .exit_signal = SIGCHLD,
                                   .stack = (uint64_t)(uintptr_t)stack,
                                   .stack_size = size,
                                   .cgroup = (uint64_t)cg_fd };
        long r = colony_clone3_call(&args, sizeof(args), fn, arg);

        if (r < 0) {
                errno = (int)-r;
                return -1;
        }
        return (pid_t)r;
}
#else
static pid_t clone3_into(int cg_fd, void *stack, size_t size, int (*fn)(void *), void *arg) {
        (void)cg_fd, (void)stack, (void)size, (void)fn, (void)arg;
        errno = ENOSYS;
        return -1;
}
#endif

bool spawn_into_cgroup_refused(int error) {
        return error == ENOSYS || error == E2BIG || error == EINVAL || error == EPERM;
}

pid_t spawn_sharing_memory(int cg_fd, size_t stack_size, int (*fn)(void *), void *arg) {
        void *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        sigset_t all, old;
        pid_t pid;
        int e;

        if (stack == MAP_FAILED)
                return -1;
        /* No handler of ours may run on the child's stack, nor in the child at all. */
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, &old);
        if (cg_fd >= 0)
                pid = clone3_into(cg_fd, stack, stack_size, fn, arg);
        else
                pid = clone(fn, (char *)stack + stack_size, CLONE_VM | CLONE_VFORK | SIGCHLD, arg);
        e = errno;
        sigprocmask(SIG_SETMASK, &old, NULL);
        munmap(stack, stack_size);
        errno = e;
        return pid;
}

pid_t spawn_sharing_memory_waiting(size_t stack_size, int (*fn)(void *), void *arg, int child_end, int wait_fd,
                                   void *buf, size_t len, size_t *n, void **stack_left) {
        void *stack = mmap(NULL, stack_size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK, -1, 0);
        sigset_t all, old;
        pid_t pid;
        int e = 0;

        *n = 0;
        *stack_left = NULL;
        if (stack == MAP_FAILED) {
                close(child_end);
                return -1;
        }
        /* Blocked until the child is off our memory: no handler of ours runs meanwhile, and no
         * interrupted read sets the errno the child shares with us (its TLS is ours). */
        sigfillset(&all);
        sigprocmask(SIG_SETMASK, &all, &old);
        pid = clone(fn, (char *)stack + stack_size, CLONE_VM | SIGCHLD, arg);
        if (pid < 0)
                e = errno;
        close(child_end);
        bool off = pid < 0; /* the child is off our memory */
        while (!off) {
                char sink[64];
                ssize_t r = *n < len ? read(wait_fd, (char *)buf + *n, len - *n) : read(wait_fd, sink, sizeof(sink));

                if (r > 0 && *n < len)
                        *n += (size_t)r;
                off = r == 0;
                if (r < 0 && errno != EINTR)
                        break; /* not a pipe of the child's: its stack stays mapped, not pulled from under it */
        }
        sigprocmask(SIG_SETMASK, &old, NULL);
        if (off)
                *stack_left = stack;
        errno = e;
        return pid;
}
