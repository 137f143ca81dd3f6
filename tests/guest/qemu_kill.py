"""A kernel crash, for real: scripts/qemu-kill.sh kills the QEMU guest
(SIGKILL) while this runs a load, and boots it again on the same
file-backed virtio disks. QEMU's disk cache keeps every write it was
given, so what the disks hold is what a kernel crash leaves.

    qemu_kill.py run N     (boot N: check what boot N-1 left, if N > 0;
                            then the load, until killed)
    qemu_kill.py check N   (the last boot: check only)

Disks (vm-run.sh --disk): hdd, ssd, and log, where each writer thread
records every write it issues and every one that completed, with
O_DIRECT before and after the write: the log survives exactly as the
data does. Every block holds a stamp (tests/lib/stamp.py) of a
generation; after a crash a block read through the device, with routing
ssd (replicas from the SSD), must hold a generation between the last one
whose write completed and the last one issued; scrub must find no
replica that differs from the HDD.
"""

import json
import os
import random
import struct
import sys
import threading
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "lib"))

import devices  # noqa: E402
import directio  # noqa: E402
import stamp  # noqa: E402
from conftest import info, scrub  # noqa: E402

EXTENT = 128
BLOCK = stamp.BLOCK
THREADS = 4
SEED = 91
HDD_ID = "qemu-kill-hdd"
NAME = "qk"
REC = struct.Struct("<QIIQQ")     # magic, boot, kind, block, gen
REC_MAGIC = 0x6c6c696b756d6571
ISSUE, DONE = 1, 2
LOG_REGION = 1 << 20              # bytes of records per thread
RESULTS = os.environ.get("HOTTIER_RESULTS", "/tmp")


def line(hdd, ssd, *extra):
    opts = ("hdd_id", HDD_ID, *extra)
    return (f"0 {devices.sectors(hdd)} hottier {hdd} {ssd} {EXTENT} "
            f"{len(opts)} {' '.join(opts)}")


def read_log(log, boot):
    """Per block: the last generation whose write completed, and the last
    issued, from boot's records."""
    done, issued = {}, {}
    with open(log, "rb") as f:
        for t in range(THREADS):
            f.seek(t * LOG_REGION)
            region = f.read(LOG_REGION)
            for off in range(0, LOG_REGION, 512):
                magic, b, kind, block, gen = REC.unpack_from(region, off)
                if magic != REC_MAGIC or b != boot:
                    break
                d = done if kind == DONE else issued
                d[block] = max(d.get(block, 0), gen)
    return done, issued


def check(hdd, ssd, log, boot):
    """What boot @boot left: every block, then the replicas."""
    done, issued = read_log(log, boot)
    with open(os.path.join(RESULTS, f"start{boot}.json")) as f:
        start = {int(b): g for b, g in json.load(f).items()}
    gens = {}
    dm = line(hdd, ssd, "routing", "ssd", "promote_threshold", "1000000")
    with devices.DmDevice(NAME, dm) as d:
        st = info(d)
        bad = []
        nr = devices.sectors(hdd) * 512 // BLOCK
        with directio.Direct(d.path) as r:
            for first in range(0, nr, 256):
                data = r.read(first * BLOCK, 256 * BLOCK)
                for i in range(256):
                    b = first + i
                    try:
                        g = stamp.parse(data[i * BLOCK:(i + 1) * BLOCK], b,
                                        SEED)
                    except stamp.BadStamp as e:
                        bad.append(str(e))
                        continue
                    # Between the last write that completed and the
                    # last issued (what the boot found, if none).
                    lo = done.get(b, start[b])
                    hi = issued.get(b, start[b])
                    if not lo <= g <= hi:
                        bad.append(f"block {b}: gen {g}, completed {lo}, "
                                   f"issued {hi}")
                    gens[b] = g
        sc = scrub(d)
    before = {}
    path = os.path.join(RESULTS, f"boot{boot}.json")
    if os.path.exists(path):
        with open(path) as f:
            before = json.load(f)
    result = {"boot": boot, "bad": bad[:10], "nr_bad": len(bad),
              "map": st["map"], "map_loaded": st["map_loaded"],
              "slots_before": before.get("slots_used"),
              "scrub": sc["scrub"], "scrub_mismatches": sc["scrub_mismatches"],
              "scrub_checked": sc["scrub_checked"]}
    with open(os.path.join(RESULTS, f"check{boot}.json"), "w") as f:
        json.dump(result, f)
    print(json.dumps(result))
    ok = not bad and sc["scrub"] == "done" and not sc["scrub_mismatches"]
    return ok, gens


