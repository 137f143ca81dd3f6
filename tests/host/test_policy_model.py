"""The policy model (tests/bench/policy_model.py): its rules on a few
replicas, and on the moving workload the effect the closing notes cite."""

import math
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import policy_model as pm  # noqa: E402

# A heat whose rate, heat x ln2 / half-life, is one read a second.
ONE_A_SECOND = pm.HALFLIFE_S / math.log(2)


def full_ssd(rate_grace=None, cut_bar=False):
    """Two slots: extent 1 read at one read a second, extent 2 with a heat
    of 40 reads, both last read in epoch 0."""
    p = pm.Policy(2, rate_grace=rate_grace, cut_bar=cut_bar)
    p.res[1] = [ONE_A_SECOND, 0, 0, 0.0, ONE_A_SECOND]
    p.res[2] = [40.0, 0, 0, 0.0, 40.0]
    return p


def test_the_kernels_rules_are_the_default():
    p = pm.Policy(2)
    assert p.rate_grace == pm.RATE_GRACE == 2
    assert p.cut_bar is True


def test_worth_follows_the_epoch_rule_without_the_rate_rule():
    p = full_ssd()
    r = p.res[2]
    p.now = 100.0
    # Read in epoch 0: full worth in epochs 0 and 1, then quartered.
    assert p.worth(r, 1) == pm.decay(40.0, 1)
    assert p.worth(r, 3) == pm.decay(40.0, 3) * 0.25 ** 2


def test_rate_rule_halves_worth_per_read_missed_past_the_grace():
    # At a grace of 6 (the one first modelled), for round figures.
    p = full_ssd(rate_grace=6)
    r = p.res[1]
    # Epoch 1: no whole epoch unread since the last read's, no cut.
    assert p.rate_shift(r, 1) == 0
    # Epoch 2: one whole epoch, 15 reads at ln2's exact value, 14.98 at
    # the kernel's (709 / 1024): 14 missed, 8 past the grace.
    assert p.rate_shift(r, 2) == 8
    assert abs(p.worth(r, 2) - pm.decay(ONE_A_SECOND, 2) / 4 / 2 ** 8) \
        < 1e-9
    assert p.cut(r, 2)
    # Extent 2 reads 6.9 an epoch: 6 missed at epoch 2 (within the
    # grace), 13 at epoch 3 (7 past it), as the kernel counts them.
    assert p.rate_shift(p.res[2], 2) == 0
    assert not p.cut(p.res[2], 2)
    assert p.rate_shift(p.res[2], 3) == 7
    assert p.cut(p.res[2], 3)


def test_cut_bar_takes_a_candidate_at_half_the_threshold():
    for cut_bar, copied in ((False, False), (True, True)):
        p = full_ssd(rate_grace=6, cut_bar=cut_bar)
        p.now = 30.0                # epoch 2: extent 1 is cut
        assert p.read(9, 2) is False        # one read: under any bar
        assert p.read(9, 2) == (9 if cut_bar else False)
        assert p.decide(9, 2) is copied
        assert (1 in p.res) is not copied
        assert 2 in p.res


def test_moving_adapts_sooner_with_the_rate_rule():
    base = pm.moving(90, rate_grace=None, cut_bar=False)
    rate = pm.moving(90)
    # Phase A is the same; phase B climbs sooner, to no lower a ratio.
    assert abs(base["steady_a"] - rate["steady_a"]) < 0.01
    assert rate["steady_b"] >= base["steady_b"] - 0.01
    assert rate["time_to_90_b_s"] < base["time_to_90_b_s"] - 10
    assert rate["b_per_15s"][1] > 2 * base["b_per_15s"][1]


def test_tracked_sizes_the_heat_table_in_slots():
    assert pm.Policy(512).table.nsets == 512 // pm.WAYS
    assert pm.Policy(512, tracked=4).table.nsets == 4 * 512 // pm.WAYS
    # Never below one set.
    assert pm.Policy(4, tracked=0.5).table.nsets == 1
    epoch_rule = {"rate_grace": None, "cut_bar": False}
    base = pm.moving(90, **epoch_rule)
    big = pm.moving(90, tracked=2, **epoch_rule)
    # A table twice the SSD's slots keeps the new hot set's heat through
    # the move: phase B climbs sooner (under the epoch rule alone, where
    # bench-baseline measured it).
    assert big["time_to_90_b_s"] < base["time_to_90_b_s"]
    assert big["b_per_15s"][2] > base["b_per_15s"][2] + 0.05


