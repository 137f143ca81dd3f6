"""hottierctl metrics against fake sysfs trees and a fake dmsetup, read
back with prometheus_client's parser; its systemd units and the Grafana
dashboard."""

import json
import os
import re
import shlex
import stat
import subprocess

import pytest
from prometheus_client.parser import text_string_to_metric_families

from hottierctl_fakes import REPO, STATS, Tree, read
from hottier import metrics, system
from hottier.table import FIELDS, KEYS, TEXT_FIELDS

UNITS = os.path.join(REPO, "userspace")
SERVICE = os.path.join(UNITS, "hottier-metrics.service")
TIMER = os.path.join(UNITS, "hottier-metrics.timer")
DASHBOARD = os.path.join(UNITS, "grafana", "hottier-dashboard.json")
TEXTFILE_DIR = "/var/lib/prometheus/node-exporter"


@pytest.fixture
def tree(tmp_path):
    """sdb (an HDD) and nvme0n1 (an SSD) under hottier device "tiered"."""
    t = Tree(tmp_path)
    t.block("sdb", "8:16")
    t.block("nvme0n1", "259:0", sectors=262144)
    t.hottier("tiered")
    return t


def families(text):
    """{family name: Metric}; the parser names a counter without _total."""
    found = {}
    for f in text_string_to_metric_families(text):
        assert f.name not in found, f"{f.name} twice"
        found[f.name] = f
    return found


def value(fams, name, **labels):
    """The one sample of name (its family's name, or the sample's) whose
    labels include labels."""
    family = fams.get(name) or fams[name.removesuffix("_total")]
    hits = [s.value for s in family.samples
            if labels.items() <= s.labels.items()]
    assert len(hits) == 1, (name, labels, family.samples)
    return hits[0]


def field_families(fams):
    """{status field: [families whose HELP names it]}."""
    fields = {}
    for f in fams.values():
        m = re.search(r"\(status field (\w+)\)$", f.documentation)
        if m:
            fields.setdefault(m.group(1), []).append(f)
    return fields


def metrics_of(tree, *argv):
    rc, out = tree.run("metrics", *argv)
    assert rc == 0
    return out


# The exposition


def test_every_status_field_is_a_typed_documented_family(tree):
    text = metrics_of(tree)
    fams = families(text)
    assert all(f.type in ("counter", "gauge") for f in fams.values()), \
        [f.name for f in fams.values() if f.type not in ("counter", "gauge")]
    assert all(f.documentation for f in fams.values())
    # HELP then TYPE before every family's samples, one sample a line.
    lines = text.splitlines()
    helps = [i for i, line in enumerate(lines) if line.startswith("# HELP ")]
    assert len(helps) == len(fams)
    for i in helps:
        name = lines[i].split()[2]
        assert re.fullmatch(r"hottier_[a-z_]+", name), name
        assert lines[i + 1].startswith(f"# TYPE {name} ")
        assert lines[i + 2].startswith(name + "{device=\"tiered\"")
    fields = field_families(fams)
    assert set(fields) == set(FIELDS)
    for field, found in fields.items():
        for f in found:
            assert f.samples and all(s.labels["device"] == "tiered"
                                     for s in f.samples), (field, f)


def test_counters_end_in_total_and_gauges_do_not(tree):
    text = metrics_of(tree)
    types = dict(re.findall(r"^# TYPE (\S+) (\S+)$", text, re.M))
    counters = {n for n, t in types.items() if t == "counter"}
    assert counters and all(n.endswith("_total") for n in counters)
    assert not any(n.endswith("_total") for n, t in types.items()
                   if t != "counter")
    for f in families(text).values():
        if f.type == "counter":
            assert {s.name for s in f.samples} == {f.name + "_total"}
    # The cumulative fields are counters, the levels gauges.
    assert {types[m] for m in ("hottier_reads_total",
                               "hottier_promotions_total",
                               "hottier_replica_reads_ssd_total",
                               "hottier_read_retries_total")} == {"counter"}
    assert {types[m] for m in ("hottier_slots_used", "hottier_slots",
                               "hottier_migrations_in_flight",
                               "hottier_ssd_read_latency_seconds",
                               "hottier_degraded")} == {"gauge"}


