"""make bench's report: report.md, its plots and report.json, over whatever
results the benchmarks left in one directory (scripts/bench.sh runs it last,
on results/bench/).

  bench_report.py [BENCH_DIR] [--out DIR]

Reads, each where present (any may be absent):

  zipf-<extent>/zipf.json       tests/bench/zipf.py: per system (dm-hottier,
                                dm-cache smq, ...) fio's IOPS and p99, the
                                hit ratio sampled every second, the final hit
                                ratio, warm-up, and the oracle per unit size
                                (and, at 64 KiB extents, issue 14's zipf
                                goals on the last third: zipf_goals());
  zipf-<extent>/fio-<name>.json fio's own JSON of each system's run: the
                                read completion latency (clat) percentiles,
                                for the latency CDF;
  zipf-<extent>/host-load.txt   the host's load around the guest run;
  overhead*/overhead.json       tests/lib/overhead.py: IOPS against
                                dm-linear and md RAID1, and their ratios
                                (the kernel from kernel.log beside it);
  <workload>/<workload>.json    tests/bench/workloads.py (moving,
                                streaming, backup, softlayer, capture):
                                per system its figures, checked against
                                issue 14's goals (workload_goals()).

Writes into BENCH_DIR (or --out):

  report.md      a header (date, kernel, parameters), the table workload x
                 system (IOPS, p99, mean and final hit ratio, oracle,
                 final/oracle, warm-up), the goals of issue 14 with the
                 figure measured and PASS or FAIL, a table of figures per
                 workload, the overhead table, and the plots as image
                 links relative to it;
  report.json    the same figures, and the series the plots draw;
  report-*.png   hit ratio over time and latency CDF per zipf workload, IOPS
                 per system with the overhead ratios (matplotlib, Agg
                 backend; without matplotlib, report.md says the plots were
                 skipped and why);
  performance.rst  the same figures as a page for users (perf_rst.py: the
                 method, a table of figures and one of goals per workload,
                 the overhead table, the plots, the gaps), with the plots
                 it shows in performance/ beside it; make bench copies both
                 into Documentation/ (--module-version: the version and
                 commit it names).

Every figure comes from those files. Python standard library; matplotlib
for the plots only.
"""

import argparse
import datetime
import glob
import json
import os
import re
import shutil
import sys

# The demo's ratios, the same arithmetic: hits / (hits + misses), and a
# / b (None without both).
from demo_report import hit_ratio, speedup as over  # noqa: E402,F401

# hottierctl trace's text form, for the trace's section.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.dirname(os.path.abspath(__file__)))), "userspace"))
from hottier.trace import trace_lines  # noqa: E402

PNG_PREFIX = "report-"


# --- reading and arithmetic (tests/host/test_bench_report.py) -------------


def per_sample_hit_ratio(samples):
    """The hit ratio between each pair of consecutive status samples (as
    zipf.py aligns them: counters and times from fio's first read), as
    [end time, ratio]; ratio None where nothing was read."""
    return [[b["t"], hit_ratio(b["read_hits"] - a["read_hits"],
                               b["read_misses"] - a["read_misses"])]
            for a, b in zip(samples, samples[1:])]


def bin_spans(samples, bins):
    """zipf.py's bins (hit ratio and IOPS per 10 s) as [start, end, hit
    ratio, IOPS]: each bin starts where the previous one ended, the first
    at the first sample."""
    out, start = [], samples[0]["t"] if samples else 0.0
    for b in bins:
        out.append([start, b["t_end"], b["hit_ratio"], b["iops"]])
        start = b["t_end"]
    return out


def latency_cdf(fio):
    """fio's read completion latency (clat) of its first job: the
    percentiles fio reports, as [latency ms, percent of reads at or below
    it] sorted by percent, with the min, max, mean and count; None when
    the JSON has no clat percentiles."""
    clat = fio["jobs"][0]["read"].get("clat_ns") or {}
    pct = clat.get("percentile")
    if not pct:
        return None
    points = sorted([float(p), ns / 1e6] for p, ns in pct.items())
    return {"points": [[ms, p] for p, ms in points],
            "min_ms": clat["min"] / 1e6, "max_ms": clat["max"] / 1e6,
            "mean_ms": clat["mean"] / 1e6, "reads": clat["N"],
            "p50_ms": ms_or_none(pct.get("50.000000")),
            "p99_ms": ms_or_none(pct.get("99.000000"))}


def ms_or_none(ns):
    return None if ns is None else ns / 1e6


def system_row(run):
    """One row of the table from one run of zipf.json: figures as zipf.py
    computed them, and final / oracle (the oracle at the run's unit)."""
    o = run["oracle_at_unit"]
    return {"label": run["label"], "unit": unit_name(run["unit_sectors"]),
            "iops": run["iops"], "p99_ms": run["clat_p99_ms"],
            "clat_mean_ms": run["clat_mean_ms"], "reads": run["fio_ios"],
            "mean_hit_ratio": run["overall_hit_ratio"],
            "final_hit_ratio": run["final_hit_ratio"],
            "final_window_s": run["final_window_s"],
            "oracle": o["oracle"], "oracle_cold": o["oracle_cold"],
            "final_over_oracle": over(run["final_hit_ratio"], o["oracle"]),
            "warmup_s": run["warmup_s"], "warmup_reads": run["warmup_reads"],
            "ssd_full_s": run.get("ssd_full_s")}


def unit_name(sectors):
    nbytes = sectors * 512
    return (f"{nbytes >> 20}MiB" if nbytes >= 1 << 20
            else f"{nbytes >> 10}KiB")


def fio_args(params):
    """params["fio"] ("--key=value" and "--flag") as a dict."""
    out = {}
    for a in params.get("fio", []):
        k, _, v = a.lstrip("-").partition("=")
        out[k] = v or True
    return out


def modified(path):
    t = datetime.datetime.fromtimestamp(os.path.getmtime(path),
                                        datetime.timezone.utc)
    return t.strftime("%Y-%m-%d %H:%M UTC")


