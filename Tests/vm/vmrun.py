#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Boots one VM of the VM test tier, serves the guest's requests to the host, and reports.

    vmrun.py --kernel VMLINUX --initrd INITRD --workdir DIR --expect NAME... [--timeout S] [--net]

The guest (Tests/vm/init) runs the scenarios baked into INITRD and writes markers to the
serial console (DIR/serial.log). Its second serial port is a control channel to this process:
the guest sends "call ID COMMAND ARGS" lines, this process does the command (QMP input,
hot-plug, sleeping) and answers "done ID ok [DATA]" or "done ID error MESSAGE".

--net (a batch with a `# needs: net` scenario): the VM gets a virtio-net NIC on qemu's user-mode
network with restrict=on, so the guest reaches nothing but one forwarded address,
10.0.2.100:1883, which leads to Debian's mosquitto that this process runs on the host's
loopback for the boot (a free port, a generated configuration); host-side MQTT subscribers
are started on the guest's request (`mqtt-sub`, `mqtt-log`). All of them are stopped when the
VM has powered off, however it ended.

Prints one line per expected scenario (PASS/FAIL/SKIP with its time) and, for a failure, the
scenario's part of the serial log (its output and its log files). Exit status 0 when every
expected scenario passed or skipped, 1 otherwise.
"""

import argparse
import base64
import os
import pwd
import re
import select
import shlex
import signal
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


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class HostNet:
    """The host side of a `--net` VM: mosquitto on loopback, reached from the guest through
    qemu's guestfwd (one netfwd.py relay per guest connection), and subscribers on it."""

    GUEST_ADDRESS = "10.0.2.100"
    GUEST_PORT = 1883
    READY_TOPIC = "vmrun/ready"

    def __init__(self, workdir):
        self.workdir = workdir
        self.port = free_port()
        self.broker = None
        self.subscribers = {}
        self.log = os.path.join(workdir, "host-mosquitto.log")

    def start(self):
        for tool in ("/usr/sbin/mosquitto", "/usr/bin/mosquitto_sub", "/usr/bin/mosquitto_pub"):
            if not os.access(tool, os.X_OK):
                raise RuntimeError(f"--net needs {tool} on the host (make deps installs mosquitto, mosquitto-clients)")
        conf = os.path.join(self.workdir, "host-mosquitto.conf")
        with open(conf, "w") as f:
            # `user`: whoever runs the tier (as root, mosquitto would switch to the user
            # mosquitto, who cannot write this log).
            f.write(f"user {pwd.getpwuid(os.getuid()).pw_name}\nlistener {self.port} 127.0.0.1\n"
                    f"allow_anonymous true\npersistence false\nlog_dest file {self.log}\nlog_type all\n")
        self.broker = subprocess.Popen(["/usr/sbin/mosquitto", "-c", conf], stdin=subprocess.DEVNULL,
                                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + 20
        while True:
            if self.broker.poll() is not None:
                raise RuntimeError(f"the host's mosquitto exited (status {self.broker.returncode}); see {self.log}")
            with socket.socket() as s:
                if s.connect_ex(("127.0.0.1", self.port)) == 0:
                    return
            if time.monotonic() > deadline:
                raise RuntimeError(f"the host's mosquitto does not listen on 127.0.0.1:{self.port}; see {self.log}")
            time.sleep(0.05)

    def qemu_args(self):
        relay = os.path.join(os.path.dirname(os.path.abspath(__file__)), "netfwd.py")
        command = " ".join(shlex.quote(a) for a in (sys.executable, relay, "127.0.0.1", str(self.port)))
        if "," in command:
            raise RuntimeError(f"the relay's command line must not contain a comma (qemu's option syntax): {command}")
        return ["-netdev", f"user,id=net0,restrict=on,"
                f"guestfwd=tcp:{self.GUEST_ADDRESS}:{self.GUEST_PORT}-cmd:{command}",
                "-device", "virtio-net-pci,netdev=net0"]

    def subscribe(self, name, topics):
        """mosquitto_sub on the host's broker, each message a line "RETAIN TOPIC PAYLOAD" in
        DIR/mqtt-NAME.log; returns once it is subscribed (it received its own ready message)."""
        if not re.fullmatch(r"[A-Za-z0-9_-]+", name) or name in self.subscribers or not topics:
            raise ValueError(f"mqtt-sub: a new subscriber name ([A-Za-z0-9_-]) and topics, not '{name}' {topics}")
        path = os.path.join(self.workdir, f"mqtt-{name}.log")
        ready = f"{self.READY_TOPIC}/{name}"
        args = ["/usr/bin/mosquitto_sub", "-h", "127.0.0.1", "-p", str(self.port), "-q", "1", "-F", "%r %t %p",
                "-t", ready]
        for topic in topics:
            args += ["-t", topic]
        out = open(path, "wb")
        self.subscribers[name] = (subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=out,
                                                   stderr=subprocess.STDOUT), path)
        out.close()
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            subprocess.run(["/usr/bin/mosquitto_pub", "-h", "127.0.0.1", "-p", str(self.port), "-t", ready, "-m", "x"],
                           stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=10)
            with open(path, "rb") as f:
                if f"0 {ready} x".encode() in f.read():
                    return
            if self.subscribers[name][0].poll() is not None:
                break
            time.sleep(0.1)
        with open(path, errors="replace") as f:
            raise RuntimeError(f"the host's mosquitto_sub {name} did not subscribe: {f.read().strip()[-300:]}")

    def messages(self, name):
        """What subscriber NAME received so far (its ready messages left out), base64."""
        if name not in self.subscribers:
            raise ValueError(f"mqtt-log: no host subscriber '{name}'")
        with open(self.subscribers[name][1], "rb") as f:
            lines = [l for l in f.read().splitlines(keepends=True) if not l.startswith(f"0 {self.READY_TOPIC}/".encode())]
        return base64.b64encode(b"".join(lines)).decode()

    def stop(self):
        for proc, _ in self.subscribers.values():
            stop_process(proc)
        if self.broker is not None:
            stop_process(self.broker)


