"""Crashes while the device runs: what the on-SSD map keeps, and that what
it keeps is never stale.

A cut is a crash image taken while the load goes on: dm-linear shims over
both members are suspended (--noflush, in a random order, a random gap
apart), both members are copied whole, and the shims resume. What the
copies hold is what the members held at some instant of each, with every
write that completed before the cut started: the state a kernel crash
leaves (null_blk here has no volatile cache, so completed is durable).
A device of the same table line over the copies then takes the map over,
as an activation after the crash would, and is checked:

- every block read through it with routing ssd (replicas from the SSD)
  is a stamp the block may hold: never older than the last write, discard
  or write-zeroes that completed before the cut, never one issued after;
- scrub compares every replica it restored with the HDD: 0 mismatches;
- the pins acknowledged before the cut are there;
- replicas kept over replicas resident at the cut: the figure the issue
  asks for, during the read-mostly load. Replicas written through since
  they were recorded have intents for records: the activation compares
  them with the HDD and keeps those that equal it (counted apart). The
  write-through test makes one cut more after the load, planted to meet
  an intent whatever the kernel's pace (planted_cut()).

The load, in threads: zipf reads of 4 KiB blocks, and (mixed) stamp
writes, discards and write-zeroes of the blocks each thread owns, so each
block has one writer and its expected contents are known. The SSD is a
quarter of the HDD, so promotions evict all along.
"""

import bisect
import fcntl
import itertools
import os
import random
import re
import statistics
import struct
import subprocess
import threading
import time

import pytest

import devices
import directio
import dmioctl
import hotio
import replaylog
import stamp
from conftest import (KernelLog, hottier_table, info, recorded, scrub,
                      unique)

pytestmark = pytest.mark.crash

EXTENT = 128                    # 64 KiB
HDD_MB = 64
SSD_MB = 16
BLOCK = stamp.BLOCK
NR_BLOCKS = (HDD_MB << 20) // BLOCK
PER_EXTENT = EXTENT * 512 // BLOCK
NR_EXTENTS = NR_BLOCKS // PER_EXTENT
THREADS = 4
SEED = 77
ZERO = -1                       # the contents after a discard or zeroes
HDD_ID = "wwn-0x5000c500cafe0001"
# make soak sets more: the issue asks for 25 per write policy here.
CUTS = int(os.environ.get("HOTTIER_CRASH_CUTS", "25"))
WARM_S = 20

BLKDISCARD = 0x1277
BLKZEROOUT = 0x127f


class Model:
    """Per block: the contents of every operation issued (a stamp's
    generation, or ZERO), and how many of them completed."""

    def __init__(self):
        self.ops = [[0] for _ in range(NR_BLOCKS)]     # the fill: gen 0
        self.done = [1] * NR_BLOCKS
        # Operations a completed fsync covered (fsync_every).
        self.durable = [1] * NR_BLOCKS
        self.gen = 0
        self.lock = threading.Lock()

    def issue(self, block, contents):
        self.ops[block].append(contents)

    def complete(self, block):
        self.done[block] = len(self.ops[block])

    def next_gen(self):
        with self.lock:
            self.gen += 1
            return self.gen


