"""hottierctl trace: blkparse's text counted (recorded samples in data/),
blktrace's piped records split into per-device files, and the command
against a fake blktrace and the real blkparse."""

import io
import json
import os
import shutil
import signal
import struct
import sys
import threading

import pytest

from hottierctl_fakes import HERE, Tree
from hottier import HottierError, trace

import fake_blktrace

DATA = os.path.join(HERE, "data")
FAKE = os.path.join(HERE, "fake_blktrace.py")
DM, HDD, SSD = "254:0", "253:0", "253:1"


def sample(name):
    with open(os.path.join(DATA, f"trace-{name}.blkparse.txt")) as f:
        return f.read().splitlines()


def ns(text):
    """A blkparse time ("7.567668050") in nanoseconds."""
    sec, frac = text.split(".")
    return int(sec) * 1000000000 + int(frac)


def q2c_us(queued, completed):
    """Q2C in microseconds as the report rounds it."""
    return round((ns(completed) - ns(queued)) / 1000, 1)


# Parsing blkparse's text


def test_event_lines_parse_and_others_do_not():
    e = trace.parse_line("253,0    0        1     0.000000000   254  A  RS "
                         "2200 + 8 <- (254,0) 2200")
    assert (e.dev, e.cpu, e.time, e.action, e.rwbs, e.sector, e.nr,
            e.source, e.source_sector) == \
        ("253:0", 0, 0, "A", "RS", 2200, 8, "254:0", 2200)
    e = trace.parse_line("  8,16   1       17     12.000131542   413  C   W "
                         "100 + 16 [0]")
    assert (e.dev, e.time, e.action, e.sector, e.nr, e.source) == \
        ("8:16", 12000131542, "C", 100, 16, None)
    e = trace.parse_line("253,0    0      754     0.734988910   278 UT   N "
                         "[dd] 1")
    assert (e.action, e.rwbs, e.sector) == ("UT", "N", None)
    for line in ("CPU0 (254,0):", " Reads Queued:          4,       16KiB",
                 "Throughput (R/W): 0KiB/s / 0KiB/s", "", "# comment"):
        assert trace.parse_line(line) is None


@pytest.mark.parametrize("rwbs,op", [
    ("R", "read"), ("RS", "read"), ("RA", "read"), ("RM", "read"),
    ("W", "write"), ("WS", "write"), ("WFS", "write"), ("FWFS", "write"),
    ("FWS", "write"), ("FN", None), ("N", None), ("D", None),
    ("DS", None)])
def test_direction_of_rwbs(rwbs, op):
    assert trace.direction(rwbs) == op


def test_percentiles_are_nearest_rank():
    values = list(range(1, 101))
    assert trace.percentile(values, 50) == 50
    assert trace.percentile(values, 99) == 99
    assert trace.percentile([7], 99) == 7
    assert trace.latency_stats([1000, 3000, 2000]) == \
        {"count": 3, "mean_us": 2.0, "p50_us": 2.0, "p99_us": 3.0}
    assert trace.latency_stats([]) is None


# The recorded samples


def test_hdd_sample_tells_the_device_s_reads_from_a_copy():
    r = trace.count_lines(sample("hdd"), HDD, source=DM)
    assert (r["reads"], r["read_sectors"]) == (3, 1040)
    assert (r["writes"], r["write_sectors"]) == (1, 8)
    assert r["from_device"] == {"reads": 2, "read_sectors": 16,
                                "writes": 1, "write_sectors": 8}
    # The copy's read: one bio of 1024 sectors in five requests, counted
    # once, its Q2C to the last of them.
    assert r["own"] == {"reads": 1, "read_sectors": 1024, "writes": 0,
                        "write_sectors": 0}
    lat = sorted(ns(c) - ns(q) for q, c in (
        ("0.000040400", "0.000324680"), ("0.001302680", "0.001323350"),
        ("0.246932360", "0.253496830")))
    q2c = r["q2c"]["read"]
    assert q2c["count"] == 3
    assert q2c["mean_us"] == round(sum(lat) / 3 / 1000, 1)
    assert (q2c["p50_us"], q2c["p99_us"]) == (round(lat[1] / 1000, 1),
                                              round(lat[2] / 1000, 1))
    assert r["q2c"]["write"]["p50_us"] == q2c_us("0.734890190",
                                                 "0.735213750")
    assert r["q2c"]["all"]["count"] == 4
    assert (r["in_flight_at_end"], r["completions_of_earlier_bios"]) == \
        (0, 0)