def read_json(path):
    with open(path) as f:
        return json.load(f)


def kernel_of_log(path):
    """The release in a guest's kernel.log ("Linux version <release> ...");
    None without one."""
    try:
        with open(path, errors="replace") as f:
            for line in f:
                m = re.search(r"Linux version (\S+)", line)
                if m:
                    return m.group(1)
    except OSError:
        pass
    return None


def load_zipf(bench_dir, rel):
    """One zipf workload (rel: "zipf-<extent>/zipf.json") with its fio
    JSON files."""
    d = os.path.dirname(os.path.join(bench_dir, rel))
    z = read_json(os.path.join(bench_dir, rel))
    w = {"name": os.path.basename(d), "source": rel,
         "modified": modified(os.path.join(bench_dir, rel)),
         "params": z["params"], "definitions": z.get("definitions", {}),
         "problems": z.get("problems", []),
         "aliases": z.get("aliases", {}), "systems": []}
    try:
        with open(os.path.join(d, "host-load.txt")) as f:
            w["host_load"] = f.read().splitlines()
    except OSError:
        w["host_load"] = []
    for name, run in z["runs"].items():
        s = {"name": name, **system_row(run),
             "steady_hit_ratio": last_third_ratio(run["samples"]),
             "oracle_64k": ((run.get("oracle") or {}).get("64KiB")
                            or {}).get("oracle"),
             "hit_ratio_per_sample": per_sample_hit_ratio(run["samples"]),
             "bins": bin_spans(run["samples"], run.get("bins", [])),
             "run_end_s": (min(run["samples"][-1]["t"],
                               z["params"]["seconds"])
                           if run["samples"] else None),
             "latency": None, "latency_source": None}
        frel = os.path.join(w["name"], f"fio-{name}.json")
        fpath = os.path.join(bench_dir, frel)
        if os.path.exists(fpath):
            try:
                s["latency"] = latency_cdf(read_json(fpath))
                s["latency_source"] = frel
            except (ValueError, KeyError, IndexError, TypeError) as e:
                s["latency_error"] = f"{frel}: {e!r}"
        w["systems"].append(s)
    return w


# overhead.py's jobs: one psync job at iodepth 1 (measure()), and 2 libaio
# jobs at iodepth 32 in paired rounds (measure_parallel()).
DEPTH1 = "1 job, iodepth 1"
PARALLEL = "2 jobs x iodepth 32"


def overhead_rows(o):
    """The rows of one overhead.json: test, I/O, base, IOPS of the base
    and of dm-hottier, the ratio (the median of the rounds' ratios for the
    paired tests), and the rounds' range."""
    rows = []
    for test, r in o.get("jobs", {}).items():
        rows.append({"test": test, "io": DEPTH1, "base": "dm-linear",
                     "base_iops": r["linear_iops"],
                     "hottier_iops": r["hottier_iops"], "ratio": r["ratio"],
                     "rounds": 1, "ratio_min": None, "ratio_max": None})
    for test, r in o.get("parallel", {}).items():
        ratios = r.get("ratios", [])
        rows.append({"test": test, "io": PARALLEL, "base": r["base"],
                     "base_iops": r["base_iops"],
                     "hottier_iops": r["hottier_iops"], "ratio": r["ratio"],
                     "rounds": len(ratios),
                     "ratio_min": min(ratios) if ratios else None,
                     "ratio_max": max(ratios) if ratios else None})
    return rows


def load_overhead(bench_dir, rel):
    path = os.path.join(bench_dir, rel)
    o = read_json(path)
    return {"name": os.path.dirname(rel), "source": rel,
            "modified": modified(path),
            "kernel": kernel_of_log(os.path.join(os.path.dirname(path),
                                                 "kernel.log")),
            "seconds": o.get("seconds"), "rows": overhead_rows(o)}


# --- issue 14's workloads and goals (tests/bench/workloads.py) -------------

WORKLOAD_NAMES = ["moving", "streaming", "backup", "softlayer", "capture"]
HOLD = 0.95             # "holds", "no dip": at least 95% of the reference
POINTS = 0.02           # "+ 2 points", "within 2%": 2 percentage points
STREAM_SHARE = 0.9      # streaming: at least 0.9 x the oracle


def last_third_ratio(samples, t_end=None):
    """read hits / reads between the sample at 2/3 of [first sample,
    t_end] (default: the last sample) and the last sample at or before
    t_end: the steady ratio ("steady is the last third of a run")."""
    if not samples:
        return None
    t0 = samples[0]["t"]
    t1 = samples[-1]["t"] if t_end is None else t_end
    cut = t1 - (t1 - t0) / 3
    a = max((s for s in samples if s["t"] <= cut + 1e-6),
            key=lambda s: s["t"], default=samples[0])
    b = max((s for s in samples if s["t"] <= t1 + 1e-6),
            key=lambda s: s["t"], default=samples[-1])
    return hit_ratio(b["read_hits"] - a["read_hits"],
                     b["read_misses"] - a["read_misses"])


def goal(workload, text, figure, value, target, ok, fmt="pct"):
    """One goal row; ok None: not decidable (a figure missing), "report":
    figures without a goal."""
    return {"workload": workload, "goal": text, "figure": figure,
            "value": value, "target": target, "fmt": fmt,
            "result": ("report" if ok == "report" else
                       "n/a" if ok is None else "PASS" if ok else "FAIL")}


def cmp_ge(a, b):
    return None if a is None or b is None else a >= b - 1e-12


def cmp_lt(a, b):
    return None if a is None or b is None else a < b


