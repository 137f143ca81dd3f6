"""make bench's report (tests/bench/bench_report.py): the table rows,
final / oracle, the latency CDF from fio's percentiles, the overhead rows,
report.md and report.json with and without matplotlib, the plots, and
performance.rst (tests/bench/perf_rst.py), parsed by docutils, from the
results and from the stored baseline.

The fixtures in data/bench/ are real results of one make bench run,
trimmed: zipf-128/zipf.json keeps its params, definitions, aliases and
problems, and of each run the figures the report uses, every 10th status
sample and the last (t, read_hits, read_misses, used, total) and the 10 s
bins (t_end, hit_ratio, iops, used); fio-<name>.json keep fio's version
and the first job's error, IOPS, reads, runtime and clat_ns; overhead/ holds
the whole overhead.json and the first line of the guest's kernel.log;
host-load.txt is whole."""

import io
import json
import os
import shutil
import subprocess
import sys

import docutils.core
import docutils.nodes
import pytest

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import bench_report as br  # noqa: E402
import perf_rst  # noqa: E402

DATA = os.path.join(os.path.dirname(__file__), "data", "bench")
REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
BASELINE = os.path.join(REPO, "tests", "bench", "baseline",
                        "0.3-6.1-workloads.json")
DEBIAN_PYTHON = "/usr/bin/python3"
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"


def fixture_json(*parts):
    with open(os.path.join(DATA, *parts)) as f:
        return json.load(f)


def copy_results(tmp_path, *names):
    """The fixture directories named, in a fresh results directory."""
    d = tmp_path / "bench"
    d.mkdir()
    for n in names:
        shutil.copytree(os.path.join(DATA, n), d / n)
    return d


# --- arithmetic -------------------------------------------------------------

def test_hit_ratio_and_quotients_are_none_without_a_base():
    assert br.hit_ratio(3, 1) == 0.75
    assert br.hit_ratio(0, 0) is None
    assert br.over(0.85, 0.5) == 1.7
    assert br.over(None, 0.5) is None
    assert br.over(0.85, 0) is None
    assert br.over(0.85, None) is None


def test_hit_ratio_per_sample_takes_differences_of_the_counters():
    samples = [{"t": 0.0, "read_hits": 0, "read_misses": 0},
               {"t": 1.0, "read_hits": 30, "read_misses": 70},
               {"t": 2.0, "read_hits": 30, "read_misses": 70},
               {"t": 3.0, "read_hits": 120, "read_misses": 80}]
    assert br.per_sample_hit_ratio(samples) == [[1.0, 0.3], [2.0, None],
                                                [3.0, 0.9]]


def test_bins_start_where_the_previous_one_ended():
    samples = [{"t": 0.0}, {"t": 10.0}]
    bins = [{"t_end": 10.0, "hit_ratio": 0.5, "iops": 100},
            {"t_end": 20.0, "hit_ratio": None, "iops": 0},
            {"t_end": 31.4, "hit_ratio": 0.8, "iops": 900}]
    assert br.bin_spans(samples, bins) == [[0.0, 10.0, 0.5, 100],
                                           [10.0, 20.0, None, 0],
                                           [20.0, 31.4, 0.8, 900]]


def test_latency_cdf_points_are_fios_percentiles_in_ms():
    cdf = br.latency_cdf(fixture_json("zipf-128", "fio-hottier.json"))
    pts = cdf["points"]
    assert [p for _, p in pts] == [1, 5, 10, 20, 30, 40, 50, 60, 70, 80, 90,
                                   95, 99, 99.5, 99.9, 99.95, 99.99]
    # fio: "1.000000": 1302528 ns ... "99.990000": 76021760 ns
    assert pts[0] == [1.302528, 1.0]
    assert pts[6] == [12.77952, 50.0]
    assert pts[-1] == [76.02176, 99.99]
    assert all(a[0] <= b[0] for a, b in zip(pts, pts[1:]))
    assert cdf["p50_ms"] == 12.77952
    assert cdf["p99_ms"] == 42.729472
    assert (cdf["min_ms"], cdf["max_ms"]) == (0.24382, 91.06569)
    assert cdf["mean_ms"] == 14044715.994689 / 1e6
    assert cdf["reads"] == 160422


