#!/usr/bin/env bash
# checkpatch.pl --strict (from Debian's kernel source tree) and sparse (C=2)
# over dm-hottier/, the layering of the built objects (scripts/layers.py),
# and lintian over the Debian packages (scripts/deb.sh). Each counts as one
# test and passes when it reports nothing.
# Ends with "static: N passed, N failed".
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/scripts/lib-kernel-src.sh"
passed=0
failed=0
result() {	# name, findings
	if [ -z "$2" ]; then
		echo "PASS $1"
		passed=$((passed + 1))
	else
		printf 'FAIL %s:\n%s\n' "$1" "$2"
		failed=$((failed + 1))
	fi
}

files=$(cd "$repo" && ls dm-hottier/*.c dm-hottier/*.h | grep -v '\.mod\.c$')

if src=$(kernel_src); then
	out=$(cd "$repo" && perl "$src/scripts/checkpatch.pl" --no-tree --strict \
		--terse --show-types -f $files 2>&1 | grep -E 'ERROR|WARNING|CHECK')
	result checkpatch-strict "$out"
else
	result checkpatch-strict "no kernel source tree for checkpatch.pl"
fi

# sparse (C=2: every file, with the kernel's own CHECKFLAGS) against every
# installed kernel with headers: type annotations such as blk_mode_t differ
# between versions. Each kernel builds in its own copy of the sources.
for kdir in /lib/modules/*/build; do
	[ -f "$kdir/Makefile" ] || continue
	kver=$(basename "$(dirname "$kdir")")
	tmp=$(mktemp -d)
	cp "$repo"/dm-hottier/*.[ch] "$repo/dm-hottier/Kbuild" "$tmp/"
	rm -f "$tmp"/*.mod.c
	out=$(make -C "$kdir" M="$tmp" C=2 modules 2>&1)
	rc=$?
	findings=$(grep -E "^$tmp/[^:]+:[0-9]+:[0-9]+: (warning|error):" <<<"$out")
	[ $rc = 0 ] || findings+=$'\n'"sparse build failed (rc=$rc): $(tail -5 <<<"$out")"
	command -v sparse >/dev/null || findings="sparse is not installed"
	result "sparse-$kver" "$findings"
	# The files call each other only downward, read from the objects.
	if [ $rc = 0 ]; then
		findings=$(python3 "$repo/scripts/layers.py" "$tmp" | grep '^FAIL')
	else
		findings="no objects: the build failed"
	fi
	result "layers-$kver" "$findings"
	rm -rf "$tmp"
done

# The Debian packages, built from a copy of the tree into a temporary
# directory, and lintian over them: an error (an E: line) is a finding,
# warnings are not.
if command -v dpkg-buildpackage >/dev/null &&
	command -v lintian >/dev/null; then
	tmp=$(mktemp -d)
	if out=$("$repo/scripts/deb.sh" "$tmp" 2>&1); then
		out=$(lintian "$tmp"/*.deb 2>&1)
		rc=$?
		findings=$(grep '^E:' <<<"$out")
		# Exit status 2 is an error tag (those lines), 1 lintian's failure.
		if [ $rc != 0 ] && { [ $rc != 2 ] || [ -z "$findings" ]; }; then
			findings+=$'\n'"lintian failed (rc=$rc): $(tail -5 <<<"$out")"
		fi
	else
		findings="the package build failed: $(tail -5 <<<"$out")"
	fi
	result lintian "$findings"
	rm -rf "$tmp"
else
	result lintian "dpkg-buildpackage or lintian is not installed"
fi

echo "static: $passed passed, $failed failed"
[ "$failed" = 0 ]
