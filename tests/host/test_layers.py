"""scripts/layers.py on objects compiled here: it passes a graph whose
calls go down, and names the circle, the call up from the pure core, and
the file with no layer."""

import os
import subprocess
import sys

import pytest

REPO = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
SCRIPT = os.path.join(REPO, "scripts", "layers.py")


def objects(tmp_path, files):
    """dm-hottier-<name>.o for each {name: (defines, calls)}."""
    for name, (defines, calls) in files.items():
        src = tmp_path / f"dm-hottier-{name}.c"
        lines = [f"void {c}(void);" for c in calls]
        body = " ".join(f"{c}();" for c in calls)
        for d in defines:
            lines.append(f"void {d}(void) {{ {body} }}")
        src.write_text("\n".join(lines) + "\n")
        subprocess.run(["gcc", "-c", "-o", str(src.with_suffix(".o")),
                        str(src)], check=True)
    return tmp_path


def run(path):
    return subprocess.run([sys.executable, SCRIPT, str(path)],
                          capture_output=True, text=True)


@pytest.fixture
def cc():
    if subprocess.run(["which", "gcc"], capture_output=True).returncode:
        pytest.skip("no gcc")


def test_calls_going_down_pass(tmp_path, cc):
    r = run(objects(tmp_path, {
        "map": (["map_find"], []),
        "policy": (["policy_next"], ["map_find"]),
        "core": (["slot_put"], ["map_find", "policy_next"]),
        "persist": (["persist_sync"], ["slot_put"]),
        "io": (["io_map"], ["persist_sync", "slot_put"]),
        "target": (["target_ctr"], ["io_map", "persist_sync"]),
    }))
    assert r.returncode == 0, r.stdout
    assert r.stdout.splitlines()[-1] == "layers: 1 passed, 0 failed"


def test_a_circle_is_named_with_its_calls(tmp_path, cc):
    r = run(objects(tmp_path, {
        "persist": (["persist_sync"], ["ssd_error"]),
        "io": (["ssd_error"], ["persist_sync"]),
    }))
    assert r.returncode == 1
    fails = [ln for ln in r.stdout.splitlines() if ln.startswith("FAIL")]
    assert any("circle of 2 files: io, persist" in ln and
               "io -> persist (persist_sync)" in ln and
               "persist -> io (ssd_error)" in ln for ln in fails), fails
    assert any("a call up: persist (clients) -> io (io): ssd_error" in ln
               for ln in fails), fails


def test_a_call_up_from_the_pure_core_fails(tmp_path, cc):
    r = run(objects(tmp_path, {
        "policy": (["policy_next"], ["persist_drop"]),
        "persist": (["persist_drop"], []),
    }))
    assert r.returncode == 1
    assert ("FAIL a call up from the pure core: policy (pure core) -> "
            "persist (clients): persist_drop") in r.stdout


def test_a_file_in_no_layer_fails(tmp_path, cc):
    r = run(objects(tmp_path, {"extra": (["extra_fn"], [])}))
    assert r.returncode == 1
    assert "dm-hottier-extra.o is in no layer" in r.stdout


def test_no_objects_fails(tmp_path):
    r = run(tmp_path)
    assert r.returncode == 1
    assert r.stdout.splitlines()[-1] == "layers: 0 passed, 1 failed"
