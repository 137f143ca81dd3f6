#!/usr/bin/env bash
# A real boot (issue 15): Debian bookworm with systemd as PID 1 under QEMU
# TCG (scripts/boot-image.sh, scripts/boot-run.sh), hottier.service and
# /etc/hottiertab creating the device at boot, /etc/fstab mounting its
# ext4 by UUID, a reboot that must come back warm, and a hard kill of QEMU
# that must come back clean. tests/boot/boot_check.py runs in the guest.
#
#   scripts/boot-test.sh [--kver VER] [--module KO] [--results DIR]
#
# Five boots, each its own QEMU (boot-run.sh --no-reboot: the guest's
# "systemctl reboot" shuts it down for real, then QEMU exits at the reset
# and the next boot starts), on one qcow2 overlay of the cached image and
# one pair of disks (HDD 256 MiB with serial bthdd, its ext4 made here:
# the HDD maps one to one; SSD 32 MiB, serial btssd), and a stack: a
# second device whose HDD is an md RAID1 over two disks (btmd1, btmd2,
# 64 MiB each) and SSD btssd2 (16 MiB), with an LVM volume group on top
# and an ext4 LV in fstab (made in the install boot):
#   install  project files from the "boottest" disk, systemctl reboot
#   first    checks a, systemctl reboot
#   second   checks b, reads: SIGKILL of QEMU
#   crash    checks c, power-off
#   missing  the SSD's disk absent at boot: checks d (the device came up
#            without it, degraded, mounted from the HDD); on
#            READY-TO-ATTACH the host plugs the disk in (scripts/qmp.py)
#            and the guest runs hottierctl attach; power-off
# Prints each check, the time of each boot, the figures (warm restore
# after over before), and last "boot-6.1: N passed, M failed".
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD

kver= module= res=$repo/results/boot tier=6.1
while [ $# -gt 0 ]; do
	case "$1" in
	--kver) kver=$2; shift 2 ;;
	--module) module=$2; shift 2 ;;
	--results) res=$2; shift 2 ;;
	*) echo "boot-test: unknown option $1" >&2; exit 2 ;;
	esac
done
[ -n "$kver" ] || kver=$(scripts/matrix.sh list | sed -n 's/^6\.1: //p')
passed=0 failed=0
fail_all() {
	echo "boot-test: $*"
	echo "boot-$tier: $passed passed, $((failed + 1)) failed"
	exit 1
}
if [ -z "$module" ]; then
	module=$repo/results/matrix/6.1/src/dm-hottier.ko
	if [ ! -f "$module" ]; then
		scripts/matrix.sh build 6.1 > /dev/null || fail_all "building the module failed (scripts/matrix.sh build 6.1)"
	fi
fi
[ -f "$module" ] || fail_all "no module $module"
vermagic=$(modinfo -F vermagic "$module" | cut -d' ' -f1)
[ "$vermagic" = "$kver" ] || fail_all "$module is built for '$vermagic', not $kver"

command -v qemu-img >/dev/null || {
	echo "boot-test: installing qemu-utils (qemu-img)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q qemu-utils > /dev/null ||
		fail_all "cannot install qemu-utils"
}
t0=$SECONDS
img=$(scripts/boot-image.sh --kver "$kver") || fail_all "building the image failed"
echo "boot-test: image $img (ready in $((SECONDS - t0)) s)"
initrd=()
[ -f "$(dirname "$img")/initrd.img" ] && initrd=(--initrd "$(dirname "$img")/initrd.img")

rm -rf "$res"
mkdir -p "$res"
res=$(cd "$res" && pwd)
qemu-img create -q -f qcow2 -b "$img" -F raw "$res/root.qcow2" ||
	fail_all "qemu-img create failed"

# The device's disks: its filesystem is made on the HDD here (the device
# maps the HDD one to one), so the first boot mounts it from fstab.
uuid=$(python3 -c 'import uuid; print(uuid.uuid4())')
truncate -s 256M "$res/hdd.img"
truncate -s 32M "$res/ssd.img"
for d in md1:64M md2:64M ssd2:16M; do
	truncate -s "${d#*:}" "$res/${d%%:*}.img"
done
mkfs.ext4 -q -F -U "$uuid" -L hotfs -E lazy_itable_init=0,lazy_journal_init=0 \
	"$res/hdd.img" || fail_all "mkfs.ext4 of the HDD failed"

# The "boottest" disk: the module, make install-userspace's tree, the
# guest's script and its configuration.
stage=$res/boottest
mkdir -p "$stage"
cp "$module" "$stage/dm-hottier.ko" || fail_all "cannot copy $module"
make -s install-userspace DESTDIR="$stage/destdir" > "$res/install-userspace.log" 2>&1 ||
	fail_all "make install-userspace failed (see $res/install-userspace.log)"