def test_latency_cdf_sorts_percentiles_numerically_and_needs_them():
    fio = {"jobs": [{"read": {"clat_ns": {
        "min": 1000, "max": 9000000, "mean": 2000000, "N": 10,
        "percentile": {"99.900000": 8000000, "5.000000": 1000000,
                       "50.000000": 2000000, "10.000000": 1500000}}}}]}
    cdf = br.latency_cdf(fio)
    assert cdf["points"] == [[1.0, 5.0], [1.5, 10.0], [2.0, 50.0],
                             [8.0, 99.9]]
    assert cdf["p99_ms"] is None and cdf["p50_ms"] == 2.0
    fio["jobs"][0]["read"]["clat_ns"].pop("percentile")
    assert br.latency_cdf(fio) is None


def test_the_table_rows_come_from_zipf_json():
    z = fixture_json("zipf-128", "zipf.json")
    h = br.system_row(z["runs"]["hottier"])
    assert h["label"] == "dm-hottier" and h["unit"] == "64KiB"
    assert (h["iops"], h["p99_ms"]) == (1069.5, 42.729)
    assert h["mean_hit_ratio"] == 0.8183478575257758
    assert h["final_hit_ratio"] == 0.8507128519223841
    assert h["oracle"] == 0.8918        # the oracle at the run's unit
    assert h["final_over_oracle"] == 0.8507128519223841 / 0.8918
    assert (h["warmup_s"], h["warmup_reads"]) == (23.0, 16240)
    c = br.system_row(z["runs"]["cache"])
    assert c["label"] == "dm-cache smq 64KiB"
    assert c["oracle"] == 0.8927
    assert c["final_over_oracle"] == 0.829162583854677 / 0.8927
    rep = br.collect(DATA)
    assert br.zipf_table_rows(rep) == [
        ["zipf-128", "dm-hottier", "64KiB", "1070", "42.7", "81.8%",
         "85.1%", "89.2%", "0.954", "23 s (16240 reads)"],
        ["zipf-128", "dm-cache smq 64KiB", "64KiB", "878", "60.0", "81.2%",
         "82.9%", "89.3%", "0.929", "17 s (8347 reads)"]]


def test_the_oracle_is_the_one_at_the_runs_unit():
    run = dict(fixture_json("zipf-128", "zipf.json")["runs"]["hottier"])
    run.update(unit_sectors=8, oracle_at_unit=run["oracle"]["4KiB"])
    row = br.system_row(run)
    assert (row["unit"], row["oracle"]) == ("4KiB", 1.0)
    assert row["final_over_oracle"] == 0.8507128519223841


def test_the_samples_agree_with_the_whole_run_hit_ratio():
    """zipf.py's samples count from fio's first read: the last one's
    hits / reads is the whole run's hit ratio."""
    for run in fixture_json("zipf-128", "zipf.json")["runs"].values():
        last = run["samples"][-1]
        assert br.hit_ratio(last["read_hits"], last["read_misses"]) == \
            run["overall_hit_ratio"]


