#!/usr/bin/env bash
# run-in-vm.sh COMMAND [ARGS...] - run a command as root on a real cgroup v2 host: a throw-away
# qemu (TCG) guest booting the installed Debian kernel, whose root is an overlay of this host's
# root (shared read-only over 9p) and a tmpfs, with /work/main shared writable at the same path
# so that build trees keep their absolute paths. cgroup2 is mounted at /sys/fs/cgroup with cpu,
# memory and pids enabled at the root, and the command runs in the root cgroup: the only
# cgroup that may hold processes (the test shell, the controller, the CLI) and hand controllers
# down at once, as agents started by `colony up` need. Exits with the command's status, 77
# (skip) when qemu or the kernel are missing and cannot be installed, 124 on timeout.
#
# With VM_SYSTEMD=1 the guest boots systemd as PID 1 instead (on the same overlay root, with
# /.dockerenv removed so systemd does not take itself for a container's init), and the command
# runs as colony-vm-test.service, the unit the kernel command line boots (systemd.unit=),
# in 0::/system.slice/colony-vm-test.service; the unit powers the guest off when it ends.
# systemd mounts cgroup2 and delegates controllers its own way; there is no D-Bus daemon
# unless VM_LOGIND=1.
#
# Environment: VM_TIMEOUT (seconds, default 900), VM_MEM (MiB, default 2048), VM_SHARE (the
# writable directory, default the source tree holding this script), VM_KEEP=1 keeps the temp dir,
# VM_SYSTEMD=1 as above, VM_LOGIND=1 (with VM_SYSTEMD=1) starts D-Bus and systemd-logind too.
set -euo pipefail

SKIP=77
TIMEOUT=${VM_TIMEOUT:-900}
MEM=${VM_MEM:-2048}
SHARE=$(realpath "${VM_SHARE:-$(dirname "$(realpath "$0")")/../..}")
MODULES=(virtio_ring virtio virtio_pci_modern_dev virtio_pci_legacy_dev virtio_pci netfs fscache
         9pnet 9pnet_virtio 9p overlay)

[ $# -gt 0 ] || { echo "usage: $0 COMMAND [ARGS...]" >&2; exit 2; }
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (the guest shares / over 9p as root)"; exit $SKIP; }

find_kernel() {
        KVER=$(ls /lib/modules 2>/dev/null | sort -V | while read -r v; do
                [ -f "/boot/vmlinuz-$v" ] && [ -f "/lib/modules/$v/kernel/fs/9p/9p.ko" -o -f "/lib/modules/$v/kernel/fs/9p/9p.ko.xz" ] && echo "$v"
        done | tail -n1)
        [ -n "$KVER" ]
}

have_tools() { command -v qemu-system-x86_64 && command -v cpio && [ -x /bin/busybox ] && find_kernel; } >/dev/null

if ! have_tools; then
        echo "# installing qemu-system-x86 linux-image-amd64 busybox-static cpio"
        { apt-get update && DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
                qemu-system-x86 linux-image-amd64 busybox-static cpio; } >/dev/null 2>&1 || true
        have_tools || { echo "SKIP: qemu-system-x86_64, busybox-static, cpio or a kernel with 9p missing"; exit $SKIP; }
fi
find_kernel

TMP=$(mktemp -d /tmp/colony-vm-XXXXXX)
QEMU_PID=
cleanup() {
        [ -n "$QEMU_PID" ] && kill -9 "$QEMU_PID" 2>/dev/null || true
        [ -n "${VM_KEEP:-}" ] && echo "# kept $TMP" || rm -rf "$TMP"
}
trap cleanup EXIT
trap 'exit 143' INT TERM

# The initramfs: busybox, the modules, and an /init that builds the root and runs the command.
mkdir -p "$TMP/initrd"/{bin,lib/modules,proc,sys,dev,host,upper,newroot,out,share} "$TMP/out"
cp /bin/busybox "$TMP/initrd/bin/busybox"
for m in "${MODULES[@]}"; do
        ko=$(find "/lib/modules/$KVER/kernel" -name "$m.ko" -o -name "$m.ko.xz" | head -n1)
        [ -n "$ko" ] || { echo "SKIP: module $m missing for kernel $KVER"; exit $SKIP; }
        case $ko in
        *.xz) xz -dc "$ko" >"$TMP/initrd/lib/modules/$m.ko" ;;
        *) cp "$ko" "$TMP/initrd/lib/modules/$m.ko" ;;
        esac
done

# The command, quoted for the guest's bash, run from the caller's directory.
{
        printf 'cd %q 2>/dev/null || cd /\n' "$PWD"
        printf 'export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root TERM=dumb\n'
        printf 'exec'; printf ' %q' "$@"; printf '\n'
} >"$TMP/initrd/cmd.sh"

# Under systemd: the unit that runs the command and reports its status through /vm-out.
SYSTEMD=${VM_SYSTEMD:-0}
APPEND="console=ttyS0 quiet panic=-1 loglevel=3"
if [ "$SYSTEMD" = 1 ]; then
        [ -x /lib/systemd/systemd ] || { echo "SKIP: systemd is not installed"; exit $SKIP; }
        cat >"$TMP/initrd/test.service" <<'EOF'
[Unit]
Description=colony VM test command
SuccessAction=poweroff-force
FailureAction=poweroff-force

