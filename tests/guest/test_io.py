"""The v0 data path: everything on the HDD, flushes on the HDD alone."""

import os
import subprocess
import threading
import time

import pytest

import devices
import directio
from conftest import KernelLog, copies_stopped, hottier_table, info, scrub, \
    unique, wait_copies_done
from tracing import Blktrace

pytestmark = pytest.mark.kernel

EXTENT = 2048       # sectors: the hottier fixture's extent


def dd(*args):
    subprocess.run(["dd", "status=none", *args], check=True)


def read_sectors(path, start, count):
    with open(path, "rb") as f:
        f.seek(start * 512)
        return f.read(count * 512)


# Status fields that describe the present state, which reset_stats leaves.
STATE_FIELDS = ("slots_used", "slots_total", "migrations", "pinned", "tracked",
                "scrub_checked", "scrub_mismatches", "ssd_latency_us",
                "hdd_latency_us", "migrations_allowed", "mode", "scrub_slots",
                "scrub", "map", "map_loaded", "map_dropped", "map_checked",
                "map_writes", "migrations_waiting")


def counters(dev):
    return {k: v for k, v in info(dev).items() if k not in STATE_FIELDS}


def test_status_counts_reads_writes_and_sectors(hottier):
    hottier.message("reset_stats")
    assert set(counters(hottier).values()) == {0}
    dd("if=/dev/urandom", f"of={hottier.path}", "bs=4k", "count=8",
       "oflag=direct")
    c = info(hottier)
    assert (c["writes"], c["write_sectors"]) == (8, 64)
    # Closing a written device makes udev re-probe it: let those reads pass.
    devices.settle()
    hottier.message("reset_stats")
    dd(f"if={hottier.path}", "of=/dev/null", "bs=4k", "count=3",
       "iflag=direct")
    c = info(hottier)
    assert (c["reads"], c["read_sectors"]) == (3, 24)
    assert c["writes"] == 0
    hottier.message("reset_stats")
    assert set(counters(hottier).values()) == {0}


def test_writes_land_on_the_hdd_only(hottier):
    data = os.urandom(64 * 1024)
    with open(hottier.path, "r+b", buffering=0) as f:
        f.seek(5 * 1024 * 1024)
        f.write(data)
        os.fsync(f.fileno())
    assert read_sectors(hottier.hdd.path, 5 * 2048, 128) == data
    with open(hottier.path, "rb") as f:
        f.seek(5 * 1024 * 1024)
        assert f.read(len(data)) == data


@pytest.mark.debug_soak
def test_bios_are_split_at_extent_boundaries(pair):
    h, s = pair
    extent = 64     # 32 KiB extents: a 256 KiB read spans 8 of them
    with devices.DmDevice(unique("ht"),
                          hottier_table(h.path, s.path, extent)) as d:
        d.message("reset_stats")
        dd(f"if={d.path}", "of=/dev/null", "bs=256k", "count=1",
           "iflag=direct")
        c = info(d)
        assert c["read_sectors"] == 512
        assert c["reads"] == 8
        # Unaligned: 32 KiB starting 16 KiB into an extent is two bios.
        d.message("reset_stats")
        dd(f"if={d.path}", "of=/dev/null", "bs=16k", "skip=1", "count=2",
           "iflag=direct")
        assert info(d)["reads"] >= 2


@pytest.mark.debug_soak
def test_flush_reaches_the_hdd_alone(cached_pair):
    h, s = cached_pair
    with devices.DmDevice(unique("ht"), hottier_table(h.path, s.path)) as d:
        d.hdd, d.ssd = h, s
        check_flush_reaches_the_hdd_alone(d)


def check_flush_reaches_the_hdd_alone(hottier):
    # udev's probe reads may have promoted the first extents: with no
    # replicas and no promotions, a write's data goes to the HDD alone.
    hottier.message("promote_threshold", "1000000")
    hottier.message("invalidate")
    with Blktrace(hottier.ssd.path) as ssd, Blktrace(hottier.hdd.path) as hdd:
        dd("if=/dev/zero", f"of={hottier.path}", "bs=4k", "count=1",
           "seek=1000", "conv=fsync")
    # Both members have a volatile cache: the SSD's is never flushed,
    # the map (off here) flushes its own writes.
    assert ssd.count("F") == 0, ssd.lines
    assert hdd.count("F") >= 1, hdd.lines
    # The data itself went to the HDD alone.
    assert not [e for e in ssd.queued() if "W" in e[1] and e[3]]
    assert info(hottier)["flushes"] >= 1


