"""Data integrity while extents move between the HDD and the SSD.

Writer processes stamp 4 KiB blocks (tests/lib/stamp.py: block number,
generation, seed-derived pattern) while reader processes reread the same
hot extents, which drives promotions, and evictions since the hot set is
larger than the SSD. Meanwhile the test fires invalidate, demote, promote
and scrub messages. Every read is checked against the writes: it must
return a whole stamp of its own block, from the last write that completed
before the read started or from a newer one that started before the read
ended. Afterwards the device, the HDD read directly and scrub must agree
with the last stamp of every block.

HOTTIER_SEED fixes the run's choices; HOTTIER_SOAK_SECONDS its length
(`make soak` runs it for minutes).
"""

import multiprocessing as mp
import os
import random
import subprocess
import time
import traceback

import pytest

import devices
import stamp
from conftest import hottier_table, info, no_copy_left, scrub, unique
from directio import Direct, Phases, poll

SEED = int(os.environ.get("HOTTIER_SEED", "20240611"))
SECONDS = float(os.environ.get("HOTTIER_SOAK_SECONDS", "20"))

EXTENT = 256                                # sectors: 128 KiB
PER_EXTENT = EXTENT * 512 // stamp.BLOCK    # 32 blocks
HOT = 40                                    # extents; the SSD has 31 slots
FIRST = 512                                 # first hot extent (64 MiB in)
NBLOCKS = HOT * PER_EXTENT
BASE_BLOCK = FIRST * PER_EXTENT             # device block of hot block 0
WRITERS = 2
READERS = 2
SAMPLES = 20                                # violations kept for the report


def offset(b):
    return (BASE_BLOCK + b) * stamp.BLOCK


def writer(path, w, started, completed, stop, results):
    """Stamps runs of blocks in its own half of the hot extents; per block,
    one writer, so generations only grow."""
    rng = random.Random(f"{SEED}-writer-{w}")
    lo, hi = w * NBLOCKS // WRITERS, (w + 1) * NBLOCKS // WRITERS
    n = 0
    out = {"role": f"writer {w}", "ops": 0, "error": None}
    try:
        with Direct(path, write=True, max_bytes=16 * stamp.BLOCK) as f:
            while not stop.is_set():
                r = rng.random()
                count = 1 if r < 0.6 else rng.randint(2, 8) if r < 0.9 \
                    else rng.randint(9, 16)
                start = rng.randrange(lo, hi - count + 1)
                n += 1
                gen = n * WRITERS + w
                for b in range(start, start + count):
                    started[b] = gen
                f.write(offset(start), stamp.make_run(
                    BASE_BLOCK + start, [gen] * count, SEED))
                for b in range(start, start + count):
                    completed[b] = gen
                out["ops"] += 1
    except Exception:
        out["error"] = traceback.format_exc()
    results.put(out)


def reader(path, r, started, completed, stop, results):
    """Rereads a moving hot spot of the hot extents; checks every block."""
    rng = random.Random(f"{SEED}-reader-{r}")
    out = {"role": f"reader {r}", "ops": 0, "violations": 0, "samples": [],
           "error": None}
    t0 = time.monotonic()
    try:
        with Direct(path, max_bytes=8 * stamp.BLOCK) as f:
            while not stop.is_set():
                spot = int((time.monotonic() - t0) / 2) * 7
                ext = (spot + int(rng.expovariate(1 / 6))) % HOT
                start = ext * PER_EXTENT + rng.randrange(PER_EXTENT)
                count = min(1 if rng.random() < 0.7 else rng.randint(2, 8),
                            NBLOCKS - start)
                low = [completed[b] for b in range(start, start + count)]
                data = f.read(offset(start), count * stamp.BLOCK)
                high = [started[b] for b in range(start, start + count)]
                for k in range(count):
                    b = start + k
                    block = data[k * stamp.BLOCK:(k + 1) * stamp.BLOCK]
                    try:
                        gen = stamp.parse(block, BASE_BLOCK + b, SEED)
                        bad = None if low[k] <= gen <= high[k] else \
                            (f"hot block {b}: gen {gen}, expected "
                             f"{low[k]}..{high[k]}")
                    except stamp.BadStamp as e:
                        bad = f"hot block {b}: {e}"
                    if bad:
                        out["violations"] += 1
                        if len(out["samples"]) < SAMPLES:
                            out["samples"].append(
                                f"t={time.monotonic() - t0:.2f}s {bad}")
                out["ops"] += 1
    except Exception:
        out["error"] = traceback.format_exc()
    results.put(out)