def test_units_are_base_units_in_the_names(tree):
    fams = families(metrics_of(tree))
    assert value(fams, "hottier_read_bytes_total") == \
        STATS["read_sectors"] * 512
    assert value(fams, "hottier_written_bytes_total") == \
        STATS["write_sectors"] * 512
    assert value(fams, "hottier_ssd_read_latency_seconds") == 120e-6
    assert value(fams, "hottier_hdd_read_latency_seconds") == 0.0041
    assert value(fams, "hottier_reads_total") == STATS["reads"]
    assert value(fams, "hottier_slots") == STATS["slots_total"]
    assert value(fams, "hottier_extent_bytes") == 2048 * 512
    assert value(fams, "hottier_size_bytes") == 2097152 * 512
    assert value(fams, "hottier_config_heat_halflife_seconds") == 60
    assert value(fams, "hottier_config_sequential_cutoff_bytes") == \
        4096 * 1024
    assert "0.0040999" not in metrics_of(tree)
    for field, name, kind, scale, _ in metrics.NUMBERS:
        assert value(fams, name) == pytest.approx(STATS[field] * scale)
        unit = re.search(r"_(bytes|seconds)(_total)?$", name)
        assert (field.endswith(("_sectors", "_us")) ==
                bool(unit)), (field, name)


def test_every_numeric_field_once_and_in_order():
    numbers = [f for f, *_ in metrics.NUMBERS]
    assert numbers == [f for f in FIELDS if f not in TEXT_FIELDS]
    assert [f for f, *_ in metrics.STATES] == list(TEXT_FIELDS)
    names = [n for _, n, *_ in metrics.NUMBERS] + \
        [n for _, n, *_ in metrics.STATES] + \
        [n for _, n, *_ in metrics.CONFIG]
    assert len(set(names)) == len(names)


def test_mode_scrub_and_map_are_gauges_per_state(tree):
    fams = families(metrics_of(tree))
    assert value(fams, "hottier_degraded") == 0
    assert value(fams, "hottier_mode", state="rw") == 1
    assert value(fams, "hottier_mode", state="degraded") == 0
    assert value(fams, "hottier_scrub_state", state="idle") == 1
    assert sum(s.value for s in fams["hottier_scrub_state"].samples) == 1
    assert value(fams, "hottier_map_state", state="open") == 1
    assert {s.labels["state"] for s in fams["hottier_map_state"].samples} \
        == {"off", "pending", "open", "clean", "failed"}


def test_a_degraded_device_and_a_state_this_version_does_not_know(
        tmp_path):
    t = Tree(tmp_path)
    t.block("sdb", "8:16")
    t.block("nvme0n1", "259:0")
    t.hottier("tiered", stats={"mode": "degraded", "scrub": "paused",
                               "map": "failed"})
    fams = families(metrics_of(t))
    assert value(fams, "hottier_degraded") == 1
    assert value(fams, "hottier_mode", state="degraded") == 1
    assert value(fams, "hottier_mode", state="rw") == 0
    assert value(fams, "hottier_scrub_state", state="paused") == 1
    assert value(fams, "hottier_scrub_state", state="idle") == 0
    assert value(fams, "hottier_map_state", state="failed") == 1


def test_tunables_are_gauges(tree):
    fams = families(metrics_of(tree))
    info = fams["hottier_config_info"].samples[0]
    assert (info.labels, info.value) == (
        {"device": "tiered", "discard": "passdown",
         "write_policy": "through", "routing": "latency"}, 1)
    text_keys = set(metrics.CONFIG_TEXT)
    numeric = [k for k, *_ in metrics.CONFIG if k != "extent_sectors"]
    assert set(numeric) | text_keys == set(KEYS)
    for key, name, scale, help in metrics.CONFIG:
        assert fams[name].type == "gauge", name
        assert key == "extent_sectors" or key in help, (key, help)
    assert value(fams, "hottier_config_promote_threshold_reads") == 4
    assert value(fams, "hottier_config_ssd_error_threshold") == 8
    info = value(fams, "hottier_info")
    assert info == 1 and fams["hottier_info"].samples[0].labels == {
        "device": "tiered", "kernel_name": "dm-3", "hdd": "sdb",
        "ssd": "nvme0n1"}


