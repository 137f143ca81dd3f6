"""Large SSDs: memory per slot beside dm-cache smq, tables of millions of
slots, promotions with a full SSD whatever its size, and long discards.

Members are memory-less null_blk devices (no data kept, no memory used), so
their size costs nothing; only the target's own memory is measured.
HOTTIER_SCALE_SSD_GIB sets the SSD of the large-table test (make soak loads
a 4 TiB one in a guest with memory for its 64M slots).
"""

import json
import os
import subprocess
import time

import pytest

import devices
import hotio
from conftest import hottier_table, info, unique
from directio import Direct, poll

EXTENT = 128                    # 64 KiB
GIB = 1024                      # null_blk sizes are in MiB
LARGE_SSD_GIB = int(os.environ.get("HOTTIER_SCALE_SSD_GIB", "256"))


def memless(name, size_mb):
    return devices.NullBlk(name, size_mb, memory_backed=False)


def settle():
    """Let RCU-freed slab and vfree'd areas from earlier tests go."""
    subprocess.run(["sync"], check=True)
    time.sleep(1)


def test_memory_per_slot_at_1m_slots_beside_dm_cache_smq(hottier_module):
    """1M slots (a 64 GiB SSD, 64 KiB extents), default keys: the kernel
    memory a hottier table takes, per slot, beside a dm-cache smq
    writethrough table over the same members with 1M blocks of 64 KiB.
    The bound is the issue's goal, at most smq's; both are printed."""
    devices.modprobe("dm-cache")
    devices.modprobe("dm-cache-smq")
    res = {}
    with memless(unique("hdd"), 128 * GIB) as h, \
            memless(unique("ssd"), 64 * GIB) as s, \
            devices.NullBlk(unique("meta"), 256) as meta:
        settle()
        before = devices.kernel_memory()
        with devices.DmDevice(unique("ht"),
                              hottier_table(h.path, s.path, EXTENT)) as d:
            settle()
            used = devices.kernel_memory() - before
            slots = info(d)["slots_total"]
        res["hottier"] = {"slots": slots, "bytes": used,
                          "per_slot": round(used / slots, 1)}
        blocks = 64 * GIB * 2048 // EXTENT
        settle()
        before = devices.kernel_memory()
        table = (f"0 {devices.sectors(h.path)} cache {meta.path} {s.path} "
                 f"{h.path} {EXTENT} 1 writethrough smq 0")
        with devices.DmDevice(unique("cache"), table):
            settle()
            used = devices.kernel_memory() - before
        res["smq"] = {"blocks": blocks, "bytes": used,
                      "per_block": round(used / blocks, 1)}
    res["ratio"] = round(res["hottier"]["per_slot"] / res["smq"]["per_block"],
                         2)
    print(json.dumps(res, indent=1))
    hotio.save("memory-1m-slots.json", res)
    assert slots > 1_000_000, res
    assert res["hottier"]["per_slot"] <= res["smq"]["per_block"], res


def test_a_large_ssd_loads_with_default_keys_and_serves(hottier_module):
    """An SSD of LARGE_SSD_GIB (256 GiB here, 4M slots; 4 TiB, 64M slots,
    in make soak) at 64 KiB extents: the table loads (default keys but the
    threshold) in chunked allocations, promotes, serves a hit, and goes."""
    ssd_mb = LARGE_SSD_GIB * GIB
    with memless(unique("hdd"), 2 * ssd_mb) as h, \
            memless(unique("ssd"), ssd_mb) as s:
        settle()
        before = devices.kernel_memory()
        t0 = time.monotonic()
        # Default keys but the threshold: udev's probe reads promote nothing.
        with devices.DmDevice(unique("ht"), hottier_table(
                h.path, s.path, EXTENT,
                opts=("promote_threshold", "1000000"))) as d:
            load_s = time.monotonic() - t0
            settle()
            used = devices.kernel_memory() - before
            i = info(d)
            assert i["slots_total"] >= ssd_mb * 2048 // EXTENT * 99 // 100, i
            d.message("promote", "0", str(64 * EXTENT))
            poll(lambda: info(d), lambda i: i["slots_used"] == 64, 120,
                 "64 promoted extents resident")
            with Direct(d.path) as f:
                f.read_sectors(0, 8)
            assert info(d)["read_hits"] == 1
    # The table's memory as loaded (no replica yet: the per-slot arrays
    # are allocated whole at load, so this is the full-residency figure
    # but for the 64 copies' kcopyd pages).
    res = {"ssd_gib": LARGE_SSD_GIB, "slots": i["slots_total"],
           "load_s": round(load_s, 1), "bytes": used,
           "per_slot": round(used / i["slots_total"], 1)}
    print(json.dumps(res))
    hotio.save(f"large-ssd-{LARGE_SSD_GIB}g.json", res)