def message(dev, *words):
    return subprocess.run(["dmsetup", "message", dev.name, "0", *words],
                          capture_output=True, text=True)


def chaos(dev, deadline, rng, log):
    """Messages at random moments until the deadline."""
    while time.monotonic() < deadline:
        time.sleep(rng.uniform(0.2, 0.8))
        what = rng.choice(["invalidate", "demote", "promote", "promote",
                           "scrub"])
        words = [what]
        if what in ("demote", "promote"):
            n = rng.randint(1, 31)
            first = FIRST + rng.randrange(HOT - n + 1)
            words += [str(first * EXTENT), str(n * EXTENT)]
        r = message(dev, *words)
        entry = {"words": words, "rc": r.returncode, "err": r.stderr.strip()}
        # The scrub runs in a worker: its last result, as the status has it.
        i = info(dev)
        entry["scrub"] = (i["scrub"], i["scrub_checked"],
                          i["scrub_mismatches"])
        log.append(entry)


def check_all(path, expected, what):
    """Every hot block holds exactly its expected generation."""
    bad = []
    with Direct(path) as f:
        for first in range(0, NBLOCKS, 256):
            data = f.read(offset(first), 256 * stamp.BLOCK)
            for k in range(256):
                b = first + k
                block = data[k * stamp.BLOCK:(k + 1) * stamp.BLOCK]
                try:
                    gen = stamp.parse(block, BASE_BLOCK + b, SEED)
                    if gen != expected[b]:
                        bad.append(f"hot block {b}: gen {gen}, expected "
                                   f"{expected[b]}")
                except stamp.BadStamp as e:
                    bad.append(f"hot block {b}: {e}")
    assert not bad, f"{what}: {len(bad)} bad blocks, first: {bad[:SAMPLES]}"


def copies_done(dev):
    """No copy in flight or waiting to start (a copy decided before the
    threshold went up may wait for the QoS while the checks read), twice
    half a second apart."""
    i = poll(lambda: info(dev), no_copy_left, 120,
             "no copy in flight or waiting")
    time.sleep(0.5)
    return poll(lambda: info(dev), no_copy_left, 120,
                "no copy in flight or waiting")


@pytest.mark.parametrize("policy", [
    pytest.param("through", marks=pytest.mark.race), "around"])