def zipf_goals(w):
    """Issue 14's zipf goal on one zipf-<extent> result: steady (last
    third) hit ratio >= smq's + 2 points and within 2 points of the oracle
    at 64 KiB, IOPS ahead of smq. Only at 64 KiB extents (the goal's)."""
    runs = {s["name"]: s for s in w["systems"]}
    h, c = runs.get("hottier"), runs.get("cache")
    if not h or not c or w["params"].get("extent_sectors") != 128:
        return []
    n = w["name"]
    hs, cs = h["steady_hit_ratio"], c["steady_hit_ratio"]
    o = h.get("oracle_64k")
    return [
        goal(n, "steady hit ratio >= smq's + 2 points",
             "dm-hottier steady hit ratio (smq's + 2 points)", hs,
             None if cs is None else cs + POINTS,
             cmp_ge(hs, None if cs is None else cs + POINTS)),
        goal(n, "within 2% of the oracle at 64 KiB",
             "dm-hottier steady hit ratio (oracle at 64 KiB - 2 points)",
             hs, None if o is None else o - POINTS,
             cmp_ge(hs, None if o is None else o - POINTS)),
        goal(n, "IOPS ahead of smq", "dm-hottier IOPS (smq's)",
             h["iops"], c["iops"],
             None if h["iops"] is None or c["iops"] is None
             else h["iops"] > c["iops"], fmt="num"),
    ]


def goal_share(name, text, desc, value, base, share):
    """A goal row: value >= share x base (n/a while either is missing)."""
    target = None if base is None else share * base
    return goal(name, text, desc, value, target, cmp_ge(value, target))


def workload_goals(w):
    """The goal rows of one workloads.py result (w: its JSON)."""
    n, sy = w["workload"], w.get("systems", {})
    h, c = sy.get("hottier", {}), sy.get("cache", {})
    rows = []
    if n == "moving":
        hf = (h.get("figures") or {}).get("hit_ratio") or {}
        cf = (c.get("figures") or {}).get("hit_ratio") or {}
        pre, post = hf.get("pre_fill"), hf.get("post_fill_min")
        rows.append(goal_share(n, "no dip: after the fill >= 0.95 x the "
                               "pre-fill ratio",
                               "dm-hottier lowest hit ratio after the fill "
                               "(0.95 x pre-fill)", post, pre, HOLD))
        th, tc = hf.get("time_to_90_b_s"), cf.get("time_to_90_b_s")
        rows.append(goal(n, "the new hot set reaches 90% of its steady "
                         "ratio faster than smq",
                         "dm-hottier seconds to 90% after the move "
                         "(smq's)", th, tc, cmp_lt(th, tc), fmt="s"))
    elif n == "streaming":
        hf = h.get("figures") or {}
        # The oracle's share of the steady window's own reads; runs from
        # before fio logged each read have only the whole run's.
        v = hf.get("steady_ssd_share")
        o = hf.get("steady_oracle", hf.get("oracle"))
        rows.append(goal_share(n, "SSD's share of sectors read >= 0.9 x "
                               "the oracle's",
                               "dm-hottier steady SSD share (0.9 x files "
                               "oracle, same reads)", v, o, STREAM_SHARE))
    elif n == "backup":
        hf = h.get("figures") or {}
        d, a = (hf.get("zipf_hit_ratio_during_scan"),
                hf.get("zipf_hit_ratio_same_span_alone"))
        rows.append(goal_share(n, "zipf hit ratio during the scan >= 0.95 "
                               "x without it",
                               "dm-hottier zipf hit ratio during the scan, "
                               "estimated (0.95 x the same span without "
                               "it)", d, a, HOLD))
        p = hf.get("promotions_by_scan")
        rows.append(goal(n, "the scan promotes nothing",
                         "dm-hottier promotions by the scan", p, 0,
                         None if p is None else p <= 0, fmt="num"))
    elif n == "softlayer":
        for name, s in sy.items():
            for mix, r in (s.get("runs") or {}).items():
                f = r.get("figures") or {}
                p99 = f"read p99 ms {num(f.get('read_p99_ms'), '.1f')}"
                if f.get("write_iops"):
                    p99 += (f", write p99 ms "
                            f"{num(f.get('write_p99_ms'), '.1f')}")
                rows.append(goal(n, "reported as IOPS and p99 latency",
                                 f"{s.get('label', name)}, {mix}: IOPS "
                                 f"({p99})", f.get("iops"), None, "report",
                                 fmt="num"))
    elif n == "capture":
        b = (sy.get("hottier-budget") or {}).get("figures") or {}
        v = b.get("writer_held")
        rows.append(goal(n, "the writer's bandwidth holds with "
                         "migration_budget_us set",
                         "writer bandwidth / its rate, dm-hottier with "
                         f"migration_budget_us {w['params'].get('budget_us')}",
                         v, HOLD, cmp_ge(v, HOLD)))
    return rows


