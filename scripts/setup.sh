#!/usr/bin/env bash
# Install everything dm-hottier needs to build and test, from Debian and PyPI.
# Idempotent: a second run only checks and returns in seconds.
set -euo pipefail

DEB_PKGS=(
	linux-image-amd64 linux-headers-amd64 linux-source
	qemu-system-x86 dmsetup lvm2 mdadm fio blktrace
	e2fsprogs xfsprogs btrfs-progs sparse kmod dkms
	build-essential bc bison flex libelf-dev libssl-dev xz-utils
	python3 python3-pip python3-pytest python3-matplotlib python3-docutils
	udev systemd
	busybox-static debootstrap qemu-utils librsvg2-bin
	debhelper dh-dkms dh-python lintian
)
PIP_PKGS=(virtme-ng pytest prometheus_client libcachesim)

BACKPORTS=/etc/apt/sources.list.d/bookworm-backports.sources
log() { printf 'setup: %s\n' "$*"; }

need_root() {
	if [ "$(id -u)" -ne 0 ]; then
		echo "setup: must run as root (apt-get install)" >&2
		exit 1
	fi
}

missing_debs() {
	local p
	for p in "${DEB_PKGS[@]}"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null |
			grep -q 'install ok installed' || echo "$p"
	done
}

missing_pips() {
	local p
	for p in "${PIP_PKGS[@]}"; do
		python3 -m pip show -q "$p" >/dev/null 2>&1 || echo "$p"
	done
}

need_root
mapfile -t debs < <(missing_debs)
if [ "${#debs[@]}" -gt 0 ]; then
	log "installing Debian packages: ${debs[*]}"
	export DEBIAN_FRONTEND=noninteractive
	apt-get update -q
	apt-get install -y -q --no-install-recommends "${debs[@]}"
else
	log "Debian packages present"
fi

# The 6.12 LTS tier of the kernel matrix: Debian builds it for bookworm
# (bookworm-backports, and bookworm-security carries it too) with gcc-12.
# Add the backports source once; install the newest 6.12 image and headers
# unless some 6.12 kernel with headers is there already.
have_612() {
	local d
	for d in /lib/modules/6.12.*+deb12-amd64; do
		[ -f "$d/build/Makefile" ] && [ -f "/boot/vmlinuz-${d##*/}" ] && return 0
	done
	return 1
}

if ! have_612; then
	if [ ! -f "$BACKPORTS" ]; then
		log "adding bookworm-backports to apt sources"
		cat > "$BACKPORTS" <<'SRC'
Types: deb
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
SRC
	fi
	apt-get update -q
	img=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-amd64$' |
		awk '{print $1}' | sort -V | tail -1)
	[ -n "$img" ] || { echo "setup: no linux-image-6.12.*+deb12-amd64 in apt" >&2; exit 1; }
	log "installing ${img} and its headers"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
		"$img" "${img/linux-image/linux-headers}"
else
	log "6.12 kernel and headers present"
fi

mapfile -t pips < <(missing_pips)
if [ "${#pips[@]}" -gt 0 ]; then
	log "installing from PyPI: ${pips[*]}"
	python3 -m pip install -q "${pips[@]}"
else
	log "PyPI packages present"
fi

command -v vng >/dev/null || { echo "setup: vng not on PATH after install" >&2; exit 1; }
log "done"