def test_heat_table_ties_take_the_first_way_or_go_in_order_with_a_hand():
    # One set of 16 extents read once. As the kernel does, a new one takes
    # the first way of the least worth: the newest goes first.
    t = pm.HeatTable(pm.WAYS)
    for x in range(pm.WAYS):
        assert t.put(x, 1.0, 0, set())
    assert t.put(100, 1.0, 0, set()) and t.get(0, 0) == (0.0, 0)
    assert t.put(101, 1.0, 0, set()) and t.get(100, 0) == (0.0, 0)
    assert all(t.get(y, 0)[0] == 1.0 for y in range(1, pm.WAYS))
    # With a hand, each new one pushes out the oldest, never a new one.
    t = pm.HeatTable(pm.WAYS, hand=True)
    for x in range(pm.WAYS):
        assert t.put(x, 1.0, 0, set())
    for x in range(pm.WAYS):
        assert t.put(100 + x, 1.0, 0, set())
        assert t.get(x, 0) == (0.0, 0)
        assert all(t.get(y, 0)[0] == 1.0 for y in range(x + 1, pm.WAYS))
        assert all(t.get(y, 0)[0] == 1.0 for y in range(100, 101 + x))
    # Worth first, whatever the hand: one read an epoch ago goes.
    for x in range(100, 100 + pm.WAYS):
        if x != 101:
            t.put(x, 2.0, 1, set())
    assert t.put(200, 1.0, 1, set())
    assert t.get(101, 1) == (0.0, 1) and t.get(200, 1)[0] == 1.0
    # A set whose ways are all busy takes nothing.
    assert not t.put(300, 1.0, 1, set(range(100, 201)))


def test_epoch_phase_starts_the_epoch_clock_into_an_epoch():
    seen = {}

    class Recorder(pm.Policy):
        def read(self, ext, epoch, cont=False):
            seen.setdefault(epoch, self.now)
            return super().read(ext, epoch, cont)

    for phase, first_tick in ((0.0, pm.EPOCH_S), (0.5, pm.EPOCH_S / 2)):
        seen.clear()
        p = Recorder(4, epoch_phase=phase)
        pm.run_closed(p, [lambda: 1], 20)
        assert min(seen) == 0
        # The first read of epoch 1 comes at its boundary, within a read.
        assert abs(seen[1] - first_tick) < 0.01


def reads(p, until, step, hit):
    """Reads every step seconds until until, each a hit or a miss."""
    while p.now < until:
        p.now += step
        p.note(hit(p.now))


def test_shift_detector_fires_after_a_held_drop_and_lasts_an_epoch():
    p = pm.Policy(2, shift=True, shift_hold=2.0)
    p.table.put(7, 5.0, 0, set())
    # 60 s at 100 reads a second, 60% hits: no shift.
    reads(p, 60.0, 0.01, lambda t: int(t * 100) % 5 < 3)
    assert p.shifts == 0 and p.shift_t0 is None
    # Then every read misses: the short average falls under a quarter of
    # the long one's within a second or so, and 2 s after that it fires.
    reads(p, 61.0, 0.01, lambda t: False)
    assert p.shift_t0 is None
    reads(p, 65.0, 0.01, lambda t: False)
    assert p.shifts == 1 and 62.0 < p.shift_t0 < 65.0
    # The heat table forgot its entries.
    assert p.table.get(7, 4) == (0.0, 4)
    # The shift is over at the next tick, and no second one begins while
    # the drop lasts.
    t0 = p.shift_t0
    reads(p, t0 + 3 * pm.EPOCH_S, 0.01, lambda t: False)
    assert p.shift_t0 is None and p.shifts == 1
    # Hits come back, then go again: a second shift.
    reads(p, p.now + 30, 0.01, lambda t: int(t * 100) % 5 < 3)
    assert p.shifts == 1
    reads(p, p.now + 10, 0.01, lambda t: False)
    assert p.shifts == 2


def test_shift_detector_ignores_a_drop_shorter_than_its_hold():
    p = pm.Policy(2, shift=True, shift_hold=2.0)
    reads(p, 60.0, 0.01, lambda t: int(t * 100) % 5 < 3)
    # A second of misses, then hits again: the short average is low for
    # less than 2 s.
    reads(p, 61.0, 0.01, lambda t: False)
    reads(p, 70.0, 0.01, lambda t: True)
    assert p.shifts == 0
    # Without --shift the detector only averages.
    q = pm.Policy(2)
    reads(q, 60.0, 0.01, lambda t: True)
    reads(q, 70.0, 0.01, lambda t: False)
    assert q.shifts == 0 and q.shift_t0 is None


