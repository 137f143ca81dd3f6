"""trace: blktrace on a hottier device and both members for a while, then
what each did, from blkparse's text.

Recording: one blktrace traces the three devices and writes its records
to a pipe ("-o -"), where they arrive within 50 ms (blktrace's file
output holds them until a 512 KiB sub-buffer fills, so it cannot tell
when tracing began). The records are split here into the per-device,
per-CPU files blktrace -D would write (<kernel name>.blktrace.<cpu>), which
blkparse, btt and iowatcher read. The window starts when every device's
first record (the time note the kernel writes when its trace starts) has
come, and lasts SECONDS.

Counting (pure functions, from blkparse's default text): a bio counts
when every sector of it has completed: its queue event (Q) is paired with
the completion events (C) that cover its range, so requests merged from
several bios and bios split into several requests are both counted as
bios, with Q2C measured to the last completion. A member's bio is the
device's when a remap event (A) from the hottier device carried it there
(device-mapper traces one for every bio it sends a member); anything else
a member does is the target's own I/O: copies (kcopyd reads of the HDD,
writes of the SSD), the SSD halves of write-through writes, the on-SSD
map, scrub reads.
"""

import math
import os
import re
import select
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time

from . import HottierError
from .report import columns, percent
from .system import command

DEBUGFS = "/sys/kernel/debug"
START_TIMEOUT = 30.0            # seconds for blktrace to start every trace
STOP_TIMEOUT = 60.0             # seconds for it to drain and exit
SECONDS_MAX = 86400

# struct blk_io_trace (include/uapi/linux/blktrace_api.h), native order:
# magic, sequence, time, sector, bytes, action, pid, device, cpu, error,
# pdu_len; pdu_len bytes of payload follow.
RECORD = struct.Struct("=IIQQIIIIIHH")
MAGIC = 0x65617400

# Status counters shown beside the trace, as deltas over it.
COUNTERS = ("reads", "read_misses", "replica_reads_ssd", "replica_reads_hdd",
            "promotions", "copies_discarded")


def kernel_devnum(devnum):
    """ "major:minor" as the kernel's dev_t in a trace record."""
    major, minor = (int(x) for x in devnum.split(":"))
    return (major << 20) | minor


class TornTrace(HottierError):
    """A record of zeros in blktrace's piped stream. The kernel reserves a
    record's room in the relay buffer before it writes the record, and a
    read of the buffer in between (blktrace reads the sub-buffer being
    filled when it pipes) returns the room unwritten: that record is
    lost, and the trace with it."""


class Splitter:
    """Splits blktrace's piped stream into <name>.blktrace.<cpu> files in
    outdir; names maps each traced device's "major:minor" to its name.
    seen holds the devices a record has come from."""

    def __init__(self, outdir, names, ncpus=None):
        self.outdir = outdir
        self.names = {kernel_devnum(d): n for d, n in names.items()}
        self.seen = set()
        self.files = {}
        self.pending = b""
        self.records = 0
        ncpus = ncpus or os.cpu_count() or 1
        for name in names.values():
            for old in os.listdir(outdir):
                if old.startswith(name + ".blktrace."):
                    os.unlink(os.path.join(outdir, old))
            # blkparse reads <name>.blktrace.0, .1, ... up to the first
            # one missing: every CPU gets a file, empty or not.
            for cpu in range(ncpus):
                self.file(name, cpu)

    def file(self, name, cpu):
        key = (name, cpu)
        if key not in self.files:
            self.files[key] = open(os.path.join(
                self.outdir, f"{name}.blktrace.{cpu}"), "wb")
        return self.files[key]

    def feed(self, data):
        buf = self.pending + data
        at = 0
        while len(buf) - at >= RECORD.size:
            (magic, _, _, _, _, _, _, device, cpu, _,
             pdu_len) = RECORD.unpack_from(buf, at)
            if magic == 0:
                raise TornTrace(f"blktrace's output has a torn record "
                                f"(zeros at record {self.records}): "
                                "blktrace read it before the kernel had "
                                "written it; trace again")
            if magic & 0xffffff00 != MAGIC:
                raise HottierError("blktrace's output is not a trace "
                                   f"(bad magic {magic:#x} at record "
                                   f"{self.records})")
            end = at + RECORD.size + pdu_len
            if end > len(buf):
                break
            name = self.names.get(device)
            if name is not None:
                self.file(name, cpu).write(buf[at:end])
                self.seen.add(device)
            self.records += 1
            at = end
        self.pending = buf[at:]

    def started(self):
        """True once every device has sent a record."""
        return self.seen >= set(self.names)

    def close(self):
        for f in self.files.values():
            f.close()


