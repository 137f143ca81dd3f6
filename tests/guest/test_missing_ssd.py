"""An SSD missing at boot (Documentation/hottier.rst, "An SSD missing at
boot"): a table whose SSD is "-" runs on the HDD alone, degraded, with a
log line and a dm event; a reload over the SSD attaches it, taking its
map over with the replicas if the HDD was not written meanwhile, else
with the pins alone. hottierctl activate makes such a device when the
hottiertab's SSD is absent, and hottierctl attach gives the SSD back."""

import hashlib
import json
import os
import subprocess
import tempfile

import pytest

import devices
import hotio
from conftest import KernelLog, hottier_table, info, scrub, settled, unique

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
HOTTIERCTL = os.path.join(REPO, "userspace", "hottierctl")
EXTENT = 128                    # 64 KiB
HDD_ID = "wwn-0x5000c500a1b2c3d4"
PINNED = 64                     # extents: 4 MiB
PROMOTED = 32                   # extents after them


def table(hdd, ssd, *extra):
    return hottier_table(hdd, ssd, EXTENT,
                         opts=("promote_threshold", "1000000", *extra,
                               "hdd_id", HDD_ID))


def digest(path, mb):
    """The first mb MiB of path, read with O_DIRECT."""
    out = subprocess.run(["dd", f"if={path}", "bs=1M", f"count={mb}",
                          "iflag=direct", "status=none"],
                         check=True, capture_output=True).stdout
    assert len(out) == mb << 20
    return hashlib.sha256(out).hexdigest()


def devnum(path):
    st = os.stat(path)
    return f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"


def fill(path, mb, seed, offset_mb=0):
    subprocess.run(["fio", "--name=fill", f"--filename={path}",
                    "--rw=write", "--bs=1m", f"--size={mb}m",
                    f"--offset={offset_mb}m", "--direct=1",
                    "--ioengine=psync", f"--randseed={seed}",
                    "--refill_buffers", "--output-format=terse"],
                   check=True, capture_output=True)


def dm_events(name):
    return int(devices.run("dmsetup", "info", "-c", "--noheadings", "-o",
                           "events", name).stdout)


def refused(d, *words):
    r = subprocess.run(["dmsetup", "message", d.name, "0", *words],
                       capture_output=True, text=True)
    assert r.returncode != 0, f"message {words} was accepted"


def warm_map(h, s):
    """A clean map on s: PINNED extents pinned, PROMOTED promoted, then a
    remove. Returns the status before the remove."""
    with devices.DmDevice(unique("ht"), table(h.path, s.path)) as d:
        d.message("pin", "0", str(PINNED * EXTENT))
        d.message("promote", str(PINNED * EXTENT), str(PROMOTED * EXTENT))
        return settled(d, PINNED + PROMOTED)


def test_a_device_with_no_ssd_serves_the_hdd_and_refuses_ssd_messages(
        hottier_module):
    with devices.fast(unique("hdd"), 64) as h:
        fill(h.path, 64, 1)
        log = KernelLog()
        with devices.DmDevice(unique("ht"), table(h.path, "-")) as d:
            c = info(d)
            assert (c["mode"], c["slots_used"], c["slots_total"],
                    c["map"]) == ("no_ssd", 0, 0, "off"), c
            # The table line says "-" for the SSD, and keeps hdd_id for
            # the reload that attaches it.
            words = d.table().split()
            assert words[3:6] == [devnum(h.path), "-", str(EXTENT)], words
            assert d.table().endswith(f" hdd_id {HDD_ID}")
            hotio.wait_until(lambda: dm_events(d.name) >= 1, 10,
                             what="a dm event")
            assert "no SSD: degraded" in log.new(), log.new()
            # Every read is the HDD's; reads heat nothing and copy nothing.
            assert digest(d.path, 64) == digest(h.path, 64)
            for _ in range(3):
                assert digest(d.path, 4) == digest(h.path, 4)
            fill(d.path, 8, 2, offset_mb=8)
            assert digest(d.path, 64) == digest(h.path, 64)
            c = info(d)
            assert c["writes"] > 0 and c["promotions"] == 0, c
            # Nothing reaches for an SSD: refused, and the mode stays.
            for words in (("promote", "0", "128"), ("pin", "0", "128"),
                          ("scrub",), ("ssd_reset",)):
                refused(d, *words)
            assert "the device has no SSD" in log.new()
            for words in (("demote", "0", "128"), ("unpin", "0", "128"),
                          ("invalidate",), ("reset_stats",),
                          ("routing", "ssd")):
                d.message(*words)
            c = info(d)
            assert (c["mode"], c["pinned"], c["slots_used"]) == \
                ("no_ssd", 0, 0), c
            # A flush: the HDD's alone, nothing waits on an SSD.
            fd = os.open(d.path, os.O_RDONLY)
            try:
                os.fsync(fd)
            finally:
                os.close(fd)
    # A table that names no HDD, or gives - to a key needing an SSD.
    with devices.fast(unique("hdd"), 64) as h:
        for line in (hottier_table("-", h.path, EXTENT, length=2048),
                     hottier_table(h.path, "-", EXTENT,
                                   opts=("hdd_id", HDD_ID, "format_ssd",
                                         "yes"))):
            r = subprocess.run(["dmsetup", "create", unique("bad"),
                                "--table", line],
                               capture_output=True, text=True)
            assert r.returncode != 0, line
        devices.settle()


