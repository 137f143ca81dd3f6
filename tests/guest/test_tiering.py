"""Hot extents on the SSD: promotion, routing of reads, scan resistance,
reconfiguration with copies in flight, filesystems, idleness, messages and
memory (Documentation/hottier.rst, version 0.2).

Every read that must reach the target is O_DIRECT, so the page cache hides
none of them. Devices are opened read-only unless written: closing a device
opened for writing makes udev probe it, and probes are reads on the members.
"""

import hashlib
import os
import random
import statistics
import subprocess
import tempfile
import time

import pytest

import devices
import hotio
from conftest import KernelLog, hottier_table, info, scrub, unique, \
    wait_copies_done
from directio import Direct, Phases, meta_sectors, nr_slots, poll
from tracing import Blktrace

MiB = 1 << 20
NEVER = "1000000"   # promote_threshold: udev's probe reads promote nothing


def table(hdd, ssd, extent, **keys):
    opts = [w for k, v in keys.items() for w in (k, str(v))]
    return hottier_table(hdd, ssd, extent, opts=opts)


def wait_info(dev, pred, what, timeout=120.0):
    return poll(lambda: info(dev), pred, timeout, what)


def read_blocks(dev, sectors, count=8):
    """One O_DIRECT read of count sectors at each of sectors, in order."""
    with Direct(dev.path) as f:
        return [f.read_sectors(s, count) for s in sectors]


def read_rounds(dev, extents, extent, rounds, offset=lambda e: 0):
    for _ in range(rounds):
        read_blocks(dev, [e * extent + offset(e) for e in extents])


def refused(dev, *words):
    """dmsetup message fails; returns its stderr."""
    r = subprocess.run(["dmsetup", "message", dev.name, "0", *words],
                       capture_output=True, text=True)
    assert r.returncode != 0, f"message {words} was accepted"
    return r.stderr


def run_bounded(cmd, timeout=180):
    """A dmsetup command that must neither fail nor hang."""
    try:
        r = subprocess.run(cmd, capture_output=True, text=True,
                           timeout=timeout)
    except subprocess.TimeoutExpired:
        raise AssertionError(f"{cmd} hung for {timeout}s") from None
    assert r.returncode == 0, (cmd, r.stderr)


def write_random(path, start_byte, size, seed):
    """size bytes of seeded random data at start_byte; returns them."""
    data = random.Random(seed).randbytes(size)
    with Direct(path, write=True) as f:
        for off in range(0, size, MiB):
            f.write(start_byte + off, data[off:off + MiB])
    devices.settle()
    return data


def dd(*args):
    subprocess.run(["dd", "status=none", *args], check=True)


# 1. Promotion and where reads go afterwards

