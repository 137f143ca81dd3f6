"""Replica reads routed by measured latency; migration that yields to the
foreground (migration QoS).

Every test pins its region (the `pin` message copies it at once) and keeps
promote_threshold out of reach, so the replicas are exactly the pinned
extents and the foreground's reads never start copies of their own.
"""

import contextlib
import json
import os
import time

import pytest

import devices
import directio
import hotio
from conftest import hottier_table, info, unique

EXTENT = 2048           # 1 MiB extents
NO_PROMOTE = ("promote_threshold", "1000000")
# Seconds per measured run of the throughput and QoS tests: short in make
# check, longer in make bench (scripts/bench.sh sets 20). Not shorter: at
# 4 s the tight budget's window, which holds the controller's turn from a
# loose budget, copied 74 against the loose window's 146 (5 s: 68 against
# 168), too close to tell a controller that works from one that does not.
RUN_S = int(os.environ.get("HOTTIER_ROUTING_SECONDS", "5"))


def pinned_device(hdd, ssd, region_mb, *opts, extent=EXTENT):
    """A hottier device over hdd and ssd whose first region_mb are
    resident (pinned, copies done)."""
    d = devices.DmDevice(unique("ht"), hottier_table(
        hdd, ssd, extent, opts=(*NO_PROMOTE, *opts)))
    try:
        n = region_mb * 2048 // extent
        d.message("pin", "0", str(region_mb * 2048))
        hotio.wait_until(lambda: info(d)["slots_used"] >= n and
                         info(d)["migrations"] == 0, 120,
                         what=f"{n} replicas")
    except BaseException:
        d.remove()
        raise
    return d


def randread(region_mb, iodepth, *extra):
    return ["--name=r", "--rw=randread", "--bs=4k", f"--iodepth={iodepth}",
            f"--size={region_mb}M", "--randseed=4242", *extra]


def reads_completed(path):
    """Reads the block device at path completed (its /sys/block stat)."""
    name = os.path.basename(os.path.realpath(path))
    with open(f"/sys/block/{name}/stat") as f:
        return int(f.read().split()[0])


class Window:
    """Replica reads sent to each member between two samples; with ssd,
    the path of the SSD member, also the reads it completed (replica
    reads and probes)."""

    def __init__(self, dev, ssd=None):
        self.dev = dev
        self.ssd = ssd
        self.c = info(dev)
        self.ssd_reads = reads_completed(ssd) if ssd else 0

    def take(self):
        c = info(self.dev)
        d = {k: c[k] - self.c[k]
             for k in ("replica_reads_ssd", "replica_reads_hdd")}
        d["ssd_us"], d["hdd_us"] = c["ssd_latency_us"], c["hdd_latency_us"]
        self.c = c
        if self.ssd:
            n = reads_completed(self.ssd)
            d["ssd_member_reads"] = n - self.ssd_reads
            self.ssd_reads = n
        return d