# blkparse's default text, e.g.
#   252,0    1       17     0.000131542   413  Q   R 2048 + 8 [fio]
#   252,0    1       16     0.000130001   413  A   R 2048 + 8 <- (253,0) 0
#   252,0    0       19     0.000240001     0  C   R 2048 + 8 [0]
EVENT = re.compile(r"\s*(\d+),(\d+)\s+(\d+)\s+(\d+)\s+(\d+)\.(\d+)\s+"
                   r"(\d+)\s+(\S+)\s+(\S+)\s*(.*)")
RANGE = re.compile(r"(\d+) \+ (\d+)")
REMAP = re.compile(r"<- \(\s*(\d+),\s*(\d+)\)\s+(\d+)")


class Event:
    __slots__ = ("dev", "cpu", "time", "action", "rwbs", "sector", "nr",
                 "source", "source_sector")

    def __init__(self, dev, cpu, time_ns, action, rwbs, sector=None,
                 nr=None, source=None, source_sector=None):
        self.dev = dev
        self.cpu = cpu
        self.time = time_ns
        self.action = action
        self.rwbs = rwbs
        self.sector = sector
        self.nr = nr
        self.source = source
        self.source_sector = source_sector

    def __repr__(self):
        return (f"Event({self.dev} {self.time} {self.action} {self.rwbs} "
                f"{self.sector}+{self.nr} <- {self.source})")


def parse_line(line):
    """One event of blkparse's default output, or None for any other line
    (summaries, messages without a range are events with sector None)."""
    m = EVENT.match(line)
    if not m:
        return None
    (major, minor, cpu, _, sec, frac, _, action, rwbs,
     rest) = m.groups()
    time_ns = int(sec) * 1000000000 + int(frac[:9].ljust(9, "0"))
    event = Event(f"{major}:{minor}", int(cpu), time_ns, action, rwbs)
    r = RANGE.match(rest)
    if r:
        event.sector, event.nr = int(r.group(1)), int(r.group(2))
    src = REMAP.search(rest)
    if src:
        event.source = f"{src.group(1)}:{src.group(2)}"
        event.source_sector = int(src.group(3))
    return event


def direction(rwbs):
    """"read" or "write" for RWBS flags (FWFS, RA, WS...), None for a
    flush without data, a discard or anything else."""
    op = rwbs[1:] if rwbs.startswith("F") else rwbs
    return {"R": "read", "W": "write"}.get(op[:1])


def percentile(ordered, p):
    """The nearest-rank p-th percentile of a sorted list."""
    return ordered[max(0, math.ceil(p / 100 * len(ordered)) - 1)]


def latency_stats(values_ns):
    """count, mean, p50 and p99 in microseconds; None without values."""
    if not values_ns:
        return None
    ordered = sorted(values_ns)
    return {"count": len(ordered),
            "mean_us": round(sum(ordered) / len(ordered) / 1000, 1),
            "p50_us": round(percentile(ordered, 50) / 1000, 1),
            "p99_us": round(percentile(ordered, 99) / 1000, 1)}


class Bio:
    __slots__ = ("queued", "op", "sectors", "left", "remapped")

    def __init__(self, queued, op, sectors, remapped):
        self.queued = queued
        self.op = op
        self.sectors = sectors
        self.left = sectors
        self.remapped = remapped


def tally():
    return {"reads": 0, "read_sectors": 0, "writes": 0, "write_sectors": 0}


def add(t, op, sectors):
    t[op + "s"] += 1
    t[op + "_sectors"] += sectors