def test_ssd_sample_counts_copy_and_write_through_writes_as_own():
    r = trace.count_lines(sample("ssd"), SSD, source=DM)
    assert r["from_device"] == {"reads": 2, "read_sectors": 16,
                                "writes": 0, "write_sectors": 0}
    # kcopyd's write of 1024 sectors and the SSD half of a write-through
    # write: neither came with a remap event from the device.
    assert r["own"] == {"reads": 0, "read_sectors": 0, "writes": 2,
                        "write_sectors": 1032}
    assert r["q2c"]["write"]["count"] == 2
    assert r["q2c"]["write"]["p99_us"] == q2c_us("0.225004520",
                                                 "0.231931980")
    assert r["in_flight_at_end"] == 0


def test_device_sample_counts_a_split_bio_once():
    lines = sample("device")
    # Bio-based: dm's one completion of the split 1 MiB read names only
    # its last piece (4088 + 8), and completes the bio.
    r = trace.count_lines(lines, DM, bio_based=True)
    assert (r["reads"], r["read_sectors"]) == (5, 2080)
    assert (r["writes"], r["write_sectors"]) == (4, 32)
    assert "from_device" not in r and "own" not in r
    assert r["q2c"]["read"]["p99_us"] == q2c_us("7.567668050",
                                                "7.571130300")
    assert r["in_flight_at_end"] == 0
    # Read as request completions, the piece leaves the rest in flight.
    r = trace.count_lines(lines, DM, bio_based=False)
    assert (r["reads"], r["in_flight_at_end"]) == (4, 1)


def test_other_devices_lines_are_ignored():
    lines = sample("hdd") + sample("ssd")
    assert trace.count_lines(lines, SSD, source=DM)["reads"] == 2
    assert trace.count_lines(lines, "8:0", source=DM)["reads"] == 0


# Hand-written cases


def line(dev, t, action, rwbs, rest):
    major, minor = dev.split(":")
    return (f"{major},{minor}    0        1     {t:.9f}   100  {action}  "
            f"{rwbs} {rest}")


def test_merged_bios_complete_with_their_request():
    lines = [line(HDD, 0.1, "Q", "W", "100 + 8 [x]"),
             line(HDD, 0.2, "Q", "W", "108 + 8 [x]"),
             line(HDD, 0.2, "M", "W", "108 + 8 [x]"),
             line(HDD, 0.5, "C", "W", "100 + 16 [0]")]
    r = trace.count_lines(lines, HDD, source=DM)
    assert (r["writes"], r["write_sectors"]) == (2, 16)
    assert r["q2c"]["write"]["mean_us"] == 350000.0
    assert r["own"]["writes"] == 2


def test_a_split_bio_completes_with_its_last_request_in_any_order():
    lines = [line(SSD, 1.0, "Q", "R", "0 + 512 [x]"),
             line(SSD, 1.1, "C", "R", "256 + 256 [0]"),
             line(SSD, 1.2, "C", "R", "0 + 128 [0]")]
    r = trace.count_lines(lines, SSD, source=DM)
    assert r["reads"] == 0 and r["in_flight_at_end"] == 1
    r = trace.count_lines(lines + [line(SSD, 1.4, "C", "R", "128 + 128 [0]")],
                          SSD, source=DM)
    assert (r["reads"], r["read_sectors"], r["in_flight_at_end"]) == \
        (1, 512, 0)
    assert r["q2c"]["read"]["mean_us"] == 400000.0


def test_bios_queued_before_or_completed_after_the_window():
    lines = [line(HDD, 0.1, "C", "R", "64 + 8 [0]"),      # queued before
             line(HDD, 0.2, "Q", "R", "72 + 8 [x]")]      # still going
    r = trace.count_lines(lines, HDD, source=DM)
    assert r["reads"] == 0
    assert (r["completions_of_earlier_bios"], r["in_flight_at_end"]) == \
        (1, 1)