def test_overhead_rows_keep_the_median_ratio_and_the_rounds_range():
    rows = br.overhead_rows(fixture_json("overhead", "overhead.json"))
    assert [(r["test"], r["io"], r["base"]) for r in rows] == [
        ("randread_4k", br.DEPTH1, "dm-linear"),
        ("seqread_1m", br.DEPTH1, "dm-linear"),
        ("randwrite_4k", br.DEPTH1, "dm-linear"),
        ("randread_miss_4k_qd64", br.PARALLEL, "dm-linear"),
        ("randread_hit_4k_qd64", br.PARALLEL, "dm-linear"),
        ("randwrite_through_4k_qd64", br.PARALLEL, "md RAID1")]
    assert rows[0] == {"test": "randread_4k", "io": br.DEPTH1,
                       "base": "dm-linear", "base_iops": 18195,
                       "hottier_iops": 16417, "ratio": 0.902, "rounds": 1,
                       "ratio_min": None, "ratio_max": None}
    miss = rows[3]
    assert (miss["base_iops"], miss["hottier_iops"]) == (13475, 10991)
    assert miss["ratio"] == 0.881           # the median round, as written
    assert (miss["rounds"], miss["ratio_min"], miss["ratio_max"]) == \
        (5, 0.54, 1.119)
    rep = {"overhead": [{"name": "overhead", "rows": rows}]}
    table = br.overhead_table_rows(rep)
    assert table[0] == ["overhead/", "randread_4k", br.DEPTH1, "dm-linear",
                        "18195", "16417", "0.902", "1 run"]
    assert table[5][-2:] == ["1.020", "5: 0.938 - 1.290"]


def test_the_kernel_comes_from_the_guests_log(tmp_path):
    assert br.kernel_of_log(os.path.join(DATA, "overhead", "kernel.log")) \
        == "6.1.0-56-amd64"
    (tmp_path / "kernel.log").write_text("[ 0.0] nothing here\n")
    assert br.kernel_of_log(str(tmp_path / "kernel.log")) is None
    assert br.kernel_of_log(str(tmp_path / "absent.log")) is None


def test_host_load_keeps_the_three_averages():
    assert br.host_load("host load before: 3.40 4.35 5.43 4/94 4085") == \
        "before 3.40 4.35 5.43"


# --- report.md and report.json ----------------------------------------------

def no_matplotlib(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)


def test_without_matplotlib_the_report_is_written_and_says_why(
        tmp_path, capsys, monkeypatch):
    no_matplotlib(monkeypatch)
    d = copy_results(tmp_path, "zipf-128", "overhead")
    (d / "report-stale.png").write_bytes(PNG_MAGIC)
    assert br.main([str(d)]) == 0
    out = capsys.readouterr().out
    assert f"report: {d / 'report.md'}" in out
    assert "plots skipped: matplotlib is missing" in out
    md = (d / "report.md").read_text()
    assert "Plots skipped: matplotlib is missing" in md
    assert "python3-matplotlib" in md
    assert "![" not in md
    assert not list(d.glob("*.png"))        # no stale plot beside it
    assert "from the results in this directory" in md
    assert "kernel 6.1.0-56-amd64; fio `--rw=randread --bs=4k" in md
    assert "150 s; HDD 1024 MiB (4 ms a read), SSD 128 MiB usable " \
           "(100 us a read), extent 128 sectors (64KiB) = 2048 slots" in md
    assert "before 3.40 4.35 5.43, after 5.15 4.39 5.05" in md
    assert ("| zipf-128 | dm-hottier | 64KiB | 1070 | 42.7 | 81.8% | 85.1% "
            "| 89.2% | 0.954 | 23 s (16240 reads) |") in md
    assert ("| overhead/ | randread_miss_4k_qd64 | 2 jobs x iodepth 32 | "
            "dm-linear | 13475 | 10991 | 0.881 | 5: 0.540 - 1.119 |") in md
    assert "Final hit ratio: over the last 30 s" in md
    assert "`cache64k` is the same run as `cache`" in md
    rep = json.loads((d / "report.json").read_text())
    assert rep["plots"] == {}
    assert rep["plots_skipped"].startswith("matplotlib is missing")
    (w,) = rep["zipf"]
    assert [s["name"] for s in w["systems"]] == ["hottier", "cache"]
    assert w["systems"][0]["final_over_oracle"] == \
        0.8507128519223841 / 0.8918
    assert w["systems"][1]["latency"]["p99_ms"] == 60.030976
    assert rep["overhead"][0]["kernel"] == "6.1.0-56-amd64"


def test_only_overhead(tmp_path, monkeypatch):
    no_matplotlib(monkeypatch)
    d = copy_results(tmp_path, "overhead")
    assert br.main([str(d)]) == 0
    md = (d / "report.md").read_text()
    assert "## Overhead against dm-linear and md RAID1" in md
    assert "zipf" not in md
    assert json.loads((d / "report.json").read_text())["zipf"] == []