def fill(d, slots):
    """Every slot holds a replica, by promote messages."""
    d.message("max_migrations", "64")
    step = 8192
    for first in range(0, slots, step):
        n = min(step, slots - first)
        d.message("promote", str(first * EXTENT), str(n * EXTENT))
    poll(lambda: info(d), lambda i: i["slots_used"] == slots, 600,
         f"{slots} slots filled")
    d.message("max_migrations", "4")


def promotion_rate(h, ssd_mb, seconds):
    """Promotions a second with a full SSD and promote_threshold 1, while
    fio reads a region of 64k extents past the filled ones."""
    with memless(unique("ssd"), ssd_mb) as s, \
            devices.DmDevice(unique("ht"), hottier_table(
                h.path, s.path, EXTENT,
                opts=("promote_threshold", "1"))) as d:
        slots = info(d)["slots_total"]
        fill(d, slots)
        d.message("reset_stats")
        offset = slots * EXTENT * 512
        rc, _, tail = hotio.fio(
            d.path, "--name=r", "--rw=randread", "--bs=4k", "--direct=1",
            "--ioengine=libaio", "--iodepth=16", f"--offset={offset}",
            f"--size={65536 * EXTENT * 512}", "--time_based",
            f"--runtime={seconds}", "--norandommap")
        assert rc == 0, tail
        i = info(d)
        return slots, i["promotions"] / seconds, i["demotions"]


@pytest.mark.measure
def test_promotion_rate_with_a_full_ssd_does_not_fall_with_its_size(
        hottier_module):
    """Every promotion with a full SSD evicts: the victim choice costs the
    same at 128k slots as at 16k, so the promotion rate holds (at least
    half; before the indexed map it fell 13 times)."""
    seconds = int(os.environ.get("HOTTIER_SCALE_SECONDS", "10"))
    res = {}
    with memless(unique("hdd"), 64 * GIB) as h:
        for name, ssd_mb in (("16k", GIB + 64), ("128k", 8 * GIB + 64),
                             ("16k-again", GIB + 64)):
            slots, rate, demotions = promotion_rate(h, ssd_mb, seconds)
            res[name] = {"slots": slots, "promotions_per_s": round(rate, 1),
                         "demotions": demotions}
    small = min(res["16k"]["promotions_per_s"],
                res["16k-again"]["promotions_per_s"])
    res["ratio_128k_over_16k"] = round(res["128k"]["promotions_per_s"] /
                                       max(small, 1e-9), 2)
    print(json.dumps(res, indent=1))
    hotio.save("promotion-rate.json", res)
    assert res["16k"]["demotions"] > 0 and res["128k"]["demotions"] > 0, res
    assert res["ratio_128k_over_16k"] >= 0.5, res


@pytest.mark.parametrize("hdd_mb", [
    pytest.param(64, id="index-per-extent", marks=pytest.mark.debug_soak),
    pytest.param(4 * GIB, id="index-per-group")])
def test_long_discard_drops_replicas_in_a_worker_before_the_hdd(
        hottier_module, hdd_mb):
    """A discard of 256 extents (past the 64 done in map) waits for a
    worker that drops its replicas, pinned ones too, and only then reaches
    the HDD; the pinned extents are copied again, the data reads back as
    zeroes, replicas outside the range stay. A 4 GiB HDD has about 130
    extents a slot: its range index counts groups of extents, not extents
    (Documentation/hottier.rst, Memory)."""
    extent = 64
    with devices.fast(unique("hdd"), hdd_mb) as h, \
            devices.fast(unique("ssd"), 32) as s, \
            devices.DmDevice(unique("ht"), hottier_table(
                h.path, s.path, extent,
                opts=("promote_threshold", "1000000"))) as d:
        subprocess.run(["dd", "if=/dev/urandom", f"of={d.path}", "bs=1M",
                        "count=16", "oflag=direct", "status=none"],
                       check=True)
        d.message("promote", "0", str(400 * extent))
        d.message("pin", str(10 * extent), str(4 * extent))
        poll(lambda: info(d), lambda i: i["slots_used"] == 400, 120,
             "400 replicas")
        d.message("reset_stats")
        # Extents 8 to 263: 256 of them, the 4 pinned ones among them.
        subprocess.run(["blkdiscard", "-o", str(8 * extent * 512), "-l",
                        str(256 * extent * 512), d.path], check=True)
        i = poll(lambda: info(d), lambda i: i["slots_used"] == 400 - 256 + 4
                 and i["migrations"] == 0, 120, "pins copied again")
        assert i["demotions"] == 256, i
        assert i["pinned"] == 4, i
        zero = bytes(256 * extent * 512)
        with Direct(d.path, max_bytes=len(zero)) as f:
            assert f.read_sectors(8 * extent, 256 * extent) == zero
            assert f.read_sectors(0, 8 * extent) != bytes(8 * extent * 512)
        with Direct(h.path, max_bytes=len(zero)) as f:
            assert f.read_sectors(8 * extent, 256 * extent) == zero
