"""SSD faults never reach the caller, nor do HDD read faults of extents the
SSD holds; other HDD faults always do.

The SSD member is a dm-linear over a memory-backed null_blk, so a fault is
injected under a live hottier device by reloading that dm table (dm-flakey
in its error modes, dm-error) or by marking the null_blk's sectors bad.
dm-flakey's drop_writes and corrupt_bio_byte are not used: they lose or
change data silently, which no target can see. The Debian 6.1 kernel's
dm-flakey has no error_reads (added in 6.6): read errors come from its
plain down periods, in which every I/O fails.
"""

import errno
import hashlib
import itertools
import mmap
import os
import time

import pytest

import devices
import hotio
from conftest import KernelLog, hottier_table, info, scrub, unique

EXTENT = 256            # 128 KiB extents: many replicas in a small region
REGION_MB = 8           # two fio jobs, each owning 4 MiB of it
REGION = REGION_MB * 2048
REGION_EXTENTS = REGION // EXTENT
THRESHOLD = 8           # ssd_error_threshold (the default, given explicitly)
SSD_MB = 32             # (32 MiB - metadata) / 128 KiB: 255 slots


def job(rw, *extra):
    """Two fio jobs, each owning half the region; crc32c verify headers in
    every 16 KiB block, so any stale or wrong block fails verification."""
    half = REGION_MB // 2
    return ["--name=v", "--bs=16k", "--iodepth=8", "--numjobs=2",
            f"--size={half}M", f"--offset_increment={half}M",
            "--verify=crc32c", "--verify_fatal=1", f"--rw={rw}", *extra]


WRITE = job("write", "--do_verify=0", "--randseed=11")
# Random reads that check every block's header and checksum. fio 3.33's
# verify makes one pass over a read job's blocks, time_based or not.
VERIFY_READ = job("randread", "--randseed=12", "--time_based",
                  "--runtime=4")
# New data over the whole region, then read back and verified.
REWRITE = job("randwrite", "--do_verify=1", "--randseed=13")


def clean(result, what, record=None):
    """Every fio job ended without an I/O error or a verify failure
    (verify_fatal: a bad block ends its job with an error)."""
    rc, report, tail = result
    assert report is not None, f"{what}: no fio report\n{tail}"
    errs = hotio.job_errors(report)
    ios = {d: hotio.total(report, d, "total_ios") for d in ("read", "write")}
    print(f"{what}: fio rc={rc} job errors={errs} read ios={ios['read']} "
          f"write ios={ios['write']}")
    if record is not None:
        record.append({"run": what, "rc": rc, "job_errors": errs, **ios})
    assert rc == 0 and errs == [0] * len(errs), f"{what}:\n{tail}"


def wait_resident(dev, n, timeout=120):
    return hotio.wait_until(
        lambda: info(dev)["slots_used"] >= n and info(dev)["migrations"] == 0,
        timeout, what=f"{n} replicas")


def table(hdd, ssd, *opts):
    return hottier_table(hdd, ssd, EXTENT, opts=(
        "promote_threshold", "1000000",
        "ssd_error_threshold", str(THRESHOLD), *opts))


class Fault:
    """A fault under the SSD: inject() while fio runs, heal() after."""

    def __init__(self, kind, raw, member):
        self.kind, self.raw, self.member = kind, raw, member
        self.n = devices.sectors(raw.path)

    def inject(self):
        if self.kind == "flakey_down":
            # Up 1 s, down 3 s (every I/O fails), from the reload on.
            # Two reads 1 to 3 s apart cannot both fall in one up second
            # (with up 1 s and down 1 s, read passes 2 s apart each met
            # an up second).
            self.member.reload(devices.flakey_table(self.raw.path, 1, 3))
        elif self.kind == "flakey_error_writes":
            # Always down: writes fail, reads pass.
            self.member.reload(devices.flakey_table(self.raw.path, 0, 3600,
                                                    "error_writes"))
        elif self.kind == "badblocks":
            # Every sector of the SSD: media errors on reads and writes.
            self.raw.add_badblocks(0, self.n - 1)
        elif self.kind == "dm_error":
            self.member.reload(f"0 {self.n} error")
        else:
            raise ValueError(self.kind)

    def heal(self):
        if self.kind == "badblocks":
            self.raw.clear_badblocks(0, self.n - 1)
        else:
            self.member.reload(devices.linear_table(self.raw.path))