def test_only_zipf_and_a_missing_fio_json(tmp_path, monkeypatch):
    no_matplotlib(monkeypatch)
    d = copy_results(tmp_path, "zipf-128")
    (d / "zipf-128" / "fio-cache.json").unlink()
    assert br.main([str(d)]) == 0
    md = (d / "report.md").read_text()
    assert "| zipf-128 | dm-cache smq 64KiB |" in md
    assert "Overhead" not in md
    assert ("no latency CDF for dm-cache smq 64KiB: no "
            "`zipf-128/fio-cache.json`") in md
    rep = json.loads((d / "report.json").read_text())
    assert rep["zipf"][0]["systems"][1]["latency"] is None
    assert rep["zipf"][0]["systems"][0]["latency"]["reads"] == 160422


def test_an_unreadable_result_is_named_and_the_rest_reported(
        tmp_path, monkeypatch):
    no_matplotlib(monkeypatch)
    d = copy_results(tmp_path, "zipf-128", "overhead")
    (d / "zipf-256").mkdir()
    (d / "zipf-256" / "zipf.json").write_text('{"bench": "zipf", ')
    assert br.main([str(d)]) == 0
    md = (d / "report.md").read_text()
    assert "- unreadable, left out: zipf-256/zipf.json: JSONDecodeError" \
        in md
    assert "| zipf-128 | dm-hottier |" in md


def test_no_results_is_an_error_but_still_a_report(tmp_path, monkeypatch,
                                                   capsys):
    no_matplotlib(monkeypatch)
    d = copy_results(tmp_path)
    assert br.main([str(d)]) == 1
    assert "no results" in capsys.readouterr().err
    assert "No results found" in (d / "report.md").read_text()