def test_flushes_discards_and_messages_are_not_counted():
    lines = [line(HDD, 0.1, "Q", "FWS", "0 + 0 [x]"),
             line(HDD, 0.2, "C", "FWS", "0 + 0 [0]"),
             line(HDD, 0.3, "Q", "D", "0 + 2048 [x]"),
             line(HDD, 0.4, "C", "D", "0 + 2048 [0]"),
             line(HDD, 0.5, "m", "N", "hottier: a message")]
    r = trace.count_lines(lines, HDD, source=DM)
    assert (r["reads"], r["writes"], r["in_flight_at_end"]) == (0, 0, 0)


def test_a_partition_member_follows_the_remap_chain():
    """dm's remap names the partition's sector; the partition's remap
    moves it to the disk, where it is queued."""
    disk = "8:16"
    lines = [line(disk, 0.1, "A", "R", "1000 + 8 <- (254,0) 1000"),
             line(disk, 0.1, "A", "R", "3048 + 8 <- (8,17) 1000"),
             line(disk, 0.1, "Q", "R", "3048 + 8 [x]"),
             line(disk, 0.2, "C", "R", "3048 + 8 [0]"),
             # A copy: only the partition's remap.
             line(disk, 0.3, "A", "R", "5048 + 8 <- (8,17) 3000"),
             line(disk, 0.3, "Q", "R", "5048 + 8 [x]"),
             line(disk, 0.4, "C", "R", "5048 + 8 [0]")]
    r = trace.count_lines(lines, disk, source=DM)
    assert (r["from_device"]["reads"], r["own"]["reads"]) == (1, 1)


def test_read_share():
    hdd = trace.count_lines(sample("hdd"), HDD, source=DM)
    ssd = trace.count_lines(sample("ssd"), SSD, source=DM)
    # The device sent 2 reads of 8 sectors to each member; the HDD's copy
    # read is not the device's.
    assert trace.read_share(hdd, ssd) == {"reads": 0.5, "sectors": 0.5}
    assert trace.read_share(hdd, ssd, classified=False) == \
        {"reads": 2 / 5, "sectors": 16 / 1056}
    none = trace.count_lines([], HDD, source=DM)
    assert trace.read_share(none, none) == {"reads": None, "sectors": None}


# Splitting blktrace's piped records


def records():
    buf = io.BytesIO()
    w = fake_blktrace.Writer(buf)
    w.note(fake_blktrace.dev_t("8:16"), 0, 1)
    w.event(fake_blktrace.dev_t("8:16"), 1, 5, "A", "R", 64, 8, "253:3", 64)
    w.event(fake_blktrace.dev_t("8:16"), 1, 6, "Q", "R", 64, 8)
    w.note(fake_blktrace.dev_t("253:3"), 1, 2)
    w.event(fake_blktrace.dev_t("7:0"), 0, 7, "Q", "R", 0, 8)   # not ours
    return buf.getvalue()


def test_splitter_writes_blktrace_s_files_whatever_the_chunks(tmp_path):
    data = records()
    for size in (1, 7, 48, 1000):
        out = tmp_path / str(size)
        out.mkdir()
        (out / "sdb.blktrace.5").write_bytes(b"stale")
        s = trace.Splitter(str(out), {"8:16": "sdb", "253:3": "dm-3"},
                           ncpus=2)
        assert not s.started()
        for at in range(0, len(data), size):
            s.feed(data[at:at + size])
        s.close()
        assert s.started() and s.records == 5 and s.pending == b""
        files = sorted(os.listdir(out))
        assert files == ["dm-3.blktrace.0", "dm-3.blktrace.1",
                         "sdb.blktrace.0", "sdb.blktrace.1"]
        # The A record carries a 16-byte remap payload.
        assert (out / "sdb.blktrace.1").stat().st_size == 48 + 16 + 48
        assert (out / "sdb.blktrace.0").stat().st_size == 48 + 8
        assert (out / "dm-3.blktrace.1").stat().st_size == 48 + 8


class Terminal(io.StringIO):
    def isatty(self):
        return True


