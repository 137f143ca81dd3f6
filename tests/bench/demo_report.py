"""make demo's measurements, summary and plot (scripts/demo-guest.sh and
scripts/demo.sh run it).

  run      (in the guest) runs tests/bench/demo.fio on one device and
           samples it every --sample seconds: completed reads from the
           device's /sys/block/<dev>/stat, and with --hottier the
           hottier counters under /sys/block/<dev>/hottier/. Prints one
           line per --interval (time, read IOPS, hit ratio, SSD slots
           used) as it goes; writes the samples, the intervals and fio's
           own figures as JSON.
  summary  IOPS on the bare HDD and on hottier, speed-up, final hit
           ratio, from the two runs' JSON; writes them together as one.
  plot     hit ratio and IOPS over time from summary's JSON, as a PNG
           (matplotlib, Agg backend); says why if it cannot.

Every figure printed comes from the run's own samples or fio's JSON.
Python standard library; matplotlib for the plot only.
"""

import argparse
import json
import os
import subprocess
import sys
import time

JOB = os.path.join(os.path.dirname(os.path.abspath(__file__)), "demo.fio")
POLL_S = 0.05           # how often the start of fio's reads is looked for


# --- arithmetic (tests/host/test_demo_report.py) ---------------------------

def hit_ratio(hits, misses):
    """hits / (hits + misses); None when nothing was read."""
    return hits / (hits + misses) if hits + misses else None


def speedup(iops, base_iops):
    """iops / base_iops; None without both."""
    return iops / base_iops if iops is not None and base_iops else None


def intervals(samples):
    """One record per pair of consecutive samples: its end time, length,
    reads and read IOPS (from the device's completed reads), and where the
    samples carry hottier's counters, the hits, misses and hit ratio from
    their differences and the slots used at its end."""
    out = []
    for a, b in zip(samples, samples[1:]):
        dt = b["t"] - a["t"]
        reads = b["reads"] - a["reads"]
        rec = {"start": a["t"], "end": b["t"], "seconds": dt,
               "reads": reads, "iops": reads / dt if dt > 0 else None}
        if "read_hits" in a and "read_hits" in b:
            hits = b["read_hits"] - a["read_hits"]
            misses = b["read_misses"] - a["read_misses"]
            rec.update(hits=hits, misses=misses,
                       hit_ratio=hit_ratio(hits, misses),
                       slots_used=b["slots_used"],
                       slots_total=b["slots_total"])
        out.append(rec)
    return out


def summarize(hdd, hot):
    """The figures of the summary from the two runs (as run writes them):
    fio's IOPS over each whole run, hottier's IOPS in its last interval,
    the speed-ups over the bare HDD, and hottier's hit ratio in its last
    interval and over the whole run."""
    last = hot["intervals"][-1]
    first, end = hot["samples"][0], hot["samples"][-1]
    return {
        "hdd_iops": hdd["fio"]["iops"],
        "hdd_seconds": hdd["fio"]["runtime_s"],
        "hottier_iops": hot["fio"]["iops"],
        "hottier_seconds": hot["fio"]["runtime_s"],
        "hottier_last_iops": last["iops"],
        "last_seconds": last["seconds"],
        "speedup": speedup(hot["fio"]["iops"], hdd["fio"]["iops"]),
        "speedup_last": speedup(last["iops"], hdd["fio"]["iops"]),
        "final_hit_ratio": last.get("hit_ratio"),
        "overall_hit_ratio": hit_ratio(
            end["read_hits"] - first["read_hits"],
            end["read_misses"] - first["read_misses"]),
        "slots_used": last.get("slots_used"),
        "slots_total": last.get("slots_total"),
    }


# --- text ------------------------------------------------------------------

def pct(x):
    return "-" if x is None else f"{100 * x:.1f}%"


def times(x):
    return "-" if x is None else f"x{x:.1f}"


def num(x):
    return "-" if x is None else f"{x:.0f}"


def header_line():
    return f"{'time':>8}  {'read IOPS':>9}  {'hit ratio':>9}  SSD slots used"


def interval_line(rec):
    slots = (f"{rec['slots_used']} of {rec['slots_total']}"
             if "slots_used" in rec else "-")
    return (f"{rec['end']:>6.1f} s  {num(rec['iops']):>9}  "
            f"{pct(rec.get('hit_ratio')):>9}  {slots}")


