#!/usr/bin/env python3
"""A stand-in for dmsetup in hottierctl's host tests.

    fake_dmsetup.py STATE.json <dmsetup arguments...>

STATE.json holds {"targets": [...], "devices": {name: {"table": ...,
"status": ..., "messages": {message: output}, "effects": {message:
{path: text}}}}, "fail": {message,
"create", "remove", "reload", "resume" or "clear": error line}; a
reload's table is "inactive" until a resume; with "fail_once", a
reload, resume or clear fails only once, "create_leaves": bool, "log": [...]}; every call is
appended to "log" and creates and removes change "devices"; a message
that succeeds writes the files its "effects" name (sysfs values it
changes).
"""

import json
import sys


def fail(line):
    print(line, file=sys.stderr)
    print("Command failed.", file=sys.stderr)
    return 1


def list_tables(devices, args):
    if not devices:
        print("No devices found")
    for name, dev in devices.items():
        if args[1:] != ["--target", "hottier"] or " hottier " in dev["table"]:
            print(f"{name}: {dev['table']}")


def run(state, args):
    devices = state["devices"]
    cmd, name = args[0], (args[1] if len(args) > 1 else None)
    if cmd == "targets":
        print("".join(f"{t}  v1.0.0\n" for t in state["targets"]), end="")
    elif cmd == "table" and (name is None or name.startswith("--")):
        list_tables(devices, args)
    elif cmd == "create":
        table = args[args.index("--table") + 1]
        if "create" in state.get("fail", {}):
            if state.get("create_leaves"):
                devices[name] = {"table": "", "status": ""}
            return fail(state["fail"]["create"])
        devices[name] = {"table": table, "status": "",
                         "uuid": args[args.index("--uuid") + 1]}
    elif name not in devices:
        return fail(f"Device {name} not found")
    elif cmd in ("table", "status"):
        print(devices[name][cmd])
    elif cmd == "info":
        print(f"Name:              {name}")
    elif cmd == "remove":
        if "remove" in state.get("fail", {}):
            return fail(state["fail"]["remove"])
        del devices[name]
    elif cmd in ("reload", "resume", "clear"):
        if cmd in state.get("fail", {}):
            line = state["fail"][cmd]
            if state.get("fail_once"):
                del state["fail"][cmd]
            return fail(line)
        dev = devices[name]
        if cmd == "reload":
            dev["inactive"] = args[args.index("--table") + 1]
        elif cmd == "resume" and "inactive" in dev:
            dev["table"] = dev.pop("inactive")
        else:
            dev.pop("inactive", None)
    elif cmd == "message":
        message = " ".join(args[3:])
        if message in state.get("fail", {}):
            return fail(state["fail"][message])
        for path, text in devices[name].get("effects", {}).get(
                message, {}).items():
            with open(path, "w") as f:
                f.write(text)
        print(devices[name].get("messages", {}).get(message, ""))
    else:
        return fail(f"fake dmsetup: {cmd} not faked")
    return 0


def main():
    path, args = sys.argv[1], sys.argv[2:]
    with open(path) as f:
        state = json.load(f)
    state.setdefault("log", []).append(args)
    rc = run(state, args)
    with open(path, "w") as f:
        json.dump(state, f)
    return rc


if __name__ == "__main__":
    sys.exit(main())