def test_progress_counts_down_in_place_on_a_terminal():
    term, pipe = Terminal(), io.StringIO()
    for err in (term, pipe):
        p = trace.Progress(err)
        p.say("trace: tracing dm-3, sdb, nvme0n1 for 3 s")
        p.shown = 3
        for left in (2.9, 2.5, 1.7, 0.4):
            p.left(left)
        p.say("trace: stopped after 3.0 s")
    assert term.getvalue() == (
        "\r\x1b[Ktrace: tracing dm-3, sdb, nvme0n1 for 3 s\n"
        "\r\x1b[Ktrace: 2 s left\r\x1b[Ktrace: 1 s left"
        "\r\x1b[Ktrace: stopped after 3.0 s\n")
    assert pipe.getvalue() == (
        "trace: tracing dm-3, sdb, nvme0n1 for 3 s\ntrace: 2 s left\n"
        "trace: 1 s left\ntrace: stopped after 3.0 s\n")


def test_splitter_refuses_what_is_not_a_trace(tmp_path):
    s = trace.Splitter(str(tmp_path), {"8:16": "sdb"}, ncpus=1)
    with pytest.raises(HottierError, match="not a trace"):
        s.feed(struct.pack("=I", 0x12345678) + bytes(60))
    s.close()


def test_splitter_says_a_record_of_zeros_is_torn(tmp_path):
    s = trace.Splitter(str(tmp_path), {"8:16": "sdb"}, ncpus=1)
    with pytest.raises(trace.TornTrace,
                       match="torn record \\(zeros at record 5\\)"):
        s.feed(records() + bytes(60))
    s.close()


# The command against fakes


@pytest.fixture
def traced(tmp_path, monkeypatch):
    """The tree's "tiered" (dm-3 over sdb and nvme0n1), debugfs mounted,
    blktrace and iowatcher faked, the real blkparse."""
    t = Tree(tmp_path)
    t.block("sdb", "8:16")
    t.block("nvme0n1", "259:0", sectors=262144)
    for disk in ("sdb", "nvme0n1"):
        os.makedirs(os.path.join(t.dirs[disk], "mq"))
    t.hottier("tiered")
    t.mount("0:7", "/sys/kernel/debug", "debugfs")
    spec = tmp_path / "blktrace.json"
    t.spec = spec
    t.write_spec = lambda **kw: spec.write_text(json.dumps(dict(
        {"devices": {"/dev/dm-3": "253:3", "/dev/sdb": "8:16",
                     "/dev/nvme0n1": "259:0"}}, **kw)))
    t.write_spec()
    fake = f"{sys.executable} {FAKE} {spec}"
    monkeypatch.setenv("HOTTIER_BLKTRACE", fake)
    monkeypatch.setenv("HOTTIER_IOWATCHER", f"{fake} --iowatcher")
    return t


def log(t):
    return json.loads(t.spec.read_text()).get("log", [])


def one_line_error(capsys):
    err = capsys.readouterr().err
    lines = err.strip().split("\n")
    assert lines[-1].startswith("hottierctl: "), err
    return lines[-1]


EVENTS = [
    # dm-3: a read the HDD serves, one the SSD serves, and a write.
    ["/dev/dm-3", 0, 1000, "Q", "R", 4096, 8, None, 0],
    ["/dev/sdb", 0, 1100, "A", "R", 4096, 8, "253:3", 4096],
    ["/dev/sdb", 0, 1200, "Q", "R", 4096, 8, None, 0],
    ["/dev/sdb", 0, 1300, "D", "R", 4096, 8, None, 0],
    ["/dev/sdb", 0, 9200, "C", "R", 4096, 8, None, 0],
    ["/dev/dm-3", 0, 9300, "C", "R", 4096, 8, None, 0],
    ["/dev/dm-3", 1, 20000, "Q", "RS", 64, 8, None, 0],
    ["/dev/nvme0n1", 1, 20100, "A", "RS", 2112, 8, "253:3", 64],
    ["/dev/nvme0n1", 1, 20200, "Q", "RS", 2112, 8, None, 0],
    ["/dev/nvme0n1", 1, 20300, "D", "RS", 2112, 8, None, 0],
    ["/dev/nvme0n1", 1, 22200, "C", "RS", 2112, 8, None, 0],
    ["/dev/dm-3", 1, 22300, "C", "RS", 64, 8, None, 0],
    # A copy: the HDD read and the SSD write no remap brought.
    ["/dev/sdb", 0, 30000, "Q", "R", 8192, 2048, None, 0],
    ["/dev/sdb", 0, 30100, "D", "R", 8192, 2048, None, 0],
    ["/dev/sdb", 0, 90000, "C", "R", 8192, 2048, None, 0],
    ["/dev/nvme0n1", 0, 91000, "Q", "W", 4096, 2048, None, 0],
    ["/dev/nvme0n1", 0, 91100, "D", "W", 4096, 2048, None, 0],
    ["/dev/nvme0n1", 0, 95000, "C", "W", 4096, 2048, None, 0],
]