def test_a_suspended_device_is_read_from_dmsetup(tmp_path):
    t = Tree(tmp_path)
    t.block("sdb", "8:16")
    t.block("nvme0n1", "259:0")
    t.hottier("tiered", stats={"read_hits": 30, "mode": "degraded"},
              keys={"routing": "ssd"}, suspended=True)
    fams = families(metrics_of(t))
    assert set(field_families(fams)) == set(FIELDS)
    assert value(fams, "hottier_suspended") == 1
    assert value(fams, "hottier_read_hits_total") == 30
    assert value(fams, "hottier_degraded") == 1
    assert fams["hottier_config_info"].samples[0].labels["routing"] == "ssd"
    assert value(fams, "hottier_config_max_migrations") == 4
    assert ["status", "tiered"] in t.dmsetup_log()


def test_every_device_or_the_named_ones(tree):
    tree.block("sdc", "8:32")
    tree.block("nvme1n1", "259:1")
    tree.hottier("media", kname="dm-4", devnum="253:4", hdd="sdc",
                 ssd="nvme1n1", stats={"reads": 5})
    fams = families(metrics_of(tree))
    for f in fams.values():
        assert {s.labels["device"] for s in f.samples} == \
            {"tiered", "media"}, f.name
    assert value(fams, "hottier_reads_total", device="media") == 5
    assert value(fams, "hottier_reads_total", device="tiered") == 1000
    fams = families(metrics_of(tree, "media", "media"))
    assert {s.labels["device"] for f in fams.values()
            for s in f.samples} == {"media"}


def test_an_unknown_name_is_an_error(tree, capsys):
    assert tree.run("metrics", "tiered", "nonesuch") == (1, "")
    err = capsys.readouterr().err
    assert err == "hottierctl: no device named 'nonesuch'\n"


def test_a_device_removed_while_read_is_left_out(tree, monkeypatch):
    listed = iter([["tiered", "gone"], ["tiered"]])
    monkeypatch.setattr(system.System, "hottier_names",
                        lambda self: next(listed))
    fams = families(metrics_of(tree))
    assert value(fams, "hottier_reads_total") == 1000


def test_no_device_and_no_module(tree, tmp_path, capsys):
    empty = Tree(tmp_path / "empty")
    assert empty.run("metrics") == (0, "")
    os.rmdir(os.path.join(tree.sys, "module", "dm_hottier"))
    tree.set_dmsetup(targets=["linear"])
    assert tree.run("metrics") == (0, "")       # what a timer runs
    assert tree.run("metrics", "tiered")[0] == 1
    assert "module is not loaded" in capsys.readouterr().err


def test_not_root_is_refused(tree, capsys):
    assert tree.run("metrics", euid=1000) == (1, "")
    assert capsys.readouterr().err == "hottierctl: must be run as root\n"


def test_label_values_are_escaped(tmp_path):
    t = Tree(tmp_path)
    t.block("sdb", "8:16")
    t.block("nvme0n1", "259:0")
    name = 'we"ird\\name'
    t.hottier(name)
    text = metrics_of(t)
    assert 'device="we\\"ird\\\\name"' in text
    fams = families(text)
    assert value(fams, "hottier_reads_total", device=name) == 1000


# --output


def test_output_writes_the_file_atomically(tree, tmp_path, monkeypatch):
    out = tmp_path / "textfile" / "hottier.prom"
    out.parent.mkdir()
    out.write_text("old\n")
    os.chmod(out, 0o600)
    with open(out) as reader:                   # a reader of the old file
        synced = []
        real_fsync = os.fsync
        monkeypatch.setattr(os, "fsync", lambda fd: (
            synced.append(os.path.realpath(f"/proc/self/fd/{fd}")),
            real_fsync(fd)))
        assert tree.run("metrics", "--output", str(out)) == (0, "")
        assert reader.read() == "old\n"         # replaced, not rewritten
    monkeypatch.undo()
    assert out.read_text() == metrics_of(tree)
    assert stat.S_IMODE(os.stat(out).st_mode) == 0o644
    assert os.listdir(out.parent) == ["hottier.prom"]
    # The temporary file, then the directory after the rename.
    assert len(synced) == 2 and synced[1] == str(out.parent)
    assert os.path.dirname(synced[0]) == str(out.parent)
    assert os.path.basename(synced[0]).startswith(".hottier.prom.")
    assert not synced[0].endswith(".prom")      # never read by the exporter


