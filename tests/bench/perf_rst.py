"""Documentation/performance.rst: make bench's figures as a page for users.

bench_report.py writes it beside report.md, from the same figures, with
its plots copied into performance/ beside it; scripts/bench.sh copies both
into Documentation/. From a stored baseline (tests/bench/baseline/*.json,
the figures without the samples the plots draw):

  perf_rst.py --baseline FILE [--out DIR]

The page: a header (the run, kernel, module version), the method, one
section per workload with its table of figures per system and its goals
(PASS or FAIL), the overhead table, the plots, and the gaps: each goal
missed or not decided, each workload absent from the results, each
problem a run reported. Every figure and every gap comes from the data.
Python standard library.
"""

import argparse
import glob
import json
import os
import re
import shutil
import subprocess
import sys
import textwrap

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import bench_report as br  # noqa: E402

PAGE = "performance.rst"
PNG_DIR = "performance"     # the plots, beside the page
TITLES = {
    "zipf": "a zipf workload",
    "moving": "a hot set that moves",
    "streaming": "streaming listeners",
    "backup": "a backup scan during zipf",
    "softlayer": "SoftLayer's 8k random reads and 70/30 mix",
    "capture": "a capture writer beside promotions",
}
EXPECTED = ["zipf"] + br.WORKLOAD_NAMES
ZIPF_HEAD = ["system", "unit", "IOPS", "p99 ms", "mean hit ratio",
             "final hit ratio", "steady hit ratio", "oracle",
             "final / oracle", "warm-up"]
GOAL_HEAD = ["goal", "figure (reference)", "dm-hottier", "target",
             "result"]


# --- the page's model: from make bench's results or a stored baseline -----

def setup_text(p, host_load, per_system):
    """A section's parameters, as reStructuredText: sizes, latencies,
    extent, table arguments, fio's arguments where recorded, the kernel,
    the host's load."""
    out = text(f"{per_system}; HDD {p.get('hdd_mb')} MiB, SSD "
               f"{p.get('ssd_usable_mb')} MiB usable, extent "
               f"{p.get('extent_sectors')} sectors "
               f"({br.unit_name(p.get('extent_sectors', 128))}) = "
               f"{p.get('slots', '-')} slots; dm-hottier table arguments: "
               f"{p.get('hottier_args') or 'none (defaults)'}")
    if p.get("fio"):
        out += f"; fio ``{' '.join(p['fio'])}``"
    out += text(f"; kernel {p.get('kernel', 'not recorded')}.")
    if host_load:
        out += " " + text("Host load average (1, 5, 15 min): "
                    + ", ".join(br.host_load(h) for h in host_load) + ".")
    return out


def latencies(p):
    return (f"HDD {br.num(p.get('hdd_latency_ms'), 'g')} ms an I/O, SSD "
            f"{br.num(p.get('ssd_latency_us'), 'g')} us an I/O")


def zipf_section(w, goals, images):
    """w: a zipf result as bench_report.load_zipf() reads it, or a
    baseline's zipf (the same system rows)."""
    return {"key": "zipf", "name": w["name"],
            "title": f"{w['name']}: {TITLES['zipf']}",
            "what": br.workload_title(w).split("\n")[0],
            "setup": setup_text(w["params"], w.get("host_load"),
                                f"{w['params']['seconds']} s per system"),
            "latencies": latencies(w["params"]),
            "kernel": w["params"].get("kernel"),
            "head": ZIPF_HEAD,
            "rows": [br.zipf_cells(s, steady=True) for s in w["systems"]],
            "goals": goals, "problems": w.get("problems", []),
            "images": images}


def workload_section(name, w, head, rows, goals, images):
    return {"key": name, "name": name, "title": f"{name}: {TITLES[name]}",
            "what": w.get("description", ""),
            "setup": setup_text(w.get("params", {}), w.get("host_load"),
                                f"S = {w.get('params', {}).get('seconds')} s"),
            "latencies": latencies(w.get("params", {})),
            "kernel": w.get("params", {}).get("kernel"),
            "head": head, "rows": rows, "goals": goals,
            "problems": w.get("problems", []), "images": images}


def png_name(png):
    """A plot's name in performance/: report-iops.png as iops.png."""
    return png[len(br.PNG_PREFIX):] if png.startswith(br.PNG_PREFIX) \
        else png