def system_figures(w):
    """Per workload, the rows of its figure table: [system, figures...]
    and the header."""
    n, sy = w["workload"], w.get("systems", {})
    rows = []
    if n == "moving":
        head = ["system", "IOPS A", "IOPS B", "steady A", "steady B",
                "oracle A", "oracle B", "full at", "pre-fill",
                "post-fill min", "to 90% after move",
                "to the common level"]
        common = (w.get("common_level") or {}).get("hit_ratio") or {}
        for name, s in sy.items():
            ph = s.get("phases", [])
            hf = (s.get("figures") or {}).get("hit_ratio") or {}
            o = s.get("oracle", {})
            unit = unit_name(s.get("unit_sectors", 128))

            def orc(k):
                return pct(((o.get(k) or {}).get(unit) or {}).get("oracle"))
            rows.append([s.get("label", name)] + [
                num(p["jobs"][0]["read"]["iops"]) for p in ph[:2]] +
                [pct(hf.get("steady_a")), pct(hf.get("steady_b")),
                 orc("phase_a"), orc("phase_b"),
                 seconds(hf.get("fill_s")), pct(hf.get("pre_fill")),
                 pct(hf.get("post_fill_min")),
                 seconds(hf.get("time_to_90_b_s")),
                 seconds((common.get("seconds") or {}).get(name))])
    elif n == "streaming":
        head = ["system", "MiB/s", "SSD share", "files oracle",
                "steady SSD share", "steady files oracle",
                "steady / oracle", "steady / whole-run oracle"]
        for name, s in sy.items():
            f = s.get("figures") or {}
            o = ((s.get("oracle") or {}).get("files") or {}).get("oracle")
            rows.append([s.get("label", name), num(s.get("bw_mib_s"), ".1f"),
                         pct(f.get("ssd_share")), pct(o),
                         pct(f.get("steady_ssd_share")),
                         pct(f.get("steady_oracle")),
                         num(f.get("steady_over_oracle"), ".3f"),
                         num(f.get("steady_over_whole_run_oracle",
                                   f.get("steady_over_oracle")), ".3f")])
    elif n == "backup":
        head = ["system", "zipf IOPS alone", "zipf IOPS with scan",
                "scan s", "scanned", "zipf hit ratio in scan span: alone",
                "with scan (est.)", "ratio", "promotions in span: alone",
                "with scan"]
        for name, s in sy.items():
            f = s.get("figures") or {}
            runs = s.get("runs") or {}

            def ziops(v):
                ph = (runs.get(v) or {}).get("phases") or []
                return num(ph[0]["jobs"][0]["read"]["iops"]) if ph else "-"
            rows.append([s.get("label", name), ziops("alone"), ziops("scan"),
                         num(f.get("scan_s"), ".0f"),
                         pct(f.get("scan_fraction")),
                         pct(f.get("zipf_hit_ratio_same_span_alone")),
                         pct(f.get("zipf_hit_ratio_during_scan")),
                         num(f.get("during_over_alone"), ".3f"),
                         num(f.get("promotions_same_span_alone")),
                         num(f.get("promotions_during_scan"))])
    elif n == "softlayer":
        head = ["system", "8k read IOPS", "read p99 ms", "70/30 read IOPS",
                "70/30 write IOPS", "70/30 read p99 ms", "70/30 write p99 ms"]
        for name, s in sy.items():
            r = ((s.get("runs") or {}).get("read") or {}).get("figures") or {}
            m = ((s.get("runs") or {}).get("mix70") or {}).get("figures") or {}
            rows.append([s.get("label", name), num(r.get("read_iops")),
                         num(r.get("read_p99_ms"), ".1f"),
                         num(m.get("read_iops")), num(m.get("write_iops")),
                         num(m.get("read_p99_ms"), ".1f"),
                         num(m.get("write_p99_ms"), ".1f")])
    elif n == "capture":
        head = ["system", "writer KiB/s", "of rate", "writer p99 ms",
                "reader IOPS", "reader p99 ms", "promotions",
                "steady hit ratio"]
        for name, s in sy.items():
            f = s.get("figures") or {}
            rows.append([s.get("label", name),
                         num(f.get("writer_bw_kib_s")),
                         num(f.get("writer_held"), ".3f"),
                         num(f.get("writer_p99_ms"), ".1f"),
                         num(f.get("reader_iops")),
                         num(f.get("reader_p99_ms"), ".1f"),
                         num(f.get("promotions")),
                         pct(f.get("steady_hit_ratio"))])
    else:
        head = ["system"]
    return head, rows


def seconds(x):
    return "-" if x is None else f"{x:.0f} s"


def load_workload(bench_dir, name):
    rel = os.path.join(name, f"{name}.json")
    path = os.path.join(bench_dir, rel)
    w = read_json(path)
    w.setdefault("workload", name)
    w["source"], w["modified"] = rel, modified(path)
    try:
        with open(os.path.join(bench_dir, name, "host-load.txt")) as f:
            w["host_load"] = f.read().splitlines()
    except OSError:
        w["host_load"] = []
    w["goals"] = workload_goals(w)
    w["head"], w["rows"] = system_figures(w)
    return w


def goal_value(v, fmt):
    if v is None:
        return "-"
    if fmt == "pct":
        return pct(v) if v <= 1.5 else num(v, ".3f")
    if fmt == "s":
        return seconds(v)
    return num(v, ".0f") if abs(v) >= 10 or v == int(v) else num(v, ".3f")


def goal_rows(rep):
    rows = []
    for g in rep["goals"]:
        rows.append([g["workload"], g["goal"], g["figure"],
                     goal_value(g["value"], g["fmt"]),
                     goal_value(g["target"], g["fmt"]), g["result"]])
    return rows


def workload_source_line(w):
    p = w.get("params", {})
    line = (f"- `{w['source']}` (written {w['modified']}): kernel "
            f"{p.get('kernel', '-')}; {w.get('description', '')}; S = "
            f"{p.get('seconds')} s; HDD {p.get('hdd_mb')} MiB, SSD "
            f"{p.get('ssd_usable_mb')} MiB usable, extent "
            f"{p.get('extent_sectors')} sectors; hottier table arguments: "
            f"{p.get('hottier_args') or 'none (defaults)'}; took "
            f"{num(w.get('elapsed_s'))} s.")
    return with_host_load(line, w)


def extent_key(rel):
    m = re.search(r"zipf-(\d+)", rel)
    return (int(m.group(1)) if m else 0, rel)


def collect(bench_dir):
    """Everything the report shows, from the files found in bench_dir."""
    rep = {"bench_dir": os.path.abspath(bench_dir),
           "generated": datetime.datetime.now(datetime.timezone.utc)
           .strftime("%Y-%m-%d %H:%M UTC"),
           "zipf": [], "overhead": [], "workloads": [], "goals": [],
           "unreadable": []}
    zipfs = sorted((os.path.relpath(p, bench_dir) for p in
                    glob.glob(os.path.join(bench_dir, "zipf-*", "zipf.json"))),
                   key=extent_key)
    for rel in zipfs:
        try:
            rep["zipf"].append(load_zipf(bench_dir, rel))
        except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
            rep["unreadable"].append(f"{rel}: {e!r}")
    for p in sorted(glob.glob(os.path.join(bench_dir, "overhead*",
                                           "overhead.json"))):
        rel = os.path.relpath(p, bench_dir)
        try:
            rep["overhead"].append(load_overhead(bench_dir, rel))
        except (OSError, ValueError, KeyError, TypeError) as e:
            rep["unreadable"].append(f"{rel}: {e!r}")
    for w in rep["zipf"]:
        rep["goals"] += zipf_goals(w)
    for name in WORKLOAD_NAMES:
        rel = os.path.join(name, f"{name}.json")
        if not os.path.exists(os.path.join(bench_dir, rel)):
            continue
        try:
            w = load_workload(bench_dir, name)
        except (OSError, ValueError, KeyError, IndexError, TypeError) as e:
            rep["unreadable"].append(f"{rel}: {e!r}")
            continue
        rep["workloads"].append(w)
        rep["goals"] += w["goals"]
    rep["trace"] = load_trace(bench_dir, rep["unreadable"])
    return rep


