#!/usr/bin/env bash
# Run a command inside a guest booted from an installed Debian kernel with
# virtme-ng, host root over 9p (read-only) and a writable results directory.
#
#   scripts/vm-run.sh [--kver VER | --kernel IMAGE] [--results DIR] [--timeout SECS]
#                     [--memory SIZE] [--disk NAME=FILE]... -- COMMAND...
#
# --disk attaches FILE (raw) as a virtio-blk disk whose serial is NAME
# (tests/lib/devices.py virtio_disk(NAME) finds it): data there survives a
# guest restart.
#
# The command's exit code is passed through. The guest's kernel log is saved
# as DIR/kernel.log; the run fails if it shows an Oops, BUG, WARNING, KASAN,
# UBSAN, lockdep, kmemleak or hung-task report (saved as DIR/kernel-reports.log).
# A panic or oops goes to DIR/console.log too, even one during boot, so a
# guest that dies before the command runs says why.
# Such a guest (no kernel log, not a timeout) is booted once more: nothing of
# the command ran, so nothing is hidden, and both console logs are kept. So
# is a guest that hangs while booting: one that has not started the command
# HOTTIER_VM_BOOT_TIMEOUT seconds after QEMU started is killed and booted
# once more, instead of holding the run until --timeout. The default is 180 s
# for an installed kernel (it boots in 15-40 s under TCG) and 600 s for
# --kernel (the debug kernel boots in about 3 minutes).
# HOTTIER_VM_KVM=1 allows KVM where it works; the default is TCG.
# HOTTIER_VM_CPUS is the guest's vCPUs (default 2; make check gives one to
# each of the two guests it runs at a time on two cores).
# HOTTIER_VM_UDEV says what udev the guest gets: "all" (the default) is the
# host's rules; "dm" only device-mapper's and the virtio ports' (the
# command's I/O runs on those), for a guest whose tests want no by-id link
# of a disk and no LVM or md rule: on 6.1 its settle took 3 s where all
# rules took 34. With no rule loading drivers, the guest loads virtio_blk
# for the --disk devices itself. "none" is no udev at all, nor
# systemd-tmpfiles: under KASAN, lockdep and kmemleak udev took 374 s even
# with the dm rules alone, and tmpfiles 45. libdevmapper then makes the
# /dev/mapper nodes itself (DM_DISABLE_UDEV=1 in the guest), and with no
# virtio-port link the command's output goes to DIR/guest-output, printed
# here once the guest is done. Either runs QEMU in a mount namespace of
# its own where a mount hides what the guest is not to see.
# Output may go to a file: the guest's reaches it through a pipe (boot()).
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
kver=${KVER:-}
kernel=
results=${HOTTIER_RESULTS:-$PWD/results}
timeout=${HOTTIER_VM_TIMEOUT:-1200}
memory=${HOTTIER_VM_MEMORY:-2G}
disks=()

while [ $# -gt 0 ]; do
	case "$1" in
	--kver) kver=$2; shift 2 ;;
	--kernel) kernel=$2; shift 2 ;;
	--results) results=$2; shift 2 ;;
	--timeout) timeout=$2; shift 2 ;;
	--memory) memory=$2; shift 2 ;;
	--disk)
		dname=${2%%=*}
		dfile=${2#*=}
		[[ "$dname" =~ ^[A-Za-z0-9_-]{1,20}$ ]] && [ -f "$dfile" ] || {
			echo "vm-run: --disk wants NAME=FILE (NAME: up to 20 of [A-Za-z0-9_-]), got '$2'" >&2
			exit 2
		}
		disks+=("--qemu-opts=-drive if=none,id=hd-$dname,format=raw,file=$(realpath "$dfile") -device virtio-blk-pci,drive=hd-$dname,serial=$dname")
		shift 2 ;;
	--) shift; break ;;
	*) echo "vm-run: unknown option $1" >&2; exit 2 ;;
	esac
