#!/usr/bin/env bash
# A small Debian bookworm root filesystem for a real systemd boot under QEMU
# (scripts/boot-run.sh, scripts/boot-test.sh), built once and cached:
#
#   scripts/boot-image.sh [--kver VER]      prints the image's path
#
# debootstrap --variant=minbase with systemd, udev, kmod, python3,
# e2fsprogs and dmsetup, from the mirror apt uses; the kernel's modules a
# guest needs after the initrd (dm, block, virtio, ext4 and what they
# depend on) copied from the host's /lib/modules/VER; a persistent journal;
# and one generic unit, hottier-boot-test.service, which after
# multi-user.target mounts the disk with serial "boottest" read-only and
# runs its run.sh (nothing happens without that disk). No project file is
# in the image: boot-test.sh brings them on that disk, so the image is
# rebuilt only when this script, the package list or the kernel changes.
#
# The result is a raw ext4 image (mkfs.ext4 -d) under
# ~/.cache/dm-hottier/boot-image-<key>/root.img, where key hashes those
# inputs, and beside it initrd.img, a small initramfs that mounts it (with
# busybox-static; without it, boot-run.sh boots Debian's initrd). Runs
# boot a qcow2 overlay over it and never write it. Older keys' directories
# are removed once a new image is built.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
kver=${KVER:-}
while [ $# -gt 0 ]; do
	case "$1" in
	--kver) kver=$2; shift 2 ;;
	*) echo "boot-image: unknown option $1" >&2; exit 2 ;;
	esac
done
[ -n "$kver" ] || kver=$(ls /lib/modules | grep -E '^6\.1\..*-amd64$' | sort -V | tail -1)
[ -d "/lib/modules/$kver/kernel" ] || { echo "boot-image: no /lib/modules/$kver" >&2; exit 2; }

SUITE=bookworm
# lvm2 and mdadm: the second device of boot-test.sh has an md RAID1 for
# HDD and LVM on top.
PACKAGES=systemd,systemd-sysv,udev,kmod,python3,e2fsprogs,dmsetup,lvm2,mdadm
SIZE=1200M
# The modules copied from the host, with their dependencies: those the
# guest needs after the initrd, and no more (every module a device or the
# CPU's modalias could load costs a modprobe under TCG, and a loop module
# would bring 8 loop devices, each an event for the member rules).
MODULES="dm-mod virtio_blk virtio_pci virtio_rng ext4 crc32c_generic crc32c-intel raid1"

