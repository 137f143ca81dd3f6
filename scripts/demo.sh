#!/usr/bin/env bash
# make demo: set up, build, boot a guest with an emulated HDD and SSD, create
# a hottier device, put ext4 on it, run a short fio job, print the status.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
make
scripts/vm-run.sh --results results/demo --timeout 600 -- scripts/demo-guest.sh