class Counter:
    """The bios of one device's trace, fed event by event.

    source: the hottier device's "major:minor", for a member (its remap
    events say which bios the device sent), or None for the device
    itself. bio_based: a device without requests (device-mapper, md),
    whose one completion event per bio names only the bio's last piece
    once dm has split it; a request-based device completes requests,
    each naming exactly the sectors it covers."""

    def __init__(self, source=None, bio_based=False):
        self.source = source
        self.bio_based = bio_based
        self.total = tally()
        self.sent = tally()             # remapped from the device
        self.own = tally()              # anything else a member did
        self.latency = {"read": [], "write": []}
        self.pending = {"read": {}, "write": {}}    # start -> [[end, bio]]
        self.remaps = {}                # (op, sector, nr) -> count
        self.unmatched = 0              # completions of bios queued before

    def feed(self, e):
        op = direction(e.rwbs)
        if op is None or e.sector is None or not e.nr:
            return
        if e.action == "A":
            self.remap(op, e)
        elif e.action == "Q":
            self.queue(op, e)
        elif e.action == "C":
            self.complete(op, e)

    def remap(self, op, e):
        """A bio came from another device: from the hottier device, or on
        from a bio that did (a partition's remap of it)."""
        if self.source is None:
            return
        before = (op, e.source_sector, e.nr)
        if e.source == self.source or self.remaps.get(before):
            if e.source != self.source:
                self.take_remap(before)
            key = (op, e.sector, e.nr)
            self.remaps[key] = self.remaps.get(key, 0) + 1

    def take_remap(self, key):
        n = self.remaps.get(key, 0)
        if n <= 1:
            self.remaps.pop(key, None)
        else:
            self.remaps[key] = n - 1
        return n > 0

    def queue(self, op, e):
        remapped = self.source is not None and self.take_remap(
            (op, e.sector, e.nr))
        bio = Bio(e.time, op, e.nr, remapped)
        self.pending[op].setdefault(e.sector, []).append(
            [e.sector + e.nr, bio])

    def find(self, op, sector):
        """The pending piece holding sector: (start, piece), or None. A
        piece starting there first, else any that covers it."""
        pending = self.pending[op]
        if pending.get(sector):
            return sector, pending[sector][0]
        for start, pieces in pending.items():
            for piece in pieces:
                if start < sector < piece[0]:
                    return start, piece
        return None

    def drop(self, op, start, piece):
        pieces = self.pending[op][start]
        pieces.remove(piece)
        if not pieces:
            del self.pending[op][start]

    def put(self, op, start, end, bio):
        self.pending[op].setdefault(start, []).append([end, bio])

    def complete(self, op, e):
        pos, end = e.sector, e.sector + e.nr
        matched = False
        while pos < end:
            found = self.find(op, pos)
            if found is None:
                break
            start, piece = found
            piece_end, bio = piece
            self.drop(op, start, piece)
            if self.bio_based and piece_end <= end:
                # The bio's last piece: dm completes the bio once.
                done_to = piece_end
                bio.left = 0
            else:
                done_to = min(piece_end, end)
                if start < pos:
                    self.put(op, start, pos, bio)
                if done_to < piece_end:
                    self.put(op, done_to, piece_end, bio)
                bio.left -= done_to - pos
            if bio.left <= 0:
                self.finish(bio, e.time)
            matched = True
            pos = done_to
        if not matched:
            self.unmatched += 1

    def finish(self, bio, when):
        add(self.total, bio.op, bio.sectors)
        if self.source is not None:
            add(self.sent if bio.remapped else self.own, bio.op,
                bio.sectors)
        self.latency[bio.op].append(when - bio.queued)

    def in_flight(self):
        return len({id(p[1]) for d in self.pending.values()
                    for pieces in d.values() for p in pieces})

    def result(self):
        both = self.latency["read"] + self.latency["write"]
        r = dict(self.total)
        if self.source is not None:
            r["from_device"] = dict(self.sent)
            r["own"] = dict(self.own)
        r["q2c"] = {"read": latency_stats(self.latency["read"]),
                    "write": latency_stats(self.latency["write"]),
                    "all": latency_stats(both)}
        r["in_flight_at_end"] = self.in_flight()
        r["completions_of_earlier_bios"] = self.unmatched
        return r


