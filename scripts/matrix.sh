#!/usr/bin/env bash
# The kernel matrix: the module is built and tested against each kernel
# users run.
#
#   scripts/matrix.sh list            tiers and the kernel each one uses
#   scripts/matrix.sh build TIER      build the module (W=1, zero warnings)
#   scripts/matrix.sh guest TIER      run the tier's tests in one guest boot
#   scripts/matrix.sh measure TIER    run the measurement tests in one boot
#   scripts/matrix.sh system TIER     run the system tests (LVM and md
#                                     stacks, members hidden by udev)
#   scripts/matrix.sh crash TIER      run the crash tests (crash cuts,
#                                     replayed power cuts) in one boot
#   scripts/matrix.sh cli TIER        run the tests of hottierctl and its
#                                     trace in one boot
#   scripts/matrix.sh all             build and test every tier, then
#                                     cli, crash, measure and system on 6.1
#
# Tiers:
#   6.1        Debian 12's kernel (linux-image-amd64)           guest suite
#   6.12       6.12 LTS for Debian 12 (bookworm-backports)      kernel-facing
#                                                               tests (the whole
#                                                               suite in make soak)
#   7.2-debug  Debian's linux-source-7.2 built with KASAN, lockdep,
#              kmemleak and KUnit (scripts/debug-kernel.sh)     KUnit + smoke
#                                                               and race tests
# Each stage ends with one line "<stage>-<tier>: N passed, N failed".
# To add a kernel: a tier name here, its version or build in tier_*(), its
# tests and time budget in tier_tests()/tier_timeout(), and its packages in
# scripts/setup.sh.
set -uo pipefail
cd "$(dirname "$0")/.."
repo=$PWD
results=${HOTTIER_RESULTS:-$repo/results}/matrix
TIERS=(6.1 6.12 7.2-debug)

# The newest installed kernel matching a glob, with headers and an image.
newest_kver() {
	local d v best=
	for d in /lib/modules/$1/; do
		v=$(basename "$d")
		[ -f "$d/build/Makefile" ] && [ -f "/boot/vmlinuz-$v" ] || continue
		best=$v
	done
	printf '%s\n' "$best" | sort -V | tail -1
}

debug_kdir() {
	scripts/debug-kernel.sh | tail -1
}

# KDIR for a tier (the debug tier's tree is built on first use).
tier_kdir() {
	case "$1" in
	6.1) echo "/lib/modules/$(newest_kver '6.1.*-amd64')/build" ;;
	6.12) echo "/lib/modules/$(newest_kver '6.12.*+deb12-amd64')/build" ;;
	7.2-debug) debug_kdir ;;
	*) return 1 ;;
	esac
}

tier_kernel_args() {
	case "$1" in
	6.1) echo "--kver $(newest_kver '6.1.*-amd64')" ;;
	6.12) echo "--kver $(newest_kver '6.12.*+deb12-amd64')" ;;
	7.2-debug) echo "--kernel $(debug_kdir)/arch/x86/boot/bzImage --memory 4G" ;;
	esac
}

# Extra kernel command line per tier. 7.2-debug: no5lvl. Under TCG the guest
# CPU offers LA57, and with 5-level paging this KASAN kernel intermittently
# reports "wild-memory-access in do_raw_spin_lock" from an interrupt taken
# during identify_cpu() at boot, before any module is loaded (1 boot in 3
# here; 0 in 4 with no5lvl). 4-level paging is what most hosts run.
# kunit.filter=speed>slow: make check's debug boot leaves out the KUnit
# cases marked slow (a million slots walked, 100 of its KUnit's 122 s
# under KASAN); the kunit stage runs them on UML, make soak here too.
tier_append() {
	case "$1" in
	7.2-debug)
		if [ "${HOTTIER_MATRIX_FULL:-0}" = 1 ]; then
			echo "no5lvl"
		else
			echo "no5lvl kunit.filter=speed>slow"
		fi
		;;
	esac
}

# Each boot's tests, as a pytest marker expression over tests/guest (the
# markers are tests/guest/conftest.py's MARKERS; tests/README.md says which
# tier runs what, and why). make soak sets HOTTIER_MATRIX_FULL=1, which adds
# the "soak" variants and, on 6.12 and the debug kernel, the longer lists.
full() { [ "${HOTTIER_MATRIX_FULL:-0}" = 1 ]; }

