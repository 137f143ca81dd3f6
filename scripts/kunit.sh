#!/usr/bin/env bash
# Run dm-hottier's KUnit suites with kunit.py on UML, from Debian's
# linux-source tree with dm-hottier linked in-tree under drivers/md through
# the top-level Kconfig. Ends with "kunit: N passed, N failed".
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
. "$repo/scripts/lib-kernel-src.sh"

fail() { echo "kunit: $*" >&2; echo "kunit: 0 passed, 1 failed"; exit 1; }

src=$(kernel_src) || fail "no kernel source"
build=$hottier_cache/kunit-build-$(basename "$src")

# Link the repo in: drivers/md/hottier/{Kconfig,dm-hottier} are symlinks, so
# the tree always builds the working copy; objects go to $build (O=).
link_in_tree() {
	local md=$src/drivers/md
	mkdir -p "$md/hottier"
	ln -sfn "$repo/Kconfig" "$md/hottier/Kconfig"
	ln -sfn "$repo/dm-hottier" "$md/hottier/dm-hottier"
	echo 'obj-y += dm-hottier/' > "$md/hottier/Kbuild"
	if ! grep -q 'drivers/md/hottier/Kconfig' "$md/Kconfig"; then
		# Inside "if MD ... endif": before the file's last endif.
		tac "$md/Kconfig" | awk '!done && /^endif/ {
			print; print "source \"drivers/md/hottier/Kconfig\""; print "";
			done=1; next } { print }' | tac > "$md/Kconfig.new"
		mv "$md/Kconfig.new" "$md/Kconfig"
	fi
	grep -q '^obj-y += hottier/' "$md/Makefile" ||
		echo 'obj-y += hottier/' >> "$md/Makefile"
}

link_in_tree
# Our objects were built from whichever working copy was linked last, and
# mtimes cannot tell (a checkout or rebase may give older ones): rebuild
# them, a few seconds.
rm -rf "$build/drivers/md/hottier"
# The out-of-tree build leaves objects in dm-hottier/; the in-tree O= build
# refuses a source directory with build products in it.
make -C "$repo" -s clean >/dev/null 2>&1 || true

log=$(mktemp)
trap 'rm -f "$log"' EXIT
rc=0
(cd "$src" && python3 tools/testing/kunit/kunit.py run \
	--kunitconfig="$repo/dm-hottier/.kunitconfig" \
	--build_dir="$build" --jobs="$(nproc)") 2>&1 | tee "$log" || rc=$?

# kunit.py's own summary: "Testing complete. Ran N tests: passed: P, failed: F..."
summary=$(grep -E 'Testing complete\. Ran [0-9]+ tests' "$log" | tail -1 || true)
[ -n "$summary" ] || fail "no test results (build or boot failed, rc=$rc)"
p=$(sed -nE 's/.*passed: ([0-9]+).*/\1/p' <<<"$summary")
f=$(sed -nE 's/.*failed: ([0-9]+).*/\1/p' <<<"$summary")
e=$(sed -nE 's/.*errors: ([0-9]+).*/\1/p' <<<"$summary")
f=$(( ${f:-0} + ${e:-0} ))
[ "$rc" != 0 ] && [ "$f" = 0 ] && f=1
echo "kunit: ${p:-0} passed, $f failed"
[ "$f" = 0 ]