def load_trace(bench_dir, unreadable):
    """trace/trace.json (scripts/bench-trace.sh), its text as hottierctl
    trace prints it, and its PNG if converted; None without one."""
    rel = os.path.join("trace", "trace.json")
    path = os.path.join(bench_dir, rel)
    if not os.path.exists(path):
        return None
    try:
        with open(path) as f:
            rec = json.load(f)
        lines = trace_lines(rec)
    except (OSError, ValueError, KeyError, TypeError) as e:
        unreadable.append(f"{rel}: {e!r}")
        return None
    png = os.path.join(bench_dir, "trace", "trace.png")
    return {"source": rel, "workload": rec.get("workload", {}),
            "seconds": rec.get("seconds"),
            "ssd_read_share": rec.get("ssd_read_share"),
            "text": lines, "png": png if os.path.exists(png) else None}


# --- text ------------------------------------------------------------------

def pct(x):
    return "-" if x is None else f"{100 * x:.1f}%"


def num(x, fmt=".0f"):
    return "-" if x is None else format(x, fmt)


def warmup(s):
    if s["warmup_s"] is None:
        return "-"
    reads = (f" ({s['warmup_reads']} reads)"
             if s["warmup_reads"] is not None else "")
    return f"{s['warmup_s']:.0f} s{reads}"


def table(header, rows, text_columns):
    """A markdown table; the first text_columns columns left-aligned, the
    rest (figures) right-aligned."""
    out = ["| " + " | ".join(header) + " |",
           "|" + "|".join("---" if i < text_columns else "---:"
                          for i in range(len(header))) + "|"]
    out += ["| " + " | ".join(r) + " |" for r in rows]
    return out


def zipf_cells(s, steady=False):
    """One system's row of the zipf table; steady: with the steady (last
    third) hit ratio after the final one (performance.rst's)."""
    return ([s["label"], s["unit"], num(s["iops"]), num(s["p99_ms"], ".1f"),
             pct(s["mean_hit_ratio"]), pct(s["final_hit_ratio"])]
            + ([pct(s.get("steady_hit_ratio"))] if steady else [])
            + [pct(s["oracle"]), num(s["final_over_oracle"], ".3f"),
               warmup(s)])


def zipf_table_rows(rep):
    return [[w["name"]] + zipf_cells(s) for w in rep["zipf"]
            for s in w["systems"]]


OVERHEAD_HEAD = ["results", "test", "I/O", "base", "base IOPS",
                 "dm-hottier IOPS", "ratio", "rounds: ratio range"]


def overhead_table_rows(rep):
    rows = []
    for o in rep["overhead"]:
        for r in o["rows"]:
            rounds = ("1 run" if r["ratio_min"] is None else
                      f"{r['rounds']}: {r['ratio_min']:.3f} - "
                      f"{r['ratio_max']:.3f}")
            rows.append([f"{o['name']}/", r["test"], r["io"], r["base"],
                         num(r["base_iops"]), num(r["hottier_iops"]),
                         f"{r['ratio']:.3f}", rounds])
    return rows


def workload_line(w):
    p = w["params"]
    hargs = p.get("hottier_args") or "none (defaults)"
    fio = (f"`{' '.join(p['fio'])}`" if p.get("fio")
           else "(arguments not recorded)")
    line = (f"- `{w['source']}` (written {w['modified']}): kernel "
            f"{p.get('kernel', '-')}; fio {fio} on "
            f"each system, {p['seconds']} s; HDD {p['hdd_mb']} MiB "
            f"({num(p.get('hdd_latency_ms'), 'g')} ms a read), SSD "
            f"{p['ssd_usable_mb']} MiB usable "
            f"({num(p.get('ssd_latency_us'), 'g')} us a read), extent "
            f"{p['extent_sectors']} sectors ({unit_name(p['extent_sectors'])})"
            f" = {p.get('slots', '-')} slots; hottier table arguments: "
            f"{hargs}.")
    return with_host_load(line, w)


def with_host_load(line, w):
    """line, and the host's load averages where the run recorded them."""
    if w["host_load"]:
        line += " Host load average (1, 5, 15 min) " + ", ".join(
            host_load(h) for h in w["host_load"]) + "."
    return line


def host_load(line):
    """ "host load before: 3.40 4.35 5.43 4/94 4085" (bench-zipf.sh, from
    /proc/loadavg) as "before 3.40 4.35 5.43"."""
    when, _, load = line.replace("host load ", "").partition(":")
    return f"{when} {' '.join(load.split()[:3])}"


def overhead_line(o):
    rounds = sorted({r["rounds"] for r in o["rows"] if r["io"] == PARALLEL})
    return (f"- `{o['source']}` (written {o['modified']}): kernel "
            f"{o['kernel'] or 'not recorded'}; {o['seconds']} s a fio run"
            + (f", {'/'.join(map(str, rounds))} paired rounds"
               if rounds else "") + ".")


