"""Issue 14's workloads, each run on dm-hottier, dm-cache smq writethrough
(same unit, default policy settings) and dm-linear over the HDD, side by
side in one guest boot, with the static oracle computed from the
workload's own offset stream. scripts/bench-workloads.sh runs it; the
report is tests/bench/bench_report.py.

  workloads.py [--only moving,streaming,...] [--seconds S] [--extent N]

Devices (benchlib.Stack, as tests/bench/zipf.py makes them): a fresh
emulated HDD (null_blk, 4 ms an I/O, depth 1) of --hdd-mb and SSD (100 us,
depth 32) of --ssd-mb usable for every run. S is --seconds, the runtime
scale; every fio job below is libaio, direct, randseed 4242.

  moving     A hot set that moves: 4k random reads at iodepth 16, phase A
             random_distribution=zoned:60/10:30/20:10/70 (60% of reads in
             the first 10% of the device, 30% in the next 20%), then at
             once, on the same device, phase B zoned:10/70:60/10:30/20 (the
             hot 10% at 70-80%, the warm 20% at 80-100%), S seconds each.
  streaming  Streaming listeners: the HDD holds files of 2 to 32 MiB
             (log-uniform sizes, MiB-aligned, back to back); 8 listeners,
             each a fio job replaying its own generated iolog: files picked
             by a zipf(1.0) popularity, each read whole, sequentially, in
             128 KiB reads at iodepth 1, 2 S seconds (so that popular
             files are read more than once).
  backup     A backup scan during zipf: 4k zipf:1.2 random reads at iodepth
             16 for 2 S; in the "scan" run, one sequential pass over the
             whole device (1 MiB reads, iodepth 1) starts at S and stops
             at 2 S if not done; the "alone" run is the same without it.
  softlayer  SoftLayer's method: 8k uniform random reads at iodepth 128
             (S seconds), then on fresh devices a 70/30 random read/write
             mix at iodepth 128 (S seconds): IOPS and p99.
  capture    A capture writer beside promotions: the zipf reader above and
             a sequential writer (256 KiB writes, iodepth 1,
             rate=--capture-rate) over the last quarter of the device, S
             seconds; dm-hottier with migration_budget_us 0 (default) and
             with --budget-us.

Hit ratios come from the status counters (dm-hottier: read_hits /
(read_hits + read_misses), SSD share: replica_reads_ssd / reads; dm-cache:
read hits / (hits + misses), all hits served by the cache device), sampled
every --sample s. "Steady" is the last third of a run (of a phase for
moving). Where the scan shares the device with zipf (backup), its reads
are taken out of the counters (see zipf_ratio_beside_scan()); the
completion latency cannot tell an SSD read from an HDD one under TCG
(the emulated SSD's reads took up to 19 ms there at iodepth 16).

Writes <out>/<workload>/<workload>.json (params, definitions, per system
its fio figures, status samples and figures) and report.txt. Runs inside
the guest as root with dm-mod, dm-cache, dm-cache-smq, null_blk
(nr_devices=0) and dm-hottier loaded. Python standard library only.
"""

import argparse
import bisect
import collections
import glob
import json
import math
import os
import random
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import benchlib as bl  # noqa: E402  (puts tests/lib on the path)
import devices  # noqa: E402

SEED = 4242
COMMON = ["--ioengine=libaio", "--direct=1", f"--randseed={SEED}"]
ZIPF = ["--rw=randread", "--bs=4k", "--iodepth=16",
        "--random_distribution=zipf:1.2"]
ZONED_A = "zoned:60/10:30/20:10/70"
ZONED_B = "zoned:10/70:60/10:30/20"
STREAM_LISTENERS = 8
STREAM_BS = 128 << 10
STREAM_FILE_MIB = (2, 32)
STREAM_ZIPF_S = 1.0
SCAN_BS = "1M"
SCAN_BYTES = 1 << 20
WARM_WINDOW_S = 5       # time to 90%: hit ratio over a sliding window
WARM_FRACTION = 0.9
FILL_WINDOW_FRACTION = 6    # pre-/post-fill windows: a sixth of a phase
QOS_HOLD = 0.95         # the capture writer holds 95% of its rate

SYSTEMS = {
    "hottier": {"kind": "hottier", "label": "dm-hottier"},
    "cache": {"kind": "cache", "label": "dm-cache smq"},
    "linear": {"kind": "linear", "label": "dm-linear (HDD)"},
}


# --- arithmetic on status samples (tests/host/test_bench_workloads.py) -----

def index_at(samples, t):
    """The last sample taken at or before t (the first if none)."""
    i = 0
    while i + 1 < len(samples) and samples[i + 1]["t"] <= t + 1e-6:
        i += 1
    return i


