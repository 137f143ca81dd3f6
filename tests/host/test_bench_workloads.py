"""Issue 14's workloads (tests/bench/workloads.py, tests/bench/benchlib.py)
and their part of the report (tests/bench/bench_report.py) on small
synthetic data: the oracles, the status-sample arithmetic (windows,
steady, fill, time to 90%, the scan taken out of the counters), the
streaming generator, and the goals with PASS, FAIL and n/a."""

import json
import os
import sys

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "bench"))
import benchlib as bl  # noqa: E402
import bench_report as br  # noqa: E402
import workloads as wl  # noqa: E402

K = 4096


# --- oracles ----------------------------------------------------------------

def test_oracle_places_the_most_read_units_that_fit():
    # 4 KiB reads: unit 0 (offsets 0, 4k) 6 reads, unit 1 3, unit 2 1.
    counts = {0: 4, K: 2, 16 * K: 3, 32 * K: 1}
    o = bl.oracle(counts, 2 * 16 * K, [16 * K, K])
    assert o["64KiB"] == {"unit_bytes": 65536, "capacity_units": 2,
                          "units_read": 3, "oracle": 0.9,
                          "oracle_cold": 0.7}
    # At 4 KiB, 32 units fit: every one of the 4.
    assert o["4KiB"]["oracle"] == 1.0
    assert o["4KiB"]["oracle_cold"] == 0.6


def test_read_offsets_and_extents_read_fio_iologs(tmp_path):
    log = tmp_path / "x.iolog"
    log.write_text("fio version 3 iolog\n"
                   "20 /dev/x add\n30 /dev/x open\n"
                   "40 /dev/x read 4096 4096\n"
                   "41 /dev/x read 4096 4096\n"
                   "42 /dev/x write 8192 4096\n"
                   "43 /dev/x read 65536 131072\n"
                   "99 /dev/x close\n")
    assert bl.read_offsets(log) == {4096: 2, 65536: 1}
    assert bl.read_extents(log) == {(4096, 4096): 2, (65536, 131072): 1}


def test_bytes_are_split_at_unit_boundaries():
    per = bl.unit_bytes_read({(60 * 1024, 8 * 1024): 2}, 64 * 1024)
    assert per == {0: 2 * 4096, 1: 2 * 4096}


def test_oracle_by_bytes_matches_the_read_count_oracle_for_4k_reads():
    counts = {0: 4, K: 2, 16 * K: 3, 32 * K: 1}
    ext = {(off, K): n for off, n in counts.items()}
    a = bl.oracle(counts, 2 * 16 * K, [16 * K, K])
    b = bl.oracle_bytes(ext, 2 * 16 * K, [16 * K, K])
    for u in a:
        assert a[u]["oracle"] == b[u]["oracle"]


def test_file_oracle_takes_the_densest_files_that_fit():
    mib = 1 << 20
    files = [(0, 4 * mib), (4 * mib, 2 * mib), (6 * mib, 2 * mib),
             (8 * mib, 8 * mib)]
    ext = {(0, 4 * mib): 3,          # file 0: 12 MiB read, 3 per byte
           (4 * mib, 2 * mib): 4,    # file 1: 8 MiB, 4 per byte
           (6 * mib, 1 * mib): 1,    # file 2: 1 MiB, 0.5 per byte
           (8 * mib, 8 * mib): 1}    # file 3: 8 MiB, 1 per byte
    o = bl.file_oracle(ext, files, 7 * mib)
    # Densest first: file 1 (2 MiB), file 0 (4 MiB); file 3 does not fit
    # in the 1 MiB left, file 2 (2 MiB) neither.
    assert o["files_placed"] == [0, 1]
    assert o["bytes_read"] == 29 * mib
    assert o["oracle"] == round(20 / 29, 4)
    # With 9 MiB, file 2 fits after file 3 is skipped.
    assert bl.file_oracle(ext, files, 9 * mib)["files_placed"] == [0, 1, 2]


# --- status samples ---------------------------------------------------------

