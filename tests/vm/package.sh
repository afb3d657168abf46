#!/usr/bin/env bash
# package.sh SOURCE_DIR BUILD_DIR - the Debian packages end to end: build them with CPack in
# BUILD_DIR/package (a tree configured for /usr with Debian's hardening flags, as a package
# must be), then install, run, remove and purge them in a qemu guest with systemd as PID 1
# (package-guest.sh under VM_SYSTEMD=1 run-in-vm.sh). Exits 77 when the guest cannot run here.
set -euo pipefail
src=${1:?usage: package.sh SOURCE_DIR BUILD_DIR} build=${2:?usage: package.sh SOURCE_DIR BUILD_DIR}
here=$(dirname "$(realpath "$0")")
[ "$(id -u)" = 0 ] || { echo "SKIP: needs root (the guest shares / over 9p as root)"; exit 77; }
for t in dpkg-buildflags dpkg-shlibdeps file; do
        command -v $t >/dev/null || { echo "FAIL: $t missing (contrib/bootstrap.sh installs it)"; exit 1; }
done

pkg=$build/package
export DEB_BUILD_MAINT_OPTIONS=hardening=+all
# CMAKE_SKIP_INSTALL_ALL_DEPENDENCY: cpack installs what the build below made, not every test.
cmake -S "$src" -B "$pkg" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DCMAKE_INSTALL_PREFIX=/usr \
        -DCMAKE_SKIP_INSTALL_ALL_DEPENDENCY=ON \
        -DCMAKE_C_FLAGS="$(dpkg-buildflags --get CFLAGS) $(dpkg-buildflags --get CPPFLAGS)" \
        -DCMAKE_EXE_LINKER_FLAGS="$(dpkg-buildflags --get LDFLAGS)" >/dev/null
cmake --build "$pkg" -j "$(nproc)" --target colony colony-offline colony-controller colony-agent colony-stress man_pages changelog >/dev/null
rm -f "$pkg"/*.deb
(cd "$pkg" && cpack -G DEB >/dev/null)
ls "$pkg"/*.deb
VM_SYSTEMD=1 "$here/run-in-vm.sh" "$here/package-guest.sh" "$pkg"