def test_replica_reads_follow_ssd_latency_across_delay_reloads(
        hottier_module):
    """The SSD member is a dm-delay over a zero-latency null_blk, beside a
    2 ms HDD of depth 32. A read workload over resident extents goes to
    the SSD, at most 1% of it to the HDD; a table reload of the dm-delay
    to 50 ms shifts the replica reads to the HDD, while the SSD gets a
    probe a second (a read of the module's own, not the caller's); a
    reload back to 0 ms is noticed within 2 s and shifts them back."""
    region = 16
    with devices.NullBlk(unique("hdd"), 128, completion_nsec=2_000_000,
                         hw_queue_depth=32) as h, \
            devices.fast(unique("ssd"), 64) as s, \
            devices.delay(unique("sd"), s.path, 0) as sd, \
            pinned_device(h.path, sd.path, region) as d, \
            hotio.Fio(d.path, *randread(region, 4, "--time_based",
                                        "--runtime=600")) as fio:
        phases = {}
        w = Window(d, sd.path)
        # fio may take seconds to start on a loaded host: measure from its
        # first replica reads on.
        hotio.wait_until(lambda: sum(w.take()[k] for k in (
            "replica_reads_ssd", "replica_reads_hdd")), 60,
            what="fio reading")
        time.sleep(2)
        w.take()
        time.sleep(3)
        phases["fast"] = w.take()

        sd.reload(devices.delay_table(s.path, 50))
        time.sleep(2)
        w.take()
        time.sleep(4)
        phases["slow"] = w.take()

        sd.reload(devices.delay_table(s.path, 0))
        t0 = time.monotonic()

        def noticed():
            time.sleep(0.05)
            c = info(d)
            return c if c["ssd_latency_us"] < c["hdd_latency_us"] else None
        try:
            hotio.wait_until(noticed, 60, step=0, what="SSD estimate back")
        finally:
            phases["noticed_after_s"] = round(time.monotonic() - t0, 2)

        def back():
            time.sleep(1)
            p = w.take()
            return p if p["replica_reads_ssd"] > \
                8 * max(p["replica_reads_hdd"], 1) else None
        try:
            hotio.wait_until(back, 60, step=0, what="reads back on the SSD")
        finally:
            phases["back_after_s"] = round(time.monotonic() - t0, 1)
        time.sleep(1)
        w.take()
        time.sleep(3)
        phases["fast_again"] = w.take()
        # fio exits non-zero on the SIGINT that ends it: its jobs' errors
        # are what counts.
        _, report, tail = fio.stop()
        print(json.dumps(phases, indent=1))
        hotio.save("routing-delay.json", phases)
        assert report and hotio.job_errors(report) == [0], tail

        f, sl, fa = phases["fast"], phases["slow"], phases["fast_again"]
        # A healthy idle SSD: at most 1% of the reads go to the HDD.
        assert f["replica_reads_hdd"] * 100 <= \
            f["replica_reads_ssd"] + f["replica_reads_hdd"], phases
        assert phases["noticed_after_s"] <= 2.0, phases
        # Slow SSD: the reads go to the HDD, and the SSD is probed: about
        # a read a second that is no replica read of the caller's.
        assert sl["replica_reads_hdd"] > 8 * sl["replica_reads_ssd"], phases
        assert sl["ssd_member_reads"] > sl["replica_reads_ssd"], phases
        assert fa["replica_reads_ssd"] > 8 * fa["replica_reads_hdd"], phases
        assert sl["ssd_us"] > 10 * f["ssd_us"], phases


# How long the stuck pool holds its requests: past the probe period many
# times over (the run held them 46 s; the reader's gap then was 39 s).
STUCK_S = float(os.environ.get("HOTTIER_STUCK_SECONDS", "10"))


class Reader(hotio.Background):
    """One thread reading 4 KiB blocks of the first region_mb of path with
    O_DIRECT, one at a time, as a psync reader would; the instant of each
    completion is kept."""

    def __init__(self, path, region_mb):
        super().__init__()
        self.path = path
        self.blocks = region_mb * 256
        self.done = []
        self.errors = []

    def _run(self):
        n = 0
        try:
            with directio.Direct(self.path) as f:
                while not self.stop.is_set():
                    n = (n * 7919 + 1) % self.blocks
                    f.read(n * 4096, 4096)
                    self.done.append(time.monotonic())
        except OSError as e:
            self.errors.append(repr(e))

    def gaps(self, start, end):
        """The longest time between two completions in [start, end]."""
        t = [x for x in self.done if start <= x <= end]
        return max((b - a for a, b in zip(t, t[1:])), default=end - start)


