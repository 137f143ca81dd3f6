#!/usr/bin/env python3
"""Replay a block trace through dm-hottier's own policy code and through
libcachesim's baselines, at the same sizes and extent granularity (issue 42,
item 2).

  sim.py TRACE [--format auto|blkparse|fio|msr|oracle|lcs-csv]
         [--extent-kb K] [--copy-ms MS] [--migrations N]
         [--halflife-ms MS] [--threshold R] [--sizes 2,5,10,20]
         [--iops N] [--obj-unit BYTES] [--json]

The module's side is tools/sim/hottier-sim (built here with make): the
unmodified dm-hottier-heat.c, -map.c and -policy.c behind a userspace shim
of the kernel, fed a normalized stream, "<time_us> <R|W> <offset> <length>"
a line. A promotion decided at t installs its replica at t + --copy-ms
(reads before miss), with at most --migrations copies in flight.

Trace formats (TraceReader-like generators of (time_us, op, offset, length),
op "R" or "W", byte offsets):
- blkparse: blkparse's default text; the queue events (Q), R or W in RWBS,
  sectors of 512 bytes.
- fio: fio's iolog, version 2 (no times: --iops paces it) or 3 (ms stamps).
- msr: SNIA IOTTA / MSR Cambridge CSV, Timestamp in Windows 100 ns ticks,
  Type Read or Write, Offset and Size in bytes.
- oracle: libCacheSim's oracleGeneral binary (24-byte records <IQIq: time s,
  obj_id, obj_size, next access); obj_id x --obj-unit is the byte offset,
  every record a read.
- lcs-csv: a csv with a header naming time (s), obj_id and obj_size, and an
  optional op column (read/write, get/set); obj_id x --obj-unit as above.

Baselines: libcachesim's LRU, ARC, LIRS, S3-FIFO, SIEVE and Belady, with
each read request cut into the extents it touches, each extent an object of
size 1, admitted on every miss (so a baseline's promotions are its
misses). Writes are not fed to them (a write-through leaves a cache's
contents alone). S3-FIFO needs 10 objects or more (its probationary FIFO is
a tenth of the cache); smaller, it is left out. libcachesim's Belady
admits every miss, so it bounds those five, not a policy that may leave a
miss on the HDD as the module's does: OPT, Belady's MIN free to bypass
(computed here), bounds them all. Its promotions count the misses it
admits.

Figures at each size (a share of the trace's footprint: the extents it
touches, read or written): read hit ratio per request (every extent of it
a hit) and per extent, SSD bytes written per extent hit (promotions' copies
and write-throughs; a baseline's misses x the extent), and promotions.
"""

import argparse
import csv
import heapq
import io
import json
import os
import struct
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
SIM_DIR = os.path.join(REPO, "tools", "sim")
SIM = os.path.join(SIM_DIR, "hottier-sim")

SIZES = (2, 5, 10, 20)
BASELINES = ("LRU", "ARC", "LIRS", "S3FIFO", "Sieve", "Belady")
ORACLE_RECORD = struct.Struct("<IQIq")
NO_NEXT = 1 << 62


def build():
    """The simulator binary, made if it is older than its sources."""
    subprocess.run(["make", "-s", "-C", SIM_DIR], check=True)
    return SIM


# Trace readers: each yields (time_us, op, offset_bytes, length_bytes).

def read_blkparse(f, action="Q"):
    for line in f:
        w = line.split()
        # dev cpu seq time pid action rwbs sector + count [process]
        if len(w) < 10 or w[5] != action or w[8] != "+":
            continue
        rwbs = w[6]
        op = "W" if "W" in rwbs else "R" if "R" in rwbs else None
        if op is None or "D" in rwbs:
            continue
        try:
            t = float(w[3])
            sector, count = int(w[7]), int(w[9])
        except ValueError:
            continue
        yield round(t * 1e6), op, sector * 512, count * 512