def summary_lines(s):
    rows = [
        ("bare HDD, whole run", f"{num(s['hdd_iops'])} IOPS "
                                f"({s['hdd_seconds']:.0f} s, fio)"),
        ("hottier, whole run", f"{num(s['hottier_iops'])} IOPS "
                               f"({s['hottier_seconds']:.0f} s, fio), "
                               f"speed-up {times(s['speedup'])}"),
        (f"hottier, last {s['last_seconds']:.1f} s",
         f"{num(s['hottier_last_iops'])} IOPS, "
         f"speed-up {times(s['speedup_last'])}"),
        (f"hit ratio, last {s['last_seconds']:.1f} s",
         f"{pct(s['final_hit_ratio'])} (whole run "
         f"{pct(s['overall_hit_ratio'])}), "
         f"{s['slots_used']} of {s['slots_total']} SSD slots used"),
    ]
    width = max(len(k) for k, _ in rows)
    return ([f"  {k + ':':<{width + 1}} {v}" for k, v in rows] +
            ["  speed-up = hottier IOPS / bare HDD IOPS, the same fio job, "
             "seed and runtime on both"])


# --- the run (in the guest) ------------------------------------------------

def every(samples, per):
    """The samples that bound the printed intervals: every per-th, and the
    last (taken when fio ended) whatever its place."""
    picked = samples[::per]
    if (len(samples) - 1) % per:
        picked.append(samples[-1])
    return picked


def read_int(path):
    with open(path) as f:
        return int(f.read().split()[0])


# hottier's counters, read from the sysfs files that "hottierctl status"
# reads them from (Documentation/hottier.rst, sysfs), in this process:
# starting hottierctl at every sample costs a TCG guest seconds of CPU,
# taken from fio.
COUNTERS = ("read_hits", "read_misses", "slots_used", "slots_total")