def verify_until_degraded(dev, kind, runs, timeout=30):
    """Verified read passes with the fault in place, at least one, until
    the device degrades or timeout seconds pass. flakey_down fails I/O
    only in its down seconds, and a pass of 512 replica reads takes well
    under one (fio's verify reads each block once, time_based or not):
    in one CI run the reads, the rewrite and a pass each fell in an up
    second, and the SSD saw no error. The test asserts the degradation
    after this."""
    deadline = time.monotonic() + timeout
    for n in itertools.count(1):
        what = f"{kind}: verify degraded" + (f", pass {n}" if n > 1 else "")
        clean(hotio.fio(dev.path, *VERIFY_READ), what, runs)
        if info(dev)["mode"] == "degraded" or time.monotonic() > deadline:
            return n


@pytest.mark.parametrize("kind", [
    "flakey_down",
    pytest.param("flakey_error_writes", marks=pytest.mark.soak),
    pytest.param("badblocks", marks=pytest.mark.soak),
    pytest.param("dm_error", marks=[pytest.mark.kernel,
                                    pytest.mark.debug_soak])])
def test_ssd_faults_under_fio_verify_degrade_then_ssd_reset_recovers(
        hottier_module, kind):
    """fio verify on the target while the SSD fails: no I/O error and no
    verify failure reaches fio; the device degrades at the threshold with
    a dm event; once the SSD is healthy, ssd_reset drops every replica,
    returns to rw with another event, and promotions resume."""
    log = KernelLog()
    # The HDD is slower than the SSD, so replica reads go to the SSD.
    with devices.NullBlk(unique("hdd"), 128, completion_nsec=200_000,
                         hw_queue_depth=32) as h, \
            devices.fast(unique("ssd"), SSD_MB) as s, \
            devices.linear(unique("sm"), s.path) as m, \
            devices.DmDevice(unique("ht"), table(h.path, m.path)) as d:
        fault = Fault(kind, s, m)
        runs = []
        clean(hotio.fio(d.path, *WRITE), f"{kind}: write", runs)
        d.message("pin", "0", str(REGION))
        wait_resident(d, REGION_EXTENTS)
        d.message("reset_stats")
        ev0 = hotio.event_nr(d.name)

        # Read and verify while the fault arrives, then rewrite and verify
        # with the fault still there (write-through errors).
        with hotio.Fio(d.path, *VERIFY_READ) as bg:
            hotio.wait_until(lambda: info(d)["read_hits"] > 0, 30,
                             what="replica reads")
            fault.inject()
            clean(bg.wait(), f"{kind}: verify reads", runs)
        clean(hotio.fio(d.path, *REWRITE), f"{kind}: rewrite", runs)
        verify_until_degraded(d, kind, runs)

        c = info(d)
        ev1 = hotio.event_nr(d.name)
        faulted = {k: c[k] for k in ("ssd_errors", "demotions", "read_hits",
                                     "replica_reads_ssd",
                                     "replica_reads_hdd", "mode")}
        print(f"{kind}: faulted: ssd_errors={c['ssd_errors']} "
              f"demotions={c['demotions']} read_hits={c['read_hits']} "
              f"replica_reads_ssd={c['replica_reads_ssd']} "
              f"replica_reads_hdd={c['replica_reads_hdd']} "
              f"mode={c['mode']} events {ev0}->{ev1}")
        assert c["ssd_errors"] >= THRESHOLD, c
        assert c["mode"] == "degraded", c
        assert ev1 > ev0
        assert "degraded" in log.new()

        # Degraded: no replica is read, and reads of pinned extents whose
        # replicas were dropped promote nothing.
        d.message("reset_stats")
        clean(hotio.fio(d.path, *VERIFY_READ),
              f"{kind}: verify degraded 2", runs)
        c = info(d)
        assert (c["read_hits"], c["replica_reads_ssd"], c["promotions"],
                c["migrations"]) == (0, 0, 0, 0), c

        fault.heal()
        # Unpinned, so that the reset itself copies nothing again.
        d.message("unpin", "0", str(REGION))
        before = info(d)["slots_used"]
        d.message("reset_stats")
        d.message("ssd_reset")
        c = hotio.wait_until(lambda: (x := info(d))["migrations"] == 0 and x,
                             30, what="no copy in flight")
        ev2 = hotio.event_nr(d.name)
        reset = {"replicas_before": before, "demotions": c["demotions"],
                 "mode": c["mode"]}
        print(f"{kind}: ssd_reset: replicas before={before} after="
              f"{c['slots_used']} demotions={c['demotions']} "
              f"promotions since={c['promotions']} mode={c['mode']} "
              f"events {ev1}->{ev2}")
        assert c["mode"] == "rw", c
        assert ev2 > ev1
        # Every old replica was dropped: what is on the SSD now (normally
        # nothing) was copied after the reset.
        assert c["demotions"] >= before, c
        assert c["slots_used"] == c["promotions"], c

        # Promotions resume; the new replicas hold what the rewrite wrote.
        d.message("pin", "0", str(REGION))
        wait_resident(d, REGION_EXTENTS)
        c = info(d)
        assert c["promotions"] >= REGION_EXTENTS, c
        assert c["ssd_errors"] == 0, c
        d.message("reset_stats")
        clean(hotio.fio(d.path, *VERIFY_READ),
              f"{kind}: verify after reset", runs)
        c = info(d)
        assert c["read_hits"] > 0 and c["replica_reads_ssd"] > 0, c
        c = scrub(d)
        assert (c["scrub"], c["scrub_checked"], c["scrub_mismatches"]) == \
            ("done", REGION_EXTENTS, 0), c
        # Nothing reached the caller. (The SSD member's own errors, from
        # udev probing it after a reload, are logged under its name.)
        kname = devices.kname(d.path)
        assert f"Buffer I/O error on dev {kname}," not in log.new()
        hotio.save(f"faults-{kind}.json", {
            "fio": runs, "faulted": faulted, "events": [ev0, ev1, ev2],
            "ssd_reset": reset})


