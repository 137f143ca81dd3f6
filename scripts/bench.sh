#!/usr/bin/env bash
# Benchmarks, outside CI (make bench). Builds the module for the 6.1 tier
# and runs, each in one guest boot so the figures compared are measured
# side by side:
#   1. overhead: dm-hottier against dm-linear on zero-latency devices
#      (random reads, sequential reads, write-through writes), as IOPS
#      ratios, then at queue depth against dm-linear and md RAID1, each
#      the median of paired runs in alternating order (tests/lib/overhead.py;
#      OVERHEAD_SECONDS, default 10; OVERHEAD_ROUNDS, default 5), after an
#      A/A control (dm-linear against a second dm-linear, the misses'
#      pairing: the method's own spread; OVERHEAD_CONTROL=0 skips it);
#   2. hit ratio on a zipf workload against dm-cache smq and the oracle
#      (scripts/bench-zipf.sh; BENCH_SECONDS, default 150);
#   3. routing and migration QoS: tests/guest/test_routing.py with longer
#      runs (ROUTING_SECONDS per run, default 20): the saturated-SSD
#      throughput ratio and the foreground p99 during a promotion burst,
#      in results/bench/routing/*.json;
#   4. one blktrace of the zipf workload on dm-hottier, after a warm-up
#      (scripts/bench-trace.sh: hottierctl trace, iowatcher's graph as
#      PNG), in results/bench/trace/;
#   5. issue 14's workloads (scripts/bench-workloads.sh: moving hot set,
#      streaming listeners, backup scan, SoftLayer, capture writer; each
#      beside dm-cache smq, dm-linear and the oracle; WORKLOADS_SECONDS,
#      default 30; BENCH_WORKLOADS), in results/bench/<workload>/;
#   6. the report: results/bench/report.md with PNG plots (hit ratio over
#      time against the oracle, latency CDF, IOPS and overhead ratios),
#      issue 14's goals with PASS or FAIL, report.json, and
#      performance.rst with its plots in performance/, over whatever
#      results/bench/ holds (tests/bench/bench_report.py);
#   7. the committed page: performance.rst and performance/*.png copied
#      into Documentation/, so that a run refreshes
#      Documentation/performance.rst (the module's version and commit in
#      its header, as they were when the run began).
# Results: results/bench/.
#
# BENCH=quick (make bench BENCH=quick) runs instead what make check runs in
# its measurement boot: the zipf workload for 30 s a system beside dm-cache
# smq and the oracle, with loose floors (tests/guest/test_bench_quick.py),
# and its report; results in results/bench-quick/ (report.md, plots,
# zipf-128/), and Documentation/ is left as it is. About 2 minutes with
# the guest's boot.
set -euo pipefail
cd "$(dirname "$0")/.."
out=${HOTTIER_RESULTS:-$PWD/results}
case "${BENCH:-full}" in
quick | full) ;;
*) echo "bench: BENCH=${BENCH}: quick or full" >&2; exit 2 ;;
esac
scripts/setup.sh >/dev/null
# The module the run measures: this tree's, as it is now.
ver="$(cat VERSION), git $(git describe --always --dirty 2>/dev/null ||
	echo '(not a git checkout)')"
HOTTIER_RESULTS=$out scripts/matrix.sh build 6.1 >/dev/null
kver=$(scripts/matrix.sh list | sed -n 's/^6\.1: //p')
if [ "${BENCH:-full}" = quick ]; then
	q=$out/bench-quick
	rm -rf "$q"
	mkdir -p "$q"
	rc=0
	HOTTIER_MODULE=$out/matrix/6.1/src/dm-hottier.ko \
	HOTTIER_VM_APPEND="null_blk.nr_devices=0" HOTTIER_BENCH_QUICK_OUT=$q \
		scripts/vm-run.sh --kver "$kver" --results "$q" --timeout 900 -- \
		scripts/guest-suite.sh -s tests/guest/test_bench_quick.py || rc=$?
	MPLBACKEND=Agg /usr/bin/python3 tests/bench/bench_report.py "$q" \
		--module-version "$ver" || rc=1
	exit "$rc"
fi
mkdir -p "$out/bench"
# A step that fails (a goal missed, a guest test failing) still leaves the
# next ones to run and the report to be written; the exit status says so.
rc=0
HOTTIER_MODULE=$out/matrix/6.1/src/dm-hottier.ko \
HOTTIER_VM_APPEND="null_blk.nr_devices=0" \
HOTTIER_OVERHEAD_SECONDS=${OVERHEAD_SECONDS:-10} \
HOTTIER_OVERHEAD_ROUNDS=${OVERHEAD_ROUNDS:-5} \
HOTTIER_OVERHEAD_CONTROL=${OVERHEAD_CONTROL:-1} \
	scripts/vm-run.sh --kver "$kver" --results "$out/bench/overhead" \
	--timeout 2400 -- bash -c 'modprobe dm-mod; modprobe null_blk nr_devices=0;
		insmod "$HOTTIER_MODULE" && OVERHEAD_SECONDS=$HOTTIER_OVERHEAD_SECONDS \
		OVERHEAD_ROUNDS=$HOTTIER_OVERHEAD_ROUNDS \
		OVERHEAD_CONTROL=$HOTTIER_OVERHEAD_CONTROL python3 tests/lib/overhead.py' ||
	rc=$?
secs=${ROUTING_SECONDS:-20}
HOTTIER_MODULE=$out/matrix/6.1/src/dm-hottier.ko \
HOTTIER_VM_APPEND="null_blk.nr_devices=0" \
HOTTIER_ROUTING_SECONDS=$secs \
	scripts/vm-run.sh --kver "$kver" --results "$out/bench/routing" \
	--memory 6G --timeout $((secs * 40 + 900)) -- \
	scripts/guest-suite.sh tests/guest/test_routing.py || rc=$?
if [ -x scripts/bench-zipf.sh ]; then
	# Its zipf.json is written even when it reports problems: report them.
	HOTTIER_RESULTS=$out scripts/bench-zipf.sh || rc=$?
fi
# One trace for the report: hottierctl trace during zipf.
HOTTIER_RESULTS=$out HOTTIER_MODULE=$out/matrix/6.1/src/dm-hottier.ko \
	scripts/bench-trace.sh || rc=$?
# Issue 14's workloads: BENCH_WORKLOADS selects, WORKLOADS_SECONDS is
# their runtime scale (BENCH_SECONDS of scripts/bench-workloads.sh,
# default 30: about 21 minutes), BENCH_EXTENT their extent as zipf's.
HOTTIER_RESULTS=$out HOTTIER_MODULE=$out/matrix/6.1/src/dm-hottier.ko \
BENCH_SECONDS=${WORKLOADS_SECONDS:-30} \
	scripts/bench-workloads.sh || rc=$?
# Debian's python3, which python3-matplotlib is installed for.
MPLBACKEND=Agg /usr/bin/python3 tests/bench/bench_report.py "$out/bench" \
	--module-version "$ver"
# The committed page, its plots replacing the last run's.
cp "$out/bench/performance.rst" Documentation/performance.rst
rm -rf Documentation/performance
if [ -d "$out/bench/performance" ]; then
	cp -r "$out/bench/performance" Documentation/performance
fi
echo "bench: Documentation/performance.rst written from $out/bench"
exit "$rc"