def samples_of(rows):
    """rows: (t, hits, misses, used) with total 10."""
    return [{"t": t, "read_hits": h, "read_misses": m, "used": u,
             "total": 10, "promotions": u, "ssd_reads": h}
            for t, h, m, u in rows]


def test_window_and_steady_take_counter_differences():
    s = samples_of([(0, 0, 0, 0), (1, 0, 100, 2), (2, 50, 150, 5),
                    (3, 130, 170, 9)])
    w = wl.window(s, 1, 3)
    assert w["reads"] == 200 and w["hit_ratio"] == 130 / 200
    assert w["ssd_share"] == 130 / 200 and w["promotions"] == 7
    # The last third of [0, 3]: from t=2.
    assert wl.steady(s, 0, 3)["hit_ratio"] == 80 / 100
    # A time between samples takes the sample before it.
    assert wl.window(s, 1.5, 2.9)["t0"] == 1 and \
        wl.window(s, 1.5, 2.9)["t1"] == 2


def test_fill_time_to_fraction_and_min_window():
    s = samples_of([(0, 0, 0, 0), (1, 0, 10, 5), (2, 5, 10, 10),
                    (3, 8, 12, 10), (4, 17, 13, 10)])
    assert wl.fill_time(s) == 2
    # Windows of 1 s: 0, then 5 of 5, 3 of 5, 9 of 10.
    assert wl.window(s, 1, 2)["hit_ratio"] == 1.0
    assert wl.window(s, 2, 3)["hit_ratio"] == 3 / 5
    assert wl.window(s, 3, 4)["hit_ratio"] == 9 / 10
    assert wl.min_window(s, 2, 4, 1, "hit_ratio") == 3 / 5
    assert wl.time_to_fraction(s, 0, 4, 0.95, 1, "hit_ratio") == 2
    assert wl.time_to_fraction(s, 2, 4, 0.8, 1, "hit_ratio") == 2
    assert wl.time_to_fraction(s, 0, 4, None, 1, "hit_ratio") is None
    assert wl.fill_time(samples_of([(0, 0, 0, 9)])) is None