needs_blkparse = pytest.mark.skipif(shutil.which("blkparse") is None,
                                    reason="blkparse is not installed")


@needs_blkparse
def test_trace_json_from_the_fake_blktrace_and_real_blkparse(traced, capsys,
                                                             tmp_path):
    traced.write_spec(events=EVENTS)
    out = tmp_path / "kept"
    rc, text = traced.run("trace", "tiered", "0.3", "--json",
                          "--output", str(out))
    err = capsys.readouterr().err
    assert rc == 0, err
    rec = json.loads(text)
    assert (rec["name"], rec["kernel_name"], rec["output"]) == \
        ("tiered", "dm-3", str(out))
    assert 0.3 <= rec["seconds"] < 5
    dev, hdd, ssd = rec["device"], rec["hdd"], rec["ssd"]
    assert (dev["reads"], dev["read_sectors"]) == (2, 16)
    assert (hdd["kernel_name"], hdd["devnum"]) == ("sdb", "8:16")
    assert hdd["from_device"]["reads"] == 1
    assert hdd["own"] == {"reads": 1, "read_sectors": 2048, "writes": 0,
                          "write_sectors": 0}
    assert ssd["from_device"]["reads"] == 1
    assert ssd["own"]["writes"] == 1 and ssd["own"]["write_sectors"] == 2048
    assert hdd["q2c"]["read"]["p99_us"] == 60.0       # the copy: 60 us
    assert ssd["q2c"]["read"]["mean_us"] == 2.0
    assert rec["ssd_read_share"] == {"reads": 0.5, "sectors": 0.5}
    assert rec["classified"] and rec["notes"] == []
    assert rec["counters"]["reads"] == 0
    assert rec["counters"]["migrations_at_start"] == 1    # STATS
    # blktrace ran once on the three devices, its records piped.
    (args,) = log(traced)
    assert args == ["-d", "/dev/dm-3", "-d", "/dev/sdb", "-d",
                    "/dev/nvme0n1", "-o", "-"]
    # The raw traces are kept as blktrace -D names them, with blkparse's
    # text.
    kept = set(os.listdir(out))
    assert {"dm-3.blktrace.0", "sdb.blktrace.0", "nvme0n1.blktrace.1",
            "sdb.blkparse.txt"} <= kept, kept
    # Progress went to stderr, a line a second when it is not a terminal.
    assert err.startswith("trace: tracing dm-3, sdb, nvme0n1 for 0.3 s\n")
    assert err.rstrip().endswith("trace: stopped after 0.3 s")


@needs_blkparse
def test_trace_text_and_the_svg(traced, capsys, tmp_path, monkeypatch):
    traced.write_spec(events=EVENTS)
    temp = tmp_path / "temp"
    temp.mkdir()
    monkeypatch.setattr(trace.tempfile, "tempdir", str(temp))
    svg = tmp_path / "g.svg"
    rc, text = traced.run("trace", "tiered", "0.2", "--svg", str(svg))
    assert rc == 0, capsys.readouterr().err
    lines = text.splitlines()
    assert lines[0].startswith("tiered (dm-3): 0.2 s of blktrace on dm-3, "
                               "sdb (HDD) and nvme0n1 (SSD)")
    assert lines[1].split() == ["READS", "SECTORS", "WRITES", "SECTORS"]
    assert lines[3].split() == ["HDD", "sdb", "2", "2056", "0", "0"]
    assert lines[5] == "Q2C latency, microseconds:"
    assert lines[6].split() == ["READ", "MEAN", "P50", "P99", "WRITE",
                                "MEAN", "P50", "P99"]
    # The HDD's reads: 8 us (the device's) and 60 us (the copy's).
    assert lines[8].split() == ["HDD", "sdb", "34", "8.0", "60", "-", "-",
                                "-"]
    assert "SSD share of the member reads the device sent: 50.0% of reads" \
        in text
    assert "  HDD 1 reads (2048 sectors), 0 writes (0 sectors)" in lines
    assert "  SSD 0 reads (0 sectors), 1 writes (2048 sectors)" in lines
    assert "raw traces: removed (--output DIR keeps them)" in lines
    assert f"graph: {svg}" in lines and svg.read_text().startswith("<svg")
    iow = log(traced)[1]
    assert iow[0] == "--iowatcher" and iow.count("-t") == 3
    assert [iow[i + 1] for i, a in enumerate(iow) if a == "-l"] == \
        ["device", "HDD", "SSD"]
    assert os.listdir(temp) == []       # the raw traces went with it