def odirect_read(path, offset, length):
    """Read through O_DIRECT (an aligned buffer): the device, not the page
    cache, answers. Raises OSError as the device reports it."""
    buf = mmap.mmap(-1, length)
    fd = os.open(path, os.O_RDONLY | os.O_DIRECT)
    try:
        n = os.preadv(fd, [buf], offset)
        assert n == length, (n, length)
        return bytes(buf)
    finally:
        os.close(fd)
        buf.close()


def odirect_write(path, offset, data):
    buf = mmap.mmap(-1, len(data))
    buf.write(data)
    fd = os.open(path, os.O_WRONLY | os.O_DIRECT)
    try:
        assert os.pwritev(fd, [buf], offset) == len(data)
    finally:
        os.close(fd)
        buf.close()


def digests(path, start, length, chunk=1 << 20):
    return [hashlib.sha256(odirect_read(path, off, chunk)).hexdigest()
            for off in range(start, start + length, chunk)]


def stamp_and_pin(dev, data_mb):
    """Random data over the first @data_mb MiB, the region pinned and
    resident: the data's digest per MiB."""
    chunks = [os.urandom(1 << 20) for _ in range(data_mb)]
    for i, c in enumerate(chunks):
        odirect_write(dev.path, i << 20, c)
    dev.message("pin", "0", str(REGION))
    wait_resident(dev, REGION_EXTENTS)
    return [hashlib.sha256(c).hexdigest() for c in chunks]


