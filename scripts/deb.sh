#!/usr/bin/env bash
# The Debian packages of debian/ (dm-hottier-dkms, hottierctl), built with
# dpkg-buildpackage from a copy of the tree (its tracked and new files, as
# git sees them), so the working tree stays as it was. The .deb files go to
# DIR (default results/deb/), replacing those there; the build's log is
# DIR/build.log. Usage: scripts/deb.sh [DIR]
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
out=${1:-$repo/results/deb}
ver=$(cat "$repo/VERSION")

# The changelog's upstream version is the VERSION file's.
deb_ver=$(dpkg-parsechangelog -l "$repo/debian/changelog" -S Version)
if [ "${deb_ver%-*}" != "$ver" ]; then
	echo "deb: debian/changelog has $deb_ver, VERSION has $ver" >&2
	exit 1
fi

mkdir -p "$out"
out=$(cd "$out" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/dm-hottier-$ver
mkdir "$src"
if git -C "$repo" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
	# Files deleted but not yet staged are listed too: skip them.
	(cd "$repo" && git ls-files -co --exclude-standard -z |
		grep -zv '^results/' |
		while IFS= read -r -d '' f; do
			if [ -e "$f" ]; then printf '%s\0' "$f"; fi
		done | xargs -0 cp --parents -t "$src")
else
	(cd "$repo" && tar --exclude=./results --exclude-vcs -cf - .) |
		tar -C "$src" -xf -
fi

if ! (cd "$src" && dpkg-buildpackage -us -uc -b) >"$tmp/build.log" 2>&1; then
	cp "$tmp/build.log" "$out/build.log"
	tail -20 "$out/build.log" >&2
	echo "deb: dpkg-buildpackage failed; the log is $out/build.log" >&2
	exit 1
fi
cp "$tmp/build.log" "$out/build.log"
rm -f "$out"/*.deb
mv "$tmp"/*.deb "$out/"
ls "$out"/*.deb