def images(plots, kind, alt, match=None):
    return [(png, alt) for png in plots.get(kind, [])
            if match is None or png == match]


def from_report(rep, plots, skipped, version=None):
    """The page of bench_report.collect()'s figures; plots: its PNGs (file
    names beside report.md), skipped: why there are none."""
    sections = []
    for w in rep["zipf"]:
        n = w["name"]
        im = images(plots, "hit_ratio", f"{n}: hit ratio over time",
                    f"{br.PNG_PREFIX}hit-ratio-{n}.png")
        im += images(plots, "latency", f"{n}: read latency CDF",
                     f"{br.PNG_PREFIX}latency-{n}.png")
        sections.append(zipf_section(
            w, [g for g in rep["goals"] if g["workload"] == n], im))
    for w in rep["workloads"]:
        n = w["workload"]
        sections.append(workload_section(
            n, w, w["head"], w["rows"], w["goals"],
            images(plots, "workload-" + n, f"{n}: hit ratio per sample")))
    sources = [f"``{w['source']}`` (written {w['modified']})"
               for w in rep["zipf"] + rep["workloads"] + rep["overhead"]]
    return {
        "generator": "Generated by ``make bench`` (``scripts/bench.sh``, "
                     "``tests/bench/bench_report.py``) from one run's "
                     "results; do not edit by hand.",
        "run": [f"Results: ``{shown_dir(rep['bench_dir'])}/``, generated "
                f"{rep['generated']} by ``tests/bench/bench_report.py``.",
                f"Module: {text(version or 'not recorded')}.",
                "Sources: " + ("; ".join(sources) or "none") + "."],
        "sections": sections,
        "overhead": ({"rows": br.overhead_table_rows(rep),
                      "kernels": [o["kernel"] for o in rep["overhead"]],
                      "sources": [br.overhead_line(o)[2:]
                                  .replace("`", "``")
                                  for o in rep["overhead"]]}
                     if rep["overhead"] else None),
        "plots": (images(plots, "iops", "IOPS per system and the overhead "
                         "ratios")
                  + images(plots, "trace", "iowatcher: the device and both "
                           "members, during zipf")),
        "plots_note": (f"Plots skipped: {text(skipped)}." if skipped
                       else None),
        "unreadable": rep["unreadable"],
    }


def shown_dir(path):
    """path from here (make bench: results/bench), or whole if outside."""
    rel = os.path.relpath(path)
    return path if rel.startswith("..") else rel


def goal_fmt(g):
    """A goal row's format; rows stored before they carried one (the 0.3
    baseline) by what their figure counts."""
    if g.get("fmt"):
        return g["fmt"]
    if "seconds" in g["figure"]:
        return "s"
    return "num" if re.search(r"IOPS|promotions", g["figure"]) else "pct"


def from_baseline(b, source, commit=None):
    """The page of a stored baseline (tests/bench/baseline/*.json): its
    figure tables and goal rows as they were stored, no plots."""
    goals = [dict(g, fmt=goal_fmt(g)) for g in b.get("goals", [])]
    sections = []
    z = b.get("zipf")
    if z:
        w = dict(z, name=f"zipf-{z['params']['extent_sectors']}")
        sections.append(zipf_section(
            w, [dict(g, fmt=goal_fmt(g)) for g in z.get("goals", [])], []))
    for n in br.WORKLOAD_NAMES:
        w = b.get("workloads", {}).get(n)
        if w:
            sections.append(workload_section(
                n, w, w["columns"], w["rows"],
                [g for g in goals if g["workload"] == n], []))
    run = [f"Results: ``{source}``"
           + (f", committed in {commit}" if commit else "") + ": "
           + text(b.get("what", "a stored baseline")) + "."]
    if b.get("version"):
        run.append(f"Module: {text(b['version'])}.")
    if z and z.get("run"):
        run.append(f"zipf: {text(z['run'])}.")
    return {"generator": "Generated by ``tests/bench/perf_rst.py "
                         "--baseline`` from a stored baseline; ``make "
                         "bench`` writes it anew from a full run. Do not "
                         "edit by hand.",
            "run": run, "sections": sections, "overhead": None,
            "plots": [], "unreadable": [],
            "plots_note": "No plots: a stored baseline keeps the figures, "
                          "not the status samples and fio latencies the "
                          "plots draw. ``make bench`` writes this page "
                          "with them."}