@pytest.mark.kernel
def test_a_stuck_pool_never_holds_a_reader_of_replicas(hottier_module):
    """The HDD (4 ms, under a dm-linear) stops completing requests for
    STUCK_S seconds: its dm-linear suspended, so they wait as they would
    for an NBD reconnect. A reader of replicas under routing latency reads
    the SSD, which is faster, and the HDD is probed once a second by a read
    of the module's own: the probe waits out the outage, and no second
    one is sent while it does. The reader sees no gap between two
    completions longer than a second. When the HDD completes again, its
    estimate is back within seconds."""
    region = 16
    with devices.NullBlk(unique("hdd"), 128, completion_nsec=4_000_000,
                         hw_queue_depth=32) as h, \
            devices.linear(unique("hm"), h.path) as hm, \
            devices.fast(unique("ssd"), 64) as s, \
            pinned_device(hm.path, s.path, region) as d, \
            Reader(d.path, region) as r:
        hotio.wait_until(lambda: len(r.done) > 100, 60, what="the reader")
        # Routing has an estimate of each member: the HDD's from probes.
        hotio.wait_until(lambda: info(d)["hdd_latency_us"] > 0, 30,
                         what="a probe of the HDD")
        before = info(d)
        hm.suspend()
        t0 = time.monotonic()
        try:
            time.sleep(STUCK_S)
        finally:
            hm.resume()
        t1 = time.monotonic()
        stuck = info(d)
        # Back: the stuck probe's sample is replaced by the next probes'.
        hotio.wait_until(lambda: info(d)["hdd_latency_us"] < 100_000, 30,
                         what="the HDD's estimate back")
        back_s = time.monotonic() - t1
        gap = r.gaps(t0, t1)
        res = {"stuck_s": round(t1 - t0, 1), "longest_gap_s": round(gap, 3),
               "reads_while_stuck": sum(1 for x in r.done if t0 <= x <= t1),
               "estimate_back_after_s": round(back_s, 1),
               "replica_reads_hdd": stuck["replica_reads_hdd"] -
               before["replica_reads_hdd"]}
        print(json.dumps(res))
        hotio.save("stuck-pool.json", res)
    assert not r.errors, r.errors
    assert res["longest_gap_s"] <= 1.0, res
    # The caller's reads went to the SSD all along; the probe is not one.
    assert res["replica_reads_hdd"] == 0, res
    assert res["estimate_back_after_s"] <= 10, res


@pytest.mark.measure
def test_latency_routing_beats_ssd_routing_when_the_ssd_is_saturated(
        hottier_module):
    """The seed's case: an SSD four times faster than the HDD when idle
    (1 ms against 4 ms) but with queue depth 1, saturated by 16 readers,
    beside an idle HDD of depth 32. routing latency serves the same
    resident region and fio job with more total read throughput than
    routing ssd."""
    region = 16
    res = {}
    with devices.NullBlk(unique("hdd"), 128, completion_nsec=4_000_000,
                         hw_queue_depth=32) as h, \
            devices.NullBlk(unique("ssd"), 64, completion_nsec=1_000_000,
                            hw_queue_depth=1) as s, \
            pinned_device(h.path, s.path, region) as d:
        for mode in ("ssd", "latency", "ssd", "latency"):
            d.message("routing", mode)
            d.message("reset_stats")
            rc, report, tail = hotio.fio(
                d.path, *randread(region, 16, "--time_based",
                                  f"--runtime={RUN_S}"))
            assert rc == 0 and report, tail
            c = info(d)
            r = res.setdefault(mode, {"iops": [], "ssd": 0, "hdd": 0})
            r["iops"].append(round(hotio.total(report, "read", "iops")))
            r["ssd"] += c["replica_reads_ssd"]
            r["hdd"] += c["replica_reads_hdd"]
            assert c["read_misses"] == 0, c
    lat, ssd = (sum(res[m]["iops"]) for m in ("latency", "ssd"))
    res["ratio_latency_over_ssd"] = round(lat / ssd, 2)
    print(json.dumps(res, indent=1))
    hotio.save("routing-saturated.json", res)
    assert res["ssd"]["hdd"] == 0, res
    assert res["latency"]["hdd"] > 0, res
    assert lat > ssd, res


def test_routing_ssd_sends_every_replica_read_to_the_ssd(hottier_module):
    """With the SSD 5 ms slower than a zero-latency HDD, routing latency
    sends most replica reads to the HDD; set at runtime, routing ssd sends
    every one to the SSD."""
    region = 8
    with devices.fast(unique("hdd"), 64) as h, \
            devices.fast(unique("ssd"), 32) as s, \
            devices.delay(unique("sd"), s.path, 5) as sd, \
            pinned_device(h.path, sd.path, region) as d:
        job = randread(region, 4, "--time_based", "--runtime=3")
        d.message("reset_stats")
        rc, _, tail = hotio.fio(d.path, *job)
        assert rc == 0, tail
        c = info(d)
        print(f"routing latency: {c}")
        assert c["replica_reads_hdd"] > c["replica_reads_ssd"] > 0, c

        d.message("routing", "ssd")
        assert "routing ssd" in d.table()
        d.message("reset_stats")
        rc, _, tail = hotio.fio(d.path, *job)
        assert rc == 0, tail
        c = info(d)
        print(f"routing ssd: {c}")
        assert c["replica_reads_hdd"] == 0, c
        assert c["replica_reads_ssd"] == c["read_hits"] > 0, c