def run(args):
    kname = os.path.basename(os.path.realpath(args.dev))

    def sample(t):
        # Completed reads: the first field of the device's stat.
        s = {"t": round(t, 3), "reads": read_int(f"/sys/block/{kname}/stat")}
        if args.hottier:
            s.update({c: read_int(f"/sys/block/{kname}/hottier/{c}")
                      for c in COUNTERS})
        return s

    fio_json = os.path.splitext(args.out)[0] + "-fio.json"
    env = dict(os.environ, DEMO_DEV=args.dev, DEMO_SECONDS=str(args.seconds))
    base = sample(0.0)
    proc = subprocess.Popen(["fio", "--output-format=json",
                             f"--output={fio_json}", JOB], env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    # Time runs from the last look before fio's first completed read (fio
    # takes a moment to start); the counters from just before fio started.
    t0 = time.monotonic()
    while proc.poll() is None:
        if read_int(f"/sys/block/{kname}/stat") > base["reads"]:
            break
        t0 = time.monotonic()
        time.sleep(POLL_S)
    samples = [base]
    mark = 0            # the sample that starts the interval being sampled
    print(header_line(), flush=True)
    # A sample every --sample seconds; the last when fio ends (its runtime,
    # from a moment before its first read, plus the reads in flight then).
    per = max(1, round(args.interval / args.sample))
    n = max(1, round(args.seconds / args.sample))
    for k in range(1, n + 1):
        if k < n:
            try:
                proc.wait(timeout=max(0.0, t0 + k * args.sample
                                      - time.monotonic()))
            except subprocess.TimeoutExpired:
                pass
        if k == n:
            proc.wait()
        samples.append(sample(time.monotonic() - t0))
        ended = proc.poll() is not None
        if ended or k % per == 0:       # as every(samples, per) picks them
            print(interval_line(intervals([samples[mark], samples[-1]])[0]),
                  flush=True)
            mark = len(samples) - 1
        if ended:
            break
    out, err = proc.communicate()
    if proc.returncode:
        sys.exit(f"fio failed ({proc.returncode}): {err}{out}")
    with open(fio_json) as f:
        job = json.load(f)["jobs"][0]
    result = {
        "label": args.label, "device": args.dev, "kernel_name": kname,
        "seconds": args.seconds, "interval": args.interval,
        "sample": args.sample,
        "fio": {"iops": job["read"]["iops"],
                "reads": job["read"]["total_ios"],
                "runtime_s": job["read"]["runtime"] / 1000,
                "clat_mean_ms": job["read"]["clat_ns"]["mean"] / 1e6,
                "error": job["error"]},
        "samples": samples,
        "intervals": intervals(every(samples, per)),
        "fine": intervals(samples),
    }
    if job["error"]:
        sys.exit(f"fio reported error {job['error']}")
    with open(args.out, "w") as f:
        json.dump(result, f, indent=1)


def summary(args):
    with open(args.hdd) as f:
        hdd = json.load(f)
    with open(args.hottier) as f:
        hot = json.load(f)
    s = summarize(hdd, hot)
    for line in summary_lines(s):
        print(line)
    with open(args.out, "w") as f:
        json.dump({"summary": s, "hdd": hdd, "hottier": hot}, f, indent=1)


# --- the plot (on the host) ------------------------------------------------

def steps(recs, key, scale=1):
    """x and y for a step line: each interval's value over its span."""
    xs, ys = [], []
    for r in recs:
        if r.get(key) is not None:
            xs += [r["start"], r["end"]]
            ys += [scale * r[key]] * 2
    return xs, ys


def plot(data, path):
    """Writes the PNG; returns None, or why it could not."""
    os.environ.setdefault("MPLBACKEND", "Agg")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError as e:
        return f"matplotlib is missing ({e}); scripts/setup.sh installs " \
               "python3-matplotlib"
    s, hot = data["summary"], data["hottier"]["fine"]
    step = data["hottier"]["sample"]
    fig, (top, bottom) = plt.subplots(2, 1, sharex=True, figsize=(8, 6.5))
    fig.suptitle("make demo: fio 4k random reads, zipf:1.2, iodepth 16\n"
                 f"hottier over the bare HDD: {times(s['speedup'])} over "
                 f"the whole run, {times(s['speedup_last'])} in the last "
                 f"{s['last_seconds']:.1f} s")
    top.plot(*steps(hot, "hit_ratio", 100), color="tab:green")
    top.set_ylabel(f"hit ratio (%), per {step:g} s")
    top.set_ylim(0, 100)
    top.grid(alpha=0.3)
    bottom.plot(*steps(hot, "iops"), color="tab:blue",
                label=f"hottier, per {step:g} s")
    bottom.plot(*steps(data["hdd"]["fine"], "iops"), color="tab:red",
                alpha=0.3, linewidth=1,
                label=f"bare HDD, per {data['hdd']['sample']:g} s")
    bottom.axhline(s["hdd_iops"], color="tab:red", linestyle="--",
                   label=f"bare HDD, {s['hdd_iops']:.0f} IOPS "
                         f"({s['hdd_seconds']:.0f} s run)")
    bottom.set_ylabel("read IOPS")
    bottom.set_xlabel("seconds since fio's first read")
    bottom.set_ylim(bottom=0)
    bottom.grid(alpha=0.3)
    bottom.legend(loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return None


def plot_cmd(args):
    with open(args.json) as f:
        data = json.load(f)
    why = plot(data, args.png)
    if why:
        print(f"plot skipped: {why}")
    else:
        print(f"plot: {args.png}")


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    p = sub.add_parser("run", help="run the workload on one device")
    p.add_argument("--dev", required=True)
    p.add_argument("--label", required=True)
    p.add_argument("--seconds", type=int, required=True)
    p.add_argument("--interval", type=float, required=True)
    p.add_argument("--sample", type=float, default=1.5,
                   help="seconds between samples (the plot's resolution)")
    p.add_argument("--hottier", action="store_true",
                   help="the device is a hottier device: sample its "
                        "counters too")
    p.add_argument("--out", required=True)
    p.set_defaults(func=run)
    p = sub.add_parser("summary", help="print and save the summary")
    p.add_argument("hdd")
    p.add_argument("hottier")
    p.add_argument("--out", required=True)
    p.set_defaults(func=summary)
    p = sub.add_parser("plot", help="write the PNG")
    p.add_argument("json")
    p.add_argument("png")
    p.set_defaults(func=plot_cmd)
    args = ap.parse_args(argv)
    args.func(args)


if __name__ == "__main__":
    main()
