"""hottierctl (userspace/) against fake sysfs trees and a fake dmsetup."""

import errno
import json
import os
import re
import shutil
import subprocess
import sys
import threading
import time

import pytest

from hottierctl_fakes import (FAKE_DMSETUP, REPO, STATS, Tree, read,
                              write)
from hottier import HottierError, cli, fiemap, report, system, tab
from hottier.queues import disks_under
from hottier.table import (FIELDS, KEYS, build_table, check_value,
                           parse_assignments, parse_extent, parse_size,
                           parse_status, parse_table)

HOTTIERCTL = os.path.join(REPO, "userspace", "hottierctl")
RST = os.path.join(REPO, "Documentation", "hottier.rst")


@pytest.fixture
def tree(tmp_path):
    """sdb (an HDD) and nvme0n1 (an SSD) under hottier device "tiered"."""
    t = Tree(tmp_path)
    t.block("sdb", "8:16", scheduler="mq-deadline kyber [none]\n")
    t.block("nvme0n1", "259:0", sectors=262144,
            scheduler="[mq-deadline] kyber none\n")
    t.hottier("tiered")
    return t


def subcommands():
    return cli.parser()._subparsers._group_actions[0].choices


def one_line_error(capsys, start="hottierctl: "):
    err = capsys.readouterr().err
    assert err.startswith(start) and err.count("\n") == 1, err
    return err


# Argument parsing and usage errors


def test_every_subcommand_of_the_issue_exists():
    assert set(subcommands()) == {
        "create", "remove", "list", "status", "set", "get", "tune-queues",
        "pin", "unpin", "heat", "activate", "deactivate", "resize",
        "scrub", "ssd-reset", "invalidate", "reset-stats", "promote",
        "demote", "replace-ssd", "trace", "udev-member", "lvm-filter",
        "metrics", "attach"}


def test_usage_error_is_one_line_and_exit_status_2():
    r = subprocess.run([sys.executable, HOTTIERCTL, "status", "--bogus"],
                       capture_output=True, text=True)
    assert r.returncode == 2
    assert r.stderr.startswith("hottierctl: unrecognized arguments: --bogus")
    assert r.stderr.count("\n") == 1


@pytest.mark.parametrize("argv", [
    ["create", "x", "--ssd", "/dev/b"],            # no --hdd
    ["create", "x", "--hdd", "a", "--ssd", "b", "--extent-size", "3M"],
    ["status", "--watch", "0"],
    ["heat", "tiered", "--top", "1001"],
    ["set", "tiered"],                             # no key=value
    ["tune-queues", "tiered", "--read-ahead-kb", "-1"],
    [],
])
def test_bad_arguments_are_usage_errors(tree, capsys, argv):
    assert tree.run(*argv)[0] == 2
    one_line_error(capsys)
    assert tree.dmsetup_log() == []                # nothing was run


@pytest.mark.skipif(os.geteuid() != 0, reason="hottierctl needs root")
def test_the_script_takes_its_fakes_from_the_environment(tree):
    env = dict(os.environ, HOTTIER_SYSFS_ROOT=tree.sys,
               HOTTIER_PROC_ROOT=tree.proc,
               HOTTIER_DMSETUP=f"{sys.executable} {FAKE_DMSETUP} "
                               f"{tree.state}")
    r = subprocess.run([HOTTIERCTL, "get", "tiered", "routing"], env=env,
                       capture_output=True, text=True)
    assert (r.returncode, r.stdout, r.stderr) == (0, "latency\n", "")
    assert ["table", "tiered"] in tree.dmsetup_log()


def test_ctrl_c_while_the_script_starts_is_a_quiet_exit_130(tmp_path):
    """Ctrl-C that lands while Python is still importing hottier.cli
    (status --watch started and stopped at once) exits like one inside
    main(): status 130 and no traceback."""
    shutil.copy(HOTTIERCTL, tmp_path / "hottierctl")
    (tmp_path / "hottier").mkdir()
    (tmp_path / "hottier" / "__init__.py").write_text("")
    (tmp_path / "hottier" / "cli.py").write_text("raise KeyboardInterrupt\n")
    r = subprocess.run([sys.executable, str(tmp_path / "hottierctl"),
                        "status", "--watch", "1"],
                       capture_output=True, text=True)
    assert (r.returncode, r.stdout, r.stderr) == (130, "", "")


def test_help_and_version_exit_0(capsys):
    assert cli.main(["--version"]) == 0
    assert capsys.readouterr().out.startswith("hottierctl 0.")
    assert cli.main(["status", "--help"]) == 0
    assert "--watch SECONDS" in capsys.readouterr().out


def test_not_root_is_refused_before_anything_runs(tree, capsys):
    assert tree.run("status", "tiered", euid=1000)[0] == 1
    assert one_line_error(capsys) == "hottierctl: must be run as root\n"
    assert tree.dmsetup_log() == []


def test_missing_module_is_named(tree, capsys):
    os.rmdir(os.path.join(tree.sys, "module", "dm_hottier"))
    tree.set_dmsetup(targets=["linear", "striped"])
    assert tree.run("list")[0] == 1
    assert "dm-hottier module is not loaded" in one_line_error(capsys)


def test_module_listed_by_dmsetup_targets_is_enough(tree):
    os.rmdir(os.path.join(tree.sys, "module", "dm_hottier"))   # built in
    assert tree.run("list")[0] == 0


# Sizes, keys, the table and the status line


@pytest.mark.parametrize("text,sectors", [
    ("1M", 2048), ("512K", 1024), ("2048", 2048), ("64s", 64),
    ("1G", 2097152), ("1MiB", 2048), ("4k", 8), ("2mb", 4096)])
def test_sizes(text, sectors):
    assert parse_size(text) == sectors


@pytest.mark.parametrize("text", ["1.5M", "abc", "1T", "", "M", "-1"])
def test_bad_sizes(text):
    with pytest.raises(HottierError, match="bad size"):
        parse_size(text)


@pytest.mark.parametrize("text,why", [
    ("3M", "power of two"), ("16K", "32K to 1G"), ("2G", "32K to 1G"),
    ("100", "power of two")])
def test_extent_sizes_are_checked_as_the_target_does(text, why):
    with pytest.raises(HottierError, match=why):
        parse_extent(text)


def test_extent_limits_are_accepted():
    assert parse_extent("32K") == 64 and parse_extent("1G") == 2097152


def test_values_are_checked_against_their_key():
    assert check_value("routing", "ssd") == "ssd"
    assert check_value("max_tracked", "0") == "0"
    assert check_value("promote_threshold", "007") == "7"
    for key, value in (("routing", "fast"), ("max_tracked", "8"),
                       ("promote_threshold", "0"),
                       ("max_migrations", "65"), ("migration_mbps", "-1"),
                       ("heat_halflife_ms", "1e3")):
        with pytest.raises(HottierError, match=f"bad value .* for {key}"):
            check_value(key, value)
    with pytest.raises(HottierError, match="unknown key 'colour'"):
        check_value("colour", "red")


def test_assignments():
    assert parse_assignments(["routing=ssd", "max_migrations=8"]) == \
        {"routing": "ssd", "max_migrations": "8"}
    with pytest.raises(HottierError, match="expected key=value"):
        parse_assignments(["routing"])
    with pytest.raises(HottierError, match="routing given twice"):
        parse_assignments(["routing=ssd", "routing=latency"])


def test_table_line_has_the_whole_hdd_and_counted_keys():
    assert build_table(1048576, "8:16", "259:2", 2048, {}) == \
        "0 1048576 hottier 8:16 259:2 2048"
    assert build_table(1048576, "8:16", "259:2", 1024,
                       {"routing": "ssd", "max_migrations": "8"}) == \
        "0 1048576 hottier 8:16 259:2 1024 4 routing ssd max_migrations 8"


def test_the_documented_table_line_parses():
    line = re.search(r"^   (0 1048576 hottier .*)$", read(RST), re.M)[1]
    t = parse_table(line)
    assert (t["length"], t["hdd"], t["ssd"], t["extent_sectors"]) == \
        (1048576, "253:0", "253:1", 2048)
    assert t["keys"]["routing"] == "latency" and len(t["keys"]) == 12


def test_status_line_splits_slots_and_keeps_mode_text():
    line = ("0 2048 hottier " + " ".join(str(i) for i in range(7)) +
            " 5/9 " + " ".join(str(i) for i in range(9, 25)) + " degraded" +
            " 40 running clean 31 2 8 17 3 4 5 6")
    s = parse_status(line)
    assert list(s) == list(FIELDS)
    assert (s["slots_used"], s["slots_total"]) == (5, 9)
    assert (s["reads"], s["read_hits"], s["migrations_allowed"]) == (0, 9, 24)
    assert s["mode"] == "degraded"
    assert (s["scrub_slots"], s["scrub"]) == (40, "running")
    assert (s["map"], s["map_loaded"], s["map_dropped"], s["map_checked"],
            s["map_writes"]) == ("clean", 31, 2, 8, 17)
    assert (s["turnovers"], s["migrations_waiting"]) == (3, 4)
    assert (s["hdd_read_errors"], s["read_retries"]) == (5, 6)
    assert parse_status(line + " 77")["mode"] == "degraded"   # a new field
    with pytest.raises(HottierError, match="unexpected hottier status"):
        parse_status("0 2048 hottier 1 2 3")


