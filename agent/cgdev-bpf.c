/* cgdev-bpf.c - the v2 device control: a BPF_CGROUP_DEVICE program per job that refuses the
 * devices it may not open and allows the rest.
 *
 * cgroup v2 has no devices.deny file; the kernel asks the BPF_CGROUP_DEVICE programs attached to
 * the cgroup and to those above it at each open and mknod of a device node. The program is a
 * handful of instructions built here, as systemd's bpf-devices.c and runc build theirs, with no
 * compiler or object file. It is loaded and attached through libbpf (Debian 12: libbpf1 1.1)
 * rather than with bpf(2) by hand: libbpf keeps the union bpf_attr layouts of older and newer
 * kernels, raises RLIMIT_MEMLOCK on kernels that charge programs to it (before 5.11), and retries
 * a load the kernel refused with EAGAIN, which a hand-made call would each have to copy. */
#include "cgdev.h"

#include <bpf/bpf.h>
#include <linux/bpf.h>

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The compares of a device's type, major and minor, then "return 0". */
#define INSNS_PER_DEVICE 5
/* Load the type, major and minor; at the end "return 1". */
#define INSNS_FIXED 6

static struct bpf_insn insn(uint8_t code, uint8_t dst, uint8_t src, int16_t off, int32_t imm) {
        return (struct bpf_insn){ .code = code, .dst_reg = dst, .src_reg = src, .off = off, .imm = imm };
}

/* r2 = the type (the low half of access_type), r3 = major, r4 = minor, from the context in r1;
 * per denied device, fall through to "return 0" only when all three are its; else "return 1".
 * A 32-bit load zero-extends, and majors and minors fit an immediate's 31 bits (cgdev_check). */
static struct bpf_insn *build(const cg_device *deny, size_t n, size_t *len) {
        struct bpf_insn *p = calloc(INSNS_FIXED + n * INSNS_PER_DEVICE, sizeof(*p));
        size_t k = 0;

        if (!p)
                return NULL;
        p[k++] = insn(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_2, BPF_REG_1, offsetof(struct bpf_cgroup_dev_ctx, access_type),
                      0);
        p[k++] = insn(BPF_ALU | BPF_AND | BPF_K, BPF_REG_2, 0, 0, 0xffff);
        p[k++] = insn(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_3, BPF_REG_1, offsetof(struct bpf_cgroup_dev_ctx, major), 0);
        p[k++] = insn(BPF_LDX | BPF_MEM | BPF_W, BPF_REG_4, BPF_REG_1, offsetof(struct bpf_cgroup_dev_ctx, minor), 0);
        for (size_t i = 0; i < n; i++) {
                int32_t type = deny[i].type == 'b' ? BPF_DEVCG_DEV_BLOCK : BPF_DEVCG_DEV_CHAR;

                /* Each jump skips the rest of this device's instructions. */
                p[k++] = insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_2, 0, 4, type);
                p[k++] = insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_3, 0, 3, (int32_t)deny[i].major);
                p[k++] = insn(BPF_JMP | BPF_JNE | BPF_K, BPF_REG_4, 0, 2, (int32_t)deny[i].minor);
                p[k++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 0);
                p[k++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
        }
        p[k++] = insn(BPF_ALU64 | BPF_MOV | BPF_K, BPF_REG_0, 0, 0, 1);
        p[k++] = insn(BPF_JMP | BPF_EXIT, 0, 0, 0, 0);
        *len = k;
        return p;
}

int cgdev_bpf_deny(const char *dir, const cg_device *deny, size_t n, char *err, size_t errlen) {
        size_t len = 0;
        struct bpf_insn *prog = build(deny, n, &len);
        int cgfd = -1, progfd = -1, r = 0;

        if (!prog) {
                snprintf(err, errlen, "out of memory");
                return -ENOMEM;
        }
        if ((cgfd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) < 0) {
                r = -errno;
                snprintf(err, errlen, "open %s: %s", dir, strerror(-r));
        } else if ((progfd = bpf_prog_load(BPF_PROG_TYPE_CGROUP_DEVICE, "colony_devdeny", "GPL", prog, len, NULL)) <
                   0) {
                r = progfd;
                snprintf(err, errlen, "cgroup=%s: load the BPF device program (%zu devices denied): %s", dir, n,
                         strerror(-r));
        } else if ((r = bpf_prog_attach(progfd, cgfd, BPF_CGROUP_DEVICE, BPF_F_ALLOW_MULTI)) < 0)
                /* EPERM here also when a cgroup above attached its program without ALLOW_MULTI. */
                snprintf(err, errlen, "cgroup=%s: attach the BPF device program: %s", dir, strerror(-r));
        /* The attachment holds the program; the fds are ours only. */
        if (progfd >= 0)
                close(progfd);
        if (cgfd >= 0)
                close(cgfd);
        free(prog);
        return r;
}
