"""One version everywhere: the VERSION file, the target's version triple,
DKMS, the Python package, the man page and the Debian changelog."""

import os
import re

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))


def read(rel):
    with open(os.path.join(REPO, rel)) as f:
        return f.read()


def found(rel, pattern):
    m = re.search(pattern, read(rel), re.M)
    assert m, f"{rel}: no version matching {pattern}"
    return m.group(1)


def test_every_version_string_is_the_version_file():
    version = read("VERSION").strip()
    assert re.fullmatch(r"\d+\.\d+\.\d+", version), version
    target = found("dm-hottier/dm-hottier-target.c",
                   r"\.version = \{(\d+, \d+, \d+)\}")
    assert target.replace(", ", ".") == version
    assert found("dkms.conf", r'^PACKAGE_VERSION="([^"]+)"') == version
    assert found("userspace/pyproject.toml",
                 r'^version = "([^"]+)"') == version
    assert found("userspace/hottier/__init__.py",
                 r'^__version__ = "([^"]+)"') == version
    assert found("userspace/hottierctl.8",
                 r'^\.TH HOTTIERCTL 8 "[^"]*" "dm-hottier ([^"]+)"') == version
    # The newest Debian changelog entry's upstream version (its revision
    # after the last hyphen).
    assert found("debian/changelog",
                 r"\Adm-hottier \(([^()\s]+)-[^-()\s]+\) ") == version
