"""Members hidden from the system (Documentation/hottier.rst, "Members"):
hottierctl udev-member, the matcher the udev rules run, and hottierctl
lvm-filter, against tabs and fake /dev trees."""

import json
import os
import re
import subprocess
import sys

import pytest

from hottierctl_fakes import REPO, Tree, write
from hottier import members

HOTTIERCTL = os.path.join(REPO, "userspace", "hottierctl")
TAB = """\
# name  hdd                              ssd                  extent
tiered  /dev/disk/by-id/wwn-0x5000c5.1   by-id/nvme-Fast_SN-part2  1M
media   /dev/md0                         /dev/sdc            4M  routing=ssd
video   pool-a/video                     fast/video-cache    1M
broken  /dev/sdd                         /dev/sde            bogus
short   /dev/sdf
"""


def specs():
    return members.member_specs(TAB)


def test_specs_are_the_members_as_written_even_on_bad_lines():
    assert specs() == [
        ("tiered", "hdd", "/dev/disk/by-id/wwn-0x5000c5.1"),
        ("tiered", "ssd", "by-id/nvme-Fast_SN-part2"),
        ("media", "hdd", "/dev/md0"), ("media", "ssd", "/dev/sdc"),
        ("video", "hdd", "pool-a/video"),
        ("video", "ssd", "fast/video-cache"),
        # activate refuses the extent, but the members are still hidden;
        ("broken", "hdd", "/dev/sdd"), ("broken", "ssd", "/dev/sde")]
    # a line with one member names no device: activate refuses it.


def test_names_of_each_form():
    assert members.names("/dev/md0", "/d") == ["/dev/md0"]
    assert members.names("/dev//md/../md0", "/d") == ["/dev/md0"]
    assert members.names("by-id/x", "/d") == ["/d/disk/by-id/x"]
    assert members.names("by-partuuid/1234-ab", "/d") == \
        ["/d/disk/by-partuuid/1234-ab"]
    assert members.names("pool-a/my-lv", "/d") == \
        ["/d/pool-a/my-lv", "/d/mapper/pool--a-my--lv"]
    assert members.names("sdb", "/d") == []


@pytest.mark.parametrize("devnode,links,found", [
    ("/dev/md0", [], ("media", "hdd")),
    ("/dev/sdc", [], ("media", "ssd")),
    ("/dev/sde", [], ("broken", "ssd")),
    # by the links udev gives the device in this event
    ("/dev/sda", ["disk/by-id/wwn-0x5000c5.1", "disk/by-path/pci-1"],
     ("tiered", "hdd")),
    ("/dev/nvme0n1p2", ["disk/by-id/nvme-Fast_SN-part2"],
     ("tiered", "ssd")),
    # an LV: /dev/VG/LV made by 56-lvm, or /dev/mapper/VG-LV by 55-dm
    ("/dev/dm-3", ["mapper/pool--a-video"], ("video", "hdd")),
    ("/dev/dm-4", ["fast/video-cache", "mapper/fast-video--cache"],
     ("video", "ssd")),
    # not listed: a partition of a member, a look-alike name, others
    ("/dev/sdc1", [], None),
    ("/dev/md01", [], None),
    ("/dev/sda", ["disk/by-id/wwn-0x5000c5.10"], None),
    ("/dev/dm-5", ["mapper/pool-a-video"], None),   # hyphens not doubled
    ("/dev/sdf", [], None),                         # a line of one member
])
def test_match_by_node_or_this_events_links(devnode, links, found):
    assert members.match(specs(), devnode, links, "8:0",
                         resolve=lambda p: None) == found


def test_match_by_a_link_a_previous_event_made():
    """Before 60-persistent-storage runs, the by-id links of this event
    are not made yet: a link that exists and leads to the device's number
    names it."""
    seen = []

    def resolve(path):
        seen.append(path)
        return "259:2" if path == "/dev/disk/by-id/nvme-Fast_SN-part2" \
            else None
    assert members.match(specs(), "/dev/nvme0n1p2", [], "259:2",
                         resolve=resolve) == ("tiered", "ssd")
    assert members.match(specs(), "/dev/nvme0n1p3", [], "259:3",
                         resolve=resolve) is None
    # Without a number, no path is resolved.
    seen.clear()
    assert members.match(specs(), "/dev/nvme0n1p2", [], None,
                         resolve=resolve) is None
    assert seen == []


