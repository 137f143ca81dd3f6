#!/usr/bin/env bash
# The demo's guest side (see demo.sh). Runs as root inside the guest: the
# same fio zipf workload (tests/bench/demo.fio) on an emulated bare HDD,
# then on a hottier device made by hottierctl over that HDD and an emulated
# SSD, sampled every few seconds (tests/bench/demo_report.py); then the
# device's status and a summary. Writes the figures to $HOTTIER_RESULTS
# (demo.json, demo-hdd*.json, demo-hottier*.json). HOTTIER_DEMO_SECONDS
# (default 60) is the runtime of each run, for a quicker look.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
res=${HOTTIER_RESULTS:?}
report=(/usr/bin/python3 "$repo/tests/bench/demo_report.py")
hottierctl() { "$repo/userspace/hottierctl" "$@"; }
say() { printf '\n### %s\n' "$*"; }
show() { printf '+ %s\n' "$*"; "$@"; }

# Sizing, as someone would size an SSD for this workload: an HDD of 1 GiB
# and an SSD of an eighth of it (128 MiB; the zipf benchmark's sizes).
# zipf:1.2 puts most reads on a few thousand 4 KiB blocks, which fio
# scatters over the whole HDD, then a long tail. The SSD's 2047 slots hold
# the extents that take about 89% of the reads (the best static placement,
# worked out from the distribution): the hot set fits, the tail stays on
# the HDD. 64 KiB extents (the benchmark's; the default 1 MiB suits files
# read in larger pieces) keep each scattered hot block from bringing 1 MiB
# of cold neighbours with it. Every other table key is left at its default.
# Both runs: the same job file, seed and runtime (SECONDS_EACH), a line
# every SECONDS_EACH / INTERVALS seconds.
HDD_MB=1024
HDD_LATENCY_NS=4000000	# 4 ms a request, one at a time: a disk's seek
SSD_MB=128
SSD_LATENCY_NS=100000	# 100 us, 32 at a time
EXTENT=64K
SECONDS_EACH=${HOTTIER_DEMO_SECONDS:-60}
INTERVALS=8

mk_nullb() {	# name size_mb completion_nsec queue_depth
	local d=/sys/kernel/config/nullb/$1
	mkdir "$d"
	echo "$2" > "$d/size"
	echo 1 > "$d/memory_backed"
	echo 2 > "$d/irqmode"
	echo "$3" > "$d/completion_nsec"
	echo "$4" > "$d/hw_queue_depth"
	echo 1 > "$d/power"
	udevadm settle --timeout=30 2>/dev/null || true
}

cleanup() {
	dmsetup remove demo 2>/dev/null || true
	for n in demo_hdd demo_ssd; do
		[ -d /sys/kernel/config/nullb/$n ] || continue
		echo 0 > /sys/kernel/config/nullb/$n/power
		rmdir /sys/kernel/config/nullb/$n
	done
}
trap cleanup EXIT

say "Emulated devices (null_blk): HDD $HDD_MB MiB," \
	"$((HDD_LATENCY_NS / 1000000)) ms a read, queue depth 1;" \
	"SSD $SSD_MB MiB, $((SSD_LATENCY_NS / 1000)) us, depth 32"
modprobe null_blk nr_devices=0
modprobe dm-mod
mk_nullb demo_hdd "$HDD_MB" "$HDD_LATENCY_NS" 1
mk_nullb demo_ssd "$SSD_MB" "$SSD_LATENCY_NS" 32
insmod "$repo/dm-hottier/dm-hottier.ko"
job=$(grep -E '^[a-z_]+=' "$repo/tests/bench/demo.fio" |
	grep -vE '^(filename|runtime)=' | tr '\n' ' ')
echo "workload, the same on both: fio ${job}runtime=${SECONDS_EACH}s"

# A line every interval; the plot has a point every fifth of one.
interval=$(awk "BEGIN { print $SECONDS_EACH / $INTERVALS }")
sample=$(awk "BEGIN { print $SECONDS_EACH / $INTERVALS / 5 }")
say "1. The bare HDD, /dev/demo_hdd: $SECONDS_EACH s"
"${report[@]}" run --label hdd --dev /dev/demo_hdd --seconds "$SECONDS_EACH" \
	--interval "$interval" --sample "$sample" --out "$res/demo-hdd.json"

say "2. hottier over the same HDD and the SSD"
# null_blk has no WWN or serial for hottierctl to find; a real disk's would
# name the HDD (hdd_id) for the SSD's map. This one is named by hand.
show hottierctl create demo --hdd /dev/demo_hdd --ssd /dev/demo_ssd \
	--extent-size "$EXTENT" --set hdd_id=demo-hdd
udevadm settle --timeout=30 2>/dev/null || true
echo "the same workload on /dev/mapper/demo, $SECONDS_EACH s; hit ratio:" \
	"read hits / reads in each interval, from the device's counters"
"${report[@]}" run --label hottier --dev /dev/mapper/demo --hottier \
	--seconds "$SECONDS_EACH" --interval "$interval" --sample "$sample" \
	--out "$res/demo-hottier.json"

say "3. hottierctl status demo"
hottierctl status demo

say "4. Summary"
"${report[@]}" summary "$res/demo-hdd.json" "$res/demo-hottier.json" \
	--out "$res/demo.json"
