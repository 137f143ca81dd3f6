#!/usr/bin/env bash
# Hit ratio on DESIGN.md's zipf workload: dm-hottier against dm-cache smq
# (writethrough; blocks equal to the extent, and 64 KiB) and the oracle
# (the best static placement, from fio's own offsets), in one guest boot
# on identical emulated devices. The guest side is tests/bench/zipf.py.
#
#   scripts/bench-zipf.sh
#
# Environment (defaults as in DESIGN.md "Performance"):
#   BENCH_SECONDS        fio runtime per configuration (150; 30 for a quick run)
#   BENCH_EXTENT         dm-hottier extent = dm-cache block, sectors (128)
#   BENCH_SSD_MB         usable SSD (slots / cache blocks), MiB (128)
#   BENCH_HDD_MB         HDD, MiB (8 x BENCH_SSD_MB)
#   BENCH_HOTTIER_ARGS   optional "key value ..." pairs for the hottier table
#   HOTTIER_RESULTS      results root (results/); output in
#                        <root>/bench/zipf-<extent>/ (report.txt, zipf.json,
#                        fio-*.json, kernel.log)
#   HOTTIER_MODULE       a built dm-hottier.ko to use instead of building
#                        the 6.1 tier (scripts/matrix.sh build 6.1)
# Needs scripts/setup.sh to have run. Takes about 2-3 x BENCH_SECONDS plus
# the guest's boot: 2 configurations at 64 KiB extents, 3 otherwise.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${HOTTIER_RESULTS:-$PWD/results}
seconds=${BENCH_SECONDS:-150}
extent=${BENCH_EXTENT:-128}
ssd_mb=${BENCH_SSD_MB:-128}
hdd_mb=${BENCH_HDD_MB:-$((8 * ssd_mb))}
hargs=${BENCH_HOTTIER_ARGS:-}

for tool in vng fio dmsetup; do
	command -v "$tool" >/dev/null || {
		echo "bench-zipf: $tool is missing: run scripts/setup.sh" >&2
		exit 2
	}
done

mkdir -p "$root"
root=$(cd "$root" && pwd)
module=${HOTTIER_MODULE:-}
if [ -z "$module" ]; then
	mkdir -p "$root/bench"
	if ! HOTTIER_RESULTS=$root scripts/matrix.sh build 6.1 \
		> "$root/bench/zipf-build.log" 2>&1; then
		tail -30 "$root/bench/zipf-build.log" >&2
		echo "bench-zipf: building dm-hottier for 6.1 failed" >&2
		exit 1
	fi
	module=$root/matrix/6.1/src/dm-hottier.ko
fi
[ -f "$module" ] || { echo "bench-zipf: no module $module" >&2; exit 2; }
module=$(realpath "$module")
kver=$(scripts/matrix.sh list | sed -n 's/^6\.1: //p')
[ -n "$kver" ] || { echo "bench-zipf: no 6.1 kernel: run scripts/setup.sh" >&2; exit 2; }

out=$root/bench/zipf-$extent
runs=2
[ "$extent" = 128 ] || runs=3
timeout=$((runs * (seconds + 120) + 600))
echo "bench-zipf: $kver, ${seconds} s per configuration, extent $extent," \
	"SSD ${ssd_mb} MiB, HDD ${hdd_mb} MiB; results in $out (at most ${timeout} s)"

# The guest's timing depends on the host's load (TCG): note it.
mkdir -p "$out"
echo "host load before: $(cat /proc/loadavg)" > "$out/host-load.txt"
rc=0
HOTTIER_MODULE=$module HOTTIER_VM_APPEND="null_blk.nr_devices=0" \
	scripts/vm-run.sh --kver "$kver" --results "$out" --timeout "$timeout" -- \
	bash -c 'set -eo pipefail
		modprobe dm-mod; modprobe dm-cache; modprobe dm-cache-smq
		modprobe null_blk nr_devices=0
		insmod "$HOTTIER_MODULE"
		python3 tests/bench/zipf.py "$@" 2>&1 | tee "$HOTTIER_RESULTS/report.txt"' \
	zipf --seconds "$seconds" --extent "$extent" --ssd-mb "$ssd_mb" \
	--hdd-mb "$hdd_mb" --hottier-args "$hargs" || rc=$?
echo "host load after: $(cat /proc/loadavg)" >> "$out/host-load.txt"
cat "$out/host-load.txt"
[ "$rc" = 0 ] || echo "bench-zipf: failed ($rc); see $out" >&2
exit "$rc"
