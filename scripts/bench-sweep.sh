#!/usr/bin/env bash
# The extent-size sweep (issue 14, the Xsan seed): the zipf workload
# (scripts/bench-zipf.sh) and the streaming listeners
# (scripts/bench-workloads.sh) at each extent size, dm-hottier beside
# dm-cache smq at the same unit and the oracle, one guest boot per
# workload and size; then results/sweep/report.md (and report.json, a PNG)
# from tests/bench/sweep_report.py.
#
#   scripts/bench-sweep.sh            (make bench-sweep)
#
# Environment:
#   SWEEP_EXTENTS     extent sizes in sectors (64 128 512 2048 8192: 32 KiB
#                     to 4 MiB)
#   BENCH_SECONDS     runtime scale of both workloads (30): zipf runs
#                     BENCH_SECONDS per system, streaming 2 x BENCH_SECONDS
#   HOTTIER_RESULTS   results root (results/); output in
#                     <root>/sweep/<extent>/bench/{zipf-<extent>,streaming}/
#                     and <root>/sweep/report.md
#   HOTTIER_MODULE    a built dm-hottier.ko instead of building the 6.1 tier
# The devices are those of each workload (SSD and HDD sizes fixed), so a
# coarser unit means fewer slots. About 7 minutes a size at 30 under TCG.
set -euo pipefail
cd "$(dirname "$0")/.."
root=${HOTTIER_RESULTS:-$PWD/results}
extents=${SWEEP_EXTENTS:-64 128 512 2048 8192}
export BENCH_SECONDS=${BENCH_SECONDS:-30}

for e in $extents; do
	case "$e" in
	'' | *[!0-9]*) echo "bench-sweep: bad extent '$e' (sectors)" >&2; exit 2 ;;
	esac
	if [ $((e & (e - 1))) -ne 0 ] || [ "$e" -lt 64 ]; then
		echo "bench-sweep: extent $e: a power of two of 64 sectors or more (dm-cache's smallest block)" >&2
		exit 2
	fi
done
if [ -z "${HOTTIER_MODULE:-}" ]; then
	HOTTIER_RESULTS=$root scripts/matrix.sh build 6.1 >/dev/null
	export HOTTIER_MODULE=$root/matrix/6.1/src/dm-hottier.ko
fi
rc=0
n=0
for e in $extents; do
	n=$((n + 1))
	echo "bench-sweep: extent $e sectors ($n of $(wc -w <<<"$extents")), $(date +%T)"
	HOTTIER_RESULTS=$root/sweep/$e BENCH_EXTENT=$e scripts/bench-zipf.sh ||
		rc=1
	HOTTIER_RESULTS=$root/sweep/$e BENCH_EXTENT=$e \
		BENCH_WORKLOADS=streaming scripts/bench-workloads.sh || rc=1
done
MPLBACKEND=Agg /usr/bin/python3 tests/bench/sweep_report.py "$root/sweep" ||
	rc=1
exit $rc