@pytest.mark.debug
def test_attach_keeps_the_replicas_unless_the_hdd_was_written(
        hottier_module):
    """Read-only without the SSD: attached warm, every replica restored.
    Written without it (by a table with no SSD that a second one
    replaced): attached with the pins alone, copied again, and nothing
    read differs from the HDD (routing ssd reads every replica from the
    SSD)."""
    with devices.fast(unique("hdd"), 64) as h, \
            devices.fast(unique("ssd"), 16) as s:
        fill(h.path, 64, 3)
        before = warm_map(h, s)
        used = before["slots_used"]
        with devices.DmDevice(unique("ht"), table(h.path, "-")) as d:
            assert digest(d.path, 16) == digest(h.path, 16)
            d.reload(table(h.path, s.path, "routing", "ssd"))
            c = info(d)
            assert (c["mode"], c["map"], c["map_loaded"], c["map_dropped"],
                    c["slots_used"], c["pinned"]) == \
                ("rw", "open", used, 0, used, PINNED), c
            d.message("reset_stats")
            assert digest(d.path, 6) == digest(h.path, 6)
            c = info(d)
            assert c["read_misses"] == 0 and c["read_hits"] > 0, c
        log = KernelLog()
        with devices.DmDevice(unique("ht"), table(h.path, "-")) as d:
            # New data under pinned and promoted replicas alike; then a
            # reload with no SSD still, which carries that on.
            fill(d.path, 6, 4)
            d.reload(table(h.path, "-", "routing", "ssd"))
            d.reload(table(h.path, s.path, "routing", "ssd"))
            assert "the HDD was written while the SSD was missing" in \
                log.new(), log.new()
            c = info(d)
            assert (c["mode"], c["map_loaded"], c["map_dropped"],
                    c["pinned"]) == ("rw", 0, used, PINNED), c
            c = settled(d, PINNED)
            assert digest(d.path, 64) == digest(h.path, 64)
            c = scrub(d)
            assert c["scrub_mismatches"] == 0 and \
                c["scrub_checked"] == c["slots_used"] >= PINNED, c


def ctl(*args, env=None):
    r = subprocess.run([HOTTIERCTL, *args], capture_output=True, text=True,
                       env=env)
    assert r.returncode == 0, (args, r.stdout, r.stderr)
    return r


def test_hottierctl_activates_without_the_ssd_then_attaches_it(
        hottier_module):
    """A hottiertab whose SSD is absent at activate: the device comes up
    without it and status says why; attach in the same boot takes the
    map over warm. A note from an earlier boot makes attach drop the
    replicas, keeping the pins."""
    with devices.fast(unique("hdd"), 64) as h, \
            devices.fast(unique("ssd"), 16) as s, \
            tempfile.TemporaryDirectory() as tmp:
        env = dict(os.environ, HOTTIER_STATE_DIR=os.path.join(tmp, "state"))
        fill(h.path, 64, 5)
        before = warm_map(h, s)
        link = os.path.join(tmp, "ssd")
        name = unique("ctl")
        tab = os.path.join(tmp, "hottiertab")
        with open(tab, "w") as f:
            f.write(f"{name} {h.path} {link} 64K hdd_id={HDD_ID} "
                    "promote_threshold=1000000\n")
        note = os.path.join(tmp, "state", f"{name}.no-ssd")
        d = devices.DmDevice.__new__(devices.DmDevice)
        d.name, d.path = name, f"/dev/mapper/{name}"
        for earlier_boot in (False, True):
            r = ctl("activate", "--tab", tab, env=env)
            try:
                assert r.stdout == f"{name}: created without its SSD\n"
                assert f"hottierctl attach {name}" in r.stderr
                st = json.loads(ctl("status", name, "--json",
                                    env=env).stdout)
                assert st["mode"] == "no_ssd", st
                with open(note) as f:
                    assert json.load(f)["ssd"] == link
                if earlier_boot:
                    with open(note, "w") as f:
                        json.dump({"boot_id": "", "ssd": link}, f)
                os.symlink(s.path, link)
                rec = json.loads(ctl("attach", name, "--tab", tab,
                                     "--json", env=env).stdout)
                assert not os.path.exists(note)
                want = (0, before["slots_used"]) if earlier_boot else \
                    (before["slots_used"], 0)
                assert (rec["mode"], rec["map"], rec["replicas_restored"],
                        rec["replicas_dropped"], rec["pinned"]) == \
                    ("rw", "open", *want, PINNED), rec
                assert digest(d.path, 64) == digest(h.path, 64)
            finally:
                ctl("remove", name, env=env)
                if os.path.lexists(link):
                    os.unlink(link)
