"""fio runs, waits and dm events for dm-hottier's routing and fault tests.

Runs inside the guest (scripts/vm-run.sh) as root.
"""

import json
import os
import signal
import subprocess
import threading
import time

import devices


def parse_fio(stdout):
    """fio's JSON report; warnings printed before it are skipped."""
    return json.loads(stdout[stdout.index("{"):])


def fio_cmd(path, *args):
    return ["fio", f"--filename={path}", "--direct=1", "--ioengine=libaio",
            "--output-format=json", *args]


def fio(path, *args):
    """Run fio to its end; returns (exit code, JSON report or None, stderr).

    The exit code is returned, not checked: a fault test must see fio's
    errors itself and print them.
    """
    r = subprocess.run(fio_cmd(path, *args), capture_output=True, text=True)
    try:
        report = parse_fio(r.stdout)
    except ValueError:
        report = None
    return r.returncode, report, r.stdout[-3000:] + r.stderr[-3000:]


class Fio:
    """fio in the background while the with-block runs (faults injected,
    tunables changed, counters sampled); wait() gives what fio() gives."""

    def __init__(self, path, *args):
        self.cmd = fio_cmd(path, *args)

    def __enter__(self):
        self.proc = subprocess.Popen(self.cmd, stdout=subprocess.PIPE,
                                     stderr=subprocess.PIPE, text=True)
        return self

    def running(self):
        return self.proc.poll() is None

    def wait(self, timeout=300):
        out, err = self.proc.communicate(timeout=timeout)
        try:
            report = parse_fio(out)
        except ValueError:
            report = None
        return self.proc.returncode, report, out[-3000:] + err[-3000:]

    def stop(self):
        """End a time-based run early: fio reports what it did on SIGINT."""
        if self.running():
            self.proc.send_signal(signal.SIGINT)
        return self.wait()

    def __exit__(self, *exc):
        if self.running():
            self.proc.kill()
            self.proc.communicate()


class Background:
    """A thread running the subclass's _run() while the with-block runs;
    _run() loops until self.stop is set, which leaving the block does
    before joining it."""

    def __init__(self):
        self.stop = threading.Event()
        self.thread = threading.Thread(target=self._run)

    def _run(self):
        raise NotImplementedError

    def __enter__(self):
        self.thread.start()
        return self

    def __exit__(self, *exc):
        self.stop.set()
        self.thread.join()


def job_errors(report):
    """The error (errno) of every job of a report: all 0 when clean."""
    return [j.get("error", 0) for j in report["jobs"]]


def total(report, ddir, key):
    return sum(j[ddir][key] for j in report["jobs"])


def lat_percentile(report, pct, ddir="read"):
    """A total-latency percentile (--lat_percentiles=1) in microseconds,
    the worst over the jobs of the report."""
    key = f"{pct:.6f}"
    return max(j[ddir]["lat_ns"]["percentile"][key] for j in report["jobs"]
               ) / 1000.0


def wait_until(pred, timeout=60.0, step=0.2, what="condition"):
    """Poll pred() until it returns something true; return that."""
    deadline = time.monotonic() + timeout
    while True:
        v = pred()
        if v:
            return v
        if time.monotonic() > deadline:
            raise TimeoutError(f"{what} not reached in {timeout}s")
        time.sleep(step)


def event_nr(name):
    """The device-mapper event number of a device (dmsetup info events)."""
    return int(devices.run("dmsetup", "info", "-c", "--noheadings",
                           "-o", "events", name).stdout.strip())


def save(name, data):
    """Write a test's figures as JSON to $HOTTIER_RESULTS/name, if set."""
    out = os.environ.get("HOTTIER_RESULTS")
    if out:
        with open(os.path.join(out, name), "w") as f:
            json.dump(data, f, indent=1)