def test_keys_match_the_documented_bounds():
    """Every "Invalid <key>: expected ..." line of the admin guide names
    the numbers or words hottierctl checks."""
    doc = dict(re.findall(r"``Invalid (\w+)(?: value)?: expected ([^`]*)``",
                          read(RST)))
    # The on-SSD map's keys are table words of their own, not tunables.
    assert doc.pop("hdd_id") == "1 to 64 printable ASCII characters, no blanks"
    assert doc.pop("format_ssd") == "yes"
    assert doc.pop("drop_replicas") == "yes"
    assert set(doc) == set(KEYS)
    for key, spec in KEYS.items():
        if isinstance(spec[0], str):
            assert doc[key] == " or ".join(spec)
        else:
            assert sorted(map(int, re.findall(r"\d+", doc[key]))) == \
                sorted(spec)


def test_fields_match_the_guide_and_the_kernel():
    rst = read(RST)
    status = rst[rst.index("Field               Meaning"):
                 rst.index("``reset_stats`` clears")]
    documented = re.findall(r"^([a-z_/]+)\s{2,}\S", status, re.M)
    assert documented == ["used/total" if f == "slots_used" else f
                          for f in FIELDS if f != "slots_total"]
    src = read(os.path.join(REPO, "dm-hottier", "dm-hottier-status.c"))
    names = src[src.index("field_names[HOTTIER_NR_FIELDS] = {"):]
    assert re.findall(r'"(\w+)"', names[:names.index("};")]) == list(FIELDS)


# /etc/hottiertab


GOOD_TAB = """\
# name   hdd                    ssd                        extent  keys
tiered   /dev/sdb               by-id/nvme-Samsung-part2   1M      routing=ssd

  media  /dev/md0   /dev/disk/by-id/ata-SSD  512K   # a comment
"""


def test_hottiertab_entries():
    tiered, media = tab.parse(GOOD_TAB, "t")
    assert (tiered.name, tiered.hdd, tiered.ssd, tiered.extent_sectors,
            tiered.keys, tiered.line) == \
        ("tiered", "/dev/sdb", "/dev/disk/by-id/nvme-Samsung-part2", 2048,
         {"routing": "ssd"}, 2)
    assert (media.name, media.ssd, media.extent_sectors, media.keys,
            media.line) == ("media", "/dev/disk/by-id/ata-SSD", 1024, {}, 4)


@pytest.mark.parametrize("line,error", [
    ("tiered /dev/sdb /dev/sdc", "expected: name hdd ssd extent"),
    ("tiered /dev/sdb /dev/sdc 3M", "power of two"),
    ("tiered /dev/sdb /dev/sdc 1M colour=red", "unknown key 'colour'"),
    ("tiered /dev/sdb /dev/sdc 1M routing", "expected key=value"),
    ("tiered sdb /dev/sdc 1M", "device 'sdb': expected an absolute path"),
    ("-x /dev/sdb /dev/sdc 1M", "bad device name '-x'"),
    ("a /dev/sdb /dev/sdc 1M\nb /dev/sdd /dev/sde 1M\na /dev/f /dev/g 1M",
     "'a' listed twice"),
])
def test_hottiertab_errors_name_file_and_line(line, error):
    text = "# devices\n\n" + line + "\n"
    number = 2 + line.count("\n") + 1
    with pytest.raises(HottierError) as e:
        tab.parse(text, "/etc/hottiertab")
    assert str(e.value).startswith(f"/etc/hottiertab:{number}: ")
    assert error in str(e.value)


# status, list, get, set


def test_status_shows_hit_ratio_slots_and_the_rest(tree):
    rc, out = tree.run("status", "tiered")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == "tiered (dm-3): rw"
    text = "\n".join(lines)
    assert re.search(r"hit ratio\s+87\.5% \(700 hits, 100 misses\)", text)
    assert re.search(r"SSD slots\s+120/512 used \(23\.4%\), 4 pinned", text)
    assert re.search(r"promotions\s+130, demotions 10", text)
    assert re.search(r"working set\s+moved 1 time \(turnovers detected\)",
                     text)
    assert re.search(r"migrations\s+1 in flight, 2 waiting, 3 allowed",
                     text)
    assert re.search(r"latency\s+SSD 120 us, HDD 4100 us", text)
    assert re.search(r"SSD map\s+open, 96 replicas restored \(32 compared "
                     r"with the HDD\) and 0 dropped at start, 2 writes", text)


def test_status_says_when_no_map_is_kept(tree):
    tree.block("sdc", "8:32")
    tree.block("sdd", "8:48")
    tree.hottier("media", "dm-4", "253:4", "sdc", "sdd",
                 stats={"map": "off"})
    rc, out = tree.run("status", "media")
    assert rc == 0 and re.search(
        r"SSD map\s+off \(no hdd_id: the SSD starts cold\)", out), out


def test_status_json_has_every_field_and_the_ratio(tree):
    rc, out = tree.run("status", "tiered", "--json")
    s = json.loads(out)
    assert rc == 0 and s["hit_ratio"] == 0.875
    assert {f: s[f] for f in FIELDS} == STATS
    assert (s["name"], s["kernel_name"], s["suspended"]) == \
        ("tiered", "dm-3", False)


def test_hit_ratio_before_any_read_is_none():
    assert report.hit_ratio({"read_hits": 0, "read_misses": 0}) is None
    assert report.percent(None) == "-"
    assert report.hit_ratio({"read_hits": 1, "read_misses": 3}) == 0.25


def test_status_of_every_device(tree):
    tree.block("sdc", "8:32")
    tree.block("sdd", "8:48")
    tree.hottier("media", "dm-4", "253:4", "sdc", "sdd",
                 stats={"read_hits": 0, "read_misses": 0})
    rc, out = tree.run("status", "--json")
    assert [(s["name"], s["hit_ratio"]) for s in json.loads(out)] == \
        [("tiered", 0.875), ("media", None)]
    rc, out = tree.run("status")
    assert "tiered (dm-3): rw" in out and "media (dm-4): rw" in out
    assert re.search(r"hit ratio\s+- \(0 hits, 0 misses\)", out)


def test_status_of_no_device(tmp_path):
    t = Tree(tmp_path)
    assert t.run("status") == (0, "no hottier devices\n")
    assert t.run("list", "--json") == (0, "[]\n")


def test_status_of_a_missing_or_foreign_device(tree, capsys):
    assert tree.run("status", "nosuch")[0] == 1
    assert one_line_error(capsys) == "hottierctl: no device named 'nosuch'\n"
    lin = tree.block("dm-5", "253:5", virtual=True)
    write(os.path.join(lin, "dm", "name"), "plain\n")
    state = tree.load()
    state["devices"]["plain"] = {"table": "0 8 linear 8:16 0", "status": ""}
    tree.save(state)
    assert tree.run("get", "plain")[0] == 1
    assert one_line_error(capsys) == \
        "hottierctl: 'plain' is not a hottier device\n"


def test_watch_redraws_in_place_until_ctrl_c(tree, monkeypatch):
    sleeps = []

    def sleep(seconds):
        sleeps.append(seconds)
        if len(sleeps) == 1:            # reads happen between two draws
            base = os.path.join(tree.sys, "block", "dm-3", "hottier")
            write(os.path.join(base, "read_hits"), "1600\n")
            write(os.path.join(base, "read_misses"), "200\n")
        else:
            raise KeyboardInterrupt
    monkeypatch.setattr(cli.time, "sleep", sleep)
    rc, out = tree.run("status", "tiered", "--watch", "2")
    assert rc == 0 and sleeps == [2.0, 2.0]
    first, second = out.split("\x1b[J")[:2]
    assert first.startswith("\x1b[2Ktiered (dm-3): rw\n")
    drawn = first.count("\n")
    assert second.startswith(f"\x1b[{drawn}F\x1b[2Ktiered")
    # 900 hits and 100 misses in the 2 s between the draws.
    assert re.search(r"last 2s\s+90\.0% hits, 500 reads/s", second)
    assert "hit ratio      88.9% (1600 hits, 200 misses)" in second


def test_redraw_clears_what_a_longer_draw_left():
    assert cli.redraw(["a", "b"], 0) == "\x1b[2Ka\n\x1b[2Kb\n\x1b[J"
    assert cli.redraw(["c"], 2) == "\x1b[2F\x1b[2Kc\n\x1b[J"


def test_watch_json_prints_a_line_per_draw(tree, monkeypatch):
    calls = []

    def sleep(seconds):
        calls.append(seconds)
        if len(calls) == 3:
            raise KeyboardInterrupt
    monkeypatch.setattr(cli.time, "sleep", sleep)
    rc, out = tree.run("status", "--json", "--watch", "0.5")
    lines = out.splitlines()
    assert rc == 0 and len(lines) == 3
    assert json.loads(lines[2])[0]["hit_ratio"] == 0.875


def test_list(tree):
    rc, out = tree.run("list")
    header, row = out.splitlines()
    assert header.split() == ["NAME", "DEVICE", "SIZE", "HDD", "SSD",
                              "EXTENT", "MODE"]
    assert row.split() == ["tiered", "dm-3", "1", "GiB", "sdb", "nvme0n1",
                           "1", "MiB", "rw"]
    rc, out = tree.run("list", "--json")
    assert json.loads(out) == [{
        "name": "tiered", "kernel_name": "dm-3", "sectors": 2097152,
        "hdd": "sdb", "ssd": "nvme0n1", "extent_sectors": 2048,
        "mode": "rw", "suspended": False}]


