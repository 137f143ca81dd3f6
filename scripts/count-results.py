#!/usr/bin/env python3
"""Count a guest stage's results: pytest's JUnit XML and, optionally, KUnit's
KTAP output. Prints the details, then one line "<stage>: N passed, N failed".

    count-results.py STAGE GUEST_RC JUNIT_XML [KTAP]

A guest that failed (GUEST_RC != 0) with no failure counted adds one failed
test, so a crash, timeout or kernel report is never a pass.
"""

import re
import sys
import xml.etree.ElementTree as ET

RESULT = re.compile(r"^(\s*)(ok|not ok) \d+ (.*?)(\s+#\s*(SKIP|skip).*)?$")


def junit(path):
    """(passed, failed, skipped) from a JUnit XML report, failed=1 if absent."""
    try:
        root = ET.parse(path).getroot()
    except (OSError, ET.ParseError) as e:
        print(f"no pytest report: {e}")
        return 0, 1, 0
    suites = [root] if root.tag == "testsuite" else root.findall("testsuite")
    tests = sum(int(s.get("tests", 0)) for s in suites)
    bad = sum(int(s.get("failures", 0)) + int(s.get("errors", 0))
              for s in suites)
    skip = sum(int(s.get("skipped", 0)) for s in suites)
    return tests - bad - skip, bad, skip


def ktap(lines):
    """(passed, failed, skipped) over KTAP leaf results: a result is a parent
    (a suite, or a parameterised case) when the result just before it is
    nested deeper, since children report before their parent."""
    results = []
    for line in lines:
        m = RESULT.match(line.rstrip("\n"))
        if m:
            results.append((len(m.group(1)), m.group(2), m.group(3),
                            bool(m.group(4))))
    passed = failed = skipped = 0
    for i, (indent, status, name, skip) in enumerate(results):
        if i and results[i - 1][0] > indent:
            continue
        if skip:
            skipped += 1
        elif status == "ok":
            passed += 1
        else:
            failed += 1
            print(f"KUnit case failed: {name}")
    return passed, failed, skipped


def main():
    stage, rc, xml = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    p, f, s = junit(xml)
    print(f"  pytest: {p} passed, {f} failed, {s} skipped")
    if len(sys.argv) > 4:
        try:
            with open(sys.argv[4]) as fh:
                kp, kf, ks = ktap(fh)
            if kp + kf == 0:
                print("  KUnit: no results in the KTAP output")
                kf = 1
        except OSError as e:
            print(f"  KUnit: no KTAP output: {e}")
            kp, kf, ks = 0, 1, 0
        print(f"  kunit: {kp} passed, {kf} failed, {ks} skipped")
        p, f, s = p + kp, f + kf, s + ks
    if rc and not f:
        print(f"  the guest run failed (exit {rc}) with no failed test: "
              "counted as one failure")
        f = 1
    print(f"{stage}: {p} passed, {f} failed" + (f", {s} skipped" if s else ""))
    return 1 if f else 0


if __name__ == "__main__":
    sys.exit(main())