class Writer(threading.Thread):
    def __init__(self, tid, path, log, boot, nr):
        super().__init__(daemon=True)
        self.tid, self.path, self.log, self.boot = tid, path, log, boot
        self.nr = nr
        self.error = None

    def record(self, lg, pos, kind, block, gen):
        rec = REC.pack(REC_MAGIC, self.boot, kind, block, gen)
        lg.write(self.tid * LOG_REGION + pos * 512,
                 rec + bytes(512 - REC.size))

    def run(self):
        rng = random.Random(SEED * 10 + self.tid + 1000 * self.boot)
        order = list(range(self.nr // 16))
        random.Random(SEED).shuffle(order)
        cum, total = [], 0.0
        for r in range(len(order)):
            total += 1.0 / (r + 1) ** 1.2
            cum.append(total)
        gen = self.boot << 32
        pos = 0
        try:
            with directio.Direct(self.path, write=True,
                                 max_bytes=BLOCK) as d, \
                    directio.Direct(self.log, write=True,
                                    max_bytes=512) as lg:
                while pos + 2 <= LOG_REGION // 512:
                    extent = rng.choices(order, cum_weights=cum)[0]
                    block = extent * 16 + rng.randrange(16)
                    if rng.random() < 0.9 or block % THREADS != self.tid:
                        d.read(block * BLOCK, BLOCK)
                        continue
                    gen += 1
                    self.record(lg, pos, ISSUE, block, gen)
                    d.write(block * BLOCK, stamp.make(block, gen, SEED))
                    self.record(lg, pos + 1, DONE, block, gen)
                    pos += 2
        except Exception as e:          # noqa: BLE001: printed by run()
            self.error = e


def main():
    what, boot = sys.argv[1], int(sys.argv[2])
    hdd = devices.virtio_disk("hdd")
    ssd = devices.virtio_disk("ssd")
    log = devices.virtio_disk("log")
    ok = True
    if boot == 0:
        nr = devices.sectors(hdd) * 512 // BLOCK
        stamp.fill(hdd, nr, SEED)
        gens = {b: 0 for b in range(nr)}
    else:
        ok, gens = check(hdd, ssd, log, boot - 1)
    if what == "check":
        return 0 if ok else 1
    if not ok:
        return 1
    with open(os.path.join(RESULTS, f"start{boot}.json"), "w") as f:
        json.dump(gens, f)
    # The log's records of this boot start at each thread's region.
    # Never removed: the guest is killed with it.
    d = devices.DmDevice(NAME, line(hdd, ssd))
    nr = devices.sectors(hdd) * 512 // BLOCK
    writers = [Writer(t, d.path, log, boot, nr) for t in range(THREADS)]
    for w in writers:
        w.start()
    start = time.monotonic()
    while True:
        time.sleep(1)
        st = info(d)
        st["t"] = time.monotonic() - start
        with open(os.path.join(RESULTS, f"boot{boot}.json"), "w") as f:
            json.dump(st, f)
        if st["t"] > 10:
            # scripts/qemu-kill.sh kills the guest from now on.
            open(os.path.join(RESULTS, f"ready{boot}"), "w").close()
        errors = [w.error for w in writers if w.error]
        if errors or not any(w.is_alive() for w in writers):
            print(f"qemu_kill: the load ended before the kill: {errors}")
            return 1


if __name__ == "__main__":
    sys.exit(main())