# Migration QoS: an HDD on which time grows with size, as on a disk (depth
# 1, 1 ms a request, requests of at most 4 KiB, so a 64 KiB copy is 16
# requests), and a burst of copies that outlasts every run: 1024 extents
# per 5 s of run, while fewer than 60 copies a second complete here.
QOS_EXTENT = 128
QOS_N = 1024 * RUN_S // 5
QOS_BURST = QOS_EXTENT * QOS_N
QOS_BURST_MB = QOS_N * QOS_EXTENT // 2048
QOS_MAX_MIGRATIONS = 16


@contextlib.contextmanager
def qos_device(budget_us):
    with devices.NullBlk(unique("hdd"), QOS_BURST_MB + 64,
                         completion_nsec=1_000_000, hw_queue_depth=1,
                         max_sectors=8) as h, \
            devices.fast(unique("ssd"), QOS_BURST_MB + 32) as s, \
            devices.DmDevice(unique("ht"), hottier_table(
                h.path, s.path, QOS_EXTENT, opts=(
                    *NO_PROMOTE, "max_migrations", str(QOS_MAX_MIGRATIONS),
                    "migration_budget_us", str(budget_us)))) as d:
        yield d


def qos_fg(rw):
    """4 KiB random I/O at depth 1 on 16 MiB beyond the burst's region."""
    return [f"--name={rw}", f"--rw={rw}", "--bs=4k", "--iodepth=1",
            "--size=16M", f"--offset={QOS_BURST_MB + 16}M",
            "--randseed=4242", "--time_based", f"--runtime={RUN_S}",
            "--lat_percentiles=1", "--percentile_list=50:99"]


def qos_burst(d):
    """Pin the burst's region and wait for its first copy."""
    d.message("pin", "0", str(QOS_BURST))
    hotio.wait_until(lambda: info(d)["promotions"] > 0, 30,
                     what="the burst's first copy")


def qos_run(d, fg, ddir):
    """One foreground run: its median, p99, I/Os, and the copies beside."""
    before = info(d)
    rc, report, tail = hotio.fio(d.path, *fg)
    after = info(d)
    assert rc == 0 and report, tail
    return {
        "p50_us": round(hotio.lat_percentile(report, 50, ddir)),
        "p99_us": round(hotio.lat_percentile(report, 99, ddir)),
        f"{ddir}s": hotio.total(report, ddir, "total_ios"),
        "copies": after["promotions"] - before["promotions"],
        "allowed_at_end": after["migrations_allowed"],
    }


LOOSE_US = 15000                # the loose budget, at least
TIGHT_US = 3000                 # the tight budget, at least


def loose_budget_us(base):
    """A budget copies can run within: 15 ms, or three times the baseline
    run's p99 where that is more."""
    return max(LOOSE_US, 3 * base["p99_us"])


def tight_budget_us(base):
    """A budget about the HDD's own p99: the baseline run's, without copies,
    and at least 3 ms. Under TCG that p99 is the emulator's as much as the
    HDD's: 2.9 ms on one machine, 5.3-5.9 ms on a slower one, where a fixed
    3 ms lay below the foreground's own tail and its median above half of
    it, so the controller held one copy in flight whatever the copies did.
    """
    return max(TIGHT_US, base["p99_us"])