def test_match_resolves_real_links(tmp_path):
    """block_devnum follows links to a block device node; a link to
    anything else, or a dangling one, names no device."""
    dev = str(tmp_path)
    os.makedirs(f"{dev}/disk/by-id")
    os.symlink("/dev/null", f"{dev}/disk/by-id/not-a-block-device")
    os.symlink(f"{dev}/gone", f"{dev}/disk/by-id/dangling")
    assert members.block_devnum(f"{dev}/disk/by-id/not-a-block-device") \
        is None
    assert members.block_devnum(f"{dev}/disk/by-id/dangling") is None
    block = [os.path.join("/dev", n) for n in sorted(os.listdir("/dev"))
             if members.block_devnum(os.path.join("/dev", n))]
    if not block:
        pytest.skip("no block device node on this host")
    node = block[0]
    os.symlink(node, f"{dev}/disk/by-id/real")
    st = os.stat(node)
    devnum = f"{os.major(st.st_rdev)}:{os.minor(st.st_rdev)}"
    s = members.member_specs("t by-id/real /dev/other 1M\n")
    assert members.match(s, "/dev/whatever", [], devnum, dev) == \
        ("t", "hdd")


def run_script(*args):
    return subprocess.run([sys.executable, HOTTIERCTL, *args],
                          capture_output=True, text=True,
                          env=dict(os.environ, PATH="/usr/bin:/bin"))


def test_udev_member_prints_what_udev_imports(tmp_path):
    """As 59-hottier-members.rules runs it: not root-only, no module
    needed (udev runs it for every block device), KEY=value lines."""
    tab = tmp_path / "hottiertab"
    tab.write_text(TAB)
    r = run_script("udev-member", "--tab", str(tab), "--devnum", "8:16",
                   "/dev/sdb", "disk/by-id/wwn-0x5000c5.1",
                   "disk/by-path/pci-0000:00:1f.2-ata-2")
    assert (r.returncode, r.stdout, r.stderr) == (
        0, "HOTTIER_MEMBER=hdd\nHOTTIER_DEVICE=tiered\n"
        "HOTTIER_MEMBER_LINKS=disk/by-id/wwn-0x5000c5.1 "
        "disk/by-path/pci-0000:00:1f.2-ata-2\n"
        "HOTTIER_MEMBER_LINKS_SET=1\n", "")
    r = run_script("udev-member", "--tab", str(tab), "--devnum", "8:32",
                   "/dev/sdc", "disk/by-uuid/1234", "disk/by-label/data",
                   "disk/by-id/ata-X")
    assert r.stdout == ("HOTTIER_MEMBER=ssd\nHOTTIER_DEVICE=media\n"
                        "HOTTIER_MEMBER_LINKS=disk/by-id/ata-X\n"
                        "HOTTIER_MEMBER_LINKS_SET=1\n")
    # --links-only: no tab read, the links without the filesystem's.
    r = run_script("udev-member", "--links-only", "--tab",
                   str(tmp_path / "none"), "/dev/sdc1", "disk/by-uuid/1",
                   "disk/by-partuuid/a-1", "disk/by-label/x")
    assert (r.returncode, r.stdout) == (
        0, "HOTTIER_MEMBER_LINKS=disk/by-partuuid/a-1\n"
        "HOTTIER_MEMBER_LINKS_SET=1\n")
    # Not a member, a missing or unreadable tab: nothing, status 0.
    for argv in (["--tab", str(tab), "--devnum", "8:48", "/dev/sdx"],
                 ["--tab", str(tmp_path / "none"), "/dev/sdc"],
                 ["--tab", str(tmp_path), "/dev/sdc"]):
        r = run_script("udev-member", *argv)
        assert (r.returncode, r.stdout, r.stderr) == (0, "", ""), argv


@pytest.mark.parametrize("argv,parsed", [
    (["/dev/sdb"], {"tab": "/etc/hottiertab", "devnum": None,
                    "links_only": False, "devnode": "/dev/sdb",
                    "links": []}),
    (["--tab", "/t", "--devnum", "8:16", "/dev/sdb", "a", "b"],
     {"tab": "/t", "devnum": "8:16", "links_only": False,
      "devnode": "/dev/sdb", "links": ["a", "b"]}),
    (["--tab=/t", "--devnum=8:16", "--links-only", "/dev/sdb", "a"],
     {"tab": "/t", "devnum": "8:16", "links_only": True,
      "devnode": "/dev/sdb", "links": ["a"]}),
    ([], None), (["--tab"], None), (["--bogus", "/dev/sdb"], None),
    (["--tab", "/t"], None),
])
def test_the_fast_path_parses_what_the_full_parser_does(argv, parsed):
    """The script handles udev-member without importing the tool: the
    same arguments, the same result; anything else goes to argparse."""
    assert members.udev_args(argv) == parsed
    if parsed is None:
        return
    from hottier import cli
    full = vars(cli.parser().parse_args(["udev-member", *argv]))
    assert {k: full[k] for k in parsed} == parsed


def test_the_script_imports_only_the_matcher_for_udev(tmp_path):
    tab = tmp_path / "hottiertab"
    tab.write_text(TAB)
    code = ("import runpy, sys; sys.argv = ['hottierctl', 'udev-member', "
            f"'--tab', {str(tab)!r}, '/dev/md0']\n"
            "try:\n"
            f"    runpy.run_path({HOTTIERCTL!r}, run_name='__main__')\n"
            "except SystemExit as e:\n"
            "    print('cli' in sys.modules or 'hottier.cli' in sys.modules,"
            " e.code)\n")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True,
                       text=True)
    assert r.stdout == ("HOTTIER_MEMBER=hdd\nHOTTIER_DEVICE=media\n"
                        "HOTTIER_MEMBER_LINKS=\n"
                        "HOTTIER_MEMBER_LINKS_SET=1\nFalse 0\n"), r.stderr
    # A usage error still gets the full parser's one line and status 2.
    r = run_script("udev-member", "--bogus", "/dev/md0")
    assert r.returncode == 2
    assert r.stderr.startswith("hottierctl: unrecognized arguments: "
                               "--bogus")


def test_udev_member_through_main_needs_no_root_or_module(tmp_path):
    t = Tree(tmp_path)
    os.rmdir(os.path.join(t.sys, "module", "dm_hottier"))
    t.save({"targets": [], "devices": {}})
    tab = tmp_path / "hottiertab"
    tab.write_text(TAB)
    rc, out = t.run("udev-member", "--tab", str(tab), "/dev/md0", euid=1000)
    assert (rc, out) == (0, "HOTTIER_MEMBER=hdd\nHOTTIER_DEVICE=media\n"
                         "HOTTIER_MEMBER_LINKS=\nHOTTIER_MEMBER_LINKS_SET=1\n")
    # The LV forms and udev's links are below the system's dev_root.
    rc, out = t.run("udev-member", "--tab", str(tab), "/dev/dm-7",
                    "mapper/pool--a-video", euid=1000)
    assert out == ("HOTTIER_MEMBER=hdd\nHOTTIER_DEVICE=video\n"
                   "HOTTIER_MEMBER_LINKS=mapper/pool--a-video\n"
                   "HOTTIER_MEMBER_LINKS_SET=1\n")
    rc, out = t.run("udev-member", "--tab", str(tab),
                    f"{t.dev}/fast/video-cache", euid=1000)
    assert out.startswith("HOTTIER_MEMBER=ssd\nHOTTIER_DEVICE=video\n")
    rc, out = t.run("udev-member", "--tab", str(tab),
                    "/dev/fast/video-cache", euid=1000)
    assert (rc, out) == (0, "")


def test_lvm_regex_escapes_what_lvm_reads_as_special():
    assert members.lvm_regex("/dev/disk/by-id/nvme-eui.0025+3[1]") == \
        r"^/dev/disk/by-id/nvme-eui\.0025\+3\[1\]$"
    assert members.lvm_regex("/dev/md0") == "^/dev/md0$"
    for path in ("/dev/a.b", "/dev/x(y)|z", "/dev/q?*^$\\"):
        pattern = members.lvm_regex(path)
        assert re.fullmatch(pattern, path)
        assert not re.fullmatch(pattern, path + "1")