# The mirror apt uses (deb822 or one-line sources).
mirror() {
	local m
	m=$(grep -hE '^URIs:' /etc/apt/sources.list.d/*.sources 2>/dev/null |
		awk '{print $2}' | grep -v security | head -1 || true)
	[ -n "$m" ] || m=$(grep -hE '^deb ' /etc/apt/sources.list /etc/apt/sources.list.d/*.list 2>/dev/null |
		awk '{print $2}' | grep -v security | head -1 || true)
	echo "${m:-http://deb.debian.org/debian}"
}
MIRROR=$(mirror)

key=$( { cat "$0"; echo "$SUITE $PACKAGES $SIZE $MIRROR $kver"; } | sha256sum | cut -c1-16)
cache=${HOTTIER_BOOT_CACHE:-$HOME/.cache/dm-hottier}/boot-image-$key
img=$cache/root.img
if [ -f "$img" ] && [ -f "$cache/done" ]; then
	echo "$img"
	exit 0
fi

command -v debootstrap >/dev/null || {
	echo "boot-image: installing debootstrap" >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q debootstrap >&2
}
command -v mkfs.ext4 >/dev/null || { echo "boot-image: no mkfs.ext4" >&2; exit 2; }

rm -rf "$cache"
mkdir -p "$cache"
tree=$cache/tree
start=$SECONDS
echo "boot-image: debootstrap $SUITE from $MIRROR into $tree" >&2
debootstrap --variant=minbase --include="$PACKAGES" "$SUITE" "$tree" "$MIRROR" \
	> "$cache/debootstrap.log" 2>&1 || {
	tail -n 30 "$cache/debootstrap.log" >&2
	echo "boot-image: debootstrap failed (log: $cache/debootstrap.log)" >&2
	exit 1
}

# Configuration.
echo hottier-boot > "$tree/etc/hostname"
printf '127.0.0.1 localhost\n127.0.1.1 hottier-boot\n' > "$tree/etc/hosts"
printf '/dev/vda / ext4 defaults 0 0\n' > "$tree/etc/fstab"
mkdir -p "$tree/var/log/journal" "$tree/srv"
# Root without a password on the serial console, for debugging by hand.
sed -i 's|^root:[^:]*:|root::|' "$tree/etc/shadow"
# Nothing on the timers' minds during a test.
for t in apt-daily.timer apt-daily-upgrade.timer e2scrub_all.timer fstrim.timer \
	dpkg-db-backup.timer mdcheck_start.timer mdcheck_continue.timer \
	mdmonitor-oneshot.timer mdmonitor.service; do
	ln -sf /dev/null "$tree/etc/systemd/system/$t"
done
rm -rf "$tree/var/cache/apt/archives/"*.deb "$tree/var/lib/apt/lists/"* \
	"$tree/usr/share/doc" "$tree/usr/share/man" "$tree/usr/share/locale"

# The generic test hook.
cat > "$tree/etc/systemd/system/hottier-boot-test.service" <<'EOF'
# scripts/boot-image.sh: runs run.sh from the disk with serial "boottest"
# once the system is up (nothing without that disk).
[Unit]
Description=dm-hottier boot test hook
After=multi-user.target

[Service]
# exec, not oneshot: the boot is finished (systemd-analyze works) while
# the test runs (tests/boot/boot_check.py waits for the boot to finish).
Type=exec
ExecStart=/usr/local/libexec/hottier-boot-hook
StandardOutput=journal+console
StandardError=journal+console
TimeoutStartSec=infinity

[Install]
WantedBy=multi-user.target
EOF
mkdir -p "$tree/usr/local/libexec"
cat > "$tree/usr/local/libexec/hottier-boot-hook" <<'EOF'
#!/bin/sh
# hottier-boot-test.service: run.sh from the "boottest" disk, if any.
dev=/dev/disk/by-id/virtio-boottest
udevadm settle -t 30 || true
[ -e "$dev" ] || { echo "hottier-boot-hook: no $dev, nothing to do"; exit 0; }
mkdir -p /run/boottest
mountpoint -q /run/boottest || mount -o ro "$dev" /run/boottest || exit 1
exec /bin/sh /run/boottest/run.sh
EOF
chmod 0755 "$tree/usr/local/libexec/hottier-boot-hook"
ln -sf /etc/systemd/system/hottier-boot-test.service \
	"$tree/etc/systemd/system/multi-user.target.wants/hottier-boot-test.service"

# The kernel's modules.
moddst=$tree/lib/modules/$kver
for m in $MODULES; do
	modprobe -S "$kver" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
done | sort -u | while read -r ko; do
	mkdir -p "$tree$(dirname "$ko")"
	cp -a "$ko" "$tree$ko"
done
cp -a /lib/modules/"$kver"/modules.builtin* /lib/modules/"$kver"/modules.order "$moddst/"
depmod -b "$tree" "$kver"

# A small initramfs of our own: busybox-static and the modules that mount
# the root (virtio-blk, ext4), nothing else. Debian's initrd works too
# (boot-run.sh --initrd), but its udev, RAID and btrfs modules and the
# AHCI probe of q35's SATA ports cost about 10 s a boot under TCG.
initramfs() {
	local dir=$cache/initramfs m ko
	rm -rf "$dir"
	mkdir -p "$dir/bin" "$dir/dev" "$dir/proc" "$dir/sys" "$dir/root" "$dir/mods"
	cp /usr/bin/busybox "$dir/bin/busybox"
	for m in virtio_pci virtio_blk ext4 crc32c_generic; do
		modprobe -S "$kver" --show-depends "$m" | awk '$1 == "insmod" {print $2}'
	done | awk '!seen[$0]++' > "$cache/initramfs.order"
	while read -r ko; do
		cp "$ko" "$dir/mods/"
		echo "$(basename "$ko")" >> "$dir/mods/order"
	done < "$cache/initramfs.order"
	cat > "$dir/init" <<'EOF'
#!/bin/busybox sh
# scripts/boot-image.sh: load virtio-blk and ext4, mount root=, switch.
/bin/busybox mkdir -p /usr/bin /usr/sbin /sbin
/bin/busybox --install -s
mount -t proc proc /proc
mount -t sysfs sysfs /sys
mount -t devtmpfs devtmpfs /dev
while read -r m; do insmod "/mods/$m" 2>/dev/null; done < /mods/order
root=/dev/vda
for a in $(cat /proc/cmdline); do
	case "$a" in root=*) root=${a#root=} ;; esac
done
n=0
while [ ! -b "$root" ] && [ $n -lt 100 ]; do sleep 0.1; n=$((n + 1)); done
mount -t ext4 -o rw "$root" /root || { echo "initramfs: cannot mount $root"; exec sh; }
umount /proc /sys
mount --move /dev /root/dev 2>/dev/null || umount /dev
exec switch_root /root /sbin/init
EOF
	chmod 0755 "$dir/init"
	(cd "$dir" && find . | cpio -o -H newc --quiet) | gzip -1 > "$cache/initrd.img"
	rm -rf "$dir"
}
if [ -x /usr/bin/busybox ] && file /usr/bin/busybox | grep -q 'statically linked'; then
	initramfs
else
	echo "boot-image: no static busybox (busybox-static): boot with Debian's initrd" >&2
fi

echo "boot-image: mkfs.ext4 -d ($(du -sh "$tree" | cut -f1))" >&2
truncate -s "$SIZE" "$img.tmp"
mkfs.ext4 -q -F -L hottier-root -d "$tree" "$img.tmp"
mv "$img.tmp" "$img"
rm -rf "$tree"
echo "$kver $SUITE $PACKAGES $MIRROR" > "$cache/done"
for old in "$(dirname "$cache")"/boot-image-*; do
	[ "$old" = "$cache" ] || rm -rf "$old"
done
echo "boot-image: built in $((SECONDS - start)) s: $img" >&2
echo "$img"