def test_hot_set_is_promoted_and_then_read_from_the_ssd_only(hottier_module):
    extent = 256                                # 128 KiB
    hot = [37, 100, 301, 555, 800, 1023, 1500, 1900]
    # A distinct 4 KiB block in each extent, so an SSD read names its extent.
    offs = {e: (i * 7 % (extent // 8)) * 8 for i, e in enumerate(hot)}
    with devices.fast(unique("hdd"), 256) as h, \
         devices.fast(unique("ssd"), 64) as s:
        data = {e: random.Random(e).randbytes(extent * 512) for e in hot}
        with Direct(h.path, write=True) as f:
            for e in hot:
                f.write(e * extent * 512, data[e])
        devices.settle()
        ssd_sectors = devices.sectors(s.path)
        meta = meta_sectors(ssd_sectors, extent)
        # No decay: a queued extent must not cool below the threshold
        # before its copy (test_promote_message_copies_every_extent...).
        # routing ssd: where replica reads go by latency is test_routing's.
        with devices.DmDevice(unique("ht"), table(
                h.path, s.path, extent, promote_threshold=NEVER,
                heat_halflife_ms=86400000, routing="ssd")) as d:
            assert info(d)["slots_total"] == nr_slots(ssd_sectors, extent)
            # With slots free, the bar is half the threshold: the second
            # read of each extent makes it a candidate.
            d.message("promote_threshold", "4")
            d.message("reset_stats")
            read_rounds(d, hot, extent, 2, offs.get)
            i = wait_info(d, lambda i: i["promotions"] >= len(hot),
                          "the hot set's promotions")
            i = wait_copies_done(d)
            assert i["promotions"] == len(hot), i
            assert i["slots_used"] == len(hot), i
            assert (i["read_hits"], i["read_misses"]) == (0, 2 * len(hot)), i

            # Which slot holds which extent: the replicas are the HDD's data
            # at meta_sectors + slot * extent_sectors, slots from 0 upward.
            with Direct(s.path) as f:
                replica = [f.read_sectors(meta + k * extent, extent)
                           for k in range(len(hot))]
            slot_of = {}
            for e in hot:
                assert data[e] in replica, f"extent {e} is in no slot"
                slot_of[e] = replica.index(data[e])
            assert sorted(slot_of.values()) == list(range(len(hot)))

            d.message("reset_stats")
            with Blktrace(h.path) as th, Blktrace(s.path) as ts:
                for _ in range(3):
                    got = read_blocks(d, [e * extent + offs[e] for e in hot])
                    for e, block in zip(hot, got):
                        o = offs[e] * 512
                        assert block == data[e][o:o + 4096], e
            i = info(d)
            assert (i["read_hits"], i["read_misses"]) == (3 * len(hot), 0), i
            hdd_reads = [ev for ev in th.queued() if "R" in ev[1]]
            assert not hdd_reads, hdd_reads
            ssd_reads = [ev for ev in ts.queued() if "R" in ev[1]]
            assert len(ssd_reads) == 3 * len(hot), ts.lines
            extent_at = {o: e for e, o in offs.items()}
            for _, rwbs, sector, nr in ssd_reads:
                slot, off = divmod(sector - meta, extent)
                assert nr == 8 and off in extent_at, (rwbs, sector, nr)
                assert slot == slot_of[extent_at[off]], (sector, slot_of)


# 2. Scan resistance

def test_sequential_scan_does_not_evict_the_hot_set(hottier_module):
    """A stream past sequential_cutoff_kb heats each extent once per pass
    (Documentation/hottier.rst, Heat): one scan of the device promotes
    only its head, two fill free slots but evict no hotter extent, and the
    same two passes without detection push the hot set out."""
    extent = 2048                               # 1 MiB: 31 slots on 32 MiB
    hot = list(range(100, 220, 6))              # 20 extents
    head = 4096 // 1024                         # the default cutoff's head

    def top(d):
        """{extent: (heat, resident)} of every extent with heat."""
        out = d.message("top", "1000").stdout.split("\n")
        return {int(w[0]) // extent: (int(w[1]), w[2] == "resident")
                for w in (line.split() for line in out if line.strip())}

    def scan(d, **kw):
        # 64 KiB reads: 16 a 1 MiB extent, heat per read or once per pass
        dd(f"if={d.path}", "of=/dev/null", "bs=64K", "iflag=direct",
           *[f"{k}={v}" for k, v in kw.items()])

    with devices.fast(unique("hdd"), 256) as h, \
         devices.fast(unique("ssd"), 32) as s:
        with devices.DmDevice(unique("ht"), table(
                h.path, s.path, extent, promote_threshold=NEVER,
                heat_halflife_ms=86400000)) as d:
            total = info(d)["slots_total"]
            assert total == 31
            # The default threshold: 2 reads while slots are free, 4 (and
            # a victim colder by 4) once the SSD is full.
            d.message("promote_threshold", "4")
            read_rounds(d, hot, extent, 2)
            wait_info(d, lambda i: i["slots_used"] == len(hot),
                      "the hot set resident")
            wait_copies_done(d)

            # A backup: one pass heats the extents past the head by one
            # read each, below the free slots' bar of 2; the head heats per
            # read. Only the head, and extents udev's probes had read
            # already (heat before the scan), may reach the bar.
            before = top(d)
            warm = {e for e, (_, res) in before.items() if not res}
            d.message("reset_stats")
            scan(d)
            i = wait_copies_done(d)
            after = top(d)
            promoted = {e for e, (_, res) in after.items()
                        if res and not before.get(e, (0, False))[1]}
            print("after one scan:", i, "promoted:", sorted(promoted),
                  "warm before:", sorted(warm))
            assert i["demotions"] == 0, i
            assert set(range(head)) <= promoted <= set(range(head)) | warm
            assert i["promotions"] == len(promoted), i
            assert i["slots_used"] == len(hot) + len(promoted), i

            # A second pass: the extents it read twice reach the bar and
            # fill the free slots; then the SSD is full, and none is hotter
            # than a hot extent (its reads and the two passes' hits) by a
            # threshold, so none evicts one.
            free = total - i["slots_used"]
            d.message("reset_stats")
            scan(d)
            i = wait_copies_done(d)
            print("after a second scan:", i)
            assert i["promotions"] == free, i
            assert i["demotions"] == 0, i
            assert i["slots_used"] == total, i

            d.message("reset_stats")
            read_rounds(d, hot, extent, 1)
            i = info(d)
            assert (i["read_hits"], i["read_misses"]) == (len(hot), 0), i

            # Control: without scan detection, the same two passes over
            # the cold extents in front of the hot set heat 16 a pass and
            # push it out.
            d.message("sequential_cutoff_kb", "0")
            d.message("reset_stats")
            for _ in range(2):
                scan(d, count=40 * 16)
            i = wait_copies_done(d)
            print("after two scans without detection:", i)
            assert i["demotions"] > 0, i
            d.message("reset_stats")
            read_rounds(d, hot, extent, 1)
            assert info(d)["read_misses"] > 0


# 3. Reconfiguration with copies in flight

@pytest.mark.race
def test_suspend_reload_and_remove_with_copies_in_flight_keep_data(
        hottier_module):
    extent = 2048
    n = 6                                       # extents promoted each time
    span = n * extent
    log = KernelLog()
    ph = Phases("reconfigure")
    with devices.fast(unique("hdd"), 256) as h, \
         devices.fast(unique("ssd"), 64) as s:
        data = write_random(h.path, 0, (n + 1) * MiB, 7)

        def check(path):
            with Direct(path) as f:
                for k in range(n + 1):
                    assert f.read(k * MiB, MiB) == \
                        data[k * MiB:(k + 1) * MiB], f"extent {k}"

        def promote_and_catch_in_flight(dev):
            dev.message("promote", "0", str(span))
            return wait_info(dev, lambda i: i["migrations"] > 0,
                             "a copy in flight", timeout=30)

        # dm-delay under the hottier device delays each HDD read by 200 ms
        # once udev has probed the device; one copy at a time, so copies
        # are in flight for a second or more.
        with devices.delay(unique("slow"), h.path, 0) as slow:
            line = table(slow.path, s.path, extent, promote_threshold=NEVER,
                         max_migrations=1, heat_halflife_ms=86400000)
            d = devices.DmDevice(unique("ht"), line)
            try:
                slow.reload(devices.delay_table(h.path, 200, 0))
                ph("devices ready")

                # Suspend waits for the copy in flight, resume goes on.
                promote_and_catch_in_flight(d)
                run_bounded(["dmsetup", "suspend", d.name])
                i = info(d)
                print("suspended:", i)
                assert i["migrations"] == 0, i
                run_bounded(["dmsetup", "resume", d.name])
                i = wait_info(d, lambda i: i["slots_used"] == n,
                              "every extent promoted after resume")
                wait_copies_done(d)
                check(d.path)
                ph("suspend and resume")

                # Reload with the same table: the new table starts empty.
                d.message("invalidate")
                d.message("reset_stats")
                promote_and_catch_in_flight(d)
                same = d.table()
                run_bounded(["dmsetup", "reload", d.name, "--table", same])
                run_bounded(["dmsetup", "resume", d.name])
                assert d.table() == same
                i = wait_copies_done(d)
                assert i["slots_used"] == 0, i
                d.message("promote", "0", str(span))
                wait_info(d, lambda i: i["slots_used"] == n,
                          "every extent promoted after the reload")
                wait_copies_done(d)
                check(d.path)
                ph("reload")

                # Remove with copies in flight.
                d.message("invalidate")
                promote_and_catch_in_flight(d)
                run_bounded(["dmsetup", "remove", "--retry", d.name])
                assert not os.path.exists(d.path)
                ph("remove")
            finally:
                d.remove()
            slow.reload(devices.delay_table(h.path, 0, 0))

            check(h.path)
            # A new device over the same members copies and reads alike.
            with devices.DmDevice(unique("ht"), line) as d:
                d.message("promote", "0", str(span))
                wait_info(d, lambda i: i["slots_used"] == n,
                          "every extent promoted on the new device")
                wait_copies_done(d)
                d.message("reset_stats")
                check(d.path)
                i = info(d)
                assert i["read_hits"] >= n, i
                i = scrub(d)            # a worker: wait for its end
                assert (i["scrub_checked"], i["scrub_mismatches"]) == (n, 0)
            ph("new device")
    errors = [ln for ln in log.new().splitlines() if "hottier" in ln]
    assert not errors, errors


def test_promote_message_copies_every_extent_while_slots_are_free(
        hottier_module):
    """promote queues the extents with the threshold's heat; with free
    slots, every one of them must be copied, however long the bandwidth
    cap makes the queue wait (here heat halves every second and 2 MiB/s
    copy 1 MiB extents)."""
    extent = 2048
    n = 8
    with devices.fast(unique("hdd"), 256) as h, \
         devices.fast(unique("ssd"), 32) as s:
        with devices.DmDevice(unique("ht"), table(
                h.path, s.path, extent, promote_threshold=NEVER,
                heat_halflife_ms=1000, migration_mbps=2)) as d:
            wait_copies_done(d)
            d.message("promote", str(32 * extent), str(n * extent))
            try:
                wait_info(d, lambda i: i["slots_used"] == n,
                          f"all {n} promoted extents resident", timeout=20)
            finally:
                print("after promote:", info(d))


# 4. Filesystems through promotions

MKFS = {"ext4": ["mkfs.ext4", "-q", "-F", "-E",
                 "lazy_itable_init=0,lazy_journal_init=0"],
        "xfs": ["mkfs.xfs", "-q", "-f"]}
FSCK = {"ext4": ["e2fsck", "-f", "-n"], "xfs": ["xfs_repair", "-n"]}


def drop_caches():
    with open("/proc/sys/vm/drop_caches", "w") as f:
        f.write("3\n")


def check_files(root, sums, rng):
    names = sorted(sums)
    rng.shuffle(names)          # no stream across files: every read heats
    for name in names:
        with open(os.path.join(root, name), "rb") as f:
            assert hashlib.sha256(f.read()).hexdigest() == sums[name], name


@pytest.mark.parametrize("fstype,policy", [("ext4", "through"),
                                           ("xfs", "around")])
def test_filesystem_through_promotions_is_fsck_clean_with_files_intact(
        hottier_module, fstype, policy):
    rng = random.Random(f"{fstype}-{policy}")
    with devices.fast(unique("hdd"), 512) as h, \
         devices.fast(unique("ssd"), 64) as s:
        with devices.DmDevice(unique("ht"), table(
                h.path, s.path, 2048, write_policy=policy,
                promote_threshold=2)) as d:
            subprocess.run(MKFS[fstype] + [d.path], check=True,
                           capture_output=True)
            sums = {}
            with tempfile.TemporaryDirectory() as mnt:
                subprocess.run(["mount", d.path, mnt], check=True)
                try:
                    for k in range(16):
                        data = rng.randbytes(rng.randrange(16, 768) * 1024 + k)
                        with open(os.path.join(mnt, f"f{k:02d}"), "wb") as f:
                            f.write(data)
                        sums[f"f{k:02d}"] = hashlib.sha256(data).hexdigest()
                    os.sync()
                    d.message("reset_stats")
                    for _ in range(3):
                        drop_caches()
                        check_files(mnt, sums, rng)
                    i = wait_info(d, lambda i: i["promotions"] > 0,
                                  "promotions of the files' extents")
                    wait_copies_done(d)
                    before = i["promotions"]
                    # Rewrite and extend files whose extents are resident.
                    for k in range(0, 16, 3):
                        name = os.path.join(mnt, f"f{k:02d}")
                        with open(name, "r+b") as f:
                            f.seek(rng.randrange(0, 8192))
                            f.write(rng.randbytes(20000))
                        with open(name, "ab") as f:
                            f.write(rng.randbytes(5000))
                        with open(name, "rb") as f:
                            sums[f"f{k:02d}"] = hashlib.sha256(
                                f.read()).hexdigest()
                    os.sync()
                    for _ in range(2):
                        drop_caches()
                        check_files(mnt, sums, rng)
                    i = wait_copies_done(d)
                    print(fstype, policy, i)
                    assert i["promotions"] >= before and i["read_hits"] > 0, i
                finally:
                    subprocess.run(["umount", mnt], check=True)
                r = subprocess.run(FSCK[fstype] + [d.path],
                                   capture_output=True, text=True)
                assert r.returncode == 0, r.stdout + r.stderr
                # fsck's reads may start copies: the scrub runs once they
                # are done, and its counts are read once it has ended.
                wait_copies_done(d)
                i = scrub(d)
                assert i["scrub_mismatches"] == 0, i
                assert i["scrub_checked"] == i["slots_used"] > 0, i
                drop_caches()
                subprocess.run(["mount", d.path, mnt], check=True)
                try:
                    check_files(mnt, sums, rng)
                finally:
                    subprocess.run(["umount", mnt], check=True)


# 5. Idleness

# The device's timers scale with heat_halflife_ms (an epoch is a quarter of
# it) but for the sample tick and the commit period (1 s each): a half-life
# of 4 s makes 10 s idle span 10 epochs, 10 ticks and 10 commit periods,
# where 30 s at the default 60 s spanned 2 epochs.
IDLE_SECONDS = float(os.environ.get("HOTTIER_IDLE_SECONDS", "10"))
IDLE_HALFLIFE_MS = 4000


def idle_then_canary(d, h, s, seconds, canary_sector):
    """Trace both members for seconds of idleness, then one 4 KiB read of
    the device at canary_sector: it proves the tracers were live. Returns
    the events that are not the canary's, and the canary's, per member."""
    with Blktrace(h.path) as th, Blktrace(s.path) as ts:
        time.sleep(seconds)
        read_blocks(d, [canary_sector])
    out = {}
    for name, t in (("hdd", th), ("ssd", ts)):
        # The canary's bio, and plug/unplug (no sector) from submitting it.
        canary = [e for e in t.events() if e[2] is not None]
        plugs = [e for e in t.events() if e[2] is None and e[0] in "PU"]
        other = [e for e in t.events() if e not in canary and e not in plugs]
        out[name] = (other, canary, t.lines)
    return out


def test_idle_device_sends_no_io_to_either_member(hottier_module):
    extent = 2048
    with devices.fast(unique("hdd"), 256) as h, \
         devices.fast(unique("ssd"), 32) as s:
        # routing ssd: the canary of a replica must read the SSD, while
        # routing latency may pick either of two equally fast members.
        with devices.DmDevice(unique("ht"),
                              table(h.path, s.path, extent,
                                    routing="ssd",
                                    heat_halflife_ms=IDLE_HALFLIFE_MS)) as d:
            # udev's probe reads (DmDevice settles) may have promoted an
            # extent: let that copy finish before tracing.
            devices.settle()
            wait_copies_done(d)
            t = idle_then_canary(d, h, s, IDLE_SECONDS, 100 * extent)
            other, canary, lines = t["hdd"]
            assert not other, lines
            assert {e[2] for e in canary} == {100 * extent}, lines
            assert any(e[0] == "Q" and "R" in e[1] for e in canary), lines
            other, canary, lines = t["ssd"]
            assert not other and not canary, lines

            # Idle with replicas resident, too (pinned: promoted whatever
            # the heat's decay); the canary reads a replica.
            d.message("pin", str(64 * extent), str(8 * extent))
            wait_info(d, lambda i: i["slots_used"] >= 8, "8 replicas")
            wait_copies_done(d)
            t = idle_then_canary(d, h, s, 5, 64 * extent)
            other, canary, lines = t["hdd"]
            assert not other and not canary, lines
            other, canary, lines = t["ssd"]
            assert not other, lines
            assert len({e[2] for e in canary}) == 1, lines
            assert any(e[0] == "Q" and "R" in e[1] for e in canary), lines


# 6. Messages

def test_pins_survive_reloads_whatever_the_extent_size(hottier_module):
    extent = 2048
    with devices.fast(unique("hdd"), 256) as h, \
         devices.fast(unique("ssd"), 32) as s:
        def line(e):
            return table(h.path, s.path, e, promote_threshold=NEVER,
                         heat_halflife_ms=86400000)

        def resident(e, starts):
            i = wait_copies_done(d)
            top = {int(w[0]): w[2:] for w in (
                x.split() for x in d.message("top", "1000").stdout.split(
                    "\n") if x.strip())}
            return all(top.get(x * e) == ["resident", "pinned"]
                       for x in starts), i

        with devices.DmDevice(unique("ht"), line(extent)) as d:
            d.message("pin", str(10 * extent), str(3 * extent))
            wait_info(d, lambda i: i["slots_used"] >= 3, "3 replicas")
            assert resident(extent, range(10, 13))[0]

            # The same table again: the new table takes the pins over
            # and copies them (replicas themselves do not survive).
            d.reload(line(extent))
            assert info(d)["pinned"] == 3
            wait_info(d, lambda i: i["slots_used"] >= 3, "3 replicas")
            assert resident(extent, range(10, 13))[0]

            # Smaller extents: the same sectors, six 512 KiB extents.
            d.reload(line(extent // 2))
            assert info(d)["pinned"] == 6
            wait_info(d, lambda i: i["slots_used"] >= 6, "6 replicas")
            assert resident(extent // 2, range(20, 26))[0]

            # Larger: sectors 20480-26623 lie in 2 MiB extents 5 and 6.
            d.reload(line(2 * extent))
            assert info(d)["pinned"] == 2
            wait_info(d, lambda i: i["slots_used"] >= 2, "2 replicas")
            assert resident(2 * extent, range(5, 7))[0]

            # A plain suspend and resume keeps them; unpin lets them go,
            # and the next reload has nothing to take over.
            d.suspend()
            d.resume()
            assert info(d)["pinned"] == 2
            d.message("unpin", "0", str(devices.sectors(d.path)))
            d.reload(line(2 * extent))
            assert info(d)["pinned"] == 0


@pytest.mark.kernel
def test_messages_pin_unpin_promote_demote_invalidate_and_refusals(
        hottier_module):
    extent = 2048
    with devices.fast(unique("hdd"), 256) as h, \
         devices.fast(unique("ssd"), 32) as s:
        with devices.DmDevice(unique("ht"), table(
                h.path, s.path, extent, promote_threshold=NEVER,
                heat_halflife_ms=86400000)) as d:
            length = devices.sectors(d.path)
            total = info(d)["slots_total"]
            assert total == 31

            def rng(first, count):
                return str(first * extent), str(count * extent)

            def settled(what, **want):
                i = wait_info(d, lambda i: all(i[k] == v
                                               for k, v in want.items()),
                              what)
                i = wait_copies_done(d)
                assert all(i[k] == v for k, v in want.items()), (what, i)
                return i

            d.message("promote_threshold", "2")
            d.message("pin", *rng(10, 4))
            settled("4 pinned extents resident", pinned=4, slots_used=4)
            d.message("unpin", *rng(10, 2))
            settled("2 unpinned, replicas kept", pinned=2, slots_used=4)
            d.message("demote", *rng(10, 4))
            settled("unpinned replicas demoted", pinned=2, slots_used=2)
            # Unaligned range: 20..25 is six extents.
            d.message("promote", str(20 * extent + 5), str(5 * extent))
            settled("6 promoted", pinned=2, slots_used=8)
            d.message("reset_stats")
            d.message("invalidate")
            # Every replica dropped; the pinned ones are copied again.
            i = settled("invalidated, pins copied again", pinned=2,
                        slots_used=2)
            assert (i["demotions"], i["promotions"]) == (8, 2), i
            d.message("reset_stats")
            read_rounds(d, [12, 13], extent, 1)
            assert info(d)["read_hits"] == 2

            # Eviction pressure: pinned extents stay, unpinned ones go.
            d.message("pin", *rng(30, 6))
            settled("8 pinned", pinned=8, slots_used=8)
            first = list(range(40, 63))             # fills the other 23
            read_rounds(d, first, extent, 2)
            settled("the SSD full", slots_used=total)
            d.message("reset_stats")
            hotter = list(range(70, 80))            # heat 6 >= 2 + 2
            read_rounds(d, hotter, extent, 6)
            wait_info(d, lambda i: i["promotions"] == len(hotter),
                      "the hotter extents promoted by eviction")
            i = wait_copies_done(d)
            assert i["demotions"] == len(hotter), i
            assert (i["slots_used"], i["pinned"]) == (total, 8), i
            pinned = [12, 13] + list(range(30, 36))
            d.message("reset_stats")
            read_rounds(d, pinned + hotter, extent, 1)
            i = info(d)
            assert i["read_hits"] == len(pinned) + len(hotter), i
            assert i["demotions"] == 0, i

            # Refusals change nothing.
            before = wait_copies_done(d)
            mark = KernelLog()
            refused(d, "pin", *rng(0, total + 1))       # more than the SSD
            refused(d, "pin", *rng(100, total - 8 + 1))  # pins > slots
            refused(d, "promote", *rng(0, total + 1))
            for words in (("pin", str(length), "8"),        # past the end
                          ("promote", str(length - 8), "16"),
                          ("demote", str(length + extent), "8"),
                          ("unpin", "0", "0"),              # nr 0
                          ("promote", "0", "0"),
                          ("pin", "abc", "8"),              # junk
                          ("demote", "0", "8x"),
                          ("promote", str(1 << 64), "8"),   # overflow
                          ("pin", "0"),                     # no nr
                          ("promote", "0", "8", "9")):
                refused(d, *words)
            after = wait_copies_done(d)
            for k in ("pinned", "slots_used", "promotions", "demotions"):
                assert after[k] == before[k], (k, before, after)
            rdev = os.stat(d.path).st_rdev
            dev = f"{os.major(rdev)}:{os.minor(rdev)}"
            lines = [ln for ln in mark.new().splitlines()
                     if f"device-mapper: hottier: {dev}: " in ln]
            assert len(lines) >= 13, mark.new()


def test_pin_counts_overlaps_once_and_a_refused_pin_keeps_earlier_pins(
        hottier_module):
    extent = 2048
    with devices.fast(unique("hdd"), 256) as h, \
         devices.fast(unique("ssd"), 32) as s:
        def rng(first, count):
            return str(first * extent), str(count * extent)

        def settled(d, what, **want):
            wait_info(d, lambda i: all(i[k] == v for k, v in want.items()),
                      what)
            i = wait_copies_done(d)
            assert all(i[k] == v for k, v in want.items()), (what, i)
            return i

        with devices.DmDevice(unique("ht"), table(
                h.path, s.path, extent, promote_threshold=NEVER)) as d:
            total = info(d)["slots_total"]
            assert total == 31
            d.message("pin", *rng(0, 10))
            settled(d, "10 pinned", pinned=10, slots_used=10)
            # 30 extents, 10 of them pinned already: 30 pins of 31 slots.
            d.message("pin", *rng(0, 30))
            settled(d, "30 pinned", pinned=30, slots_used=30)

        # 10 pinned, then a pin of 27 extents, 5 of them pinned already:
        # 32 pins for 31 slots. Refused, it changes nothing: the pins made
        # before stay, every one of them.
        with devices.DmDevice(unique("ht"), table(
                h.path, s.path, extent, promote_threshold=NEVER)) as d:
            d.message("pin", *rng(0, 10))
            before = settled(d, "10 pinned", pinned=10, slots_used=10)
            mark = KernelLog()
            refused(d, "pin", *rng(5, 27))
            after = wait_copies_done(d)
            for k in ("pinned", "slots_used", "promotions", "demotions"):
                assert after[k] == before[k], (k, before, after)
            assert "more extents than the SSD has slots" in \
                mark.new()
            d.message("unpin", *rng(0, 5))
            assert info(d)["pinned"] == 5
            d.message("unpin", *rng(5, 5))
            assert info(d)["pinned"] == 0

# 7. Memory

def footprint(hdd, ssd, extent, max_tracked, tries=3):
    """Memory a device takes, the median of @tries creations, and its slot
    count. The kernel's figures move by themselves too (a free per-CPU
    chunk goes back to the system when a worker gets to it, say): one
    creation once measured 0.6 MB less than the slots alone take."""
    used = []
    for _ in range(tries):
        before = devices.kernel_memory()
        with devices.DmDevice(unique("ht"), table(
                hdd, ssd, extent, promote_threshold=NEVER,
                max_tracked=max_tracked)) as d:
            used.append(devices.kernel_memory() - before)
            slots = info(d)["slots_total"]
    return statistics.median(used), slots


def test_memory_per_tracked_entry_and_per_slot_is_bounded(hottier_module):
    many = 2_000_000
    with devices.fast(unique("hdd"), 256) as h, \
         devices.fast(unique("ssd"), 64) as small, \
         devices.fast(unique("ssd"), 4096) as big:    # sparse: never written
        base, base_slots = footprint(h.path, small.path, 2048, 16)
        tracked, _ = footprint(h.path, small.path, 2048, many)
        slotted, slots = footprint(h.path, big.path, 64, 16)
    per_entry = (tracked - base) / (many - 16)
    per_slot = (slotted - base) / (slots - base_slots)
    print(f"device with 16 entries, {base_slots} slots: {base} bytes; "
          f"{per_entry:.1f} bytes per tracked entry; "
          f"{per_slot:.1f} bytes per slot ({slots} slots)")
    # An entry is 8 bytes, with a lock and an epoch per set of 16; a slot
    # 16 bytes, 2 to 4 of index buckets and 1.4 of victim levels.
    assert 8 <= per_entry <= 12
    assert 16 <= per_slot <= 24


def heat_tracked(i):
    """Extents in the heat table: tracked counts the replicas too (their
    heat lives in their slots)."""
    return i["tracked"] - i["slots_used"]


def test_tracked_never_exceeds_max_tracked_rounded_to_sets(hottier_module):
    extent = 64
    cap = 32                                    # max_tracked 20, rounded up
    rng = random.Random(5)
    with devices.fast(unique("hdd"), 256) as h, \
         devices.fast(unique("ssd"), 32) as s:
        with devices.DmDevice(unique("ht"), table(
                h.path, s.path, extent, max_tracked=20,
                promote_threshold=4)) as d:
            extents = devices.sectors(d.path) // extent
            seen = []
            with Direct(d.path) as f:
                for k in range(500):
                    e = rng.randrange(extents)
                    f.read_sectors(e * extent + rng.randrange(8) * 8, 8)
                    if k % 50 == 0:
                        seen.append(heat_tracked(info(d)))
            wait_copies_done(d)
            seen.append(heat_tracked(info(d)))
            print("tracked:", seen, "promotions:", info(d)["promotions"])
            assert max(seen) <= cap, seen
            assert seen[-1] == cap, seen


# 8. Working-set turnovers

def test_a_moved_hot_set_is_one_turnover_and_streams_beside_it_are_none(
        hottier_module):
    """Documentation/hottier.rst, Working-set turnovers: random reads over a
    region larger than the SSD, then over another, make one turnover, and
    the new region takes the SSD; then streams over cold data beside the
    new region's reads, which take the device's hit ratio down as a move
    would, make none, since a stream's reads continue it and are not
    fresh."""
    extent = 128                                # 64 KiB
    region = 20 * MiB                           # 320 extents, 250 slots
    a, b, cold = 0, 96 * MiB, 512 * MiB
    with devices.fast(unique("hdd"), 1024) as h, \
         devices.fast(unique("ssd"), 16) as s:
        with devices.DmDevice(unique("ht"), table(
                h.path, s.path, extent)) as d:
            def phase(seconds, *jobs):
                before = info(d)
                with hotio.Fio(d.path, "--time_based",
                               f"--runtime={seconds}", *jobs) as f:
                    rc, _, out = f.wait(timeout=seconds + 120)
                assert rc == 0, out
                after = info(d)
                hits = after["read_hits"] - before["read_hits"]
                reads = hits + after["read_misses"] - before["read_misses"]
                return after, hits / max(1, reads)

            def randread(offset, depth, *more):
                return ["--name=rand", "--rw=randread", "--bs=4k",
                        f"--offset={offset}", f"--size={region}",
                        f"--iodepth={depth}", *more]

            i, ratio_a = phase(25, *randread(a, 8))
            print("A:", ratio_a, i)
            assert i["turnovers"] == 0, i
            assert ratio_a > 0.5, (ratio_a, i)
            i, ratio_b = phase(25, *randread(b, 8))
            print("B:", ratio_b, i)
            assert i["turnovers"] == 1, i
            i, ratio_b2 = phase(10, *randread(b, 8))
            print("B, after:", ratio_b2, i)
            assert ratio_b2 > 0.5, (ratio_b2, i)
            # Four streams of one pass each (80 of their 128 MiB), 256
            # misses a second against 40 fresh reads.
            streams = [w for k in range(4) for w in (
                f"--name=stream{k}", "--rw=read", "--bs=128k",
                f"--offset={cold + k * 128 * MiB}", f"--size={128 * MiB}",
                "--iodepth=4", "--rate=4m")]
            i, ratio_c = phase(20, *randread(b, 1, "--rate_iops=40"),
                               *streams)
            print("B with streams:", ratio_c, i)
            # The device's hits fell as at a move; no turnover.
            assert ratio_c < ratio_b2 / 4, (ratio_c, ratio_b2)
            assert i["turnovers"] == 1, i