@needs_blkparse
def test_ctrl_c_ends_the_window_early_and_reports(traced, capsys,
                                                  monkeypatch):
    traced.write_spec(events=EVENTS)
    said = trace.Progress.say

    def say(self, text):
        said(self, text)
        if text.startswith("trace: tracing "):
            # The window's handler is set as this returns.
            threading.Timer(0.3, os.kill, (os.getpid(),
                                           signal.SIGINT)).start()
    monkeypatch.setattr(trace.Progress, "say", say)
    before = signal.getsignal(signal.SIGINT)
    rc, text = traced.run("trace", "tiered", "60", "--json")
    assert rc == 0, capsys.readouterr().err
    rec = json.loads(text)
    assert 0.3 <= rec["seconds"] < 10
    assert rec["hdd"]["reads"] == 2
    assert signal.getsignal(signal.SIGINT) is before


def test_a_torn_record_still_stops_blktrace_by_sigint(traced, capsys):
    """A torn record ends the trace with an error. blktrace must still be
    stopped by SIGINT, which tears the kernel's traces down: a SIGKILL left
    them set up, and the test's second trace was refused ("Concurrent
    blktraces are not allowed") and never started."""
    traced.write_spec(events=EVENTS, torn=True)
    rc, _ = traced.run("trace", "tiered", "30", "--json")
    assert rc == 1
    assert "torn record" in one_line_error(capsys)
    assert json.loads(traced.spec.read_text()).get("stops") == ["SIGINT"]


@needs_blkparse
def test_dropped_events_are_said(traced, capsys):
    traced.write_spec(events=EVENTS, dropped=12)
    rc, text = traced.run("trace", "tiered", "0.1", "--json")
    assert rc == 0
    rec = json.loads(text)
    assert rec["dropped_events"] == 12
    assert "dropped 12 events" in rec["notes"][0]


@needs_blkparse
def test_a_partition_member_is_not_split_and_says_why(tmp_path, capsys,
                                                      monkeypatch):
    t = Tree(tmp_path)
    t.block("sdb", "8:16")
    t.partition("sdb", "sdb2", "8:18")
    t.block("nvme0n1", "259:0", sectors=262144)
    t.hottier("tiered", hdd="sdb2")
    t.mount("0:7", "/sys/kernel/debug", "debugfs")
    spec = tmp_path / "blktrace.json"
    events = [[e[0].replace("/dev/sdb", "/dev/sdb2")] + e[1:]
              for e in EVENTS]
    spec.write_text(json.dumps({"devices": {
        "/dev/dm-3": "253:3", "/dev/sdb2": "8:18", "/dev/nvme0n1": "259:0"},
        "events": events}))
    monkeypatch.setenv("HOTTIER_BLKTRACE", f"{sys.executable} {FAKE} {spec}")
    rc, text = t.run("trace", "tiered", "0.1", "--json")
    assert rc == 0, capsys.readouterr().err
    rec = json.loads(text)
    assert rec["classified"] is False
    assert rec["notes"][0].startswith("sdb2 is a partition: ")
    # Every member read counts: the HDD's copy read too.
    assert rec["ssd_read_share"]["reads"] == 1 / 3
    rc, text = t.run("trace", "tiered", "0.1")
    assert "SSD share of all member reads: 33.3% of reads" in text
    assert "target's own I/O" not in text
    assert "note: sdb2 is a partition: " in text


@needs_blkparse
def test_blktrace_ending_early_is_an_error(traced, capsys, tmp_path):
    traced.write_spec(events=EVENTS, die="relay: out of memory")
    temp = tmp_path / "kept"
    assert traced.run("trace", "tiered", "30", "--output", str(temp))[0] == 1
    assert one_line_error(capsys) == \
        "hottierctl: blktrace stopped before the end: relay: out of memory"
    assert "sdb.blktrace.0" in os.listdir(temp)    # what came is kept


