#!/usr/bin/env bash
# Boot the Debian image of scripts/boot-image.sh for real (systemd as PID
# 1) under QEMU TCG, on a qcow2 overlay, with file-backed disks.
#
#   scripts/boot-run.sh --overlay QCOW2 --results DIR [--kver VER]
#                       [--initrd FILE] [--timeout SECS] [--memory SIZE]
#                       [--append ARGS] [--no-reboot] [--disk NAME=FILE]...
#                       [--hotplug NAME=FILE]...
#
# The overlay (qemu-img create -f qcow2 -b root.img -F raw) is the root disk,
# /dev/vda; it is written, its backing image never. Each --disk attaches
# FILE (raw) as a virtio-blk disk whose serial is NAME
# (/dev/disk/by-id/virtio-NAME in the guest); the files persist across the
# guest's reboots and across runs of this script. The Debian kernel of VER
# boots it, with --initrd (boot-image.sh's small one) or Debian's initrd
# of VER (it has virtio_blk and ext4: both are modules). A --hotplug disk
# is not there at boot: its drive is defined, a PCIe root port (hp-NAME)
# waits for it, and scripts/qmp.py DIR/qmp.sock plug NAME attaches it
# as --disk would have (QEMU's QMP socket is DIR/qmp.sock).
#
# The first serial port (ttyS0, the console: kernel and systemd) goes to
# DIR/console.log, the second (ttyS1, for the test's own lines) to
# DIR/channel.log; QEMU's pid is in DIR/qemu.pid while it runs, so a caller
# may kill it (SIGKILL) for a crash. A reboot in the guest restarts it in
# the same QEMU, or with --no-reboot ends the run as a power-off does (the
# caller boots again: under TCG a fresh QEMU boots in about half the time
# of a reset one here).
#
# Exit: QEMU's (0 for a power-off), 124 after the timeout (QEMU killed),
# 137 if something killed QEMU; and 1 if the console log shows a kernel
# report (Oops, BUG, WARNING, KASAN, UBSAN, lockdep, hung task, RCU
# stall, kmemleak; scripts/kernel-reports.sh, saved as
# DIR/kernel-reports.log), whatever QEMU's exit. No KVM: TCG only.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
kver=${KVER:-}
overlay= results= timeout=600 memory=2G append= initrd= noreboot=()
disks=() qmp=() ports=0
while [ $# -gt 0 ]; do
	case "$1" in
	--overlay) overlay=$2; shift 2 ;;
	--results) results=$2; shift 2 ;;
	--kver) kver=$2; shift 2 ;;
	--initrd) initrd=$2; shift 2 ;;
	--no-reboot) noreboot=(-no-reboot); shift ;;
	--timeout) timeout=$2; shift 2 ;;
	--memory) memory=$2; shift 2 ;;
	--append) append=$2; shift 2 ;;
	--disk | --hotplug)
		dname=${2%%=*}
		dfile=${2#*=}
		[[ "$dname" =~ ^[A-Za-z0-9_-]{1,20}$ ]] && [ -f "$dfile" ] || {
			echo "boot-run: --disk wants NAME=FILE (NAME: up to 20 of [A-Za-z0-9_-]), got '$2'" >&2
			exit 2
		}
		disks+=(-drive "if=none,id=hd-$dname,format=raw,file=$(realpath "$dfile")")
		if [ "$1" = --hotplug ]; then
			ports=$((ports + 1))
			disks+=(-device "pcie-root-port,id=hp-$dname,chassis=$ports,slot=$ports")
		else
			disks+=(-device "virtio-blk-pci,drive=hd-$dname,serial=$dname")
		fi
		shift 2 ;;
	*) echo "boot-run: unknown option $1" >&2; exit 2 ;;
	esac
done
[ -n "$overlay" ] && [ -f "$overlay" ] && [ -n "$results" ] || {
	echo "usage: $0 --overlay QCOW2 --results DIR [--kver VER] [--disk NAME=FILE]..." >&2
	exit 2
}
[ -n "$kver" ] || kver=$(ls /lib/modules | grep -E '^6\.1\..*-amd64$' | sort -V | tail -1)
kernel=/boot/vmlinuz-$kver
[ -n "$initrd" ] || initrd=/boot/initrd.img-$kver
[ -f "$kernel" ] && [ -f "$initrd" ] || { echo "boot-run: no $kernel or $initrd" >&2; exit 2; }
mkdir -p "$results"
results=$(cd "$results" && pwd)
case "$results$overlay" in
*,*) echo "boot-run: paths may not contain a comma (QEMU options)" >&2; exit 2 ;;
esac
rm -f "$results/console.log" "$results/channel.log" "$results/kernel-reports.log" \
	"$results/qemu.pid" "$results/qmp.sock"
[ "$ports" = 0 ] || qmp=(-qmp "unix:$results/qmp.sock,server=on,wait=off")

# TCG is slow: RCU-stall and hung-task reports for real hangs only (as
# vm-run.sh). rw root: no fsck of the root overlay at each boot.
cmdline="root=/dev/vda rw console=ttyS0,115200 panic=-1"
cmdline+=" rcupdate.rcu_cpu_stall_timeout=300 sysctl.kernel.hung_task_timeout_secs=900"
cmdline+=" systemd.show_status=1 $append"

rc=0
timeout -k 20 "$timeout" qemu-system-x86_64 \
	-machine q35 -accel tcg -cpu max -smp 2 -m "$memory" \
	-nodefaults -no-user-config -display none -vga none \
	-pidfile "$results/qemu.pid" "${noreboot[@]}" \
	-kernel "$kernel" -initrd "$initrd" -append "$cmdline" \
	-chardev "file,id=con0,path=$results/console.log" -serial chardev:con0 \
	-chardev "file,id=chan0,path=$results/channel.log" -serial chardev:chan0 \
	-drive "if=none,id=hd-root,format=qcow2,file=$(realpath "$overlay")" \
	-device virtio-blk-pci,drive=hd-root,serial=root \
	"${disks[@]}" "${qmp[@]}" \
	-device virtio-rng-pci -net none \
	</dev/null &
# In the background and waited for: a SIGKILL of QEMU (a crash on purpose)
# is an exit code, not a "Killed" line from the shell.
{ wait $! || rc=$?; } 2>/dev/null
rm -f "$results/qemu.pid"
[ "$rc" != 124 ] || echo "boot-run: the guest timed out after ${timeout}s" >&2
if "$here/kernel-reports.sh" "$results/console.log" > "$results/kernel-reports.log"; then
	echo "boot-run: kernel reports in the console log (see $results/kernel-reports.log):" >&2
	head -20 "$results/kernel-reports.log" >&2
	[ "$rc" != 0 ] || rc=1
else
	rm -f "$results/kernel-reports.log"
fi
exit "$rc"
