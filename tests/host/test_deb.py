"""The Debian packages (make deb: scripts/deb.sh and debian/), built once
for this module from a copy of the tree and read back with dpkg-deb: the
DKMS sources, hottierctl with its package path, udev rules, units, man
page and docs, and their versions the VERSION file's."""

import glob
import gzip
import io
import json
import os
import re
import shutil
import subprocess
import tarfile

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
with open(os.path.join(REPO, "VERSION")) as _f:
    VERSION = _f.read().strip()
SRC = f"/usr/src/dm-hottier-{VERSION}"
TOOL = "/usr/sbin/hottierctl"
RULES = ["59-hottier-members.rules", "60-hottier.rules",
         "68-hottier-members.rules"]
UNITS = ["hottier.service", "hottier-metrics.service",
         "hottier-metrics.timer"]

pytestmark = pytest.mark.skipif(
    shutil.which("dpkg-buildpackage") is None
    or shutil.which("dpkg-deb") is None,
    reason="dpkg-buildpackage is not installed")


def repo_text(rel):
    with open(os.path.join(REPO, rel)) as f:
        return f.read()


def dpkg_deb(*args):
    return subprocess.run(["dpkg-deb", *args], check=True,
                          capture_output=True).stdout


class Deb:
    """One built package: its control fields, its paths (dpkg-deb -c) and
    its files' contents."""

    def __init__(self, path):
        self.path = path
        text = dpkg_deb("-I", path, "control").decode()
        self.control = dict(re.findall(r"^([\w-]+): (.*)$", text, re.M))
        self.modes = {}
        for line in dpkg_deb("-c", path).decode().splitlines():
            fields = line.split(None, 5)
            self.modes[fields[5].split(" -> ")[0].lstrip(".")] = fields[0]
        self.tar = tarfile.open(fileobj=io.BytesIO(
            dpkg_deb("--fsys-tarfile", path)))

    def files(self):
        return {p for p, m in self.modes.items() if m.startswith("-")}

    def read(self, path):
        data = self.tar.extractfile("." + path).read()
        if path.endswith(".gz"):
            data = gzip.decompress(data)
        return data.decode()

    def script(self, name):
        r = subprocess.run(["dpkg-deb", "-I", self.path, name],
                           capture_output=True, text=True)
        return r.stdout if r.returncode == 0 else ""