def test_get_every_key_or_one(tree):
    rc, out = tree.run("get", "tiered")
    assert rc == 0
    assert out.splitlines()[:3] == ["extent_sectors=2048",
                                    "discard=passdown",
                                    "write_policy=through"]
    assert len(out.splitlines()) == 13
    assert tree.run("get", "tiered", "routing") == (0, "latency\n")
    assert tree.run("get", "tiered", "read_hits") == (0, "700\n")
    assert json.loads(tree.run("get", "tiered", "--json")[1])[
        "promote_threshold"] == 4
    assert json.loads(tree.run("get", "tiered", "mode", "--json")[1]) == \
        {"mode": "rw"}


def test_get_unknown_key(tree, capsys):
    assert tree.run("get", "tiered", "colour")[0] == 1
    assert one_line_error(capsys).startswith(
        "hottierctl: unknown key 'colour'")


def sysfile(tree, name, kname="dm-3"):
    return os.path.join(tree.sys, "block", kname, "hottier", name)


def test_set_writes_sysfs_and_says_what_changed(tree):
    rc, out = tree.run("set", "tiered", "promote_threshold=2",
                       "routing=ssd")
    assert rc == 0
    assert out == "promote_threshold: 4 -> 2\nrouting: latency -> ssd\n"
    assert read(sysfile(tree, "promote_threshold")) == "2"
    assert read(sysfile(tree, "routing")) == "ssd"
    assert tree.messages() == []


@pytest.mark.parametrize("words,error", [
    (["promote_threshold=0"], "bad value '0' for promote_threshold"),
    (["max_tracked=64"], "max_tracked changes only with a table reload"),
    (["routing=ssd", "colour=red"], "unknown key 'colour'"),
])
def test_set_refuses_before_writing_anything(tree, capsys, words, error):
    assert tree.run("set", "tiered", *words)[0] == 1
    assert error in one_line_error(capsys)
    assert read(sysfile(tree, "routing")) == "latency\n"


def test_set_refused_by_the_kernel_is_one_line(tree, capsys, monkeypatch):
    def refuse(path, value):
        raise OSError(errno.EINVAL, os.strerror(errno.EINVAL))
    monkeypatch.setattr(system, "write_text", refuse)
    assert tree.run("set", "tiered", "migration_mbps=500")[0] == 1
    assert one_line_error(capsys) == ("hottierctl: tiered: "
                                      "migration_mbps=500 refused by the "
                                      "kernel (see dmesg)\n")


def test_sysfs_write_never_creates_the_file(tmp_path):
    # A value file missing (the directory half-built during a reload) is
    # ENOENT, not a new file and not the EACCES of a creating open.
    missing = tmp_path / "hottier" / "routing"
    missing.parent.mkdir()
    with pytest.raises(FileNotFoundError):
        system.write_text(str(missing), "ssd")
    assert not missing.exists()
    present = tmp_path / "hottier" / "promote_threshold"
    present.write_text("16\n")
    system.write_text(str(present), "2")
    assert present.read_text() == "2"


@pytest.mark.parametrize("err", [errno.ENOENT, errno.ENODEV])
def test_set_racing_a_suspend_falls_back_to_the_message(tree, monkeypatch,
                                                         err):
    # The directory was there when looked at and gone at the write.
    def gone(path, value):
        raise OSError(err, os.strerror(err))
    monkeypatch.setattr(system, "write_text", gone)
    assert tree.run("set", "tiered", "max_migrations=8")[0] == 0
    assert tree.messages() == ["max_migrations 8"]


# Suspended: no sysfs directory, dmsetup instead


@pytest.fixture
def suspended(tmp_path):
    t = Tree(tmp_path)
    t.block("sdb", "8:16")
    t.block("nvme0n1", "259:0")
    t.hottier("tiered", stats={"read_hits": 30, "read_misses": 10,
                               "mode": "degraded"},
              keys={"routing": "ssd"}, suspended=True)
    return t


def test_suspended_status_comes_from_dmsetup_status(suspended):
    rc, out = suspended.run("status", "tiered", "--json")
    s = json.loads(out)
    assert rc == 0 and s["suspended"] is True
    assert (s["hit_ratio"], s["mode"], s["slots_used"], s["slots_total"]) \
        == (0.75, "degraded", 120, 512)
    assert ["status", "tiered"] in suspended.dmsetup_log()
    assert suspended.run("status", "tiered")[1].startswith(
        "tiered (dm-3): degraded, suspended\n")


def test_suspended_get_comes_from_dmsetup_table(suspended):
    assert suspended.run("get", "tiered", "routing") == (0, "ssd\n")
    assert suspended.run("get", "tiered", "extent_sectors") == (0, "2048\n")
    assert suspended.run("get", "tiered", "read_hits") == (0, "30\n")


def test_suspended_set_is_a_message(suspended):
    rc, out = suspended.run("set", "tiered", "max_migrations=8")
    assert rc == 0 and out == "max_migrations: 4 -> 8\n"
    assert suspended.messages() == ["max_migrations 8"]


def test_status_and_get_racing_a_suspend_use_dmsetup(suspended,
                                                       monkeypatch):
    # A file removed after its lookup: ENODEV, not ENOENT.
    def removed(self, name):
        raise OSError(errno.ENODEV, os.strerror(errno.ENODEV))
    monkeypatch.setattr(system.Device, "read", removed)
    s = json.loads(suspended.run("status", "tiered", "--json")[1])
    assert (s["hit_ratio"], s["mode"]) == (0.75, "degraded")
    assert suspended.run("get", "tiered", "routing") == (0, "ssd\n")


def test_suspended_list_says_so(suspended):
    assert json.loads(suspended.run("list", "--json")[1])[0][
        "suspended"] is True
    assert "degraded,suspended" in suspended.run("list")[1]


# tune-queues


@pytest.fixture
def stack(tmp_path):
    """tiered over an LV (dm-1) on md0 on sda1 and sdb1, and nvme0n1p2."""
    t = Tree(tmp_path)
    t.block("sda", "8:0", scheduler="[mq-deadline] kyber bfq none\n")
    t.block("sdb", "8:16", scheduler="[none] bfq\n")
    t.partition("sda", "sda1", "8:1")
    t.partition("sdb", "sdb1", "8:17")
    t.block("md0", "9:0", scheduler="none\n", slaves=["sda1", "sdb1"],
            virtual=True)
    t.block("dm-1", "253:1", scheduler="none\n", slaves=["md0"],
            virtual=True)
    t.block("nvme0n1", "259:0", scheduler="[mq-deadline] none\n")
    t.partition("nvme0n1", "nvme0n1p2", "259:2")
    t.hottier("tiered", hdd="dm-1", ssd="nvme0n1p2")
    return t


def queue_file(t, disk, name="scheduler"):
    return os.path.join(t.sys, "block", disk, "queue", name)


def test_disks_under_walk_through_dm_md_and_partitions(stack):
    assert disks_under(os.path.realpath(stack.dirs["dm-1"])) == \
        ["sda", "sdb"]
    assert disks_under(stack.dirs["nvme0n1p2"]) == ["nvme0n1"]
    assert disks_under(stack.dirs["dm-3"]) == ["sda", "sdb", "nvme0n1"]


def test_tune_queues_dry_run_changes_nothing(stack):
    before = {d: read(queue_file(stack, d)) for d in ("sda", "sdb",
                                                      "nvme0n1")}
    rc, out = stack.run("tune-queues", "tiered", "--dry-run")
    assert rc == 0
    assert out.splitlines() == [
        f"{queue_file(stack, 'nvme0n1')}: mq-deadline -> none",
        f"{queue_file(stack, 'sdb')}: none -> bfq",
        f"{queue_file(stack, 'dm-3', 'read_ahead_kb')}: 128 -> 32",
        "dry run: nothing changed"]
    assert {d: read(queue_file(stack, d)) for d in before} == before
    assert read(queue_file(stack, "dm-3", "read_ahead_kb")) == "128\n"


def test_tune_queues_applies_then_has_nothing_to_change(stack):
    rc, out = stack.run("tune-queues", "tiered", "--read-ahead-kb", "64")
    assert rc == 0 and len(out.splitlines()) == 3
    assert read(queue_file(stack, "nvme0n1")) == "none"
    assert read(queue_file(stack, "sdb")) == "bfq"
    assert read(queue_file(stack, "sda")).startswith("[mq-deadline]")
    assert read(queue_file(stack, "md0")) == "none\n"       # not a disk
    assert read(queue_file(stack, "dm-3", "read_ahead_kb")) == "64"
    assert stack.run("tune-queues", "tiered", "--read-ahead-kb", "64") == \
        (0, "tiered: nothing to change\n")


def test_tune_queues_json(stack):
    rc, out = stack.run("tune-queues", "tiered", "--dry-run", "--json")
    j = json.loads(out)
    assert j["applied"] is False and j["notes"] == []
    assert j["changes"][0] == {"path": queue_file(stack, "nvme0n1"),
                               "old": "mq-deadline", "new": "none"}


def test_a_pool_over_nbd_or_rbd_gets_no_scheduler(tmp_path):
    """The server schedules its disks: a network block device under the
    HDD gets none, as an SSD does, and an HDD beside it an elevator."""
    t = Tree(tmp_path)
    t.block("nbd0", "43:0", scheduler="[mq-deadline] none\n")
    t.block("rbd1", "251:0", scheduler="[mq-deadline] none\n")
    t.block("sda", "8:0", scheduler="[none] mq-deadline\n")
    t.block("md0", "9:0", scheduler="none\n",
            slaves=["nbd0", "rbd1", "sda"], virtual=True)
    t.block("nvme0n1", "259:0", scheduler="[none] mq-deadline\n")
    t.hottier("tiered", hdd="md0", ssd="nvme0n1")
    rc, out = t.run("tune-queues", "tiered", "--dry-run")
    assert rc == 0
    assert out.splitlines()[:3] == [
        f"{queue_file(t, 'nbd0')}: mq-deadline -> none",
        f"{queue_file(t, 'rbd1')}: mq-deadline -> none",
        f"{queue_file(t, 'sda')}: none -> mq-deadline"]


