"""The trace-driven simulator (tools/sim, tests/bench/sim.py): the
module's own policy code against KUnit's expectations, each trace reader
on a tiny fixture, and one replay against libcachesim's baselines."""

import json
import os
import random
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import sim  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "data", "sim")
HEAT_ONE = 16


@pytest.fixture(scope="module")
def binary():
    return sim.build()


def rig(binary, steps, slots, tracked):
    """The KUnit rig's steps (hottier-sim --rig), and what they printed."""
    out = subprocess.run([binary, "--rig", "--slots", str(slots),
                          "--tracked", str(tracked)],
                         input="\n".join(steps) + "\n", capture_output=True,
                         text=True, check=True).stdout
    return [line.split() for line in out.splitlines()]


def reads(e, n):
    return ["read %d %d" % (e, n)]


def reads_round(first, n, per):
    return ["read %d" % e for _ in range(per) for e in range(first, first + n)]


def stats(line):
    return int(line[1]), int(line[3])


# dm-hottier-policy-test.c

def test_loop_promotes_at_the_threshold(binary):
    out = rig(binary, reads(5, 1) + ["work", "stats"] + reads(5, 1) +
              ["work", "stats", "resident 5", "heat 5"], 16, 64)
    assert stats(out[0]) == (0, 0)
    assert stats(out[1]) == (1, 0)
    assert out[2] == ["resident", "5", "1"]
    assert int(out[3][2]) == 2 * HEAT_ONE


def test_loop_half_bar_ends_when_the_ssd_fills(binary):
    out = rig(binary, reads(1, 2) + reads(2, 2) + reads(3, 2) +
              ["work", "stats", "resident 3"] +
              reads(3, 3) + ["work", "stats", "resident 3"] +
              reads(3, 1) + ["work", "stats", "resident 3"], 2, 64)
    assert stats(out[0]) == (2, 0) and out[1][2] == "0"
    assert stats(out[2])[1] == 0 and out[3][2] == "0"
    assert stats(out[4])[1] == 1 and out[5][2] == "1"


def test_loop_evicts_only_past_the_margin(binary):
    steps = [s for e in range(8) for s in reads(e, 4 + e)]
    steps += ["work", "stats"] + reads(100, 7) + ["work", "stats",
                                                  "resident 100"]
    steps += reads(100, 1) + ["work", "stats", "resident 100"]
    steps += ["resident %d" % e for e in range(8)]
    out = rig(binary, steps, 8, 64)
    assert stats(out[0]) == (8, 0)
    assert stats(out[1])[1] == 0 and out[2][2] == "0"
    assert stats(out[3])[1] == 1 and out[4][2] == "1"
    assert [o[2] for o in out[5:]] == ["0"] + ["1"] * 7


def test_loop_scans_promote_nothing(binary):
    steps = reads(3, 4) + ["work"]
    steps += ["scan %d" % e for _ in range(10) for e in range(1000)]
    out = rig(binary, steps + ["work", "stats", "heat 3"], 16, 64)
    assert stats(out[0])[0] == 1
    assert int(out[1][2]) == 4 * HEAT_ONE


def test_loop_replicas_still_read_keep_their_slots(binary):
    steps = reads_round(0, 8, 4) + ["work", "stats"]
    for _ in range(40):
        steps += ["tick"] + reads_round(0, 8, 2) + reads_round(100, 8, 2)
        steps += ["work"]
    out = rig(binary, steps + ["stats"], 8, 64)
    assert stats(out[0]) == (8, 0)
    assert stats(out[1]) == (8, 0)


@pytest.mark.parametrize("tracked,warm", [(64, 0), (16, 16)])
def test_loop_moved_hot_set_takes_over(binary, tracked, warm):
    """moved_hot_set(): set B holds every slot at the second epoch, none
    of A evicted in the first, A has none left."""
    steps = reads_round(0, 8, 40) + ["work", "stats"]
    steps += reads_round(200, warm, 10) + ["work", "stats"]
    for _ in range(12):
        steps += ["tick"] + reads_round(100, 8, 2) + ["work", "stats"]
        steps += ["resident %d" % e for e in range(100, 108)]
    steps += ["resident %d" % e for e in range(8)]
    out = rig(binary, steps, 8, tracked)
    assert stats(out[0]) == (8, 0) and stats(out[1]) == (8, 0)
    epochs = [out[2 + 9 * i:11 + 9 * i] for i in range(12)]
    taken = next(i + 1 for i, ep in enumerate(epochs)
                 if all(r[2] == "1" for r in ep[1:]))
    assert taken == 2
    assert stats(epochs[0][0])[1] == 0
    assert stats(epochs[1][0])[1] == 8
    # By the twelfth epoch A is still gone (KUnit looks at the second).
    assert all(r[2] == "0" for r in out[-8:])


# dm-hottier-heat-test.c, through the trace mode

def trace(binary, events, *args):
    text = "".join("%d %s %d %d\n" % e for e in events)
    out = subprocess.run([binary] + list(args), input=text,
                         capture_output=True, text=True, check=True).stdout
    return json.loads(out)


def test_seq_stream_heats_each_extent_once_per_pass(binary):
    """Three passes of 8-sector reads over 16 extents of 128 sectors,
    cutoff 256: extents 0 and 1 heat 16 a pass, the rest once. With free
    slots the bar is half the threshold: at 8 (a bar of 4) only the head
    is promoted; at 6 (a bar of 3) every extent is."""
    base = 1 << 30
    events = [(0, "R", base + s * 512, 4096)
              for _ in range(3) for s in range(0, 16 * 128, 8)]
    args = ["--slots", "64", "--extent-kb", "64", "--cutoff-kb", "128"]
    assert trace(binary, events, *args, "--threshold", "8")["promotions"] == 2
    assert trace(binary, events, *args, "--threshold", "6")["promotions"] == 16