def window(samples, t0, t1, key="read_hits"):
    """Read hits and misses between the samples at t0 and t1: the hit
    ratio, and the SSD's share of reads where the samples carry
    ssd_reads."""
    a, b = samples[index_at(samples, t0)], samples[index_at(samples, t1)]
    hits = b["read_hits"] - a["read_hits"]
    misses = b["read_misses"] - a["read_misses"]
    out = {"t0": a["t"], "t1": b["t"], "reads": hits + misses,
           "hit_ratio": bl.ratio(hits, misses), "ssd_share": None,
           "promotions": b["promotions"] - a["promotions"]}
    if a.get("ssd_reads") is not None and b.get("ssd_reads") is not None \
            and hits + misses:
        out["ssd_share"] = (b["ssd_reads"] - a["ssd_reads"]) / (hits + misses)
    return out


def steady(samples, t_start, t_end):
    """The window over the last third of [t_start, t_end]."""
    return window(samples, t_end - (t_end - t_start) / 3, t_end)


def time_to_fraction(samples, t_from, t_end, target, window_s, key):
    """Seconds from t_from until the ratio (key) over the previous
    window_s first reaches target; None if it never does before t_end."""
    if target is None:
        return None
    for s in samples:
        t = s["t"]
        if t < t_from + window_s - 1e-6 or t > t_end + 1e-6:
            continue
        w = window(samples, t - window_s, t)
        if w[key] is not None and w[key] >= target:
            return round(t - t_from, 3)
    return None


def fill_time(samples):
    """The first sample time at which every slot or block is used."""
    return next((s["t"] for s in samples
                 if s.get("total") and s["used"] >= s["total"]), None)


def min_window(samples, t0, t1, window_s, key):
    """The lowest ratio (key) over a window_s window ending at a sample in
    [t0 + window_s, t1]; None without one."""
    vals = []
    for s in samples:
        if t0 + window_s - 1e-6 <= s["t"] <= t1 + 1e-6:
            v = window(samples, s["t"] - window_s, s["t"])[key]
            if v is not None:
                vals.append(v)
    return min(vals) if vals else None


def moving_figures(samples, phases, key):
    """The moving hot set's figures from one system's samples; phases:
    [{"t_start", "t_end"}, {"t_start", "t_end"}] (A, B)."""
    a, b = phases
    w = max(WARM_WINDOW_S, (a["t_end"] - a["t_start"]) / FILL_WINDOW_FRACTION)
    sa = steady(samples, a["t_start"], a["t_end"])[key]
    sb = steady(samples, b["t_start"], b["t_end"])[key]
    full = fill_time(samples)
    pre = post = post_mean = None
    if full is not None:
        ph = a if full <= a["t_end"] else b
        pre = window(samples, max(ph["t_start"], full - w), full)[key]
        end = ph["t_end"] if ph["t_end"] - full >= w else b["t_end"]
        post = min_window(samples, full, end, w, key)
        post_mean = window(samples, full, end)[key]
    t90 = time_to_fraction(samples, b["t_start"], b["t_end"],
                           None if sb is None else WARM_FRACTION * sb,
                           WARM_WINDOW_S, key)
    return {"steady_a": sa, "steady_b": sb, "fill_s": full,
            "fill_window_s": w, "pre_fill": pre, "post_fill_min": post,
            "post_fill_mean": post_mean,
            "post_over_pre": (post / pre if post is not None and pre
                              else None),
            "time_to_90_b_s": t90}


def common_level(systems, key="hit_ratio", names=("hottier", "cache")):
    """Moving, beside the goal: the level both systems reach, WARM_FRACTION
    x the lower of their steady-B ratios, and each one's seconds from
    phase B's first read until its ratio over WARM_WINDOW_S reaches it
    (None where it never does, or a figure is missing). The goal gives each
    system its own level; this puts them at one.
    -> {"level": x or None, "seconds": {name: s or None}}"""
    steady = {}
    for n in names:
        f = ((systems.get(n) or {}).get("figures") or {}).get(key) or {}
        steady[n] = f.get("steady_b")
    known = [v for v in steady.values() if v is not None]
    level = WARM_FRACTION * min(known) if len(known) == len(names) else None
    out = {}
    for n in names:
        rec = systems.get(n) or {}
        ph = rec.get("phases") or []
        if level is None or len(ph) < 2 or not rec.get("samples"):
            out[n] = None
            continue
        out[n] = time_to_fraction(rec["samples"], ph[1]["t_start"],
                                  ph[1]["t_end"], level, WARM_WINDOW_S, key)
    return {"level": level, "seconds": out}


def unix_window(samples, u0, u1):
    """Counters between the last samples taken (wall clock, unix_ms) at or
    before u0 and at or after u1 (the first and last sample if none):
    hits, misses, promotions, and the mean of used over the samples in
    between."""
    i = max((k for k, x in enumerate(samples) if x["unix_ms"] <= u0),
            default=0)
    j = min((k for k, x in enumerate(samples) if x["unix_ms"] >= u1),
            default=len(samples) - 1)
    a, b = samples[i], samples[j]
    used = [x["used"] for x in samples[i:j + 1]]
    return {"hits": b["read_hits"] - a["read_hits"],
            "misses": b["read_misses"] - a["read_misses"],
            "promotions": b["promotions"] - a["promotions"],
            "used_mean": sum(used) / len(used)}