def test_ssd_replaced_by_error_target_everything_reads_from_the_hdd(
        hottier_module):
    """The SSD member's table becomes dm-error with every extent of a
    region resident: every byte of the device still reads back as written
    (checksums), first through failed SSD reads retried on the HDD, then
    degraded."""
    data_mb = 32
    with devices.fast(unique("hdd"), 64) as h, \
            devices.fast(unique("ssd"), SSD_MB) as s, \
            devices.linear(unique("sm"), s.path) as m, \
            devices.DmDevice(unique("ht"), table(h.path, m.path,
                                                 "routing", "ssd")) as d:
        want = stamp_and_pin(d, data_mb)
        assert digests(d.path, 0, data_mb << 20) == want
        d.message("reset_stats")

        m.reload(f"0 {devices.sectors(s.path)} error")
        # First pass: replica reads fail on the SSD and are retried.
        assert digests(d.path, 0, data_mb << 20) == want
        c = info(d)
        print(f"dm-error SSD: first pass ssd_errors={c['ssd_errors']} "
              f"replica_reads_ssd={c['replica_reads_ssd']} mode={c['mode']}")
        assert c["ssd_errors"] >= THRESHOLD, c
        assert c["mode"] == "degraded", c
        # Second pass: degraded, the HDD alone.
        d.message("reset_stats")
        assert digests(d.path, 0, data_mb << 20) == want
        assert digests(h.path, 0, data_mb << 20) == want
        c = info(d)
        assert (c["read_hits"], c["replica_reads_ssd"]) == (0, 0), c


def fsyncs(path, n, data):
    """@n writes of @data at 0, each followed by an fsync (a flush)."""
    fd = os.open(path, os.O_RDWR)
    try:
        for _ in range(n):
            os.pwrite(fd, data, 0)
            os.fsync(fd)
    finally:
        os.close(fd)


def test_a_degraded_device_flushes_only_the_hdd(hottier_module):
    """Degraded, an fsync flushes the HDD alone: the SSD (with a volatile
    cache, so that flushes reach it, behind dm-flakey) fails every I/O,
    and none of the caller's flushes reaches it."""
    with devices.fast(unique("hdd"), 64) as h, \
            devices.fast(unique("ssd"), 16, cache_mb=4) as s, \
            devices.linear(unique("sm"), s.path) as m, \
            devices.DmDevice(unique("ht"), hottier_table(
                h.path, m.path, EXTENT, opts=(
                    "promote_threshold", "1000000", "routing", "ssd",
                    "ssd_error_threshold", "1"))) as d:
        data = os.urandom(4096)
        fsyncs(d.path, 1, data)
        d.message("pin", "0", str(EXTENT))
        wait_resident(d, 1)
        m.reload(devices.flakey_table(s.path, 0, 3600))
        assert odirect_read(d.path, 0, 4096) == data   # retried on the HDD
        c = info(d)
        assert c["mode"] == "degraded", c
        d.message("reset_stats")
        fsyncs(d.path, 3, data)
        c = info(d)
        assert c["flushes"] >= 3 and c["ssd_flush_errors"] == 0, c


def test_hdd_read_errors_reach_the_caller_on_non_resident_extents(
        hottier_module):
    """Media errors on the HDD are returned as EIO, every time; promoting
    the extent does not hide them: its copy fails on the HDD read (no SSD
    error), so it never becomes resident."""
    bad = 64 * 2048                     # 64 MiB in, clear of udev's probes
    ext = bad // EXTENT
    with devices.fast(unique("hdd"), 128) as h, \
            devices.fast(unique("ssd"), SSD_MB) as s, \
            devices.DmDevice(unique("ht"), table(h.path, s.path)) as d:
        h.add_badblocks(bad, bad + 7)
        for _ in range(3):
            with pytest.raises(OSError) as e:
                odirect_read(d.path, bad * 512, 4096)
            assert e.value.errno == errno.EIO
        # A read that spans good and bad sectors of the extent fails too.
        with pytest.raises(OSError) as e:
            odirect_read(d.path, (bad - 8) * 512, 16384)
        assert e.value.errno == errno.EIO
        # Next to it, in the same extent, the HDD answers.
        odirect_read(d.path, (bad + 8) * 512, 4096)

        log = KernelLog()
        d.message("promote", str(bad), "8")
        hotio.wait_until(lambda: f"copy of extent {ext} to the SSD failed"
                         in log.new(), 30, what="the failed copy")
        hotio.wait_until(lambda: info(d)["migrations"] == 0, 30,
                         what="no copy in flight")
        c = info(d)
        print(f"HDD badblocks: {c}")
        assert c["ssd_errors"] == 0 and c["mode"] == "rw", c
        assert c["slots_used"] == 0 and c["promotions"] == 0, c
        for _ in range(3):
            with pytest.raises(OSError) as e:
                odirect_read(d.path, bad * 512, 4096)
            assert e.value.errno == errno.EIO


