#!/usr/bin/env bash
# DKMS and `make install` against installed kernel headers, leaving nothing
# behind. With no argument: every installed kernel with headers (the
# matrix's Debian kernels). Ends with "dkms: N passed, N failed".
#
# It runs in a mount namespace of its own, where what DKMS and make install
# write (/usr/lib/modules, /var/lib/dkms, /usr/src) lands in a tmpfs
# overlaid on the real directories: the rest of the system never sees a
# half-installed module or a depmod in progress. make check runs it beside
# the guests, which read /lib/modules over 9p (one guest's modprobe failed
# "Module dm-mod not found" while this test, without a namespace, ran
# depmod beside it).
set -uo pipefail
# The directories this test writes, each overlaid in the namespace.
PRIVATE_DIRS=(/usr/lib/modules /var/lib/dkms /usr/src)
if [ -z "${HOTTIER_DKMS_PRIVATE:-}" ]; then
	mkdir -p "${PRIVATE_DIRS[@]}"
	scratch=$(mktemp -d /tmp/dkms-test.XXXXXX) || exit 1
	rc=0
	HOTTIER_DKMS_PRIVATE=$scratch unshare --mount --propagation private \
		"$0" "$@" || rc=$?
	rmdir "$scratch"
	exit "$rc"
fi
# In the namespace: a tmpfs for the upper directories, gone with it.
private_dirs() {
	local d up scratch=$HOTTIER_DKMS_PRIVATE
	mount -t tmpfs dkms-test "$scratch" || return 1
	for d in "${PRIVATE_DIRS[@]}"; do
		up=$scratch/$(echo "$d" | tr / _)
		mkdir -p "$up/upper" "$up/work"
		mount -t overlay dkms-test -o \
			"lowerdir=$d,upperdir=$up/upper,workdir=$up/work" "$d" || return 1
	done
}
if ! private_dirs; then
	echo "dkms-test: cannot overlay ${PRIVATE_DIRS[*]} (overlayfs, tmpfs)" >&2
	echo "dkms: 0 passed, 1 failed"
	exit 1
fi
repo=$(cd "$(dirname "$0")/.." && pwd)
name=dm-hottier
ver=$(cat "$repo/VERSION")
usrsrc=/usr/src/$name-$ver
passed=0
failed=0
ok() { echo "PASS $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

cleanup() {
	dkms remove -m "$name" -v "$ver" --all >/dev/null 2>&1 || true
	rm -rf "$usrsrc"
}
trap cleanup EXIT

if [ $# -gt 0 ]; then
	kvers=("$@")
else
	kvers=()
	for d in /lib/modules/*/build; do
		[ -f "$d/Makefile" ] && kvers+=("$(basename "$(dirname "$d")")")
	done
fi

# dkms.conf's version is the VERSION file's.
conf_ver=$(sed -nE 's/^PACKAGE_VERSION="?([^"]*)"?/\1/p' "$repo/dkms.conf")
if [ "$conf_ver" = "$ver" ]; then
	ok dkms_conf_version_matches
else
	bad dkms_conf_version_matches "dkms.conf has $conf_ver, VERSION has $ver"
fi

# The tree as git sees it (tracked and new files), without build products.
cleanup
mkdir -p "$usrsrc"
(cd "$repo" && git ls-files -co --exclude-standard -z | grep -zv '^results/' |
	xargs -0 cp --parents -t "$usrsrc")
if dkms add -m "$name" -v "$ver" >/dev/null; then
	ok dkms_add
else
	bad dkms_add "dkms add failed"
fi

for k in "${kvers[@]}"; do
	ko=/var/lib/dkms/$name/$ver/$k/x86_64/module/$name.ko
	if dkms build -m "$name" -v "$ver" -k "$k" >/dev/null 2>&1 &&
		ls "$ko"* >/dev/null 2>&1; then
		vm=$(modinfo -F vermagic "$(ls "$ko"* | head -1)" | cut -d' ' -f1)
		if [ "$vm" = "$k" ]; then
			ok "dkms_build_$k"
		else
			bad "dkms_build_$k" "vermagic $vm"
		fi
	else
		bad "dkms_build_$k" "$(tail -5 /var/lib/dkms/$name/$ver/build/make.log 2>/dev/null)"
	fi
	if dkms install -m "$name" -v "$ver" -k "$k" --force >/dev/null 2>&1 &&
		modinfo -k "$k" -n "$name" 2>/dev/null | grep -q "/updates/"; then
		ok "dkms_install_$k"
	else
		bad "dkms_install_$k" "not found under /lib/modules/$k/updates"
	fi
done

# A kernel built from source (the matrix's 7.2 debug tier, once built):
# dkms builds against its tree; nothing is installed for it.
if dbg=$("$repo/scripts/debug-kernel.sh" --cached 2>/dev/null); then
	k=$(cat "$dbg/include/config/kernel.release")
	ko=/var/lib/dkms/$name/$ver/$k/x86_64/module/$name.ko
	if dkms build -m "$name" -v "$ver" -k "$k" --kernelsourcedir "$dbg" \
		>/dev/null 2>&1 && ls "$ko"* >/dev/null 2>&1 &&
		[ "$(modinfo -F vermagic "$(ls "$ko"* | head -1)" | cut -d' ' -f1)" = "$k" ]; then
		ok "dkms_build_$k"
	else
		bad "dkms_build_$k" "$(tail -5 /var/lib/dkms/$name/$ver/build/make.log 2>/dev/null)"
	fi
fi

cleanup
left=$(dkms status -m "$name" 2>/dev/null)
found=$(find /lib/modules/*/updates -name "$name.ko*" 2>/dev/null)
if [ -z "$left" ] && [ -z "$found" ]; then
	ok dkms_remove_leaves_nothing
else
	bad dkms_remove_leaves_nothing "$left $found"
fi

# The udev rules, each naming the installed hottierctl.
rules_installed() {
	local r
	grep -q '^RUN+="/usr/local/sbin/hottierctl tune-queues' "$1/60-hottier.rules" || return 1
	for r in 59-hottier-members.rules 68-hottier-members.rules; do
		grep -q 'IMPORT{program}="/usr/local/sbin/hottierctl udev-member' "$1/$r" || return 1
	done
}

# make install: into /lib/modules/<ver>/updates, then depmod finds it;
# hottierctl and its files staged under DESTDIR, so none stay behind.
for k in "${kvers[@]}"; do
	tmp=$(mktemp -d)
	(cd "$repo" && git ls-files -co --exclude-standard -z | grep -zv '^results/' |
		xargs -0 cp --parents -t "$tmp")
	if make -C "$tmp" KVER="$k" DESTDIR="$tmp/root" install >/dev/null 2>&1 &&
		ls "/lib/modules/$k/updates/$name.ko"* >/dev/null 2>&1 &&
		modinfo -k "$k" -n "$name" | grep -q "/updates/$name.ko" &&
		[ -x "$tmp/root/usr/local/sbin/hottierctl" ] &&
		rules_installed "$tmp/root/usr/local/lib/udev/rules.d"; then
		ok "make_install_$k"
	else
		bad "make_install_$k" "module not under /lib/modules/$k/updates, or hottierctl or its udev rules not installed"
	fi
	rm -f "/lib/modules/$k/updates/$name.ko"*
	depmod -a "$k"
	rm -rf "$tmp"
done

echo "dkms: $passed passed, $failed failed"
[ "$failed" = 0 ]
