#!/usr/bin/env python3
"""Boots one VM of the VM test tier, serves the guest's requests to the host, and reports.

    vmrun.py --kernel VMLINUX --initrd INITRD --workdir DIR --expect NAME... [--timeout S]

The guest (Tests/vm/init) runs the scenarios baked into INITRD and writes markers to the
serial console (DIR/serial.log). Its second serial port is a control channel to this process:
the guest sends "call ID COMMAND ARGS" lines, this process does the command (QMP input,
hot-plug, sleeping) and answers "done ID ok [DATA]" or "done ID error MESSAGE".

Prints one line per expected scenario (PASS/FAIL/SKIP with its time) and, for a failure, the
scenario's part of the serial log (its output and its log files). Exit status 0 when every
expected scenario passed or skipped, 1 otherwise.
"""

import argparse
import os
import re
import select
import socket
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from qmp import QMP, QMPError, parse_device_spec  # noqa: E402


class Guest:
    """The control channel: a Unix socket QEMU's second serial port connects to."""

    def __init__(self, path):
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(1)
        self.conn = None
        self.buffer = b""


def handle(qmp_path, state, line):
    """Runs one guest request; returns the reply line."""
    match = re.match(r"call (\S+) (\S+) ?(.*)$", line)
    if not match:
        return None
    call_id, command, rest = match.groups()
    args = rest.split()
    try:
        if state.get("qmp") is None:
            state["qmp"] = QMP(qmp_path)
        q = state["qmp"]
        data = ""
        if command == "key-down":
            q.key(args[0], True, *(args[1:2]))
        elif command == "key-up":
            q.key(args[0], False, *(args[1:2]))
        elif command == "press":
            data = f"{q.press(args[0], float(args[1]), *(args[2:3])):.1f}"
        elif command == "device_add":
            driver, properties = parse_device_spec(args[0])
            q.device_add(driver, **properties)
        elif command == "device_del":
            q.device_del(args[0])
        elif command == "hmp":
            data = q.hmp(rest).strip().replace("\n", " | ")
        elif command == "sleep":
            time.sleep(float(args[0]) / 1000.0)
        else:
            raise QMPError(f"unknown host command '{command}'")
        return f"done {call_id} ok {data}".rstrip()
    except (QMPError, OSError, IndexError, ValueError) as error:
        return f"done {call_id} error {error}"


def boot(args):
    os.makedirs(args.workdir, exist_ok=True)
    serial_log = os.path.join(args.workdir, "serial.log")
    ctl_path = os.path.join(args.workdir, "ctl.sock")
    qmp_path = os.path.join(args.workdir, "qmp.sock")
    for path in (serial_log, ctl_path, qmp_path):
        if os.path.exists(path):
            os.unlink(path)
    guest = Guest(ctl_path)
    command = [
        "qemu-system-x86_64", "-accel", "tcg", "-m", "512", "-smp", "1",
        "-nic", "none", "-display", "none", "-no-reboot",
        "-kernel", args.kernel, "-initrd", args.initrd,
        "-append", "console=ttyS0 quiet panic=-1",
        "-serial", f"file:{serial_log}",
        "-chardev", f"socket,id=ctl,path={ctl_path}", "-serial", "chardev:ctl",
        "-qmp", f"unix:{qmp_path},server=on,wait=off",
        "-device", "qemu-xhci,id=xhci",
        # A display device with an id, so a keyboard can be bound to its console
        # (usb-kbd,display=vga0) and input-send-event can target it (console vga0).
        "-vga", "none", "-device", "VGA,id=vga0",
    ] + args.qemu_arg
    started = time.monotonic()
    qemu = subprocess.Popen(command, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.STDOUT)
    state = {}
    timed_out = False
    deadline = started + args.timeout
    while qemu.poll() is None:
        remaining = deadline - time.monotonic()
        if remaining <= 0:
            timed_out = True
            qemu.kill()
            break
        sockets = [guest.conn or guest.listener]
        readable, _, _ = select.select(sockets, [], [], min(remaining, 0.2))
        if guest.listener in readable:
            guest.conn, _ = guest.listener.accept()
        elif guest.conn is not None and guest.conn in readable:
            chunk = guest.conn.recv(4096)
            if not chunk:
                guest.conn.close()
                guest.conn = None
                continue
            guest.buffer += chunk
            while b"\n" in guest.buffer:
                raw, guest.buffer = guest.buffer.split(b"\n", 1)
                reply = handle(qmp_path, state, raw.decode(errors="replace").strip("\r"))
                if reply is not None:
                    guest.conn.sendall(reply.encode() + b"\n")
    qemu_output = qemu.communicate()[0].decode(errors="replace")
    elapsed = time.monotonic() - started
    if state.get("qmp") is not None:
        state["qmp"].close()
    for path in (ctl_path, qmp_path):
        if os.path.exists(path):
            os.unlink(path)
    return serial_log, elapsed, timed_out, qemu.returncode, qemu_output


