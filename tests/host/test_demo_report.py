"""make demo's arithmetic (tests/bench/demo_report.py): hit ratios from
counter differences, IOPS per interval, speed-ups, the summary, and the
plot or the reason it was skipped."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import demo_report as dr  # noqa: E402

DEBIAN_PYTHON = "/usr/bin/python3"


def hot_sample(t, reads, hits, misses, used, total=2047):
    return {"t": t, "reads": reads, "read_hits": hits, "read_misses": misses,
            "slots_used": used, "slots_total": total}


# Counters as the device gives them: the first sample is taken before fio
# starts, with reads from udev's probe already counted.
HOT = [hot_sample(0.0, 40, 0, 40, 0), hot_sample(10.0, 2540, 500, 2040, 90),
       hot_sample(20.0, 12540, 8500, 4040, 600),
       hot_sample(31.0, 34540, 28300, 6240, 900)]
HDD = [{"t": 0.0, "reads": 7}, {"t": 10.0, "reads": 2507},
       {"t": 20.0, "reads": 5007}]


def run_record(samples, iops, runtime_s):
    return {"samples": samples, "intervals": dr.intervals(samples),
            "fine": dr.intervals(samples), "sample": 10.0,
            "fio": {"iops": iops, "runtime_s": runtime_s}}


def test_hit_ratio_is_hits_over_reads_and_none_without_reads():
    assert dr.hit_ratio(3, 1) == 0.75
    assert dr.hit_ratio(0, 5) == 0.0
    assert dr.hit_ratio(0, 0) is None


def test_intervals_take_differences_of_the_counters():
    recs = dr.intervals(HOT)
    assert [r["reads"] for r in recs] == [2500, 10000, 22000]
    assert [r["iops"] for r in recs] == [250, 1000, 2000]
    assert [(r["hits"], r["misses"]) for r in recs] == [
        (500, 2000), (8000, 2000), (19800, 2200)]
    assert [r["hit_ratio"] for r in recs] == [0.2, 0.8, 0.9]
    assert [r["slots_used"] for r in recs] == [90, 600, 900]
    assert (recs[2]["start"], recs[2]["end"], recs[2]["seconds"]) == \
        (20.0, 31.0, 11.0)


def test_intervals_of_a_plain_device_have_no_hit_ratio():
    recs = dr.intervals(HDD)
    assert [r["iops"] for r in recs] == [250, 250]
    assert all("hit_ratio" not in r for r in recs)
    assert dr.interval_line(recs[0]).split() == ["10.0", "s", "250", "-",
                                                 "-"]


def test_an_interval_without_reads_or_time_has_no_ratio_or_rate():
    same = [hot_sample(0.0, 5, 1, 4, 0), hot_sample(0.0, 5, 1, 4, 0)]
    (rec,) = dr.intervals(same)
    assert rec["iops"] is None and rec["hit_ratio"] is None
    assert dr.interval_line(rec).split() == ["0.0", "s", "-", "-", "0",
                                             "of", "2047"]


def test_printed_intervals_are_every_nth_sample_and_the_last():
    samples = list(range(11))
    assert dr.every(samples, 5) == [0, 5, 10]
    assert dr.every(samples[:10], 5) == [0, 5, 9]
    assert dr.every(samples[:7], 5) == [0, 5, 6]
    assert dr.every(samples[:3], 5) == [0, 2]
    assert dr.every(samples, 1) == samples


def test_speedup_is_a_ratio_of_iops_and_none_without_a_base():
    assert dr.speedup(1000, 250) == 4.0
    assert dr.speedup(1000, 0) is None
    assert dr.speedup(None, 250) is None


def test_summary_compares_with_the_bare_hdd_run():
    s = dr.summarize(run_record(HDD, 250.0, 20.0),
                     run_record(HOT, 1100.0, 31.0))
    assert s["hdd_iops"] == 250.0
    assert s["hottier_iops"] == 1100.0
    assert s["speedup"] == 4.4
    assert s["hottier_last_iops"] == 2000
    assert s["speedup_last"] == 8.0
    assert s["last_seconds"] == 11.0
    assert s["final_hit_ratio"] == 0.9
    # the whole run: (28300 - 0) / (28300 + 6240 - 40)
    assert s["overall_hit_ratio"] == 28300 / 34500
    assert (s["slots_used"], s["slots_total"]) == (900, 2047)
    text = "\n".join(dr.summary_lines(s))
    assert "250 IOPS (20 s, fio)" in text
    assert "1100 IOPS (31 s, fio), speed-up x4.4" in text
    assert "last 11.0 s:   2000 IOPS, speed-up x8.0" in text
    assert "90.0% (whole run 82.0%)" in text


def test_interval_lines_line_up_under_the_header():
    line = dr.interval_line(dr.intervals(HOT)[1])
    assert line.split() == ["20.0", "s", "1000", "80.0%", "600", "of",
                            "2047"]
    header = dr.header_line()
    assert line.index("1000") + 4 == header.index("IOPS") + 4
    assert line.index("80.0%") + 5 == header.index("ratio") + 5


def demo_json(tmp_path):
    hdd = run_record(HDD, 250.0, 20.0)
    hot = run_record(HOT, 1100.0, 31.0)
    data = {"summary": dr.summarize(hdd, hot), "hdd": hdd, "hottier": hot}
    path = tmp_path / "demo.json"
    path.write_text(json.dumps(data))
    return path


def test_summary_command_prints_and_saves(tmp_path, capsys):
    (tmp_path / "hdd.json").write_text(json.dumps(run_record(HDD, 250.0,
                                                             20.0)))
    (tmp_path / "hot.json").write_text(json.dumps(run_record(HOT, 1100.0,
                                                             31.0)))
    dr.main(["summary", str(tmp_path / "hdd.json"),
             str(tmp_path / "hot.json"), "--out", str(tmp_path / "d.json")])
    assert "speed-up x4.4" in capsys.readouterr().out
    saved = json.loads((tmp_path / "d.json").read_text())
    assert saved["summary"]["speedup_last"] == 8.0


def test_without_matplotlib_the_plot_is_skipped_and_says_why(
        tmp_path, capsys, monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    png = tmp_path / "demo.png"
    dr.main(["plot", str(demo_json(tmp_path)), str(png)])
    out = capsys.readouterr().out
    assert out.startswith("plot skipped: matplotlib is missing")
    assert "python3-matplotlib" in out
    assert not png.exists()


def test_the_plot_is_a_png(tmp_path):
    """With Debian's python3, which setup installs python3-matplotlib
    for and make demo plots with (pytest may run under another one)."""
    png = tmp_path / "demo.png"
    r = subprocess.run([DEBIAN_PYTHON, dr.__file__, "plot",
                        str(demo_json(tmp_path)), str(png)],
                       capture_output=True, text=True,
                       env={**os.environ, "MPLBACKEND": "Agg"})
    assert r.returncode == 0, r.stderr
    assert r.stdout == f"plot: {png}\n", r.stdout
    assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