# The guest suite of a tier: 6.1 runs everything but what has a boot of
# its own (measure, system, crash, cli); 6.12 what differs between the
# kernels, and the races; the debug kernel its smoke tests and the races.
tier_tests() {
	case "$1" in
	6.1)
		if full; then
			echo "not (measure or system or crash)"
		else
			echo "not (measure or system or crash or cli or soak)"
		fi
		;;
	6.12)
		if full; then
			echo "not (measure or system or crash)"
		else
			echo "(race or kernel) and not (args or soak)"
		fi
		;;
	7.2-debug)
		if full; then
			echo "race or debug or debug_soak"
		else
			echo "race or debug"
		fi
		;;
	esac
}

# The other boots, each on 6.1: make check runs the crash, cli and system
# tests from its queue, and the measurements last, alone on an idle host
# (scripts/check.sh).
boot_tests() {
	case "$1" in
	measure) echo "measure" ;;
	system) echo "system" ;;
	crash) echo "crash and not (measure or soak)" ;;
	cli) if full; then echo "cli"; else echo "cli and not soak"; fi ;;
	esac
}

# Each boot's time limit: above its stage's budget in scripts/check.sh,
# which is the check. make check runs two guests at a time there, with one
# vCPU each on two cores: its crash boot was killed at 1200 s, five of its
# seven tests done, and its 6.1 suite took 1704 s.
tier_timeout() {
	case "$1" in
	6.1) echo 2400 ;;
	7.2-debug) echo 2400 ;;
	*) echo 1500 ;;
	esac
}

boot_timeout() {
	case "$1" in
	system | cli) echo 1200 ;;
	crash) echo 2400 ;;
	measure) echo 1100 ;;
	*) echo 1800 ;;
	esac
}

