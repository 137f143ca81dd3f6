# shellcheck shell=bash
# Sourced by the guest benchmarks (bench-zipf.sh, bench-workloads.sh).
#
# bench_prepare NAME ROOT: the tools are there, ROOT/bench exists; sets
# root (ROOT made absolute), module (HOTTIER_MODULE, else the 6.1 tier
# built under ROOT, its log in ROOT/bench/NAME-build.log) and kver (the
# 6.1 kernel). Exits 2 if something is missing, 1 if the build fails.
bench_prepare() {
	local name=$1 tool
	for tool in vng fio dmsetup; do
		command -v "$tool" >/dev/null || {
			echo "bench-$name: $tool is missing: run scripts/setup.sh" >&2
			exit 2
		}
	done
	mkdir -p "$2/bench"
	root=$(cd "$2" && pwd)
	module=${HOTTIER_MODULE:-}
	if [ -z "$module" ]; then
		if ! HOTTIER_RESULTS=$root scripts/matrix.sh build 6.1 \
			> "$root/bench/$name-build.log" 2>&1; then
			tail -30 "$root/bench/$name-build.log" >&2
			echo "bench-$name: building dm-hottier for 6.1 failed" >&2
			exit 1
		fi
		module=$root/matrix/6.1/src/dm-hottier.ko
	fi
	[ -f "$module" ] || { echo "bench-$name: no module $module" >&2; exit 2; }
	module=$(realpath "$module")
	kver=$(scripts/matrix.sh list | sed -n 's/^6\.1: //p')
	[ -n "$kver" ] || {
		echo "bench-$name: no 6.1 kernel: run scripts/setup.sh" >&2
		exit 2
	}
}

# bench_guest OUT TIMEOUT SCRIPT ARGS...: one guest boot with dm-cache,
# null_blk and the module loaded runs python3 SCRIPT ARGS, its output
# teed to OUT/report.txt; the host's load before and after goes to
# OUT/host-load.txt (TCG timings follow it). Returns the guest's status.
bench_guest() {
	local out=$1 timeout=$2 rc=0
	shift 2
	mkdir -p "$out"
	echo "host load before: $(cat /proc/loadavg)" > "$out/host-load.txt"
	HOTTIER_MODULE=$module HOTTIER_VM_APPEND="null_blk.nr_devices=0" \
		scripts/vm-run.sh --kver "$kver" --results "$out" \
		--timeout "$timeout" -- \
		bash -c 'set -eo pipefail
			modprobe dm-mod; modprobe dm-cache; modprobe dm-cache-smq
			modprobe null_blk nr_devices=0
			insmod "$HOTTIER_MODULE"
			python3 "$@" 2>&1 | tee "$HOTTIER_RESULTS/report.txt"' \
		bench "$@" || rc=$?
	echo "host load after: $(cat /proc/loadavg)" >> "$out/host-load.txt"
	return "$rc"
}
