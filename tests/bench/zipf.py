"""Hit ratio on a zipf workload: dm-hottier against dm-cache smq and the
oracle, side by side in one guest boot (scripts/bench-zipf.sh runs it).

The workload is DESIGN.md's "Performance" one: an emulated HDD (null_blk,
memory backed, 4 ms per I/O in timer mode, queue depth 1) and SSD (100 us,
depth 32); fio 4k random reads, random_distribution=zipf:1.2, iodepth 16,
libaio, direct, randseed 4242, over the whole HDD, for --seconds.

Each configuration gets fresh devices of the same sizes, made the same way:

  hottier   <hdd> <ssd>, extent --extent sectors;
  cache     dm-cache smq writethrough, block size = the extent;
  cache64k  dm-cache smq writethrough, 64 KiB blocks (the same run as
            "cache" when the extent is 64 KiB).

Equal capacity: every configuration has --ssd-mb MiB of slots or cache
blocks. dm-hottier's SSD also holds its metadata area (superblock and slot
map, rounded up to an extent), so its SSD is that much larger; dm-cache's
metadata lives on a separate small null_blk with the SSD's latency. Both
SSDs are a dm-linear of the exact length over a null_blk of the same size
(null_blk sizes are whole MiB), so both stacks are alike.

The oracle is the best hit ratio of a static placement: the most read
units that fit in the usable SSD, counted from fio's own offset stream
(write_iolog) of the same run, at the extent, at 4 KiB and at 64 KiB.
"oracle_cold" also charges one miss for the first read of each placed
unit (what a cache that starts empty cannot avoid).

Runs inside the guest as root, after dm-mod, dm-cache, dm-cache-smq,
null_blk (nr_devices=0) and dm-hottier are loaded. Python standard library
only. Prints one report and writes zipf.json to --out (default:
$HOTTIER_RESULTS); exits 1 if a configuration misbehaved (see "problems").
"""

import argparse
import json
import os
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
# The devices, stacks, status parsing and oracle, shared with workloads.py
# (benchlib puts tests/lib, where devices is, on the path).
from benchlib import (  # noqa: E402,F401
    SECTOR, HDD_LATENCY_MS, SSD_LATENCY_US, CACHE_META_MB, HOTTIER_INFO,
    CACHE_INFO, DmStatusReader, round_up, hottier_meta_sectors,
    hottier_slots, hottier_ssd_sectors, parse_status, ratio,
    kernel_log_lines, Stack, read_offsets, oracle, unit_name, window_ratio,
    align, run_sampled)
import devices  # noqa: E402

BIN_S = 10              # hit ratio over time: one row per BIN_S seconds
WARM_WINDOW_S = 5       # warm-up: hit ratio over a sliding window this long
WARM_FRACTION = 0.9     # ... reaching this fraction of the final hit ratio

FIO_JOB = ["--rw=randread", "--bs=4k", "--ioengine=libaio", "--iodepth=16",
           "--direct=1", "--random_distribution=zipf:1.2",
           "--randseed=4242", "--time_based"]


def run_fio(path, seconds, iolog, jsonout, sample_s, status):
    """fio in the background; status() sampled every sample_s seconds from
    just before fio starts until it ends. Returns (fio job, samples)."""
    cmd = ["fio", "--name=zipf", f"--filename={path}", *FIO_JOB,
           f"--runtime={seconds}", f"--write_iolog={iolog}",
           "--output-format=json", f"--output={jsonout}"]
    samples = [dict(t=0.0, **status())]
    t0 = time.monotonic()

    def take():
        samples.append(dict(t=round(time.monotonic() - t0, 3), **status()))

    rc, out, err = run_sampled(cmd, sample_s, take)
    take()
    if rc:
        raise RuntimeError(f"fio failed ({rc}): {err}{out}")
    with open(jsonout) as f:
        job = json.load(f)["jobs"][0]
    return job, samples


