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

# shellcheck source=scripts/lib-bench.sh
. scripts/lib-bench.sh
bench_prepare zipf "$root"

out=$root/bench/zipf-$extent
runs=2
[ "$extent" = 128 ] || runs=3
timeout=$((runs * (seconds + 120) + 600))
echo "bench-zipf: $kver, ${seconds} s per configuration, extent $extent," \
	"SSD ${ssd_mb} MiB, HDD ${hdd_mb} MiB; results in $out (at most ${timeout} s)"

# The guest's timing depends on the host's load (TCG): bench_guest notes it.
rc=0
bench_guest "$out" "$timeout" tests/bench/zipf.py --seconds "$seconds" \
	--extent "$extent" --ssd-mb "$ssd_mb" --hdd-mb "$hdd_mb" \
	--hottier-args "$hargs" || rc=$?
cat "$out/host-load.txt"
[ "$rc" = 0 ] || echo "bench-zipf: failed ($rc); see $out" >&2
exit "$rc"