done
[ $# -gt 0 ] || { echo "vm-run: no command given" >&2; exit 2; }
boot_timeout=${HOTTIER_VM_BOOT_TIMEOUT:-600}
image=1
if [ -z "$kernel" ]; then
	image=0
	[ -n "$kver" ] || kver=$("$here/kver.sh")
	kernel=/boot/vmlinuz-$kver
	boot_timeout=${HOTTIER_VM_BOOT_TIMEOUT:-180}
fi
[ -f "$kernel" ] || { echo "vm-run: no kernel $kernel" >&2; exit 2; }

mkdir -p "$results"
results=$(cd "$results" && pwd)
rm -f "$results/console.1.log"

accel=(--disable-kvm)
udev=${HOTTIER_VM_UDEV:-all}
udev_ns=()
case "$udev" in
all) ;;
dm)
	rules=$(mktemp -d)
	trap 'rm -rf "$rules"' EXIT
	for r in 50-udev-default 55-dm 60-persistent-storage-dm 95-dm-notify; do
		cp "/usr/lib/udev/rules.d/$r.rules" "$rules/"
	done
	udev_ns=(unshare --mount --propagation private -- sh -c
		'mount --bind "$0" /usr/lib/udev/rules.d && exec "$@"' "$rules")
	;;
none)
	udev_ns=(unshare --mount --propagation private -- sh -c
		'for d in /usr/lib/systemd /usr/lib/tmpfiles.d; do
			mount -t tmpfs -o size=64k,mode=0755 hottier-no-udev "$d" || exit
		done && exec "$@"' sh)
	;;
*)
	echo "vm-run: HOTTIER_VM_UDEV is all, dm or none, not '$udev'" >&2
	exit 2
	;;
esac
[ "${HOTTIER_VM_KVM:-0}" = 1 ] && accel=()

# TCG is slow: keep RCU-stall and hung-task reports for real hangs only.
# A second UART (COM2, port 0x2f8) writes to DIR/console.log as an early
# console kept for the whole run; virtme's quiet loglevel holds back the
# ordinary lines, and a panic or oops raises the level itself, so the file
# holds only those and the final "reboot: Power down". (ttyS1 as a second
# console= would not do: the 8250 driver serves one console.)
append="rcupdate.rcu_cpu_stall_timeout=300 sysctl.kernel.hung_task_timeout_secs=900"
append+=" earlycon=uart8250,io,0x2f8,115200n8 keep_bootcon"
append+=" ${HOTTIER_VM_APPEND:-}"
# A kernel given as an image has 9p built in and mounts the host root itself,
# with the root flags of the command line (an installed kernel's initramfs
# mounts it with fixed flags): there, cache the root. Without a cache the
# guest reads every binary and library through 9p again at each start; the
# root is read-only and the host does not change it during a run, and the
# results directory is a mount of its own, not cached. Under the debug
# kernel this took its boot from 203 s to 161 s (udev's coldplug
# starts a program per device).
if [ "$image" = 1 ]; then
	append+=" rootflags=version=9p2000.L,trans=virtio,access=any,msize=524288,cache=loose"
fi
case "$results" in
*,*) echo "vm-run: the results path may not contain a comma (QEMU options): $results" >&2
	exit 2 ;;
esac
console=(--qemu-opts="-chardev file,id=hconsole,path=$results/console.log -serial chardev:hconsole")

# The guest's root is the host's, read only: a Python module with no bytecode
# beside it would be compiled at each import, in every guest process
# (hottierctl compiled its package at each run: 3.5 s on 6.1 under TCG).
# Compile the repository's modules here, with the guest's interpreter.
/usr/bin/python3 -m compileall -q -j 0 "$here/../userspace" "$here/../tests" \
	>/dev/null || echo "vm-run: compileall failed; the guest compiles what it imports" >&2
# Likewise pytest's rewrite of the test modules' asserts, which it caches
# beside them only where it may write bytecode: collected here, the
# guest's collection of tests/guest took 4.5 s instead of 12.7 s on 6.1.
(cd "$here/.." && env -u PYTHONDONTWRITEBYTECODE /usr/bin/python3 -m pytest \
	-p no:cacheprovider --collect-only -q tests/guest >/dev/null 2>&1) ||
	echo "vm-run: pytest could not collect tests/guest here; the guest rewrites them" >&2

