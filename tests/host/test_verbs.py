"""hottierctl's verbs for the administrator's messages (scrub, ssd-reset,
invalidate, reset-stats, promote, demote) against fake sysfs trees and a
fake dmsetup."""

import io
import json
import os
import re
import types

import pytest

from hottierctl_fakes import REPO, Tree, read, write
from hottier import cli, fiemap, verbs

BUSY = "device-mapper: message ioctl on tiered  failed: "
MIB = 1 << 20


@pytest.fixture
def tree(tmp_path):
    """sdb (an HDD) and nvme0n1 (an SSD) under hottier device "tiered":
    2097152 sectors, 1 MiB extents, 512 slots, 120 used, 4 pinned."""
    t = Tree(tmp_path)
    t.block("sdb", "8:16")
    t.block("nvme0n1", "259:0", sectors=262144)
    t.hottier("tiered")
    return t


def one_line_error(capsys):
    err = capsys.readouterr().err
    assert err.startswith("hottierctl: ") and err.count("\n") == 1, err
    return err.rstrip("\n")


def scrub_error(capsys):
    """The one error line after the scrub's progress lines."""
    lines = capsys.readouterr().err.splitlines()
    assert [line.startswith("hottierctl: ") for line in lines] == \
        [False] * (len(lines) - 1) + [True], lines
    return lines[-1]


def field(tree, name):
    return read(os.path.join(tree.sys, "block", "dm-3", "hottier",
                             name)).strip()


def set_fields(tree, **fields):
    for f, v in fields.items():
        write(os.path.join(tree.sys, "block", "dm-3", "hottier", f),
              f"{v}\n")


def test_every_message_has_its_verb():
    verbs_ = {"scrub", "ssd-reset", "invalidate", "reset-stats", "promote",
              "demote"}
    choices = cli.parser()._subparsers._group_actions[0].choices
    assert verbs_ <= set(choices)
    page = read(os.path.join(REPO, "userspace", "hottierctl.8"))
    for verb in verbs_:
        assert re.search(r"^\.TP\n\.BR? .*\b" +
                         verb.replace("-", r"\\-") + r"\b",
                         page[page.index(".SH COMMANDS"):], re.M), verb


# scrub


class Clock:
    """time for verbs: sleep() advances monotonic() and runs the next
    step of a scrub, the sysfs values it reaches."""

    def __init__(self, tree, steps, seconds=1.0):
        self.tree, self.steps, self.seconds = tree, list(steps), seconds
        self.now, self.sleeps = 100.0, 0

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        assert seconds == verbs.POLL_SECONDS
        self.sleeps += 1
        self.now += self.seconds
        step = self.steps.pop(0)
        if isinstance(step, BaseException):
            raise step
        set_fields(self.tree, **step)


def scrubbing(tree, monkeypatch, steps, seconds=1.0):
    """The scrub message sets the scrub running from slot 0; each sleep
    of hottierctl's takes it to the next step."""
    tree.set_effects("tiered", "scrub", scrub="running", scrub_slots=0,
                     scrub_checked=0, scrub_mismatches=0)
    clock = Clock(tree, steps, seconds)
    monkeypatch.setattr(verbs, "time", types.SimpleNamespace(
        monotonic=clock.monotonic, sleep=clock.sleep))
    return clock


DONE = dict(scrub="done", scrub_slots=512, scrub_checked=120)


def test_scrub_follows_the_progress_then_prints_the_result(
        tree, monkeypatch, capsys):
    clock = scrubbing(tree, monkeypatch, [
        dict(scrub_slots=100, scrub_checked=30),
        dict(scrub_slots=300, scrub_checked=70), DONE], seconds=3)
    rc, out = tree.run("scrub", "tiered")
    assert rc == 0 and tree.messages() == ["scrub"]
    assert out == ("tiered: scrub done after 512 of 512 slots: 120 "
                   "replicas checked, 0 mismatches\n")
    # Not a terminal: a line at once, then one every 5 s (polls 3 s
    # apart here: at 0 s and 6 s).
    assert capsys.readouterr().err.splitlines() == [
        "scrub of tiered: 0 of 512 slots (0%), 0 replicas checked, 0 "
        "mismatches",
        "scrub of tiered: 300 of 512 slots (58%), 70 replicas checked, 0 "
        "mismatches"]
    assert clock.sleeps == 3