def in_a_shift(p, t0=40.0):
    """p in a shift that began at t0, in epoch 2, so the shift's epoch is
    3 (as note() starts one)."""
    p.shift, p.shift_missed = True, 2.0
    p.now = p.shift_t0 = t0
    p.shift_epoch = 3
    p._e0, p._t0, p._f0 = 3, t0, 0.0


def test_a_shift_cuts_a_replica_unread_since_once_it_missed_the_reads():
    p = full_ssd(rate_grace=2, cut_bar=True)
    in_a_shift(p)
    r1, r2 = p.res[1], p.res[2]
    # Extent 1 reads once a second (0.9989 at the kernel's ln2), counted
    # in whole seconds since the shift began, as the kernel looks once a
    # second: 1.998 missed at 2 s (2.5 s), not yet 2; 2.997 at 3 s.
    p.now = 41.5
    assert not p.shift_cut(r1) and p.worth(r1, 3) > 0
    p.now = 42.5
    assert not p.shift_cut(r1) and p.worth(r1, 3) > 0
    p.now = 43.0
    assert p.shift_cut(r1) and p.cut(r1, 3) and p.worth(r1, 3) == 0.0
    # Extent 2 (0.46 a second) misses 2 in 4.3 s: cut at 5 whole seconds.
    assert not p.shift_cut(r2)
    p.now = 44.9
    assert not p.shift_cut(r2)
    p.now = 45.0
    assert p.shift_cut(r2)
    # A replica read since the shift began is not cut.
    assert p.read(1, p.clock()) is True and p.res[1][2] == 3
    assert not p.shift_cut(r1)
    # Nor anything once the shift is over.
    p.shift_t0 = None
    assert not p.shift_cut(r2)


def test_a_shift_cut_tests_the_last_reads_epoch_against_the_shifts():
    # The kernel keeps only a replica's last read's epoch, so the cut
    # tests that, not the time of the last read.
    p = full_ssd(rate_grace=2, cut_bar=True)
    in_a_shift(p)
    p.now = 45.0
    r1 = p.res[1]
    # Last read in epoch 2, the one before the shift's: cut, even with a
    # last read time past the shift's start.
    r1[2], r1[3] = 2, 44.0
    assert p.shift_cut(r1)
    # Last read in the shift's epoch: not cut, even with a last read time
    # before the shift's start.
    r1[2], r1[3] = 3, 0.0
    assert not p.shift_cut(r1)


def test_a_replicas_first_read_in_a_shift_starts_its_heat_afresh():
    # As the heat table's entries started at the shift: the read is the
    # replica's heat, and the next reads add to it. --shift-keep-heat:
    # the first read adds to the heat it had, as a read outside a shift.
    for keep in (False, True):
        p = full_ssd(rate_grace=2, cut_bar=True)
        in_a_shift(p)
        p.shift_keep_heat = keep
        p.now = 41.0
        assert p.read(2, p.clock()) is True
        first = pm.decay(40.0, 3) + 1 if keep else 1.0
        assert p.res[2][0] == first and p.res[2][4] == first
        assert p.res[2][2] == 3
        assert p.read(2, p.clock()) is True
        assert p.res[2][0] == first + 1
    # Outside a shift, a read adds to the heat it had.
    p = full_ssd(rate_grace=2, cut_bar=True)
    p.now = 1.0
    assert p.read(2, 0) is True and p.res[2][0] == 41.0


def fresh_or_continuing(cont, all_reads=False):
    """60 s of hits on a replica, then 10 s of misses, each on the
    extent after the one before (a stream), marked cont or not."""
    p = pm.Policy(2, shift=True, shift_all_reads=all_reads)
    p.res[1] = [10.0, 0, 0, 0.0, 10.0]
    while p.now < 60.0:
        p.now += 0.01
        assert p.read(1, p.clock()) is True
    ext = 100
    while p.now < 70.0:
        p.now += 0.01
        ext += 1
        assert p.read(ext, p.clock(), cont=cont) is not True
    return p


def test_a_read_that_continues_a_stream_does_not_feed_the_detector():
    # Fresh misses fire a shift; the same misses continuing a stream do
    # not, as the detector never sees them; with shift_all_reads it does.
    fresh = fresh_or_continuing(cont=False)
    assert fresh.shifts == 1
    cont = fresh_or_continuing(cont=True)
    assert cont.shifts == 0 and cont.shift_t0 is None
    assert cont.avg_t < 60.0 + 0.02      # its last read counted: a hit
    assert fresh_or_continuing(cont=True, all_reads=True).shifts == 1