def analyse(samples, seconds):
    """Hit ratio per BIN_S bin, final (steady) hit ratio, warm-up time.
    Times are from fio's first read (see align())."""
    last = samples[-1]
    ts = [s["t"] for s in samples]

    def index_at(t):        # the last sample at or before t
        i = 0
        while i + 1 < len(ts) and ts[i + 1] <= t + 1e-6:
            i += 1
        return i

    # Bin boundaries: the samples at BIN_S, 2 BIN_S, ...; the last bin runs
    # to the sample taken after fio ended (up to 1.5 BIN_S long).
    # fio issues reads for `seconds` from its first one, then waits for the
    # last ones (seconds, under TCG with a slow HDD): that tail goes into
    # the last bin and the final window, but does not stretch them in time.
    run_end = min(ts[-1], seconds)
    ends = [index_at(t + 0.5) for t in range(BIN_S, int(run_end), BIN_S)
            if t < run_end - BIN_S / 2]
    ends.append(len(samples) - 1)
    bins = []
    start = 0
    for j in ends:
        if j <= start:
            continue
        a, b = samples[start], samples[j]
        reads = (b["read_hits"] + b["read_misses"]
                 - a["read_hits"] - a["read_misses"])
        dt = b["t"] - a["t"]
        bins.append({"t_end": round(b["t"], 1),
                     "hit_ratio": window_ratio(samples, start, j),
                     "iops": round(reads / dt) if dt else None,
                     "used": b["used"], "promotions": b["promotions"],
                     "demotions": b["demotions"]})
        start = j
    # Final: the last max(10 s, min(30 s, a fifth of the run)) of the run.
    final_w = max(10, min(30, seconds / 5))
    end = len(samples) - 1
    fi = index_at(run_end - final_w)
    final = window_ratio(samples, fi, end)
    warm = warm_reads = None
    if final:
        for i in range(1, len(samples)):
            j = index_at(samples[i]["t"] - WARM_WINDOW_S)
            if samples[i]["t"] - samples[j]["t"] < WARM_WINDOW_S - 0.5:
                continue    # the first seconds: no full window yet
            r = window_ratio(samples, j, i)
            if r is not None and r >= WARM_FRACTION * final:
                warm = samples[i]["t"]
                warm_reads = (samples[i]["read_hits"]
                              + samples[i]["read_misses"])
                break
    full = next((s["t"] for s in samples
                 if s["total"] and s["used"] >= s["total"]), None)
    return {"overall_hit_ratio": ratio(last["read_hits"], last["read_misses"]),
            "final_window_s": final_w, "final_hit_ratio": final,
            "warmup_s": warm, "warmup_reads": warm_reads,
            "ssd_full_s": full, "bins": bins}


def run_config(p, cfg, workdir):
    print(f"# {cfg['label']}: {cfg['unit']}-sector units, {p.seconds} s",
          flush=True)
    iolog = os.path.join(workdir, f"{cfg['name']}.iolog")
    fio_json = os.path.join(p.out, f"fio-{cfg['name']}.json")
    klog_before = len(kernel_log_lines())
    with Stack(p, cfg) as st:
        table = st.dev.table()
        job, samples = run_fio(st.dev.path, p.seconds, iolog, fio_json,
                               p.sample, st.status)
    klog = kernel_log_lines()[klog_before:]
    counts = read_offsets(iolog)
    rd = job["read"]
    res = {
        "label": cfg["label"], "kind": cfg["kind"], "unit_sectors": cfg["unit"],
        "table": st.table_line, "table_loaded": table,
        "iops": round(rd["iops"], 1), "fio_ios": rd["total_ios"],
        "fio_error": job.get("error", 0),
        "clat_mean_ms": round(rd["clat_ns"]["mean"] / 1e6, 3),
        "clat_p99_ms": round(rd["clat_ns"]["percentile"]["99.000000"] / 1e6, 3),
        "iolog_reads": sum(counts.values()),
        "final_status": samples[-1],
        "oracle": oracle(counts, p.usable_sectors * SECTOR,
                         sorted({cfg["unit"] * SECTOR, 4096, 65536})),
        "kernel_log": [line for line in klog if any(
            w in line for w in ("hottier", "device-mapper", "WARNING", "BUG",
                                "kcopyd", "null_blk"))],
        "samples_raw": samples,
    }
    res.update(align(samples))
    res.update(analyse(res["samples"], p.seconds))
    res["oracle_at_unit"] = res["oracle"][unit_name(cfg["unit"] * SECTOR)]
    if p.keep_iologs:
        os.replace(iolog, os.path.join(p.out, os.path.basename(iolog)))
    else:
        os.unlink(iolog)
    return res


