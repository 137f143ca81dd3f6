"""scripts/matrix.sh picks each boot's guest tests by marker expression:
every expression selects tests, and make check's boots together run every
guest test but the variants only make soak runs. The expressions are
evaluated as pytest -m does, over one collection of tests/guest."""

import os
import re
import subprocess
import sys

import pytest
from _pytest.mark.expression import Expression

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
MATRIX = os.path.join(REPO, "scripts", "matrix.sh")
CHECK_SH = os.path.join(REPO, "scripts", "check.sh")


def expression(fn, arg, full=False):
    """What matrix.sh's tier_tests or boot_tests prints."""
    src = open(MATRIX).read()
    fns = src[:src.index('case "${1:-}" in')]
    env = dict(os.environ, HOTTIER_MATRIX_FULL="1" if full else "0")
    return subprocess.run(["bash", "-c", f"{fns}\n{fn} {arg}"], env=env,
                          check=True, capture_output=True,
                          text=True).stdout.strip()


@pytest.fixture(scope="module")
def marks():
    """{node ID: marker names} of every guest test, from one collection."""
    out = subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "no:cacheprovider",
         "-p", "marks_plugin", "--collect-only", "-q",
         os.path.join("tests", "guest")], cwd=REPO, capture_output=True,
        text=True, env=dict(os.environ, PYTHONPATH=os.path.dirname(
            os.path.abspath(__file__))))
    assert out.returncode == 0, out.stdout + out.stderr
    found = {}
    for line in out.stdout.splitlines():
        if line.startswith("MARKS\t"):
            _, node, names = line.split("\t")
            found[node] = set(filter(None, names.split(",")))
    assert found
    return found


def pick(marks, expr):
    """The tests pytest's -m expr selects."""
    compiled = Expression.compile(expr)
    return {n for n, names in marks.items()
            if compiled.evaluate(lambda name: name in names)}


@pytest.fixture(scope="module")
def every(marks):
    return set(marks)


CHECK = [("tier_tests", "6.1"), ("tier_tests", "6.12"),
         ("tier_tests", "7.2-debug")] + [
    ("boot_tests", b) for b in ("crash", "cli", "system", "measure")]


def test_check_sh_boots_what_check_lists():
    """CHECK is what scripts/check.sh boots, in its foreground and lanes."""
    boots = set()
    for what, tier in re.findall(
            r"scripts/matrix\.sh (guest|crash|cli|system|measure) "
            r"([0-9][0-9.a-z-]*)", open(CHECK_SH).read()):
        boots.add(("tier_tests", tier) if what == "guest"
                  else ("boot_tests", what))
    assert boots == set(CHECK)


@pytest.mark.parametrize("fn,arg", CHECK)
def test_each_boot_picks_tests(fn, arg, marks, every):
    for full in (False, True):
        picked = pick(marks, expression(fn, arg, full))
        assert picked and picked <= every, (fn, arg, full)


def test_make_check_runs_every_test_but_soak_variants(marks, every):
    ran = set()
    for fn, arg in CHECK:
        ran |= pick(marks, expression(fn, arg))
    soak = pick(marks, "soak")
    assert soak and not soak & ran
    assert ran | soak == every, sorted(every - ran - soak)


def test_make_soak_runs_the_soak_variants(marks):
    ran = set()
    for fn, arg in [("tier_tests", "6.1"), ("boot_tests", "crash"),
                    ("boot_tests", "cli")]:
        ran |= pick(marks, expression(fn, arg, full=True))
    # The crash boot leaves the write-around replay to make soak's own
    # run of test_crash.py (Makefile, soak).
    missing = pick(marks, "soak") - ran
    assert all("test_crash.py" in t for t in missing), sorted(missing)
