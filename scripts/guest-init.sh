#!/usr/bin/env bash
# Runs inside the guest (started by vm-run.sh): mounts what tests need,
# captures the kernel log into $HOTTIER_RESULTS, runs the command, records
# its exit code.
set -u
res=${HOTTIER_RESULTS:?}
modprobe configfs 2>/dev/null
mountpoint -q /sys/kernel/config || mount -t configfs none /sys/kernel/config
mountpoint -q /sys/kernel/debug || mount -t debugfs none /sys/kernel/debug
dmesg -w > "$res/kernel.log" 2>&1 &
logger=$!
rc=0
"$@" || rc=$?
sync
sleep 1
kill "$logger" 2>/dev/null
wait "$logger" 2>/dev/null
dmesg > "$res/kernel.log"
echo "$rc" > "$res/guest-rc"
exit "$rc"
