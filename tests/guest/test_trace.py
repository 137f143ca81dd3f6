"""hottierctl trace against real devices: what blktrace sees each member
do agrees with the target's own counters, copies are told apart from the
I/O the device sends, and bad input is refused in one line."""

import json
import mmap
import os
import random
import shutil
import subprocess
import tempfile
import threading
import time

import pytest

import devices
from conftest import hottier_table, info, unique

pytestmark = pytest.mark.cli

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
HOTTIERCTL = os.path.join(REPO, "userspace", "hottierctl")
NEVER = "1000000"               # promote_threshold: nothing by heat alone
EXTENT = 2048                   # sectors (1 MiB)
WINDOW = 3                      # seconds traced
LOAD_SECONDS = 1.0              # the load's share of the window, at most


def hottier(pair, *opts):
    h, s = pair
    opts = ("promote_threshold", NEVER) + opts
    return devices.DmDevice(unique("tr"), hottier_table(h.path, s.path,
                                                        opts=opts))


def wait_until(what, check, timeout=60):
    deadline = time.monotonic() + timeout
    while not check():
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def quiesced(dev, extents):
    """Every copy done: the pinned extents resident, none in flight."""
    def done():
        i = info(dev)
        return (i["migrations"] == 0 and i["pinned"] == extents and
                i["slots_used"] >= extents)
    wait_until(f"{extents} pinned extents copied", done)