def zipf_ratio_beside_scan(hits, misses, scan_bios, resident_fraction):
    """The zipf job's hit ratio from counters that also count the scan's
    reads: scan_bios of them (the scan's bytes over the unit: each of its
    reads is split at the unit), of which resident_fraction (the share of
    the device with a replica or cache block) are taken to be hits. The
    status does not tell one job's hits from the other's: this is an
    estimate, good when the scan is a small part of the reads."""
    scan_hits = min(hits, round(scan_bios * resident_fraction))
    zh, zr = hits - scan_hits, hits + misses - scan_bios
    return {"ratio": zh / zr if zr > 0 else None, "scan_hits": scan_hits,
            "zipf_reads": zr}


def offset_log_reads(lat_log_lines):
    """The reads in a fio latency log written with log_offset=1:
    [(completion time in ms, offset, bytes)]."""
    out = []
    for line in lat_log_lines:
        w = [x.strip() for x in line.split(",")]
        if len(w) >= 5 and w[2] == "0":
            out.append((int(w[0]), int(w[4]), int(w[3])))
    return out


def placed_share(reads, files, placed):
    """The share of the bytes of reads [(t, offset, bytes)] that fall in
    the files (indexes into files [(start, length)]) placed; None without
    reads."""
    spans = sorted(files[i] for i in placed)
    starts = [a for a, _ in spans]
    total = held = 0
    for _, off, n in reads:
        total += n
        k = max(0, bisect.bisect_right(starts, off) - 1)
        while k < len(spans) and spans[k][0] < off + n:
            a, b = max(off, spans[k][0]), min(off + n, sum(spans[k]))
            held += max(0, b - a)
            k += 1
    return held / total if total else None


def resident_files(top_lines, files, extent_bytes):
    """From a "top" message's lines ("<sector> <heat> <resident|-> ..."):
    per file (index into files) with a resident extent, the share of its
    extents resident."""
    per = collections.Counter()
    for line in top_lines:
        w = line.split()
        if len(w) >= 3 and w[2] == "resident":
            off = int(w[0]) * bl.SECTOR
            for i, (a, n) in enumerate(files):
                if a <= off < a + n:
                    per[i] += 1
                    break
    return {i: round(c * extent_bytes / files[i][1], 3)
            for i, c in sorted(per.items())}


def log_span(lat_log_lines):
    """First and last completion time (ms) in a fio latency log."""
    ts = [int(line.split(",")[0]) for line in lat_log_lines
          if line.strip()]
    return (min(ts), max(ts)) if ts else (None, None)


def stream_files(hdd_bytes, seed=SEED, sizes_mib=STREAM_FILE_MIB):
    """The streaming workload's files: [(start, length)] bytes, back to
    back from 0, sizes log-uniform in sizes_mib whole MiB, until the
    device is full (the last one cut to fit, dropped under the minimum)."""
    rng = random.Random(seed)
    lo, hi = (math.log(x) for x in sizes_mib)
    files, off = [], 0
    while True:
        size = int(round(math.exp(rng.uniform(lo, hi)))) << 20
        size = min(size, hdd_bytes - off)
        if size < sizes_mib[0] << 20:
            return files
        files.append((off, size))
        off += size


def zipf_weights(n, s, seed=SEED):
    """Popularity of n files: rank r has weight 1 / r^s; ranks assigned
    to files in a shuffled order (the most popular is not the first)."""
    order = list(range(n))
    random.Random(seed + 1).shuffle(order)
    w = [0.0] * n
    for rank, i in enumerate(order, 1):
        w[i] = 1 / rank ** s
    return w


def listener_reads(files, weights, listener, max_bytes, bs=STREAM_BS,
                   seed=SEED):
    """One listener's reads: files picked by popularity, each read whole
    in bs reads; at least max_bytes in all. [(offset, length)]."""
    rng = random.Random(seed * 1000 + listener)
    out, got = [], 0
    while got < max_bytes:
        start, length = rng.choices(files, weights)[0]
        for off in range(start, start + length, bs):
            n = min(bs, start + length - off)
            out.append((off, n))
            got += n
    return out


def iolog_text(reads, name="dev"):
    lines = ["fio version 2 iolog", f"{name} add", f"{name} open"]
    lines += [f"{name} read {o} {n}" for o, n in reads]
    lines.append(f"{name} close")
    return "\n".join(lines) + "\n"


# --- running ----------------------------------------------------------------

def fio_job_figures(job):
    """One job of fio's JSON: IOPS, bandwidth, p99 of each direction."""
    out = {"name": job["jobname"], "error": job.get("error", 0)}
    for d in ("read", "write"):
        r = job[d]
        pct = (r.get("clat_ns") or {}).get("percentile") or {}
        out[d] = {"ios": r["total_ios"], "iops": round(r["iops"], 1),
                  "bw_bytes": r["bw_bytes"], "runtime_ms": r["runtime"],
                  "p99_ms": (round(pct["99.000000"] / 1e6, 3)
                             if r["total_ios"] and "99.000000" in pct
                             else None),
                  "mean_ms": (round(r["clat_ns"]["mean"] / 1e6, 3)
                              if r["total_ios"] else None)}
    return out


