#!/usr/bin/env bash
# Everything CI runs. Each stage prints its time; the last line counts every
# test of every stage and every kernel: "N passed, N failed". Exits non-zero
# if any failed.
set -uo pipefail
cd "$(dirname "$0")/.."
here=$PWD
res=$here/results
rm -rf "$res"
mkdir -p "$res"

passed=0
failed=0
timings=()

# Add a stage's counts from its "<name>: N passed, N failed" line; a stage
# that printed no such line, or exited non-zero with no failure, counts as
# one failed test.
count_line() {
	local name=$1 log=$2 rc=$3 line p f
	line=$(grep -E "^$name: [0-9]+ passed, [0-9]+ failed" "$log" | tail -1)
	if [ -z "$line" ]; then
		echo "check: stage $name printed no result line" >&2
		failed=$((failed + 1))
		return
	fi
	p=$(sed -E 's/.*: ([0-9]+) passed.*/\1/' <<<"$line")
	f=$(sed -E 's/.* ([0-9]+) failed.*/\1/' <<<"$line")
	[ "$rc" != 0 ] && [ "$f" = 0 ] && f=1
	passed=$((passed + p))
	failed=$((failed + f))
}

# Count a pytest stage from its JUnit XML report.
junit_line() {
	local name=$1 xml=$2
	if [ ! -s "$xml" ]; then
		echo "$name: 0 passed, 1 failed"
		return
	fi
	python3 - "$name" "$xml" <<'PY'
import sys, xml.etree.ElementTree as ET
name, path = sys.argv[1:]
root = ET.parse(path).getroot()
suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
t = sum(int(s.get("tests", 0)) for s in suites)
bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0)) for s in suites)
skip = sum(int(s.get("skipped", 0)) for s in suites)
print(f"{name}: {t - bad - skip} passed, {bad} failed, {skip} skipped")
PY
}

# Each stage's time budget in seconds, for a cold machine (the debug kernel
# building beside the guests); a stage over its budget counts as a failed
# test, so a slow drift is seen long before CI's 90 minutes.
budget_of() {
	case "$1" in
	setup) echo 1200 ;;
	static) echo 300 ;;
	kunit) echo 600 ;;
	host) echo 120 ;;
	runner) echo 400 ;;
	build-*) echo 120 ;;
	guest-6.1) echo 1200 ;;
	crash-cli-6.1) echo 1500 ;;
	guest-6.12) echo 600 ;;
	kernel-7.2-debug) echo 3000 ;;
	measure-system-6.1) echo 1500 ;;
	boot-6.1) echo 600 ;;
	kill-6.1) echo 300 ;;
	dkms) echo 300 ;;
	guest-7.2-debug) echo 2400 ;;
	*) echo 600 ;;
	esac
}

# Count a finished stage: its result line, its time against its budget;
# "note" is added to its timing line.
account() {
	local name=$1 rc=$2 took=$3 budget=$4 note=${5:-}
	count_line "$name" "$res/$name.log" "$rc"
	if [ "$took" -gt "$budget" ]; then
		echo "check: stage $name took ${took}s, over its budget of ${budget}s" >&2
		failed=$((failed + 1))
	fi
	timings+=("$name ${took}s (budget ${budget}s${note:+, $note})")
	echo "=== $name: rc=$rc, ${took}s of ${budget}s${note:+, $note}"
}

stage() {
	local name=$1 start rc budget
	shift
	budget=$(budget_of "$name")
	start=$(date +%s)
	echo "=== $name (budget ${budget}s)"
	"$@" 2>&1 | tee "$res/$name.log"
	rc=${PIPESTATUS[0]}
	account "$name" "$rc" "$(($(date +%s) - start))" "$budget"
}

setup_stage() {
	scripts/setup.sh || { echo "setup: 0 passed, 1 failed"; return 1; }
	echo "setup: 0 passed, 0 failed"
}

# The debug tier runs beside the others, in the background: its kernel
# (cached after the first build, about 20-30 minutes on a cold machine, at
# nice 19), then the module, then its guest under KASAN (CPU-bound: at
# nice 10, so that the guests of the foreground keep the CPU they ask for;
# the 6.1 and 6.12 guests spend much of their time waiting on emulated
# device latency, and the debug tier takes that idle CPU). Each of its
# stages writes its output to results/<stage>.log and its exit code and
# seconds beside it; collect() prints and counts them once they are done.
# The measurements and the systemd boot wait for the whole chain: they run
# on an idle host.
bg_stage() {
	local name=$1 start rc=0
	shift
	start=$(date +%s)
	"$@" >"$res/$name.log" 2>&1 || rc=$?
	echo "$(($(date +%s) - start))" >"$res/$name.secs"
	echo "$rc" >"$res/$name.rc"
	return "$rc"
}

