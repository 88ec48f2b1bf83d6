#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""A small QMP client (python3 stdlib only) for driving QEMU's input devices from the host.

As a library (vmrun.py uses it):
    q = QMP("/path/qmp.sock"); q.key("a", down=True); q.device_add("usb-kbd", id="kbd1", bus="xhci.0")

As a command, against a running QEMU started with -qmp unix:SOCK,server=on,wait=off:
    qmp.py SOCK key-down a | key-up a | press a 700 | device_add usb-kbd,bus=xhci.0,id=kbd1
           | device_del kbd1 | hmp 'sendkey volumeup 700' | raw '{"execute": "query-status"}'

The QMP gotcha this handles: input-send-event's optional `device` is a *display console*
(the id of a display device, plus `head`), not the keyboard's id. Events without it go to the
most recently activated keyboard. To target one keyboard of several, give it a console
(`usb-kbd,display=video0`) and pass console="video0" here.
"""

import json
import socket
import sys
import time


class QMPError(Exception):
    pass


class QMP:
    def __init__(self, path, timeout=10.0):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(path)
        self.buffer = b""
        self.events = []
        greeting = self._read()
        if "QMP" not in greeting:
            raise QMPError(f"not a QMP greeting: {greeting}")
        self.execute("qmp_capabilities")

    def close(self):
        self.sock.close()

    def _read(self):
        while b"\n" not in self.buffer:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise QMPError("QMP connection closed")
            self.buffer += chunk
        line, self.buffer = self.buffer.split(b"\n", 1)
        return json.loads(line)

    def execute(self, command, **arguments):
        """Runs one command and returns its "return" value; asynchronous events are kept in
        self.events."""
        message = {"execute": command}
        if arguments:
            message["arguments"] = arguments
        self.sock.sendall(json.dumps(message).encode() + b"\n")
        while True:
            reply = self._read()
            if "event" in reply:
                self.events.append(reply)
                continue
            if "error" in reply:
                raise QMPError(f"{command}: {reply['error'].get('desc', reply['error'])}")
            return reply.get("return")

    def wait_event(self, name, timeout=10.0, match=None):
        """Waits for an asynchronous event (e.g. DEVICE_DELETED) and returns it."""
        deadline = time.monotonic() + timeout
        while True:
            for i, event in enumerate(self.events):
                if event["event"] == name and (match is None or match(event)):
                    return self.events.pop(i)
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                raise QMPError(f"no {name} event within {timeout} s")
            self.sock.settimeout(remaining)
            try:
                self.events.append(self._read())
            except socket.timeout:
                pass
            finally:
                self.sock.settimeout(10.0)

    def key(self, qcode, down, console=None, head=0):
        """Presses (down=True) or releases a key given as a QEMU qcode (a, ctrl, f1, volumeup)."""
        arguments = {"events": [{"type": "key", "data": {"down": down, "key": {"type": "qcode", "data": qcode}}}]}
        if console is not None:
            arguments["device"] = console
            arguments["head"] = head
        self.execute("input-send-event", **arguments)

    def press(self, qcode, milliseconds, console=None):
        """Key down, hold for `milliseconds` (host monotonic clock), key up. Returns the measured
        hold in milliseconds between the two commands' completions."""
        self.key(qcode, True, console)
        start = time.monotonic()
        time.sleep(max(0.0, milliseconds / 1000.0))
        self.key(qcode, False, console)
        return (time.monotonic() - start) * 1000.0

    def device_add(self, driver, **properties):
        self.execute("device_add", driver=driver, **properties)

    def device_del(self, device_id, wait=True, timeout=10.0):
        """Unplugs a device; with wait, returns after QEMU reports DEVICE_DELETED."""
        self.execute("device_del", id=device_id)
        if wait:
            self.wait_event("DEVICE_DELETED", timeout, lambda e: e.get("data", {}).get("device") == device_id)

    def hmp(self, command_line):
        return self.execute("human-monitor-command", **{"command-line": command_line})


def parse_device_spec(spec):
    """"usb-kbd,bus=xhci.0,id=kbd1" -> ("usb-kbd", {"bus": "xhci.0", "id": "kbd1"})."""
    parts = spec.split(",")
    properties = {}
    for part in parts[1:]:
        if "=" not in part:
            raise QMPError(f"bad device property '{part}' in '{spec}' (expected key=value)")
        key, value = part.split("=", 1)
        properties[key] = value
    return parts[0], properties


def main(argv):
    if len(argv) < 3:
        print(__doc__, file=sys.stderr)
        return 2
    q = QMP(argv[1])
    command, args = argv[2], argv[3:]
    if command == "key-down":
        q.key(args[0], True)
    elif command == "key-up":
        q.key(args[0], False)
    elif command == "press":
        print(f"{q.press(args[0], float(args[1])):.1f}")
    elif command == "device_add":
        driver, properties = parse_device_spec(args[0])
        q.device_add(driver, **properties)
    elif command == "device_del":
        q.device_del(args[0])
    elif command == "hmp":
        print(q.hmp(" ".join(args)), end="")
    elif command == "raw":
        message = json.loads(args[0])
        print(json.dumps(q.execute(message["execute"], **message.get("arguments", {}))))
    else:
        print(f"qmp.py: unknown command {command}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