def problems_of(name, r, p):
    out = []
    fs = r["final_status"]
    if r["fio_error"]:
        out.append(f"{name}: fio reported error {r['fio_error']}")
    if fs["total"] != p.usable_sectors // r["unit_sectors"]:
        out.append(f"{name}: {fs['total']} slots/blocks, expected "
                   f"{p.usable_sectors // r['unit_sectors']}")
    if fs["read_hits"] == 0:
        out.append(f"{name}: no read served by the SSD (read_hits 0, "
                   f"promotions {fs['promotions']})")
    if abs(r["iolog_reads"] - r["fio_ios"]) > 0.01 * max(1, r["fio_ios"]):
        out.append(f"{name}: iolog has {r['iolog_reads']} reads, fio counted "
                   f"{r['fio_ios']}")
    if r["kind"] == "hottier" and fs.get("ssd_flush_errors"):
        out.append(f"{name}: ssd_flush_errors {fs['ssd_flush_errors']}")
    for line in r["kernel_log"]:
        if any(w in line for w in ("WARNING", "BUG", "rror", "fail")):
            out.append(f"{name}: kernel: {line}")
    return out


def pct(x):
    return "-" if x is None else f"{100 * x:.1f}"


def report(p, runs, names):
    h = runs["hottier"]
    print()
    print(f"zipf bench: {p.seconds} s per configuration; HDD {p.hdd_mb} MiB "
          f"({HDD_LATENCY_MS:g} ms, depth 1); SSD usable {p.ssd_mb} MiB "
          f"({SSD_LATENCY_US} us, depth 32); extent {p.extent} sectors "
          f"({unit_name(p.extent * SECTOR)}): {p.usable_sectors // p.extent} "
          f"slots, hottier SSD {p.hottier_ssd_sectors} sectors incl. "
          f"{p.hottier_ssd_sectors - p.usable_sectors} of metadata")
    print("fio: 4k randread, zipf:1.2, iodepth 16, libaio, direct, "
          "randseed 4242, whole HDD")
    print(f"hottier table: {h['table_loaded']}")
    print()
    hdr = (f"{'configuration':<22}{'unit':>6}{'IOPS':>7}{'p99 ms':>8}"
           f"{'hit%':>6}{'final%':>7}{'oracle%':>8}{'final/or':>9}"
           f"{'warm-up':>8}{'(reads)':>9}{'full at':>8}")
    print(hdr)
    for name in names:
        r = runs[name]
        o = r["oracle_at_unit"]["oracle"]
        fo = (f"{r['final_hit_ratio'] / o:.3f}"
              if o and r["final_hit_ratio"] is not None else "-")
        warm = "-" if r["warmup_s"] is None else f"{r['warmup_s']:.0f} s"
        wr = "-" if r["warmup_reads"] is None else str(r["warmup_reads"])
        full = "-" if r["ssd_full_s"] is None else f"{r['ssd_full_s']:.0f} s"
        print(f"{r['label']:<22}{unit_name(r['unit_sectors'] * SECTOR):>6}"
              f"{r['iops']:>7.0f}{r['clat_p99_ms']:>8.1f}"
              f"{pct(r['overall_hit_ratio']):>6}{pct(r['final_hit_ratio']):>7}"
              f"{pct(o):>8}{fo:>9}{warm:>8}{wr:>9}{full:>8}")
    if p.extent == 128:
        print(f"{'dm-cache smq 64KiB':<24}  (the same run as the equal-block "
              "one: the extent is 64 KiB)")
    print()
    print("oracle (static top-N placement from each run's own fio offsets; "
          "cold: first read of each unit a miss):")
    for name in names:
        r = runs[name]
        cells = "  ".join(f"{u} {pct(v['oracle'])}% (cold {pct(v['oracle_cold'])}%)"
                          for u, v in r["oracle"].items())
        print(f"  {r['label']:<22}{r['fio_ios']:>8} reads  {cells}")
    print()
    def secs(x):
        return "-" if x is None else f"{x:.0f} s"

    for name in names[1:]:
        r = runs[name]
        print(f"hottier / {r['label']}: IOPS x{h['iops'] / r['iops']:.2f}, "
              f"final hit {pct(h['final_hit_ratio'])}% vs "
              f"{pct(r['final_hit_ratio'])}%, warm-up "
              f"{secs(h['warmup_s'])} vs {secs(r['warmup_s'])} "
              f"({h['warmup_reads']} vs {r['warmup_reads']} reads)")
    print(f"final = hit ratio of the last {h['final_window_s']:g} s; warm-up = "
          f"first time the hit ratio of the previous {WARM_WINDOW_S} s reaches "
          f"{WARM_FRACTION:.0%} of final (from fio's first read; reads: fio "
          "reads by then); full at = all slots/blocks used.")
    print()
    print(f"per {BIN_S} s interval: hit%, (slots or blocks used), IOPS")
    print(f"{'t (s)':>8}" + "".join(f"{runs[n]['label']:>25}" for n in names))
    nb = max(len(runs[n]["bins"]) for n in names)
    for i in range(nb):
        row = f"{i * BIN_S:>4}-" + (f"{(i + 1) * BIN_S:<3}" if i < nb - 1
                                    else "end")
        for n in names:
            b = runs[n]["bins"]
            row += (f"{pct(b[i]['hit_ratio']):>9} ({b[i]['used']:>5}) "
                    f"{b[i]['iops']:>5}/s" if i < len(b) else f"{'':>25}")
        print(row)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--seconds", type=int, default=150)
    ap.add_argument("--extent", type=int, default=128,
                    help="dm-hottier extent (and dm-cache block) in sectors")
    ap.add_argument("--ssd-mb", type=int, default=128,
                    help="usable SSD: slots or cache blocks, MiB")
    ap.add_argument("--hdd-mb", type=int, default=0, help="default 8 x SSD")
    ap.add_argument("--hottier-args", default="",
                    help="optional key value pairs for the hottier table")
    ap.add_argument("--sample", type=float, default=1.0,
                    help="status sampling period, seconds")
    ap.add_argument("--only", default="",
                    help="comma list of hottier,cache,cache64k to run")
    ap.add_argument("--keep-iologs", action="store_true")
    ap.add_argument("--out", default=os.environ.get("HOTTIER_RESULTS", "."))
    p = ap.parse_args()
    p.hdd_mb = p.hdd_mb or 8 * p.ssd_mb
    p.usable_sectors = p.ssd_mb * 2048
    if p.extent & (p.extent - 1) or not 64 <= p.extent <= 2097152:
        sys.exit(f"extent {p.extent}: a power of two from 64 sectors")
    if p.usable_sectors % p.extent or p.usable_sectors % 128:
        sys.exit("the usable SSD must be a whole number of extents")
    p.hottier_ssd_sectors = hottier_ssd_sectors(p.usable_sectors, p.extent)
    p.ssd_nullb_mb = -(-p.hottier_ssd_sectors // 2048)
    os.makedirs(p.out, exist_ok=True)

    for mod in ("dm-mod", "dm-cache", "dm-cache-smq"):
        devices.modprobe(mod)
    devices.modprobe("null_blk", "nr_devices=0")
    targets = devices.run("dmsetup", "targets").stdout.split()
    for t in ("hottier", "cache", "linear"):
        if t not in targets:
            sys.exit(f"device-mapper target {t} is not loaded: {targets}")

    configs = [{"name": "hottier", "kind": "hottier", "unit": p.extent,
                "label": "dm-hottier"},
               {"name": "cache", "kind": "cache", "unit": p.extent,
                "label": f"dm-cache smq {unit_name(p.extent * SECTOR)}"}]
    if p.extent != 128:
        configs.append({"name": "cache64k", "kind": "cache", "unit": 128,
                        "label": "dm-cache smq 64KiB"})
    if p.only:
        keep = p.only.split(",")
        configs = [c for c in configs if c["name"] in keep]
        if not configs or configs[0]["name"] != "hottier":
            sys.exit("--only must include hottier")
    # Load fio once, so the first configuration's fio starts as fast as the
    # others' (times are from fio's first read anyway).
    devices.run("fio", "--version")
    workdir = "/tmp" if os.access("/tmp", os.W_OK) else p.out
    runs = {}
    for cfg in configs:
        runs[cfg["name"]] = run_config(p, cfg, workdir)
    names = [c["name"] for c in configs]
    if "cache64k" not in runs and "cache" in runs and p.extent == 128:
        runs_alias = {"cache64k": "cache"}
    else:
        runs_alias = {}

    problems = []
    for n in names:
        problems += problems_of(n, runs[n], p)
    report(p, runs, names)
    h = runs["hottier"]
    summary = {
        "hottier_iops": h["iops"],
        "hottier_hit_ratio": h["overall_hit_ratio"],
        "hottier_final_hit_ratio": h["final_hit_ratio"],
        "hottier_warmup_s": h["warmup_s"],
        "oracle": {u: v["oracle"] for u, v in h["oracle"].items()},
    }
    for n in names[1:]:
        r = runs[n]
        summary[n] = {
            "iops": r["iops"], "hit_ratio": r["overall_hit_ratio"],
            "final_hit_ratio": r["final_hit_ratio"], "warmup_s": r["warmup_s"],
            "hottier_over_cache_iops": round(h["iops"] / r["iops"], 3),
        }
    for alias, src in runs_alias.items():
        summary[alias] = dict(summary[src], same_run_as=src)
    result = {
        "bench": "zipf",
        "params": {"seconds": p.seconds, "extent_sectors": p.extent,
                   "ssd_usable_mb": p.ssd_mb, "hdd_mb": p.hdd_mb,
                   "hottier_ssd_sectors": p.hottier_ssd_sectors,
                   "slots": p.usable_sectors // p.extent,
                   "ssd_nullb_mb": p.ssd_nullb_mb,
                   "cache_meta_mb": CACHE_META_MB,
                   "hottier_args": p.hottier_args, "sample_s": p.sample,
                   "hdd_latency_ms": HDD_LATENCY_MS,
                   "ssd_latency_us": SSD_LATENCY_US,
                   "fio": FIO_JOB + [f"--runtime={p.seconds}"],
                   "kernel": os.uname().release},
        "definitions": {
            "final_hit_ratio": "read hits / reads over the last "
                               "max(10, min(30, seconds/5)) s of fio's "
                               "runtime (and the reads completing after it)",
            "warmup_s": f"first time from fio's first read when the hit ratio of "
                        f"the previous {WARM_WINDOW_S} s is >= "
                        f"{WARM_FRACTION} x final_hit_ratio",
            "oracle": "reads of the most read units that fit in the usable "
                      "SSD / all reads, from the run's own fio iolog",
            "oracle_cold": "the same minus one miss per placed unit"},
        "summary": summary, "runs": runs, "aliases": runs_alias,
        "problems": problems,
    }
    path = os.path.join(p.out, "zipf.json")
    with open(path, "w") as f:
        json.dump(result, f, indent=1)
    print(f"\nJSON: {path}")
    if problems:
        print("\nPROBLEMS:")
        for line in problems:
            print("  " + line)
        sys.exit(1)


if __name__ == "__main__":
    main()