# --- reStructuredText ------------------------------------------------------

def text(s):
    """s as inline text: no markup of its own, on one line."""
    s = " ".join(str(s).split())
    s = re.sub(r"([\\*`|])", r"\\\1", s)
    return re.sub(r"_(?=\W|$)", r"\\_", s)


def cell(s):
    """A table cell's text: a cell that would start a list is escaped."""
    s = text(s)
    if re.match(r"([-+*]|\d+[.)]|#\.|\(\w+\))(\s|$)", s):
        s = "\\" + s
    return s


def para(s, first="", rest=""):
    """A paragraph (first, rest: "- ", "  " for a bullet) at 76 columns."""
    return textwrap.wrap(s, 76, initial_indent=first, subsequent_indent=rest,
                         break_long_words=False, break_on_hyphens=False)


def bullets(items):
    return [line for i in items for line in para(i, "- ", "  ")] + [""]


def heading(title, ch):
    return [title, ch * len(title), ""]


def list_table(head, rows):
    out = [".. list-table::", "   :header-rows: 1", ""]
    for r in [head] + rows:
        out += [(("   * - " if i == 0 else "     - ") + cell(c)).rstrip()
                for i, c in enumerate(r)]
    return out + [""]


def image_lines(png, alt):
    return [f".. image:: {PNG_DIR}/{png_name(png)}", f"   :alt: {text(alt)}",
            ""]


def goal_table_rows(goals):
    return [r[1:] for r in br.goal_rows({"goals": goals})]


def method(page):
    lat = "; ".join(sorted({s["latencies"] for s in page["sections"]}))
    return heading("Method", "=") + bullets([
        "Each benchmark runs in its own QEMU guest boot (virtme-ng, TCG: "
        "no KVM, 2 vCPUs), the module built from this tree for Debian's "
        "6.1 kernel. The systems of one table ran side by side in that "
        "boot, each on fresh devices made the same way. Under TCG "
        "absolute IOPS and latencies are slow and move with the host's "
        "load: compare the systems of one table, not runs.",
        "Devices: memory-backed null_blk in timer mode, the HDD at queue "
        "depth 1 and the SSD at depth 32" + (f" ({lat})" if lat else "") +
        "; their sizes in each section. dm-hottier's SSD is larger by "
        "its metadata area; dm-cache's metadata is on a separate 8 MiB "
        "null_blk with the SSD's latency.",
        "Systems: dm-hottier; dm-cache ``writethrough smq``, its block "
        "the extent (zipf at other extents also runs 64 KiB blocks); "
        "dm-linear over the HDD. fio jobs are libaio, direct I/O, "
        "``randseed=4242``.",
        "Hit ratio: read hits / (hits + misses) from the status counters, "
        "sampled every second (DM_TABLE_STATUS). SSD share: reads the SSD "
        "served / reads. Steady: the last third of a run (of a phase for "
        "moving). Final (zipf): the last 10 to 30 s, a fifth of the run. "
        "Warm-up: until the hit ratio of the last 5 s reaches 0.9 x the "
        "final one.",
        "Oracle: the best static placement, the most read units that fit "
        "in the usable SSD, counted from the run's own offset stream "
        "(fio's write_iolog, or the listeners' replayed logs). No "
        "placement that stays put does better.",
        "Overhead: dm-hottier against dm-linear (and md RAID1 for "
        "write-through writes) on zero-latency null_blk devices, as IOPS "
        "ratios; at queue depth, the median of paired rounds run in "
        "alternating order (``tests/lib/overhead.py``).",
        "Goals: issue 14's, checked by ``tests/bench/bench_report.py`` "
        "on the figures of the same run. n/a: a figure the goal needs is "
        "missing."])


