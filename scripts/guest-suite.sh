#!/usr/bin/env bash
# Runs inside one guest boot (scripts/matrix.sh starts it through vm-run.sh):
#   1. if HOTTIER_KUNIT_MODULE names a KUnit test module, load it: KUnit runs
#      the suites at load and prints KTAP, saved as $HOTTIER_RESULTS/kunit.ktap;
#   2. pytest over the given test paths, JUnit XML in $HOTTIER_RESULTS;
#   3. unload dm-hottier (every device is gone by then, so it must unload);
#   4. where the kernel has kmemleak: scan after the unload, report in
#      $HOTTIER_RESULTS/kmemleak.log, and fail on any leak.
set -u
res=${HOTTIER_RESULTS:?}
module=${HOTTIER_MODULE:?}
kml=/sys/kernel/debug/kmemleak
rc=0

# No scan and clear before the tests: kmemleak reports an object only once
# its contents held still from one scan to the next, so a first scan
# reports nothing and cannot set boot's leaks aside (and costs 45 s under
# KASAN). Boot leaves none: the two scans at the end would report them.

modprobe dm-mod 2>/dev/null || true
insmod "$module" || { echo "guest-suite: insmod $module failed" >&2; exit 1; }

if [ -n "${HOTTIER_KUNIT_MODULE:-}" ]; then
	mark=$(dmesg | wc -l)
	if insmod "$HOTTIER_KUNIT_MODULE"; then
		dmesg -t | tail -n +"$((mark + 1))" > "$res/kunit.ktap"
		rmmod "$(basename "$HOTTIER_KUNIT_MODULE" .ko | tr - _)" || rc=1
	else
		echo "guest-suite: insmod $HOTTIER_KUNIT_MODULE failed" >&2
		rc=1
	fi
fi

# The ten slowest tests close each boot's log: where a stage's time goes.
/usr/bin/python3 -m pytest -p no:cacheprovider -q --durations=10 "$@" \
	--junitxml="$res/junit.xml" || rc=$?

if [ -d /sys/module/dm_hottier ] && ! rmmod dm_hottier; then
	echo "guest-suite: dm_hottier does not unload after the tests" >&2
	rc=1
fi

if [ -w "$kml" ]; then
	sleep 6			# kmemleak reports objects older than 5 s
	echo scan > "$kml"
	echo scan > "$kml"
	cat "$kml" > "$res/kmemleak.log"
	if [ -s "$res/kmemleak.log" ]; then
		echo "guest-suite: kmemleak reports leaks (kmemleak.log):" >&2
		head -30 "$res/kmemleak.log" >&2
		rc=1
	fi
fi
exit "$rc"