class Load:
    """The threads of the load on the device at path."""

    def __init__(self, path, model, write_share, fsync_every=0):
        self.path = path
        self.model = model
        self.write_share = write_share
        self.fsync_every = fsync_every
        self.stop = threading.Event()
        self.errors = []
        rng = random.Random(SEED)
        order = list(range(NR_EXTENTS))
        rng.shuffle(order)
        weights = [1.0 / (rank + 1) ** 1.2 for rank in range(NR_EXTENTS)]
        self.extents = order
        self.cum = list(itertools.accumulate(weights))
        self.threads = [threading.Thread(target=self._run, args=(t,))
                        for t in range(THREADS)]

    def __enter__(self):
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc):
        self.halt()

    def halt(self):
        """Stop the threads and wait for them; once they stopped, a no-op."""
        self.stop.set()
        for t in self.threads:
            t.join()

    def check(self):
        assert not self.errors, self.errors[:5]

    def _extent(self, rng):
        return self.extents[bisect.bisect_left(self.cum,
                                               rng.random() * self.cum[-1])]

    def _run(self, tid):
        rng = random.Random(SEED * 100 + tid)
        m = self.model
        writes = 0
        try:
            with directio.Direct(self.path, write=True,
                                 max_bytes=BLOCK) as d:
                while not self.stop.is_set():
                    extent = self._extent(rng)
                    first = extent * PER_EXTENT
                    r = rng.random()
                    if r >= self.write_share:
                        block = first + rng.randrange(PER_EXTENT)
                        data = d.read(block * BLOCK, BLOCK)
                        if block % THREADS == tid:
                            # Ours: nothing else writes it.
                            want = m.ops[block][-1]
                            got = contents(data, block)
                            if got != want:
                                self.errors.append(
                                    f"live read of block {block}: {got}, "
                                    f"expected {want}")
                        continue
                    own = [b for b in range(first, first + PER_EXTENT)
                           if b % THREADS == tid]
                    block = rng.choice(own)
                    r = rng.random()
                    if r < 0.9:
                        gen = m.next_gen()
                        m.issue(block, gen)
                        d.write(block * BLOCK, stamp.make(block, gen, SEED))
                    else:
                        m.issue(block, ZERO)
                        op = BLKDISCARD if r < 0.95 else BLKZEROOUT
                        fcntl.ioctl(d.fd, op,
                                    struct.pack("QQ", block * BLOCK, BLOCK))
                    m.complete(block)
                    writes += 1
                    if self.fsync_every and \
                            writes % self.fsync_every == 0:
                        # A flush reaches the HDD, which keeps every
                        # byte: what it covers survives a power cut.
                        done = m.done[tid::THREADS]
                        os.fsync(d.fd)
                        m.durable[tid::THREADS] = done
        except Exception as e:          # noqa: BLE001: reported by check()
            self.errors.append(f"thread {tid}: {e!r}")


_ZERO_BLOCK = bytes(BLOCK)


def contents(data, block):
    if data == _ZERO_BLOCK:
        return ZERO
    try:
        return stamp.parse(data, block, SEED)
    except stamp.BadStamp as e:
        return str(e)


# Per block number, the last block read there and its contents(): from
# one image to the next most blocks read the same, and contents() depends
# on the bytes and the block number alone, so the parse is done once.
_parsed = {}


def parsed(data, block):
    last = _parsed.get(block)
    if last is not None and last[0] == data:
        return last[1]
    got = contents(data, block)
    _parsed[block] = (data, got)
    return got


def fill(path):
    """Generation 0 of every block, written with O_DIRECT 1 MiB at a time;
    parsed() learns each block's stamp, which most blocks still hold at
    the first image."""
    def seen(block, data):
        _parsed[block] = (data, 0)

    stamp.fill(path, NR_BLOCKS, SEED, each=seen)


def suspend(name):
    dmioctl.run(("dmsetup", "suspend", "--noflush", "--nolockfs", name),
                dmioctl.suspend, name, True, True)


def resume(name):
    dmioctl.run(("dmsetup", "resume", name), dmioctl.resume, name)


def cut(shims, members, copies, rng, copied):
    """A crash image of both members in copies (see the module's text);
    copied() runs before the shims resume: nothing issued after it can
    be in the image."""
    order = list(range(len(shims)))
    rng.shuffle(order)
    suspended = []
    try:
        for i in order:
            suspend(shims[i].name)
            suspended.append(i)
            time.sleep(rng.random() * 0.02)
        # Both members at once: the same image, in less time.
        dds = [subprocess.Popen(["dd", f"if={member.path}",
                                 f"of={copy.path}", "bs=1M", "iflag=direct",
                                 "oflag=direct", "status=none"])
               for member, copy in zip(members, copies)]
        rcs = [p.wait() for p in dds]
        assert rcs == [0] * len(dds), f"dd of a member failed: {rcs}"
        return copied()
    finally:
        for i in suspended:
            resume(shims[i].name)