def test_scrub_json(tree, monkeypatch):
    scrubbing(tree, monkeypatch, [DONE], seconds=2)
    rc, out = tree.run("scrub", "tiered", "--json")
    assert rc == 0
    assert json.loads(out) == {
        "name": "tiered", "state": "done", "complete": True,
        "checked": 120, "mismatches": 0, "slots": 512, "slots_total": 512,
        "seconds": 2.0}


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_scrub_on_a_terminal_redraws_one_line_and_clears_it(
        tree, monkeypatch):
    scrubbing(tree, monkeypatch, [dict(scrub_slots=256, scrub_checked=60),
                                  DONE])
    term = Terminal()
    monkeypatch.setattr(verbs.sys, "stderr", term)
    rc, out = tree.run("scrub", "tiered")
    assert rc == 0 and out.startswith("tiered: scrub done")
    assert term.getvalue() == (
        "\r\x1b[Kscrub of tiered: 0 of 512 slots (0%), 0 replicas checked, "
        "0 mismatches"
        "\r\x1b[Kscrub of tiered: 256 of 512 slots (50%), 60 replicas "
        "checked, 0 mismatches"
        "\r\x1b[K")


def test_scrub_that_found_mismatches_exits_3(tree, monkeypatch, capsys):
    scrubbing(tree, monkeypatch, [dict(DONE, scrub_mismatches=2)])
    rc, out = tree.run("scrub", "tiered")
    assert rc == verbs.MISMATCHES == 3
    assert out == ("tiered: scrub done after 512 of 512 slots: 120 "
                   "replicas checked, 2 mismatches (dropped; dmesg names "
                   "their extents)\n")
    assert scrub_error(capsys) == ("hottierctl: tiered: 2 replicas "
                                      "differed from the HDD and were "
                                      "dropped")


@pytest.mark.parametrize("state,why", [
    ("stopped", "the device was suspended"),
    ("busy", "writes never left a replica alone"),
    ("error", "a read failed; dmesg says which")])
def test_scrub_that_did_not_complete_exits_4_and_says_why(
        tree, monkeypatch, capsys, state, why):
    scrubbing(tree, monkeypatch, [dict(scrub=state, scrub_slots=200,
                                       scrub_checked=50)])
    rc, out = tree.run("scrub", "tiered", "--json")
    assert rc == verbs.INCOMPLETE == 4
    record = json.loads(out)
    assert (record["state"], record["complete"], record["slots"],
            record["checked"]) == (state, False, 200, 50)
    assert scrub_error(capsys) == (f"hottierctl: tiered: the scrub did "
                                      f"not complete ({state}: {why})")


def test_scrub_under_a_reload_ends_with_the_table(tree, monkeypatch,
                                                  capsys):
    """A reload's new table has no scrub: its state is idle."""
    scrubbing(tree, monkeypatch, [dict(scrub="idle", scrub_slots=0)])
    rc, out = tree.run("scrub", "tiered")
    assert rc == 4
    assert out.startswith("tiered: scrub ended after 0 of 512 slots")
    assert out.endswith("(the device was reloaded: its new table has no "
                        "scrub)\n")
    assert "did not complete (idle" in scrub_error(capsys)


def test_scrub_already_running_is_one_line(tree, capsys):
    tree.set_dmsetup(fail={"scrub": BUSY + "Device or resource busy"})
    rc, out = tree.run("scrub", "tiered")
    assert (rc, out) == (1, "")
    assert one_line_error(capsys) == (
        "hottierctl: tiered: a scrub is already running (-EBUSY): wait for "
        "its end (hottierctl status tiered --json shows scrub and "
        "scrub_slots)")


def test_scrub_no_wait_only_starts_it(tree, monkeypatch, capsys):
    clock = scrubbing(tree, monkeypatch, [])
    rc, out = tree.run("scrub", "tiered", "--no-wait")
    assert rc == 0 and clock.sleeps == 0 and tree.messages() == ["scrub"]
    assert out == ("tiered: scrub started (512 slots to go through); "
                   "hottierctl status tiered --json shows scrub_slots\n")
    assert capsys.readouterr().err == ""
    rc, out = tree.run("scrub", "tiered", "--no-wait", "--json")
    assert json.loads(out) == {"name": "tiered", "started": True,
                               "state": "running", "slots_total": 512}


def test_ctrl_c_stops_following_not_the_scrub(tree, monkeypatch, capsys):
    scrubbing(tree, monkeypatch, [KeyboardInterrupt()])
    rc, out = tree.run("scrub", "tiered")
    assert (rc, out) == (130, "")
    err = capsys.readouterr().err.splitlines()
    assert err[-1] == ("hottierctl: tiered: no longer followed; the scrub "
                       "goes on in the kernel")
    assert tree.messages() == ["scrub"]