def count_lines(lines, dev, source=None, bio_based=False):
    """The bios of device dev ("major:minor") in blkparse text lines."""
    c = Counter(source, bio_based)
    for line in lines:
        e = parse_line(line)
        if e is not None and e.dev == dev:
            c.feed(e)
    return c.result()


def read_share(hdd, ssd, classified=True):
    """The share of the member reads the device sent that the SSD served,
    in reads and in sectors; None before any read."""
    part = "from_device" if classified else None

    def reads(m, key):
        return (m[part] if part else m)[key]
    n = reads(hdd, "reads") + reads(ssd, "reads")
    s = reads(hdd, "read_sectors") + reads(ssd, "read_sectors")
    return {"reads": reads(ssd, "reads") / n if n else None,
            "sectors": reads(ssd, "read_sectors") / s if s else None}


# Running the tools


class Tools:
    """blktrace, blkparse and iowatcher as commands; from_env() takes them
    from HOTTIER_BLKTRACE, HOTTIER_BLKPARSE and HOTTIER_IOWATCHER."""

    def __init__(self, blktrace="blktrace", blkparse="blkparse",
                 iowatcher="iowatcher"):
        self.blktrace = command(blktrace)
        self.blkparse = command(blkparse)
        self.iowatcher = command(iowatcher)

    @classmethod
    def from_env(cls, env=os.environ):
        return cls(env.get("HOTTIER_BLKTRACE", "blktrace"),
                   env.get("HOTTIER_BLKPARSE", "blkparse"),
                   env.get("HOTTIER_IOWATCHER", "iowatcher"))

    @staticmethod
    def present(cmd):
        return os.sep in cmd[0] and os.access(cmd[0], os.X_OK)

    def require(self, cmd, package):
        if not self.present(cmd):
            raise HottierError(f"{os.path.basename(cmd[0])} not found "
                               f"(install {package})")


def debugfs_mount(system):
    """Where debugfs is mounted, /sys/kernel/debug first."""
    found = [where for _, where, fstype in system.mounts()
             if fstype == "debugfs"]
    if not found:
        raise HottierError(f"debugfs is not mounted, and blktrace needs it "
                           f"(mount -t debugfs none {DEBUGFS})")
    return DEBUGFS if DEBUGFS in found else found[0]


def node(system, devnum, kname):
    """A device node for "major:minor": /dev/<kname> or /dev/block/M:m."""
    for path in (f"/dev/{kname}", f"/dev/block/{devnum}"):
        try:
            if system.block_devnum(path) == devnum:
                return path
        except HottierError:
            continue
    raise HottierError(f"no device node for {kname} ({devnum}) in /dev")


def is_partition(system, devnum):
    return os.path.isfile(os.path.join(system.devnum_path(devnum),
                                       "partition"))


def is_bio_based(system, devnum):
    """No request queue (dm, md): no mq/ in sysfs (a partition's is its
    disk's)."""
    path = system.devnum_path(devnum)
    if os.path.isfile(os.path.join(path, "partition")):
        path = os.path.dirname(path)
    return not os.path.isdir(os.path.join(path, "mq"))


class Progress:
    """What trace says on err while it runs: lines, and a countdown that
    is redrawn in place on a terminal and a line a second otherwise."""

    def __init__(self, err):
        self.err = err
        self.tty = err.isatty()
        self.shown = None

    def say(self, text):
        self.err.write(("\r\x1b[K" if self.tty else "") + text + "\n")
        self.err.flush()

    def left(self, seconds):
        whole = math.ceil(seconds)
        if whole == self.shown:
            return
        self.shown = whole
        if self.tty:
            self.err.write(f"\r\x1b[Ktrace: {whole} s left")
            self.err.flush()
        else:
            self.say(f"trace: {whole} s left")


def blktrace_error(text):
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[0] if lines else None


