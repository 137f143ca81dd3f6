#!/usr/bin/env python3
"""Plug a disk that scripts/boot-run.sh defined with --hotplug NAME=FILE
into the running guest, through QEMU's QMP socket.

    scripts/qmp.py SOCKET plug NAME

It becomes the virtio-blk disk --disk NAME=FILE would have been at boot
(serial NAME: /dev/disk/by-id/virtio-NAME in the guest), behind the PCIe
root port hp-NAME, which the guest's pciehp driver sees. Exit 0 once QEMU
has accepted it; the guest finds it a moment later."""

import json
import socket
import sys


def command(f, sock, execute, **arguments):
    msg = {"execute": execute}
    if arguments:
        msg["arguments"] = arguments
    sock.sendall(json.dumps(msg).encode() + b"\n")
    while True:
        reply = json.loads(f.readline())
        if "return" in reply:
            return reply["return"]
        if "error" in reply:
            raise RuntimeError(f"{execute}: {reply['error'].get('desc')}")
        # an event ("event": ...): read on


def main():
    if len(sys.argv) != 4 or sys.argv[2] != "plug":
        print(__doc__.strip().splitlines()[3].strip(), file=sys.stderr)
        return 2
    path, name = sys.argv[1], sys.argv[3]
    with socket.socket(socket.AF_UNIX) as sock:
        sock.settimeout(30)
        sock.connect(path)
        f = sock.makefile("r")
        json.loads(f.readline())            # the greeting
        command(f, sock, "qmp_capabilities")
        command(f, sock, "device_add", driver="virtio-blk-pci",
                drive=f"hd-{name}", serial=name, bus=f"hp-{name}",
                id=f"dev-{name}")
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except (OSError, RuntimeError, ValueError) as e:
        print(f"qmp: {e}", file=sys.stderr)
        sys.exit(1)
