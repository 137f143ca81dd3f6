"""scripts/count-results.py counts KTAP leaves and JUnit results honestly."""

import os
import subprocess

SCRIPT = os.path.join(os.path.dirname(__file__), "..", "..", "scripts",
                      "count-results.py")

KTAP = """KTAP version 1
1..2
    KTAP version 1
    # Subtest: suite-a
    1..3
    ok 1 plain_case
        KTAP version 1
        # Subtest: param_case
        ok 1 first
        not ok 2 second
        ok 3 third # SKIP not here
    # param_case: pass:1 fail:1 skip:1 total:3
    not ok 2 param_case
    ok 3 after_param
# suite-a: pass:2 fail:1 skip:0 total:3
not ok 1 suite-a
    KTAP version 1
    # Subtest: suite-b
    1..1
    ok 1 only_case
ok 2 suite-b
"""

JUNIT = """<?xml version="1.0"?><testsuites><testsuite name="pytest"
 errors="1" failures="2" skipped="1" tests="10"></testsuite></testsuites>"""


def run(tmp_path, rc, ktap=None, junit=JUNIT):
    xml = tmp_path / "junit.xml"
    if junit is not None:
        xml.write_text(junit)
    args = ["python3", SCRIPT, "guest-x", str(rc), str(xml)]
    if ktap is not None:
        k = tmp_path / "kunit.ktap"
        k.write_text(ktap)
        args.append(str(k))
    r = subprocess.run(args, capture_output=True, text=True)
    return r.returncode, r.stdout.splitlines()[-1]


def test_ktap_leaves_and_junit_are_summed(tmp_path):
    # KTAP leaves: plain_case ok, first ok, second fail, third skip,
    # after_param ok, only_case ok -> 4 passed, 1 failed, 1 skipped.
    # JUnit: 10 tests, 3 bad, 1 skipped -> 6 passed.
    rc, last = run(tmp_path, 1, KTAP)
    assert last == "guest-x: 10 passed, 4 failed, 2 skipped"
    assert rc == 1


def test_all_passing(tmp_path):
    junit = JUNIT.replace('errors="1" failures="2" skipped="1"',
                          'errors="0" failures="0" skipped="0"')
    rc, last = run(tmp_path, 0, junit=junit)
    assert (rc, last) == (0, "guest-x: 10 passed, 0 failed")


def test_failed_guest_without_failures_counts_one(tmp_path):
    junit = JUNIT.replace('errors="1" failures="2" skipped="1"',
                          'errors="0" failures="0" skipped="0"')
    rc, last = run(tmp_path, 124, junit=junit)
    assert (rc, last) == (1, "guest-x: 10 passed, 1 failed")


def test_missing_reports_are_failures(tmp_path):
    rc, last = run(tmp_path, 0, ktap="", junit=None)
    assert rc == 1
    assert last == "guest-x: 0 passed, 2 failed"
