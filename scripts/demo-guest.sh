#!/usr/bin/env bash
# The demo's guest side (see demo.sh). Runs as root inside the guest.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
mnt=$(mktemp -d /tmp/hottier-demo.XXXX)
say() { printf '\n### %s\n' "$*"; }

mk_nullb() {	# name size_mb completion_nsec queue_depth
	local d=/sys/kernel/config/nullb/$1
	mkdir "$d"
	echo "$2" > "$d/size"
	echo 1 > "$d/memory_backed"
	echo 2 > "$d/irqmode"
	echo "$3" > "$d/completion_nsec"
	echo "$4" > "$d/hw_queue_depth"
	echo 1 > "$d/power"
}

cleanup() {
	umount "$mnt" 2>/dev/null || true
	dmsetup remove demo 2>/dev/null || true
	for n in demo_hdd demo_ssd; do
		[ -d /sys/kernel/config/nullb/$n ] || continue
		echo 0 > /sys/kernel/config/nullb/$n/power
		rmdir /sys/kernel/config/nullb/$n
	done
}
trap cleanup EXIT

say "Emulated devices: HDD 512 MiB, 4 ms, depth 1; SSD 128 MiB, 100 us, depth 32"
modprobe null_blk nr_devices=0
mk_nullb demo_hdd 512 4000000 1
mk_nullb demo_ssd 128 100000 32
lsblk -o NAME,SIZE /dev/demo_hdd /dev/demo_ssd

say "Load dm-hottier and create /dev/mapper/demo (1 MiB extents)"
modprobe dm-mod
insmod "$repo/dm-hottier/dm-hottier.ko"
table="0 $(blockdev --getsz /dev/demo_hdd) hottier /dev/demo_hdd /dev/demo_ssd 2048"
echo "dmsetup create demo --table \"$table\""
dmsetup create demo --table "$table"
dmsetup table demo

say "ext4 on top, mounted in /tmp"
mkfs.ext4 -q -F /dev/mapper/demo
mount /dev/mapper/demo "$mnt"
df -h "$mnt"

say "fio: 64 MiB file, 4k random reads, 10 s"
dmsetup message demo 0 reset_stats
fio --name=demo --directory="$mnt" --size=64M --rw=randread \
	--bs=4k --ioengine=libaio --iodepth=16 --direct=1 --runtime=10 \
	--time_based --randseed=4242 --group_reporting | grep -E 'read:|lat \(usec\): min|iops'

say "dmsetup status demo"
echo "fields: reads writes read_sectors write_sectors discards flushes ssd_flush_errors"
dmsetup status demo