[Service]
Type=oneshot
ExecStart=/bin/bash -c '/bin/bash /vm-cmd.sh; echo $? >/vm-out/rc; sync'
StandardOutput=tty
StandardError=tty
TTYPath=/dev/ttyS0
EOF
        APPEND="$APPEND systemd.unit=colony-vm-test.service systemd.show_status=0 systemd.unified_cgroup_hierarchy=1"
        # The system bus and logind, for a command that logs in through PAM (pam_systemd), as
        # a getty or sshd login does; the boot target being the test's unit, nothing else
        # starts them.
        if [ "${VM_LOGIND:-0}" = 1 ]; then
                sed -i '/^FailureAction=/a Wants=dbus.socket systemd-logind.service systemd-user-sessions.service\nAfter=dbus.socket systemd-logind.service systemd-user-sessions.service' \
                        "$TMP/initrd/test.service"
        fi
fi

cat >"$TMP/initrd/init" <<EOF
#!/bin/busybox sh
/bin/busybox --install -s /bin
export PATH=/bin
mount -t proc proc /proc; mount -t sysfs sysfs /sys; mount -t devtmpfs dev /dev
for m in ${MODULES[*]}; do insmod /lib/modules/\$m.ko || echo "vm: insmod \$m failed"; done
R=/newroot
mount -t 9p -o trans=virtio,version=9p2000.L,ro hostroot /host &&
mount -t tmpfs -o size=1g tmpfs /upper && mkdir -p /upper/u /upper/w &&
mount -t overlay -o lowerdir=/host,upperdir=/upper/u,workdir=/upper/w overlay \$R &&
mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 out /out || {
        echo "vm: cannot build the root"; poweroff -f; }
mkdir -p \$R$SHARE && mount -t 9p -o trans=virtio,version=9p2000.L,msize=262144 share \$R$SHARE || {
        echo "vm: cannot mount $SHARE"; poweroff -f; }
if [ $SYSTEMD = 1 ]; then
        rm -f \$R/.dockerenv
        mkdir -p \$R/vm-out && mount --bind /out \$R/vm-out
        cp /cmd.sh \$R/vm-cmd.sh
        cp /test.service \$R/etc/systemd/system/colony-vm-test.service
        # Debian's tmpfiles.d/tmp.conf empties /tmp at boot, which would take a checkout there
        # (the source tree the test reads) out of the overlay; an empty file of the same name wins.
        mkdir -p \$R/etc/tmpfiles.d && : >\$R/etc/tmpfiles.d/tmp.conf
        exec switch_root \$R /lib/systemd/systemd
fi
mount -t proc proc \$R/proc; mount -t sysfs sysfs \$R/sys; mount -t devtmpfs dev \$R/dev
mkdir -p \$R/dev/pts \$R/dev/shm; mount -t devpts devpts \$R/dev/pts; mount -t tmpfs tmpfs \$R/dev/shm
ln -sf /proc/self/fd \$R/dev/fd; for i in 0 1 2; do ln -sf /proc/self/fd/\$i \$R/dev/\$(echo stdin stdout stderr | cut -d' ' -f\$((i + 1))); done
# /tmp stays the overlay's (writable, and showing the host's, where a build tree may live).
mount -t tmpfs tmpfs \$R/run
mount -t cgroup2 none \$R/sys/fs/cgroup
echo "+cpu +memory +pids +io +cpuset" > \$R/sys/fs/cgroup/cgroup.subtree_control || echo "vm: cannot enable controllers"
echo "vm: kernel \$(uname -r), cgroup2 root controllers: \$(cat \$R/sys/fs/cgroup/cgroup.subtree_control)"
cp /cmd.sh \$R/tmp/vm-cmd.sh
ip link set lo up 2>/dev/null
chroot \$R /bin/bash /tmp/vm-cmd.sh </dev/null
echo \$? > /out/rc
sync
poweroff -f
EOF
chmod 755 "$TMP/initrd/init"
(cd "$TMP/initrd" && find . | cpio -o -H newc --quiet) >"$TMP/initrd.cpio"

echo "# booting $KVER in qemu (TCG)$([ "$SYSTEMD" = 1 ] && echo ", systemd as PID 1"), running: $*"
start=$(date +%s)
# --pdeathsig: a runner killed outright (ctest's own timeout sends SIGKILL) takes the guest with
# it; without it the guest ran on, orphaned, for half an hour on a busy host.
setpriv --pdeathsig KILL qemu-system-x86_64 -accel tcg -m "$MEM" -smp 2 -nographic -no-reboot -nic none \
        -kernel "/boot/vmlinuz-$KVER" -initrd "$TMP/initrd.cpio" \
        -append "$APPEND" \
        -virtfs local,path=/,mount_tag=hostroot,security_model=none,readonly=on,multidevs=remap \
        -virtfs "local,path=$SHARE,mount_tag=share,security_model=none,multidevs=remap" \
        -virtfs "local,path=$TMP/out,mount_tag=out,security_model=none" \
        </dev/null &
QEMU_PID=$!
while kill -0 "$QEMU_PID" 2>/dev/null && [ $(($(date +%s) - start)) -lt "$TIMEOUT" ]; do sleep 1; done
if kill -0 "$QEMU_PID" 2>/dev/null; then
        echo "vm: timed out after ${TIMEOUT}s"
        exit 124 # cleanup kills qemu
fi
set +e
wait "$QEMU_PID"
qrc=$?
set -e
QEMU_PID=
echo "# VM ran $(($(date +%s) - start)) s"
[ -s "$TMP/out/rc" ] || { echo "vm: the guest reported no exit status (qemu exit $qrc)"; exit 1; }
exit "$(cat "$TMP/out/rc")"