def dropped_events(text):
    m = re.search(r"You have (\d+) .*dropped events", text)
    return int(m.group(1)) if m else 0


def record(tools, targets, outdir, seconds, progress, debugfs=DEBUGFS,
           on_start=None):
    """Runs blktrace on targets ([(path, "major:minor", name)]) for seconds
    once every trace has started (and on_start() has run); the records go
    to outdir as blktrace -D would write them. Returns (seconds traced,
    dropped events)."""
    cmd = list(tools.blktrace)
    for path, _, _ in targets:
        cmd += ["-d", path]
    cmd += ["-o", "-"]
    if debugfs != DEBUGFS:
        cmd += ["-r", debugfs]
    splitter = Splitter(outdir, {d: n for _, d, n in targets})
    try:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
    except OSError as e:
        splitter.close()
        raise HottierError(f"cannot run {cmd[0]}: {e.strerror}")
    errors = []
    streams = {proc.stdout.fileno(): splitter.feed,
               proc.stderr.fileno(): errors.append}

    def pump(timeout, keep=True):
        """Reads what is there (and drops it unless keep); False once both
        streams are closed."""
        if not streams:
            return False
        ready, _, _ = select.select(list(streams), [], [], timeout)
        for fd in ready:
            data = os.read(fd, 1 << 16)
            if not data:
                del streams[fd]
            elif keep:
                streams[fd](data)
        return True

    try:
        deadline = time.monotonic() + START_TIMEOUT
        while not splitter.started() and time.monotonic() < deadline:
            if not pump(0.05):          # blktrace has exited
                break
        if not splitter.started():
            stop(proc, pump)
            why = blktrace_error(b"".join(errors).decode(errors="replace"))
            missing = [n for _, d, n in targets
                       if kernel_devnum(d) not in splitter.seen]
            raise HottierError(
                f"blktrace failed: {why}" if why else
                f"blktrace traced nothing on {', '.join(missing)} within "
                f"{START_TIMEOUT:.0f} s")
        if on_start:
            on_start()
        started = time.monotonic()
        progress.say(f"trace: tracing {', '.join(n for _, _, n in targets)}"
                     f" for {seconds:g} s")
        progress.shown = math.ceil(seconds)
        interrupted = []                # Ctrl-C: a shorter window
        previous = catch_sigint(interrupted)
        try:
            while not interrupted:
                left = seconds - (time.monotonic() - started)
                if left <= 0:
                    break
                progress.left(left)
                if not pump(min(left, 0.2)):
                    raise HottierError(
                        "blktrace stopped before the end: " +
                        (blktrace_error(b"".join(errors).decode(
                            errors="replace")) or
                         f"exit status {proc.wait()}"))
        finally:
            if previous is not None:
                signal.signal(signal.SIGINT, previous)
        traced = time.monotonic() - started
        progress.say(f"trace: stopped after {traced:.1f} s")
        stop(proc, pump)
    finally:
        if proc.poll() is None:
            # An error while tracing (a torn record, say). blktrace is still
            # stopped by SIGINT, which tears the kernel's traces down: killed
            # it would leave them set up, and the next blktrace on these
            # devices would be refused ("Concurrent blktraces are not
            # allowed"). What it still writes is dropped.
            try:
                stop(proc, lambda timeout: pump(timeout, keep=False))
            except HottierError:
                pass                    # killed: the first error says more
        splitter.close()
    text = b"".join(errors).decode(errors="replace")
    if proc.returncode not in (0, -signal.SIGINT):
        raise HottierError(f"blktrace failed: "
                           f"{blktrace_error(text) or proc.returncode}")
    return traced, dropped_events(text)


