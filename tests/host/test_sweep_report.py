"""The extent-size sweep's summary (tests/bench/sweep_report.py): rows from
each size's zipf and streaming JSON, the recommendation, sizes with one
workload missing, and the command's output files and errors."""

import json
import os
import subprocess
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import sweep_report as sr  # noqa: E402

DEBIAN_PYTHON = "/usr/bin/python3"
SCRIPT = os.path.join(os.path.dirname(__file__), "..", "bench",
                      "sweep_report.py")


def zipf_json(slots, hot, smq, oracle, ratio):
    return {"params": {"slots": slots},
            "summary": {"hottier_final_hit_ratio": hot,
                        "cache": {"final_hit_ratio": smq,
                                  "hottier_over_cache_iops": ratio}},
            "runs": {"hottier": {"oracle_at_unit": {"oracle": oracle}}}}


def streaming_json(slots, hot, smq, oracle, hbw, lbw):
    return {"params": {"slots": slots},
            "systems": {
                "hottier": {"bw_mib_s": hbw,
                            "figures": {"steady_ssd_share": hot,
                                        "oracle": oracle}},
                "cache": {"bw_mib_s": 1.0,
                          "figures": {"steady_ssd_share": smq}},
                "linear": {"bw_mib_s": lbw}}}


def put(root, extent, name, data):
    d = os.path.join(root, str(extent), "bench", name)
    os.makedirs(d)
    fname = "zipf.json" if name.startswith("zipf") else f"{name}.json"
    with open(os.path.join(d, fname), "w") as f:
        json.dump(data, f)


def sweep(tmp_path):
    root = str(tmp_path)
    put(root, 64, "zipf-64", zipf_json(4096, 0.80, 0.78, 0.90, 1.1))
    put(root, 64, "streaming", streaming_json(1024, 0.40, 0.30, 0.60,
                                              12.0, 8.0))
    put(root, 2048, "zipf-2048", zipf_json(128, 0.70, 0.72, 0.75, 0.9))
    put(root, 2048, "streaming", streaming_json(16, 0.55, 0.50, 0.58,
                                                14.0, 7.0))
    # a size whose streaming run left nothing
    put(root, 512, "zipf-512", zipf_json(512, 0.90, 0.80, 0.95, 1.3))
    os.makedirs(os.path.join(root, "notasize"))
    return root


def test_rows_are_sorted_by_size_with_both_workloads(tmp_path):
    rows = sr.collect(sweep(tmp_path))
    assert [r["extent_kib"] for r in rows] == [32, 256, 1024]
    r = rows[0]
    assert r["zipf"] == {"slots": 4096, "hottier": 0.80, "smq": 0.78,
                         "oracle": 0.90, "iops_over_smq": 1.1}
    assert r["streaming"] == {"slots": 1024, "hottier": 0.40, "smq": 0.30,
                              "oracle": 0.60, "bw_over_linear": 1.5}
    assert rows[1]["streaming"] == {}


def test_streaming_oracle_is_over_the_steady_reads_when_logged(tmp_path):
    root = str(tmp_path)
    st = streaming_json(1024, 0.40, 0.30, 0.60, 12.0, 8.0)
    st["systems"]["hottier"]["figures"]["steady_oracle"] = 0.45
    put(root, 128, "streaming", st)
    assert sr.collect(root)[0]["streaming"]["oracle"] == 0.45


def test_recommendation_is_the_best_mean_among_complete_sizes(tmp_path):
    rows = sr.collect(sweep(tmp_path))
    # 32 KiB: (0.80 + 0.40) / 2 = 0.60; 1 MiB: (0.70 + 0.55) / 2 = 0.625;
    # 256 KiB has the best zipf figure but no streaming result.
    kib, mean = sr.recommend(rows)
    assert kib == 1024
    assert abs(mean - 0.625) < 1e-9
    assert sr.recommend([rows[1]]) is None


def test_command_writes_the_report_and_says_what_it_recommends(tmp_path):
    root = sweep(tmp_path)
    r = subprocess.run([DEBIAN_PYTHON, SCRIPT, root], capture_output=True,
                       text=True, env=dict(os.environ, MPLBACKEND="Agg"))
    assert r.returncode == 0, r.stderr
    md = open(os.path.join(root, "report.md")).read()
    assert "| 32 KiB | 4096 | 80.0% | 78.0% | 90.0% | 1.10 | 1024 " \
           "| 40.0% | 30.0% | 60.0% | 1.50 |" in md
    assert "| 256 KiB | 512 | 90.0% | 80.0% | 95.0% | 1.30 | - | - | - " \
           "| - | - |" in md
    assert "Recommended extent: **1024 KiB**" in md
    assert md in r.stdout
    rep = json.load(open(os.path.join(root, "report.json")))
    assert rep["recommended_kib"] == 1024
    assert len(rep["rows"]) == 3
    assert os.path.getsize(os.path.join(root, "report-sweep.png")) > 1000


def test_command_refuses_a_missing_or_empty_directory(tmp_path):
    r = subprocess.run([DEBIAN_PYTHON, SCRIPT, str(tmp_path / "none")],
                       capture_output=True, text=True)
    assert r.returncode == 2 and "no directory" in r.stderr
    r = subprocess.run([DEBIAN_PYTHON, SCRIPT, str(tmp_path)],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "no results" in r.stderr
