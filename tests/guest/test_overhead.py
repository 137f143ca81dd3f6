"""dm-hottier's overhead against dm-linear on zero-latency devices.

The numbers (IOPS side by side, one guest run) are printed and saved as
overhead.json in the results directory; the longer run is in `make bench`.
The floors catch a data path gone badly wrong (a lock convoy, a sleep, a
serialised queue), not a few percent: TCG timings are noisy.
"""

import json
import os

import pytest

import overhead

pytestmark = pytest.mark.measure

FLOORS = {"randread_4k": 0.5, "seqread_1m": 0.5, "randwrite_4k": 0.3}


# Seconds a run: make bench's own runs (tests/lib/overhead.py: 10 s, with
# the A/A control) give the figures. The 2 s runs took 25 s and 73 s of the
# measurement boot where 3 s runs took 32 s and 88 s, ratios as noisy.
SECONDS = 2


def save(name, res):
    print(json.dumps(res, indent=1))
    out = os.environ.get("HOTTIER_RESULTS")
    if out:
        with open(os.path.join(out, name), "w") as f:
            json.dump({"seconds": SECONDS, "jobs": res}, f, indent=1)


def test_overhead_against_dm_linear_stays_within_floors(hottier_module):
    res, status = overhead.measure(seconds=SECONDS)
    save("overhead.json", res)
    fields = status.split()
    hits, misses = int(fields[11]), int(fields[12])
    # The reads measured were SSD hits, the writes write-throughs.
    assert hits > 0 and hits > 10 * misses, status
    for job, floor in FLOORS.items():
        assert res[job]["ratio"] >= floor, (job, res[job])


# The goal is 0.95 (make bench measures it, longer); under TCG in a short
# run the floor only catches a data path gone wrong at queue depth.
PARALLEL_FLOOR = 0.6


def test_queue_depth_overhead_against_dm_linear_and_md_raid1(
        hottier_module):
    res, _ = overhead.measure_parallel(seconds=SECONDS)
    save("overhead-parallel.json", res)
    for job, r in res.items():
        assert r["ratio"] >= PARALLEL_FLOOR, (job, r)