def test_out_elsewhere_names_the_results_directory(tmp_path, monkeypatch):
    no_matplotlib(monkeypatch)
    out = tmp_path / "out"
    assert br.main([DATA, "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert f"from the results in `{os.path.relpath(DATA, out)}/`" in md


def test_the_plots_are_pngs_linked_from_the_report(tmp_path):
    """With Debian's python3, which setup installs python3-matplotlib
    for and make bench plots with (pytest may run under another one)."""
    d = copy_results(tmp_path, "zipf-128", "overhead")
    r = subprocess.run([DEBIAN_PYTHON, br.__file__, str(d)],
                       capture_output=True, text=True,
                       env={**os.environ, "MPLBACKEND": "Agg"})
    assert r.returncode == 0, r.stderr
    names = ["report-hit-ratio-zipf-128.png", "report-latency-zipf-128.png",
             "report-iops.png"]
    assert r.stdout.splitlines() == [
        f"report: {d / 'report.md'}", f"page: {d / 'performance.rst'}"] + [
        f"plot: {d / n}" for n in names]
    md = (d / "report.md").read_text()
    for n in names:
        assert (d / n).read_bytes()[:8] == PNG_MAGIC
        assert f"]({n})" in md              # relative to report.md
    assert "skipped" not in md
    rep = json.loads((d / "report.json").read_text())
    assert rep["plots_skipped"] is None
    assert sorted(sum(rep["plots"].values(), [])) == sorted(names)


@pytest.mark.parametrize("only", ["zipf-128", "overhead"])
def test_the_iops_plot_copes_with_one_kind_of_result(tmp_path, only):
    d = copy_results(tmp_path, only)
    r = subprocess.run([DEBIAN_PYTHON, br.__file__, str(d)],
                       capture_output=True, text=True,
                       env={**os.environ, "MPLBACKEND": "Agg"})
    assert r.returncode == 0, r.stderr
    assert (d / "report-iops.png").read_bytes()[:8] == PNG_MAGIC


def trace_record():
    """A record of the shape hottierctl trace --json prints."""
    def member(kname, reads, writes, own=None):
        m = {"kernel_name": kname, "reads": reads, "read_sectors": 8 * reads,
             "writes": writes, "write_sectors": 128 * writes,
             "q2c": {"read": {"mean_us": 900.0, "p50_us": 800.0,
                              "p99_us": 4100.0},
                     "write": None}}
        if own is not None:
            m["own"] = own
        return m
    own = {"reads": 3, "read_sectors": 384, "writes": 0, "write_sectors": 0}
    return {"name": "bt_hottier", "kernel_name": "dm-3", "seconds": 10.0,
            "output": None, "svg": "/tmp/x/trace.svg", "dropped_events": 0,
            "classified": True, "device": member("dm-3", 1000, 0),
            "hdd": member("nullb0", 180, 0, own),
            "ssd": member("dm-2", 823, 3, dict(own, reads=0, writes=3)),
            "ssd_read_share": {"reads": 0.8205, "sectors": 0.8205},
            "counters": {"reads": 1000, "replica_reads_ssd": 823,
                         "read_misses": 170, "replica_reads_hdd": 7,
                         "promotions": 3, "migrations_at_start": 0,
                         "migrations_at_end": 0},
            "notes": [], "workload": {"warm_s": 30, "runtime_s": 50}}


def test_the_trace_is_in_the_report_as_hottierctl_prints_it(
        tmp_path, monkeypatch):
    no_matplotlib(monkeypatch)
    d = copy_results(tmp_path, "overhead")
    (d / "trace").mkdir()
    (d / "trace" / "trace.json").write_text(json.dumps(trace_record()))
    (d / "trace" / "trace.png").write_bytes(PNG_MAGIC + b"iowatcher")
    out = tmp_path / "out"
    assert br.main([str(d), "--out", str(out)]) == 0
    md = (out / "report.md").read_text()
    assert "## One trace: blktrace of the zipf workload" in md
    assert "for 10.0 s, after 30 s of the zipf workload" in md
    assert ("SSD share of the member reads the device sent: 82.0% of "
            "reads") in md
    assert "status over the trace: 1000 reads, 823 to the SSD" in md
    assert "](report-trace.png)" in md
    assert (out / "report-trace.png").read_bytes() == \
        PNG_MAGIC + b"iowatcher"
    rep = json.loads((out / "report.json").read_text())
    assert rep["trace"]["ssd_read_share"]["reads"] == 0.8205
    assert rep["plots"]["trace"] == ["report-trace.png"]


def test_a_trace_without_its_png_or_unreadable(tmp_path, monkeypatch):
    no_matplotlib(monkeypatch)
    d = copy_results(tmp_path, "overhead")
    (d / "trace").mkdir()
    (d / "trace" / "trace.json").write_text(json.dumps(trace_record()))
    assert br.main([str(d)]) == 0
    md = (d / "report.md").read_text()
    assert "## One trace" in md and "report-trace.png" not in md
    (d / "trace" / "trace.json").write_text('{"name": ')
    assert br.main([str(d)]) == 0
    md = (d / "report.md").read_text()
    assert "## One trace" not in md
    assert "- unreadable, left out: trace/trace.json: JSONDecodeError" in md


# --- performance.rst ------------------------------------------------

def rst_tree(text):
    """The doctree docutils parses text into, with no message of any
    level (info included): valid reStructuredText."""
    warnings = io.StringIO()
    doc = docutils.core.publish_doctree(text, settings_overrides={
        "warning_stream": warnings, "report_level": 1, "halt_level": 5})
    msgs = [m.astext() for m in doc.findall(docutils.nodes.system_message)]
    assert not msgs and not warnings.getvalue(), (msgs, warnings.getvalue())
    return doc


def sections(doc):
    return {sec[0].astext(): sec
            for sec in doc.findall(docutils.nodes.section)}


def tables(node):
    """Each table under node as its rows of cell texts."""
    return [[[e.astext() for e in row.findall(docutils.nodes.entry)]
             for row in t.findall(docutils.nodes.row)]
            for t in node.findall(docutils.nodes.table)]


def items(node):
    return [li.astext().replace("\n", " ")
            for li in node.findall(docutils.nodes.list_item)]


def page_of(d):
    return rst_tree((d / "performance.rst").read_text())


def test_the_page_is_written_beside_the_report_from_the_results(
        tmp_path, monkeypatch):
    no_matplotlib(monkeypatch)
    d = copy_results(tmp_path, "zipf-128", "overhead")
    assert br.main([str(d), "--module-version", "0.3.0, git abc1234"]) == 0
    doc = page_of(d)
    secs = sections(doc)
    assert list(secs) == ["Method", "zipf-128: a zipf workload",
                          "Overhead against dm-linear and md RAID1",
                          "Plots", "Gaps"]
    figures, goals = tables(secs["zipf-128: a zipf workload"])
    assert figures[0] == perf_rst.ZIPF_HEAD
    assert figures[1] == ["dm-hottier", "64KiB", "1070", "42.7", "81.8%",
                          "85.1%", "84.8%", "89.2%", "0.954",
                          "23 s (16240 reads)"]
    assert goals[0] == perf_rst.GOAL_HEAD
    assert [r[0::4] for r in goals[1:]] == [
        ["steady hit ratio >= smq's + 2 points", "PASS"],
        ["within 2% of the oracle at 64 KiB", "FAIL"],
        ["IOPS ahead of smq", "PASS"]]
    (over,) = tables(secs["Overhead against dm-linear and md RAID1"])
    assert over[4] == ["overhead/", "randread_miss_4k_qd64",
                       "2 jobs x iodepth 32", "dm-linear", "13475", "10991",
                       "0.881", "5: 0.540 - 1.119"]
    head = doc.astext()
    assert "Module: 0.3.0, git abc1234." in head
    assert "Kernel: 6.1.0-56-amd64." in head
    assert "Plots skipped: matplotlib is missing" in \
        secs["Plots"].astext()
    assert items(secs["Gaps"]) == [
        "zipf-128: within 2% of the oracle at 64 KiB: FAIL, 84.8% against "
        "87.2% (dm-hottier steady hit ratio (oracle at 64 KiB - 2 "
        "points)).",
        "moving: not in this run.", "streaming: not in this run.",
        "backup: not in this run.", "softlayer: not in this run.",
        "capture: not in this run."]
    assert not (d / "performance").exists()


def test_a_missed_workload_goal_is_failed_and_a_gap(tmp_path, monkeypatch):
    no_matplotlib(monkeypatch)
    d = copy_results(tmp_path)
    (d / "capture").mkdir()
    cap = {"workload": "capture", "description": "a writer *beside* `reads`",
           "params": {"seconds": 30, "budget_us": 20000,
                      "kernel": "6.1.0-56-amd64"},
           "problems": ["capture: RuntimeError('fio |failed| _x_')"],
           "systems": {"hottier-budget": {
               "label": "dm-hottier, migration_budget_us 20000",
               "figures": {"writer_bw_kib_s": 1800.0, "writer_held": 0.88}},
               "linear": {"label": "dm-linear (HDD)", "figures": {}}}}
    (d / "capture" / "capture.json").write_text(json.dumps(cap))
    assert br.main([str(d)]) == 0
    secs = sections(page_of(d))
    sec = secs["capture: a capture writer beside promotions"]
    figures, goals = tables(sec)
    assert [r[0] for r in figures] == [
        "system", "dm-hottier, migration_budget_us 20000",
        "dm-linear (HDD)"]
    assert figures[2][1] == "-"             # a missing figure, not a list
    assert goals[1][2:] == ["88.0%", "95.0%", "FAIL"]
    assert "a writer *beside* `reads`" in sec.astext()
    gaps = items(secs["Gaps"])
    assert gaps[0] == (
        "capture: the writer's bandwidth holds with migration_budget_us "
        "set: FAIL, 88.0% against 95.0% (writer bandwidth / its rate, "
        "dm-hottier with migration_budget_us 20000).")
    assert "capture: problem: capture: RuntimeError('fio |failed| _x_')" \
        in gaps
    assert "zipf: not in this run." in gaps
    assert "capture: not in this run." not in gaps
    assert "overhead: not in this run." in gaps


def test_the_page_shows_the_plots_beside_it(tmp_path):
    """With Debian's python3 (matplotlib), as make bench runs it."""
    d = copy_results(tmp_path, "zipf-128", "overhead")
    (d / "performance").mkdir()
    (d / "performance" / "stale.png").write_bytes(PNG_MAGIC)
    r = subprocess.run([DEBIAN_PYTHON, br.__file__, str(d)],
                       capture_output=True, text=True,
                       env={**os.environ, "MPLBACKEND": "Agg"})
    assert r.returncode == 0, r.stderr
    doc = page_of(d)
    shown = [i["uri"] for i in doc.findall(docutils.nodes.image)]
    assert shown == ["performance/hit-ratio-zipf-128.png",
                     "performance/latency-zipf-128.png",
                     "performance/iops.png"]
    for uri in shown:                       # relative to the page
        assert (d / uri).read_bytes() == \
            (d / ("report-" + os.path.basename(uri))).read_bytes()
    assert sorted(p.name for p in (d / "performance").iterdir()) == \
        sorted(os.path.basename(u) for u in shown)


def test_the_page_of_the_stored_baseline(tmp_path):
    with open(BASELINE) as f:
        b = json.load(f)
    page = perf_rst.from_baseline(b, "baseline.json", "bb2bf8e (2026-11-25)")
    perf_rst.write(page, str(tmp_path))
    doc = page_of(tmp_path)
    secs = sections(doc)
    wl = [t for t in secs if t.split(":")[0] in
          ["zipf-128"] + br.WORKLOAD_NAMES]
    assert [t.split(":")[0] for t in wl] == ["zipf-128"] + br.WORKLOAD_NAMES
    for t in wl:                # figures, and goals with a target
        assert len(tables(secs[t])) == (1 if t.startswith("softlayer")
                                        else 2)
    assert "Module: 0.3 (README status; VERSION file 0.1.0)." in \
        doc.astext()
    assert "committed in bb2bf8e (2026-11-25)" in doc.astext()
    moving = tables(secs["moving: a hot set that moves"])[1]
    assert moving[1][2:] == ["-", "19.1%", "n/a"]
    assert moving[2][2:] == ["26 s", "27 s", "PASS"]
    gaps = items(secs["Gaps"])
    assert [g.split(":")[0] for g in gaps] == [
        "zipf-128", "zipf-128", "moving", "streaming", "overhead"]
    assert gaps[3] == (
        "streaming: SSD's share of sectors read >= 0.9 x the oracle's: "
        "FAIL, 47.1% against 52.6% (dm-hottier steady SSD share (0.9 x "
        "files oracle)).")
    assert gaps[2].startswith("moving: no dip: after the fill >= 0.95 x "
                              "the pre-fill ratio: not decided")
    assert not list(doc.findall(docutils.nodes.image))


def test_the_committed_page_is_valid_and_its_plots_are_there():
    path = os.path.join(REPO, "Documentation", "performance.rst")
    with open(path) as f:
        doc = rst_tree(f.read())
    assert "Gaps" in sections(doc)
    for i in doc.findall(docutils.nodes.image):
        assert os.path.exists(os.path.join(os.path.dirname(path), i["uri"]))


def test_rst_text_has_no_markup_of_its_own():
    assert perf_rst.text("a*b `c` |d| e_ f_g\n h") == \
        "a\\*b \\`c\\` \\|d\\| e\\_ f_g h"
    assert perf_rst.cell("-") == "\\-"
    assert perf_rst.cell("1. x") == "\\1. x"
    assert perf_rst.cell("-83") == "-83"
    assert perf_rst.cell("") == ""
    doc = rst_tree("\n".join(perf_rst.list_table(
        ["a", "b"], [["-", ""], ["* x", "(a) y"]])))
    assert tables(doc) == [[["a", "b"], ["-", ""], ["* x", "(a) y"]]]
