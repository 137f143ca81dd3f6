#!/usr/bin/env python3
"""A closed-loop model of dm-hottier's promotion policy, to try a rule on
issue 14's workloads in seconds before it goes into the kernel. It is not
the kernel's code: it models the rules Documentation/hottier.rst states
(heat, the bar, worth, the hysteresis, the bounded heat table) on devices
with fixed service times. For the epoch rule it came within 2 s of the
kernel (the git history of Documentation/bench-baseline.md, *Replicas'
worth quartered*: phase B 61.9% and 55 s to 90% modelled, 61.1% and
57 s measured); for the rate rule its figures depend on where the move
falls in an epoch (*The rate rule*, and the epoch clock below). It does
not model everything: a rule it credits must still be measured (*A hand
for the heat table's ties*).

  policy_model.py moving|zipf|streaming [--seconds S] [--rate-grace G]
                  [--no-rate-rule] [--no-cut-bar] [--tracked X]
                  [--table-hand] [--epoch-phase F]
                  [--shift [--shift-missed M] [--shift-hold H]
                           [--shift-all-reads] [--shift-keep-heat]] [--json]

The model:
- Devices: an HDD serving one request at a time in 5 ms and an SSD
  answering in 100 us, behind 0.3 ms of CPU per request (the HDD's 5 ms
  gives the read rates the kernel measured in the bench's guest: moving
  492 and 363 reads/s in its phases against 523 and 385, zipf 1301
  against 1400; 4 ms, used before the rate rule, gave 637, 518 and
  1728, and a rule that counts reads missed depends on it); moving and zipf
  keep 16 reads in flight, streaming runs 8 listeners at depth 1. A copy
  is one more HDD service after the miss that asked for it; copies are not
  capped at max_migrations (the HDD's queue paces them).
- Heat: an extent's reads, halved every half-life (60 s) in quarter steps
  (epochs of 15 s). A resident replica's heat decays the same way.
- The bar: promote_threshold (4) reads with the SSD full, half that while
  slots are free. With the SSD full, a candidate must beat the cheapest
  replica's worth by promote_threshold.
- Worth: a replica's heat, quartered for every epoch past one grace epoch
  that it goes unread, and the rate rule: its read rate at its last read
  is taken as heat x ln2 / half-life (ln2 as the kernel's 709/1024); the
  reads that rate missed over the whole epochs unread since the last
  read's epoch, floored, past --rate-grace (2, the kernel's
  HOTTIER_RATE_GRACE), halve its worth once each.
- The cut bar: a victim the rate rule halved 4 times or more, to under
  one read, is cut; a candidate needs only the free-slot bar to take its
  slot, and while a cut replica is left (looked at 4 times a second; the
  kernel counts them every epoch) that is the bar for candidates too.
- The heat table: max_tracked = the SSD's slots (the table's default;
  --tracked X makes it X times that), 16-way sets; a full set drops its
  entry of least worth (quartered per epoch unread, no grace), of equal
  worth the one in the first way, as the kernel does (--table-hand: the
  ties in the order their ways were taken, a rule tried and not kept).

--no-rate-rule models the kernel before the rate rule (the epoch rule
alone); --no-cut-bar keeps the rate rule without the cut bar.

--shift, the kernel's working-set shift rule (hottier.rst, *Working-set
shifts*; the git history of Documentation/bench-baseline.md, *A shift
of the working set, detected* and *The shift detector counts fresh
reads*): the device's hits and reads that start somewhere new are
averaged over the half-life and over 2 s;
a read that continues a stream (its reader's extent is the reader's
previous one + 1) is one decision repeated, not evidence of where the
hot set is, and is not counted (the kernel's hottier_seq_read() tells
these apart). When the short average's hits and hit ratio have both
been under a quarter of the long one's for --shift-hold seconds (2), a
shift begins (one a drop). As the kernel runs it, a shift ticks the
epoch clock at once (heat decays a quarter step, as at any tick; the
next tick comes a whole epoch later), and lasts until that next tick:
the heat table forgets every entry; a replica last read in an epoch
before the shift's is cut (worth nothing) once the rate of its last
read says it missed --shift-missed reads (2) in the whole seconds since
the shift began; and a replica's first read since the shift began
starts its heat afresh, at that read, as the table's entries started
(--shift-keep-heat: it adds to the heat it had, the rule before). The
detector is armed 10 s into a run. --shift-all-reads feeds it every
read, continuing ones too (the rule first tried).

The epoch clock: the model's starts with the run, so moving's move falls
on an epoch's boundary (under --shift, a shift ticks it too). The
kernel's starts with the device, and a move falls anywhere in an epoch.
The rate rule counts whole epochs unread, so its figures depend on
where: --epoch-phase F starts the clock F of an epoch in. Moving at
90 s: 37, 47 and 42 s to 90% at 0, 1/3 and 2/3 (the epoch rule alone,
61 s at 1/3); the kernel measured 47 s, its phase B per 15 s between the
model's at 1/3 and at 2/3.

The workloads are issue 14's (tests/bench/workloads.py) at the bench's
sizes: moving (4k reads, zoned A then B, 256 MiB HDD, 32 MiB SSD of
64 KiB extents), zipf (zipf 1.2 over 1 GiB, 128 MiB SSD) and streaming
(the same files, popularity and listeners as the bench). Figures as the
bench defines them: steady is the last third, time to 90% uses a 5 s
window. Standard library only.
"""

