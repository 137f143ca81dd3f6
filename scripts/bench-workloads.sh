#!/usr/bin/env bash
# Issue 14's workloads (tests/bench/workloads.py): a hot set that moves,
# streaming listeners, a backup scan during zipf, SoftLayer's 8k random
# reads and 70/30 mix at iodepth 128, and a capture writer beside
# promotions; each on dm-hottier, dm-cache smq writethrough (same unit,
# defaults) and dm-linear over the HDD, with the static oracle from the
# workload's own offsets, all in one guest boot on identical emulated
# devices.
#
#   scripts/bench-workloads.sh
#
# Environment:
#   BENCH_WORKLOADS      comma list of moving,streaming,backup,softlayer,
#                        capture (default: all)
#   BENCH_SECONDS        runtime scale S (30): per system, moving runs 2 S,
#                        streaming 2 S, backup 2 S twice, softlayer 2 runs
#                        of S, capture S
#   BENCH_EXTENT         dm-hottier extent = dm-cache block, sectors (128);
#                        the extent-size sweep runs this at several sizes
#   BENCH_SSD_MB         usable SSD, MiB (32)
#   BENCH_HDD_MB         HDD, MiB (256)
#   BENCH_HOTTIER_ARGS   optional "key value ..." pairs for the hottier table
#   BENCH_BUDGET_US      capture: migration_budget_us of the budget run (20000)
#   HOTTIER_RESULTS      results root (results/); output in
#                        <root>/bench/<workload>/<workload>.json, fio JSON,
#                        and <root>/bench/workloads/ (report.txt,
#                        kernel.log, host-load.txt)
#   HOTTIER_MODULE       a built dm-hottier.ko instead of building the 6.1
#                        tier (scripts/matrix.sh build 6.1)
# Needs scripts/setup.sh to have run. 30 x BENCH_SECONDS of fio, about
# 15 s more for each of the 20 configurations and the guest's boot: about
# 21 minutes at 30 under TCG on a loaded 2-core host.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${HOTTIER_RESULTS:-$PWD/results}
seconds=${BENCH_SECONDS:-30}
extent=${BENCH_EXTENT:-128}
ssd_mb=${BENCH_SSD_MB:-32}
hdd_mb=${BENCH_HDD_MB:-256}
hargs=${BENCH_HOTTIER_ARGS:-}
budget=${BENCH_BUDGET_US:-20000}
wls=${BENCH_WORKLOADS:-moving,streaming,backup,softlayer,capture}

# shellcheck source=scripts/lib-bench.sh
. scripts/lib-bench.sh
bench_prepare workloads "$root"

# fio seconds per workload, in units of S: moving 6, streaming 6, backup 8,
# softlayer 6, capture 4; plus about 10 s a configuration.
units=0 configs=0
for w in ${wls//,/ }; do
	case "$w" in
	moving) units=$((units + 6)); configs=$((configs + 3)) ;;
	streaming) units=$((units + 6)); configs=$((configs + 3)) ;;
	backup) units=$((units + 8)); configs=$((configs + 4)) ;;
	softlayer) units=$((units + 6)); configs=$((configs + 6)) ;;
	capture) units=$((units + 4)); configs=$((configs + 4)) ;;
	*) echo "bench-workloads: unknown workload $w" >&2; exit 2 ;;
	esac
done
timeout=$((2 * (units * seconds + configs * 20) + 600))
out=$root/bench/workloads
mkdir -p "$out"
echo "bench-workloads: $kver, $wls; S = ${seconds} s, extent $extent," \
	"SSD ${ssd_mb} MiB, HDD ${hdd_mb} MiB; results in $root/bench" \
	"(at most ${timeout} s)"
rc=0
bench_guest "$out" "$timeout" tests/bench/workloads.py --out "$out" \
	--only "$wls" --seconds "$seconds" --extent "$extent" \
	--ssd-mb "$ssd_mb" --hdd-mb "$hdd_mb" --hottier-args "$hargs" \
	--budget-us "$budget" || rc=$?
# The guest writes only under $out: each workload's directory moves up to
# $root/bench/<workload>/, replacing the last one's.
for w in ${wls//,/ }; do
	[ -d "$out/$w" ] || continue
	cp "$out/host-load.txt" "$out/$w/"
	rm -rf "${root:?}/bench/$w"
	mv "$out/$w" "$root/bench/$w"
done
cat "$out/host-load.txt"
[ "$rc" = 0 ] || echo "bench-workloads: failed ($rc); see $out" >&2
exit "$rc"
