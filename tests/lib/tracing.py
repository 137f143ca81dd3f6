"""blktrace on a member device: where I/O really went."""

import signal
import subprocess
import time


class Blktrace:
    """Trace one block device while the with-block runs.

    events() gives (action, rwbs, sector, nr_sectors) tuples from blkparse's
    default output; queued() keeps the 'Q' (queued) events only.
    """

    def __init__(self, dev):
        self.dev = dev
        self.lines = []

    def __enter__(self):
        self.proc = subprocess.Popen(
            ["blktrace", "-d", self.dev, "-o", "-"],
            stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
        self.parse = subprocess.Popen(
            ["blkparse", "-q", "-i", "-"], stdin=self.proc.stdout,
            stdout=subprocess.PIPE, text=True)
        self.proc.stdout.close()
        time.sleep(1.0)     # blktrace sets up its relay channels
        return self

    def __exit__(self, *exc):
        time.sleep(0.5)
        self.proc.send_signal(signal.SIGINT)
        self.proc.wait(timeout=30)
        out, _ = self.parse.communicate(timeout=30)
        self.lines = out.splitlines()

    def events(self):
        for line in self.lines:
            f = line.split()
            # dev cpu seq time pid action rwbs [sector + nr] ...
            if len(f) < 7 or "," not in f[0]:
                continue
            sector = nr = None
            if len(f) >= 10 and f[8] == "+":
                sector, nr = int(f[7]), int(f[9])
            yield f[5], f[6], sector, nr

    def queued(self):
        return [e for e in self.events() if e[0] == "Q"]

    def count(self, rwbs_flag):
        """Queued bios whose RWBS field contains rwbs_flag ('R', 'W', 'F')."""
        return sum(1 for e in self.queued() if rwbs_flag in e[1])