@pytest.mark.measure
def test_migration_qos_keeps_foreground_p99_within_budget_during_a_burst(
        hottier_module):
    """Invariant 5. On the QoS HDD (above), 4 KiB random reads at depth 1
    run beside a burst of copies started by the pin message, in windows of
    RUN_S seconds:

    - migration off: the baseline;
    - a loose budget (loose_budget_us()): copies run and the foreground
      p99 stays within it;
    - a budget about the HDD's own p99 (tight_budget_us()): copies slow
      to a trickle and the foreground gets back its baseline median and
      most of its reads;
    - the foreground stops: copies speed back up;
    - budget 0: the controller off, for comparison.
    """
    fg = qos_fg("randread")
    res = {}

    def run(name):
        res[name] = qos_run(d, fg, "read")

    with qos_device(LOOSE_US) as d:
        run("migration_off")
        budget_us = loose_budget_us(res["migration_off"])
        tight_us = tight_budget_us(res["migration_off"])
        d.message("migration_budget_us", str(budget_us))

        qos_burst(d)
        run("burst_budget")

        d.message("migration_budget_us", str(tight_us))
        time.sleep(0.5)                 # copies in flight complete
        run("burst_budget_tight")

        p0 = info(d)["promotions"]
        time.sleep(RUN_S)
        idle = info(d)
        res["idle_copies"] = idle["promotions"] - p0
        res["idle_allowed_at_end"] = idle["migrations_allowed"]

        d.message("migration_budget_us", "0")
        run("burst_qos_off")
        resident = info(d)["slots_used"]
        d.message("unpin", "0", str(QOS_BURST))
        d.message("invalidate")
    res["budget_us"], res["tight_budget_us"] = budget_us, tight_us
    print(json.dumps(res, indent=1))
    hotio.save("migration-qos.json", res)

    base, on = res["migration_off"], res["burst_budget"]
    tight, off = res["burst_budget_tight"], res["burst_qos_off"]
    assert resident < QOS_N, res        # the burst outlasted every window
    assert base["copies"] == 0, res
    # Copies run within the budget.
    assert on["copies"] > 0 and on["p99_us"] <= budget_us, res
    # A budget the copies break: they slow down, the foreground recovers.
    assert tight["copies"] * 2 < on["copies"], res
    assert tight["p50_us"] < 1.5 * base["p50_us"], res
    assert tight["reads"] > 1.5 * on["reads"], res
    # The foreground gone, copies speed back up: the controller, which held
    # them back under the tight budget, allows max_migrations again (a
    # period with no foreground I/O ends any wait), and more copies
    # complete than under the tight budget. Not twice as many: this HDD
    # serves one 4 KiB request at a time, so where the controller rightly
    # held one copy beside an unharmed depth-1 reader, that copy already
    # had about half the HDD (CI: 81 copies, then 151 idle, the reader at
    # its baseline median and reads).
    assert tight["allowed_at_end"] < QOS_MAX_MIGRATIONS, res
    assert res["idle_allowed_at_end"] == QOS_MAX_MIGRATIONS, res
    assert res["idle_copies"] > tight["copies"], res
    assert off["copies"] > tight["copies"], res


@pytest.mark.measure
def test_migration_qos_counts_a_write_only_foreground(hottier_module):
    """Issue 14 (Mahanaxar's capture writer): foreground writes count
    against migration_budget_us as reads do, so a write-only period is not
    idle. The QoS HDD takes 4 KiB random writes at depth 1 beside a burst
    of copies (pin):

    - no copies: the baseline;
    - a budget about the HDD's own p99 (tight_budget_us()): copies slow
      to a trickle and the writer keeps its baseline median;
    - budget 0: the controller off, copies at max_migrations.

    Before writes were counted, a write-only foreground left the controller
    growing copies as on an idle HDD: both runs copied alike.
    """
    fg = qos_fg("randwrite")
    res = {}

    def run(name):
        res[name] = qos_run(d, fg, "write")

    with qos_device(TIGHT_US) as d:
        run("no_copies")
        tight_us = tight_budget_us(res["no_copies"])
        d.message("migration_budget_us", str(tight_us))
        qos_burst(d)
        run("burst_budget_tight")
        d.message("migration_budget_us", "0")
        run("burst_qos_off")
        resident = info(d)["slots_used"]
        d.message("unpin", "0", str(QOS_BURST))
        d.message("invalidate")
    res["tight_budget_us"] = tight_us
    print(json.dumps(res, indent=1))
    hotio.save("migration-qos-writes.json", res)

    base, tight = res["no_copies"], res["burst_budget_tight"]
    off = res["burst_qos_off"]
    assert resident < QOS_N, res        # the burst outlasted both runs
    assert base["copies"] == 0, res
    # The writer over budget holds copies back ...
    assert tight["copies"] * 2 < off["copies"], res
    # ... and keeps its median and most of its writes.
    assert tight["p50_us"] < 1.5 * base["p50_us"], res
    assert tight["writes"] > 1.5 * off["writes"], res