class Sampler:
    """Status samples of one stack, times from its creation."""

    def __init__(self, st):
        self.st, self.t0, self.samples = st, time.monotonic(), []

    def take(self):
        s = self.st.status()
        if s is None:
            return
        s["ssd_reads"] = bl.ssd_reads(self.st.cfg["kind"], s)
        s["t"] = round(time.monotonic() - self.t0, 3)
        s["unix_ms"] = int(time.time() * 1000)
        self.samples.append(s)

    def now(self):
        return round(time.monotonic() - self.t0, 3)


def run_fio(sampler, jobs, out_json, sample_s, global_opts=()):
    """One fio process running jobs [(name, [options])] on the stack's
    device, sampling the status every sample_s; returns (figures per job,
    t_start, t_end, fio's JSON jobs)."""
    dev = sampler.st.dev.path
    cmd = ["fio", "--output-format=json", f"--output={out_json}",
           f"--filename={dev}", *COMMON, *global_opts]
    for name, opts in jobs:     # "{dev}" in an option: the device's path
        cmd += [f"--name={name}", *(o.replace("{dev}", dev) for o in opts)]
    sampler.take()
    t_start = sampler.now()
    rc, out, err = bl.run_sampled(cmd, sample_s, sampler.take)
    t_end = sampler.now()
    sampler.take()
    if rc:
        raise RuntimeError(f"fio failed ({rc}): {err}{out}"
                           f"\ncommand: {' '.join(cmd)}")
    with open(out_json) as f:
        fj = json.load(f)["jobs"]
    return [fio_job_figures(j) for j in fj], t_start, t_end, cmd


def first_read_t(samples, t_start):
    """The time of the last sample before the first read counted after
    t_start (fio takes seconds to start under TCG); t_start without
    one."""
    i0 = index_at(samples, t_start)

    def nr(s):
        return s["read_hits"] + s["read_misses"]
    for j in range(i0 + 1, len(samples)):
        if nr(samples[j]) > nr(samples[i0]):
            return samples[j - 1]["t"]
    return t_start


class Runner:
    def __init__(self, p):
        self.p = p
        self.workdir = "/tmp" if os.access("/tmp", os.W_OK) else p.out

    def systems(self, names=("hottier", "cache", "linear")):
        out = []
        for n in names:
            cfg = dict(SYSTEMS[n], name=n, unit=self.p.extent)
            if n == "cache":
                cfg["label"] += f" {bl.unit_name(self.p.extent * bl.SECTOR)}"
            out.append(cfg)
        return out

    def path(self, wl, name):
        d = os.path.join(self.p.out, wl)
        os.makedirs(d, exist_ok=True)
        return os.path.join(d, name)

    def run(self, wl, cfg, phases, global_opts=(), at_end=None):
        """Fresh devices, then each phase [(job name, [options])] in turn
        on them; returns a record with the samples, phases and fio
        figures, and at_end(stack)'s result, if given, taken before the
        devices go."""
        rec = {"system": cfg["name"], "label": cfg["label"],
               "kind": cfg["kind"], "unit_sectors": cfg["unit"]}
        print(f"# {wl}: {cfg['label']}", flush=True)
        klog0 = len(bl.kernel_log_lines())
        with bl.Stack(self.p, cfg, prefix="wl_") as st:
            rec["table"] = st.dev.table()
            sm = Sampler(st)
            rec["phases"] = []
            for k, jobs in enumerate(phases):
                fj = self.path(wl, f"fio-{cfg['name']}-{k}.json")
                figs, t0, t1, cmd = run_fio(sm, jobs, fj, self.p.sample,
                                            global_opts)
                ph = {"t_popen": t0, "t_end": t1, "jobs": figs,
                      "fio": cmd[3:]}
                ph["t_start"] = (first_read_t(sm.samples, t0)
                                 if sm.samples else t0)
                rec["phases"].append(ph)
            if at_end is not None:
                rec["at_end"] = at_end(st)
        rec["samples"] = sm.samples
        rec["kernel_log"] = [line for line in bl.kernel_log_lines()[klog0:]
                             if any(w in line for w in (
                                 "hottier", "device-mapper", "WARNING",
                                 "BUG", "kcopyd", "cache"))]
        return rec


def iolog_opt(runner, wl, cfg, job):
    path = os.path.join(runner.workdir, f"{wl}-{cfg['name']}-{job}.iolog")
    if os.path.exists(path):
        os.unlink(path)
    return path


def unit_list(p):
    return sorted({p.extent * bl.SECTOR, 4096, 65536})


# --- the workloads ----------------------------------------------------------