def test_run_closed_marks_a_read_of_the_readers_next_extent_continuing():
    conts, who = [], []

    class Recorder(pm.Policy):
        def read(self, ext, epoch, cont=False):
            conts.append((ext, cont))
            return super().read(ext, epoch, cont)

    # Reader 0 reads 10, 11, 12, 20, 21; reader 1 reads 500, 11, 12: its
    # 11 follows its own 500, not reader 0's 10. Then both jump about.
    seqs = [iter([10, 11, 12, 20, 21] + list(range(1000, 10 ** 6, 7))),
            iter([500, 11, 12] + list(range(2000, 10 ** 6, 7)))]

    def src(i):
        def f():
            who.append(i)
            return next(seqs[i])
        return f
    pm.run_closed(Recorder(4), [src(0), src(1)], 1)
    mine = [[c for w, c in zip(who, conts) if w == i] for i in (0, 1)]
    assert [c for _, c in mine[0][:6]] == [False, True, True, False, True,
                                           False]
    assert [c for _, c in mine[1][:4]] == [False, False, True, False]
    assert not any(c for _, c in mine[0][6:] + mine[1][4:])


def test_a_shift_starts_a_new_epoch_at_once_and_ends_at_the_next_tick():
    p = pm.Policy(2, shift=True, shift_hold=2.0, epoch_phase=0.5)
    p.res[1] = [8.0, 4, 4, 59.0, 8.0]
    # The clock starts half an epoch in: epoch 1 at 7.5 s, 2 at 22.5 s,
    # 5 at 67.5 s.
    reads(p, 60.0, 0.01, lambda t: int(t * 100) % 5 < 3)
    assert p.clock() == 4 and p.shifts == 0
    while not p.shifts:
        before = p.clock()
        p.now += 0.01
        p.note(False)
    t0 = p.shift_t0
    # The shift ticks the clock at once: a new epoch, the shift's.
    assert t0 == p.now and 62.0 < t0 < 65.0 and before == 4
    assert p.shift_epoch == 5 and p.clock() == 5
    # Heat decays a quarter step, as at any tick (within the grace epoch,
    # nothing quartered; no second since the shift began, nothing cut).
    assert abs(p.worth(p.res[1], p.clock()) - 8.0 * 0.5 ** 0.25) < 1e-9
    # The old clock's next tick (67.5 s) is gone: the next comes a whole
    # epoch after the shift's, and ends it.
    p.now = 67.6
    assert p.clock() == 5 and p.shift_t0 is not None
    p.now = t0 + pm.EPOCH_S - 0.01
    assert p.clock() == 5 and p.shift_t0 is not None
    p.now = t0 + pm.EPOCH_S
    assert p.clock() == 6 and p.shift_t0 is None
    # Then every EPOCH_S from there (the old clock: 6 until 97.5 s).
    p.now = t0 + 2 * pm.EPOCH_S
    assert p.clock() == 7


def test_moving_adapts_sooner_with_a_shift_and_streaming_fires_none():
    # The effects bench-baseline cites (*A shift of the working set,
    # detected*, *The shift detector counts fresh reads*), at 30 s a phase
    # with the move at 1/3 of an epoch: phase B's steady ratio, 12.4%
    # without, 41.8% with (39.2% with --shift-keep-heat).
    base = pm.moving(30, epoch_phase=0.33)
    shift = pm.moving(30, epoch_phase=0.33, shift=True)
    assert shift["shifts"] == 1 and base["shifts"] == 0
    assert shift["steady_b"] > 2 * base["steady_b"]
    assert shift["time_to_90_b_s"] < base["time_to_90_b_s"]
    assert abs(shift["steady_a"] - base["steady_a"]) < 0.01
    # Counting every read, streaming fires it too, and at 2 missed reads
    # loses a fifth of its share.
    sbase = pm.streaming(60)
    s2 = pm.streaming(60, shift=True, shift_all_reads=True)
    assert s2["shifts"] >= 1 and sbase["shifts"] == 0
    assert s2["steady_over_oracle"] < 0.85 * sbase["steady_over_oracle"]
    # Counting fresh reads only, it fires none, and its share is the
    # kernel's.
    fresh = pm.streaming(60, shift=True)
    assert fresh["shifts"] == 0
    assert fresh["steady_over_oracle"] == sbase["steady_over_oracle"]
