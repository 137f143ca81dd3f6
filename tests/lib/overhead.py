"""dm-hottier's per-I/O overhead against dm-linear, in one guest run.

Both targets sit on zero-latency, memory-backed null_blk devices of the
same size, so what differs is the target's own work: heat lookups and
sequential detection on reads, replica lookups and the second write of a
write-through. The hottier device's working region is pinned first, so its
reads are SSD hits and its writes are write-throughs.

Every region measured is written once first (fill()), on every device: a
memory-backed null_blk reads a sector never written by zeroing the page,
and one written by looking it up and copying it, so a base device left
unwritten beside an SSD filled by copies would measure null_blk, not the
target.

Runs inside the guest (scripts/vm-run.sh): used by
tests/guest/test_overhead.py (short) and scripts/bench.sh (longer).
"""

import json
import os
import statistics
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


def fill(path, offset_mb, size_mb):
    """Write [offset_mb, offset_mb + size_mb) of @path once, so that its
    reads copy stored pages, as the SSD's replicas do."""
    subprocess.run(
        ["fio", "--name=fill", f"--filename={path}", "--direct=1",
         "--ioengine=psync", "--rw=write", "--bs=1m",
         f"--offset={offset_mb}m", f"--size={size_mb}m",
         "--output-format=terse"],
        check=True, capture_output=True, text=True)


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
            fill(lin.path, 0, REGION_MB)
            fill(ht.path, 0, REGION_MB)
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


def fio_parallel(path, args, seconds, offset_mb=0):
    """IOPS of 2 jobs, libaio at iodepth 32 each, 4 KiB, over the region."""
    out = subprocess.run(
        ["fio", "--name=p", f"--filename={path}", "--direct=1",
         "--ioengine=libaio", "--iodepth=32", "--numjobs=2",
         "--group_reporting", "--bs=4k", f"--offset={offset_mb}m",
         f"--size={REGION_MB}m", f"--runtime={seconds}", "--time_based",
         "--randseed=4242", "--output-format=json", *args],
        check=True, capture_output=True, text=True).stdout
    job = json.loads(out)["jobs"][0]
    return job["read"]["iops"] + job["write"]["iops"]


def paired(base, hottier, rounds):
    """Run base() and hottier() (each returns IOPS) side by side, @rounds
    times, the order swapped every round (A B, B A, ...) so that drift in
    the emulator hits both alike. The figures are the medians, and the
    ratio is the median of the rounds' ratios."""
    runs = []
    for r in range(rounds):
        if r % 2:
            h = hottier()
            b = base()
        else:
            b = base()
            h = hottier()
        runs.append((b, h))
    ratios = sorted(h / b for b, h in runs)
    return {"base_iops": round(statistics.median(b for b, _ in runs)),
            "hottier_iops": round(statistics.median(h for _, h in runs)),
            "ratio": round(statistics.median(ratios), 3),
            "ratios": [round(x, 3) for x in ratios]}


class MdRaid1:
    """An md RAID1 over two devices: the double write a write-through
    does, without a bitmap and with no resync (assume-clean)."""

    def __init__(self, minor, a, b):
        self.path = f"/dev/md{minor}"
        r = subprocess.run(["mdadm", "--create", self.path, "--run",
                            "--quiet", "--level=1", "--raid-devices=2",
                            "--assume-clean", "--bitmap=none",
                            "--metadata=1.2", a, b],
                           capture_output=True, text=True)
        if r.returncode:
            raise RuntimeError(f"mdadm --create {self.path}: {r.stderr}")

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        subprocess.run(["mdadm", "--stop", self.path], capture_output=True)
        return False


def measure_parallel(seconds, rounds=3, control=False):
    """The data path at queue depth, on zero-latency members: random-read
    misses and hits (routing ssd) against dm-linear, write-through writes
    against md RAID1 over the same kind of two members. Ratios of IOPS,
    each the median of @rounds paired runs (paired()). @control: first an
    A/A control, the misses' pairing with a second dm-linear (over its own
    member) in dm-hottier's place: how far from 1 the method itself lands."""
    region_sectors = REGION_MB * 2048
    extents = region_sectors // EXTENT
    res = {}
    with devices.fast("pvl_hdd", 256) as lh, \
            devices.fast("pvc_hdd", 256) as ch, \
            devices.fast("pvh_hdd", 256) as hh, \
            devices.fast("pvh_ssd", 64) as hs, \
            devices.fast("pvm_a", 256) as ma, \
            devices.fast("pvm_b", 256) as mb:
        size = devices.sectors(lh.path)
        with devices.DmDevice("pv_linear", f"0 {size} linear {lh.path} 0") as lin, \
                devices.DmDevice("pv_control",
                                 f"0 {size} linear {ch.path} 0") as ctl, \
                devices.DmDevice(
                    "pv_hottier",
                    f"0 {size} hottier {hh.path} {hs.path} {EXTENT} "
                    "4 promote_threshold 1000000 routing ssd") as ht, \
                MdRaid1(100, ma.path, mb.path) as md:
            devices.settle()
            # The hit region and the miss region past it, and what the
            # write-throughs' base writes.
            for dev in (lin, ht) + ((ctl,) if control else ()):
                fill(dev.path, 0, 2 * REGION_MB)
            fill(md.path, 0, REGION_MB)

            def run(dev, rw, offset_mb=0):
                return lambda: fio_parallel(dev.path, [f"--rw={rw}"],
                                            seconds, offset_mb=offset_mb)

            if control:
                res["control_randread_4k_qd64"] = {
                    "base": "dm-linear (A/A control: dm-hottier's side is "
                            "a second dm-linear)",
                    **paired(run(lin, "randread", REGION_MB),
                             run(ctl, "randread", REGION_MB), rounds)}
            # Misses: a region past the pinned one, never promoted.
            res["randread_miss_4k_qd64"] = {
                "base": "dm-linear",
                **paired(run(lin, "randread", REGION_MB),
                         run(ht, "randread", REGION_MB), rounds)}
            ht.message("pin", "0", str(region_sectors))
            wait_promoted(ht, extents)
            res["randread_hit_4k_qd64"] = {
                "base": "dm-linear",
                **paired(run(lin, "randread"), run(ht, "randread"), rounds)}
            res["randwrite_through_4k_qd64"] = {
                "base": "md RAID1",
                **paired(run(md, "randwrite"), run(ht, "randwrite"), rounds)}
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
    par, status = measure_parallel(
        seconds, rounds=int(os.environ.get("OVERHEAD_ROUNDS", "3")),
        control=os.environ.get("OVERHEAD_CONTROL", "0") == "1")
    print(f"{'2 jobs, iodepth 32':<26} {'base':>10} {'iops':>8} "
          f"{'dm-hottier':>11} {'ratio':>6}  rounds (median of)")
    for name, r in par.items():
        print(f"{name:<26} {r['base']:>10} {r['base_iops']:>8} "
              f"{r['hottier_iops']:>11} {r['ratio']:>6}  {r['ratios']}")
    print("hottier status:", status)
    out = os.environ.get("HOTTIER_RESULTS")
    if out:
        with open(os.path.join(out, "overhead.json"), "w") as f:
            json.dump({"seconds": seconds, "jobs": res, "parallel": par},
                      f, indent=1)


if __name__ == "__main__":
    main()