def check_blocks(path, hdd, model, since, issued):
    """What is wrong with the blocks read through the device at path:
    each must be one its block may hold (an operation from since[b] to
    issued[b], since[b] - 1 the oldest allowed), and all must equal what
    the HDD (the member itself) holds: a replica that differs is stale."""
    bad = []
    with directio.Direct(path) as r, directio.Direct(hdd) as h:
        for first in range(0, NR_BLOCKS, 256):
            data = r.read(first * BLOCK, 256 * BLOCK)
            hdata = h.read(first * BLOCK, 256 * BLOCK)
            if data != hdata:
                differ = [
                    (first + i,
                     contents(data[i * BLOCK:(i + 1) * BLOCK], first + i),
                     contents(hdata[i * BLOCK:(i + 1) * BLOCK], first + i))
                    for i in range(256)
                    if data[i * BLOCK:(i + 1) * BLOCK] !=
                    hdata[i * BLOCK:(i + 1) * BLOCK]]
                bad.append(f"blocks {first}+256 differ from the HDD's: "
                           f"(block, device's, HDD's) {differ[:8]}")
            for i in range(256):
                b = first + i
                got = parsed(data[i * BLOCK:(i + 1) * BLOCK], b)
                allowed = model.ops[b][since[b] - 1:issued[b]]
                if got not in allowed:
                    bad.append(f"block {b}: {got}, allowed {allowed}")
    return bad


INTENTS = re.compile(r"intents: (\d+) replicas equal the HDD and are "
                     r"kept, (\d+) dropped")


def check_image(line, hdd, model, since, issued, pinned):
    """The device over the members' images, as after the crash or power
    cut: check_blocks(), the pins, scrub; its counters, and the intents
    kept and dropped at its activation (from the kernel log)."""
    log = KernelLog()
    # A private device: no udev (dmsetup's create waited 2 s for it beside
    # the load). With one, a write-around cut in about 750 found a block of
    # the pinned range one write behind the HDD: a write to an extent whose
    # replica another write had just dropped went to the HDD before the
    # record's invalidation (test_persist's test_writes_after_a_drop_wait_
    # for_the_records_invalidation has it, held still).
    with devices.PrivateDmDevice(unique("cr"), line) as d:
        m = INTENTS.search(log.new())
        c = info(d)
        c["intents_kept"], c["intents_dropped"] = \
            (int(m[1]), int(m[2])) if m else (0, 0)
        assert c["pinned"] == pinned, (pinned, c)
        # Pinned extents not restored are copied again.
        hotio.wait_until(lambda: info(d)["migrations"] == 0, 60,
                         what="the pins' copies")
        bad = check_blocks(d.path, hdd, model, since, issued)
        assert not bad, (bad[:5], c, info(d), log.new()[-3000:])
        s = scrub(d)
        assert s["scrub"] == "done" and s["scrub_mismatches"] == 0, s
        assert s["scrub_checked"] == s["slots_used"] >= c["map_loaded"], \
            (c, s)
        return c


def planted_cut(d, shims, members, copies, image, model, rng):
    """A cut that meets one intent for sure, with the load stopped: the 16
    extents of sectors 0-2047 pinned, the first one's replica read from
    the SSD (a read hit), all recorded (no map write for three commit
    periods), then a writer rewriting block 0 every 0.2 s. A commit
    records a replica again only after a whole period (1 s) with no write
    to it, so its record is an intent at any instant, and the cut meets
    it: the activation over the image compares it with the HDD, and
    keeps it, or drops it if a write was in flight with one half landed.
    Returns the image's (intents kept, intents dropped)."""
    d.message("pin", "0", "2048")

    def hit():
        before = info(d)["read_hits"]
        with directio.Direct(d.path) as r:
            r.read(0, BLOCK)
        return info(d)["read_hits"] > before

    hotio.wait_until(hit, 60, what="block 0's replica")
    recorded(d)
    stop, writes, errors = threading.Event(), [], []

    def writer():
        try:
            with directio.Direct(d.path, write=True, max_bytes=BLOCK) as o:
                while not stop.is_set():
                    gen = model.next_gen()
                    model.issue(0, gen)
                    o.write(0, stamp.make(0, gen, SEED))
                    model.complete(0)
                    writes.append(gen)
                    stop.wait(0.2)
        except Exception as e:          # noqa: BLE001: asserted below
            errors.append(repr(e))

    t = threading.Thread(target=writer)
    t.start()
    try:
        hotio.wait_until(lambda: len(writes) >= 3 or errors, 30,
                         what="the writer's first writes")
        done = list(model.done)
        issued = cut(shims, members, copies, rng,
                     lambda: [len(ops) for ops in model.ops])
    finally:
        stop.set()
        t.join()
    assert not errors, errors
    c = check_image(image, copies[0].path, model, done, issued, 16)
    return c["intents_kept"], c["intents_dropped"]