def dm_events(name):
    """The device's dm event counter (what dmsetup wait and dmeventd see)."""
    return int(devices.run("dmsetup", "info", "-c", "--noheadings", "-o",
                           "events", name).stdout)


def replica_reads(dev, before, *extra):
    """The counters of replica reads and read errors since @before."""
    c = info(dev)
    return {k: c[k] - before[k] for k in (
        "replica_reads_ssd", "replica_reads_hdd", "hdd_read_errors",
        "read_retries", "ssd_errors", *extra)}


def test_hdd_read_errors_of_replicated_extents_are_served_by_the_ssd(
        hottier_module):
    """The HDD, a dm-linear reloaded as dm-error, fails every I/O at once
    (a pool gone) while the SSD, slowed to 2 ms a read, holds a replica of
    every extent of a region. Under routing latency the HDD was the faster
    member: its failed reads of replicas are sent again to the SSD, so no
    error reaches a reader at queue depth 4 or 64, the data reads back as
    written, and the HDD's estimate turns replica reads away from it
    within a second. A read of an extent without a replica fails with EIO.
    Once the HDD is back, every byte reads from it as before."""
    data_mb = 16
    with devices.fast(unique("hdd"), 64) as h, \
            devices.linear(unique("hm"), h.path) as hm, \
            devices.fast(unique("ssd"), SSD_MB) as s, \
            devices.delay(unique("sd"), s.path, 2) as sd, \
            devices.DmDevice(unique("ht"), table(hm.path, sd.path)) as d:
        want = stamp_and_pin(d, data_mb)
        read = ["--name=r", "--rw=randread", "--bs=4k",
                f"--size={REGION_MB}M", "--time_based", "--norandommap"]
        # Healthy: the HDD (no delay) is the faster member.
        c0 = info(d)
        rc, _, tail = hotio.fio(d.path, *read, "--iodepth=4", "--runtime=2")
        assert rc == 0, tail
        healthy = replica_reads(d, c0)
        print(f"healthy: {healthy}")
        assert healthy["replica_reads_hdd"] > healthy["replica_reads_ssd"]

        events = dm_events(d.name)
        log = KernelLog()
        hm.reload(f"0 {devices.sectors(h.path)} error")
        runs = {}
        for depth in (4, 64):
            c0 = info(d)
            with hotio.Fio(d.path, *read, f"--iodepth={depth}",
                           "--runtime=4") as f:
                hotio.wait_until(lambda: info(d)["read_hits"] >
                                 c0["read_hits"], 60, what="fio reading")
                time.sleep(1)
                first = replica_reads(d, c0)
                rc, report, tail = f.wait()
            clean((rc, report, tail), f"dm-error HDD, iodepth {depth}")
            run = replica_reads(d, c0, "read_hits")
            run["after_first_second_hdd"] = (run["replica_reads_hdd"] -
                                             first["replica_reads_hdd"])
            run["after_first_second_ssd"] = (run["replica_reads_ssd"] -
                                             first["replica_reads_ssd"])
            runs[depth] = run
            print(f"dm-error HDD, iodepth {depth}: {run}")
            # Every HDD failure was a replica read, and was sent again.
            assert run["hdd_read_errors"] == run["read_retries"], run
            assert run["ssd_errors"] == 0, run
            # Replica reads turned away from the failing HDD: after the
            # first second of reads, about one probe a second is left.
            assert run["after_first_second_hdd"] <= max(
                8, run["after_first_second_ssd"] // 50), run
        assert runs[4]["hdd_read_errors"] > 0, runs
        # The outage raised a dm event and said so, once: no read of the
        # HDD succeeded between the two runs.
        assert dm_events(d.name) == events + 1
        assert log.new().count("the HDD fails I/O") == 1
        assert digests(d.path, 0, REGION_MB << 20) == want[:REGION_MB]
        c = info(d)
        assert c["mode"] == "rw" and c["ssd_errors"] == 0, c

        # No replica: the HDD's error is the caller's.
        c0 = info(d)
        with pytest.raises(OSError) as e:
            odirect_read(d.path, REGION_MB << 20, 4096)
        assert e.value.errno == errno.EIO
        miss = replica_reads(d, c0)
        assert (miss["hdd_read_errors"], miss["read_retries"]) == (1, 0), miss

        hm.reload(devices.linear_table(h.path))
        assert digests(d.path, 0, data_mb << 20) == want
        hotio.save("hdd-read-errors.json", {"healthy": healthy,
                                            "dm_error": runs})


def test_write_through_error_drops_the_replica_and_the_write_succeeds(
        hottier_module):
    """dm-flakey error_writes under the SSD: a write to a resident extent
    succeeds (the HDD has it), its replica is dropped, and the data reads
    back from the HDD. The extent is pinned, so its copy is asked for
    again at once: its SSD write fails, counted, not installed."""
    ext = 40
    off = ext * EXTENT * 512
    with devices.fast(unique("hdd"), 128) as h, \
            devices.fast(unique("ssd"), SSD_MB) as s, \
            devices.linear(unique("sm"), s.path) as m, \
            devices.DmDevice(unique("ht"), table(h.path, m.path)) as d:
        old = os.urandom(EXTENT * 512)
        odirect_write(d.path, off, old)
        d.message("pin", str(ext * EXTENT), str(EXTENT))
        wait_resident(d, 1)
        d.message("reset_stats")
        m.reload(devices.flakey_table(s.path, 0, 3600, "error_writes"))

        new = os.urandom(8192)
        odirect_write(d.path, off + 4096, new)      # no exception: success
        c = info(d)
        print(f"write-through error: {c}")
        # The write-through's error, and perhaps already the new copy's.
        assert 1 <= c["ssd_errors"] <= 2 and c["demotions"] == 1, c
        assert c["slots_used"] == 0 and c["mode"] == "rw", c
        want = old[:4096] + new + old[4096 + 8192:]
        assert odirect_read(d.path, off, EXTENT * 512) == want
        assert odirect_read(h.path, off, EXTENT * 512) == want

        # The pin asked for the extent again: that copy fails.
        hotio.wait_until(lambda: info(d)["ssd_errors"] >= 2, 30,
                         what="the failed copy counted")
        hotio.wait_until(lambda: info(d)["migrations"] == 0, 30,
                         what="no copy in flight")
        c = info(d)
        assert c["promotions"] == 0 and c["slots_used"] == 0, c
        assert odirect_read(d.path, off, EXTENT * 512) == want


def test_pins_heal_by_themselves_once_the_hdd_works_again(hottier_module):
    """The HDD, a dm-linear reloaded as dm-error (a pool gone), fails a
    write to every pinned extent: each replica is dropped, and its copy
    again fails too, reading the HDD. Once the HDD works again, every
    pinned extent is copied back within a minute (tries of failed pinned
    copies back off from 1 s to at most 64 s), with no message from an
    administrator, and reads back the HDD's data."""
    with devices.fast(unique("hdd"), 64) as h, \
            devices.linear(unique("hm"), h.path) as hm, \
            devices.fast(unique("ssd"), SSD_MB) as s, \
            devices.DmDevice(unique("ht"), table(hm.path, s.path)) as d:
        stamp_and_pin(d, REGION_MB)
        hm.reload(f"0 {devices.sectors(h.path)} error")
        log = KernelLog()
        block = bytes(4096)
        failed = 0
        for e in range(REGION_EXTENTS):
            try:
                odirect_write(d.path, e * EXTENT * 512, block)
            except OSError as err:
                assert err.errno == errno.EIO, err
                failed += 1
        assert failed == REGION_EXTENTS
        # The copies again fail: a few tries, each backing off.
        time.sleep(4)
        down = info(d)
        assert down["slots_used"] == 0 and down["pinned"] == REGION_EXTENTS, \
            down
        assert "copy of extent" in log.new()
        hm.reload(devices.linear_table(h.path))
        t = time.monotonic()
        wait_resident(d, REGION_EXTENTS, timeout=60)
        healed_s = time.monotonic() - t
        print(f"pins healed {healed_s:.1f} s after the HDD came back")
        assert digests(d.path, 0, REGION_MB << 20) == \
            digests(h.path, 0, REGION_MB << 20)
        c = info(d)
        assert c["mode"] == "rw" and c["ssd_errors"] == 0, c