def test_a_disk_under_both_members_is_left_alone(tmp_path, capsys):
    t = Tree(tmp_path)
    t.block("sdc", "8:32", scheduler="[mq-deadline] none\n")
    t.partition("sdc", "sdc1", "8:33")
    t.partition("sdc", "sdc2", "8:34")
    t.hottier("tiered", hdd="sdc1", ssd="sdc2")
    rc, out = t.run("tune-queues", "tiered")
    assert rc == 0
    assert out == f"{queue_file(t, 'dm-3', 'read_ahead_kb')}: 128 -> 32\n"
    assert read(queue_file(t, "sdc")) == "[mq-deadline] none\n"
    assert capsys.readouterr().err == ("hottierctl: note: sdc is under both "
                                       "the HDD and the SSD; its scheduler "
                                       "is left alone\n")


def test_an_hdd_offering_neither_scheduler_is_noted(tree, capsys):
    write(queue_file(tree, "sdb"), "[none] kyber\n")
    rc, out = tree.run("tune-queues", "tiered")
    assert rc == 0 and read(queue_file(tree, "sdb")) == "[none] kyber\n"
    assert "offers none of mq-deadline, bfq; left as none" in \
        capsys.readouterr().err


# pin and unpin: FIEMAP extents to extent-aligned sector ranges

MIB = 1 << 20


def test_ranges_are_extent_aligned_merged_and_counted():
    extents = [(MIB, 4096),                  # inside extent 1
               (3 * MIB + 512 * 1024, MIB),  # extents 3 and 4
               (5 * MIB, 10),                # extent 5: merged with 3-4
               (MIB + 8192, 4096)]           # extent 1 again
    assert fiemap.sector_ranges(extents, 2048, 2097152) == \
        ([(2048, 2048), (6144, 6144)], 4)


def test_ranges_of_a_partial_last_extent_stop_at_the_device_end():
    # A 1000-sector device with 512-sector extents: extent 1 has 488.
    assert fiemap.sector_ranges([(600 * 512, 4096)], 512, 1000) == \
        ([(512, 488)], 1)
    with pytest.raises(HottierError, match="beyond the end"):
        fiemap.sector_ranges([(999 * 512, 1024)], 512, 1000)


def test_ranges_of_nothing():
    assert fiemap.sector_ranges([], 2048, 4096) == ([], 0)
    assert fiemap.sector_ranges([(MIB, 0)], 2048, 4096) == ([], 0)


def test_inline_data_is_skipped_and_unplaced_data_refused():
    last = fiemap.EXTENT_LAST
    assert fiemap.device_extents("f", [
        (0, MIB, 4096, 0), (4096, 0, 60, fiemap.EXTENT_DATA_INLINE | last),
    ]) == [(MIB, 4096)]
    for flag, why in ((fiemap.EXTENT_DELALLOC, "not allocated yet"),
                      (fiemap.EXTENT_UNKNOWN, "location is unknown"),
                      (fiemap.EXTENT_ENCODED, "compressed")):
        with pytest.raises(HottierError, match=why):
            fiemap.device_extents("f", [(0, MIB, 4096, flag)])


def test_fiemap_of_a_real_file_covers_it(tmp_path):
    path = tmp_path / "data"
    path.write_bytes(os.urandom(300000))
    try:
        extents = fiemap.fiemap(str(path), batch=1)     # one per call
    except OSError as e:
        if e.errno in (errno.EOPNOTSUPP, errno.ENOTTY):
            pytest.skip(f"no FIEMAP on {tmp_path}'s filesystem")
        raise
    assert sum(length for _, _, length, _ in extents) >= 300000
    assert extents[-1][3] & fiemap.EXTENT_LAST
    assert not any(flags & fiemap.EXTENT_DELALLOC     # FIEMAP_FLAG_SYNC
                   for _, _, _, flags in extents)


@pytest.fixture
def pinnable(tmp_path, monkeypatch):
    """tiered holds (per the fake mountinfo) an ext4 with data.bin, whose
    extents FIEMAP reports at 1 MiB and 3.5 MiB."""
    path = tmp_path / "data.bin"
    path.write_bytes(b"x" * 8192)
    st = os.stat(path)
    devnum = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    t = Tree(tmp_path)
    t.block("sdb", "8:16")
    t.block("nvme0n1", "259:0")
    t.hottier("tiered", devnum=devnum)
    t.mount(devnum, "/mnt", "ext4")
    t.path = str(path)
    monkeypatch.setattr(fiemap, "fiemap", lambda p: [
        (0, MIB, 4096, 0), (4096, 3 * MIB + MIB // 2, MIB,
                            fiemap.EXTENT_LAST)])
    return t


def test_pin_sends_the_file_s_extents(pinnable):
    rc, out = pinnable.run("pin", "tiered", pinnable.path)
    assert rc == 0
    assert pinnable.messages() == ["pin 2048 2048", "pin 6144 4096"]
    assert out == f"pinned {pinnable.path}: 3 extents (3 MiB) in 2 ranges\n"
    rc, out = pinnable.run("unpin", "tiered", pinnable.path, "--json")
    assert pinnable.messages()[2:] == ["unpin 2048 2048", "unpin 6144 4096"]
    assert json.loads(out)["ranges"][1] == {"start_sector": 6144,
                                            "nr_sectors": 4096}


def test_a_pin_larger_than_the_unpinned_slots_is_refused(pinnable, capsys):
    base = os.path.join(pinnable.sys, "block", "dm-3", "hottier")
    write(os.path.join(base, "slots_total"), "4\n")
    write(os.path.join(base, "pinned"), "2\n")
    assert pinnable.run("pin", "tiered", pinnable.path)[0] == 1
    assert one_line_error(capsys) == (
        f"hottierctl: {pinnable.path} covers 3 extents, more than the 2 "
        "slots of tiered not pinned already (4 slots, 2 pinned)\n")
    assert pinnable.messages() == []
    write(os.path.join(base, "pinned"), "1\n")
    assert pinnable.run("pin", "tiered", pinnable.path)[0] == 0


def test_a_failed_pin_undoes_the_ranges_pinned_before(pinnable, capsys):
    pinnable.set_dmsetup(fail={"pin 6144 4096": "device-mapper: message "
                               "ioctl on tiered  failed: No space left on "
                               "device"})
    assert pinnable.run("pin", "tiered", pinnable.path)[0] == 1
    assert pinnable.messages() == ["pin 2048 2048", "pin 6144 4096",
                                   "unpin 2048 2048"]
    assert "No space left on device" in one_line_error(capsys)


def test_pin_refuses_btrfs(pinnable, capsys):
    write(os.path.join(pinnable.proc, "self", "mountinfo"), "")
    st = os.stat(pinnable.path)
    pinnable.mount(f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}", "/mnt",
                   "btrfs")
    assert pinnable.run("pin", "tiered", pinnable.path)[0] == 1
    assert "is on btrfs, whose FIEMAP addresses are not sectors" in \
        one_line_error(capsys)
    assert pinnable.messages() == []


def test_pin_refuses_a_file_on_another_device(pinnable, capsys):
    write(os.path.join(pinnable.sys, "block", "dm-3", "dev"), "253:3\n")
    assert pinnable.run("pin", "tiered", pinnable.path)[0] == 1
    assert "is not on tiered (it is on device" in one_line_error(capsys)


def test_pin_refuses_a_directory(pinnable, capsys, tmp_path):
    assert pinnable.run("pin", "tiered", str(tmp_path))[0] == 1
    assert one_line_error(capsys) == \
        f"hottierctl: {tmp_path}: not a regular file\n"


# create, remove, activate


@pytest.fixture
def disks(tmp_path):
    """sdb (1 GiB HDD, partition sdb1) and nvme0n1 (SSD), no device yet."""
    t = Tree(tmp_path)
    t.block("sdb", "8:16")
    t.partition("sdb", "sdb1", "8:17")
    t.block("nvme0n1", "259:0", sectors=262144)
    return t


def test_create_loads_the_table_with_a_hottier_uuid(disks):
    rc, out = disks.run("create", "tiered", "--hdd", "/dev/sdb", "--ssd",
                        "/dev/nvme0n1", "--extent-size", "512K", "--set",
                        "routing=ssd", "--set", "max_tracked=4096")
    assert rc == 0
    assert disks.dmsetup_log()[-1] == [
        "create", "tiered", "--uuid", "HOTTIER-tiered", "--table",
        "0 2097152 hottier 8:16 259:0 1024 4 routing ssd max_tracked 4096"]
    assert out == ("tiered: created /dev/mapper/tiered over /dev/sdb (HDD) "
                   "and /dev/nvme0n1 (SSD), 512 KiB extents\n")


def test_create_default_extent_is_1m(disks):
    assert disks.run("create", "t", "--hdd", "/dev/sdb", "--ssd",
                     "/dev/nvme0n1")[0] == 0
    assert disks.load()["devices"]["t"]["table"] == \
        "0 2097152 hottier 8:16 259:0 2048"


