#!/usr/bin/env bash
# A kernel crash, for real: boot a guest on file-backed virtio disks (HDD,
# SSD, and a log of the writes issued and completed), run a load on a
# hottier device with hdd_id, and kill QEMU (SIGKILL) at a random instant
# once the SSD is warm; boot again on the same disks, check every block
# and every replica the on-SSD map restored, run the load again, kill it
# again; ROUNDS times, then a last boot that checks. tests/guest/qemu_kill.py
# runs in the guest.
#
#   scripts/qemu-kill.sh --kver VER --module KO [--rounds N] [--results DIR]
#
# Prints "kill-<tier>: N passed, M failed" (one per round), with the
# replicas the map kept over those resident before the kill.
set -uo pipefail

kver= module= rounds=${HOTTIER_KILL_ROUNDS:-3} res=results/qemu-kill tier=6.1
while [ $# -gt 0 ]; do
	case "$1" in
	--kver) kver=$2; shift 2 ;;
	--module) module=$2; shift 2 ;;
	--rounds) rounds=$2; shift 2 ;;
	--results) res=$2; shift 2 ;;
	--tier) tier=$2; shift 2 ;;
	*) echo "qemu-kill: unknown option $1" >&2; exit 2 ;;
	esac
done
[ -n "$kver" ] && [ -f "$module" ] || {
	echo "usage: $0 --kver VER --module KO [--rounds N] [--results DIR]" >&2
	exit 2
}
module=$(realpath "$module")
rm -rf "$res"
mkdir -p "$res"
res=$(cd "$res" && pwd)
for d in hdd:32M ssd:8M log:8M; do
	truncate -s "${d#*:}" "$res/${d%%:*}.img"
done
disks=(--disk "hdd=$res/hdd.img" --disk "ssd=$res/ssd.img"
	--disk "log=$res/log.img")
passed=0 failed=0

guest() {
	# udev with the dm rules alone (scripts/vm-run.sh): the disks are found
	# by their serial in /sys, and no other rule is wanted.
	HOTTIER_VM_UDEV=${HOTTIER_VM_UDEV:-dm} HOTTIER_VM_APPEND=null_blk.nr_devices=0 \
		scripts/vm-run.sh --kver "$kver" \
		--results "$res/vm" --timeout 600 "${disks[@]}" -- \
		bash -c "modprobe dm-mod && insmod $(printf %q "$module") && exec python3 tests/guest/qemu_kill.py $*"
}

for ((n = 0; n <= rounds; n++)); do
	what=run
	[ "$n" = "$rounds" ] && what=check
	rm -f "$res/vm/ready$n"
	echo "qemu-kill: boot $n ($what)"
	if [ "$what" = run ]; then
		guest run "$n" > "$res/boot$n.out" 2>&1 &
		pid=$!
		# Warm for 10 s (the guest says so), then up to 5 s more.
		for ((w = 0; w < 600; w++)); do
			[ -e "$res/vm/ready$n" ] && break
			kill -0 "$pid" 2>/dev/null || break
			sleep 1
		done
		sleep "$((RANDOM % 5)).$((RANDOM % 10))"
		if pkill -KILL -f "qemu-system.*$res/vm"; then
			echo "qemu-kill: killed boot $n"
		else
			echo "qemu-kill: boot $n ended before the kill"
			tail -n 20 "$res/boot$n.out"
		fi
		# vm-run.sh boots once more a guest that died before its
		# command began: that one is killed too.
		while kill -0 "$pid" 2>/dev/null; do
			pkill -KILL -f "qemu-system.*$res/vm"
			sleep 1
		done
		wait "$pid"
	else
		guest check "$n" > "$res/boot$n.out" 2>&1
	fi
	[ "$n" = 0 ] && continue
	check=$res/vm/check$((n - 1)).json
	if [ -f "$check" ] && python3 - "$check" <<'EOF'
import json, sys
c = json.load(open(sys.argv[1]))
kept = c["map_loaded"] / max(1, c["slots_before"] or 0)
print(f"qemu-kill: round {c['boot']}: {c['nr_bad']} bad blocks, scrub "
      f"{c['scrub']} with {c['scrub_mismatches']} mismatches of "
      f"{c['scrub_checked']}; map {c['map']}, {c['map_loaded']} replicas "
      f"kept of about {c['slots_before']} ({kept:.2f})")
sys.exit(0 if not c["nr_bad"] and c["scrub"] == "done"
         and not c["scrub_mismatches"] else 1)
EOF
	then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
		echo "qemu-kill: round $((n - 1)) failed:"
		tail -n 20 "$res/boot$n.out"
	fi
done
rm -f "$res"/*.img
echo "kill-$tier: $passed passed, $failed failed"
[ "$failed" = 0 ]