def run_cuts(policy, plant=False):
    """CUTS cuts during the load; with plant, one more after it:
    planted_cut(). Returns the kept shares, the counters at the end of the
    load with the intents of its cuts, and the planted cut's intents."""
    rng = random.Random(SEED)
    model = Model()
    retained = []
    intents = [0, 0]
    with devices.hdd(unique("hdd"), HDD_MB, latency_ms=1.0) as h, \
            devices.ssd(unique("ssd"), SSD_MB) as s, \
            devices.fast(unique("hc"), HDD_MB) as hc, \
            devices.fast(unique("sc"), SSD_MB) as sc, \
            devices.linear(unique("hs"), h.path) as hs, \
            devices.linear(unique("ss"), s.path) as ss:
        fill(h.path)
        opts = ("hdd_id", HDD_ID, "write_policy", policy)
        line = hottier_table(hs.path, ss.path, EXTENT, opts=opts)
        # Over the image: replicas read from the SSD, and no promotion
        # while it is checked.
        image = hottier_table(hc.path, sc.path, EXTENT,
                              opts=(*opts, "routing", "ssd",
                                    "promote_threshold", "1000000"))
        with devices.DmDevice(unique("ht"), line) as d, \
                Load(d.path, model, write_share=0.05) as load:
            time.sleep(WARM_S)
            pinned = 0
            for n in range(CUTS):
                # A pin acknowledged before the cut survives it.
                if n % 2:
                    d.message("unpin", "0", "2048")
                    pinned = 0
                else:
                    d.message("pin", "0", "2048")
                    pinned = 16
                time.sleep(0.2 + rng.random())
                before = info(d)
                done = list(model.done)
                issued = cut((hs, ss), (h, s), (hc, sc), rng,
                             lambda: [len(ops) for ops in model.ops])
                load.check()
                c = check_image(image, hc.path, model, done, issued,
                                pinned)
                assert c["map_loaded"] <= before["slots_total"], c
                retained.append(c["map_loaded"] / max(1, before["slots_used"]))
                intents[0] += c["intents_kept"]
                intents[1] += c["intents_dropped"]
            load.check()
            end = info(d)
            load.halt()
            planted = planted_cut(d, (hs, ss), (h, s), (hc, sc), image,
                                  model, rng) if plant else None
    end["intents_kept"], end["intents_dropped"] = intents
    return retained, end, planted


def report(policy, retained, end):
    med = statistics.median(retained)
    # Records and invalidations together, over the copies made.
    per_promotion = end["map_writes"] / max(1, end["promotions"])
    hotio.save(f"crash_{policy}", {"cuts": len(retained),
                                   "retained": retained, "median": med,
                                   "min": min(retained),
                                   "map_writes": end["map_writes"],
                                   "promotions": end["promotions"],
                                   "writes": end["writes"],
                                   "intents_kept": end["intents_kept"],
                                   "intents_dropped":
                                   end["intents_dropped"]})
    print(f"crash cuts, write {policy}: {len(retained)} cuts, replicas kept "
          f"median {med:.3f}, min {min(retained):.3f}; "
          f"{per_promotion:.2f} map writes a promotion; intents compared "
          f"at activation: {end['intents_kept']} kept, "
          f"{end['intents_dropped']} dropped")
    return med