cp tests/boot/boot_check.py "$stage/" || fail_all "cannot copy tests/boot/boot_check.py"
printf '#!/bin/sh\nexec python3 /run/boottest/boot_check.py /run/boottest\n' > "$stage/run.sh"
cat > "$stage/config.json" <<EOF
{"name": "hot", "hdd_serial": "bthdd", "ssd_serial": "btssd",
 "extent": "256K", "uuid": "$uuid", "mountpoint": "/srv/hot",
 "channel": "/dev/ttyS1",
 "stack": {"name": "hot2", "md": "hotmd", "md_serials": ["btmd1", "btmd2"],
           "ssd_serial": "btssd2", "extent": "256K", "vg": "hotvg",
           "lv": "data", "mountpoint": "/srv/lv"}}
EOF
truncate -s 32M "$res/boottest.img"
mkfs.ext4 -q -F -L boottest -d "$stage" "$res/boottest.img" ||
	fail_all "mkfs.ext4 of the boottest disk failed"

others=(--disk "btmd1=$res/md1.img" --disk "btmd2=$res/md2.img"
	--disk "btssd2=$res/ssd2.img" --disk "boottest=$res/boottest.img")
disks=(--disk "bthdd=$res/hdd.img" --disk "btssd=$res/ssd.img" "${others[@]}")
# The missing boot: the SSD's disk is plugged in later.
late=(--disk "bthdd=$res/hdd.img" --hotplug "btssd=$res/ssd.img" "${others[@]}")

# One QEMU: boot-run.sh in the background; the channel's STAGE lines timed
# as they come; on READY-TO-KILL, SIGKILL after 2 s of reads.
# qemu_run NAME -> sets qrc.
declare -A seen_at
qemu_run() {
	local name=$1 dir=$res/$1 start pid line st
	local -a with=("${disks[@]}")
	[ "$name" = missing ] && with=("${late[@]}")
	mkdir -p "$dir"
	start=$SECONDS
	scripts/boot-run.sh --kver "$kver" --overlay "$res/root.qcow2" "${initrd[@]}" \
		--results "$dir" --timeout 600 --no-reboot "${with[@]}" \
		> "$dir/boot-run.out" 2>&1 &
	pid=$!
	while kill -0 "$pid" 2>/dev/null; do
		if [ -f "$dir/channel.log" ]; then
			while IFS= read -r line; do
				line=${line%$'\r'}
				case "$line" in
				"STAGE "*" begin"* | "STAGE "*" end"*)
					st=$(cut -d' ' -f2-3 <<<"$line")
					if [ -z "${seen_at[${name}_${st/ /_}]:-}" ]; then
						seen_at[${name}_${st/ /_}]=$((SECONDS - start))
						echo "boot-test: $name +$((SECONDS - start))s: $line"
					fi ;;
				READY-TO-ATTACH)
					if [ -z "${seen_at[${name}_attach]:-}" ]; then
						seen_at[${name}_attach]=$((SECONDS - start))
						if scripts/qmp.py "$dir/qmp.sock" plug btssd; then
							echo "boot-test: $name +$((SECONDS - start))s: the SSD's disk plugged in"
						else
							echo "boot-test: $name: plugging the SSD's disk in failed"
						fi
					fi ;;
				READY-TO-KILL)
					if [ -z "${seen_at[${name}_kill]:-}" ]; then
						seen_at[${name}_kill]=$((SECONDS - start))
						sleep 2
						if [ -f "$dir/qemu.pid" ] && kill -KILL "$(cat "$dir/qemu.pid")"; then
							echo "boot-test: $name +$((SECONDS - start))s: QEMU killed (SIGKILL) while reads ran"
						fi
					fi ;;
				esac
			done < "$dir/channel.log"
		fi
		sleep 1
	done
	wait "$pid"
	qrc=$?
	echo "boot-test: $name: QEMU ran $((SECONDS - start)) s, exit $qrc"
	cat "$dir/boot-run.out"
}

count() {
	if [ "$1" = PASS ]; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
	echo "CHECK $2 $1 ${3:-}"
}

t1=$SECONDS
boots=(install first second crash missing)
for b in "${boots[@]}"; do
	qemu_run "$b"
	if [ "$b" = second ]; then
		[ "$qrc" = 137 ] && [ -n "${seen_at[second_kill]:-}" ] &&
			count PASS host-kill "QEMU killed (SIGKILL) during the second boot's reads" ||
			count FAIL host-kill "QEMU exit $qrc, no kill (the second boot did not reach its reads)"
	else
		[ "$qrc" = 0 ] && count PASS "$b/qemu-exit" "QEMU ended at the guest's reboot or power-off" ||
			count FAIL "$b/qemu-exit" "QEMU exit $qrc"
	fi
	grep -q "^STAGE $b end" "$res/$b/channel.log" 2>/dev/null || break