@pytest.mark.parametrize("argv,error", [
    (["trace", "nosuch", "1"], "hottierctl: no device named 'nosuch'"),
])
def test_trace_refuses_a_missing_device(traced, capsys, argv, error):
    assert traced.run(*argv)[0] == 1
    assert one_line_error(capsys) == error
    assert log(traced) == []


def test_trace_refuses_a_device_of_another_target(traced, capsys):
    from hottierctl_fakes import write
    lin = traced.block("dm-5", "253:5", virtual=True)
    write(os.path.join(lin, "dm", "name"), "plain\n")
    state = traced.load()
    state["devices"]["plain"] = {"table": "0 8 linear 8:16 0", "status": ""}
    traced.save(state)
    assert traced.run("trace", "plain", "1")[0] == 1
    assert one_line_error(capsys) == \
        "hottierctl: 'plain' is not a hottier device"


@pytest.mark.parametrize("seconds", ["0", "-1", "abc", "nan", "inf", "1e9",
                                     ""])
def test_trace_seconds_must_be_a_positive_number(traced, capsys, seconds):
    assert traced.run("trace", "tiered", seconds)[0] == 2
    err = capsys.readouterr().err
    assert err.startswith("hottierctl: argument SECONDS: ") and \
        "positive number of seconds" in err and err.count("\n") == 1, err
    assert log(traced) == []


def test_trace_without_blktrace_says_what_to_install(traced, capsys,
                                                     monkeypatch):
    monkeypatch.setenv("HOTTIER_BLKTRACE", "no-such-blktrace-here")
    assert traced.run("trace", "tiered", "1")[0] == 1
    assert one_line_error(capsys) == \
        "hottierctl: no-such-blktrace-here not found (install blktrace)"


def test_trace_svg_without_iowatcher_is_refused_first(traced, capsys,
                                                      monkeypatch):
    monkeypatch.setenv("HOTTIER_IOWATCHER", "/nonexistent/iowatcher")
    assert traced.run("trace", "tiered", "1", "--svg", "x.svg")[0] == 1
    assert "iowatcher not found" in one_line_error(capsys)
    assert log(traced) == []


def test_trace_without_debugfs_says_how_to_mount_it(tmp_path, capsys,
                                                    monkeypatch):
    t = Tree(tmp_path)
    t.block("sdb", "8:16")
    t.block("nvme0n1", "259:0")
    t.hottier("tiered")
    monkeypatch.setenv("HOTTIER_BLKTRACE", "/bin/true")
    assert t.run("trace", "tiered", "1")[0] == 1
    assert one_line_error(capsys) == (
        "hottierctl: debugfs is not mounted, and blktrace needs it "
        "(mount -t debugfs none /sys/kernel/debug)")


def test_debugfs_mounted_elsewhere_is_passed_to_blktrace(traced, capsys):
    traced.write_spec(fail="BLKTRACESETUP(2) /dev/sdb failed: 16/Device or "
                           "resource busy")
    with open(os.path.join(traced.proc, "self", "mountinfo"), "w") as f:
        f.write("36 25 0:7 / /debug rw - debugfs debugfs rw\n")
    assert traced.run("trace", "tiered", "1")[0] == 1
    assert one_line_error(capsys) == (
        "hottierctl: blktrace failed: BLKTRACESETUP(2) /dev/sdb failed: "
        "16/Device or resource busy")
    assert log(traced)[0][-2:] == ["-r", "/debug"]


def test_an_output_directory_that_cannot_be_made_is_one_line(traced, capsys,
                                                           tmp_path):
    (tmp_path / "file").write_text("")
    assert traced.run("trace", "tiered", "1", "--output",
                      str(tmp_path / "file" / "dir"))[0] == 1
    assert one_line_error(capsys) == \
        f"hottierctl: {tmp_path}/file/dir: Not a directory"
    assert log(traced) == []


def test_a_member_without_a_device_node_is_named(traced, capsys):
    del traced.blockdevs["/dev/nvme0n1"]
    assert traced.run("trace", "tiered", "1")[0] == 1
    assert one_line_error(capsys) == \
        "hottierctl: no device node for nvme0n1 (259:0) in /dev"
