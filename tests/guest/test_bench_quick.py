"""make bench BENCH=quick: the zipf bench, short, with loose floors.

tests/bench/zipf.py runs DESIGN.md's zipf workload (4k random reads,
zipf:1.2, 64 KiB units, 2048 slots) for QUICK_SECONDS on dm-hottier, then
on dm-cache smq writethrough over identical devices, and computes the
oracle from each run's own fio offsets. make check runs this in its
measurement boot, where nothing else runs on the host; `make bench
BENCH=quick` runs it alone and writes the report (tests/bench/
bench_report.py) beside zipf.json.

The floors catch a policy or a data path gone wrong, not a few points:
30 s is mostly warm-up, and TCG timings are noisy. The goals of issue 14
are measured by `make bench` (150 s), and are not asserted here.
"""

import json
import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.measure

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

QUICK_SECONDS = int(os.environ.get("HOTTIER_QUICK_SECONDS", "30"))

# The last 10 s of the run: dm-hottier's hit ratio at most this many points
# under smq's (issue 14's goal is 2 points over it, over a longer run).
HIT_POINTS_UNDER_SMQ = 0.05
# ... and at least this fraction of the oracle's (the best static
# placement of the same reads, a full SSD from the first read).
HIT_OF_ORACLE = 0.75
# IOPS at least this fraction of smq's (issue 14: ahead of smq).
IOPS_OF_SMQ = 0.8


def out_dir():
    root = os.environ.get("HOTTIER_BENCH_QUICK_OUT") or os.path.join(
        os.environ.get("HOTTIER_RESULTS", "/tmp"), "bench-quick")
    return os.path.join(root, "zipf-128")


def test_quick_zipf_bench_against_smq_and_the_oracle(hottier_module):
    out = out_dir()
    os.makedirs(out, exist_ok=True)
    p = subprocess.run(
        [sys.executable, os.path.join(REPO, "tests", "bench", "zipf.py"),
         "--seconds", str(QUICK_SECONDS), "--extent", "128", "--out", out],
        stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        timeout=20 * QUICK_SECONDS + 300)
    print(p.stdout)
    with open(os.path.join(out, "zipf.json")) as f:
        res = json.load(f)
    # zipf.py's own checks: slot counts, fio errors, reads the SSD served,
    # the kernel log.
    assert p.returncode == 0 and not res["problems"], res["problems"]
    h, c = res["runs"]["hottier"], res["runs"]["cache"]
    oracle = h["oracle_at_unit"]["oracle"]
    figures = {"hottier": h["final_hit_ratio"], "smq": c["final_hit_ratio"],
               "oracle": oracle, "hottier_iops": h["iops"],
               "smq_iops": c["iops"]}
    print("quick zipf:", figures)
    assert None not in figures.values(), figures
    assert h["final_hit_ratio"] >= c["final_hit_ratio"] - HIT_POINTS_UNDER_SMQ, \
        figures
    assert h["final_hit_ratio"] >= HIT_OF_ORACLE * oracle, figures
    assert h["iops"] >= IOPS_OF_SMQ * c["iops"], figures