def parse(serial_log):
    """Splits the serial log into per-scenario sections and results."""
    results, sections, boot_time, done = {}, {}, None, False
    current = None
    with open(serial_log, errors="replace") as log:
        for line in log:
            line = line.rstrip("\r\n")
            marker = re.match(r"@@vm (\w+) ?(.*)$", line)
            if marker:
                kind, rest = marker.groups()
                if kind == "boot":
                    boot_time = float(rest.split()[0])
                elif kind == "begin":
                    current = rest.split()[0]
                    sections[current] = []
                elif kind == "result":
                    name, verdict, *details = rest.split()
                    results[name] = (verdict, " ".join(details))
                    current = None
                elif kind == "done":
                    done = True
                elif current is not None:
                    sections[current].append(line)
                continue
            if current is not None:
                sections[current].append(line)
    return results, sections, boot_time, done


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--kernel", required=True)
    parser.add_argument("--initrd", required=True)
    parser.add_argument("--workdir", required=True)
    parser.add_argument("--timeout", type=float, default=300)
    parser.add_argument("--expect", nargs="*", default=[])
    # Extra qemu arguments, one per option (e.g. the bench tier's 9p share of the host's /usr).
    parser.add_argument("--qemu-arg", action="append", default=[])
    args = parser.parse_args()

    serial_log, elapsed, timed_out, returncode, qemu_output = boot(args)
    results, sections, boot_time, done = parse(serial_log)
    failed = False
    boot_note = f"guest ready at {boot_time:.2f} s" if boot_time is not None else "guest never became ready"
    print(f"vm: {os.path.basename(args.workdir)}: {elapsed:.1f} s boot-to-poweroff ({boot_note})")
    for name in args.expect:
        verdict, details = results.get(name, ("FAIL", "no result (the VM stopped before it ran)"))
        ms = re.search(r"ms=(\d+)", details)
        took = f" ({int(ms.group(1)) / 1000:.1f} s)" if ms else ""
        print(f"{verdict} {name}{took}" + ("" if verdict != "FAIL" else f" — {details}"))
        if verdict == "FAIL":
            failed = True
            print(f"---- {name}: scenario output and logs (serial) ----")
            for line in sections.get(name, []):
                print(f"  | {line}")
            print(f"---- end of {name} ----")
    if timed_out or not done or returncode != 0 or any(n not in results for n in args.expect):
        failed = True
        why = "timed out" if timed_out else f"qemu exit status {returncode}" if returncode != 0 else "no @@vm done"
        print(f"vm: {os.path.basename(args.workdir)}: the VM did not finish cleanly ({why}); serial log tail:")
        with open(serial_log, errors="replace") as log:
            for line in log.readlines()[-60:]:
                print(f"  | {line.rstrip()}")
        if qemu_output.strip():
            print("qemu said:\n" + qemu_output)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