def test_scrub_of_a_suspended_device_reads_dmsetup_status(tmp_path):
    t = Tree(tmp_path)
    t.block("sdb", "8:16")
    t.block("nvme0n1", "259:0")
    t.hottier("tiered", suspended=True, stats=DONE)
    rc, out = t.run("scrub", "tiered")
    assert rc == 0 and out.startswith("tiered: scrub done after 512 of 512")
    assert ["status", "tiered"] in t.dmsetup_log()


# ssd-reset, invalidate, reset-stats


def test_ssd_reset_leaves_degraded_mode(tree):
    set_fields(tree, mode="degraded", ssd_errors=9)
    tree.set_effects("tiered", "ssd_reset", mode="rw", ssd_errors=0,
                     slots_used=0)
    rc, out = tree.run("ssd-reset", "tiered")
    assert rc == 0 and tree.messages() == ["ssd_reset"]
    assert out == ("tiered: SSD reset: mode rw (was degraded), 9 SSD "
                   "errors forgotten\n"
                   "tiered: every replica dropped: SSD slots used 120 -> 0; "
                   "the 4 pinned extents are copied again\n")
    set_fields(tree, mode="degraded", ssd_errors=9, slots_used=120)
    rc, out = tree.run("ssd-reset", "tiered", "--json")
    assert json.loads(out) == {
        "name": "tiered", "message": "ssd_reset", "mode_before": "degraded",
        "mode": "rw", "ssd_errors_before": 9, "slots_used_before": 120,
        "slots_used": 0, "pinned": 4}


def test_ssd_reset_refused_with_eio_is_one_line(tree, capsys):
    set_fields(tree, mode="degraded")
    tree.set_dmsetup(fail={"ssd_reset": BUSY + "Input/output error"})
    rc, out = tree.run("ssd-reset", "tiered")
    assert (rc, out) == (1, "")
    assert one_line_error(capsys) == (
        "hottierctl: tiered: ssd_reset refused (-EIO): the SSD's map cannot "
        "be invalidated (the SSD refuses writes; see dmesg); the mode stays "
        "degraded, try again once the SSD takes writes")
    assert field(tree, "mode") == "degraded"


def test_invalidate_drops_every_replica(tree):
    tree.set_effects("tiered", "invalidate", slots_used=0)
    rc, out = tree.run("invalidate", "tiered")
    assert rc == 0 and tree.messages() == ["invalidate"]
    assert out == ("tiered: every replica dropped: SSD slots used 120 -> 0; "
                   "the 4 pinned extents are copied again\n")
    set_fields(tree, slots_used=7, pinned=0)
    rc, out = tree.run("invalidate", "tiered", "--json")
    assert json.loads(out) == {"name": "tiered", "message": "invalidate",
                               "slots_used_before": 7, "slots_used": 0,
                               "pinned": 0}
    set_fields(tree, slots_used=7)
    assert tree.run("invalidate", "tiered")[1] == \
        "tiered: every replica dropped: SSD slots used 7 -> 0\n"


def test_invalidate_refused_with_eio_is_one_line(tree, capsys):
    tree.set_dmsetup(fail={"invalidate": BUSY + "Input/output error"})
    assert tree.run("invalidate", "tiered")[0] == 1
    assert one_line_error(capsys) == (
        "hottierctl: tiered: invalidate refused (-EIO): the SSD's map "
        "cannot be invalidated (the SSD refuses writes; see dmesg)")


def test_reset_stats(tree):
    tree.set_effects("tiered", "reset_stats", reads=0, read_hits=0)
    rc, out = tree.run("reset-stats", "tiered")
    assert (rc, out) == (0, "tiered: status counters set to zero\n")
    assert tree.messages() == ["reset_stats"]
    assert field(tree, "read_hits") == "0"
    rc, out = tree.run("reset-stats", "tiered", "--json")
    assert json.loads(out) == {"name": "tiered", "message": "reset_stats"}


def test_other_refusals_name_the_message_and_the_errno(tree, capsys):
    tree.set_dmsetup(fail={"reset_stats": BUSY + "Invalid argument"})
    assert tree.run("reset-stats", "tiered")[0] == 1
    assert one_line_error(capsys) == (
        "hottierctl: tiered: 'reset_stats' refused by the kernel (-EINVAL: "
        "Invalid argument; see dmesg)")
    tree.set_dmsetup(fail={"reset_stats": "something odd"})
    assert tree.run("reset-stats", "tiered")[0] == 1
    assert one_line_error(capsys) == (
        "hottierctl: tiered: reset_stats: dmsetup message failed: "
        "something odd")