def stop_process(proc):
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def handle(qmp_path, state, line):
    """Runs one guest request; returns the reply line."""
    match = re.match(r"call (\S+) (\S+) ?(.*)$", line)
    if not match:
        return None
    call_id, command, rest = match.groups()
    args = rest.split()
    try:
        data = ""
        if command.startswith("mqtt-"):
            net = state.get("net")
            if net is None:
                raise QMPError("this VM has no network (the runner gives it to a batch with a `# needs: net` scenario)")
            if command == "mqtt-sub":
                net.subscribe(args[0], args[1:])
            elif command == "mqtt-log":
                data = net.messages(args[0])
            else:
                raise QMPError(f"unknown host command '{command}'")
            return f"done {call_id} ok {data}".rstrip()
        if state.get("qmp") is None:
            state["qmp"] = QMP(qmp_path)
        q = state["qmp"]
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
    except (QMPError, OSError, IndexError, ValueError, RuntimeError, subprocess.SubprocessError) as error:
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
    state = {}
    nic = ["-nic", "none"]
    try:
        if args.net:
            state["net"] = HostNet(args.workdir)
            state["net"].start()
            nic = state["net"].qemu_args()
        return run_qemu(args, guest, state, nic, serial_log, ctl_path, qmp_path)
    finally:
        if "net" in state:
            state["net"].stop()


def run_qemu(args, guest, state, nic, serial_log, ctl_path, qmp_path):
    command = [
        "qemu-system-x86_64", "-accel", "tcg", "-m", "512", "-smp", "1",
        *nic, "-display", "none", "-no-reboot",
        "-kernel", args.kernel, "-initrd", args.initrd,
        # no_timer_check: the kernel's boot-time check that the timer interrupt arrives, a
        # busy-wait against the emulated clock, panics ("IO-APIC + timer doesn't work") when
        # the host is too loaded to run the guest's CPU in time; the timer works regardless.
        "-append", "console=ttyS0 quiet panic=-1 no_timer_check",
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
    try:
        return serve(args, guest, state, qemu, started, serial_log, ctl_path, qmp_path)
    finally:
        # Whatever ended this (a SIGTERM of the runner included): no qemu left behind.
        if qemu.poll() is None:
            qemu.kill()
            qemu.wait()


def serve(args, guest, state, qemu, started, serial_log, ctl_path, qmp_path):
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
    parser.add_argument("--net", action="store_true",
                        help="a restricted user-mode NIC to the host's MQTT broker at 10.0.2.100:1883 (see above)")
    args = parser.parse_args()

    # A SIGTERM (the runner stopped) unwinds through boot()'s cleanup: qemu and the host's
    # broker and subscribers are stopped, not left running.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        serial_log, elapsed, timed_out, returncode, qemu_output = boot(args)
    except RuntimeError as error:
        print(f"vm: {os.path.basename(args.workdir)}: cannot start the host's side of the network: {error}")
        for name in args.expect:
            print(f"FAIL {name} — the VM was not booted")
        return 1
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