def read_fio(f, iops=1000):
    version = None
    n = 0
    for line in f:
        w = line.split()
        if not w:
            continue
        if version is None:
            if line.startswith("fio version "):
                version = int(w[2])
                continue
            raise ValueError("not a fio iolog: no 'fio version' line")
        if version == 3:
            if len(w) < 5:
                continue
            t_us = int(w[0]) * 1000
            w = w[1:]
        elif len(w) < 4:
            continue
        else:
            t_us = n * 1000000 // iops
        if w[1] not in ("read", "write"):
            continue
        n += 1
        yield t_us, "R" if w[1] == "read" else "W", int(w[2]), int(w[3])


def read_msr(f):
    for row in csv.reader(f):
        if len(row) < 6 or not row[0].strip().isdigit():
            continue
        kind = row[3].strip().lower()
        if kind not in ("read", "write"):
            continue
        # Windows FILETIME: 100 ns ticks.
        yield (int(row[0]) // 10, "R" if kind == "read" else "W",
               int(row[4]), int(row[5]))


def read_oracle(f, obj_unit=1):
    data = f.read()
    for i in range(0, len(data) - ORACLE_RECORD.size + 1, ORACLE_RECORD.size):
        t, obj, size, _ = ORACLE_RECORD.unpack_from(data, i)
        yield t * 1000000, "R", obj * obj_unit, max(size, 1)


WRITE_OPS = ("w", "write", "set", "add", "replace", "cas", "update")


def read_lcs_csv(f, obj_unit=1):
    reader = csv.DictReader(f)
    names = {n.strip().lower(): n for n in reader.fieldnames or ()}

    def col(*choices):
        for c in choices:
            if c in names:
                return names[c]
        return None
    tcol = col("time", "timestamp", "clock_time")
    icol = col("obj_id", "id", "key")
    scol = col("obj_size", "size")
    ocol = col("op", "type")
    if icol is None:
        raise ValueError("lcs csv: no obj_id column")
    for n, row in enumerate(reader):
        t = float(row[tcol]) if tcol else n
        op = "R"
        if ocol and row[ocol].strip().lower() in WRITE_OPS:
            op = "W"
        size = int(row[scol]) if scol else 1
        yield round(t * 1e6), op, int(row[icol]) * obj_unit, max(size, 1)


def sniff(path):
    with open(path, "rb") as f:
        head = f.read(4096)
    if head.startswith(b"fio version "):
        return "fio"
    try:
        text = head.decode()
    except UnicodeDecodeError:
        return "oracle"
    first = next((ln for ln in text.splitlines()
                  if ln.strip() and not ln.startswith("#")), "")
    if "obj_id" in first.lower():
        return "lcs-csv"
    if first.count(",") >= 5:
        return "msr"
    if len(first.split()) >= 10:
        return "blkparse"
    raise ValueError("%s: cannot tell the trace's format" % path)


def read_trace(path, fmt="auto", iops=1000, obj_unit=1):
    """The trace's requests, sorted by time, the clock starting at 0."""
    if fmt == "auto":
        fmt = sniff(path)
    if fmt == "oracle":
        with open(path, "rb") as f:
            reqs = list(read_oracle(f, obj_unit))
    else:
        with open(path, newline="") as f:
            reqs = list({
                "blkparse": read_blkparse,
                "fio": lambda f: read_fio(f, iops),
                "msr": read_msr,
                "lcs-csv": lambda f: read_lcs_csv(f, obj_unit),
            }[fmt](f))
    reqs = [r for r in reqs if r[3] > 0]
    reqs.sort(key=lambda r: r[0])
    t0 = reqs[0][0] if reqs else 0
    return [(t - t0, op, off, ln) for t, op, off, ln in reqs]