def gaps(page):
    out = []
    present = {s["key"] for s in page["sections"]}
    for s in page["sections"]:
        for g in s["goals"]:
            v = br.goal_value(g["value"], g["fmt"])
            t = br.goal_value(g["target"], g["fmt"])
            if g["result"] == "FAIL":
                out.append(f"{s['name']}: {g['goal']}: FAIL, {v} against "
                           f"{t} ({g['figure']}).")
            elif g["result"] == "n/a":
                out.append(f"{s['name']}: {g['goal']}: not decided, a "
                           f"figure it needs is missing ({g['figure']}: "
                           f"{v}).")
        out += [f"{s['name']}: problem: {p}" for p in s["problems"]]
    out += [f"{n}: not in this run." for n in EXPECTED if n not in present]
    if page["overhead"] is None:
        out.append("overhead: not in this run.")
    out += [f"Unreadable, left out: {u}" for u in page["unreadable"]]
    return out


def render(page):
    title = "dm-hottier performance"
    out = ["=" * len(title), title, "=" * len(title), ""]
    kernels = sorted({k for k in [s["kernel"] for s in page["sections"]]
                      + (page["overhead"] or {}).get("kernels", []) if k})
    out += para(page["generator"]) + [""] + bullets(
        page["run"] + [f"Kernel: {', '.join(kernels) or 'not recorded'}."])
    out += method(page)
    for s in page["sections"]:
        out += heading(s["title"], "=")
        out += para(text(s["what"]) + ".") + [""] + para(s["setup"]) + [""]
        out += list_table(s["head"], s["rows"])
        shown = [g for g in s["goals"] if g["result"] != "report"]
        if shown:
            out += ["Goals:", ""] + list_table(GOAL_HEAD,
                                               goal_table_rows(shown))
        for g in sorted({g["goal"] for g in s["goals"]} -
                        {g["goal"] for g in shown}):
            out += para(f"Goal: {text(g)}, without a target: the table "
                        "above.") + [""]
        for p in s["problems"]:
            out += para(f"Problem: {text(p)}") + [""]
        for png, alt in s["images"]:
            out += image_lines(png, alt)
    out += heading("Overhead against dm-linear and md RAID1", "=")
    o = page["overhead"]
    if o:
        out += bullets(o["sources"])
        out += list_table(br.OVERHEAD_HEAD, o["rows"])
        out += para("Ratio: dm-hottier IOPS / base IOPS; at queue depth, "
                    "the median of the paired rounds' ratios.") + [""]
    else:
        out += ["Not in this run.", ""]
    out += heading("Plots", "=")
    for png, alt in page["plots"]:
        out += image_lines(png, alt)
    if page["plots_note"]:
        out += para(page["plots_note"]) + [""]
    elif not page["plots"]:
        out += [("Each workload's plots are in its section."
                 if any(s["images"] for s in page["sections"])
                 else "None."), ""]
    out += heading("Gaps", "=")
    g = gaps(page)
    out += (bullets(text(x) for x in g) if g else
            ["None: every goal measured passed and every workload ran."])
    return "\n".join(out).rstrip("\n") + "\n"


def write(page, out_dir, png_dir=None):
    """performance.rst into out_dir, and the PNGs it shows (from png_dir)
    into out_dir/performance/, which keeps no other plot."""
    pngs = [p for p, _ in page["plots"]] + [
        p for s in page["sections"] for p, _ in s["images"]]
    d = os.path.join(out_dir, PNG_DIR)
    for old in glob.glob(os.path.join(d, "*.png")):
        os.unlink(old)
    if pngs:
        os.makedirs(d, exist_ok=True)
    for p in pngs:
        shutil.copyfile(os.path.join(png_dir, p),
                        os.path.join(d, png_name(p)))
    path = os.path.join(out_dir, PAGE)
    with open(path, "w") as f:
        f.write(render(page))
    return path


def committed_in(path):
    """The commit that added path, as "<hash> (<date>)"; None outside git."""
    try:
        r = subprocess.run(["git", "log", "--diff-filter=A", "-1",
                            "--format=%h (%ad)", "--date=short", "--",
                            os.path.basename(path)],
                           cwd=os.path.dirname(os.path.abspath(path)),
                           capture_output=True, text=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        return None
    return r.stdout.strip() or None


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--baseline", required=True,
                    help="a stored baseline, tests/bench/baseline/*.json")
    ap.add_argument("--out", default="Documentation",
                    help="where performance.rst goes (Documentation)")
    args = ap.parse_args(argv)
    with open(args.baseline) as f:
        b = json.load(f)
    src = os.path.relpath(args.baseline)
    path = write(from_baseline(b, src, committed_in(args.baseline)),
                 args.out)
    print(f"page: {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