@pytest.fixture(scope="module")
def debs(tmp_path_factory):
    """{package name: Deb}, from one scripts/deb.sh run."""
    unmet = subprocess.run(["dpkg-checkbuilddeps"], cwd=REPO,
                           capture_output=True, text=True)
    if unmet.returncode:
        pytest.skip(unmet.stderr.strip() or "unmet build dependencies")
    out = tmp_path_factory.mktemp("deb")
    r = subprocess.run([os.path.join(REPO, "scripts", "deb.sh"), str(out)],
                       capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    found = {}
    for path in sorted(glob.glob(str(out / "*.deb"))):
        deb = Deb(path)
        found[deb.control["Package"]] = deb
    assert sorted(found) == ["dm-hottier-dkms", "hottierctl"]
    return found


def test_both_versions_are_the_version_file_and_both_are_arch_all(debs):
    for deb in debs.values():
        assert deb.control["Source"] == "dm-hottier"
        assert re.fullmatch(re.escape(VERSION) + r"-\d+",
                            deb.control["Version"]), deb.control["Version"]
        assert deb.control["Architecture"] == "all"


def test_the_dkms_package_holds_dkms_conf_and_every_source(debs):
    deb = debs["dm-hottier-dkms"]
    sources = sorted(
        os.path.basename(p)
        for pat in ("*.c", "*.h")
        for p in glob.glob(os.path.join(REPO, "dm-hottier", pat))
        if not p.endswith(".mod.c")) + ["Kbuild"]
    want = {f"{SRC}/dkms.conf"} | {f"{SRC}/dm-hottier/{f}" for f in sources}
    got = {p for p in deb.files() if p.startswith("/usr/src/")}
    assert got == want, (sorted(want - got), sorted(got - want))
    for f in sources:
        assert deb.read(f"{SRC}/dm-hottier/{f}") == repo_text(
            f"dm-hottier/{f}"), f
    conf = deb.read(f"{SRC}/dkms.conf")
    assert conf == repo_text("dkms.conf")
    assert f'PACKAGE_VERSION="{VERSION}"' in conf
    assert re.search(r"^dkms\b", deb.control["Depends"]), deb.control
    # dh_dkms: dkms adds, builds and installs it at configure time and
    # removes it before the package goes.
    assert "DKMS_NAME=dm-hottier" in deb.script("postinst")
    assert f"DKMS_VERSION={VERSION}" in deb.script("postinst")
    assert "dkms remove" in deb.script("prerm")


def test_hottierctl_is_in_usr_sbin_with_its_package_path(debs):
    deb = debs["hottierctl"]
    assert deb.modes[TOOL] == "-rwxr-xr-x"
    tool = deb.read(TOOL)
    assert tool.startswith("#!/usr/bin/python3 -S\n")
    assert re.search(r'^LIBDIR = "/usr/lib/hottierctl"$', tool, re.M), tool
    mods = sorted(os.path.basename(p) for p in glob.glob(
        os.path.join(REPO, "userspace", "hottier", "*.py")))
    got = sorted(os.path.basename(p) for p in deb.files()
                 if p.startswith("/usr/lib/hottierctl/"))
    assert got == mods          # and no bytecode: postinst compiles it
    for m in mods:
        assert deb.read(f"/usr/lib/hottierctl/hottier/{m}") == repo_text(
            f"userspace/hottier/{m}")
    depends = [d.strip() for d in deb.control["Depends"].split(",")]
    assert any(re.match(r"python3( |$)", d) for d in depends), depends
    assert "dmsetup" in depends
    assert deb.control["Recommends"] == "dm-hottier-dkms"


def test_udev_rules_and_units_name_the_installed_hottierctl(debs):
    deb = debs["hottierctl"]
    for name, path in ([(r, f"/lib/udev/rules.d/{r}") for r in RULES]
                       + [(u, f"/lib/systemd/system/{u}") for u in UNITS]):
        text = deb.read(path)
        assert text == repo_text(f"userspace/{name}").replace(
            "/usr/local/sbin/hottierctl", TOOL), name
        assert "/usr/local" not in text, name
    assert f'RUN+="{TOOL} tune-queues' in deb.read(
        "/lib/udev/rules.d/60-hottier.rules")
    assert f"ExecStart={TOOL} activate" in deb.read(
        "/lib/systemd/system/hottier.service")


def test_hottier_service_is_neither_enabled_nor_started(debs):
    """It needs /etc/hottiertab, and its stop removes the devices: the
    package never enables, starts, restarts or stops a unit; an enabled
    one is kept enabled across upgrades."""
    deb = debs["hottierctl"]
    scripts = "".join(deb.script(s) for s in ("postinst", "prerm", "postrm"))
    assert "deb-systemd-invoke" not in scripts
    post = deb.script("postinst")
    # Each enable sits in the block of its unit's `debian-installed`
    # (dh_installsystemd --no-enable): it re-creates the links of a unit
    # the administrator enabled, never enables one afresh.
    for unit in ("hottier.service", "hottier-metrics.timer"):
        enable = post.index(f"deb-systemd-helper enable '{unit}'")
        assert post.rindex(f"debian-installed '{unit}'", 0, enable) > \
            post.rfind("fi\n", 0, enable), unit


def test_man_page_example_tab_and_dashboard(debs):
    deb = debs["hottierctl"]
    assert deb.read("/usr/share/man/man8/hottierctl.8.gz") == repo_text(
        "userspace/hottierctl.8")
    doc = "/usr/share/doc/hottierctl"
    assert deb.read(f"{doc}/hottiertab.example") == repo_text(
        "userspace/hottiertab.example")
    # Uncompressed, so Grafana imports it as it is.
    assert json.loads(deb.read(f"{doc}/hottier-dashboard.json")) == \
        json.loads(repo_text("userspace/grafana/hottier-dashboard.json"))
    assert "License: GPL-2.0-only" in deb.read(f"{doc}/copyright")


def test_nothing_goes_to_usr_local(debs):
    for deb in debs.values():
        assert not [p for p in deb.modes if p.startswith("/usr/local")]