def extents_of(off, length, extent_bytes):
    return range(off // extent_bytes, (off + length - 1) // extent_bytes + 1)


def footprint(reqs, extent_bytes):
    seen = set()
    for _, _, off, ln in reqs:
        seen.update(extents_of(off, ln, extent_bytes))
    return len(seen)


def slots_at(percent, fp):
    return max(1, round(fp * percent / 100))


# The module's policy

def run_module(reqs, slots_list, extent_kb=1024, copy_ms=0.0, migrations=4,
               halflife_ms=60000, threshold=4, tracked=0):
    """hottier-sim's counters at each number of slots."""
    sim = build()
    with tempfile.NamedTemporaryFile("w", suffix=".events",
                                     delete=False) as ev:
        for t, op, off, ln in reqs:
            ev.write("%d %s %d %d\n" % (t, op, off, ln))
        path = ev.name
    try:
        procs = []
        for slots in slots_list:
            cmd = [sim, "--slots", str(slots), "--extent-kb", str(extent_kb),
                   "--copy-us", str(round(copy_ms * 1000)),
                   "--migrations", str(migrations),
                   "--halflife-ms", str(halflife_ms),
                   "--threshold", str(threshold), "--tracked", str(tracked)]
            with open(path) as stdin:
                procs.append(subprocess.Popen(cmd, stdin=stdin,
                                              stdout=subprocess.PIPE,
                                              text=True))
        out = []
        for p in procs:
            text, _ = p.communicate()
            if p.returncode:
                raise RuntimeError("hottier-sim failed (%d)" % p.returncode)
            out.append(json.loads(text))
        return out
    finally:
        os.unlink(path)


def module_figures(c):
    return figures(c["read_reqs"], c["read_req_hits"], c["read_pieces"],
                   c["read_piece_hits"], c["ssd_bytes_written"],
                   c["promotions"])


def figures(reqs, req_hits, pieces, piece_hits, written, promotions):
    return {
        "read_hit_ratio_req": req_hits / reqs if reqs else 0.0,
        "read_hit_ratio_extent": piece_hits / pieces if pieces else 0.0,
        "ssd_bytes_per_hit": written / piece_hits if piece_hits else None,
        "promotions": promotions,
    }


# libcachesim's baselines

def read_pieces(reqs, extent_bytes):
    """The extents of each read request, flattened, and each request's
    number of them."""
    ids, counts = [], []
    for _, op, off, ln in reqs:
        if op != "R":
            continue
        r = extents_of(off, ln, extent_bytes)
        ids.extend(r)
        counts.append(len(r))
    return ids, counts


def next_access(ids):
    nxt, last = [NO_NEXT] * len(ids), {}
    for i in range(len(ids) - 1, -1, -1):
        nxt[i] = last.get(ids[i], NO_NEXT)
        last[ids[i]] = i
    return nxt


def hit_figures(hits, counts, admitted, extent_bytes):
    """Figures from each extent's hit and each request's extent count."""
    req_hits, i = 0, 0
    for n in counts:
        req_hits += all(hits[i:i + n])
        i += n
    return figures(len(counts), req_hits, len(hits), sum(hits),
                   admitted * extent_bytes, admitted)


def run_baseline(name, size, ids, counts, nxt, extent_bytes):
    import libcachesim as lcs
    if name == "S3FIFO" and size < 10:
        return None
    cache = getattr(lcs, name)(size)
    req = lcs.Request()
    req.obj_size = 1
    hits = []
    for i, obj in enumerate(ids):
        req.obj_id = obj
        req.clock_time = i
        req.next_access_vtime = nxt[i]
        hits.append(cache.get(req))
    return hit_figures(hits, counts, len(ids) - sum(hits), extent_bytes)


def run_opt(size, ids, counts, nxt, extent_bytes):
    """The offline optimum for objects of one size: Belady's MIN that may
    also leave the missed object out (libcachesim's Belady admits every
    miss, so a policy that bypasses, as the module's does, can beat it:
    a cache of one on A B A). It bounds every policy's hits per extent."""
    cached, heap, hits, admitted = {}, [], [], 0
    for i, obj in enumerate(ids):
        hit = obj in cached
        hits.append(hit)
        if not hit and len(cached) >= size:
            while -heap[0][0] != cached.get(heap[0][1]):
                heapq.heappop(heap)
            if -heap[0][0] <= nxt[i]:
                continue
            del cached[heapq.heappop(heap)[1]]
        admitted += not hit
        cached[obj] = nxt[i]
        heapq.heappush(heap, (-nxt[i], obj))
    return hit_figures(hits, counts, admitted, extent_bytes)


def replay(reqs, extent_kb=1024, sizes=SIZES, baselines=BASELINES, **kw):
    """Figures per size: the module's ("hottier") and each baseline's."""
    eb = extent_kb * 1024
    fp = footprint(reqs, eb)
    slots = [slots_at(p, fp) for p in sizes]
    counters = run_module(reqs, slots, extent_kb=extent_kb, **kw)
    ids, counts = read_pieces(reqs, eb)
    nxt = next_access(ids)
    rows = []
    for pct, n, c in zip(sizes, slots, counters):
        row = {"percent": pct, "slots": n,
               "hottier": module_figures(c), "hottier_counters": c}
        for b in baselines:
            row[b] = run_baseline(b, n, ids, counts, nxt, eb)
        row["OPT"] = run_opt(n, ids, counts, nxt, eb)
        rows.append(row)
    return {"footprint_extents": fp, "extent_bytes": eb,
            "requests": len(reqs), "read_requests": len(counts),
            "sizes": rows}


def table(result, baselines=BASELINES):
    names = ("hottier",) + tuple(baselines) + ("OPT",)
    out = io.StringIO()
    out.write("footprint %d extents of %d KiB, %d requests (%d reads)\n"
              % (result["footprint_extents"], result["extent_bytes"] // 1024,
                 result["requests"], result["read_requests"]))
    out.write("%-5s %-7s %-8s %8s %8s %12s %10s\n" % (
        "size", "slots", "policy", "hit/req", "hit/ext", "SSD B/hit",
        "promoted"))
    for row in result["sizes"]:
        for name in names:
            f = row[name]
            if f is None:
                out.write("%-5s %-7d %-8s %8s\n" % (
                    "%d%%" % row["percent"], row["slots"], name, "n/a"))
                continue
            bph = f["ssd_bytes_per_hit"]
            out.write("%-5s %-7d %-8s %8.4f %8.4f %12s %10d\n" % (
                "%d%%" % row["percent"], row["slots"], name,
                f["read_hit_ratio_req"], f["read_hit_ratio_extent"],
                "-" if bph is None else "%.0f" % bph, f["promotions"]))
    return out.getvalue()


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("trace")
    ap.add_argument("--format", default="auto",
                    choices=("auto", "blkparse", "fio", "msr", "oracle",
                             "lcs-csv"))
    ap.add_argument("--extent-kb", type=int, default=1024)
    ap.add_argument("--copy-ms", type=float, default=0.0)
    ap.add_argument("--migrations", type=int, default=4)
    ap.add_argument("--halflife-ms", type=int, default=60000)
    ap.add_argument("--threshold", type=int, default=4)
    ap.add_argument("--sizes", default=",".join(map(str, SIZES)))
    ap.add_argument("--iops", type=int, default=1000,
                    help="pace of a trace without times (fio iolog v2)")
    ap.add_argument("--obj-unit", type=int, default=1,
                    help="bytes per obj_id unit (oracle, lcs-csv)")
    ap.add_argument("--json", action="store_true")
    a = ap.parse_args(argv)
    reqs = read_trace(a.trace, a.format, a.iops, a.obj_unit)
    if not reqs:
        sys.exit("sim.py: %s has no read or write requests" % a.trace)
    result = replay(reqs, extent_kb=a.extent_kb,
                    sizes=[float(s) for s in a.sizes.split(",")],
                    copy_ms=a.copy_ms, migrations=a.migrations,
                    halflife_ms=a.halflife_ms, threshold=a.threshold)
    result["trace"] = a.trace
    if a.json:
        json.dump(result, sys.stdout, indent=1)
        print()
    else:
        sys.stdout.write(table(result))


if __name__ == "__main__":
    main()