# The udev each boot's guest gets (HOTTIER_VM_UDEV, scripts/vm-run.sh):
# the system and cli tests want LVM's, md's and the by-id rules; the other
# boots want device-mapper's rules alone (a settle of 3 s where all rules
# took 34), and the debug kernel none (udev took 374 s of its boot even
# with the dm rules alone).
boot_udev() {
	case "$1/$2" in
	guest/7.2-debug) echo none ;;
	guest/* | crash/* | measure/*) echo dm ;;
	*) echo all ;;
	esac
}

known_tier() {
	local t
	for t in "${TIERS[@]}"; do [ "$t" = "$1" ] && return 0; done
	echo "matrix: unknown tier '$1' (tiers: ${TIERS[*]})" >&2
	return 1
}

# Build in a copy of the sources: one out-of-tree build directory per
# kernel, so tiers never share object files.
build() {
	local tier=$1 kdir out src log rc extra=()
	kdir=$(tier_kdir "$tier")
	out=$results/$tier
	src=$out/src
	log=$out/build.log
	if [ ! -f "$kdir/Makefile" ]; then
		echo "matrix: no kernel tree for tier $tier ($kdir): run scripts/setup.sh"
		echo "build-$tier: 0 passed, 1 failed"
		return 1
	fi
	rm -rf "$src"
	mkdir -p "$src"
	cp dm-hottier/*.c dm-hottier/*.h dm-hottier/Kbuild "$src/"
	# A kernel with KUnit also gets the test module.
	grep -q '^CONFIG_KUNIT=y' "$kdir/.config" 2>/dev/null && extra=(HOTTIER_KUNIT=1)
	# Build with the compiler the kernel was built with (it records it).
	grep -q '^CONFIG_CC_VERSION_TEXT="gcc-12 ' "$kdir/.config" 2>/dev/null &&
		extra+=(CC=gcc-12)
	echo "matrix: building for $tier against $kdir ${extra[*]}"
	make -C "$kdir" M="$src" W=1 "${extra[@]}" modules > "$log" 2>&1
	rc=$?
	cat "$log"
	if [ $rc != 0 ] || [ ! -f "$src/dm-hottier.ko" ]; then
		echo "build-$tier: 0 passed, 1 failed"
		return 1
	fi
	if grep -E 'warning:|error:' "$log" >/dev/null; then
		echo "matrix: W=1 warnings building for $tier"
		echo "build-$tier: 0 passed, 1 failed"
		return 1
	fi
	echo "build-$tier: 1 passed, 0 failed"
}

# Counts from the guest's JUnit XML and KTAP, one line.
count_results() {
	python3 scripts/count-results.py "$@"
}

# One guest boot of a tier's build: "guest" runs the tier's tests (and
# KUnit where built), "measure" the measurement tests, "system" the system
# tests, "crash" the crash tests, "cli" the tests of hottierctl.
boot() {
	local what=$1 tier=$2 out src rc=0 args kunit= tests timeout cuts
	# Crash cuts per write policy (tests/guest/test_crash.py): the issue's
	# 25 on 6.1, one on the debug kernel in make soak (2.5 minutes under KASAN);
	# make soak sets more.
	cuts=${HOTTIER_CRASH_CUTS:-}
	[ "$tier" = 7.2-debug ] && cuts=${cuts:-1}
	out=$results/$tier
	src=$out/src
	if [ ! -f "$src/dm-hottier.ko" ]; then
		echo "matrix: tier $tier is not built"
		echo "$what-$tier: 0 passed, 1 failed"
		return 1
	fi
	if [ "$what" = guest ]; then
		[ -f "$src/dm-hottier-test.ko" ] && kunit=$src/dm-hottier-test.ko
		tests=$(tier_tests "$tier")
		timeout=$(tier_timeout "$tier")
	elif [ "$tier" = 7.2-debug ]; then
		echo "matrix: only the guest suite on the debug kernel (KASAN and lockdep set the timings)"
		echo "$what-$tier: 0 passed, 1 failed"
		return 1
	else
		tests=$(boot_tests "$what")
		timeout=$(boot_timeout "$what")
	fi
	read -r -a args <<<"$(tier_kernel_args "$tier")"
	rm -rf "${out:?}/$what"
	# shellcheck disable=SC2086
	env ${cuts:+HOTTIER_CRASH_CUTS=$cuts} \
	HOTTIER_VM_UDEV=${HOTTIER_VM_UDEV:-$(boot_udev "$what" "$tier")} \
	HOTTIER_MODULE=$src/dm-hottier.ko HOTTIER_KUNIT_MODULE=$kunit \
	HOTTIER_VM_APPEND="null_blk.nr_devices=0 $(tier_append "$tier")" \
		scripts/vm-run.sh "${args[@]}" --results "$out/$what" \
		--timeout "$timeout" -- \
		scripts/guest-suite.sh tests/guest -m "$tests" || rc=$?
	if [ -f "$out/$what/bench-quick/zipf-128/zipf.json" ]; then
		# The quick bench's report, on the host: plots need no guest.
		MPLBACKEND=Agg /usr/bin/python3 tests/bench/bench_report.py \
			"$out/$what/bench-quick" >/dev/null || rc=1
	fi
	count_results "$what-$tier" "$rc" "$out/$what/junit.xml" \
		${kunit:+"$out/$what/kunit.ktap"}
}

case "${1:-}" in
list)
	for t in "${TIERS[@]}"; do
		case "$t" in
		7.2-debug) echo "$t: linux-source-7.2 debug build (scripts/debug-kernel.sh)" ;;
		*) echo "$t: $(basename "$(dirname "$(tier_kdir "$t")")")" ;;
		esac
	done
	;;
build)
	[ $# = 2 ] && known_tier "$2" || { echo "usage: $0 $1 TIER" >&2; exit 2; }
	build "$2"
	;;
guest | measure | system | crash | cli)
	[ $# = 2 ] && known_tier "$2" || { echo "usage: $0 $1 TIER" >&2; exit 2; }
	boot "$1" "$2"
	;;
all)
	fail=0
	for t in "${TIERS[@]}"; do
		build "$t" || fail=1
		boot guest "$t" || fail=1
	done
	boot cli 6.1 || fail=1
	boot crash 6.1 || fail=1
	boot measure 6.1 || fail=1
	boot system 6.1 || fail=1
	exit $fail
	;;
*)
	sed -n '2,30p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac
