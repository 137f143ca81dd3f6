"""hottierctl takes an LVM logical volume as VG/LV wherever it takes a
device: create's --hdd and --ssd, and the members of a hottiertab entry
(Documentation/hottier.rst, "Stacking")."""

import os

import pytest

from hottierctl_fakes import Tree, write
from hottier import HottierError, tab


@pytest.mark.parametrize("spec,names", [
    ("vg0/hdd", ("vg0", "hdd")),
    ("my-vg/lv-1", ("my-vg", "lv-1")),
    ("vg_a.b+c/x", ("vg_a.b+c", "x")),
    ("by-id/ata-SSD", None),            # a /dev/disk link, not a VG
    ("/dev/vg0/hdd", None),
    ("./sdb", None),
    ("../x", None),
    ("vg0/", None),
    ("-vg/lv", None),
    ("vg0/lv/x", None),
    ("sdb", None),
])
def test_what_names_a_logical_volume(spec, names):
    assert tab.lv_name(spec) == names


def test_a_logical_volume_resolves_to_its_node(tmp_path):
    dev = str(tmp_path)
    # Not active: /dev/VG/LV, which is missing.
    assert tab.device_path("my-vg/lv-1", dev) == f"{dev}/my-vg/lv-1"
    # udev made no /dev/VG/LV link: the dm node, hyphens doubled.
    write(f"{dev}/mapper/my--vg-lv--1", "")
    assert tab.device_path("my-vg/lv-1", dev) == f"{dev}/mapper/my--vg-lv--1"
    write(f"{dev}/my-vg/lv-1", "")
    assert tab.device_path("my-vg/lv-1", dev) == f"{dev}/my-vg/lv-1"
    # The other forms are as before.
    assert tab.device_path("/dev/sdb", dev) == "/dev/sdb"
    assert tab.device_path("by-id/wwn-1", dev) == f"{dev}/disk/by-id/wwn-1"
    assert tab.device_path("sdb", dev, relative=True) == "sdb"
    with pytest.raises(HottierError) as e:
        tab.device_path("sdb", dev)
    assert str(e.value) == ("device 'sdb': expected an absolute path, "
                            "by-id/NAME or VG/LV")


def test_hottiertab_members_as_logical_volumes(tmp_path):
    dev = str(tmp_path)
    write(f"{dev}/pool/fast", "")
    entry, = tab.parse("tiered pool/slow pool/fast 1M routing=ssd\n", "t",
                       dev)
    assert (entry.hdd, entry.ssd, entry.keys) == (
        f"{dev}/pool/slow", f"{dev}/pool/fast", {"routing": "ssd"})


@pytest.fixture
def lvs(tmp_path):
    """Two active LVs: vg0/hdd (dm-0, with LVM's dm UUID) and
    fast-vg/ssd-1 (dm-1, reached through /dev/mapper only)."""
    t = Tree(tmp_path)
    hdd = t.block("dm-0", "253:0", virtual=True,
                  node=f"{t.dev}/vg0/hdd")
    write(os.path.join(hdd, "dm", "uuid"), "LVM-" + "a" * 32 + "\n")
    t.block("dm-1", "253:1", sectors=262144, virtual=True,
            node=f"{t.dev}/mapper/fast--vg-ssd--1")
    for node in ("vg0/hdd", "mapper/fast--vg-ssd--1"):
        write(os.path.join(t.dev, node), "")
    return t


def test_create_over_logical_volumes(lvs, capsys):
    rc, out = lvs.run("create", "t", "--hdd", "vg0/hdd", "--ssd",
                      "fast-vg/ssd-1")
    assert rc == 0, capsys.readouterr().err
    assert lvs.dmsetup_log()[-1] == [
        "create", "t", "--uuid", "HOTTIER-t", "--table",
        "0 2097152 hottier 253:0 253:1 2048 2 hdd_id dm-uuid-LVM-" +
        "a" * 32]
    assert out == (f"t: created /dev/mapper/t over {lvs.dev}/vg0/hdd (HDD) "
                   f"and {lvs.dev}/mapper/fast--vg-ssd--1 (SSD), 1 MiB "
                   "extents\n")


def test_create_refuses_an_inactive_logical_volume(lvs, capsys):
    assert lvs.run("create", "t", "--hdd", "vg0/gone", "--ssd",
                   "fast-vg/ssd-1")[0] == 1
    assert capsys.readouterr().err == (
        f"hottierctl: vg0/gone: no active logical volume of that name "
        f"({lvs.dev}/vg0/gone does not exist)\n")
    assert not any(c[0] == "create" for c in lvs.dmsetup_log())


def test_activate_creates_an_entry_over_logical_volumes(lvs, tmp_path,
                                                        capsys):
    hottiertab = tmp_path / "hottiertab"
    hottiertab.write_text("tiered vg0/hdd fast-vg/ssd-1 512K\n"
                          "later vg9/hdd vg9/ssd 1M\n")
    rc, out = lvs.run("activate", "--tab", str(hottiertab))
    assert (rc, out) == (0, "tiered: created\n")
    assert capsys.readouterr().err == (
        f"hottierctl: later: {lvs.dev}/vg9/hdd, {lvs.dev}/vg9/ssd not "
        "present; skipped\n")
    assert lvs.load()["devices"]["tiered"]["table"] == (
        "0 2097152 hottier 253:0 253:1 1024 2 hdd_id dm-uuid-LVM-" +
        "a" * 32)