@pytest.mark.debug_soak
def test_fsync_with_no_member_write_cache_keeps_replicas_exact(hottier):
    """Members without a volatile cache: the block layer strips each empty
    flush's REQ_PREFLUSH and ends it before the member sees it, so the
    flush comes back to end_io looking like an empty write (this once
    made end_io read state map never set: replicas went stale, memory was
    corrupted). Write-through writes with fsync between them, over a
    replica, must leave device, HDD and replica equal."""
    hottier.message("pin", "0", str(EXTENT))
    deadline = time.monotonic() + 60
    while info(hottier)["slots_used"] < 1 or info(hottier)["migrations"]:
        assert time.monotonic() < deadline, info(hottier)
        time.sleep(0.1)
    want = bytearray(read_sectors(hottier.path, 0, EXTENT))
    fd = os.open(hottier.path, os.O_WRONLY)
    try:
        for i in range(64):
            data = os.urandom(4096)
            off = (i * 7919 % (EXTENT // 8)) * 4096
            os.pwrite(fd, data, off)
            os.fsync(fd)
            want[off:off + 4096] = data
    finally:
        os.close(fd)
    c = info(hottier)
    # udev's probe reads may have promoted other extents: none was dropped.
    assert c["slots_used"] >= 1 and c["demotions"] == 0, c
    subprocess.run(["blockdev", "--flushbufs", hottier.path], check=True)
    assert read_sectors(hottier.path, 0, EXTENT) == bytes(want)
    assert read_sectors(hottier.hdd.path, 0, EXTENT) == bytes(want)
    # The reads above and udev's probe reads may still start copies, and a
    # copy that completes while scrub runs is a replica scrub never
    # counted: no new copy, none in flight, then the scrub.
    copies_stopped(hottier)
    c = scrub(hottier)
    assert c["scrub"] == "done", c
    assert c["scrub_slots"] == c["slots_total"], c
    assert c["scrub_checked"] == c["slots_used"], c
    assert c["scrub_mismatches"] == 0, c


@pytest.mark.debug_soak
def test_an_fsync_sends_nothing_to_the_ssd(hottier_module):
    """The caller's flushes go to the HDD alone: with an SSD that fails
    every write (a flush too), an fsync succeeds and the SSD saw no error,
    so the device stays healthy."""
    with devices.fast(unique("hdd"), 256, cache_mb=4) as h, \
         devices.fast(unique("ssd"), 64, cache_mb=4) as s, \
         devices.flakey(unique("fl"), s.path, 0, 1, "error_writes") as bad:
        # No copies: a copy would write the failing SSD.
        line = hottier_table(h.path, bad.path,
                             opts=("promote_threshold", "1000000"))
        with devices.DmDevice(unique("ht"), line) as d:
            d.message("reset_stats")
            with open(d.path, "r+b", buffering=0) as f:
                for _ in range(3):
                    f.write(b"x" * 4096)
                    os.fsync(f.fileno())        # raises on a flush error
            c = info(d)
            assert c["flushes"] >= 3, c
            assert (c["mode"], c["ssd_errors"], c["ssd_flush_errors"]) == \
                ("rw", 0, 0), c


@pytest.mark.debug_soak
def test_hdd_flush_error_reaches_the_caller(hottier_module):
    with devices.fast(unique("hdd"), 256, cache_mb=4) as h, \
         devices.fast(unique("ssd"), 64, cache_mb=4) as s, \
         devices.flakey(unique("fl"), h.path, 0, 1, "error_writes") as bad:
        with devices.DmDevice(unique("ht"),
                              hottier_table(bad.path, s.path)) as d:
            fd = os.open(d.path, os.O_RDWR)
            try:
                os.write(fd, b"x" * 4096)
                try:
                    os.fsync(fd)
                except OSError:
                    return
                raise AssertionError("fsync hid the HDD's write error")
            finally:
                os.close(fd)


@pytest.mark.debug_soak
def test_discard_spanning_many_extents_reaches_the_hdd(hottier):
    dd("if=/dev/urandom", f"of={hottier.path}", "bs=1M", "count=8",
       "oflag=direct")
    hottier.message("reset_stats")
    # 5.5 MiB from 1.25 MiB: unaligned to extents, crossing six of them.
    subprocess.run(["blkdiscard", "-o", str(1280 * 1024), "-l",
                    str(5632 * 1024), hottier.path], check=True)
    assert info(hottier)["discards"] >= 1
    zero = bytes(512 * 11264)
    assert read_sectors(hottier.hdd.path, 2560, 11264) == zero
    assert read_sectors(hottier.path, 2560, 11264) == zero
    assert read_sectors(hottier.path, 2048, 512) != bytes(512 * 512)


def test_write_zeroes_spanning_extents_reaches_the_hdd(hottier):
    dd("if=/dev/urandom", f"of={hottier.path}", "bs=1M", "count=4",
       "oflag=direct")
    subprocess.run(["blkdiscard", "-z", "-o", str(512 * 1024), "-l",
                    str(2 * 1024 * 1024), hottier.path], check=True)
    assert read_sectors(hottier.hdd.path, 1024, 4096) == bytes(512 * 4096)
    assert read_sectors(hottier.path, 0, 1024) != bytes(512 * 1024)


def test_discard_ignore_hides_discard(pair):
    h, s = pair
    line = hottier_table(h.path, s.path, opts=("discard", "ignore"))
    with devices.DmDevice(unique("ht"), line) as d:
        q = f"/sys/block/{devices.kname(d.path)}/queue/discard_max_bytes"
        assert open(q).read().strip() == "0"
        r = subprocess.run(["blkdiscard", d.path], capture_output=True)
        assert r.returncode != 0
    with devices.DmDevice(unique("ht"), hottier_table(h.path, s.path)) as d:
        q = f"/sys/block/{devices.kname(d.path)}/queue/discard_max_bytes"
        assert int(open(q).read()) > 0


def discard_max_bytes(dev):
    kname = devices.kname(dev.path)
    with open(f"/sys/block/{kname}/queue/discard_max_bytes") as f:
        return int(f.read())


def test_discard_needs_only_the_hdd(hottier_module):
    """Discards go to the HDD alone: an SSD without discard does not hide
    it, an HDD without discard does."""
    with devices.fast(unique("hdd"), 256) as h, \
         devices.fast(unique("ssd"), 64, discard=False) as s:
        with devices.DmDevice(unique("ht"),
                              hottier_table(h.path, s.path)) as d:
            assert discard_max_bytes(d) > 0
            subprocess.run(["blkdiscard", "-l", "4M", d.path], check=True)
    with devices.fast(unique("hdd"), 256, discard=False) as h, \
         devices.fast(unique("ssd"), 64) as s:
        with devices.DmDevice(unique("ht"),
                              hottier_table(h.path, s.path)) as d:
            assert discard_max_bytes(d) == 0


def test_limits_stack_over_both_members(hottier_module):
    """Reads will go to the SSD: its 4 KiB logical blocks bind the target."""
    with devices.fast(unique("hdd"), 256) as h, \
         devices.fast(unique("ssd"), 64, blocksize=4096) as s:
        with devices.DmDevice(unique("ht"),
                              hottier_table(h.path, s.path)) as d:
            kname = devices.kname(d.path)
            lbs = open(f"/sys/block/{kname}/queue/logical_block_size")
            assert lbs.read().strip() == "4096"


def test_ssd_smaller_than_the_target_is_accepted(pair):
    """iterate_devices reports each member with its own length: a 64 MiB
    SSD under a 256 MiB target is valid."""
    h, s = pair
    assert devices.sectors(s.path) < devices.sectors(h.path)
    with devices.DmDevice(unique("ht"), hottier_table(h.path, s.path)) as d:
        assert devices.sectors(d.path) == devices.sectors(h.path)


def test_unknown_message_is_refused_with_a_log_line(hottier):
    log = KernelLog()
    r = subprocess.run(["dmsetup", "message", hottier.name, "0", "frobnicate",
                        "1"], capture_output=True, text=True)
    assert r.returncode != 0
    assert "Invalid argument" in r.stderr
    assert "unsupported message 'frobnicate'" in log.new()


def most_writes_in_flight(dev, *fio_args):
    """fio's random 4 KiB writes at iodepth 16 to @dev, while the writes
    in flight on the member @dev.member (its /sys/block inflight file) are
    sampled: the most seen at once."""
    path = f"/sys/block/{devices.kname(dev.member.path)}/inflight"
    most, done = 0, threading.Event()

    def sample():
        nonlocal most
        while not done.is_set():
            with open(path) as f:
                most = max(most, int(f.read().split()[1]))
            time.sleep(0.001)

    t = threading.Thread(target=sample)
    t.start()
    try:
        subprocess.run(["fio", "--name=w", f"--filename={dev.path}",
                        "--direct=1", "--ioengine=libaio", "--iodepth=16",
                        "--bs=4k", "--rw=randwrite", "--randseed=37",
                        "--output-format=terse", *fio_args],
                       check=True, capture_output=True)
    finally:
        done.set()
        t.join()
    return most


def test_writes_to_one_replica_wait_only_for_writes_they_overlap(
        hottier_module):
    """Write-throughs to one replicated extent on an HDD that takes many
    at once (20 ms each): those that do not overlap are in flight together
    on the HDD, those that do overlap one at a time, so both members apply
    them in one order; the replica still equals the HDD."""
    with devices.NullBlk(unique("hdd"), 64, completion_nsec=20_000_000,
                         hw_queue_depth=32) as h, \
            devices.fast(unique("ssd"), 16) as s:
        line = hottier_table(h.path, s.path, EXTENT,
                             opts=("promote_threshold", "1000000"))
        with devices.DmDevice(unique("ht"), line) as d:
            d.member = h
            d.message("pin", "0", str(EXTENT))
            assert wait_copies_done(d)["slots_used"] == 1
            apart = most_writes_in_flight(d, "--size=1m", "--number_ios=320")
            same = most_writes_in_flight(d, "--size=4k", "--number_ios=24")
            assert apart >= 8, apart
            assert same == 1, same
            c = scrub(d)
            assert (c["slots_used"], c["scrub_checked"],
                    c["scrub_mismatches"]) == (1, 1, 0), c


def test_scrub_drops_a_replica_that_differs_and_a_pin_comes_back(
        hottier_module):
    """Replicas overwritten behind the device's back (every slot of the
    SSD's data area): scrub counts each, logs it and drops it at once, so
    reads come from the HDD; the pinned one is copied again and equal."""
    with devices.fast(unique("hdd"), 64) as h, \
            devices.fast(unique("ssd"), 16) as s:
        with directio.Direct(h.path, write=True,
                             max_bytes=2 * EXTENT * 512) as f:
            f.write(0, os.urandom(2 * EXTENT * 512))
        want = read_sectors(h.path, 0, 2 * EXTENT)
        line = hottier_table(h.path, s.path, EXTENT,
                             opts=("promote_threshold", "1000000"))
        with devices.DmDevice(unique("ht"), line) as d:
            d.message("pin", "0", str(EXTENT))
            d.message("promote", str(EXTENT), str(EXTENT))
            assert wait_copies_done(d)["slots_used"] == 2
            ssd = devices.sectors(s.path)
            first = directio.slot_sector(ssd, EXTENT, 0)
            with directio.Direct(s.path, write=True,
                                 max_bytes=(ssd - first) * 512) as f:
                f.write(first * 512, os.urandom((ssd - first) * 512))
            log = KernelLog()
            before = info(d)
            c = scrub(d)
            assert (c["scrub_checked"], c["scrub_mismatches"]) == (2, 2), c
            said = log.new()
            assert said.count("differs from the HDD: dropped") == 2, said
            c = wait_copies_done(d)
            assert (c["slots_used"], c["pinned"]) == (1, 1), c
            assert c["demotions"] == before["demotions"] + 2, c
            assert c["promotions"] == before["promotions"] + 1, c
            assert read_sectors(d.path, 0, 2 * EXTENT) == want
            c = scrub(d)
            assert (c["scrub_checked"], c["scrub_mismatches"]) == (1, 0), c
