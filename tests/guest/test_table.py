"""Table lines: creation, refusal, round trip, claims on members, unload."""

import os
import subprocess

import pytest

import devices
from conftest import KernelLog, hottier_table, module_loaded, unique

pytestmark = pytest.mark.kernel


DEFAULT_ARGS = ("24 discard passdown write_policy through promote_threshold 4 "
                "sequential_cutoff_kb 4096 heat_halflife_ms 60000 "
                "max_migrations 4 migration_mbps 0 max_tracked 0 "
                "routing latency migration_budget_us 0 ssd_error_threshold 8 "
                "map_verify 0")


def dm_names():
    out = devices.run("dmsetup", "ls", "--target", "hottier").stdout
    return {line.split()[0] for line in out.splitlines()
            if line and not line.startswith("No devices")}


@pytest.mark.debug_soak
def test_create_and_remove_leaves_nothing(hottier):
    assert hottier.name in dm_names()
    assert hottier.status().split()[2] == "hottier"
    kname = devices.kname(hottier.path)
    slaves = set(os.listdir(f"/sys/block/{kname}/slaves"))
    assert slaves == {hottier.hdd.name, hottier.ssd.name}
    hottier.remove()
    assert hottier.name not in dm_names()
    assert not os.path.exists(hottier.path)


@pytest.mark.debug
def test_table_round_trips_through_create_and_reload(hottier):
    table = hottier.table()
    # The TABLE line reprints every optional key with its current value.
    assert table.endswith("2048 " + DEFAULT_ARGS), table
    hottier.reload(table)
    assert hottier.table() == table
    name = hottier.name
    hottier.remove()
    with devices.DmDevice(name, table) as again:
        assert again.table() == table


def test_non_default_options_round_trip(pair):
    h, s = pair
    line = hottier_table(h.path, s.path, 128, ("discard", "ignore"))
    with devices.DmDevice(unique("ht"), line) as d:
        table = d.table()
        assert table.endswith(
            "128 " + DEFAULT_ARGS.replace("discard passdown", "discard ignore")), table
        name = d.name
        d.remove()
        with devices.DmDevice(name, table) as again:
            assert again.table() == table


def test_zero_optional_args_is_valid(pair):
    h, s = pair
    line = hottier_table(h.path, s.path) + " 0"
    with devices.DmDevice(unique("ht"), line) as d:
        assert d.table().endswith(DEFAULT_ARGS)


def test_runtime_tunables_appear_in_the_table_and_round_trip(hottier):
    for key, value in (("write_policy", "around"), ("promote_threshold", "9"),
                       ("sequential_cutoff_kb", "0"),
                       ("heat_halflife_ms", "1000"), ("max_migrations", "2"),
                       ("migration_mbps", "50"), ("routing", "ssd"),
                       ("migration_budget_us", "20000"),
                       ("ssd_error_threshold", "3")):
        hottier.message(key, value)
        assert f" {key} {value}" in hottier.table()
    table = hottier.table()
    hottier.reload(table)
    assert hottier.table() == table


@pytest.mark.args
@pytest.mark.parametrize("key,value", [
    ("write_policy", "sideways"), ("promote_threshold", "0"),
    ("max_migrations", "65"), ("heat_halflife_ms", "99"),
    ("max_tracked", "4096"), ("discard", "ignore"), ("routing", "fastest"),
    ("ssd_error_threshold", "0"), ("map_verify", "8")])
def test_bad_runtime_tunable_is_refused_and_keeps_the_old_value(hottier, key,
                                                                value):
    before = hottier.table()
    log = KernelLog()
    r = subprocess.run(["dmsetup", "message", hottier.name, "0", key, value],
                       capture_output=True, text=True)
    assert r.returncode != 0
    assert f"{key} {value}" in log.new()
    assert hottier.table() == before