import argparse
import bisect
import heapq
import itertools
import json
import math
import os
import random
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import workloads as wl  # noqa: E402  (the bench's workload definitions)

HALFLIFE_S = 60.0
EPOCH_S = HALFLIFE_S / 4
THRESHOLD = 4.0
HDD_S, SSD_S, CPU_S = 5e-3, 1e-4, 3e-4
DEPTH = 16
WAYS = 16
RATE_GRACE = 2              # HOTTIER_RATE_GRACE
RATE_CUT_SHIFT = 4          # HOTTIER_RATE_CUT_SHIFT
LN2_KERNEL = 709 / 1024     # ln2 as the kernel's rate rule takes it
EXTENT_BLOCKS = 16          # 4 KiB blocks in a 64 KiB extent
SHIFT_SHORT_S = 2.0         # the shift detector's short average
SHIFT_DROP = 4              # ... under a quarter of the long one's
SHIFT_ARM_S = 10.0          # ... armed this far into a run


def decay(heat, epochs):
    """Heat after @epochs epochs: halved every four."""
    return heat * 0.5 ** (epochs / 4)


class HeatTable:
    """The bounded heat table: sets of WAYS ways, each [extent, heat,
    epoch, last read epoch] or None. A full set gives the way worth least
    to a new extent, the first of equal worth from the first way, as the
    kernel does; with hand, the search starts at the set's hand, which
    then moves past the way taken, so that ways of equal worth go in the
    order they were taken."""

    def __init__(self, capacity, hand=False):
        self.moves = hand
        self.nsets = max(1, capacity // WAYS)
        self.ways = [[None] * WAYS for _ in range(self.nsets)]
        self.where = [dict() for _ in range(self.nsets)]  # extent -> way
        self.hand = [0] * self.nsets

    def _set(self, ext):
        return (ext * 2654435761 >> 7) % self.nsets

    def get(self, ext, epoch):
        n = self._set(ext)
        w = self.where[n].get(ext)
        return (self.ways[n][w][1], self.ways[n][w][2]) if w is not None \
            else (0.0, epoch)

    @staticmethod
    def worth(entry, epoch):
        _, heat, e, last = entry
        return decay(heat, epoch - e) * 0.25 ** max(0, epoch - last)

    def _victim(self, n, epoch, busy):
        best, least = None, None
        for i in range(WAYS):
            w = (self.hand[n] + i) % WAYS
            e = self.ways[n][w]
            if e is None:
                return w
            if e[0] in busy:
                continue
            worth = self.worth(e, epoch)
            if least is None or worth < least:
                best, least = w, worth
        return best

    def put(self, ext, heat, epoch, busy):
        """Sets ext's heat (a read now); False if its set is full of
        extents being copied."""
        n = self._set(ext)
        w = self.where[n].get(ext)
        if w is None:
            w = self._victim(n, epoch, busy)
            if w is None:
                return False
            if self.ways[n][w] is not None:
                del self.where[n][self.ways[n][w][0]]
            self.where[n][ext] = w
            if self.moves:
                self.hand[n] = (w + 1) % WAYS
        self.ways[n][w] = [ext, heat, epoch, epoch]
        return True

    def forget(self):
        """Every entry, at a shift."""
        self.ways = [[None] * WAYS for _ in range(self.nsets)]
        self.where = [dict() for _ in range(self.nsets)]

    def pop(self, ext, epoch):
        n = self._set(ext)
        w = self.where[n].pop(ext, None)
        if w is None:
            return (0.0, epoch)
        e, self.ways[n][w] = self.ways[n][w], None
        return (e[1], e[2])


class Policy:
    """Replicas (extent -> [heat, epoch, last read epoch, last read time,
    heat at the last read]), the copies pending, the heat table, and the
    epoch clock."""

    def __init__(self, slots, rate_grace=RATE_GRACE, cut_bar=True,
                 tracked=1.0, table_hand=False, epoch_phase=0.0,
                 shift=False, shift_missed=2.0, shift_hold=2.0,
                 shift_all_reads=False, shift_keep_heat=False):
        self.slots, self.rate_grace, self.cut_bar = slots, rate_grace, cut_bar
        self.shift, self.shift_missed = shift, shift_missed
        self.shift_hold, self.shift_all_reads = shift_hold, shift_all_reads
        self.shift_keep_heat = shift_keep_heat
        # The detector: hits and reads averaged over the half-life and
        # over SHIFT_SHORT_S; when the low began; when the shift did, and
        # the epoch it started.
        self.avg = [0.0, 0.0, 0.0, 0.0]
        self.avg_t = 0.0
        self.low_since = self.shift_t0 = self.shift_epoch = None
        self.shifts = 0
        # The epoch clock: epoch _e0 began at _t0, _f0 of an epoch in;
        # a tick every EPOCH_S from there, until a shift restarts it.
        self.epoch_phase = epoch_phase
        self._e0, self._t0, self._f0 = 0, 0.0, epoch_phase
        self.res, self.pending = {}, set()
        self.table = HeatTable(max(WAYS, int(slots * tracked)), table_hand)
        self.now = 0.0
        self.evictions = 0
        self._cut_at, self._cut = -1.0, False

    def full(self):
        return len(self.res) + len(self.pending) >= self.slots

    def clock(self):
        """The epoch at now: the clock ticks every EPOCH_S from
        --epoch-phase's start, and a shift ticks it at once (the next
        tick a whole epoch later). A shift ends once the epoch moves past
        the shift's."""
        epoch = self._e0 + int((self.now - self._t0) / EPOCH_S + self._f0)
        if self.shift_t0 is not None and epoch > self.shift_epoch:
            self.shift_t0 = None
        return epoch

    def rate_shift(self, r, epoch):
        """The rate rule's halvings, as the kernel counts them: the reads
        missed over the whole epochs unread since the last read's."""
        if self.rate_grace is None:
            return 0
        whole = max(0, epoch - r[2] - 1)
        missed = math.floor(whole * EPOCH_S * r[4] * LN2_KERNEL /
                            HALFLIFE_S)
        return max(0, missed - int(self.rate_grace))

    def rate_factor(self, r, epoch):
        return 0.5 ** self.rate_shift(r, epoch)

    def shift_cut(self, r):
        """In a shift: last read in an epoch before the shift's (the
        kernel keeps only the last read's epoch), and its rate at its
        last read says it missed shift_missed reads in the whole seconds
        since the shift began (the kernel looks once a second)."""
        if self.shift_t0 is None or r[2] >= self.shift_epoch:
            return False
        return (math.floor(self.now - self.shift_t0) * r[4] * LN2_KERNEL /
                HALFLIFE_S >= self.shift_missed)

    def note(self, hit):
        """The shift detector, at each read it counts (under --shift,
        the reads that do not continue a stream)."""
        dt, self.avg_t = self.now - self.avg_t, self.now
        fl = math.exp(-dt / HALFLIFE_S)
        fs = math.exp(-dt / SHIFT_SHORT_S)
        a = self.avg
        a[0], a[1] = a[0] * fl + hit, a[1] * fl + 1
        a[2], a[3] = a[2] * fs + hit, a[3] * fs + 1
        if not self.shift or self.now < SHIFT_ARM_S:
            return
        epoch = self.clock()            # and ends a shift past its epoch
        span = HALFLIFE_S * (1 - math.exp(-self.now / HALFLIFE_S))
        hl, rl = a[0] / span, a[1] / span
        hs, rs = a[2] / SHIFT_SHORT_S, a[3] / SHIFT_SHORT_S
        low = (hl > 0.2 * rl and hs * SHIFT_DROP < hl and
               hs * SHIFT_DROP * rl < hl * rs)
        if not low:
            self.low_since = None
            return
        if self.low_since is None:
            self.low_since = self.now
        if (self.shift_t0 is None and
                self.now - self.low_since >= self.shift_hold):
            # A new epoch at once: heat decays a quarter step, as at any
            # tick, and the next tick comes EPOCH_S from now.
            self.shift_epoch = epoch + 1
            self._e0, self._t0, self._f0 = self.shift_epoch, self.now, 0.0
            self.shift_t0 = self.now
            self.shifts += 1
            self.table.forget()
            # One shift a drop: the next needs the hits back first.
            self.low_since = math.inf

    def worth(self, r, epoch):
        if self.shift_cut(r):
            return 0.0
        w = decay(r[0], epoch - r[1]) * 0.25 ** max(0, epoch - r[2] - 1)
        return w * self.rate_factor(r, epoch)

    def cut(self, r, epoch):
        """A victim the rate rule cut below one read."""
        return (self.worth(r, epoch) < 1.0 and
                self.rate_shift(r, epoch) >= RATE_CUT_SHIFT) or \
            self.shift_cut(r)

    def any_cut(self, epoch):
        if not self.cut_bar:
            return False
        if self.now - self._cut_at > 0.25:      # looked at 4 times a second
            self._cut_at = self.now
            self._cut = any(self.cut(r, epoch) for r in self.res.values())
        return self._cut

    def read(self, ext, epoch, cont=False):
        """True for a hit, ext for a candidate to offer, else False.
        cont: the read continues its reader's stream; under --shift the
        detector does not count it (unless shift_all_reads)."""
        r = self.res.get(ext)
        if not cont or self.shift_all_reads:
            shifts = self.shifts
            self.note(r is not None)
            if self.shifts != shifts:
                epoch = self.clock()    # a shift began: its new epoch
        if r is not None:
            if (self.shift_t0 is not None and r[2] < self.shift_epoch and
                    not self.shift_keep_heat):
                r[0] = 1.0              # its first read since the shift
            else:
                r[0] = decay(r[0], epoch - r[1]) + 1
            r[1] = r[2] = epoch
            r[3], r[4] = self.now, r[0]
            return True
        h, e = self.table.get(ext, epoch)
        h = decay(h, epoch - e) + 1
        if not self.table.put(ext, h, epoch, self.pending):
            return False
        bar = THRESHOLD
        if not self.full() or self.any_cut(epoch):
            bar = max(THRESHOLD / 2, 1)
        return ext if h >= bar and ext not in self.pending else False

    def decide(self, ext, epoch):
        """Copy ext? With the SSD full, evicts the victim it beats."""
        if not self.full():
            return True
        h, e = self.table.get(ext, epoch)
        h = decay(h, epoch - e)
        v = min(self.res, key=lambda x: self.worth(self.res[x], epoch))
        r = self.res[v]
        vw = self.worth(r, epoch)
        cut = self.cut_bar and self.cut(r, epoch)
        if not (h >= vw + THRESHOLD or
                (cut and h >= max(THRESHOLD / 2, 1))):
            return False
        del self.res[v]
        self.evictions += 1
        self.table.put(v, vw, epoch, self.pending)
        self._cut_at = -1.0
        return True

    def install(self, ext, epoch):
        self.pending.discard(ext)
        h, e = self.table.pop(ext, epoch)
        h = decay(h, epoch - e)
        self.res[ext] = [h, epoch, epoch, self.now, h]


def run_closed(policy, sources, secs):
    """sources: per reader, next() -> extent; each reader keeps one read
    in flight. Returns per-second hits and reads."""
    hits, tot = [0] * (secs + 1), [0] * (secs + 1)
    ev = [(0.0, i, ("read", i)) for i in range(len(sources))]
    heapq.heapify(ev)
    hdd_free = cpu_free = 0.0
    seq = len(sources)
    last = [None] * len(sources)        # each reader's previous extent
    while ev:
        t, _, (what, arg) = heapq.heappop(ev)
        if t >= secs:
            break
        policy.now = t
        epoch = policy.clock()
        if what == "install":
            policy.install(arg, epoch)
            continue
        ext = sources[arg]()
        cont = last[arg] is not None and ext == last[arg] + 1
        last[arg] = ext
        r = policy.read(ext, epoch, cont)
        epoch = policy.clock()          # a shift in read() ticked it
        cpu_free = max(t, cpu_free) + CPU_S
        tot[int(t)] += 1
        if r is True:
            hits[int(t)] += 1
            done = cpu_free + SSD_S
        else:
            hdd_free = max(cpu_free, hdd_free) + HDD_S
            done = hdd_free
            if r is not False and policy.decide(r, epoch):
                policy.pending.add(r)
                hdd_free += HDD_S
                seq += 1
                heapq.heappush(ev, (hdd_free, seq, ("install", r)))
        seq += 1
        heapq.heappush(ev, (done, seq, ("read", arg)))
    return hits, tot


def ratio(hits, tot, a, b):
    n = sum(tot[a:b])
    return sum(hits[a:b]) / n if n else 0.0


def zoned(spec, nblocks, rng):
    """A draw of fio's random_distribution=zoned:<pct>/<size pct>:...
    over nblocks."""
    zones = [tuple(int(x) for x in z.split("/"))
             for z in spec.split(":", 1)[1].split(":")]
    cum, start, acc = [], 0, 0.0
    for pct, size_pct in zones:
        n = nblocks * size_pct // 100
        acc += pct / 100
        cum.append((acc, start, n))
        start += n

    def draw():
        u = rng.random()
        for c, st, n in cum:
            if u <= c:
                return st + rng.randrange(n)
        return cum[-1][1] + rng.randrange(cum[-1][2])
    return draw


def moving(S, **rules):
    rng = random.Random(1)
    nb = 256 << 8                               # 256 MiB of 4 KiB blocks
    a = zoned(wl.ZONED_A, nb, rng)
    b = zoned(wl.ZONED_B, nb, rng)
    p = Policy(512, **rules)

    def src():
        return (a() if p.now < S else b()) // EXTENT_BLOCKS
    hits, tot = run_closed(p, [src] * DEPTH, 2 * S)
    steady_b = ratio(hits, tot, S + 2 * S // 3, 2 * S)
    t90 = next((i - S for i in range(S + 1, 2 * S)
                if ratio(hits, tot, max(S, i - 5), i) >= 0.9 * steady_b),
               None)
    return {"steady_a": ratio(hits, tot, 2 * S // 3, S),
            "steady_b": steady_b, "time_to_90_b_s": t90,
            "b_per_15s": [round(ratio(hits, tot, S + j, S + j + 15), 3)
                          for j in range(0, S, 15)],
            "evictions": p.evictions, "shifts": p.shifts}


def zipf(S, **rules):
    rng = random.Random(1)
    nb = 1024 << 8                              # 1 GiB of 4 KiB blocks
    cw = list(itertools.accumulate(1.0 / k ** 1.2 for k in range(1, nb + 1)))
    perm = list(range(nb))
    rng.shuffle(perm)
    p = Policy(2048, **rules)

    def src():
        return perm[bisect.bisect_left(cw, rng.random() * cw[-1])] \
            // EXTENT_BLOCKS
    hits, tot = run_closed(p, [src] * DEPTH, S)
    return {"steady": ratio(hits, tot, 2 * S // 3, S),
            "reads_per_s": round(sum(tot[:S]) / S), "evictions": p.evictions,
            "shifts": p.shifts}


def streaming(S, **rules):
    files = wl.stream_files(256 << 20)
    weights = wl.zipf_weights(len(files), wl.STREAM_ZIPF_S)
    per = max(64 << 20, 2 * S * (64 << 20) // wl.STREAM_LISTENERS)
    unit = 64 << 10
    exts = [[o // unit + j for o, n in
             wl.listener_reads(files, weights, i, per)
             for j in range((n + unit - 1) // unit)]
            for i in range(wl.STREAM_LISTENERS)]
    pos = [0] * len(exts)
    p = Policy(512, **rules)

    def reader(i):
        def src():
            pos[i] += 1
            return exts[i][pos[i] - 1]
        return src
    secs = 2 * S
    hits, tot = run_closed(p, [reader(i) for i in range(len(exts))], secs)
    read = {}
    for i, x in enumerate(exts):
        for e in x[:pos[i]]:
            read[(e * unit, unit)] = read.get((e * unit, unit), 0) + 1
    oracle = wl.bl.file_oracle(read, files, 32 << 20)["oracle"]
    steady = ratio(hits, tot, 2 * secs // 3, secs)
    return {"steady_ssd_share": steady, "files_oracle": oracle,
            "steady_over_oracle": steady / oracle if oracle else None,
            "evictions": p.evictions, "shifts": p.shifts}


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("workload", choices=("moving", "zipf", "streaming"))
    ap.add_argument("--seconds", type=int, help="S (moving, streaming: "
                    "30; zipf: 150, its whole run)")
    ap.add_argument("--rate-grace", type=int, default=RATE_GRACE,
                    help=f"the rate rule's grace, in reads (default "
                    f"{RATE_GRACE}, the kernel's)")
    ap.add_argument("--no-rate-rule", action="store_true",
                    help="the epoch rule alone (the kernel before the "
                    "rate rule)")
    ap.add_argument("--no-cut-bar", action="store_true",
                    help="a cut victim needs the whole threshold")
    ap.add_argument("--tracked", type=float, default=1.0,
                    help="heat-table entries per SSD slot (default 1)")
    ap.add_argument("--table-hand", action="store_true",
                    help="heat-table ties go in the order taken")
    ap.add_argument("--epoch-phase", type=float, default=0.0,
                    help="the epoch clock starts this fraction of an epoch "
                    "in (0 to 1; default 0: moving's move on an epoch's "
                    "boundary)")
    ap.add_argument("--shift", action="store_true",
                    help="the shift rule (see above; the model's only)")
    ap.add_argument("--shift-missed", type=float, default=2.0,
                    help="reads missed since a shift began that cut a "
                    "replica (default 2)")
    ap.add_argument("--shift-hold", type=float, default=2.0,
                    help="seconds the drop must last (default 2)")
    ap.add_argument("--shift-all-reads", action="store_true",
                    help="with --shift: the detector counts every read, "
                    "those that continue a stream too (the rule first "
                    "tried; by default it counts only reads that start "
                    "somewhere new)")
    ap.add_argument("--shift-keep-heat", action="store_true",
                    help="with --shift: a replica's first read since a "
                    "shift adds to the heat it had (the rule before; by "
                    "default its heat starts afresh at that read)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    S = a.seconds or (150 if a.workload == "zipf" else 30)
    if not 0 <= a.epoch_phase < 1:
        ap.error("--epoch-phase: expected 0 to 1 (1 excluded)")
    if a.shift_missed <= 0 or a.shift_hold < 0:
        ap.error("--shift-missed: expected more than 0; --shift-hold: "
                 "0 or more")
    if a.shift_all_reads and not a.shift:
        ap.error("--shift-all-reads: only with --shift")
    if a.shift_keep_heat and not a.shift:
        ap.error("--shift-keep-heat: only with --shift")
    a.rate_grace = None if a.no_rate_rule else a.rate_grace
    a.cut_bar = not a.no_rate_rule and not a.no_cut_bar
    fig = {"moving": moving, "zipf": zipf, "streaming": streaming}[
        a.workload](S, rate_grace=a.rate_grace, cut_bar=a.cut_bar,
                    tracked=a.tracked, table_hand=a.table_hand,
                    epoch_phase=a.epoch_phase, shift=a.shift,
                    shift_missed=a.shift_missed, shift_hold=a.shift_hold,
                    shift_all_reads=a.shift_all_reads,
                    shift_keep_heat=a.shift_keep_heat)
    out = {"workload": a.workload, "seconds": S,
           "rules": {"rate_grace": a.rate_grace, "cut_bar": a.cut_bar,
                     "tracked": a.tracked, "table_hand": a.table_hand,
                     "epoch_phase": a.epoch_phase, "shift": a.shift,
                     "shift_missed": a.shift_missed,
                     "shift_hold": a.shift_hold,
                     "shift_all_reads": a.shift_all_reads,
                     "shift_keep_heat": a.shift_keep_heat},
           "figures": fig}
    if a.json:
        print(json.dumps(out, indent=1))
    else:
        print(f"{a.workload} S={S} rate_grace={a.rate_grace} "
              f"cut_bar={a.cut_bar} tracked={a.tracked} "
              f"table_hand={a.table_hand} epoch_phase={a.epoch_phase} "
              f"shift={a.shift}"
              f"{' (all reads)' if a.shift_all_reads else ''}"
              f"{' (heat kept)' if a.shift_keep_heat else ''}: " +
              ", ".join(f"{k} {round(v, 3) if isinstance(v, float) else v}"
                        for k, v in fig.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
