"""One blktrace for make bench's report (issue 14, item 3): the zipf
workload of tests/bench/zipf.py runs on dm-hottier over fresh emulated
devices (the same HDD, SSD and extent), and once it has run --warm
seconds, hottierctl trace records the device and both members for
--trace seconds: reads and writes per member, Q2C latency, the SSD's share
of the reads, the target's own copies, and iowatcher's graph.

  trace_run.py --out DIR [--warm S] [--trace S] [--extent N] [--ssd-mb N]

Writes DIR/trace.json (hottierctl trace --json), DIR/trace.txt (its text
form) and DIR/trace.svg. Runs inside the guest as root with dm-mod,
null_blk (nr_devices=0) and dm-hottier loaded; the host converts the SVG
to PNG (scripts/bench.sh).
"""

import argparse
import json
import os
import subprocess
import sys
import time
import types

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import benchlib as bl  # noqa: E402  (puts tests/lib on the path)
from zipf import FIO_JOB  # noqa: E402

REPO = os.path.dirname(os.path.dirname(HERE))
HOTTIERCTL = os.path.join(REPO, "userspace", "hottierctl")
sys.path.insert(0, os.path.join(REPO, "userspace"))
from hottier.trace import trace_lines  # noqa: E402


def params(extent, ssd_mb):
    p = types.SimpleNamespace(extent=extent, ssd_mb=ssd_mb,
                              hdd_mb=8 * ssd_mb, hottier_args="")
    p.usable_sectors = ssd_mb * 2048
    p.hottier_ssd_sectors = bl.hottier_ssd_sectors(p.usable_sectors, extent)
    p.ssd_nullb_mb = -(-p.hottier_ssd_sectors // 2048)
    return p


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--warm", type=int, default=30,
                    help="seconds of zipf before the trace starts")
    ap.add_argument("--trace", type=int, default=10,
                    help="seconds traced")
    ap.add_argument("--extent", type=int, default=128)
    ap.add_argument("--ssd-mb", type=int, default=128)
    a = ap.parse_args()
    if a.warm < 0 or a.trace < 1:
        sys.exit("--warm must be 0 or more and --trace 1 or more")
    os.makedirs(a.out, exist_ok=True)
    p = params(a.extent, a.ssd_mb)
    cfg = {"name": "hottier", "kind": "hottier", "unit": a.extent,
           "label": "dm-hottier"}
    runtime = a.warm + a.trace + 10
    with bl.Stack(p, cfg, prefix="bt_") as st:
        fio = subprocess.Popen(
            ["fio", "--name=zipf", f"--filename={st.dev.path}", *FIO_JOB,
             f"--runtime={runtime}", "--output-format=json",
             f"--output={os.path.join(a.out, 'fio.json')}"],
            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
        try:
            print(f"trace_run: zipf on {st.dev.name} for {runtime} s; the "
                  f"trace starts after {a.warm} s", flush=True)
            time.sleep(a.warm)
            svg = os.path.join(a.out, "trace.svg")
            r = subprocess.run([HOTTIERCTL, "trace", "--json", "--svg", svg,
                                st.dev.name, str(a.trace)],
                               capture_output=True, text=True)
            if r.returncode:
                sys.exit(f"hottierctl trace failed ({r.returncode}): "
                         f"{r.stderr.strip()}")
            rec = json.loads(r.stdout)
        finally:
            _, err = fio.communicate()
        if fio.returncode:
            sys.exit(f"fio failed ({fio.returncode}): {err.strip()}")
    rec["workload"] = {"fio": FIO_JOB, "runtime_s": runtime,
                       "warm_s": a.warm, "extent_sectors": a.extent,
                       "ssd_usable_mb": a.ssd_mb, "hdd_mb": p.hdd_mb}
    with open(os.path.join(a.out, "trace.json"), "w") as f:
        json.dump(rec, f, indent=1)
    text = "\n".join(trace_lines(rec)) + "\n"
    with open(os.path.join(a.out, "trace.txt"), "w") as f:
        f.write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
