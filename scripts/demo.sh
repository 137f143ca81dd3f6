#!/usr/bin/env bash
# make demo: set up, build, boot a guest with an emulated HDD and SSD, run
# the same fio zipf workload on the bare HDD and on a hottier device over
# it (scripts/demo-guest.sh), print the hit ratio as it climbs, the
# device's status and the speed-up, then plot hit ratio and IOPS over time
# (tests/bench/demo_report.py) to results/demo/demo.png.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$SECONDS
scripts/setup.sh
make
out=$PWD/results/demo
mkdir -p "$out"
rm -f "$out"/demo.png "$out"/demo*.json
scripts/vm-run.sh --results "$out" --timeout 600 -- scripts/demo-guest.sh

printf '\n### 5. Plot\n'
# Debian's python3, which python3-matplotlib is installed for.
MPLBACKEND=Agg /usr/bin/python3 tests/bench/demo_report.py plot \
	"$out/demo.json" "$out/demo.png"
echo "make demo took $((SECONDS - start)) s"
