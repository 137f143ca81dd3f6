"""dm-hottier's overhead against dm-linear on zero-latency devices.

The numbers (IOPS side by side, one guest run) are printed and saved as
overhead.json in the results directory; the longer run is in `make bench`.
The floors catch a data path gone badly wrong (a lock convoy, a sleep, a
serialised queue), not a few percent: TCG timings are noisy.
"""

import json
import os

import overhead

FLOORS = {"randread_4k": 0.5, "seqread_1m": 0.5, "randwrite_4k": 0.3}


def test_overhead_against_dm_linear_stays_within_floors(hottier_module):
    res, status = overhead.measure(seconds=3)
    print(json.dumps(res, indent=1))
    out = os.environ.get("HOTTIER_RESULTS")
    if out:
        with open(os.path.join(out, "overhead.json"), "w") as f:
            json.dump({"seconds": 3, "jobs": res}, f, indent=1)
    fields = status.split()
    hits, misses = int(fields[11]), int(fields[12])
    # The reads measured were SSD hits, the writes write-throughs.
    assert hits > 0 and hits > 10 * misses, status
    for job, floor in FLOORS.items():
        assert res[job]["ratio"] >= floor, (job, res[job])
