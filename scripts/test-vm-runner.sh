#!/usr/bin/env bash
# Self-test of scripts/vm-run.sh: exit codes pass through, a hung guest is
# killed at its timeout with a clear message, the kernel log is saved and a
# kernel report in it fails the run, a guest that dies while booting is
# booted once more and its panic is shown, one that hangs while booting is
# killed and booted once more. Ends with "runner: N passed, N failed".
set -u
cd "$(dirname "$0")/.."
res=${HOTTIER_RESULTS:-$PWD/results}/runner
mkdir -p "$res"
passed=0
failed=0
ok() { echo "PASS $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1: $2"; failed=$((failed + 1)); }

# Each boot costs 15-30 s under TCG, so the checks share boots: the first
# also writes a stamp on a file-backed virtio disk, and the second, which
# reads it back, also leaves a kernel report.
img=$res/persist.img
rm -f "$img"
truncate -s 64M "$img"
stamp="hottier-$$-$(date +%s)"
pyw="import sys; sys.path.insert(0, '$PWD/tests/lib'); import devices, os
p = devices.virtio_disk('persist')
with open(p, 'r+b') as f: f.write(b'$stamp'); os.fsync(f.fileno())
print('hello'); sys.exit(7)"
# The second, with no udev (HOTTIER_VM_UDEV=none), prints what it read and
# keeps it in its results directory, and makes a device-mapper device,
# whose node libdevmapper must make itself.
pyr="import os, subprocess, sys; sys.path.insert(0, '$PWD/tests/lib'); import devices
got = open(devices.virtio_disk('persist'), 'rb').read(${#stamp})
open(os.environ['HOTTIER_RESULTS'] + '/stamp', 'wb').write(got)
print(got.decode(errors='replace'), flush=True)
subprocess.run(['dmsetup', 'create', 'runner-zero', '--table', '0 8 zero'], check=True)
if os.path.exists('/dev/mapper/runner-zero'): print('mapper node made', flush=True)
subprocess.run(['dmsetup', 'remove', 'runner-zero'], check=True)
with open('/dev/kmsg', 'w') as k:
    k.write('<4>WARNING: CPU: 0 PID: 1 at runner-self-test\\n')"

rc=0
HOTTIER_VM_UDEV=dm scripts/vm-run.sh --results "$res/exit" --disk "persist=$img" -- \
	/usr/bin/python3 -c "$pyw" > "$res.exit.out" 2>&1 || rc=$?
if [ "$rc" = 7 ] && grep -q hello "$res.exit.out"; then
	ok exit_code_passes_through
else
	bad exit_code_passes_through "rc=$rc"
fi
if grep -q 'Linux version' "$res/exit/kernel.log" 2>/dev/null; then
	ok kernel_log_is_saved
else
	bad kernel_log_is_saved "no boot banner in $res/exit/kernel.log"
fi

rc=0
HOTTIER_VM_UDEV=none scripts/vm-run.sh --results "$res/report" --disk "persist=$img" -- \
	/usr/bin/python3 -c "$pyr" > "$res.report.out" 2>&1 || rc=$?
if [ "$rc" != 0 ] && grep -q runner-self-test "$res/report/kernel-reports.log" 2>/dev/null; then
	ok kernel_report_fails_the_run
else
	bad kernel_report_fails_the_run "rc=$rc"
fi
# A file-backed virtio disk keeps its data across a guest restart.
if [ "$(cat "$res/report/stamp" 2>/dev/null)" = "$stamp" ]; then
	ok virtio_disk_survives_guest_restart
else
	bad virtio_disk_survives_guest_restart "read back: $(head -c 64 "$res/report/stamp" 2>/dev/null | od -c | head -2)"
fi
# The guest's stdout, in a regular file, is kept whole beside vm-run's own
# message about the report (QEMU wrote it at its own offset, and that
# message overwrote it).
if grep -qx "$stamp" "$res.report.out" &&
	grep -q 'kernel reports in the guest log' "$res.report.out"; then
	ok output_in_a_file_is_kept_beside_vm_runs_messages
else
	bad output_in_a_file_is_kept_beside_vm_runs_messages "$(head -n 3 "$res.report.out")"
fi
# HOTTIER_VM_UDEV: the first boot's udev had only the dm rules, the
# second had none, and device-mapper made its node all the same.
if grep -q 'udev is done' "$res/exit/kernel.log" 2>/dev/null &&
	[ ! -e "$res/exit/guest-output" ]; then
	ok udev_with_the_dm_rules_alone_settles
else
	bad udev_with_the_dm_rules_alone_settles "no 'udev is done' in $res/exit/kernel.log"
fi
if grep -q 'skip udev' "$res/report/kernel.log" 2>/dev/null &&
	grep -qx 'mapper node made' "$res.report.out"; then
	ok no_udev_and_a_mapper_node_all_the_same
else
	bad no_udev_and_a_mapper_node_all_the_same "$(grep -c 'skip udev' "$res/report/kernel.log" 2>/dev/null) skip lines; $(tail -n 2 "$res.report.out")"
fi
rm -f "$img"

rc=0
HOTTIER_VM_UDEV=dm scripts/vm-run.sh --results "$res/timeout" --timeout 45 -- sleep 600 \
	> "$res.timeout.out" 2>&1 || rc=$?
if [ "$rc" = 124 ] && grep -q 'timed out after 45s' "$res.timeout.out"; then
	ok timeout_kills_the_guest
else
	bad timeout_kills_the_guest "rc=$rc"
fi
if ! pgrep -f "qemu-system.*$res/timeout" >/dev/null; then
	ok no_guest_left_after_timeout
else
	bad no_guest_left_after_timeout "qemu still running"
fi
# A guest that dies while booting (here: no root to mount) never ran the
# command: it is booted once more, and each console log shows the panic.
# (Straight to a regular file: vm-run keeps the first boot's lines there.)
# Each boot's panic is the missing root's, or once in a while under TCG one
# that comes first: a make check's first boot took an "Oops: int3" in
# enqueue_timer at 1.6 s, a fatal exception in an interrupt, before any
# root was looked for. Both are a guest dead in boot; at least one of the
# two boots reaches the missing root.
rc=0
HOTTIER_VM_APPEND="rdinit=/nonexistent" scripts/vm-run.sh \
	--results "$res/noboot" --timeout 120 -- true > "$res.noboot.out" 2>&1 || rc=$?
if [ "$rc" != 0 ] &&
	[ "$(grep -c 'booting the guest once more' "$res.noboot.out")" = 1 ] &&
	grep -q 'Kernel panic - not syncing: ' "$res/noboot/console.1.log" &&
	grep -q 'Kernel panic - not syncing: ' "$res/noboot/console.log" &&
	cat "$res/noboot/console.1.log" "$res/noboot/console.log" |
		grep -q 'Kernel panic - not syncing: VFS' &&
	grep -Eq 'Kernel panic|Oops' "$res.noboot.out"; then
	ok guest_dead_in_boot_is_booted_once_more_and_says_why
else
	bad guest_dead_in_boot_is_booted_once_more_and_says_why "rc=$rc"
fi
# A guest that has not started the command HOTTIER_VM_BOOT_TIMEOUT seconds
# after QEMU started hung while booting: it is killed and booted once more,
# not held until --timeout, and a second hang fails the run as a timeout.
# (Here 5 s, shorter than any boot under TCG, stands for a hang.)
start=$SECONDS
HOTTIER_VM_BOOT_TIMEOUT=5 scripts/vm-run.sh --results "$res/boothang" \
	--timeout 300 -- true 2>&1 | cat > "$res.boothang.out"
rc=${PIPESTATUS[0]}
took=$((SECONDS - start))
if [ "$rc" = 124 ] && [ "$took" -lt 120 ] &&
	[ "$(grep -c 'had not started the command 5s after' "$res.boothang.out")" = 2 ] &&
	[ "$(grep -c 'booting the guest once more' "$res.boothang.out")" = 1 ] &&
	grep -q 'hung while booting twice' "$res.boothang.out" &&
	! pgrep -f "qemu-system.*$res/boothang" >/dev/null; then
	ok guest_hung_in_boot_is_killed_and_booted_once_more
else
	bad guest_hung_in_boot_is_killed_and_booted_once_more "rc=$rc, ${took}s"
fi
# A guest that ends well leaves one console line, from its power-off.
if [ "$(grep -cv 'reboot: Power down' "$res/exit/console.log")" = 0 ] &&
	grep -q 'reboot: Power down' "$res/exit/console.log"; then
	ok console_log_has_only_the_power_off_when_all_is_well
else
	bad console_log_has_only_the_power_off_when_all_is_well "$(head -n 3 "$res/exit/console.log")"
fi

echo "runner: $passed passed, $failed failed"
[ "$failed" = 0 ]