# The issue's goal is 0.95 of the replicas kept during a read-mostly load
# (95% reads, as YCSB's "read mostly"). Written-through replicas are kept
# when they equal the HDD (intents), so what is lost is the replicas
# copied in the last commit period or two and those with a write in
# flight: make check's 25 cuts kept a median of 0.965 (0.81 to 0.96 before
# intents, which lost every replica written in the last second or two;
# write-around 0.925). make check
# holds loose floors; the figures are saved and reported. Write-around
# drops a replica at each write, so fewer are recorded.
@pytest.mark.debug_soak
def test_crash_cuts_write_through(hottier_module):
    retained, end, planted = run_cuts("through", plant=True)
    # The planted cut meets its one intent, whatever the kernel's pace.
    print(f"planted cut: intents kept {planted[0]}, dropped {planted[1]}")
    assert sum(planted) == 1, planted
    # The load writes hot replicas all along: intents are met at
    # activations, and most of them equal the HDD. make check's 25 cuts
    # met about 40 a cut; the debug kernel makes one cut, at a fifth of
    # the pace, and one of its runs met none (a chance, not a fault: the
    # planted cut is that tier's proof of the path).
    if CUTS >= 5:
        assert end["intents_kept"] > 0, end
    assert report("through", retained, end) >= 0.85


def test_crash_cuts_write_around(hottier_module):
    retained, end, _ = run_cuts("around")
    assert report("around", retained, end) >= 0.5


def test_an_ssd_failing_writes_leaves_no_stale_replica(hottier_module):
    """dm-flakey error_writes under the SSD, one second in two, while the
    load runs: records, invalidations, copies and write-throughs fail
    now and then, the device degrades or not. Removed (its stop may not
    write the map) and made again over the SSD, healthy: every block is
    the last one written, and scrub finds no stale replica; cold at
    worst."""
    model = Model()
    with devices.hdd(unique("hdd"), HDD_MB, latency_ms=1.0) as h, \
            devices.ssd(unique("ssd"), SSD_MB) as s, \
            devices.linear(unique("fl"), s.path) as fl:
        fill(h.path)
        opts = ("hdd_id", HDD_ID, "ssd_error_threshold", "1000000")
        line = hottier_table(h.path, fl.path, EXTENT, opts=opts)
        with devices.DmDevice(unique("ht"), line) as d, \
                Load(d.path, model, write_share=0.05) as load:
            # Once the map is marked in use: a resume that cannot mark
            # it is refused.
            fl.reload(devices.flakey_table(s.path, 1, 1, "error_writes"))
            time.sleep(WARM_S)
            load.halt()
            load.check()
            during = info(d)
        assert during["ssd_errors"] > 0, during
        done = list(model.done)
        issued = [len(ops) for ops in model.ops]
        image = hottier_table(h.path, s.path, EXTENT,
                              opts=(*opts, "routing", "ssd",
                                    "promote_threshold", "1000000"))
        c = check_image(image, h.path, model, done, issued, 0)
        print(f"error_writes: {during['ssd_errors']} SSD errors, "
              f"{c['map_loaded']} replicas kept of {during['slots_used']}")


# The drop_writes measurement: seconds of drops in each round, and the
# samples map_verify compares.
# make check makes one round; make soak the three of the first figures.
# Its figures are counts of replicas, not timings: it runs in the crash
# boot beside another guest, not in the measurement boot.
DROP_SECONDS = tuple(int(s) for s in
                     os.environ.get("HOTTIER_DROP_SECONDS", "4").split())
DROP_VERIFY = (1, 4, 32)