# The guest runs guest-init.sh, which captures the kernel log and runs the
# command with the results directory and the caller's HOTTIER_* variables
# (HOTTIER_MODULE, for instance) in its environment. The command goes through
# a bash script, so any argument (quotes, newlines) arrives unchanged.
{
	echo '#!/usr/bin/env bash'
	env | { grep -E '^HOTTIER_[A-Z_]+=' || true; } |
		{ grep -vE '^HOTTIER_(RESULTS|VM_[A-Z_]+)=' || true; } |
		while IFS= read -r kv; do printf 'export %s=%q\n' "${kv%%=*}" "${kv#*=}"; done
	printf 'export HOTTIER_RESULTS=%q\n' "$results"
	printf 'cd %q\n' "$PWD"
	# No udev rule loads the --disk devices' driver.
	[ "$udev" = all ] ||
		echo 'modprobe -q virtio_blk 2>/dev/null || true'
	if [ "$udev" = none ]; then
		echo 'export DM_DISABLE_UDEV=1'
		printf 'exec >%q 2>&1\n' "$results/guest-output"
	fi
	printf 'exec %q' "$here/guest-init.sh"
	printf ' %q' "$@"
	echo
} > "$results/.guest-command"
guest="bash $(printf %q "$results/.guest-command")"

# boot: one guest; sets rc, and hung=1 if it had not started the command
# (guest-init.sh begins the kernel log first) boot_timeout seconds on, and
# was killed. timeout(1) passes the TERM on to vng and QEMU.
# The guest's stdout and stderr reach ours through cat: QEMU opens the
# /proc/self/fd/N it is given anew, with O_TRUNC and an offset of its own,
# so with our output in a regular file it wrote the guest's output at the
# file's start, and our messages after the run (a kernel report, a
# timeout) wrote over it there. Through a pipe, one offset is shared.
boot() {
	local pid start
	rm -f "$results/kernel.log" "$results/kernel-reports.log" \
		"$results/guest-rc" "$results/console.log" "$results/guest-output"
	rc=0
	hung=0
	timeout -k 20 "$timeout" "${udev_ns[@]}" vng --run "$kernel" "${accel[@]}" --force-9p \
		--cpus "${HOTTIER_VM_CPUS:-2}" --memory "$memory" --rwdir "$results" "${disks[@]}" \
		"${console[@]}" --append "$append" --exec "$guest" </dev/null \
		> >(cat) 2> >(cat >&2) &
	pid=$!
	start=$SECONDS
	while kill -0 "$pid" 2>/dev/null && [ ! -e "$results/kernel.log" ]; do
		if [ $((SECONDS - start)) -ge "$boot_timeout" ]; then
			hung=1
			echo "vm-run: the guest had not started the command ${boot_timeout}s after QEMU started (HOTTIER_VM_BOOT_TIMEOUT): killed" >&2
			kill -TERM "$pid" 2>/dev/null || true
			break
		fi
		sleep 1
	done
	wait "$pid" || rc=$?
	[ ! -f "$results/guest-output" ] || cat "$results/guest-output"
}

# never_started: the guest hung while booting, or ended, not by the
# timeout, before guest-init.sh began the kernel log, so no part of the
# command ran.
never_started() {
	[ "$hung" = 1 ] ||
		{ [ "$rc" != 124 ] && [ "$rc" != 137 ] &&
		  [ ! -e "$results/kernel.log" ]; }
}

console_says() {
	echo "vm-run: the guest ended (vng exit $rc) before the command ran; its console ($1) says:" >&2
	head -n 20 "$1" 2>/dev/null | sed 's/^/  | /' >&2
}

boot
if never_started; then
	mv -f "$results/console.log" "$results/console.1.log" 2>/dev/null || true
	console_says "$results/console.1.log"
	echo "vm-run: booting the guest once more" >&2
	boot
	if never_started; then
		console_says "$results/console.log"
	fi
fi
if [ "$hung" = 1 ]; then
	echo "vm-run: the guest hung while booting twice" >&2
	rc=124
elif [ "$rc" = 124 ] || [ "$rc" = 137 ]; then
	echo "vm-run: guest timed out after ${timeout}s and was killed" >&2
	rc=124
elif [ -f "$results/guest-rc" ]; then
	rc=$(cat "$results/guest-rc")
elif [ "$rc" = 0 ]; then
	echo "vm-run: guest ended without reporting the command's exit code" >&2
	rc=1
fi

if [ ! -s "$results/kernel.log" ]; then
	echo "vm-run: the guest left no kernel log in $results" >&2
	[ "$rc" != 0 ] || rc=1
elif "$here/kernel-reports.sh" "$results/kernel.log" > "$results/kernel-reports.log"; then
	echo "vm-run: kernel reports in the guest log (see $results/kernel-reports.log):" >&2
	head -20 "$results/kernel-reports.log" >&2
	[ "$rc" != 0 ] || rc=1
else
	rm -f "$results/kernel-reports.log"
fi
exit "$rc"