done
total=$((SECONDS - t1))

# The guest's checks, its kernel logs (K| lines: each stage's dmesg) and
# the console logs.
for q in "${boots[@]}"; do
	ch=$res/$q/channel.log
	tr -d '\r' < "$ch" > "$ch.txt" 2>/dev/null || : > "$ch.txt"
	grep '^K| ' "$ch.txt" | cut -c4- > "$res/$q/kernel.log"
	grep -E '^(BLAME|J-1|J)\| ' "$ch.txt" > "$res/$q/journal.log"
	grep '^BLAME| ' "$ch.txt" | cut -c8- >> "$res/blame.txt"
	while read -r _ st name verdict detail; do
		count "$verdict" "$st/$name" "$detail"
	done < <(grep '^CHECK ' "$ch.txt")
	if ! grep -q "^STAGE $q end" "$ch.txt"; then
		count FAIL "$q/stage-ended" "the $q stage never ended (see $res/$q/console.log)"
	elif scripts/kernel-reports.sh "$res/$q/kernel.log" > "$res/$q/guest-reports.log" ||
		[ -s "$res/$q/kernel-reports.log" ]; then
		count FAIL "$q/kernel-reports" "$(cat "$res/$q/guest-reports.log" "$res/$q/kernel-reports.log" 2>/dev/null | head -5)"
	else
		count PASS "$q/kernel-reports" "no Oops/BUG/WARNING/KASAN/lockdep/hung task in the console and dmesg"
	fi
done

echo "boot-test: systemd-analyze blame | grep hottier (first boot; saved in $res/blame.txt):"
sed 's/^/  /' "$res/blame.txt" 2>/dev/null
figs=$(grep -h '^FIG ' "$res"/*/channel.log.txt | cut -c5- | tr '\n' ' ')
echo "boot-test: figures: $figs"
python3 - "$res" <<'EOF'
import re, sys
res = sys.argv[1]
figs = {}
for q in ("install", "first", "second", "crash", "missing"):
    try:
        for line in open(f"{res}/{q}/channel.log.txt"):
            if line.startswith("FIG "):
                k, v = line[4:].strip().split("=", 1)
                figs[k] = v
    except FileNotFoundError:
        pass
b = figs.get("before_slots_used")
a = figs.get("warm_restored")
if a is not None and b is not None:
    print(f"boot-test: warm after reboot: {a} replicas restored of {b} resident "
          f"({int(a) / max(1, int(b)):.2f}), pinned {figs.get('before_pinned')}")
hb, ha = figs.get("before_hit_ratio"), figs.get("after_hit_ratio")
if hb is not None and ha is not None:
    print(f"boot-test: hit ratio of a pass over the files: {hb} before the "
          f"reboot, {ha} after (after over before "
          f"x{float(ha) / max(1e-9, float(hb)):.3f})")
if "missing_dropped" in figs:
    print(f"boot-test: attached after a boot without the SSD: "
          f"{figs['missing_restored']} replicas restored, "
          f"{figs['missing_dropped']} dropped, "
          f"{figs.get('missing_pinned')} pinned")
if "crash_restored" in figs:
    print(f"boot-test: after the kill: {figs['crash_restored']} replicas restored "
          f"(of {figs.get('kill_slots_used')} resident at the kill), "
          f"{figs.get('crash_dropped')} dropped")
boots = [f"{k[:-5]} {v}" for k, v in figs.items() if k.endswith("_boot")]
if boots:
    print("boot-test: systemd-analyze time to default target: " + ", ".join(boots))
EOF
# Host-observed time of each boot: from QEMU's start to the stage's begin
# line (kernel, initramfs, systemd to the hook), and the stage itself.
for b in "${boots[@]}"; do
	s=${seen_at[${b}_${b}_begin]:-} e=${seen_at[${b}_${b}_end]:-}
	[ -n "$s" ] && echo "boot-test: boot '$b': up in $s s (wall, TCG), stage took $(( ${e:-$s} - s )) s"
done
echo "boot-test: all boots: $total s of QEMU (wall) for the scenario; logs in $res"
rm -f "$res/hdd.img" "$res/ssd.img" "$res/md1.img" "$res/md2.img" \
	"$res/ssd2.img" "$res/root.qcow2" "$res/boottest.img"
echo "boot-$tier: $passed passed, $failed failed"
[ "$failed" = 0 ]