def wl_moving(r):
    p, S = r.p, r.p.seconds
    res = {"systems": {}}
    for cfg in r.systems():
        logs = [iolog_opt(r, "moving", cfg, x) for x in ("a", "b")]
        phases = [[("zoned_a", [*ZIPF[:3], f"--random_distribution={ZONED_A}",
                                "--time_based", f"--runtime={S}",
                                f"--write_iolog={logs[0]}"])],
                  [("zoned_b", [*ZIPF[:3], f"--random_distribution={ZONED_B}",
                                "--time_based", f"--runtime={S}",
                                f"--write_iolog={logs[1]}"])]]
        rec = r.run("moving", cfg, phases)
        counts = [bl.read_offsets(x) for x in logs]
        both = counts[0] + counts[1]
        cap = p.usable_sectors * bl.SECTOR
        rec["oracle"] = {"phase_a": bl.oracle(counts[0], cap, unit_list(p)),
                         "phase_b": bl.oracle(counts[1], cap, unit_list(p)),
                         "whole_run": bl.oracle(both, cap, unit_list(p))}
        for x in logs:
            os.unlink(x)
        if rec["samples"]:
            ph = [{"t_start": x["t_start"], "t_end": x["t_end"]}
                  for x in rec["phases"]]
            rec["figures"] = {k: moving_figures(rec["samples"], ph, k)
                              for k in ("hit_ratio", "ssd_share")}
        res["systems"][cfg["name"]] = rec
    res["common_level"] = {k: common_level(res["systems"], k)
                           for k in ("hit_ratio", "ssd_share")}
    return res