def test_lvm_filter_rejects_every_name_of_every_member():
    patterns, listed = members.lvm_filter(specs(), "/dev")
    assert patterns == [
        r"r|^/dev/disk/by-id/wwn-0x5000c5\.1$|",
        r"r|^/dev/disk/by-id/nvme-Fast_SN-part2$|",
        "r|^/dev/md0$|", "r|^/dev/sdc$|",
        "r|^/dev/pool-a/video$|", "r|^/dev/mapper/pool--a-video$|",
        "r|^/dev/fast/video-cache$|", "r|^/dev/mapper/fast-video--cache$|",
        "r|^/dev/sdd$|", "r|^/dev/sde$|"]
    assert all(p.startswith("r|") for p in patterns)    # never an "a|"
    assert listed[4] == {"device": "video", "role": "hdd",
                         "spec": "pool-a/video",
                         "names": ["/dev/pool-a/video",
                                   "/dev/mapper/pool--a-video"]}
    # The same member twice is one pattern.
    twice = members.member_specs("a /dev/sdb /dev/sdc 1M\n"
                                 "b /dev/sdb /dev/sdd 1M\n")
    assert members.lvm_filter(twice)[0] == [
        "r|^/dev/sdb$|", "r|^/dev/sdc$|", "r|^/dev/sdd$|"]


def test_lvm_filter_command_text_and_json(tmp_path):
    tab = tmp_path / "hottiertab"
    tab.write_text("tiered /dev/disk/by-id/wwn-0x5.1 /dev/nvme0n1p2 1M\n")
    r = run_script("lvm-filter", "--tab", str(tab))
    assert r.returncode == 0, r.stderr
    assert r.stdout == (
        "devices {\n"
        '\tglobal_filter = [ "r|^/dev/disk/by-id/wwn-0x5\\.1$|", '
        '"r|^/dev/nvme0n1p2$|" ]\n'
        "}\n")
    r = run_script("lvm-filter", "--tab", str(tab), "--json")
    out = json.loads(r.stdout)
    assert out["tab"] == str(tab)
    assert out["global_filter"] == ["r|^/dev/disk/by-id/wwn-0x5\\.1$|",
                                    "r|^/dev/nvme0n1p2$|"]
    assert [(m["device"], m["role"]) for m in out["members"]] == \
        [("tiered", "hdd"), ("tiered", "ssd")]
    assert out["config"] == run_script("lvm-filter", "--tab",
                                       str(tab)).stdout

    tab.write_text("# nothing yet\n")
    r = run_script("lvm-filter", "--tab", str(tab))
    assert r.stdout == "# hottiertab lists no members: no filter needed\n"
    r = run_script("lvm-filter", "--tab", str(tmp_path / "none"))
    assert r.returncode == 1
    assert r.stderr == (f"hottierctl: {tmp_path}/none: No such file or "
                        "directory\n")


RULES = ("59-hottier-members.rules", "68-hottier-members.rules")


def rule_lines(name):
    with open(os.path.join(REPO, "userspace", name)) as f:
        return [line for line in f.read().splitlines()
                if line and not line.startswith("#")]


def test_rules_are_ordered_around_the_rules_they_depend_on():
    """59 sorts before 60-persistent-storage*; 68 after every rule that
    makes by-uuid links (60-persistent-storage*, 63-md-raid-arrays) and
    the 64- rules, and before 69-lvm (pvscan)."""
    assert sorted(["59-hottier-members.rules", "60-persistent-storage.rules",
                   "60-persistent-storage-dm.rules", "55-dm.rules",
                   "56-lvm.rules"])[2] == "59-hottier-members.rules"
    order = sorted(["68-hottier-members.rules", "63-md-raid-arrays.rules",
                    "64-md-raid-assembly.rules", "64-btrfs.rules",
                    "60-persistent-storage-dm.rules", "69-lvm.rules",
                    "99-systemd.rules"])
    assert order.index("68-hottier-members.rules") == 4