def test_moving_figures_pre_and_post_fill_and_time_to_90():
    # Phase A 0-30 s: ratio 0.8 from the start; fills at 20 s, dips to
    # 0.6 over 20-25 s. Phase B 30-60 s: 0.2, then 0.9 from 40 s.
    rows, h, m = [(0, 0, 0, 0)], 0, 0
    for t in range(1, 61):
        r = (0.8 if t <= 20 else 0.6 if t <= 25 else 0.8) if t <= 30 else \
            (0.2 if t <= 40 else 0.9)
        h += round(100 * r)
        m += 100 - round(100 * r)
        rows.append((t, h, m, 10 if t >= 20 else t // 2))
    s = samples_of(rows)
    f = wl.moving_figures(s, [{"t_start": 0, "t_end": 30},
                              {"t_start": 30, "t_end": 60}], "hit_ratio")
    assert f["fill_s"] == 20 and f["fill_window_s"] == 5
    assert f["pre_fill"] == 0.8
    assert f["post_fill_min"] == 0.6
    # Steady: the last third of each phase, the dip included in A's.
    assert f["steady_a"] == 0.7 and f["steady_b"] == 0.9
    # 90% of 0.9 = 0.81: the 5 s window ending at 45 s is all 0.9.
    assert f["time_to_90_b_s"] == 15
    assert abs(f["post_over_pre"] - 0.75) < 1e-9


def ramp(levels):
    """Samples a second, 100 reads each, with the hit ratio levels[t - 1]
    over second t."""
    rows, h, m = [(0, 0, 0, 0)], 0, 0
    for t, r in enumerate(levels, 1):
        h += round(100 * r)
        m += 100 - round(100 * r)
        rows.append((t, h, m, 10))
    return samples_of(rows)


def test_common_level_puts_both_systems_at_the_lower_90_percent():
    # Phase B 0-30 s. dm-hottier: 0.1 to 10 s, 0.4 to 15 s, then 0.8
    # (steady 0.8, its own 90% = 0.72 from 15 s: 20 s). smq: 0.2 to 5 s,
    # then 0.3 (steady 0.3, its own 90% = 0.27: the 5 s window ending at
    # 9 s holds one second of 0.2 and four of 0.3, 0.28). The common
    # level is 0.9 x 0.3 = 0.27: dm-hottier's window reaches it at 13 s
    # (at 12 s three seconds of 0.1 and two of 0.4, 0.22; at 13 s two and
    # three, 0.28).
    ph = [{"t_start": -30, "t_end": 0}, {"t_start": 0, "t_end": 30}]
    hot = ramp([0.1] * 10 + [0.4] * 5 + [0.8] * 15)
    smq = ramp([0.2] * 5 + [0.3] * 25)
    sy = {"hottier": {"samples": hot, "phases": ph},
          "cache": {"samples": smq, "phases": ph}}
    for n in sy:
        sy[n]["figures"] = {"hit_ratio": wl.moving_figures(
            sy[n]["samples"], ph, "hit_ratio")}
    assert sy["hottier"]["figures"]["hit_ratio"]["time_to_90_b_s"] == 20
    assert sy["cache"]["figures"]["hit_ratio"]["time_to_90_b_s"] == 9
    c = wl.common_level(sy, "hit_ratio")
    assert abs(c["level"] - 0.27) < 1e-9
    assert c["seconds"] == {"hottier": 13, "cache": 9}
    # The report lists it among the definitions.
    assert "0.9 x the lower" in wl.DEFINITIONS["common_level"]
    # A system without its figures: no level, no seconds.
    del sy["cache"]["figures"]
    assert wl.common_level(sy, "hit_ratio") == {
        "level": None, "seconds": {"hottier": None, "cache": None}}


def test_the_report_shows_the_common_level_beside_the_goal():
    w = moving_json(0.8, 0.76, 20, 10)
    w["common_level"] = {"hit_ratio": {
        "level": 0.27, "seconds": {"hottier": 13, "cache": 10}}}
    head, rows = br.system_figures(w)
    assert head[-1] == "to the common level"
    assert [r[-1] for r in rows] == ["13 s", "10 s"]
    # Without it (a run from before it was kept): "-".
    del w["common_level"]
    assert [r[-1] for r in br.system_figures(w)[1]] == ["-", "-"]


def test_the_scan_is_taken_out_of_the_counters():
    sm = [{"unix_ms": 1000 * t, "read_hits": h, "read_misses": m,
           "promotions": p, "used": u}
          for t, h, m, p, u in [(0, 0, 0, 0, 0), (1, 10, 90, 1, 10),
                                (2, 60, 140, 2, 20), (3, 160, 190, 5, 30),
                                (4, 200, 200, 5, 30)]]
    # 1500-2500: the samples at 1 s and 3 s.
    w = wl.unix_window(sm, 1500, 2500)
    assert w == {"hits": 150, "misses": 100, "promotions": 4,
                 "used_mean": 20.0}
    # Outside the samples: the first and the last.
    assert wl.unix_window(sm, -5, 9000)["hits"] == 200
    # 250 reads, 50 of them the scan's, 10% resident: 5 scan hits.
    z = wl.zipf_ratio_beside_scan(150, 100, 50, 0.1)
    assert z == {"ratio": 145 / 200, "scan_hits": 5, "zipf_reads": 200}
    # Never more scan hits than hits.
    assert wl.zipf_ratio_beside_scan(3, 100, 50, 0.5)["scan_hits"] == 3
    assert wl.zipf_ratio_beside_scan(0, 10, 10, 0.5)["ratio"] is None


def test_log_span():
    lines = ["1000, 150000, 0, 4096, 0", "1500, 200000, 0, 4096, 0",
             "1200, 100, 1, 4096, 0"]
    assert wl.log_span(lines) == (1000, 1500)
    assert wl.log_span([]) == (None, None)


def test_offset_log_reads_keeps_reads_with_their_offsets():
    # fio with log_offset=1: time, latency, direction, bytes, offset, prio.
    lines = ["1000, 50, 0, 131072, 262144, 0",
             "1001, 60, 1, 4096, 8192, 0",      # a write: not a read
             "1002, 70, 0, 131072, 393216, 0", "", "1003, 5, 0, 4096"]
    assert wl.offset_log_reads(lines) == [(1000, 262144, 131072),
                                          (1002, 393216, 131072)]


def test_placed_share_counts_the_bytes_inside_the_placed_files():
    mib = 1 << 20
    files = [(0, 2 * mib), (2 * mib, 4 * mib), (6 * mib, 2 * mib)]
    reads = [(0, 0, mib),               # file 0
             (1, 3 * mib, mib),         # file 1
             (2, 5 * mib + mib // 2, mib),  # half in 1, half in 2
             (3, 7 * mib, mib)]         # file 2
    assert wl.placed_share(reads, files, [1]) == 1.5 / 4
    assert wl.placed_share(reads, files, [2, 0]) == 2.5 / 4
    assert wl.placed_share(reads, files, []) == 0
    assert wl.placed_share([], files, [0]) is None


def test_resident_files_gives_each_files_resident_share():
    mib = 1 << 20
    files = [(0, 2 * mib), (2 * mib, 4 * mib)]
    sec = mib // bl.SECTOR
    top = [f"{3 * sec} 9 resident -", f"{0} 8 resident pinned",
           f"{sec} 7 - -", f"{2 * sec} 6 resident -", "garbage"]
    # 1 MiB extents: file 0 holds one of 2, file 1 two of 4.
    assert wl.resident_files(top, files, mib) == {0: 0.5, 1: 0.5}
    assert wl.resident_files([], files, mib) == {}


def test_streaming_generator_is_deterministic_and_covers_the_device():
    files = wl.stream_files(256 << 20)
    assert files == wl.stream_files(256 << 20)
    assert files[0][0] == 0
    for (a, la), (b, _) in zip(files, files[1:]):
        assert a + la == b
    end = files[-1][0] + files[-1][1]
    assert end <= 256 << 20 and (256 << 20) - end < 2 << 20
    assert all(2 << 20 <= n <= 32 << 20 and n % (1 << 20) == 0
               for _, n in files)
    w = wl.zipf_weights(len(files), 1.0)
    assert sorted(w, reverse=True)[:2] == [1.0, 0.5]
    reads = wl.listener_reads(files, w, 3, 8 << 20)
    assert reads == wl.listener_reads(files, w, 3, 8 << 20)
    # Whole files, sequentially.
    start = next(f for f in files if f[0] == reads[0][0])
    assert [o for o, _ in reads[:start[1] // wl.STREAM_BS]] == \
        list(range(start[0], start[0] + start[1], wl.STREAM_BS))
    text = wl.iolog_text(reads[:2], "d")
    assert text.splitlines()[:4] == ["fio version 2 iolog", "d add",
                                     "d open", f"d read {reads[0][0]} "
                                     f"{wl.STREAM_BS}"]


# --- goals in the report -----------------------------------------------------

def test_last_third_ratio():
    s = samples_of([(0, 0, 0, 0), (3, 10, 20, 0), (6, 30, 30, 0),
                    (9, 60, 40, 0)])
    # Last third of [0, 9]: from the sample at or before 6.
    assert br.last_third_ratio(s) == 30 / 40
    assert br.last_third_ratio([]) is None


def moving_json(pre, post, t90h, t90c):
    return {"workload": "moving", "params": {},
            "systems": {"hottier": {"figures": {"hit_ratio": {
                "pre_fill": pre, "post_fill_min": post,
                "time_to_90_b_s": t90h}}},
                "cache": {"figures": {"hit_ratio": {
                    "time_to_90_b_s": t90c}}}}}


def results(goals):
    return [g["result"] for g in goals]


def test_moving_goals():
    g = br.workload_goals(moving_json(0.8, 0.76, 10, 12))
    assert results(g) == ["PASS", "PASS"]
    assert abs(g[0]["target"] - 0.76) < 1e-9
    assert results(br.workload_goals(moving_json(0.8, 0.75, 12, 12))) == \
        ["FAIL", "FAIL"]
    assert results(br.workload_goals(moving_json(None, None, None, 5))) == \
        ["n/a", "n/a"]


def test_streaming_backup_capture_goals():
    st = {"workload": "streaming", "params": {}, "systems": {"hottier": {
        "figures": {"steady_ssd_share": 0.54, "oracle": 0.6}}}}
    assert results(br.workload_goals(st)) == ["PASS"]
    st["systems"]["hottier"]["figures"]["steady_ssd_share"] = 0.53
    assert results(br.workload_goals(st)) == ["FAIL"]
    bk = {"workload": "backup", "params": {}, "systems": {"hottier": {
        "figures": {"zipf_hit_ratio_during_scan": 0.76,
                    "zipf_hit_ratio_same_span_alone": 0.8,
                    "promotions_by_scan": 3}}}}
    assert results(br.workload_goals(bk)) == ["PASS", "FAIL"]
    cap = {"workload": "capture", "params": {"budget_us": 20000},
           "systems": {"hottier-budget": {"figures": {"writer_held": 0.9}}}}
    assert results(br.workload_goals(cap)) == ["FAIL"]
    sl = {"workload": "softlayer", "params": {}, "systems": {"linear": {
        "label": "dm-linear", "runs": {"read": {"figures": {
            "iops": 200, "read_p99_ms": 700.0}}}}}}
    g = br.workload_goals(sl)
    assert results(g) == ["report"] and g[0]["value"] == 200


def test_zipf_goals_use_the_last_third():
    w = {"name": "zipf-128", "params": {"extent_sectors": 128},
         "systems": [{"name": "hottier", "steady_hit_ratio": 0.85,
                      "oracle_64k": 0.86, "iops": 900},
                     {"name": "cache", "steady_hit_ratio": 0.82,
                      "iops": 950}]}
    assert results(br.zipf_goals(w)) == ["PASS", "PASS", "FAIL"]
    w["systems"][0]["oracle_64k"] = 0.88    # 0.85 is not within 2 points
    assert results(br.zipf_goals(w))[1] == "FAIL"
    w["params"]["extent_sectors"] = 256
    assert br.zipf_goals(w) == []


def test_report_shows_the_goals_table(tmp_path):
    d = tmp_path / "bench"
    (d / "moving").mkdir(parents=True)
    m = moving_json(0.8, 0.7, 10, 12)
    m["params"] = {"seconds": 30, "hdd_mb": 256, "ssd_usable_mb": 32,
                   "extent_sectors": 128, "kernel": "6.1.0-56-amd64"}
    m["description"] = "zoned, then another zoning"
    (d / "moving" / "moving.json").write_text(json.dumps(m))
    assert br.main([str(d)]) == 0
    md = (d / "report.md").read_text()
    assert "## Issue 14's goals" in md
    assert ("| moving | no dip: after the fill >= 0.95 x the pre-fill ratio "
            "| dm-hottier lowest hit ratio after the fill (0.95 x pre-fill) "
            "| 70.0% | 76.0% | FAIL |") in md
    assert "| moving | the new hot set reaches 90% of its steady ratio " \
        "faster than smq | dm-hottier seconds to 90% after the move " \
        "(smq's) | 10 s | 12 s | PASS |" in md
    assert "## Workload: moving" in md
    rep = json.loads((d / "report.json").read_text())
    assert [g["result"] for g in rep["goals"]] == ["FAIL", "PASS"]


def test_hottier_status_samples_keep_the_turnovers_when_the_kernel_has_them():
    fields = [str(i) for i in range(1, 8)] + ["5/9"] + \
        [str(i) for i in range(9, 25)] + ["rw", "0", "idle", "off"] + \
        ["0"] * 4
    line = "0 2048 hottier " + " ".join(fields)
    s = bl.parse_status("hottier", line)
    assert (s["used"], s["total"], s["read_hits"], s["migrations_allowed"]) \
        == (5, 9, 9, 24)
    assert "turnovers" not in s                    # a module before the field
    assert bl.parse_status("hottier", line + " 3")["turnovers"] == 3