def catch_sigint(flags):
    """SIGINT appends to flags instead of raising KeyboardInterrupt, which
    could land between reading the pipe and splitting what was read;
    returns the handler to restore (None off the main thread, where
    signals are not handled)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, lambda *_: flags.append(1))


def stop(proc, pump):
    """SIGINT, then everything blktrace still writes until it exits."""
    if proc.poll() is None:
        proc.send_signal(signal.SIGINT)
    deadline = time.monotonic() + STOP_TIMEOUT
    while pump(0.2) and time.monotonic() < deadline:
        pass
    try:
        proc.wait(timeout=max(1.0, deadline - time.monotonic()))
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
        raise HottierError(f"blktrace did not stop in {STOP_TIMEOUT:.0f} s")


def parse(tools, outdir, name):
    """blkparse's text of name's trace, kept as <name>.blkparse.txt."""
    text = os.path.join(outdir, f"{name}.blkparse.txt")
    cmd = tools.blkparse + ["-q", "-D", outdir, "-i", name, "-o", text]
    try:
        r = subprocess.run(cmd, capture_output=True, text=True)
    except OSError as e:
        raise HottierError(f"cannot run {cmd[0]}: {e.strerror}")
    if r.returncode:
        why = blktrace_error(r.stderr) or f"exit status {r.returncode}"
        raise HottierError(f"blkparse {name} failed: {why}")
    return text


def draw(tools, outdir, targets, labels, svg, title):
    cmd = list(tools.iowatcher) + ["-T", title, "-o", os.path.abspath(svg)]
    for (_, _, name), label in zip(targets, labels):
        cmd += ["-t", os.path.join(outdir, name), "-l", label]
    r = subprocess.run(cmd, capture_output=True, text=True, cwd=outdir)
    if r.returncode or not os.path.isfile(svg):
        why = blktrace_error(r.stderr) or f"exit status {r.returncode}"
        raise HottierError(f"iowatcher failed: {why}")


def counter_deltas(before, after):
    d = {k: after[k] - before[k] for k in COUNTERS}
    d["migrations_at_start"] = before["migrations"]
    d["migrations_at_end"] = after["migrations"]
    return d


def trace(system, device, seconds, outdir=None, svg=None, tools=None,
          err=None):
    """Traces device and its members for seconds; returns the record
    trace_lines() prints."""
    if device.table()["ssd"] == "-":
        raise HottierError(f"{device.name} has no SSD: trace it once "
                           "attached (hottierctl attach)")
    tools = tools or Tools.from_env()
    err = err or sys.stderr
    tools.require(tools.blktrace, "blktrace")
    tools.require(tools.blkparse, "blktrace")
    if svg:
        tools.require(tools.iowatcher, "blktrace, which has iowatcher")
    debugfs = debugfs_mount(system)
    t = device.table()
    roles = (("device", device.devnum(), device.kname),
             ("hdd", t["hdd"], system.block_name(t["hdd"])),
             ("ssd", t["ssd"], system.block_name(t["ssd"])))
    targets = [(node(system, devnum, kname), devnum, kname)
               for _, devnum, kname in roles]
    partitions = [kname for role, devnum, kname in roles[1:]
                  if is_partition(system, devnum)]
    bio_based = {devnum: is_bio_based(system, devnum)
                 for _, devnum, _ in roles}

    keep = outdir is not None
    try:
        if keep:
            os.makedirs(outdir, exist_ok=True)
        else:
            outdir = tempfile.mkdtemp(prefix="hottierctl-trace-")
    except OSError as e:
        raise HottierError(f"{outdir or tempfile.gettempdir()}: "
                           f"{e.strerror}")
    try:
        before = {}
        traced, dropped = record(
            tools, targets, outdir, seconds, Progress(err), debugfs,
            on_start=lambda: before.update(device.stats()))
        after = device.stats()
        members = {}
        dm = device.devnum()
        for role, devnum, kname in roles:
            with open(parse(tools, outdir, kname)) as f:
                counts = count_lines(f, devnum,
                                     None if role == "device" else dm,
                                     bio_based[devnum])
            members[role] = {"kernel_name": kname, "devnum": devnum,
                             **counts}
        if svg:
            draw(tools, outdir, targets, ("device", "HDD", "SSD"), svg,
                 f"{device.name} ({device.kname})")
    finally:
        if not keep:
            shutil.rmtree(outdir, ignore_errors=True)
    notes = []
    classified = not partitions
    if partitions:
        what = ("is a partition" if len(partitions) == 1 else
                "are partitions")
        notes.append(
            f"{' and '.join(partitions)} {what}: the kernel drops the "
            "remap events whose sector lies outside a partition, so the "
            "device's I/O is not told from the target's own there (the SSD "
            "share counts every member read)")
    if dropped:
        notes.append(f"blktrace dropped {dropped} events: the counts are "
                     "short")
    return {"name": device.name, "kernel_name": device.kname,
            "seconds": round(traced, 3), "output": outdir if keep else None,
            "svg": svg, "dropped_events": dropped,
            "classified": classified, "device": members["device"],
            "hdd": members["hdd"], "ssd": members["ssd"],
            "ssd_read_share": read_share(members["hdd"], members["ssd"],
                                         classified),
            "counters": counter_deltas(before, after), "notes": notes}


def us(value):
    """Microseconds to print: one decimal below 10."""
    if value is None:
        return "-"
    return f"{value:.1f}" if value < 10 else f"{value:.0f}"


def q2c_cells(stats):
    if stats is None:
        return ("-", "-", "-")
    return (us(stats["mean_us"]), us(stats["p50_us"]), us(stats["p99_us"]))


def own_text(m):
    o = m["own"]
    return (f"{o['reads']} reads ({o['read_sectors']} sectors), "
            f"{o['writes']} writes ({o['write_sectors']} sectors)")


def trace_lines(rec):
    """The trace record as text."""
    lines = [f"{rec['name']} ({rec['kernel_name']}): {rec['seconds']:.1f} s "
             f"of blktrace on {rec['kernel_name']}, "
             f"{rec['hdd']['kernel_name']} (HDD) and "
             f"{rec['ssd']['kernel_name']} (SSD)"]
    roles = (("device", "device"), ("hdd", "HDD"), ("ssd", "SSD"))
    rows = [("", "READS", "SECTORS", "WRITES", "SECTORS")]
    rows += [(f"{label} {rec[role]['kernel_name']}", rec[role]["reads"],
              rec[role]["read_sectors"], rec[role]["writes"],
              rec[role]["write_sectors"]) for role, label in roles]
    lines += ["  " + line for line in columns(rows)]
    lines.append("Q2C latency, microseconds:")
    rows = [("", "READ MEAN", "P50", "P99", "WRITE MEAN", "P50", "P99")]
    rows += [(f"{label} {rec[role]['kernel_name']}",
              *q2c_cells(rec[role]["q2c"]["read"]),
              *q2c_cells(rec[role]["q2c"]["write"])) for role, label in roles]
    lines += ["  " + line for line in columns(rows)]
    share = rec["ssd_read_share"]
    sent = ("of the member reads the device sent" if rec["classified"]
            else "of all member reads")
    lines.append(f"SSD share {sent}: {percent(share['reads'])} of reads, "
                 f"{percent(share['sectors'])} of sectors")
    if rec["classified"]:
        lines.append("target's own I/O (no remap event from "
                     f"{rec['kernel_name']}: copies read the HDD and "
                     "write the SSD; also write-through SSD halves, the "
                     "SSD map, scrub):")
        lines.append(f"  HDD {own_text(rec['hdd'])}")
        lines.append(f"  SSD {own_text(rec['ssd'])}")
    c = rec["counters"]
    lines.append(
        f"status over the trace: {c['reads']} reads, "
        f"{c['replica_reads_ssd']} to the SSD, "
        f"{c['read_misses'] + c['replica_reads_hdd']} to the HDD "
        f"({c['read_misses']} misses, {c['replica_reads_hdd']} replica "
        f"reads), {c['promotions']} promotions; migrations in flight "
        f"{c['migrations_at_start']} at the start, "
        f"{c['migrations_at_end']} at the end")
    for note in rec["notes"]:
        lines.append(f"note: {note}")
    lines.append(f"raw traces: kept in {rec['output']}" if rec["output"]
                 else "raw traces: removed (--output DIR keeps them)")
    if rec["svg"]:
        lines.append(f"graph: {rec['svg']}")
    return lines
