"""The extent-size sweep's summary (scripts/bench-sweep.sh, make
bench-sweep): for each extent size under SWEEP_DIR, the zipf workload's
final hit ratio and the streaming listeners' steady SSD share, dm-hottier
beside dm-cache smq at the same unit and the oracle, measured side by side
within each size's guest boot. Writes SWEEP_DIR/report.md, report.json and,
with matplotlib, report-sweep.png.

  sweep_report.py SWEEP_DIR

The recommended extent is the size whose dm-hottier figures, the zipf
final hit ratio and the streaming steady SSD share, have the highest mean:
both are shares of reads the SSD served, on the same SSD, so sizes compare
directly. Python standard library (and matplotlib if present).
"""

import json
import os
import sys


def load(path):
    try:
        with open(path) as f:
            return json.load(f)
    except (OSError, ValueError):
        return None


def zipf_row(z):
    """dm-hottier and smq at this unit on zipf, or {} without a result."""
    if not z:
        return {}
    s, h = z["summary"], z["runs"]["hottier"]
    cache = s.get("cache") or {}
    return {"slots": z["params"]["slots"],
            "hottier": s["hottier_final_hit_ratio"],
            "smq": cache.get("final_hit_ratio"),
            "oracle": (h.get("oracle_at_unit") or {}).get("oracle"),
            "iops_over_smq": cache.get("hottier_over_cache_iops")}


def streaming_row(st):
    if not st:
        return {}
    sy = st["systems"]

    def fig(name, key):
        return (sy.get(name, {}).get("figures") or {}).get(key)
    lin = sy.get("linear", {}).get("bw_mib_s")
    hbw = sy.get("hottier", {}).get("bw_mib_s")
    return {"slots": st["params"]["slots"],
            "hottier": fig("hottier", "steady_ssd_share"),
            "smq": fig("cache", "steady_ssd_share"),
            # The oracle's share of the steady window's own reads (the
            # share beside it is over that window); older runs: the run's.
            "oracle": (fig("hottier", "steady_oracle")
                       if fig("hottier", "steady_oracle") is not None
                       else fig("hottier", "oracle")),
            "bw_over_linear": round(hbw / lin, 3) if hbw and lin else None}


def collect(root):
    rows = []
    for name in os.listdir(root):
        if not name.isdigit():
            continue
        e = int(name)
        base = os.path.join(root, name, "bench")
        z = load(os.path.join(base, f"zipf-{e}", "zipf.json"))
        st = load(os.path.join(base, "streaming", "streaming.json"))
        if z or st:
            rows.append({"extent_sectors": e, "extent_kib": e // 2,
                         "zipf": zipf_row(z), "streaming": streaming_row(st)})
    return sorted(rows, key=lambda r: r["extent_sectors"])


def recommend(rows):
    """The size with the highest mean of dm-hottier's two shares, among
    sizes with both; None if none has both."""
    best = None
    for r in rows:
        a, b = r["zipf"].get("hottier"), r["streaming"].get("hottier")
        if a is None or b is None:
            continue
        m = (a + b) / 2
        if best is None or m > best[1]:
            best = (r["extent_kib"], m)
    return best


def pct(x):
    return "-" if x is None else f"{100 * x:.1f}%"


def num(x):
    return "-" if x is None else f"{x:.2f}"


def markdown(rows, best):
    out = ["# Extent-size sweep", "",
           "Each size: one guest boot for zipf (`scripts/bench-zipf.sh`) "
           "and one for the streaming listeners (`scripts/bench-workloads.sh"
           "`), dm-hottier beside dm-cache smq with blocks of the same size "
           "(and dm-linear for streaming), on the same emulated devices at "
           "every size: a coarser unit means fewer slots. Figures are "
           "shares of reads the SSD served (zipf: final hit ratio; "
           "streaming: steady SSD share) and ratios measured in the same "
           "boot.", "",
           "| extent | zipf slots | zipf dm-hottier | zipf smq | zipf oracle "
           "| zipf IOPS / smq | streaming slots | streaming dm-hottier "
           "| streaming smq | streaming oracle (files, steady reads) "
           "| streaming MiB/s / dm-linear |",
           "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        z, s = r["zipf"], r["streaming"]
        out.append(
            f"| {r['extent_kib']} KiB | {z.get('slots', '-')} "
            f"| {pct(z.get('hottier'))} | {pct(z.get('smq'))} "
            f"| {pct(z.get('oracle'))} | {num(z.get('iops_over_smq'))} "
            f"| {s.get('slots', '-')} | {pct(s.get('hottier'))} "
            f"| {pct(s.get('smq'))} | {pct(s.get('oracle'))} "
            f"| {num(s.get('bw_over_linear'))} |")
    out.append("")
    if best:
        out.append(f"Recommended extent: **{best[0]} KiB** (dm-hottier's "
                   f"mean of the two shares: {pct(best[1])}).")
    else:
        out.append("No size has both workloads' results: no "
                   "recommendation.")
    return "\n".join(out) + "\n"


def plot(rows, path):
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return "matplotlib is missing: no plot"
    fig, ax = plt.subplots(figsize=(7, 4))
    kib = [r["extent_kib"] for r in rows]
    for wl, style in (("zipf", "-"), ("streaming", "--")):
        for sysname, marker in (("hottier", "o"), ("smq", "s"),
                                ("oracle", "x")):
            ys = [r[wl].get(sysname) for r in rows]
            pts = [(k, y) for k, y in zip(kib, ys) if y is not None]
            if pts:
                ax.plot([p[0] for p in pts], [p[1] for p in pts],
                        linestyle=style, marker=marker,
                        label=f"{wl}: {sysname}")
    ax.set_xscale("log", base=2)
    ax.set_xlabel("extent (KiB)")
    ax.set_ylabel("share of reads served by the SSD")
    ax.set_ylim(0, 1)
    ax.legend(fontsize="small")
    ax.grid(True, alpha=0.3)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return None


def main(argv):
    if len(argv) != 2:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    root = argv[1]
    if not os.path.isdir(root):
        print(f"sweep_report: no directory {root}", file=sys.stderr)
        return 2
    rows = collect(root)
    if not rows:
        print(f"sweep_report: no results under {root}", file=sys.stderr)
        return 1
    best = recommend(rows)
    md = markdown(rows, best)
    with open(os.path.join(root, "report.md"), "w") as f:
        f.write(md)
    with open(os.path.join(root, "report.json"), "w") as f:
        json.dump({"rows": rows,
                   "recommended_kib": best[0] if best else None}, f,
                  indent=1)
    why = plot(rows, os.path.join(root, "report-sweep.png"))
    print(md, end="")
    if why:
        print(f"({why})")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
