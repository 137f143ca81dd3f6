#!/usr/bin/env bash
# Print the newest installed Debian kernel version that has a real build tree
# (/lib/modules/<ver>/build/Makefile) and a matching /boot/vmlinuz-<ver>.
# The module is built against it and the guest runner boots it.
set -euo pipefail
best=
for d in /lib/modules/*/; do
	v=$(basename "$d")
	[ -f "$d/build/Makefile" ] && [ -f "/boot/vmlinuz-$v" ] || continue
	best=$(printf '%s\n%s\n' "$best" "$v" | sed '/^$/d' | sort -V | tail -1)
done
if [ -z "$best" ]; then
	echo "kver: no kernel with both /lib/modules/<ver>/build and /boot/vmlinuz-<ver>; run 'make setup'" >&2
	exit 1
fi
echo "$best"
