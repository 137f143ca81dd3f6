"""/sys/block/dm-N/hottier/: a file per table key and per status field,
owned by the live table; the heat and top messages."""

import errno
import mmap
import os
import subprocess
import threading
import time

import pytest

import devices
import hotio
from conftest import INFO_FIELDS, KernelLog, hottier_table, info, unique

pytestmark = pytest.mark.kernel

KEYS = ["discard", "write_policy", "promote_threshold",
        "sequential_cutoff_kb", "heat_halflife_ms", "max_migrations",
        "migration_mbps", "max_tracked", "routing", "migration_budget_us",
        "ssd_error_threshold", "map_verify"]
# Fields that move by themselves (latency estimates) are not compared.
STABLE = [f for f in INFO_FIELDS
          if f not in ("ssd_latency_us", "hdd_latency_us")]


def sysdir(dev):
    return f"/sys/block/{devices.kname(dev.path)}/hottier"


def read(dev, name):
    with open(os.path.join(sysdir(dev), name)) as f:
        return f.read()


def write(dev, name, value):
    # No O_CREAT: while the directory is being added or removed, a creating
    # open of a missing file fails with EACCES (kernfs directories have no
    # create), where a plain open fails with ENOENT.
    fd = os.open(os.path.join(sysdir(dev), name), os.O_WRONLY | os.O_TRUNC)
    with os.fdopen(fd, "w") as f:
        f.write(value)


def table_keys(dev):
    words = dev.table().split()
    n = int(words[6])
    return dict(zip(words[7:7 + n:2], words[8:8 + n:2]))


def test_every_key_and_field_has_a_file_matching_table_and_status(hottier):
    names = set(os.listdir(sysdir(hottier)))
    assert names == set(KEYS) | set(INFO_FIELDS) | {"extent_sectors"}
    keys = table_keys(hottier)
    for k in KEYS:
        assert read(hottier, k) == keys[k] + "\n", k
    assert read(hottier, "extent_sectors") == "2048\n"
    i = info(hottier)                   # no I/O meanwhile: equal values
    for f in STABLE:
        assert read(hottier, f) == f"{i[f]}\n", f
    assert read(hottier, "mode") == "rw\n"


def test_good_values_are_taken_and_bad_ones_refused(hottier):
    write(hottier, "promote_threshold", "9\n")
    write(hottier, "routing", "ssd")
    keys = table_keys(hottier)
    assert (keys["promote_threshold"], keys["routing"]) == ("9", "ssd")
    assert read(hottier, "promote_threshold") == "9\n"
    for name, value in (("promote_threshold", "0"), ("routing", "fastest"),
                        ("max_migrations", "65"), ("write_policy", "\n"),
                        ("migration_budget_us", "1" * 40)):
        before = read(hottier, name)
        with pytest.raises(OSError) as e:
            write(hottier, name, value)
        assert e.value.errno == errno.EINVAL, (name, value)
        assert read(hottier, name) == before, name
    # max_tracked sizes memory, discard decides whether the device offers
    # discard, map_verify is used at activation: a table reload only,
    # read-only files.
    for name, value in (("max_tracked", "4096"), ("discard", "ignore"),
                        ("map_verify", "8")):
        with pytest.raises(OSError) as e:
            write(hottier, name, value)
        assert e.value.errno in (errno.EPERM, errno.EACCES), name
        assert os.stat(os.path.join(sysdir(hottier), name)).st_mode \
            & 0o222 == 0, name
    # Statistics are read-only, even for root.
    with pytest.raises(OSError) as e:
        write(hottier, "read_hits", "0")
    assert e.value.errno in (errno.EPERM, errno.EACCES)
    assert table_keys(hottier)["promote_threshold"] == "9"


def test_every_refused_value_logs_one_line(hottier):
    """A refused sysfs value, whatever its length, is logged once with the
    file's name, as a refused message is; a long one is cut in the log."""
    for name, value in (("max_migrations", "9" * 40),
                        ("max_migrations", "x" * 4000),
                        ("routing", "fastest"), ("promote_threshold", "0")):
        before = read(hottier, name)
        log = KernelLog()
        # One write(2): a buffered file writes again as it closes.
        fd = os.open(os.path.join(sysdir(hottier), name), os.O_WRONLY)
        try:
            with pytest.raises(OSError) as e:
                os.write(fd, value.encode())
        finally:
            os.close(fd)
        assert e.value.errno == errno.EINVAL, (name, value[:20])
        lines = [ln for ln in log.new().splitlines() if f"sysfs {name} " in ln]
        assert len(lines) == 1, (name, value[:20], lines)
        assert len(lines[0]) < 200, lines[0]
        assert read(hottier, name) == before, name