def created_table(t, *extra, hdd="/dev/sdb"):
    assert t.run("create", "t", "--hdd", hdd, "--ssd", "/dev/nvme0n1",
                 *extra)[0] == 0
    return t.load()["devices"]["t"]["table"]


def test_create_names_the_hdd_by_its_wwn_for_the_ssds_map(disks, capsys):
    write(os.path.join(disks.dirs["sdb"], "device", "wwid"),
          "naa.5000c500a1b2c3d4\n")
    write(os.path.join(disks.dirs["sdb"], "device", "serial"), "Z1Z2\n")
    assert created_table(disks, "--set", "routing=ssd") == \
        ("0 2097152 hottier 8:16 259:0 2048 4 routing ssd "
         "hdd_id wwn-naa.5000c500a1b2c3d4")
    assert capsys.readouterr().err == ""


def test_create_names_a_partition_by_its_disk_serial_and_number(disks):
    write(os.path.join(disks.dirs["sdb"], "serial"), "QM 0001\n")
    assert created_table(disks, hdd="/dev/sdb1").endswith(
        " 2 hdd_id serial-QM_0001-part1")


def test_create_names_an_lv_or_md_array_by_its_uuid(disks):
    lv = disks.block("dm-0", "253:0", virtual=True)
    write(os.path.join(lv, "dm", "uuid"), "LVM-" + "a" * 32 + "b" * 32 + "\n")
    table = created_table(disks, hdd="/dev/dm-0")
    word = table.split()[-1]
    # 68 bytes of UUID: the head kept, and a hash of the whole.
    assert word.startswith("dm-uuid-LVM-aaaa") and len(word) == 64, word
    assert re.fullmatch(r"dm-uuid-LVM-a{32}b{3}-[0-9a-f]{16}", word), word
    md = disks.block("md0", "9:0", virtual=True)
    write(os.path.join(md, "md", "uuid"),
          "1b2f6c54-0f5e-4a43-8a53-4cf3e2a6f1d0\n")
    disks.run("remove", "t")
    assert created_table(disks, hdd="/dev/md0").endswith(
        " hdd_id md-uuid-1b2f6c54-0f5e-4a43-8a53-4cf3e2a6f1d0")


def test_create_without_an_identity_keeps_no_map_and_says_so(disks, capsys):
    assert created_table(disks) == "0 2097152 hottier 8:16 259:0 2048"
    assert "no WWN, serial or UUID found" in capsys.readouterr().err


def test_create_takes_a_given_id_none_and_a_format_request(disks, capsys):
    write(os.path.join(disks.dirs["sdb"], "device", "wwid"), "naa.1\n")
    assert created_table(disks, "--set", "hdd_id=none") == \
        "0 2097152 hottier 8:16 259:0 2048"
    assert capsys.readouterr().err == ""
    disks.run("remove", "t")
    assert created_table(disks, "--set", "hdd_id=pool-7",
                         "--format-ssd") == \
        "0 2097152 hottier 8:16 259:0 2048 4 format_ssd yes hdd_id pool-7"
    disks.run("remove", "t")
    assert disks.run("create", "t", "--hdd", "/dev/sdb", "--ssd",
                     "/dev/nvme0n1", "--set", "hdd_id=two words")[0] == 1
    assert "hdd_id 'two words': expected 1 to 64" in capsys.readouterr().err


def refuse_create(t, capsys, hdd="/dev/sdb", ssd="/dev/nvme0n1",
                  name="tiered", *extra):
    assert t.run("create", name, "--hdd", hdd, "--ssd", ssd, *extra)[0] == 1
    assert not any(c[0] == "create" for c in t.dmsetup_log())
    return one_line_error(capsys)


def test_create_refuses_one_device_twice(disks, capsys):
    assert refuse_create(disks, capsys, ssd="/dev/sdb") == \
        "hottierctl: /dev/sdb and /dev/sdb are the same device (8:16)\n"


def test_create_refuses_a_partition_of_the_other_member(disks, capsys):
    assert refuse_create(disks, capsys, ssd="/dev/sdb1") == \
        "hottierctl: /dev/sdb1 is a partition of /dev/sdb\n"


def test_create_refuses_a_mounted_member(disks, capsys):
    disks.mount("8:17", "/srv", "ext4")                # its partition
    assert refuse_create(disks, capsys) == \
        "hottierctl: /dev/sdb is mounted on /srv\n"


def test_create_refuses_a_swap_member(disks, capsys):
    with open(os.path.join(disks.proc, "swaps"), "a") as f:
        f.write("/swapfile file 1024 0 -2\n/dev/nvme0n1 partition 1 0 -3\n")
    assert refuse_create(disks, capsys) == \
        "hottierctl: /dev/nvme0n1 is in use as swap (/dev/nvme0n1)\n"


def test_create_refuses_a_member_held_by_another_device(disks, capsys):
    disks.block("md0", "9:0", slaves=["sdb1"], virtual=True)
    assert refuse_create(disks, capsys) == \
        "hottierctl: /dev/sdb is in use by md0\n"


def test_create_refuses_a_member_open_exclusively(disks, capsys):
    disks.busy.add("/dev/nvme0n1")
    assert refuse_create(disks, capsys) == ("hottierctl: /dev/nvme0n1: in "
                                            "use (cannot open it "
                                            "exclusively)\n")


def test_create_refuses_missing_devices_names_and_keys(disks, capsys):
    assert refuse_create(disks, capsys, hdd="/dev/nope") == \
        "hottierctl: /dev/nope: No such file or directory\n"
    assert "bad device name 'a/b'" in refuse_create(disks, capsys,
                                                    name="a/b")
    assert "unknown key 'colour'" in refuse_create(
        disks, capsys, "/dev/sdb", "/dev/nvme0n1", "t", "--set",
        "colour=red")
    disks.hottier("tiered", hdd="sdb", ssd="nvme0n1")
    assert refuse_create(disks, capsys) == \
        "hottierctl: a device named 'tiered' already exists\n"


def with_wwn(t):
    """sdb as a real disk has it: a WWN, so hottierctl names it."""
    write(os.path.join(t.dirs["sdb"], "device", "wwid"), "naa.5000c5\n")


def test_a_failed_create_leaves_nothing(disks, capsys):
    with_wwn(disks)
    disks.set_dmsetup(create_leaves=True, fail={
        "create": "device-mapper: reload ioctl on tiered  failed: "
                  "Invalid argument"})
    assert disks.run("create", "tiered", "--hdd", "/dev/sdb", "--ssd",
                     "/dev/nvme0n1")[0] == 1
    assert one_line_error(capsys) == (
        "hottierctl: create tiered: dmsetup create failed: device-mapper: "
        "reload ioctl on tiered  failed: Invalid argument (dmesg says why)\n")
    assert disks.dmsetup_log()[-1] == ["remove", "tiered"]
    assert disks.load()["devices"] == {}


def test_create_loads_the_module_first(disks, tmp_path):
    os.rmdir(os.path.join(disks.sys, "module", "dm_hottier"))
    disks.set_dmsetup(targets=["linear"])
    s = disks.system()
    flag = tmp_path / "modprobed"
    s.modprobe_cmd = ["sh", "-c", f'mkdir "{disks.sys}/module/dm_hottier"; '
                      f'echo "$0" > "{flag}"']
    assert cli.main(["create", "t", "--hdd", "/dev/sdb", "--ssd",
                     "/dev/nvme0n1"], system=s) == 0
    assert flag.read_text() == "dm-hottier\n"


def test_remove(tree, capsys):
    assert tree.run("remove", "tiered") == (0, "tiered: removed\n")
    assert tree.load()["devices"] == {}
    os.unlink(os.path.join(tree.sys, "block", "dm-3"))  # as the kernel does
    assert tree.run("remove", "tiered")[0] == 1
    assert one_line_error(capsys) == "hottierctl: no device named 'tiered'\n"


def nodes(t, tmp_path):
    """Device nodes as files, so activate finds them present."""
    (tmp_path / "dev").mkdir()
    for name in ("sdb", "nvme0n1"):
        (tmp_path / "dev" / name).write_text("")
        t.blockdevs[str(tmp_path / "dev" / name)] = t.blockdevs[
            f"/dev/{name}"]


def tab_of_nodes(disks, tmp_path, text):
    """The disks' nodes as files (nodes()), their WWN, and a hottiertab
    of text, where {dev} is the nodes' directory: (that directory, the
    tab's path)."""
    nodes(disks, tmp_path)
    with_wwn(disks)
    dev = tmp_path / "dev"
    hottiertab = tmp_path / "hottiertab"
    hottiertab.write_text(text.format(dev=dev))
    return dev, hottiertab


def test_activate_creates_what_is_present(disks, tmp_path, capsys):
    dev, hottiertab = tab_of_nodes(
        disks, tmp_path,
        "# name hdd ssd extent\n"
        "tiered {dev}/sdb {dev}/nvme0n1 1M routing=ssd\n"
        "later {dev}/sdx by-id/ata-not-here 1M\n")
    rc, out = disks.run("activate", "--tab", str(hottiertab))
    assert rc == 0 and out == "tiered: created\n"
    assert capsys.readouterr().err == (
        f"hottierctl: later: {dev}/sdx, {dev}/disk/by-id/ata-not-here not "
        "present; skipped\n")
    assert disks.load()["devices"]["tiered"]["table"] == \
        "0 2097152 hottier 8:16 259:0 2048 4 routing ssd hdd_id wwn-naa.5000c5"
    # A second run (the device now exists) creates nothing.
    write(os.path.join(disks.sys, "block", "dm-3", "dm", "name"), "x")
    rc, out = disks.run("activate", "--tab", str(hottiertab), "tiered")
    assert rc == 0 and out == "tiered: already active\n"