def markdown(rep, plots, skipped, where="this directory"):
    """report.md's text; plots: {"kind": [png file name, ...]} (beside
    report.md); where: the results' directory, as seen from report.md."""
    out = ["# dm-hottier benchmark report", "",
           f"Generated {rep['generated']} by `tests/bench/bench_report.py` "
           f"from the results in {where}; every figure is read from the "
           "files named below.", ""]
    if not rep["zipf"] and not rep["overhead"] and not rep["workloads"]:
        out += ["No results found (no `zipf-*/zipf.json`, no "
                "`overhead*/overhead.json`, no `<workload>/<workload>.json`"
                ").", ""]
    sources = [workload_line(w) for w in rep["zipf"]]
    sources += [workload_source_line(w) for w in rep["workloads"]]
    sources += [overhead_line(o) for o in rep["overhead"]]
    sources += [f"- unreadable, left out: {u}" for u in rep["unreadable"]]
    if sources:
        out += sources + [""]
    if skipped:
        out += [f"Plots skipped: {skipped}.", ""]

    if rep["zipf"]:
        out += ["## Hit ratio, IOPS and latency on the zipf workload", ""]
        out += table(["workload", "system", "unit", "IOPS", "p99 ms",
                      "mean hit ratio", "final hit ratio", "oracle",
                      "final / oracle", "warm-up"], zipf_table_rows(rep), 3)
        out.append("")
        w0 = rep["zipf"][0]
        d = w0["definitions"]
        fw = sorted({s["final_window_s"] for w in rep["zipf"]
                     for s in w["systems"]})
        out += [f"IOPS, p99: fio's, over the whole run (read completion "
                "latency). Mean hit ratio: read hits / reads over the whole "
                "run. Final hit ratio: over the last "
                f"{'/'.join(f'{x:g}' for x in fw)} s. Oracle: "
                f"{d.get('oracle', 'the best static placement')}, at the "
                "run's unit. Warm-up: "
                f"{d.get('warmup_s', 'see zipf.json definitions')} (reads: "
                "fio's reads by then).", ""]
        for w in rep["zipf"]:
            for a, src in w["aliases"].items():
                out += [f"{w['name']}: `{a}` is the same run as `{src}` "
                        "(zipf.py runs one dm-cache at 64 KiB when that is "
                        "the extent) and is not repeated.", ""]
            for p in w["problems"]:
                out += [f"**{w['name']} problem:** {p}", ""]
            for s in w["systems"]:
                if not s["latency"]:
                    why = s.get("latency_error") or (
                        f"no clat percentiles in `{s['latency_source']}`"
                        if s["latency_source"] else
                        f"no `{w['name']}/fio-{s['name']}.json`")
                    out += [f"{w['name']}: no latency CDF for {s['label']}: "
                            f"{why}.", ""]
        for png in plots.get("hit_ratio", []):
            out += [f"![hit ratio over time]({png})", ""]
        for png in plots.get("latency", []):
            out += [f"![read latency CDF]({png})", ""]
    if rep["goals"]:
        out += ["## Issue 14's goals", ""]
        out += table(["workload", "goal (issue 14)", "figure (reference)",
                      "measured", "target", "result"], goal_rows(rep), 3)
        out += ["", "Measured side by side in one guest boot per "
                "results file. Steady: the last third of a run. n/a: a "
                "figure the goal needs is missing (for moving, an SSD that "
                "never filled). report: figures without a goal.", ""]
    for w in rep["workloads"]:
        out += [f"## Workload: {w['workload']}", "",
                w.get("description", ""), ""]
        out += table(w["head"], w["rows"], 1)
        out.append("")
        level = ((w.get("common_level") or {}).get("hit_ratio") or {}) \
            .get("level")
        if level is not None:
            out += [f"To the common level: seconds after the move until "
                    f"the hit ratio reaches {pct(level)}, 0.9 x the lower "
                    "of dm-hottier's and smq's steady B; beside the goal, "
                    "which gives each system its own 90%.", ""]
        for pr in w.get("problems", []):
            out += [f"**{w['workload']} problem:** {pr}", ""]
        for png in plots.get("workload-" + w["workload"], []):
            out += [f"![{w['workload']}]({png})", ""]
    if rep["workloads"]:
        d = rep["workloads"][0].get("definitions", {})
        out += ["Definitions (tests/bench/workloads.py):", ""]
        out += [f"- {k}: {v}" for k, v in d.items()] + [""]
    if rep["overhead"]:
        out += ["## Overhead against dm-linear and md RAID1", ""]
        out += table(OVERHEAD_HEAD, overhead_table_rows(rep), 4)
        out += ["", "Zero-latency memory-backed devices "
                "(tests/lib/overhead.py). Ratio: dm-hottier IOPS / base "
                f"IOPS; for the {PARALLEL} tests, the median of the paired "
                "rounds' ratios (the IOPS columns are each side's median, "
                "so their quotient can differ).", ""]
    for png in plots.get("iops", []):
        out += ["## IOPS", "", f"![IOPS per system]({png})", ""]
    tr = rep.get("trace")
    if tr:
        wl = tr["workload"]
        out += ["## One trace: blktrace of the zipf workload", "",
                f"`hottierctl trace` on dm-hottier and both members for "
                f"{tr['seconds']} s, after {wl.get('warm_s', '?')} s of the "
                "zipf workload (`scripts/bench-trace.sh`, "
                f"`{tr['source']}`): what each member served, and how "
                "fast, as blktrace saw it.", "", "```"]
        out += tr["text"]
        out += ["```", ""]
        for png in plots.get("trace", []):
            out += [f"![iowatcher: the device and both members]({png})", ""]
    return "\n".join(out).rstrip("\n") + "\n"


# --- plots -----------------------------------------------------------------

COLORS = ["tab:blue", "tab:orange", "tab:green", "tab:red", "tab:purple"]
DASHES = [(0, (6, 3)), (0, (2, 2)), (0, (6, 2, 2, 2))]


def workload_title(w):
    p, f = w["params"], fio_args(w["params"])
    return (f"fio {f.get('rw', '?')} {f.get('bs', '?')}, "
            f"{f.get('random_distribution', '?')}, iodepth "
            f"{f.get('iodepth', '?')}, {p['seconds']} s per system\n"
            f"SSD {p['ssd_usable_mb']} MiB usable, HDD {p['hdd_mb']} MiB, "
            f"{unit_name(p['extent_sectors'])} extents")