def test_rules_run_the_matcher_on_the_tab_and_set_the_flags():
    match = ('IMPORT{program}="/usr/local/sbin/hottierctl udev-member '
             '--tab /etc/hottiertab --devnum $major:$minor $devnode '
             '$links"')
    for name in RULES:
        lines = rule_lines(name)
        assert lines[:3] == [
            'SUBSYSTEM!="block", GOTO="hottier_members_end"',
            'ACTION!="add|change", GOTO="hottier_members_end"',
            'TEST!="/etc/hottiertab", GOTO="hottier_members_end"']
        assert lines[-1] == 'LABEL="hottier_members_end"'
        assert 'ENV{SYSTEMD_READY}="0"' in lines
        assert 'ENV{UDISKS_IGNORE}="1"' in lines
    early = rule_lines(RULES[0])
    assert early[3] == match
    late = rule_lines(RULES[1])
    # A member (from 59): its links without the filesystem's; anything
    # else: matched again with every link of the event.
    # A change of anything but a dm device or an md array made no new link:
    # 59 saw them all, no second match.
    assert late[3:7] == [
        'ENV{HOTTIER_MEMBER}=="?*", IMPORT{program}="/usr/local/sbin/'
        'hottierctl udev-member --links-only $devnode $links"',
        'ENV{HOTTIER_MEMBER}!="?*", ACTION=="change", '
        'KERNEL!="dm-[0-9]*|md*", GOTO="hottier_members_end"',
        'ENV{HOTTIER_MEMBER}!="?*", ' + match,
        'ENV{HOTTIER_MEMBER}!="?*", GOTO="hottier_members_end"']
    assert ('ENV{HOTTIER_MEMBER_LINKS_SET}=="1", '
            'OPTIONS+="string_escape=none", '
            'SYMLINK="$env{HOTTIER_MEMBER_LINKS}"') in late
    assert not any("SYMLINK-=" in line for line in late)  # adds in udev 252
    assert 'ENV{ID_FS_TYPE}="", ENV{ID_FS_USAGE}=""' in late


def test_the_matcher_takes_the_arguments_the_rules_give(tmp_path):
    """The rules' IMPORT line, with udev's substitutions made, parses."""
    tab = tmp_path / "hottiertab"
    tab.write_text(TAB)
    line = next(line for line in rule_lines(RULES[0])
                if "IMPORT{program}" in line)
    cmd = line.split('"')[1].replace("/etc/hottiertab", str(tab))
    cmd = cmd.replace("$major:$minor", "9:0").replace("$devnode", "/dev/md0")
    cmd = cmd.replace("$links", "md/data disk/by-id/md-uuid-1")
    r = run_script(*cmd.split()[1:])
    assert r.stdout == ("HOTTIER_MEMBER=hdd\nHOTTIER_DEVICE=media\n"
                        "HOTTIER_MEMBER_LINKS=md/data "
                        "disk/by-id/md-uuid-1\n"
                        "HOTTIER_MEMBER_LINKS_SET=1\n")


def test_kept_links_drop_only_the_filesystem_links():
    assert members.kept_links([
        "disk/by-id/wwn-1", "disk/by-uuid/0a-1", "disk/by-label/my\\x20fs",
        "disk/by-partuuid/p-1", "disk/by-partlabel/x", "disk/by-path/pci-1",
        "mapper/vg-lv", "vg/lv", "", "disk/by-uuidx"]) == (
        "disk/by-id/wwn-1 disk/by-partuuid/p-1 disk/by-partlabel/x "
        "disk/by-path/pci-1 mapper/vg-lv vg/lv disk/by-uuidx")


def test_make_install_puts_both_rules_in_place_with_the_installed_tool(
        tmp_path):
    prefix = tmp_path / "usr"
    r = subprocess.run(["make", "-s", "-C", REPO, "install-userspace",
                        f"PREFIX={prefix}"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    sbin = prefix / "sbin" / "hottierctl"
    assert (prefix / "lib" / "hottierctl" / "hottier" /
            "members.py").is_file()
    for name in RULES:
        installed = (prefix / "lib/udev/rules.d" / name).read_text()
        with open(os.path.join(REPO, "userspace", name)) as f:
            source = f.read()
        assert installed == source.replace("/usr/local/sbin/hottierctl",
                                           str(sbin))
        assert f'IMPORT{{program}}="{sbin} udev-member' in installed
    # The installed tool answers the rules.
    tab = tmp_path / "hottiertab"
    tab.write_text("t /dev/sdb /dev/sdc 1M\n")
    r = subprocess.run([str(sbin), "udev-member", "--tab", str(tab),
                        "--devnum", "8:16", "/dev/sdb", "disk/by-uuid/x"],
                       capture_output=True, text=True, cwd=tmp_path)
    assert r.stdout == ("HOTTIER_MEMBER=hdd\nHOTTIER_DEVICE=t\n"
                        "HOTTIER_MEMBER_LINKS=\n"
                        "HOTTIER_MEMBER_LINKS_SET=1\n"), r.stderr