def test_blanks_around_a_value_are_trimmed_as_the_message_path_does(hottier):
    """Leading and trailing blanks, tabs and the newline echo adds: taken
    as the message path takes the same value. Numbers are decimal; a
    leading + or zeros are taken and printed without (docs, Table)."""
    for value, want in ((" 8", "8"), ("\t7\n", "7"), ("  6  \n", "6"),
                        ("+5", "5"), ("0004", "4")):
        write(hottier, "max_migrations", value)
        assert read(hottier, "max_migrations") == want + "\n", repr(value)
        assert table_keys(hottier)["max_migrations"] == want, repr(value)
    write(hottier, "routing", " ssd\n")
    assert table_keys(hottier)["routing"] == "ssd"
    hottier.message("max_migrations", "+3")
    assert read(hottier, "max_migrations") == "3\n"


@pytest.mark.debug
def test_directory_follows_the_live_table_across_suspend_and_reload(pair):
    h, s = pair
    line = hottier_table(h.path, s.path)
    with devices.DmDevice(unique("ht"), line) as d:
        path = sysdir(d)
        assert os.path.isdir(path)
        d.suspend()
        assert not os.path.exists(path)
        d.resume()
        assert read(d, "promote_threshold") == "4\n"
        # A reload under I/O: the new table's values, the directory back.
        fio = subprocess.Popen(
            ["fio", "--name=r", f"--filename={d.path}", "--rw=randrw",
             "--bs=4k", "--direct=1", "--ioengine=libaio", "--iodepth=8",
             "--size=64M", "--time_based", "--runtime=6"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        # Stores race the directory's removal and return: a store never
        # waits on anything held across a suspend.
        stop = threading.Event()
        stores = []

        def writer():
            while not stop.is_set():
                try:
                    write(d, "max_migrations", "3")
                    stores.append(0)
                except OSError as e:
                    # The directory going or gone: ENOENT at lookup, or
                    # ENODEV from a file removed after its lookup.
                    stores.append(e.errno)

        t = threading.Thread(target=writer)
        t.start()
        try:
            time.sleep(1)
            for threshold in (7, 5, 3):
                d.reload(hottier_table(h.path, s.path, opts=(
                    "promote_threshold", str(threshold))))
                assert read(d, "promote_threshold") == f"{threshold}\n"
        finally:
            stop.set()
            t.join(timeout=30)
            _, err = fio.communicate(timeout=60)
        assert not t.is_alive()
        assert fio.returncode == 0, err
        assert stores.count(0) > 0, stores[:20]
        assert set(stores) <= {0, errno.ENOENT, errno.ENODEV}, set(stores)
        assert os.path.isdir(path)
    assert not os.path.exists(path)


def test_heat_and_top_messages(hottier_module):
    extent = 256
    with devices.fast(unique("hdd"), 64) as h, \
            devices.fast(unique("ssd"), 32) as s, \
            devices.DmDevice(unique("ht"), hottier_table(
                h.path, s.path, extent, opts=(
                    "promote_threshold", "1000000"))) as d:
        # 4 KiB reads per extent; more than udev's probes give extent 0.
        reads = {10: 200, 20: 100, 30: 3}
        buf = mmap.mmap(-1, 4096)
        fd = os.open(d.path, os.O_RDONLY | os.O_DIRECT)
        try:
            for e, n in reads.items():
                for k in range(n):
                    # 4 KiB blocks out of order: not a sequential stream
                    sector = e * extent + (8 * 15 * k) % extent
                    os.preadv(fd, [buf], sector * 512)
        finally:
            os.close(fd)
        bands = {}
        for line in d.message("heat").stdout.split("\n"):
            if line.strip():
                rng, count = line.split()
                bands[rng] = int(count)
        assert len(bands) == 16, bands
        # 200 reads: band 128-255; 100: 64-127; 3: 2-3 (udev's probes
        # heat other extents).
        assert bands["128-255"] >= 1 and bands["64-127"] >= 1, bands
        assert bands["2-3"] >= 1, bands
        assert sum(bands.values()) == info(d)["tracked"], bands
        # A pin raises the extent's heat to the promotion threshold. Its
        # copy starts: the views show an extent in flight once it landed.
        d.message("pin", str(10 * extent), str(extent))
        hotio.wait_until(lambda: info(d)["migrations"] == 0, 30,
                         what="the pin's copy")
        top = [line.split() for line in
               d.message("top", "2").stdout.split("\n") if line.strip()]
        assert top[0][0] == str(10 * extent), top
        assert int(top[0][1]) >= 128 and top[0][3] == "pinned", top
        assert top[1][0] == str(20 * extent) and top[1][3] == "-", top
        assert len(top) == 2
        with pytest.raises(subprocess.CalledProcessError):
            d.message("top", "0")
        with pytest.raises(subprocess.CalledProcessError):
            d.message("top", "1001")