def plot_hit_ratio(plt, w, path):
    fig, ax = plt.subplots(figsize=(9, 5.5))
    ends = [s["run_end_s"] for s in w["systems"] if s["run_end_s"]]
    fws = [s["final_window_s"] for s in w["systems"]]
    if ends and fws:
        ax.axvspan(min(ends) - max(fws), max(ends), color="0.9",
                   label=f"final window (last {max(fws):g} s)")
    for i, s in enumerate(w["systems"]):
        c = COLORS[i % len(COLORS)]
        xs = [t for t, r in s["hit_ratio_per_sample"] if r is not None]
        ys = [100 * r for _, r in s["hit_ratio_per_sample"] if r is not None]
        ax.plot(xs, ys, color=c, alpha=0.3, linewidth=0.8)
        bx, by = [], []
        for a, b, r, _ in s["bins"]:
            if r is not None:
                bx += [a, b]
                by += [100 * r] * 2
        ax.plot(bx, by, color=c, linewidth=2,
                label=f"{s['label']}: final {pct(s['final_hit_ratio'])}")
        if s["oracle"] is not None:
            ax.axhline(100 * s["oracle"], color=c,
                       linestyle=DASHES[i % len(DASHES)], linewidth=1.2,
                       label=f"oracle, {s['label']}'s run at {s['unit']}: "
                             f"{pct(s['oracle'])}")
    ax.set_title(f"{w['name']}: read hit ratio over time\n"
                 f"{workload_title(w)}", fontsize=10)
    ax.set_xlabel("seconds since fio's first read")
    ax.set_ylabel("read hit ratio (%)")
    ax.set_ylim(0, 100)
    ax.set_xlim(left=0)
    ax.grid(alpha=0.3)
    sample = w["params"].get("sample_s")
    ax.legend(loc="lower right", fontsize=8, title_fontsize=8,
              title="thick: per 10 s; thin: per "
                    + (f"{sample:g} s sample" if sample else "sample"))
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_latency(plt, w, path):
    fig, ax = plt.subplots(figsize=(9, 5.5))
    for i, s in enumerate(w["systems"]):
        lat = s["latency"]
        if not lat:
            continue
        c = COLORS[i % len(COLORS)]
        xs = [lat["min_ms"]] + [ms for ms, _ in lat["points"]] + \
             [lat["max_ms"]]
        ys = [0.0] + [p for _, p in lat["points"]] + [100.0]
        ax.plot(xs, ys, color=c, marker="o", markersize=3,
                label=f"{s['label']}: p50 {num(lat['p50_ms'], '.1f')} ms, "
                      f"p99 {num(lat['p99_ms'], '.1f')} ms, mean "
                      f"{lat['mean_ms']:.1f} ms ({lat['reads']} reads)")
    ax.set_xscale("log")
    ax.set_title(f"{w['name']}: read completion latency CDF (fio clat)\n"
                 f"{workload_title(w)}", fontsize=10)
    ax.set_xlabel("read completion latency (ms, log scale)")
    ax.set_ylabel("reads completed within it (%)")
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3, which="both")
    ax.legend(loc="upper left", fontsize=8,
              title="points: fio's percentiles; ends: min, max",
              title_fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_iops(plt, rep, path):
    # One row of bars per (test, I/O, base), one bar in it per overhead.json.
    tests = []
    for o in rep["overhead"]:
        for r in o["rows"]:
            if (r["test"], r["io"], r["base"]) not in tests:
                tests.append((r["test"], r["io"], r["base"]))
    nover = len(tests) * len(rep["overhead"])
    heights = ([3.5] if rep["zipf"] else []) + \
              ([1.5 + 0.45 * nover] if rep["overhead"] else [])
    figh = sum(heights) + 0.5 + (0.3 if rep["overhead"] else 0)
    fig, axes = plt.subplots(len(heights), 1, figsize=(9, figh),
                             gridspec_kw={"height_ratios": heights},
                             squeeze=False)
    axes = list(axes[:, 0])
    if rep["zipf"]:
        ax = axes.pop(0)
        labels, values, colors = [], [], []
        for w in rep["zipf"]:
            for i, s in enumerate(w["systems"]):
                labels.append(f"{s['label']}\n{w['name']}")
                values.append(s["iops"])
                colors.append(COLORS[i % len(COLORS)])
        bars = ax.bar(range(len(values)), values, color=colors, width=0.5)
        ax.bar_label(bars, labels=[f"{v:.0f}" for v in values], fontsize=8)
        ax.set_xticks(range(len(values)), labels, fontsize=8)
        ax.set_ylabel("read IOPS (fio, whole run)")
        ax.set_title("zipf workload: read IOPS per system\n"
                     + "\n".join(f"{w['name']}: {workload_title(w)}"
                                  for w in rep["zipf"]), fontsize=9)
        ax.grid(alpha=0.3, axis="y")
        ax.margins(y=0.15)
    if rep["overhead"]:
        ax = axes.pop(0)
        n = len(rep["overhead"])
        h = 0.8 / n
        for k, o in enumerate(rep["overhead"]):
            ys = [tests.index((r["test"], r["io"], r["base"])) + k * h
                  for r in o["rows"]]
            rounds = sorted({r["rounds"] for r in o["rows"]
                             if r["io"] == PARALLEL})
            color = COLORS[(k + 2) % len(COLORS)]
            ax.barh(ys, [r["ratio"] for r in o["rows"]], height=h,
                    color=color, alpha=0.8,
                    label=f"{o['name']}/ ({'/'.join(map(str, rounds))} "
                          "paired rounds)")
            for y, r in zip(ys, o["rows"]):
                right = r["ratio"]
                if r["ratio_min"] is not None:
                    ax.errorbar(r["ratio"], y, capsize=3, color="black",
                                linewidth=1,
                                xerr=[[r["ratio"] - r["ratio_min"]],
                                      [r["ratio_max"] - r["ratio"]]])
                    right = r["ratio_max"]
                ax.text(right, y, f"  {r['ratio']:.3f}", va="center",
                        fontsize=7)
        ax.axvline(1.0, color="black", linewidth=1)
        ax.set_yticks([j + (n - 1) * h / 2 for j in range(len(tests))],
                      [f"{t} / {base}\n{io}" for t, io, base in tests],
                      fontsize=8)
        ax.invert_yaxis()
        ax.set_xlim(0, ax.get_xlim()[1] * 1.08)
        ax.set_xlabel("dm-hottier IOPS / base IOPS (1 = no overhead; "
                      "paired: median of the rounds' ratios)")
        ax.set_title("overhead on zero-latency devices (tests/lib/overhead.py)"
                     "\nwhiskers: the range of the paired rounds' ratios",
                     fontsize=9)
        ax.grid(alpha=0.3, axis="x")
        fig.legend(*ax.get_legend_handles_labels(), loc="lower center",
                   ncol=min(n, 3), fontsize=8)
        fig.tight_layout(rect=(0, 0.3 / figh, 1, 1))
    else:
        fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot_workload(plt, w, path):
    """Hit ratio (dm-hottier: and SSD share) per sample over time of each
    system of one workload with status samples, the oracle as a line."""
    fig, ax = plt.subplots(figsize=(9, 5))
    for i, (name, s) in enumerate(w["systems"].items()):
        sm = s.get("samples") or []
        if not sm:
            continue
        c = COLORS[i % len(COLORS)]
        t0 = (s.get("phases") or [{}])[0].get("t_start", sm[0]["t"])
        xs, ys = [], []
        for a, b in zip(sm, sm[1:]):
            r = hit_ratio(b["read_hits"] - a["read_hits"],
                          b["read_misses"] - a["read_misses"])
            if r is not None:
                xs.append(b["t"] - t0)
                ys.append(100 * r)
        ax.plot(xs, ys, color=c, linewidth=1, label=s.get("label", name))
        for ph in (s.get("phases") or [])[1:]:
            ax.axvline(ph["t_start"] - t0, color=c, linestyle=":",
                       linewidth=1)
        o = s.get("oracle") or {}
        o = (o.get("files") or {}).get("oracle") if "files" in o else \
            ((o.get("whole_run") or {}).get(unit_name(
                s.get("unit_sectors", 128))) or {}).get("oracle")
        if o is not None:
            ax.axhline(100 * o, color=c, linestyle=DASHES[i % len(DASHES)],
                       linewidth=1, label=f"oracle ({s.get('label', name)}"
                                         f"'s run): {pct(o)}")
    ax.set_title(f"{w['workload']}: read hit ratio per "
                 f"{w['params'].get('sample_s', 1):g} s sample\n"
                 f"{w.get('description', '')}", fontsize=9)
    ax.set_xlabel("seconds since the first phase's first read "
                  "(dotted: next phase)")
    ax.set_ylabel("read hit ratio (%)")
    ax.set_ylim(0, 100)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)