class Trace:
    """hottierctl trace in the background; started() returns once it says
    every device is traced, result() gives its output."""

    def __init__(self, *args):
        self.proc = subprocess.Popen([HOTTIERCTL, "trace", *args],
                                     stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        self.err = []
        self.tracing = threading.Event()
        self.reader = threading.Thread(target=self.read, daemon=True)
        self.reader.start()

    def read(self):
        for line in self.proc.stderr:
            self.err.append(line)
            if line.startswith("trace: tracing "):
                self.tracing.set()
        self.tracing.set()              # ended: started() looks why

    def started(self, timeout=60):
        assert self.tracing.wait(timeout), "trace did not start in time"
        assert any(line.startswith("trace: tracing ") for line in self.err), \
            "".join(self.err)

    def result(self, timeout=120, torn_ok=False):
        """Its output; with torn_ok, None if it failed on a torn record
        (trace.TornTrace: a kernel relay race, not a fault of the count)."""
        out = self.proc.stdout.read()
        self.proc.wait(timeout)
        self.reader.join(timeout)
        if (torn_ok and self.proc.returncode != 0 and
                any("torn record" in line for line in self.err)):
            print("torn:", "".join(self.err))
            return None
        assert self.proc.returncode == 0, "".join(self.err)
        return out


def read_4k(path, offsets):
    """A synchronous O_DIRECT read of 4 KiB at each offset: one bio each
    (aligned within an extent: dm never splits it, nothing merges it),
    for at most LOAD_SECONDS; returns how many were read."""
    buf = mmap.mmap(-1, 4096)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    start = time.monotonic()
    done = 0
    try:
        for offset in offsets:
            if time.monotonic() - start > LOAD_SECONDS:
                break
            assert os.preadv(fd, [buf], offset) == 4096
            done += 1
    finally:
        os.close(fd)
    return done


def test_trace_counts_agree_with_the_counters(pair):
    hot = 8                             # pinned extents: 0 to 8 MiB
    with hottier(pair) as d:
        d.message("pin", "0", str(hot * EXTENT))
        quiesced(d, hot)
        rnd = random.Random(14)
        # Every other read in the pinned extents (replica reads: routing
        # sends them to the SSD or, by its latency estimates, the HDD),
        # the rest in 56 MiB never copied (misses: the HDD).
        offsets = [rnd.randrange(0, hot << 20, 4096) if i % 2 else
                   rnd.randrange(hot << 20, 64 << 20, 4096)
                   for i in range(2000)]
        # A torn trace (once in many runs: blktrace read a record before
        # the kernel wrote it) is said so and counts nothing: the window
        # is run once more, from zeroed counters. Any other failure fails.
        for attempt in (1, 2):
            d.message("reset_stats")
            t = Trace(d.name, str(WINDOW), "--json")
            t.started()
            issued = read_4k(d.path, offsets)
            after = info(d)             # inside the window, load done
            out = t.result(torn_ok=attempt == 1)
            if out is not None:
                break
        rec = json.loads(out)

    dev, hdd, ssd = rec["device"], rec["hdd"], rec["ssd"]
    to_ssd = after["replica_reads_ssd"]
    to_hdd = after["read_misses"] + after["replica_reads_hdd"]
    print(f"issued {issued}; trace: device {dev['reads']}, HDD "
          f"{hdd['reads']} (from the device {hdd['from_device']['reads']})"
          f", SSD {ssd['reads']} (from the device "
          f"{ssd['from_device']['reads']}); counters: reads "
          f"{after['reads']}, SSD {to_ssd}, HDD {to_hdd} "
          f"({after['read_misses']} misses + {after['replica_reads_hdd']} "
          f"replica reads); Q2C us HDD {hdd['q2c']['read']}, SSD "
          f"{ssd['q2c']['read']}")
    # Both members served reads, or the comparison proves little.
    assert issued >= 50 and to_ssd > 0 and after["read_misses"] > 0, after
    assert after["reads"] == issued, after
    # The load ran wholly inside the trace's window: the device's trace
    # completed every read issued, and nothing was left in flight.
    assert (dev["reads"], dev["read_sectors"]) == (issued, 8 * issued), dev
    for m in (dev, hdd, ssd):
        assert m["in_flight_at_end"] == 0, m
        assert m["completions_of_earlier_bios"] == 0, m

    # Tolerance: none. The counters were reset before the window, and
    # read after the load, still inside it; the load (synchronous 4 KiB
    # direct reads, one bio each, checked above to lie inside the window)
    # is the only I/O: no map (no hdd_id), nothing to copy (the pins were
    # copied and migrations 0 before, promote_threshold never), no writes,
    # so no write-through. Each read the target counts at map time is one
    # bio the trace sees queued and completed on the member it was sent
    # to, and none other.
    assert (ssd["from_device"]["reads"], ssd["reads"]) == (to_ssd, to_ssd)
    assert (hdd["from_device"]["reads"], hdd["reads"]) == (to_hdd, to_hdd)
    assert ssd["read_sectors"] == 8 * to_ssd
    assert hdd["read_sectors"] == 8 * to_hdd
    for m in (hdd, ssd):
        assert m["own"] == {"reads": 0, "read_sectors": 0, "writes": 0,
                            "write_sectors": 0}, m
        assert m["writes"] == 0, m
    assert rec["ssd_read_share"]["reads"] == to_ssd / issued
    # The command's own counter deltas (read as the window opens and
    # after blktrace stops: nearly the same window, with nothing else in
    # it) agree too.
    c = rec["counters"]
    assert (c["reads"], c["replica_reads_ssd"],
            c["read_misses"] + c["replica_reads_hdd"]) == \
        (issued, to_ssd, to_hdd), c
    assert c["migrations_at_start"] == c["migrations_at_end"] == 0
    # Q2C: one latency per counted read, ordered statistics.
    for m in (dev, hdd, ssd):
        q = m["q2c"]["read"]
        assert q["count"] == m["reads"], m
        assert 0 < q["p50_us"] <= q["p99_us"], q
        assert q["mean_us"] > 0, q
    assert rec["seconds"] >= WINDOW and rec["dropped_events"] == 0


def test_trace_tells_copies_apart_and_keeps_the_traces(pair):
    extents = 4
    outdir = tempfile.mkdtemp(prefix="trace-", dir="/tmp")
    svg = os.path.join(outdir, "graph.svg")
    draw = ["--svg", svg] if shutil.which("iowatcher") else []
    try:
        # A torn trace (a kernel relay race, see the test above) counts
        # nothing: the copies are made once more, on a new device.
        for attempt in (1, 2):
            with hottier(pair) as d:
                d.message("reset_stats")
                t = Trace(d.name, str(WINDOW), "--json", "--output",
                          outdir, *draw)
                t.started()
                began = time.monotonic()
                # Pinned extents are copied at once (without hdd_id the
                # message does not wait for them): HDD reads and SSD
                # writes that the device never sent.
                d.message("pin", str(100 * EXTENT), str(extents * EXTENT))
                quiesced(d, extents)
                assert time.monotonic() - began < WINDOW, \
                    "the copies outlasted the window"
                out = t.result(torn_ok=attempt == 1)
                kname = os.path.basename(os.path.realpath(d.path))
            if out is not None:
                break
            shutil.rmtree(outdir, ignore_errors=True)
            os.mkdir(outdir)
        rec = json.loads(out)
        hdd, ssd = rec["hdd"], rec["ssd"]
        copied = rec["counters"]["promotions"]
        print(f"promotions {copied}; trace: HDD own {hdd['own']}, SSD own "
              f"{ssd['own']}; from the device: HDD {hdd['from_device']}, "
              f"SSD {ssd['from_device']}")
        assert copied == extents, rec["counters"]
        assert rec["counters"]["migrations_at_end"] == 0
        # Whole extents read from the HDD and written to the SSD, however
        # kcopyd cut them into bios; the device sent nothing.
        assert hdd["own"]["read_sectors"] == extents * EXTENT, hdd
        assert ssd["own"]["write_sectors"] == extents * EXTENT, ssd
        assert hdd["own"]["writes"] == ssd["own"]["reads"] == 0
        for m in (hdd, ssd):
            assert m["from_device"] == {"reads": 0, "read_sectors": 0,
                                        "writes": 0, "write_sectors": 0}, m
        assert rec["device"]["reads"] == rec["device"]["writes"] == 0
        assert rec["ssd_read_share"]["reads"] is None
        # The raw traces stay, as blktrace -D names them, for blkparse,
        # btt or iowatcher.
        kept = set(os.listdir(outdir))
        for name in (kname, hdd["kernel_name"], ssd["kernel_name"]):
            assert f"{name}.blktrace.0" in kept, kept
            assert f"{name}.blkparse.txt" in kept, kept
        assert rec["output"] == outdir
        if draw:
            with open(svg) as f:
                assert "<svg" in f.read(4096)
    finally:
        shutil.rmtree(outdir, ignore_errors=True)


def refusal(argv, wrap=()):
    """hottierctl started on argv (after wrap), to be refused."""
    return subprocess.Popen([*wrap, HOTTIERCTL, *argv],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)


def refused(p):
    """The one line on stderr a refusal ended with (exit status 1)."""
    out, err = p.communicate(timeout=120)
    assert p.returncode == 1 and not out, (p.args, out, err)
    lines = err.strip().split("\n")
    assert len(lines) == 1 and lines[0].startswith("hottierctl: "), err
    return lines[0]


def test_trace_text_and_its_refusals(pair):
    """The text form, and the refusals that depend on the real system
    (the host tests cover the others: a missing device, SECONDS, a
    missing blktrace). All at once: each start costs seconds under TCG."""
    h, _ = pair
    with hottier(pair) as d, devices.linear(unique("lin"), h.path) as lin:
        text = subprocess.Popen([HOTTIERCTL, "trace", d.name, "1"],
                                stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, text=True)
        foreign = refusal(["trace", lin.name, "1"])
        # Without debugfs: unmounted in a mount namespace of its own.
        no_debugfs = refusal(["trace", d.name, "1"], wrap=(
            "unshare", "-m", "--propagation", "private", "sh", "-c",
            'umount -l /sys/kernel/debug && exec "$0" "$@"'))
        assert refused(foreign) == \
            f"hottierctl: '{lin.name}' is not a hottier device"
        line = refused(no_debugfs)
        assert line == ("hottierctl: debugfs is not mounted, and blktrace "
                        "needs it (mount -t debugfs none "
                        "/sys/kernel/debug)"), line

        out, err = text.communicate(timeout=120)
        assert text.returncode == 0, err
        lines = out.splitlines()
        assert lines[0].startswith(f"{d.name} (dm-"), lines
        assert "(HDD)" in lines[0] and "(SSD)" in lines[0]
        assert "Q2C latency, microseconds:" in lines
        assert lines[-1] == "raw traces: removed (--output DIR keeps them)"
        assert err.startswith("trace: tracing ")