# A stage the chain could not start: one failed test, so it is counted.
bg_skip() {
	echo "$1: 0 passed, 1 failed (not run: $2)" >"$res/$1.log"
	echo 0 >"$res/$1.secs"
	echo 1 >"$res/$1.rc"
}

# debug-kernel.sh says whether it reuses the cached tree or builds it.
debug_kernel() {
	local rc=0
	nice -n 19 scripts/debug-kernel.sh || rc=$?
	if [ "$rc" = 0 ]; then
		echo "kernel-7.2-debug: 1 passed, 0 failed"
	else
		echo "kernel-7.2-debug: 0 passed, 1 failed"
		return 1
	fi
}

debug_chain() {
	if ! bg_stage kernel-7.2-debug debug_kernel; then
		bg_skip build-7.2-debug "no debug kernel"
		bg_skip guest-7.2-debug "no debug kernel"
		return
	fi
	if ! bg_stage build-7.2-debug scripts/matrix.sh build 7.2-debug; then
		bg_skip guest-7.2-debug "the module did not build"
		return
	fi
	bg_stage guest-7.2-debug nice -n 10 scripts/matrix.sh guest 7.2-debug
}

debug_pid=
start_debug_chain() {
	echo "check: the debug tier starts in the background (results/*-7.2-debug.log)"
	debug_chain </dev/null &
	debug_pid=$!
}

# On an early exit, stop the chain and what it started (QEMU, make).
stop_tree() {
	local c
	for c in $(pgrep -P "$1"); do stop_tree "$c"; done
	kill "$1" 2>/dev/null
}
trap '[ -n "$debug_pid" ] && kill -0 "$debug_pid" 2>/dev/null && stop_tree "$debug_pid"' EXIT

# Wait for a background stage, then print and count it like stage() does.
collect() {
	local name=$1 start budget
	budget=$(budget_of "$name")
	start=$(date +%s)
	echo "=== $name (in the background, budget ${budget}s)"
	while [ ! -f "$res/$name.rc" ]; do sleep 5; done
	cat "$res/$name.log"
	account "$name" "$(cat "$res/$name.rc")" "$(cat "$res/$name.secs")" \
		"$budget" "in the background; waited $(($(date +%s) - start))s"
}

host_stage() {
	python3 -m pytest -p no:cacheprovider -q tests/host \
		--junitxml="$res/host.xml"
	junit_line host "$res/host.xml"
}

total_start=$(date +%s)
stage setup setup_stage
start_debug_chain
stage static scripts/static-checks.sh
stage kunit scripts/kunit.sh
stage host host_stage
stage runner scripts/test-vm-runner.sh
# The kernel matrix (scripts/matrix.sh): W=1 build and guest suite per kernel.
stage build-6.1 scripts/matrix.sh build 6.1
stage guest-6.1 scripts/matrix.sh guest 6.1
# The crash tests, then hottierctl's, in one boot (scripts/matrix.sh).
stage crash-cli-6.1 scripts/matrix.sh crash-cli 6.1
stage build-6.12 scripts/matrix.sh build 6.12
stage guest-6.12 scripts/matrix.sh guest 6.12
# A kernel crash for real: QEMU killed mid-load on file-backed disks, once,
# and the boot after checks; make soak kills it KILL_ROUNDS times, each
# kill during a load on the device the last one's takeover brought back.
stage kill-6.1 scripts/qemu-kill.sh --tier 6.1 --rounds 1 \
	--kver "$(scripts/matrix.sh list | sed -n 's/^6\.1: //p')" \
	--module results/matrix/6.1/src/dm-hottier.ko --results "$res/qemu-kill"
collect kernel-7.2-debug
collect build-7.2-debug
# DKMS against every kernel of the matrix, the 7.2 debug tree included.
stage dkms scripts/dkms-test.sh
collect guest-7.2-debug
# The timing tests, once the debug tier is done: TCG figures are only worth
# comparing on an otherwise idle host. Then, in the same boot, the device
# among LVM, md and udev (see matrix.sh).
stage measure-system-6.1 scripts/matrix.sh measure-system 6.1
# A real boot: a Debian image with systemd as PID 1 (built and cached the
# first time), hottier.service at boot and shutdown, a warm reboot, a
# hard kill (scripts/boot-test.sh). On an idle host too: beside a second
# TCG guest its first boot took 600 s against 70 s alone.
stage boot-6.1 scripts/boot-test.sh --module results/matrix/6.1/src/dm-hottier.ko \
	--results "$res/boot"

echo
echo "stage timings:"
printf '  %s\n' "${timings[@]}"
echo "  total $(($(date +%s) - total_start))s"
echo "$passed passed, $failed failed"
[ "$failed" = 0 ]