@pytest.mark.parametrize("verb", ["scrub", "ssd-reset", "invalidate",
                                  "reset-stats", "promote", "demote"])
def test_a_missing_or_foreign_device_is_refused(tree, capsys, verb):
    extra = ["--range", "0+8"] if verb in ("promote", "demote") else []
    assert tree.run(verb, "nonesuch", *extra)[0] == 1
    assert one_line_error(capsys) == "hottierctl: no device named 'nonesuch'"
    assert tree.messages() == []


# promote and demote


@pytest.mark.parametrize("text,sectors", [
    ("2048+2048", (2048, 2048)), ("1G+64M", (2097152, 131072)),
    ("0+1", (0, 1)), ("8s+4K", (8, 8)), (" 16 + 32 ", (16, 32))])
def test_ranges_take_sectors_and_sizes(text, sectors):
    assert verbs.parse_range(text) == sectors


def test_promote_ranges(tree):
    rc, out = tree.run("promote", "tiered", "--range", "0+1", "--range",
                       "4M+1M")
    assert rc == 0
    assert tree.messages() == ["promote 0 1", "promote 8192 2048"]
    assert out == ("tiered: 2 extents (1.0 MiB) in 2 ranges queued for "
                   "promotion: copied as the policy admits them "
                   "(hottierctl status shows the slots used)\n")
    rc, out = tree.run("promote", "tiered", "--range", "1M+2M", "--json")
    assert json.loads(out) == {
        "name": "tiered", "message": "promote", "extents": 2,
        "ranges": [{"start_sector": 2048, "nr_sectors": 4096}]}


def test_demote_ranges_say_what_the_slots_became(tree):
    tree.set_effects("tiered", "demote 0 4096", slots_used=118)
    rc, out = tree.run("demote", "tiered", "--range", "0+2M")
    assert rc == 0 and tree.messages() == ["demote 0 4096"]
    assert out == ("tiered: 2 extents (2 MiB) in 1 range demoted: SSD "
                   "slots used 120 -> 118 (pinned extents keep their "
                   "replicas)\n")
    set_fields(tree, slots_used=120)
    rc, out = tree.run("demote", "tiered", "--range", "0+2M", "--json")
    assert json.loads(out) == {
        "name": "tiered", "message": "demote", "extents": 2,
        "ranges": [{"start_sector": 0, "nr_sectors": 4096}],
        "slots_used_before": 120, "slots_used": 118}


@pytest.mark.parametrize("verb", ["promote", "demote"])
@pytest.mark.parametrize("text,error", [
    ("5+0", "bad range '5+0': no sectors"),
    ("5", "bad range '5': expected START+LEN"),
    ("8+-1", "bad range '8+-1': expected START+LEN"),
    ("1T+8", "bad range '1T+8'"),
    ("1.5M+8", "bad range '1.5M+8'"),
    ("8+8+8", "bad range '8+8+8'")])
def test_malformed_ranges_are_usage_errors(tree, capsys, verb, text, error):
    assert tree.run(verb, "tiered", "--range", text)[0] == 2
    assert f"hottierctl: argument --range: {error}" in one_line_error(capsys)
    assert tree.dmsetup_log() == []


@pytest.mark.parametrize("verb", ["promote", "demote"])
def test_a_range_past_the_end_is_refused_before_anything_is_sent(
        tree, capsys, verb):
    rc, _ = tree.run(verb, "tiered", "--range", "0+8", "--range",
                     "2097150+4")
    assert rc == 1
    assert one_line_error(capsys) == (
        "hottierctl: range 2097150+4 goes past the end of tiered (2097152 "
        "sectors)")
    assert tree.messages() == []
    assert tree.run(verb, "tiered", "--range", "2097151+1")[0] == 0


def test_a_promote_of_more_extents_than_slots_is_refused(tree, capsys):
    # 512 slots of 1 MiB extents: 513 extents are too many for a promote.
    assert tree.run("promote", "tiered", "--range", "0+513M")[0] == 1
    assert one_line_error(capsys) == (
        "hottierctl: range 0+1050624 covers 513 extents, more than the 512 "
        "slots of tiered's SSD")
    assert tree.messages() == []
    assert tree.run("promote", "tiered", "--range", "0+512M")[0] == 0
    assert tree.run("demote", "tiered", "--range", "0+513M")[0] == 0