def test_reads_slower_than_decay_never_cross(binary):
    """One read a half-life converges to 31/16 of a read from below and
    never reaches the free-slot bar of two reads (threshold 4); one read
    an epoch does."""
    once = [(n * 60000000, "R", 0, 4096) for n in range(100)]
    assert trace(binary, once, "--slots", "16")["promotions"] == 0
    often = [(n * 15000000, "R", 0, 4096) for n in range(4)]
    assert trace(binary, often, "--slots", "16")["promotions"] == 1


def test_copy_delay_makes_reads_before_it_miss(binary):
    """Promoted at the second read (t = 1 ms), resident at 1 ms + 10 ms:
    the reads at 5 and 10 ms miss, the one at 12 ms hits."""
    events = [(t * 1000, "R", 0, 4096) for t in (0, 1, 5, 10, 12)]
    c = trace(binary, events, "--slots", "4", "--copy-us", "10000")
    assert (c["promotions"], c["read_piece_hits"]) == (1, 1)
    c = trace(binary, events, "--slots", "4")
    assert c["read_piece_hits"] == 3


def test_write_through_and_a_write_voiding_a_copy(binary):
    events = [(0, "R", 0, 4096), (1000, "R", 0, 4096),
              (2000, "W", 0, 8192), (20000, "R", 0, 4096)]
    c = trace(binary, events, "--slots", "4", "--copy-us", "10000")
    assert (c["raced"], c["promotions"], c["read_piece_hits"]) == (1, 0, 0)
    c = trace(binary, events, "--slots", "4")
    assert c["write_through_bytes"] == 8192
    assert c["ssd_bytes_written"] == 8192 + (1 << 20)


# Trace readers

def fixture(name):
    return os.path.join(DATA, name)


@pytest.mark.parametrize("name,fmt,want", [
    ("trace.blkparse.txt", "blkparse",
     [(0, "R", 2048 * 512, 4096), (1500, "W", 4096 * 512, 8192),
      (2500, "R", 10240 * 512, 1 << 20)]),
    ("trace-v2.iolog", "fio",
     [(0, "R", 1 << 20, 4096), (1000, "W", 2 << 20, 65536),
      (2000, "R", 0, 8192)]),
    ("trace-v3.iolog", "fio",
     [(0, "R", 1 << 20, 4096), (7000, "W", 2 << 20, 65536),
      (15000, "R", 0, 8192)]),
    ("trace-msr.csv", "msr",
     [(0, "R", 383496192, 32768), (1000000, "W", 3 << 30, 4096),
      (2000000, "R", 0, 65536)]),
    ("trace-lcs.csv", "lcs-csv",
     [(0, "R", 2048, 4096), (1000000, "W", 4096, 512),
      (3000000, "R", 0, 65536)]),
    ("trace.oracleGeneral.bin", "oracle",
     [(0, "R", 2048, 4096), (1000000, "R", 4096, 512),
      (3000000, "R", 2048, 4096)]),
])
def test_readers(name, fmt, want):
    assert sim.sniff(fixture(name)) == fmt
    assert sim.read_trace(fixture(name)) == want
    assert sim.read_trace(fixture(name), fmt) == want


def test_oracle_obj_unit_scales_ids():
    reqs = sim.read_trace(fixture("trace.oracleGeneral.bin"), obj_unit=512)
    assert [r[2] for r in reqs] == [2048 * 512, 4096 * 512, 2048 * 512]


# One replay

def synthetic(n=12000, extents=1000, seed=42):
    """Zipf-like reads and a fifth writes, 64 KiB anywhere in 1 MiB
    extents, a request every 2 ms on average."""
    rng = random.Random(seed)
    weights = [1 / (i + 1) ** 0.9 for i in range(extents)]
    order = list(range(extents))
    rng.shuffle(order)
    t, out = 0.0, []
    for k in rng.choices(range(extents), weights=weights, k=n):
        t += rng.expovariate(0.5)
        op = "W" if rng.random() < 0.2 else "R"
        out.append((round(t * 1000), op,
                    order[k] << 20 | rng.randrange(0, 1 << 20, 4096), 65536))
    return out


def test_replay_against_the_baselines():
    result = sim.replay(synthetic(), copy_ms=2)
    assert [r["percent"] for r in result["sizes"]] == list(sim.SIZES)
    table = sim.table(result)
    for name in ("hottier",) + sim.BASELINES + ("OPT",):
        assert name in table
    for row in result["sizes"]:
        ratio = {k: row[k]["read_hit_ratio_extent"]
                 for k in ("hottier", "OPT") + sim.BASELINES if row[k]}
        # Belady bounds every policy that admits each miss; OPT (free to
        # bypass) bounds them all, the module's too.
        for k in ("LRU", "ARC", "LIRS", "S3FIFO", "Sieve"):
            if k in ratio:
                assert ratio["Belady"] >= ratio[k], (row["percent"], k)
        assert all(ratio["OPT"] >= v for v in ratio.values())
        assert ratio["LRU"] > 0 and ratio["hottier"] > 0
        c = row["hottier_counters"]
        assert c["warnings"] == 0 and c["resident"] <= row["slots"]
        assert row["hottier"]["promotions"] == c["promotions"]
    assert json.dumps(result)
