"""dm-hottier's per-I/O overhead against dm-linear, in one guest run.

Both targets sit on zero-latency, memory-backed null_blk devices of the
same size, so what differs is the target's own work: heat lookups and
sequential detection on reads, replica lookups and the second write of a
write-through. The hottier device's working region is pinned first, so its
reads are SSD hits and its writes are write-throughs.

Runs inside the guest (scripts/vm-run.sh): used by
tests/guest/test_overhead.py (short) and scripts/bench.sh (longer).
"""

import json
import os
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import devices  # noqa: E402

REGION_MB = 48          # fits in the SSD's slots: every extent pinned
EXTENT = 128            # 64 KiB extents

JOBS = {
    "randread_4k": ["--rw=randread", "--bs=4k"],
    "seqread_1m": ["--rw=read", "--bs=1m"],
    "randwrite_4k": ["--rw=randwrite", "--bs=4k"],
}


def fio_iops(path, args, seconds):
    out = subprocess.run(
        ["fio", "--name=o", f"--filename={path}", "--direct=1",
         "--ioengine=psync", "--iodepth=1", f"--size={REGION_MB}m",
         f"--runtime={seconds}", "--time_based", "--randseed=4242",
         "--output-format=json", *args],
        check=True, capture_output=True, text=True).stdout
    job = json.loads(out)["jobs"][0]
    return job["read"]["iops"] + job["write"]["iops"]


def wait_promoted(dev, want, timeout=120.0):
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        fields = dev.status().split()
        used = int(fields[10].split("/")[0])
        if used >= want:
            return used
        time.sleep(0.5)
    raise TimeoutError(f"only {used} of {want} extents promoted")


def measure(seconds, module_loaded=True):
    """IOPS of each job on dm-linear and dm-hottier, and their ratios."""
    region_sectors = REGION_MB * 2048
    extents = region_sectors // EXTENT
    res = {}
    with devices.fast("ovl_hdd", 256) as lh, \
            devices.fast("ovh_hdd", 256) as hh, \
            devices.fast("ovh_ssd", 64) as hs:
        size = devices.sectors(lh.path)
        with devices.DmDevice("ov_linear", f"0 {size} linear {lh.path} 0") as lin, \
                devices.DmDevice(
                    "ov_hottier",
                    f"0 {size} hottier {hh.path} {hs.path} {EXTENT}") as ht:
            devices.settle()
            ht.message("pin", "0", str(region_sectors))
            wait_promoted(ht, extents)
            for name, args in JOBS.items():
                # Side by side, alternating, so drift hits both alike.
                lin_iops = fio_iops(lin.path, args, seconds)
                ht_iops = fio_iops(ht.path, args, seconds)
                res[name] = {"linear_iops": round(lin_iops),
                             "hottier_iops": round(ht_iops),
                             "ratio": round(ht_iops / lin_iops, 3)}
            status = ht.status()
    return res, status


def main():
    seconds = int(os.environ.get("OVERHEAD_SECONDS", "10"))
    res, status = measure(seconds)
    print(f"{'job':<14} {'dm-linear':>10} {'dm-hottier':>11} {'ratio':>6}")
    for name, r in res.items():
        print(f"{name:<14} {r['linear_iops']:>10} {r['hottier_iops']:>11} "
              f"{r['ratio']:>6}")
    print("hottier status:", status)
    out = os.environ.get("HOTTIER_RESULTS")
    if out:
        with open(os.path.join(out, "overhead.json"), "w") as f:
            json.dump({"seconds": seconds, "jobs": res}, f, indent=1)


if __name__ == "__main__":
    main()