def wl_streaming(r):
    p, S = r.p, r.p.seconds
    hdd_bytes = p.hdd_mb << 20
    files = stream_files(hdd_bytes)
    weights = zipf_weights(len(files), STREAM_ZIPF_S)
    # Far more than the HDD can serve in S s: fio stops at S.
    per = max(64 << 20, 2 * S * (64 << 20) // STREAM_LISTENERS)
    streams = [listener_reads(files, weights, i, per)
               for i in range(STREAM_LISTENERS)]
    logs = []
    for i, reads in enumerate(streams):
        path = os.path.join(r.workdir, f"streaming-listener{i}.iolog")
        with open(path, "w") as f:
            f.write(iolog_text(reads))
        logs.append(path)
    res = {"systems": {}, "files": [{"start": a, "length": b,
                                     "weight": round(w, 4)}
                                    for (a, b), w in zip(files, weights)]}
    unit = p.extent * bl.SECTOR
    for cfg in r.systems():
        lat = os.path.join(r.workdir, f"streaming-{cfg['name']}")
        for old in glob.glob(lat + "*"):
            os.unlink(old)
        jobs = [(f"listener{i}", [f"--read_iolog={logs[i]}",
                                  "--replay_redirect={dev}",
                                  "--replay_no_stall=1", "--iodepth=1",
                                  f"--runtime={2 * S}",
                                  f"--write_lat_log={lat}-l{i}",
                                  "--log_offset=1", "--log_unix_epoch=1"])
                for i in range(STREAM_LISTENERS)]

        def top(st):
            # The replicas at the end: which files the policy holds.
            if cfg["kind"] != "hottier":
                return None
            return resident_files(st.dev.message("top", "1000").stdout
                                  .splitlines(), files, unit)
        rec = r.run("streaming", cfg, [jobs], at_end=top)
        timed = []
        for x in sorted(glob.glob(lat + "-l*_lat.*.log")):
            with open(x) as f:
                timed += offset_log_reads(f.read().splitlines())
        for x in glob.glob(lat + "*"):     # fio's clat and slat logs too
            os.unlink(x)
        held = rec.pop("at_end")
        if held is not None:
            rec["resident_files"] = {str(k): v for k, v in held.items()}
        # The reads each listener replayed: the first ios of its stream.
        ext = collections.Counter()
        jobs_fig = rec["phases"][0]["jobs"]
        for i, j in enumerate(jobs_fig):
            for o, n in streams[i][:j["read"]["ios"]]:
                ext[(o, n)] += 1
        cap = p.usable_sectors * bl.SECTOR
        fo = bl.file_oracle(ext, files, cap)
        rec["oracle"] = {"files": {k: fo[k] for k in ("oracle",
                                                      "files_placed",
                                                      "bytes_read")},
                         "units": bl.oracle_bytes(ext, cap, unit_list(p))}
        rec["bytes_read"] = sum(j["read"]["bw_bytes"] * j["read"]["runtime_ms"]
                                / 1000 for j in jobs_fig)
        rec["bw_mib_s"] = round(sum(j["read"]["bw_bytes"] for j in jobs_fig)
                                / 2 ** 20, 2)
        if rec["samples"]:
            ph = rec["phases"][0]
            st = steady(rec["samples"], ph["t_start"], ph["t_end"])
            whole = window(rec["samples"], ph["t_start"], ph["t_end"] + 60)
            # The oracle's share of the same reads the steady share counts:
            # its files (placed from the whole run's reads) against the
            # reads completed between the steady window's two samples.
            u0, u1 = (rec["samples"][index_at(rec["samples"], t)]["unix_ms"]
                      for t in (st["t0"], st["t1"]))
            sreads = [x for x in timed if u0 < x[0] <= u1]
            so = placed_share(sreads, files, fo["files_placed"])
            rec["figures"] = {"steady_ssd_share": st["ssd_share"],
                              "steady_hit_ratio": st["hit_ratio"],
                              "ssd_share": whole["ssd_share"],
                              "hit_ratio": whole["hit_ratio"],
                              "oracle": fo["oracle"],
                              "steady_oracle": so,
                              "steady_reads_logged": len(sreads),
                              "steady_over_oracle": (
                                  st["ssd_share"] / so
                                  if st["ssd_share"] is not None
                                  and so else None),
                              "steady_over_whole_run_oracle": (
                                  st["ssd_share"] / fo["oracle"]
                                  if st["ssd_share"] is not None
                                  and fo["oracle"] else None)}
        res["systems"][cfg["name"]] = rec
    for x in logs:
        os.unlink(x)
    return res


def wl_backup(r):
    p, S = r.p, r.p.seconds
    res = {"systems": {}}
    for cfg in r.systems(("hottier", "cache")):
        runs = {}
        for variant in ("alone", "scan"):
            lat = os.path.join(r.workdir, f"backup-{cfg['name']}-{variant}")
            for old in glob.glob(lat + "*"):
                os.unlink(old)
            zlog = iolog_opt(r, "backup", cfg, variant)
            jobs = [("zipf", [*ZIPF, "--time_based", f"--runtime={2 * S}",
                              f"--write_lat_log={lat}-zipf",
                              "--log_unix_epoch=1",
                              f"--write_iolog={zlog}"])]
            if variant == "scan":
                jobs.append(("scan", ["--rw=read", f"--bs={SCAN_BS}",
                                      "--iodepth=1", f"--startdelay={S}",
                                      f"--runtime={S}",
                                      f"--write_lat_log={lat}-scan",
                                      "--log_unix_epoch=1"]))
            c = dict(cfg, name=f"{cfg['name']}-{variant}")
            rec = r.run("backup", c, [jobs])
            rec["variant"] = variant
            with open(glob.glob(f"{lat}-zipf_lat.*.log")[0]) as f:
                rec["_zstart"] = log_span(f.read().splitlines())[0]
            if variant == "scan":
                with open(glob.glob(f"{lat}-scan_lat.*.log")[0]) as f:
                    scan_lines = f.read().splitlines()
                rec["scan_span_ms"] = log_span(scan_lines)
                rec["scan_bytes"] = sum(int(x.split(",")[3])
                                        for x in scan_lines if x.strip())
            counts = bl.read_offsets(zlog)
            rec["oracle"] = bl.oracle(counts, p.usable_sectors * bl.SECTOR,
                                      unit_list(p))
            os.unlink(zlog)
            for old in glob.glob(lat + "*"):
                os.unlink(old)
            runs[variant] = rec
        a, s = runs["alone"], runs["scan"]
        t0, t1 = s["scan_span_ms"]
        fig = {"scan_s": None}
        if t0 is not None:
            # The scan's span, and the same span from the zipf job's
            # first read in the run without it.
            shift = a["_zstart"] - s["_zstart"]
            ws = unix_window(s["samples"], t0, t1)
            wa = unix_window(a["samples"], t0 + shift, t1 + shift)
            unit = p.extent * bl.SECTOR
            scan_bios = s["scan_bytes"] // min(unit, SCAN_BYTES)
            during = zipf_ratio_beside_scan(
                ws["hits"], ws["misses"], scan_bios, ws["used_mean"] * unit
                / (p.hdd_mb << 20))
            alone = bl.ratio(wa["hits"], wa["misses"])
            fig = {"scan_s": round((t1 - t0) / 1000, 1),
                   "scan_fraction": round(s["scan_bytes"]
                                          / (p.hdd_mb << 20), 3),
                   "scan_bios": scan_bios,
                   "zipf_hit_ratio_during_scan": during["ratio"],
                   "scan_hits_estimated": during["scan_hits"],
                   "hit_ratio_during_scan_with_scan_reads":
                       bl.ratio(ws["hits"], ws["misses"]),
                   "zipf_hit_ratio_same_span_alone": alone,
                   "zipf_reads_during_scan": during["zipf_reads"],
                   "zipf_reads_same_span_alone": wa["hits"] + wa["misses"],
                   "promotions_during_scan": ws["promotions"],
                   "promotions_same_span_alone": wa["promotions"],
                   "promotions_by_scan": ws["promotions"] - wa["promotions"],
                   "during_over_alone": (during["ratio"] / alone
                                         if during["ratio"] is not None
                                         and alone else None)}
        for rec in runs.values():
            del rec["_zstart"]
        res["systems"][cfg["name"]] = {"runs": runs, "figures": fig,
                                       "label": cfg["label"],
                                       "kind": cfg["kind"]}
    return res


def wl_softlayer(r):
    S = r.p.seconds
    res = {"systems": {}}
    mixes = {"read": ["--rw=randread"],
             "mix70": ["--rw=randrw", "--rwmixread=70"]}
    for cfg in r.systems():
        recs = {}
        for mix, opts in mixes.items():
            c = dict(cfg, name=f"{cfg['name']}-{mix}")
            rec = r.run("softlayer", c, [[(mix, [
                *opts, "--bs=8k", "--iodepth=128", "--time_based",
                f"--runtime={S}"])]])
            j = rec["phases"][0]["jobs"][0]
            rec["figures"] = {
                "read_iops": j["read"]["iops"],
                "write_iops": j["write"]["iops"],
                "iops": round(j["read"]["iops"] + j["write"]["iops"], 1),
                "read_p99_ms": j["read"]["p99_ms"],
                "write_p99_ms": j["write"]["p99_ms"]}
            if rec["samples"]:
                ph = rec["phases"][0]
                rec["figures"]["hit_ratio"] = window(
                    rec["samples"], ph["t_start"], ph["t_end"] + 60
                )["hit_ratio"]
            recs[mix] = rec
        res["systems"][cfg["name"]] = {"runs": recs, "label": cfg["label"],
                                       "kind": cfg["kind"]}
    return res


def wl_capture(r):
    p, S = r.p, r.p.seconds
    res = {"systems": {}}
    cfgs = r.systems(("linear", "hottier"))
    budget = dict(cfgs[1], name="hottier-budget",
                  label=f"dm-hottier, migration_budget_us {p.budget_us}",
                  hottier_args=" ".join(
                      [p.hottier_args, "migration_budget_us",
                       str(p.budget_us)]).strip())
    cfgs.append(budget)
    cfgs += r.systems(("cache",))
    rate = p.capture_rate_kib * 1024
    for cfg in cfgs:
        jobs = [("zipf", [*ZIPF, "--time_based", f"--runtime={S}"]),
                ("capture", ["--rw=write", "--bs=256k", "--iodepth=1",
                             f"--rate={p.capture_rate_kib}k",
                             "--offset=75%", "--size=25%",
                             "--time_based", f"--runtime={S}"])]
        rec = r.run("capture", cfg, [jobs])
        z, w = rec["phases"][0]["jobs"]
        rec["figures"] = {
            "writer_bw_kib_s": round(w["write"]["bw_bytes"] / 1024, 1),
            "writer_target_kib_s": p.capture_rate_kib,
            "writer_held": round(w["write"]["bw_bytes"] / rate, 3),
            "writer_p99_ms": w["write"]["p99_ms"],
            "reader_iops": z["read"]["iops"],
            "reader_p99_ms": z["read"]["p99_ms"]}
        if rec["samples"]:
            sm = rec["samples"]
            rec["figures"]["promotions"] = (sm[-1]["promotions"]
                                            - sm[0]["promotions"])
            ph = rec["phases"][0]
            rec["figures"]["steady_hit_ratio"] = steady(
                sm, ph["t_start"], ph["t_end"])["hit_ratio"]
        res["systems"][cfg["name"]] = rec
    return res


WORKLOADS = {"moving": wl_moving, "streaming": wl_streaming,
             "backup": wl_backup, "softlayer": wl_softlayer,
             "capture": wl_capture}

DEFINITIONS = {
    "hit_ratio": "read hits / (hits + misses) from the status counters "
                 "(dm-hottier's read_hits count replica reads routed "
                 "to either member)",
    "ssd_share": "reads the SSD served / reads: dm-hottier "
                 "replica_reads_ssd, dm-cache read hits",
    "steady": "the last third of a run (of a phase for moving)",
    "oracle": "reads (streaming: bytes) of the most read units (streaming: "
              "files, by bytes read per byte) that fit in the usable SSD "
              "/ all reads, from the run's own offset stream",
    "steady_oracle": "streaming: the share of the bytes read in the "
                     "steady window (fio's per-read log, between the "
                     "window's two status samples) that the oracle's "
                     "files hold; steady_over_oracle is the steady SSD "
                     "share over it, the same reads on both sides",
    "fill_s": "first status sample with every slot or block used",
    "pre_fill": "ratio over the fill window (a sixth of a phase, at least "
                f"{WARM_WINDOW_S} s) before fill_s",
    "post_fill_min": "the lowest ratio over a fill window ending after "
                     "fill_s, up to the end of the phase it filled in "
                     "(of the run if less than a window is left)",
    "time_to_90_b_s": f"seconds from phase B's first read until the ratio of "
                      f"the previous {WARM_WINDOW_S} s reaches "
                      f"{WARM_FRACTION} x phase B's steady ratio",
    "common_level": f"moving, beside the goal: {WARM_FRACTION} x the lower "
                    "of dm-hottier's and smq's steady-B ratios, and each "
                    "one's seconds from phase B's first read until its "
                    f"ratio over {WARM_WINDOW_S} s reaches it",
    "zipf_hit_ratio_during_scan": "hit ratio (status counters) between "
                                  "the samples around the scan's first and "
                                  "last read, its reads taken out: all as "
                                  "reads, as hits a share equal to the "
                                  "device's share resident (an estimate: "
                                  "the status does not tell the jobs "
                                  "apart)",
    "zipf_hit_ratio_same_span_alone": "hit ratio over the same span (from "
                                      "the zipf job's first read) of the "
                                      "run without the scan",
    "promotions_by_scan": "promotions while the scan ran minus those of "
                          "the same span in the run without the scan",
    "writer_held": "the capture writer's bandwidth (fio) / its rate",
}


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--only", default=",".join(WORKLOADS),
                    help="comma list of " + ",".join(WORKLOADS))
    ap.add_argument("--seconds", type=int, default=30)
    ap.add_argument("--extent", type=int, default=128,
                    help="dm-hottier extent (and dm-cache block), sectors")
    ap.add_argument("--ssd-mb", type=int, default=32)
    ap.add_argument("--hdd-mb", type=int, default=256)
    ap.add_argument("--hottier-args", default="")
    ap.add_argument("--budget-us", type=int, default=20000,
                    help="capture: dm-hottier's migration_budget_us")
    ap.add_argument("--capture-rate-kib", type=int, default=2048)
    ap.add_argument("--sample", type=float, default=1.0)
    ap.add_argument("--out", default=os.environ.get("HOTTIER_RESULTS", "."))
    p = ap.parse_args()
    p.usable_sectors = p.ssd_mb * 2048
    if p.extent & (p.extent - 1) or not 64 <= p.extent <= 2097152:
        sys.exit(f"extent {p.extent}: a power of two from 64 sectors")
    if p.usable_sectors % p.extent or p.usable_sectors % 128:
        sys.exit("the usable SSD must be a whole number of extents")
    p.hottier_ssd_sectors = bl.hottier_ssd_sectors(p.usable_sectors,
                                                   p.extent)
    p.ssd_nullb_mb = -(-p.hottier_ssd_sectors // 2048)
    names = [n for n in p.only.split(",") if n]
    for n in names:
        if n not in WORKLOADS:
            sys.exit(f"unknown workload {n}: {', '.join(WORKLOADS)}")
    for mod in ("dm-mod", "dm-cache", "dm-cache-smq"):
        devices.modprobe(mod)
    devices.modprobe("null_blk", "nr_devices=0")
    devices.run("fio", "--version")
    r = Runner(p)
    rc = 0
    for n in names:
        t0 = time.monotonic()
        params = {"seconds": p.seconds, "extent_sectors": p.extent,
                  "ssd_usable_mb": p.ssd_mb, "hdd_mb": p.hdd_mb,
                  "slots": p.usable_sectors // p.extent,
                  "hottier_args": p.hottier_args, "sample_s": p.sample,
                  "hdd_latency_ms": bl.HDD_LATENCY_MS,
                  "ssd_latency_us": bl.SSD_LATENCY_US,
                  "kernel": os.uname().release}
        if n == "capture":
            params.update(budget_us=p.budget_us,
                          capture_rate_kib=p.capture_rate_kib)
        try:
            res = WORKLOADS[n](r)
            res["problems"] = []
        except Exception as e:      # one workload's failure is reported
            import traceback
            traceback.print_exc()
            res = {"systems": {}, "problems": [f"{n}: {e!r}"]}
            rc = 1
        res.update(workload=n, params=params, definitions=DEFINITIONS,
                   elapsed_s=round(time.monotonic() - t0, 1),
                   description=WORKLOAD_TEXT[n])
        path = r.path(n, f"{n}.json")
        with open(path, "w") as f:
            json.dump(res, f, indent=1)
        print(f"{n}: {res['elapsed_s']} s, {path}", flush=True)
        print(json.dumps(summary(n, res), indent=1), flush=True)
    return rc


def summary(n, res):
    """The figures of each system, for the log."""
    out = {}
    for name, s in res.get("systems", {}).items():
        if "figures" in s:
            out[name] = s["figures"]
        elif "runs" in s:
            out[name] = {k: v.get("figures") for k, v in s["runs"].items()}
    return out


WORKLOAD_TEXT = {
    "moving": f"4k randread iodepth 16, {ZONED_A} for S s then {ZONED_B} "
              "for S s on the same device",
    "streaming": f"{STREAM_LISTENERS} listeners replaying generated iologs: "
                 f"files {STREAM_FILE_MIB[0]}-{STREAM_FILE_MIB[1]} MiB, "
                 f"zipf({STREAM_ZIPF_S:g}) popularity, each read whole in "
                 f"{STREAM_BS >> 10} KiB reads at iodepth 1, 2 S s",
    "backup": "4k randread zipf:1.2 iodepth 16 for 2 S; with a sequential "
              f"{SCAN_BS} read pass over the device from S (at most S s) "
              "and without it",
    "softlayer": "8k randread iodepth 128 (S s); 8k randrw 70/30 iodepth "
                 "128 (S s), fresh devices each",
    "capture": "4k randread zipf:1.2 iodepth 16 beside a sequential 256k "
               "writer at a fixed rate (last quarter of the device), S s",
}


if __name__ == "__main__":
    sys.exit(main())