def plot(rep, out_dir):
    """Writes the PNGs; returns ({"kind": [file name, ...]}, None), or
    ({}, why) when it cannot plot."""
    for old in glob.glob(os.path.join(out_dir, PNG_PREFIX + "*.png")):
        os.unlink(old)          # no stale plot beside a new report
    if not rep["zipf"] and not rep["overhead"] and not rep["workloads"]:
        return {}, "no results to plot"
    os.environ.setdefault("MPLBACKEND", "Agg")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return {}, (f"matplotlib is missing ({e}); scripts/setup.sh "
                    "installs python3-matplotlib for /usr/bin/python3")
    plots = {"hit_ratio": [], "latency": [], "iops": []}
    for w in rep["zipf"]:
        name = f"{PNG_PREFIX}hit-ratio-{w['name']}.png"
        plot_hit_ratio(plt, w, os.path.join(out_dir, name))
        plots["hit_ratio"].append(name)
        if any(s["latency"] for s in w["systems"]):
            name = f"{PNG_PREFIX}latency-{w['name']}.png"
            plot_latency(plt, w, os.path.join(out_dir, name))
            plots["latency"].append(name)
    if rep["zipf"] or rep["overhead"]:
        name = f"{PNG_PREFIX}iops.png"
        plot_iops(plt, rep, os.path.join(out_dir, name))
        plots["iops"].append(name)
    for w in rep["workloads"]:
        if any(s.get("samples") for s in w.get("systems", {}).values()):
            name = f"{PNG_PREFIX}workload-{w['workload']}.png"
            plot_workload(plt, w, os.path.join(out_dir, name))
            plots["workload-" + w["workload"]] = [name]
    return plots, None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("bench_dir", nargs="?", default="results/bench")
    ap.add_argument("--out", help="where to write (default: bench_dir)")
    ap.add_argument("--module-version",
                    help="the module's version and commit, for "
                         "performance.rst (scripts/bench.sh: VERSION and "
                         "git describe)")
    args = ap.parse_args(argv)
    out = args.out or args.bench_dir
    os.makedirs(out, exist_ok=True)
    rep = collect(args.bench_dir)
    plots, skipped = plot(rep, out)
    if rep["trace"] and rep["trace"]["png"]:
        name = f"{PNG_PREFIX}trace.png"
        shutil.copyfile(rep["trace"]["png"], os.path.join(out, name))
        plots["trace"] = [name]
    md = os.path.join(out, "report.md")
    where = os.path.relpath(args.bench_dir, out)
    with open(md, "w") as f:
        f.write(markdown(rep, plots, skipped, "this directory"
                         if where == "." else f"`{where}/`"))
    with open(os.path.join(out, "report.json"), "w") as f:
        json.dump(dict(rep, plots=plots, plots_skipped=skipped), f, indent=1)
    import perf_rst     # it imports this module
    page = perf_rst.write(perf_rst.from_report(rep, plots, skipped,
                                               args.module_version), out, out)
    print(f"report: {md}")
    print(f"page: {page}")
    if skipped:
        print(f"plots skipped: {skipped}")
    else:
        for names in plots.values():
            for n in names:
                print(f"plot: {os.path.join(out, n)}")
    if not rep["zipf"] and not rep["overhead"] and not rep["workloads"]:
        print(f"bench report: no results in {args.bench_dir}",
              file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