def test_activate_waits_for_a_member_that_comes_up_late(disks, tmp_path,
                                                        capsys):
    """An md array or an LV that appears after udev settled: --wait
    polls the tab's members until they all exist."""
    dev, hottiertab = tab_of_nodes(disks, tmp_path,
                                   "tiered {dev}/sdb {dev}/nvme0n1 1M\n")
    os.rename(dev / "nvme0n1", dev / "nvme0n1.later")
    later = threading.Timer(0.6, os.rename, (dev / "nvme0n1.later",
                                             dev / "nvme0n1"))
    later.start()
    start = time.monotonic()
    rc, out = disks.run("activate", "--tab", str(hottiertab), "--wait", "30")
    took = time.monotonic() - start
    later.join()
    assert rc == 0 and out == "tiered: created\n"
    assert 0.5 < took < 10, took
    err = capsys.readouterr().err.splitlines()
    assert err[0] == f"hottierctl: waiting up to 30 s for {dev}/nvme0n1"
    assert err[1].startswith("hottierctl: waited ") and \
        err[1].endswith(" s for members") and len(err) == 2, err


def test_activate_waits_at_most_wait_seconds_then_skips(disks, tmp_path,
                                                        capsys):
    dev, hottiertab = tab_of_nodes(disks, tmp_path,
                                   "tiered {dev}/sdb {dev}/nvme0n1 1M\n"
                                   "later {dev}/sdx {dev}/sdy 1M\n")
    start = time.monotonic()
    rc, out = disks.run("activate", "--tab", str(hottiertab), "--wait",
                        "0.7")
    took = time.monotonic() - start
    assert rc == 0 and out == "tiered: created\n"
    assert 0.7 <= took < 10, took
    err = capsys.readouterr().err.splitlines()
    assert err[0] == \
        f"hottierctl: waiting up to 0.7 s for {dev}/sdx, {dev}/sdy"
    assert err[-1] == \
        f"hottierctl: later: {dev}/sdx, {dev}/sdy not present; skipped"
    # Nothing missing: no wait, no word of it.
    rc, out = disks.run("activate", "--tab", str(hottiertab), "--wait",
                        "30", "tiered")
    assert rc == 0 and out == "tiered: already active\n"
    assert capsys.readouterr().err == ""


# An SSD missing at boot


NO_SSD_TABLE = "0 2097152 hottier 8:16 - 2048 2 hdd_id wwn-naa.5000c5"


def note_of(tree, name):
    with open(os.path.join(tree.state_dir, name + ".no-ssd")) as f:
        return json.load(f)


def test_activate_creates_a_device_whose_ssd_is_missing_without_it(
        disks, tmp_path, capsys):
    """Documentation/hottier.rst, "An SSD missing at boot": the HDD alone,
    degraded, with a note that outlives the boot."""
    dev, hottiertab = tab_of_nodes(disks, tmp_path,
                                   "tiered {dev}/sdb {dev}/nvme-gone 1M\n")
    rc, out = disks.run("activate", "--tab", str(hottiertab))
    assert rc == 0 and out == "tiered: created without its SSD\n"
    assert capsys.readouterr().err == (
        f"hottierctl: tiered: {dev}/nvme-gone not present: degraded, every "
        "I/O on the HDD; once the SSD is back: hottierctl attach tiered\n")
    assert disks.load()["devices"]["tiered"]["table"] == NO_SSD_TABLE
    assert note_of(disks, "tiered") == {
        "boot_id": "0f0e0d0c-0b0a-4908-8706-050403020100",
        "ssd": f"{dev}/nvme-gone"}


def test_a_later_boot_with_the_ssd_drops_its_replicas_keeps_its_pins(
        disks, tmp_path, capsys):
    """The device ran without its SSD, then a reboot finds the SSD: the
    HDD may have been written under its replicas, so the new table asks
    the kernel for the map's pins alone (drop_replicas, once), and the
    note goes."""
    dev, hottiertab = tab_of_nodes(disks, tmp_path,
                                   "tiered {dev}/sdb {dev}/nvme0n1 1M\n")
    os.rename(dev / "nvme0n1", dev / "nvme0n1.later")
    assert disks.run("activate", "--tab", str(hottiertab))[0] == 0

    def reboot(boot_id):
        disks.set_dmsetup(devices={})
        disks.new_boot(boot_id)

    # Missing again at the next boot: the note keeps the first boot.
    reboot("11111111-2222-4333-8444-555555555555")
    assert disks.run("activate", "--tab", str(hottiertab))[0] == 0
    assert note_of(disks, "tiered")["boot_id"] == \
        "0f0e0d0c-0b0a-4908-8706-050403020100"
    reboot("22222222-2222-4333-8444-555555555555")
    os.rename(dev / "nvme0n1.later", dev / "nvme0n1")
    assert disks.run("activate", "--tab", str(hottiertab)) == \
        (0, "tiered: created\n")
    assert disks.load()["devices"]["tiered"]["table"] == (
        "0 2097152 hottier 8:16 259:0 2048 4 hdd_id wwn-naa.5000c5 "
        "drop_replicas yes")
    assert not os.path.exists(os.path.join(disks.state_dir, "tiered.no-ssd"))
    capsys.readouterr()
    # Its next boot takes the map over whole.
    reboot("33333333-2222-4333-8444-555555555555")
    assert disks.run("activate", "--tab", str(hottiertab))[0] == 0
    assert disks.load()["devices"]["tiered"]["table"] == \
        "0 2097152 hottier 8:16 259:0 2048 2 hdd_id wwn-naa.5000c5"


def no_ssd_device(tmp_path):
    """sdb, nvme0n1, and tiered live over sdb alone, made in this boot by
    activate (its note)."""
    t = Tree(tmp_path)
    t.block("sdb", "8:16")
    t.block("nvme0n1", "259:0", sectors=262144)
    t.hottier("tiered", ssd=None, stats={"mode": "no_ssd", "map": "off"},
              keys={"hdd_id": "wwn-0x5000c500a1b2c3d4"})
    os.makedirs(t.state_dir)
    with open(os.path.join(t.state_dir, "tiered.no-ssd"), "w") as f:
        json.dump({"boot_id": "0f0e0d0c-0b0a-4908-8706-050403020100",
                   "ssd": "/dev/nvme0n1"}, f)
    return t


def test_attach_in_the_boot_it_went_missing_lets_the_kernel_judge(
        tmp_path):
    """The live table with no SSD is the one the note names: the kernel
    knows whether it wrote the HDD, so the reload asks for nothing."""
    t = no_ssd_device(tmp_path)
    rc, out = t.run("attach", "tiered", "/dev/nvme0n1", "--json")
    assert rc == 0, out
    line = t.load()["devices"]["tiered"]["table"]
    assert line.startswith("0 2097152 hottier 8:16 259:0 2048 26 ")
    assert line.endswith(" hdd_id wwn-0x5000c500a1b2c3d4")
    assert [c[0] for c in t.dmsetup_log()
            if c[0] in ("reload", "resume")] == ["reload", "resume"]
    rec = json.loads(out)
    assert rec["name"] == "tiered" and rec["ssd"] == "/dev/nvme0n1"
    assert not os.path.exists(os.path.join(t.state_dir, "tiered.no-ssd"))


def test_attach_after_an_earlier_boot_drops_the_replicas(tmp_path):
    t = no_ssd_device(tmp_path)
    t.new_boot("11111111-2222-4333-8444-555555555555")
    assert t.run("attach", "tiered", "/dev/nvme0n1")[0] == 0
    assert t.load()["devices"]["tiered"]["table"].endswith(
        " hdd_id wwn-0x5000c500a1b2c3d4 drop_replicas yes")


def test_remove_of_a_device_with_no_ssd_forgets_its_boot(tmp_path):
    """What the removed table wrote goes with it: an attach of a table
    made again in the same boot drops the replicas."""
    t = no_ssd_device(tmp_path)
    assert t.run("remove", "tiered") == (0, "tiered: removed\n")
    assert note_of(t, "tiered") == {"boot_id": "", "ssd": "/dev/nvme0n1"}
    t.hottier("tiered", kname="dm-5", devnum="253:5", ssd=None,
              stats={"mode": "no_ssd", "map": "off"},
              keys={"hdd_id": "wwn-0x5000c500a1b2c3d4"})
    assert t.run("attach", "tiered", "/dev/nvme0n1")[0] == 0
    assert t.load()["devices"]["tiered"]["table"].endswith(
        " drop_replicas yes")


def test_attach_of_a_table_made_by_hand_drops_the_replicas(tmp_path):
    """No note: a table with no SSD that hottierctl did not make, whose
    past is unknown."""
    t = no_ssd_device(tmp_path)
    os.unlink(os.path.join(t.state_dir, "tiered.no-ssd"))
    assert t.run("attach", "tiered", "/dev/nvme0n1")[0] == 0
    assert t.load()["devices"]["tiered"]["table"].endswith(
        " drop_replicas yes")


