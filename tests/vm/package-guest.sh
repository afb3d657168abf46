#!/usr/bin/env bash
# package-guest.sh DEB_DIR - run inside a guest booted with systemd as PID 1 (VM_SYSTEMD=1
# run-in-vm.sh; package.sh builds DEB_DIR's packages and calls it): the Debian packages on the
# guest's throw-away root, as an administrator would use them:
#  - dpkg -i installs colony-client, colony-controller and colony-agent, with their files where
#    Debian puts them and the two configuration files as conffiles;
#  - the units start from the installed files, and a user's job runs with the installed colony;
#  - dpkg -r stops the daemons and removes every file but the edited conffiles; dpkg --purge
#    removes those and the controller's database, and systemd forgets the units.
set -euo pipefail
debs=${1:?usage: package-guest.sh DEB_DIR}
CTL=colony-controller.service
AGENT=colony-agent.service
PKGS=(colony-client colony-controller colony-agent)
. "$(dirname "$0")/units-lib.sh"
need_systemd
note "booted"
for p in "${PKGS[@]}"; do
        ! dpkg-query -W "$p" >/dev/null 2>&1 || { echo "SKIP: $p is installed on the host"; exit 77; }
done

# --- install ---
# (man-db would re-index every page after each dpkg run: minutes in a TCG guest)
rm -f /var/lib/man-db/auto-update
# A host that is a container image may forbid maintainer scripts to start or stop services
# (Docker's policy-rc.d: exit 101); the guest is a machine of its own.
rm -f /usr/sbin/policy-rc.d
dpkg -i "$debs"/colony-{client,controller,agent}_*.deb >"/tmp/dpkg-i.log" 2>&1 || { cat /tmp/dpkg-i.log; fail "dpkg -i"; }
for p in "${PKGS[@]}"; do
        [ "$(dpkg-query -W -f='${Status}' "$p")" = "install ok installed" ] || fail "$p: $(dpkg-query -W -f='${Status}' "$p")"
done
note "installed: $(dpkg-query -W "${PKGS[@]}" | tr '\t\n' ' ')"
files=$(dpkg -L "${PKGS[@]}")
for f in /usr/bin/colony /usr/bin/colony-stress /usr/libexec/colony/colony-offline /usr/sbin/colony-controller /usr/sbin/colony-agent \
        /lib/systemd/system/$CTL /lib/systemd/system/$AGENT /etc/colony/controller.conf /etc/colony/agent.conf \
        /usr/share/man/man1/colony.1.gz /usr/share/man/man5/colony.conf.5.gz /usr/share/man/man8/colony-agent.8.gz \
        /usr/share/man/man8/colony-controller.8.gz /usr/share/bash-completion/completions/colony \
        /usr/share/doc/colony-client/README.md /usr/share/doc/colony-agent/changelog.gz; do
        grep -qx -- "$f" <<<"$files" || fail "$f is not in the packages"
        [ -e "$f" ] || fail "$f listed but not installed"
done
for p in controller agent; do
        dpkg-query -W -f='${Conffiles}\n' colony-$p | grep -q "^ /etc/colony/$p.conf " || fail "/etc/colony/$p.conf is not a conffile"
done
zcat /usr/share/man/man5/colony.conf.5.gz | grep -q '^\.SH \[departments\]' || fail "colony.conf(5) is not the page"
[ "$(command -v colony)" = /usr/bin/colony ] || fail "colony is $(command -v colony)"
# the offline commands run in /usr/libexec/colony/colony-offline, which colony execs
colony sim --help | grep -q '^Usage: colony sim ' || fail "installed colony sim --help: $(colony sim --help 2>&1 | head -1)"
grep -q '^ExecStart=/usr/sbin/colony-agent --config /etc/colony/agent.conf' /lib/systemd/system/$AGENT || fail "agent unit: $(grep ExecStart /lib/systemd/system/$AGENT)"
for u in $CTL $AGENT; do
        [ "$(prop $u LoadState)" = loaded ] && [ "$(prop $u FragmentPath)" = /lib/systemd/system/$u ] ||
                fail "$u: $(prop $u LoadState) from '$(prop $u FragmentPath)'"
        [ "$(prop $u ActiveState)" = inactive ] || fail "$u started by the install, before it has a secret"
done
note "files in place, conffiles marked, units loaded and not started"

# --- run: the site's configuration, the units, a job ---
site_config /etc/colony pkgnode
# dpkg's database read over 9p can stall a TCG guest on a busy host for longer than the units'
# watchdog allows; the watchdog is vm_systemd's to test. A runtime drop-in leaves /etc alone.
for u in $CTL $AGENT; do
        mkdir -p /run/systemd/system/$u.d
        printf '[Service]\nWatchdogSec=0\n' >/run/systemd/system/$u.d/no-watchdog.conf
done
systemctl daemon-reload
start_units
note "$CTL: $(prop $CTL StatusText); $AGENT: $(prop $AGENT StatusText)"
work=$(mktemp -d /tmp/colony-package-XXXXXX)
chmod 1777 "$work"
cd "$work"
id=$(as_nobody colony submit --name whoami --cpus 0.5 --mem 64M --output "$work/id.out" -- colony-stress id) || fail "colony submit"
as_nobody colony wait --timeout 300 "$id" >/dev/null || fail "job $id: $(job_state "$id")"
in_state "$id" completed || fail "job $id is $(job_state "$id")"
[ "$(cat "$work/id.out")" = "65534 65534" ] || fail "job $id printed '$(cat "$work/id.out")'"
[ -s /var/lib/colony/controller.db ] || fail "no database in /var/lib/colony"
note "job $id ran as nobody with the installed colony and completed"
cd /
rm -rf "$work"

# --- remove: the daemons stop, the files go, the edited conffiles stay ---
note "removing"
pids="$(prop $CTL MainPID) $(prop $AGENT MainPID)"
dpkg -r "${PKGS[@]}" >/tmp/dpkg-r.log 2>&1 || { cat /tmp/dpkg-r.log; fail "dpkg -r"; }
for u in $CTL $AGENT; do
        [ "$(prop $u ActiveState)" = inactive ] || fail "$u is $(prop $u ActiveState) after dpkg -r"
done
for pid in $pids; do
        [ ! -e /proc/"$pid" ] || fail "daemon $pid survived dpkg -r"
done
left=$(while read -r f; do if [ -f "$f" ]; then echo "$f"; fi; done <<<"$files")
[ "$left" = "$(printf '/etc/colony/controller.conf\n/etc/colony/agent.conf')" ] ||
        [ "$left" = "$(printf '/etc/colony/agent.conf\n/etc/colony/controller.conf')" ] || fail "left after dpkg -r: $left"
note "dpkg -r: daemons stopped, only the conffiles left"

# --- purge: the conffiles and the database go, systemd forgets the units ---
dpkg --purge "${PKGS[@]}" >/tmp/dpkg-p.log 2>&1 || { cat /tmp/dpkg-p.log; fail "dpkg --purge"; }
[ "$(ls /etc/colony)" = secret ] || fail "/etc/colony holds $(ls /etc/colony | tr '\n' ' ') after the purge, not only the site's secret"
[ ! -e /var/lib/colony ] || fail "/var/lib/colony left after the purge"
for u in $CTL $AGENT; do
        [ "$(prop $u LoadState)" = not-found ] || fail "$u is still $(prop $u LoadState) after the purge"
done
for p in "${PKGS[@]}"; do
        ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q installed || fail "$p still known to dpkg"
done
note "dpkg --purge: conffiles, database and units gone"
echo PASS