def drop_round(rng, seconds):
    """One round of test_an_ssd_dropping_writes_is_caught_by_map_verify_
    only_by_chance(): the replicas restored that differ from the HDD
    (a full scrub, over a copy of the SSD), and for each sample size
    whether map_verify caught them (over a copy each: a catch drops
    every replica)."""
    model = Model()
    with devices.hdd(unique("hdd"), HDD_MB, latency_ms=1.0) as h, \
            devices.ssd(unique("ssd"), SSD_MB) as s, \
            devices.fast(unique("sc"), SSD_MB) as sc, \
            devices.linear(unique("fl"), s.path) as fl:
        fill(h.path)
        opts = ("hdd_id", HDD_ID)
        with devices.DmDevice(unique("ht"),
                              hottier_table(h.path, fl.path, EXTENT,
                                            opts=opts)) as d, \
                Load(d.path, model, write_share=0.05) as load:
            time.sleep(WARM_S / 2 + rng.random() * 5)
            # The SSD acknowledges and drops every write, one second in
            # two: write-throughs, copies and records alike.
            fl.reload(devices.flakey_table(s.path, 1, 1, "drop_writes"))
            time.sleep(seconds)
            fl.reload(devices.linear_table(s.path))
            load.halt()
            # Live reads of dropped replicas were stale: by design.
            live_stale = len(load.errors)
        quiet = ("routing", "ssd", "promote_threshold", "1000000")
        # The truth: every restored replica compared with the HDD.
        copy(s.path, sc.path)
        with devices.PrivateDmDevice(unique("all"), hottier_table(
                h.path, sc.path, EXTENT, opts=(*opts, *quiet))) as d:
            restored = info(d)["map_loaded"]
            st = scrub(d)
            assert st["scrub"] == "done", st
            stale = st["scrub_mismatches"]
        caught = {}
        for n in DROP_VERIFY:
            copy(s.path, sc.path)
            with devices.PrivateDmDevice(unique("vf"), hottier_table(
                    h.path, sc.path, EXTENT,
                    opts=(*opts, *quiet, "map_verify", str(n)))) as d:
                c = info(d)
                caught[n] = c["map_dropped"] > 0 and c["slots_used"] == 0
                if caught[n]:
                    # Cold, and what it reads is the HDD's.
                    bad = check_blocks(d.path, h.path, model,
                                       list(model.done),
                                       [len(ops) for ops in model.ops])
                    assert not bad, bad[:5]
    print(f"drop_writes for {seconds} s: {restored} replicas restored, "
          f"{stale} stale; caught by map_verify "
          f"{[n for n in DROP_VERIFY if caught[n]]} of {DROP_VERIFY}; "
          f"{live_stale} stale live reads")
    return {"drop_seconds": seconds, "restored": restored, "stale": stale,
            "caught": caught, "live_stale_reads": live_stale}


def test_an_ssd_dropping_writes_is_caught_by_map_verify_only_by_chance(
        hottier_module):
    """dm-flakey drop_writes under the SSD, one second in two, while the
    load runs: an SSD that acknowledges writes it never makes. No
    metadata scheme sees that (Documentation/hottier.rst, what a crash
    keeps): replicas go stale, live and after a clean remove. The
    activation check is the only defence: for each round (DROP_SECONDS)
    the stale replicas restored and whether map_verify with each sample
    of DROP_VERIFY caught them are measured and saved. Asserted: drops
    left stale replicas (else nothing was measured), the check drops
    nothing in a round without them, and a device whose check caught
    them reads the HDD's data."""
    rng = random.Random(SEED + 1)
    rounds = [drop_round(rng, t) for t in DROP_SECONDS]
    hotio.save("drop_writes", {"map_verify": DROP_VERIFY,
                               "rounds": rounds})
    for n in DROP_VERIFY:
        hit = sum(r["caught"][n] for r in rounds if r["stale"])
        print(f"map_verify {n}: caught {hit} of "
              f"{sum(1 for r in rounds if r['stale'])} rounds with stale "
              f"replicas")
    assert any(r["stale"] for r in rounds), rounds
    for r in rounds:
        assert r["stale"] or not any(r["caught"].values()), r


# dm-log-writes under each member: what a power cut keeps (see
# tests/lib/replaylog.py), at paired marks.
MARKS = int(os.environ.get("HOTTIER_LOGWRITES_MARKS", "10"))
# Rare enough that the commits' own HDD flushes are what make most writes
# durable: a commit that recorded a replica without one would show.
FSYNC_EVERY = 200