def test_attach_refusals_change_nothing(tmp_path, capsys):
    t = no_ssd_device(tmp_path)
    t.block("sdc", "8:32")
    t.hottier("other", kname="dm-4", devnum="253:4", hdd="sdc")
    before = t.load()["devices"]
    # A device that has its SSD.
    assert t.run("attach", "other", "/dev/nvme0n1")[0] == 1
    assert one_line_error(capsys) == (
        "hottierctl: other has its SSD (nvme0n1): nothing to attach "
        "(replace-ssd swaps it for another)\n")
    # Its own HDD, another device's SSD, a missing one, no tab entry.
    assert t.run("attach", "tiered", "/dev/sdb")[0] == 1
    assert one_line_error(capsys) == \
        "hottierctl: /dev/sdb is tiered's HDD or shares its disk\n"
    assert t.run("attach", "tiered", "/dev/nvme0n1")[0] == 1
    assert one_line_error(capsys) == \
        "hottierctl: /dev/nvme0n1 is in use by dm-4\n"
    assert t.run("attach", "tiered", "/dev/nvme9")[0] == 1
    assert one_line_error(capsys) == \
        "hottierctl: /dev/nvme9: No such file or directory\n"
    hottiertab = tmp_path / "hottiertab"
    hottiertab.write_text("")
    assert t.run("attach", "tiered", "--tab", str(hottiertab))[0] == 1
    assert one_line_error(capsys) == \
        f"hottierctl: {hottiertab} lists no tiered: give the SSD\n"
    assert t.load()["devices"] == before
    assert os.path.exists(os.path.join(t.state_dir, "tiered.no-ssd"))


def test_status_says_why_a_device_has_no_ssd(tmp_path):
    t = no_ssd_device(tmp_path)
    rc, out = t.run("status", "tiered")
    assert rc == 0
    lines = out.splitlines()
    assert lines[0] == (
        "tiered (dm-3): no_ssd: the SSD was missing at creation, every I/O "
        "goes to the HDD; once it is there: hottierctl attach tiered")
    assert any(line.split()[:2] == ["SSD", "map"] and
               line.endswith("none: the device has no SSD") for line in lines)
    rc, out = t.run("list")
    assert out.splitlines()[1].split()[4:6] == ["sdb", "-"]


def test_activate_refuses_a_negative_wait(disks, tmp_path, capsys):
    hottiertab = tmp_path / "hottiertab"
    hottiertab.write_text("tiered /dev/sdb /dev/nvme0n1 1M\n")
    assert disks.run("activate", "--tab", str(hottiertab), "--wait",
                     "-1")[0] == 1
    assert one_line_error(capsys) == \
        "hottierctl: --wait -1: expected seconds, 0 or more\n"


def test_activate_reports_a_failed_create_and_goes_on(disks, tmp_path,
                                                      capsys):
    dev, hottiertab = tab_of_nodes(disks, tmp_path,
                                   "a {dev}/sdb {dev}/sdb 1M\n"
                                   "b {dev}/sdb {dev}/nvme0n1 1M\n")
    rc, out = disks.run("activate", "--tab", str(hottiertab))
    assert rc == 1 and out == "b: created\n"
    assert capsys.readouterr().err.splitlines() == [
        f"hottierctl: {dev}/sdb and {dev}/sdb are the same device (8:16)",
        "hottierctl: some devices were not created"]


def test_activate_with_a_bad_hottiertab(disks, tmp_path, capsys):
    hottiertab = tmp_path / "hottiertab"
    hottiertab.write_text("tiered /dev/sdb\n")
    assert disks.run("activate", "--tab", str(hottiertab))[0] == 1
    assert one_line_error(capsys).startswith(f"hottierctl: {hottiertab}:1: ")
    assert disks.run("activate", "--tab", str(tmp_path / "none"))[0] == 1
    assert "No such file or directory" in one_line_error(capsys)


# resize


def fail_resume(tree, once):
    tree.set_dmsetup(fail={"resume": "device-mapper: resume ioctl on "
                                     "tiered  failed: Input/output error"},
                     fail_once=once)


def assert_swapped(tree, line):
    """tiered's table is now line, loaded by a reload and a resume."""
    assert tree.load()["devices"]["tiered"]["table"] == line
    assert [c[0] for c in tree.dmsetup_log()][-2:] == ["reload", "resume"]


def grow_hdd(tree, sectors):
    write(os.path.join(tree.dirs["sdb"], "size"), f"{sectors}\n")


def test_resize_reloads_with_the_hdds_new_length_and_the_same_keys(tree):
    before = tree.load()["devices"]["tiered"]["table"]
    grow_hdd(tree, 4194304)
    rc, out = tree.run("resize", "tiered")
    assert rc == 0
    assert out == ("tiered: 2097152 to 4194304 sectors (1 GiB to 2 GiB); "
                   "replicas and pins kept; grow the filesystem on it now "
                   "(resize2fs, xfs_growfs)\n")
    assert_swapped(tree, before.replace("0 2097152 ", "0 4194304 ", 1))


def test_resize_json_and_nothing_to_do(tree):
    rc, out = tree.run("resize", "tiered", "--json")
    assert rc == 0 and json.loads(out) == {
        "name": "tiered", "old_sectors": 2097152, "new_sectors": 2097152,
        "resized": False}
    assert "reload" not in [c[0] for c in tree.dmsetup_log()]
    assert tree.run("resize", "tiered")[1] == (
        "tiered: already as long as its HDD, 2097152 sectors (1 GiB)\n")


def test_resize_never_shrinks(tree, capsys):
    grow_hdd(tree, 1048576)
    assert tree.run("resize", "tiered")[0] == 1
    assert one_line_error(capsys) == (
        "hottierctl: tiered: its HDD sdb has 1048576 sectors, fewer than "
        "the device's 2097152: not shrunk (remove and create it again to "
        "shrink)\n")
    assert "reload" not in [c[0] for c in tree.dmsetup_log()]


def test_resize_refused_by_the_kernel_leaves_the_old_table(tree, capsys):
    before = tree.load()["devices"]["tiered"]["table"]
    grow_hdd(tree, 4194304)
    fail_resume(tree, once=True)
    assert tree.run("resize", "tiered")[0] == 1
    assert "the device keeps its old length" in one_line_error(capsys)
    assert [c[0] for c in tree.dmsetup_log()][-4:] == [
        "reload", "resume", "reload", "resume"]
    assert tree.load()["devices"]["tiered"]["table"] == before
    fail_resume(tree, once=False)
    assert tree.run("resize", "tiered")[0] == 1
    assert "the device is suspended" in one_line_error(capsys)
    tree.set_dmsetup(fail={"reload": "device-mapper: reload ioctl on "
                                     "tiered  failed: Invalid argument"})
    assert tree.run("resize", "tiered")[0] == 1
    assert "the device is unchanged" in one_line_error(capsys)


# replace-ssd


def spare(tree):
    tree.block("nvme1n1", "259:1", sectors=262144)
    return "/dev/nvme1n1"


def test_replace_ssd_reloads_over_the_new_ssd(tree, tmp_path):
    before = tree.load()["devices"]["tiered"]["table"]
    new = spare(tree)
    rc, out = tree.run("replace-ssd", "tiered", new, "--tab",
                       str(tmp_path / "none"))
    assert rc == 0
    assert out == ("tiered: its SSD is now /dev/nvme1n1, in place of "
                   "nvme0n1, whose map is invalidated; the pins are copied "
                   "again, other replicas as they heat\n")
    assert_swapped(tree, before.replace(" 259:0 ", " 259:1 ", 1))


def test_replace_ssd_says_when_the_tab_names_the_old_ssd(tree, tmp_path):
    new = spare(tree)
    rc, out = tree.run("replace-ssd", "tiered", new, "--json", "--tab",
                       listing(tmp_path, "tiered"))
    assert rc == 0 and json.loads(out) == {
        "name": "tiered", "old_ssd": "nvme0n1", "ssd": "/dev/nvme1n1",
        "tab_names_old_ssd": True}


def test_replace_ssd_with_format_ssd_asks_the_kernel_once(tree, tmp_path):
    tree.hottier("ided", kname="dm-4", devnum="253:4", hdd="sdb",
                 keys={"hdd_id": "wwn-0x5000c500a1b2c3d4"})
    new = spare(tree)
    assert tree.run("replace-ssd", "ided", new, "--format-ssd", "--tab",
                    str(tmp_path / "none"))[0] == 0
    reload = [c for c in tree.dmsetup_log() if c[0] == "reload"][-1]
    line = reload[reload.index("--table") + 1]
    assert line.endswith(" hdd_id wwn-0x5000c500a1b2c3d4 format_ssd yes")


def test_replace_ssd_refusals_leave_the_device_alone(tree, tmp_path,
                                                     capsys):
    tab = ["--tab", str(tmp_path / "none")]
    assert tree.run("replace-ssd", "tiered", "/dev/nvme0n1", *tab)[0] == 1
    assert one_line_error(capsys) == \
        "hottierctl: /dev/nvme0n1 is already tiered's SSD\n"
    assert tree.run("replace-ssd", "tiered", "/dev/sdb", *tab)[0] == 1
    assert "is tiered's HDD" in one_line_error(capsys)
    new = spare(tree)
    tree.busy.add(new)
    assert tree.run("replace-ssd", "tiered", new, *tab)[0] == 1
    one_line_error(capsys)
    tree.busy.clear()
    assert tree.run("replace-ssd", "tiered", new, "--format-ssd",
                    *tab)[0] == 1
    assert "--format-ssd needs the HDD's identity" in one_line_error(capsys)
    assert "reload" not in [c[0] for c in tree.dmsetup_log()]


def test_replace_ssd_refused_at_resume_brings_the_old_table_back(
        tree, tmp_path, capsys):
    before = tree.load()["devices"]["tiered"]["table"]
    new = spare(tree)
    fail_resume(tree, once=True)
    assert tree.run("replace-ssd", "tiered", new, "--tab",
                    str(tmp_path / "none"))[0] == 1
    assert "the device keeps its old SSD" in one_line_error(capsys)
    assert tree.load()["devices"]["tiered"]["table"] == before