@pytest.mark.parametrize("argv", [
    ["promote", "tiered"],                               # neither
    ["promote", "tiered", "/srv/f", "--range", "0+8"],    # both
    ["demote", "tiered", "--range"]])
def test_ranges_or_files_not_both(tree, capsys, argv):
    assert tree.run(*argv)[0] == 2
    one_line_error(capsys)
    assert tree.dmsetup_log() == []


def test_a_refusal_says_how_many_ranges_went_before(tree, capsys):
    tree.set_dmsetup(fail={"promote 8192 2048": BUSY + "No space left on "
                           "device"})
    assert tree.run("promote", "tiered", "--range", "0+8", "--range",
                    "4M+1M")[0] == 1
    assert one_line_error(capsys) == (
        "hottierctl: tiered: promote 8192 2048 refused (-ENOSPC): more "
        "extents than the SSD has slots (1 of 2 ranges sent before it)")
    tree.set_dmsetup(fail={"demote 0 8": BUSY + "Input/output error"})
    assert tree.run("demote", "tiered", "--range", "0+8")[0] == 1
    assert one_line_error(capsys) == (
        "hottierctl: tiered: demote 0 8 refused (-EIO): the SSD's map "
        "cannot be invalidated (the SSD refuses writes; see dmesg)")


@pytest.fixture
def files(tmp_path, monkeypatch):
    """tiered holds (per the fake mountinfo) an ext4 with a.bin, whose
    extents FIEMAP reports at 1 MiB and 3.5 MiB, b.bin at 5 MiB (next to
    a's) and empty, with none."""
    t = Tree(tmp_path)
    paths = {}
    for name in ("a.bin", "b.bin", "empty"):
        paths[name] = str(tmp_path / name)
        write(paths[name], "x" * 8192 if name != "empty" else "")
    st = os.stat(paths["a.bin"])
    devnum = f"{os.major(st.st_dev)}:{os.minor(st.st_dev)}"
    t.block("sdb", "8:16")
    t.block("nvme0n1", "259:0")
    t.hottier("tiered", devnum=devnum)
    t.mount(devnum, "/mnt", "ext4")
    t.paths = paths
    extents = {"a.bin": [(0, MIB, 4096, 0),
                         (4096, 3 * MIB + MIB // 2, MIB, fiemap.EXTENT_LAST)],
               "b.bin": [(0, 5 * MIB, 4096, fiemap.EXTENT_LAST)],
               "empty": []}
    monkeypatch.setattr(fiemap, "fiemap",
                        lambda p: extents[os.path.basename(p)])
    return t


def test_promote_and_demote_files(files):
    a, b = files.paths["a.bin"], files.paths["b.bin"]
    rc, out = files.run("promote", "tiered", a)
    assert rc == 0
    assert files.messages() == ["promote 2048 2048", "promote 6144 4096"]
    assert out.startswith("tiered: 3 extents (3 MiB) in 2 ranges queued")
    rc, out = files.run("demote", "tiered", a, b, "--json")
    assert rc == 0
    # b's extent (5 MiB) joins a's last range (3 to 5 MiB).
    assert files.messages()[2:] == ["demote 2048 2048", "demote 6144 6144"]
    record = json.loads(out)
    assert (record["paths"], record["extents"]) == ([a, b], 4)
    assert record["ranges"][1] == {"start_sector": 6144, "nr_sectors": 6144}


def test_a_file_without_data_is_refused(files, capsys):
    empty = files.paths["empty"]
    assert files.run("promote", "tiered", empty)[0] == 1
    assert one_line_error(capsys) == (
        f"hottierctl: {empty}: no data with a place of its own on tiered "
        "(empty, or inline in the inode)")
    assert files.messages() == []


def test_a_file_elsewhere_is_refused_before_anything_is_sent(files, capsys,
                                                             tmp_path):
    a = files.paths["a.bin"]
    assert files.run("demote", "tiered", a, str(tmp_path))[0] == 1
    assert one_line_error(capsys) == \
        f"hottierctl: {tmp_path}: not a regular file"
    assert files.messages() == []


def test_covered_counts_each_extent_once():
    assert verbs.covered([], 2048) == 0
    assert verbs.covered([(0, 1), (2047, 2)], 2048) == 2
    assert verbs.covered([(0, 4096), (2048, 8192), (20480, 1)], 2048) == 6
