# Sourced by scripts that need Debian's kernel source tree (KUnit on UML,
# checkpatch.pl). kernel_src prints the tree, extracting the newest
# /usr/src/linux-source-*.tar.xz into ~/.cache/dm-hottier/ on first use.
# Extraction goes to a temporary directory renamed into place, so an
# interrupted run never leaves a half tree that looks usable.

hottier_cache=${HOTTIER_CACHE:-$HOME/.cache/dm-hottier}

kernel_src() {
	local tarball name tmp
	tarball=$(ls /usr/src/linux-source-*.tar.xz 2>/dev/null | sort -V | tail -1)
	if [ -z "$tarball" ]; then
		echo "no /usr/src/linux-source-*.tar.xz: run scripts/setup.sh" >&2
		return 1
	fi
	name=$(basename "$tarball" .tar.xz)
	if [ ! -f "$hottier_cache/$name/.hottier-extracted" ]; then
		echo "extracting $tarball into $hottier_cache/$name" >&2
		mkdir -p "$hottier_cache"
		tmp=$(mktemp -d "$hottier_cache/.extract.XXXXXX")
		tar -xf "$tarball" -C "$tmp" || { rm -rf "$tmp"; return 1; }
		rm -rf "${hottier_cache:?}/$name"
		mv "$tmp/$name" "$hottier_cache/$name"
		rm -rf "$tmp"
		touch "$hottier_cache/$name/.hottier-extracted"
	fi
	echo "$hottier_cache/$name"
}