def test_reads_see_the_last_completed_write_while_extents_migrate(
        hottier_module, policy):
    ph = Phases(f"integrity {policy}")
    # A 4 MiB SSD: 31 slots of 128 KiB for 40 hot extents, so promotions
    # evict; heat halves every second, so the moving hot spot keeps them at it.
    with devices.fast(unique("hdd"), 256) as h, \
         devices.fast(unique("ssd"), 4) as s:
        with Direct(h.path, write=True) as f:
            for first in range(0, NBLOCKS, 256):
                f.write(offset(first), stamp.make_run(
                    BASE_BLOCK + first, [0] * 256, SEED))
        devices.settle()
        line = hottier_table(h.path, s.path, EXTENT, opts=(
            "write_policy", policy, "promote_threshold", "2",
            "heat_halflife_ms", "1000"))
        with devices.DmDevice(unique("ht"), line) as d:
            assert info(d)["slots_total"] == 31
            d.message("reset_stats")
            started = mp.RawArray("q", NBLOCKS)
            completed = mp.RawArray("q", NBLOCKS)
            stop = mp.Event()
            results = mp.Queue()
            procs = [mp.Process(target=writer, args=(
                d.path, w, started, completed, stop, results))
                for w in range(WRITERS)]
            procs += [mp.Process(target=reader, args=(
                d.path, r, started, completed, stop, results))
                for r in range(READERS)]
            log = []
            ph("devices ready")
            for p in procs:
                p.start()
            try:
                chaos(d, time.monotonic() + SECONDS,
                      random.Random(f"{SEED}-chaos"), log)
            finally:
                stop.set()
                outs = []
                deadline = time.monotonic() + 120
                while len(outs) < len(procs) and time.monotonic() < deadline:
                    try:
                        outs.append(results.get(timeout=5))
                    except Exception:       # queue.Empty: check the clock
                        pass
                for p in procs:
                    p.join(timeout=max(1, deadline - time.monotonic()))
                hung = [p.pid for p in procs if p.is_alive()]
                for p in procs:
                    if p.is_alive():
                        p.kill()
            ph("run over")
            run = info(d)
            print(f"seed {SEED}, {SECONDS}s, write_policy {policy}")
            for o in outs:
                print(o)
            print("run:", run)
            print("messages:", log)
            assert not hung, f"workers {hung} did not finish: I/O hung"
            assert len(outs) == len(procs), outs
            for o in outs:
                assert o["error"] is None, o["error"]
                assert o["ops"] > 0, o
            violations = [o for o in outs if o.get("violations")]
            assert not violations, violations
            for e in log:
                # A scrub that finished found every replica equal (under
                # constant writes one may give up: state busy).
                assert e["scrub"][0] != "done" or e["scrub"][2] == 0, e
                if e["words"][0] == "scrub":
                    # Refused only while the last one still runs.
                    assert e["rc"] == 0 or "busy" in e["err"].lower(), e
                elif e["words"][0] == "promote":
                    # Refused only for more extents than the SSD has slots.
                    assert e["rc"] == 0 or "space" in e["err"].lower(), e
                else:
                    assert e["rc"] == 0, e
            assert run["promotions"] > 0, run

            expected = list(completed)
            assert expected == list(started)
            # The checks below read the whole device: a stream heats each
            # extent once per pass, and a copy that completes while scrub
            # runs is a replica scrub never counted. The check must not
            # change what it checks.
            d.message("promote_threshold", "1000000")
            i = copies_done(d)
            ph("copies done")
            check_all(d.path, expected, "the device after the run")
            check_all(h.path, expected, "the HDD after the run")
            i = scrub(d)
            assert i["scrub"] == "done", i
            assert i["scrub_mismatches"] == 0, i
            assert i["scrub_checked"] == i["slots_used"], i

            ph("checked and scrubbed")

            # Replicas of every hot extent that fits, read back from the SSD.
            # Heat no longer decays: a promote's heat lasts until its copy
            # (see test_promote_message_copies_every_extent_while_slots_are_free).
            d.message("heat_halflife_ms", "86400000")
            time.sleep(0.6)         # the tick queued at the old pace has run
            d.message("invalidate")
            d.message("promote", str(FIRST * EXTENT), str(31 * EXTENT))
            poll(lambda: info(d), lambda i: i["slots_used"] == 31, 120,
                 "31 hot extents resident")
            copies_done(d)
            # promote_threshold is still 1000000 (set after the run): the
            # read-back below passes over the whole device, and must not
            # promote (and evict) while the replicas it checks are read.
            d.message("reset_stats")
            check_all(d.path, expected, "the device read from the SSD")
            i = info(d)
            assert i["read_hits"] >= 31, i
            i = scrub(d)
            assert (i["scrub"], i["scrub_checked"],
                    i["scrub_mismatches"]) == ("done", 31, 0), i
            ph("replicas checked")