# (table words after "hottier" with {H} {S} for the members, length or None
#  for the HDD's size, the ti->error expected in the kernel log)
BAD_TABLES = [
    ("{H} {S}", None, "Not enough arguments"),
    ("{H}", None, "Not enough arguments"),
    ("{H} {H} 2048", None, "HDD and SSD must be different devices"),
    ("{H} {HDEV} 2048", None, "HDD and SSD must be different devices"),
    ("/dev/nonexistent {S} 2048", None, "Error opening HDD device"),
    ("{H} /dev/nonexistent 2048", None, "Error opening SSD device"),
    ("{H} {S} 1000", None, "Extent size must be a power of two"),
    ("{H} {S} 32", None, "Extent size must be between 64 and 2097152 sectors"),
    ("{H} {S} 4194304", None,
     "Extent size must be between 64 and 2097152 sectors"),
    ("{H} {S} 2k", None, "Invalid extent size: not a number"),
    ("{H} {S} 2048", "HDD+1", "Target length exceeds the HDD's size"),
    # Extents are numbered in 40 bits: 2^40 extents of 64 sectors, and one.
    ("{H} {S} 64", 2**46 + 1, "Device too long: at most 2^40 extents"),
    ("{H} {S} 2097152", 2048,
     "SSD is too small to hold its metadata and one extent"),
    ("{H} {S} 2048 x", None, "Invalid optional argument count"),
    ("{H} {S} 2048 1 discard", None,
     "Optional argument count must be even (key value pairs)"),
    ("{H} {S} 2048 2 discard", None,
     "Optional argument count does not match the arguments given"),
    ("{H} {S} 2048 2 discard ignore extra", None,
     "Optional argument count does not match the arguments given"),
    ("{H} {S} 2048 2 colour blue", None, "Unknown optional argument"),
    ("{H} {S} 2048 2 write_policy back", None,
     "Invalid write_policy value: expected through or around"),
    ("{H} {S} 2048 2 promote_threshold 0", None,
     "Invalid promote_threshold: expected 1 to 1000000 reads"),
    ("{H} {S} 2048 2 max_migrations 65", None,
     "Invalid max_migrations: expected 1 to 64"),
    ("{H} {S} 2048 2 max_tracked 8", None,
     "Invalid max_tracked: expected 0 (auto) or 16 to 67108864"),
    ("{H} {S} 2048 4 discard ignore discard ignore", None,
     "Optional argument given twice"),
    ("{H} {S} 2048 2 discard sometimes", None,
     "Invalid discard value: expected passdown or ignore"),
]


# Refusals of the arguments alone, parsed by our code whatever the kernel
# (6.12's tier leaves them to 6.1); the others open or size the members.
ARGS_ONLY = ("Not", "Extent", "Invalid", "Device", "Optional", "Unknown")


@pytest.mark.parametrize("words,length,error", [
    pytest.param(w, n, e, id=e, marks=[pytest.mark.args]
                 if e.startswith(ARGS_ONLY) else [])
    for w, n, e in BAD_TABLES])
def test_bad_table_is_refused_and_leaves_nothing(pair, words, error, length):
    h, s = pair
    hdd_sectors = devices.sectors(h.path)
    hdev = open(f"/sys/block/{h.name}/dev").read().strip()
    if length is None:
        length = hdd_sectors
    elif length == "HDD+1":
        length = hdd_sectors + 1
    table = f"0 {length} hottier " + words.format(H=h.path, S=s.path,
                                                    HDEV=hdev)
    name = unique("bad")
    log = KernelLog()
    r = subprocess.run(["dmsetup", "create", name, "--table", table],
                       capture_output=True, text=True)
    assert r.returncode != 0, f"accepted: {table}"
    assert f"hottier: {error}" in log.new()
    assert name not in dm_names()
    assert not os.path.exists(f"/dev/mapper/{name}")


@pytest.mark.debug_soak
def test_member_of_another_hottier_device_is_refused(hottier, pair):
    h, s = pair
    with devices.fast(unique("hdd"), 256) as h2, \
         devices.fast(unique("ssd"), 64) as s2:
        for hdd, ssd, err in ((h.path, s2.path, "HDD is already used"),
                              (h2.path, s.path, "SSD is already used"),
                              (s.path, s2.path, "HDD is already used"),
                              (h2.path, h.path, "SSD is already used")):
            log = KernelLog()
            r = subprocess.run(["dmsetup", "create", unique("dup"), "--table",
                                hottier_table(hdd, ssd, length=2048)],
                               capture_output=True, text=True)
            assert r.returncode != 0
            assert f"hottier: {err} by another hottier device" in log.new()
        # Distinct members are fine, and a reload of the first device that
        # keeps its members is not a conflict with itself.
        with devices.DmDevice(unique("ht"), hottier_table(h2.path, s2.path)):
            hottier.reload(hottier.table())


@pytest.mark.debug_soak
def test_reload_does_not_release_members_of_live_table(hottier):
    """A failed reload must not drop the live table's claim on its members."""
    h, s = hottier.hdd, hottier.ssd
    bad = hottier_table(h.path, s.path, extent=1000)
    r = subprocess.run(["dmsetup", "reload", hottier.name, "--table", bad],
                       capture_output=True, text=True)
    assert r.returncode != 0
    with devices.fast(unique("hdd"), 256) as h2:
        r = subprocess.run(["dmsetup", "create", unique("dup"), "--table",
                            hottier_table(h2.path, s.path)],
                           capture_output=True, text=True)
        assert r.returncode != 0


@pytest.mark.debug
def test_module_unloads_after_remove(hottier):
    r = subprocess.run(["rmmod", "dm_hottier"], capture_output=True)
    assert r.returncode != 0, "module unloaded while a device uses it"
    hottier.remove()
    subprocess.run(["rmmod", "dm_hottier"], check=True)
    assert not module_loaded()