def listing(tmp_path, *names):
    hottiertab = tmp_path / "hottiertab"
    hottiertab.write_text("".join(f"{n} /dev/sdb /dev/nvme0n1 1M\n"
                                  for n in names))
    return str(hottiertab)


def test_deactivate_removes_the_active_devices_last_listed_first(
        tree, tmp_path):
    tree.block("sdc", "8:32")
    tree.hottier("upper", kname="dm-4", devnum="253:4", hdd="sdc")
    hottiertab = listing(tmp_path, "tiered", "gone", "upper")
    rc, out = tree.run("deactivate", "--tab", hottiertab)
    assert rc == 0
    assert out == "upper: removed\ngone: not active\ntiered: removed\n"
    assert [c for c in tree.dmsetup_log() if c[0] == "remove"] == [
        ["remove", "upper"], ["remove", "tiered"]]
    assert tree.load()["devices"] == {}


def test_deactivate_names_and_unknown_names(tree, tmp_path, capsys):
    hottiertab = listing(tmp_path, "tiered", "other")
    rc, out = tree.run("deactivate", "--tab", hottiertab, "other")
    assert (rc, out) == (0, "other: not active\n")
    assert "tiered" in tree.load()["devices"]
    assert tree.run("deactivate", "--tab", hottiertab, "nonesuch")[0] == 1
    assert one_line_error(capsys) == \
        f"hottierctl: {hottiertab} lists no nonesuch\n"


def test_deactivate_leaves_an_open_device_says_so_and_goes_on(
        tree, tmp_path, capsys):
    tree.block("sdc", "8:32")
    tree.hottier("upper", kname="dm-4", devnum="253:4", hdd="sdc")
    tree.set_dmsetup(fail={"remove": "device-mapper: remove ioctl on "
                                     "tiered  failed: Device or resource "
                                     "busy"})
    rc, out = tree.run("deactivate", "--tab",
                       listing(tmp_path, "tiered", "upper"))
    assert rc == 1 and out == ""
    assert capsys.readouterr().err.splitlines() == [
        "hottierctl: upper: dmsetup remove failed: device-mapper: remove "
        "ioctl on tiered  failed: Device or resource busy; left active",
        "hottierctl: tiered: dmsetup remove failed: device-mapper: remove "
        "ioctl on tiered  failed: Device or resource busy; left active",
        "hottierctl: some devices were not removed"]
    assert set(tree.load()["devices"]) == {"tiered", "upper"}


def test_deactivate_without_the_module_has_nothing_to_remove(
        tree, tmp_path):
    os.rmdir(os.path.join(tree.sys, "module", "dm_hottier"))
    tree.set_dmsetup(targets=["linear"])
    rc, out = tree.run("deactivate", "--tab", listing(tmp_path, "tiered"))
    assert (rc, out) == (0, "tiered: not active\n")
    assert not [c for c in tree.dmsetup_log() if c[0] == "remove"]


# heat


HEAT = "0-0 12\n1-1 6\n2-3 3\n4-7 0\n8-15 1\n"
TOP = "4096 9 resident pinned\n0 5 resident -\n2048 2 - -\n"


def test_heat_draws_bars_and_the_top_extents(tree):
    tree.set_messages("tiered", {"heat": HEAT, "top 10": TOP})
    rc, out = tree.run("heat", "tiered")
    lines = out.splitlines()
    assert rc == 0
    assert lines[0] == ("tiered: 22 extents tracked (1 MiB each), by heat "
                        "in reads")
    assert lines[1].split() == ["0-0", "12", "#" * 40]
    assert lines[2].split() == ["1-1", "6", "#" * 20]
    assert lines[4].split() == ["4-7", "0"]
    assert lines[5].split() == ["8-15", "1", "###"]
    assert lines[6] == "hottest 3:"
    assert lines[7].split() == ["START", "OFFSET", "HEAT", "RESIDENT",
                                "PINNED"]
    assert lines[8].split() == ["4096", "2", "MiB", "9", "yes", "yes"]
    assert lines[10].split() == ["2048", "1", "MiB", "2", "-", "-"]


def test_heat_json_and_top_n(tree):
    tree.set_messages("tiered", {"heat": HEAT, "top 2": TOP})
    rc, out = tree.run("heat", "tiered", "--top", "2", "--json")
    j = json.loads(out)
    assert j["bands"][4] == {"lo": 8, "hi": 15, "extents": 1}
    assert j["top"][0] == {"start_sector": 4096, "heat": 9,
                           "resident": True, "pinned": True}
    assert ["message", "tiered", "0", "top", "2"] in tree.dmsetup_log()


def test_heat_of_an_empty_table(tree):
    tree.set_messages("tiered", {"heat": "0-0 0\n1-1 0\n", "top 10": ""})
    rc, out = tree.run("heat", "tiered")
    assert out.splitlines()[-1] == "no extent is tracked"


# Installation and the files around the tool


def test_make_install_userspace_puts_every_file_in_place(tmp_path):
    prefix = tmp_path / "usr"
    r = subprocess.run(["make", "-s", "-C", REPO, "install-userspace",
                        f"PREFIX={prefix}"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    sbin = prefix / "sbin" / "hottierctl"
    r = subprocess.run([str(sbin), "--version"], capture_output=True,
                       text=True, cwd=tmp_path)
    assert r.returncode == 0 and r.stdout.startswith("hottierctl ")
    assert (prefix / "lib" / "hottierctl" / "hottier" / "cli.py").is_file()
    assert (prefix / "share" / "man" / "man8" / "hottierctl.8").is_file()
    rule = (prefix / "lib/udev/rules.d/60-hottier.rules").read_text()
    assert f'RUN+="{sbin} tune-queues $env{{DM_NAME}}"' in rule
    assert 'ENV{DM_UUID}!="HOTTIER-?*", GOTO="hottier_end"' in rule
    unit = prefix / "lib/systemd/system/hottier.service"
    assert f"ExecStart={sbin} activate --wait 60\n" in unit.read_text()
    assert f"ExecStop={sbin} deactivate\n" in unit.read_text()
    # systemd itself finds nothing wrong with the unit (its man page is
    # not installed where man looks: not checked).
    r = subprocess.run(["systemd-analyze", "verify", "--man=no", str(unit)],
                       capture_output=True, text=True)
    assert r.returncode == 0 and not r.stderr.strip(), r.stderr


def test_versions_agree():
    version = read(os.path.join(REPO, "VERSION")).strip()
    pyproject = read(os.path.join(REPO, "userspace", "pyproject.toml"))
    assert f'version = "{version}"' in pyproject
    assert cli.__version__ == version


def test_the_man_page_describes_every_subcommand():
    page = read(os.path.join(REPO, "userspace", "hottierctl.8"))
    commands = page[page.index(".SH COMMANDS"):page.index(".SH FILES")]
    described = set(re.findall(r"^\.TP\n\.BR? (.*)$", commands, re.M))
    names = {n.replace("\\-", "-") for line in described
             for n in re.findall(r'[\w\\-]+', line)}
    assert set(subcommands()) <= names


def test_the_example_hottiertab_parses_once_uncommented():
    text = read(os.path.join(REPO, "userspace", "hottiertab.example"))
    entries = [line.lstrip("# ") for line in text.splitlines()
               if re.match(r"#\s*\w+\s+(/dev|by-)", line)]
    parsed = tab.parse("\n".join(entries), "example")
    assert [e.name for e in parsed] == ["tiered", "media"]


def test_system_tools_are_found_without_sbin_in_path(tmp_path):
    """udev runs RUN programs with a PATH that may lack sbin (virtme-ng's
    udevd does): dmsetup must still be found."""
    from hottier.system import command
    found = command("ls -l", env={"PATH": str(tmp_path)})
    assert os.path.isabs(found[0]) and found[0].endswith("/ls"), found
    assert found[1:] == ["-l"]
    assert command("ls", env={})[0] == found[0]
    own = tmp_path / "ls"
    own.write_text("#!/bin/sh\n")
    own.chmod(0o755)
    assert command("ls", env={"PATH": str(tmp_path)})[0] == str(own)
    assert command(["./fake", "x"], env={}) == ["./fake", "x"]
    assert command("no-such-tool-here", env={}) == ["no-such-tool-here"]


def test_btrfs_files_are_named_by_their_mount_not_their_device(tmp_path):
    """btrfs gives its files an anonymous device number that no mount
    lists: the filesystem is the deepest mount above the file."""
    class Mounts:
        def mounts(self):
            return [("0:21", "/", "ext4"), ("8:16", "/srv", "xfs"),
                    ("254:3", "/srv/pool", "btrfs"),
                    ("254:4", "/srv/pool", "ext4"),      # mounted over it
                    ("254:5", "/srv/poolside", "xfs")]
    m = Mounts()
    assert fiemap.filesystem_type(m, "/srv/pool/a/f", "0:55") == "ext4"
    assert fiemap.filesystem_type(m, "/srv/pool/f", "8:16") == "xfs"
    m.mounts = lambda: [("0:21", "/", "ext4"),
                        ("254:3", "/srv/pool", "btrfs")]
    assert fiemap.filesystem_type(m, "/srv/pool/a/f", "0:55") == "btrfs"
    assert fiemap.filesystem_type(m, "/srv/poolside/f", "0:55") == "ext4"