def copy(src, dst):
    subprocess.run(["dd", f"if={src}", f"of={dst}", "bs=1M",
                    "iflag=direct", "oflag=direct", "status=none"],
                   check=True)


@pytest.mark.parametrize("policy", [
    "through", pytest.param("around", marks=pytest.mark.soak)])
def test_power_cuts_replayed_from_dm_log_writes(hottier_module, policy):
    """Each member under its own dm-log-writes log; the load writes,
    discards and fsyncs while promotions evict. At random instants both
    logs are suspended and marked together. Each member is then replayed
    to each mark: the power cut at that instant, write caches lost (a
    single shared log would let an HDD flush make SSD writes durable,
    which would hide a missing one)."""
    rng = random.Random(SEED + 1)
    model = Model()
    marks = []
    with devices.hdd(unique("hdd"), HDD_MB, latency_ms=1.0) as h, \
            devices.ssd(unique("ssd"), SSD_MB) as s, \
            devices.fast(unique("hb"), HDD_MB) as hbase, \
            devices.fast(unique("hl"), 64) as hlog, \
            devices.fast(unique("sl"), 384) as slog, \
            devices.fast(unique("hi"), HDD_MB) as hi, \
            devices.fast(unique("si"), SSD_MB) as si, \
            devices.fast(unique("hx"), HDD_MB) as hx, \
            devices.fast(unique("sx"), SSD_MB) as sx:
        fill(h.path)
        copy(h.path, hbase.path)
        copy(hbase.path, hi.path)
        hl_line = f"0 {devices.sectors(h.path)} log-writes {h.path} " \
                  f"{hlog.path}"
        sl_line = f"0 {devices.sectors(s.path)} log-writes {s.path} " \
                  f"{slog.path}"
        opts = ("hdd_id", HDD_ID, "write_policy", policy)
        with devices.DmDevice(unique("hlw"), hl_line) as hl, \
                devices.DmDevice(unique("slw"), sl_line) as sl:
            line = hottier_table(hl.path, sl.path, EXTENT, opts=opts)
            with devices.DmDevice(unique("ht"), line) as d, \
                    Load(d.path, model, write_share=0.05,
                         fsync_every=FSYNC_EVERY) as load:
                time.sleep(5)
                for n in range(MARKS):
                    time.sleep(0.3 + rng.random())
                    for dev in (hl, sl):
                        suspend(dev.name)
                    marks.append((list(model.durable),
                                  [len(ops) for ops in model.ops]))
                    for dev in (hl, sl):
                        dev.message("mark", f"m{n}")
                        resume(dev.name)
                load.halt()
                load.check()
                end = info(d)
        hlr, slr = replaylog.Log(hlog.path), replaylog.Log(slog.path)
        image = hottier_table(hx.path, sx.path, EXTENT,
                              opts=(*opts, "routing", "ssd",
                                    "promote_threshold", "1000000"))
        kept = []
        hpos = spos = 0
        for n, (durable, issued) in enumerate(marks):
            hidx, sidx = hlr.mark_index(f"m{n}"), slr.mark_index(f"m{n}")
            hlr.replay(hi.path, hpos, hidx)
            slr.replay(si.path, spos, sidx)
            hpos, spos = hidx, sidx
            copy(hi.path, hx.path)
            copy(si.path, sx.path)
            # Not older than what a completed fsync covered.
            c = check_image(image, hx.path, model, durable, issued, 0)
            kept.append(c["map_loaded"])
        flushes = sum(1 for e in slr.entries
                      if e.flags & (replaylog.FLUSH | replaylog.FUA))
        hotio.save(f"log_writes_{policy}", {
            "marks": len(marks), "kept": kept,
            "ssd_entries": len(slr.entries), "ssd_flush_fua": flushes,
            "hdd_entries": len(hlr.entries), "end": end})
        print(f"log-writes, write {policy}: {len(marks)} marks replayed, "
              f"replicas kept {kept}; SSD log {len(slr.entries)} entries, "
              f"{flushes} flush or FUA")
        # The map is used: replicas come back at the later marks.
        assert max(kept) > 0, kept