def test_a_failed_output_leaves_the_old_file_whole(tree, tmp_path,
                                                   monkeypatch, capsys):
    out = tmp_path / "hottier.prom"
    out.write_text("old\n")

    def refuse(src, dst):
        raise OSError(28, "No space left on device", src)
    monkeypatch.setattr(os, "rename", refuse)
    assert tree.run("metrics", "--output", str(out)) == (1, "")
    monkeypatch.undo()
    assert out.read_text() == "old\n"
    assert not [f for f in os.listdir(tmp_path) if f.startswith(".")]
    err = capsys.readouterr().err
    assert err.startswith("hottierctl: ") and err.count("\n") == 1
    assert "No space left on device" in err


def test_output_into_a_missing_directory_is_one_line(tree, tmp_path,
                                                     capsys):
    out = tmp_path / "nonesuch" / "hottier.prom"
    assert tree.run("metrics", "--output", str(out)) == (1, "")
    assert capsys.readouterr().err == \
        f"hottierctl: {out}: No such file or directory\n"


def test_output_replaces_a_temporary_file_a_crash_left(tree, tmp_path):
    stale = tmp_path / f".hottier.prom.{os.getpid()}.tmp"
    stale.write_text("half")
    out = tmp_path / "hottier.prom"
    assert tree.run("metrics", "--output", str(out)) == (0, "")
    assert not stale.exists() and out.read_text() == metrics_of(tree)


# The units and the dashboard


def exec_start(path):
    line = [w for w in read(path).splitlines()
            if w.startswith("ExecStart=")]
    assert len(line) == 1
    return shlex.split(line[0].removeprefix("ExecStart="))


def test_the_service_runs_metrics_into_the_node_exporters_directory(
        tree, tmp_path):
    unit = read(SERVICE)
    assert "Type=oneshot" in unit
    argv = exec_start(SERVICE)
    assert argv == ["/usr/local/sbin/hottierctl", "metrics", "--output",
                    f"{TEXTFILE_DIR}/hottier.prom"]
    # Its command, into another directory.
    argv[3] = str(tmp_path / "hottier.prom")
    assert tree.run(*argv[1:]) == (0, "")
    fams = families(read(argv[3]))
    assert set(field_families(fams)) == set(FIELDS)
    timer = read(TIMER)
    assert "OnCalendar=*:*:0/15" in timer
    assert f"ConditionPathIsDirectory={TEXTFILE_DIR}" in timer
    assert "WantedBy=timers.target" in timer


def test_make_install_userspace_installs_the_units_and_dashboard(tmp_path):
    prefix = tmp_path / "usr"
    r = subprocess.run(["make", "-s", "-C", REPO, "install-userspace",
                        f"PREFIX={prefix}"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    sbin = prefix / "sbin" / "hottierctl"
    units = prefix / "lib" / "systemd" / "system"
    service = units / "hottier-metrics.service"
    assert exec_start(service)[0] == str(sbin)
    assert (prefix / "lib" / "hottierctl" / "hottier" /
            "metrics.py").is_file()
    assert (units / "hottier-metrics.timer").read_text() == read(TIMER)
    dashboard = prefix / "share" / "doc" / "hottierctl" / \
        "hottier-dashboard.json"
    assert json.loads(dashboard.read_text()) == json.loads(read(DASHBOARD))
    r = subprocess.run(["systemd-analyze", "verify", "--man=no",
                        str(service), str(units / "hottier-metrics.timer")],
                       capture_output=True, text=True)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr


def test_the_dashboard_loads_and_graphs_metrics_that_exist(tree):
    with open(DASHBOARD) as f:
        board = json.load(f)
    titles = {p["title"] for p in board["panels"]}
    assert {"Hit ratio", "SSD share of replica reads",
            "Read latency estimates", "Promotions and demotions",
            "Degraded mode"} <= titles
    emitted = set(re.findall(r"^(hottier_\w+)\{", metrics_of(tree), re.M))
    exprs = [t["expr"] for p in board["panels"] for t in p["targets"]]
    exprs += [v["definition"] for v in board["templating"]["list"]
              if "definition" in v]
    used = {m for e in exprs for m in re.findall(r"hottier_\w+", e)}
    assert used and used <= emitted, used - emitted
    ids = [p["id"] for p in board["panels"]]
    assert len(set(ids)) == len(ids)
    for p in board["panels"]:
        assert p["datasource"]["uid"] == "${datasource}"
        assert all(t["refId"] for t in p["targets"])
