#!/usr/bin/env bash
# One blktrace for make bench's report (issue 14, item 3): the zipf
# workload on dm-hottier in a guest boot, traced by hottierctl trace after
# a warm-up (tests/bench/trace_run.py); iowatcher's SVG converted to PNG
# here with rsvg-convert (librsvg2-bin, installed by setup).
#
#   scripts/bench-trace.sh
#
# Environment: TRACE_WARM (seconds of zipf first, 30), TRACE_SECONDS (10),
# BENCH_EXTENT (sectors, 128), HOTTIER_RESULTS (results root; output in
# <root>/bench/trace/), HOTTIER_MODULE (else the 6.1 tier is built).
set -euo pipefail
cd "$(dirname "$0")/.."
root=${HOTTIER_RESULTS:-$PWD/results}
warm=${TRACE_WARM:-30}
secs=${TRACE_SECONDS:-10}
extent=${BENCH_EXTENT:-128}

# shellcheck source=scripts/lib-bench.sh
. scripts/lib-bench.sh
bench_prepare trace "$root"
out=$root/bench/trace
rm -rf "$out"
mkdir -p "$out"
echo "bench-trace: $kver, zipf for $warm s, then $secs s traced; results in $out"
rc=0
HOTTIER_MODULE=$module HOTTIER_VM_APPEND="null_blk.nr_devices=0" \
	scripts/vm-run.sh --kver "$kver" --results "$out" \
	--timeout $((warm + secs + 600)) -- \
	bash -c 'set -eo pipefail
		modprobe dm-mod; modprobe null_blk nr_devices=0
		insmod "$HOTTIER_MODULE"
		python3 tests/bench/trace_run.py --out "$HOTTIER_RESULTS" "$@"' \
	trace --warm "$warm" --trace "$secs" --extent "$extent" || rc=$?
if [ -f "$out/trace.svg" ]; then
	if command -v rsvg-convert >/dev/null; then
		rsvg-convert -o "$out/trace.png" "$out/trace.svg" || rc=1
	else
		echo "bench-trace: rsvg-convert is missing (scripts/setup.sh): no PNG" >&2
	fi
fi
[ "$rc" = 0 ] || echo "bench-trace: failed ($rc); see $out" >&2
exit "$rc"
