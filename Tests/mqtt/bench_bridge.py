#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`make bench-mqtt`: actiond-mqtt's figures on the host, printed, never asserted.

- relay latency: actiond's `released` event time (CLOCK_MONOTONIC, from the daemon) to a
  paho subscriber's receipt of the bridge's `short_press` event through mosquitto on the
  loopback, over N short presses from actiond's `press` request (p50, p99, max). The same
  clock on both ends; the key-down → MQTT figure on a real key is the VM's to measure.
- MQTT round trip (publish → state): a switch command (`ON`/`OFF` in turn, a store toggle)
  published by an MQTT client (QoS 1) to its receipt of the new retained state through
  mosquitto, the bridge and actiond: the round trip Home Assistant sees. Split, command by
  command, by a subscriber on actiond's socket: client → broker → bridge → actiond's
  `performing`; actiond's perform (the state store's write and fsync); actiond's
  `performed` → bridge → broker → client. Measured with mosquitto's `set_tcp_nodelay true`
  (docs/home-assistant.md, the broker) and with its default (Nagle on the broker's
  sockets: the state waits for the client's delayed ACK of the command's PUBACK), and
  once more with Nagle on the measuring client too, as paho (Home Assistant's client)
  leaves it: its PUBACK of the last state is unacknowledged for the broker's delayed ACK
  (40 ms), and Nagle holds its next command behind it. See `round_trip`.
- the idle bridge over a window: its voluntary context switches (each one a wake-up of
  its single thread: the keepalive timer and the ping's answer) and its RSS.

`round_trip` is also bench.py's (`make bench`, docs/benchmarks.md).
"""

import argparse
import json
import os
import shutil
import socket
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import DEADLINE, Actiond, Bridge, Broker, Subscriber, actiond_config, wait_for  # noqa: E402

# The set-ups the round trip is measured in: (name, mosquitto.conf lines, the measuring
# client sets TCP_NODELAY, actiond's state directory on tmpfs). On tmpfs the figure is the
# MQTT path (actiond's perform takes 0.1 ms); on the disk it includes the state store's
# fsync, which is the disk's (0.1 to 16 ms on the development host's virtio disk).
NODELAY = "set_tcp_nodelay true\n"
ROUND_TRIP_SETUPS = (
    ("nodelay", NODELAY, True, True),
    ("disk", NODELAY, True, False),
    ("default", "", True, True),
    ("clientNagle", NODELAY, False, True),
)
SETUP_LABELS = {
    "nodelay": "mosquitto set_tcp_nodelay true, state on tmpfs",
    "disk": "mosquitto set_tcp_nodelay true, state on the disk",
    "default": "mosquitto's default (Nagle on), state on tmpfs",
    "clientNagle": "set_tcp_nodelay true, Nagle on the client (as paho), state on tmpfs",
}


def proc_status(pid):
    with open(f"/proc/{pid}/status") as f:
        return dict(line.split(":", 1) for line in f.read().splitlines())


def now_us():
    return time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000


def round_trip(bin_dir, n, broker_conf=NODELAY, client_nodelay=True, tmpfs=True):
    """N switch commands, each sent once the last one's state was received. Returns the
    samples in microseconds: `total` (publish → state received), and per command
    `toActiond` (publish → actiond's `performing` read on its socket), `actiond`
    (`performing` → `performed`) and `fromActiond` (`performed` → the state received).
    A fresh broker, actiond and bridge in a temporary directory, on tmpfs (/dev/shm) with
    `tmpfs` where there is one, else on the disk like /var/lib/actiond (the perform's
    fsync is then in `actiond`)."""
    shm = "/dev/shm" if tmpfs and os.path.isdir("/dev/shm") else None
    work = tempfile.mkdtemp(prefix="actiond-mqtt-rt-", dir=shm)
    broker = Broker(work, extra="allow_anonymous true\n" + broker_conf)
    procs = []
    try:
        broker.start()
        procs.append(broker)
        config, _, _ = actiond_config(work)
        daemon = Actiond(bin_dir, work, config).start()
        procs.append(daemon)
        bridge = Bridge(bin_dir, work, "bridge", ["--host", "127.0.0.1", "--port", str(broker.port), "--socket",
                                                   daemon.socket, "--node-id", "rt", "--device-id", "rt",
                                                   "--log-level", "warning"]).start()
        procs.append(bridge)
        state = "actiond/rt/control/org_test_timer/state"
        command = "actiond/rt/control/org_test_timer/set"
        got = threading.Lock()
        states = []
        sub = Subscriber(broker.port, topics=(state,))
        procs.append(sub)
        # The retained state, recorded by the Subscriber's own handler (it subscribes at once).
        wait_for("the retained OFF", lambda: sub.last(state) == "OFF")
        if client_nodelay:
            sub.client.socket().setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)

        def on_message(client, userdata, m):
            t = now_us()
            with got:
                states.append((t, m.payload))
        sub.client.on_message = on_message
        # actiond's own announcements of each perform, on its socket.
        events = []
        link = socket.socket(socket.AF_UNIX)
        link.connect(daemon.socket)
        lines = link.makefile("rwb")
        lines.readline()  # hello
        lines.write(b'{"id":1,"request":"subscribe","events":["performing","performed"]}\n')
        lines.flush()
        lines.readline()  # the reply

        def read_events():
            for line in lines:
                t = now_us()
                e = json.loads(line)
                with got:
                    events.append((t, e.get("event")))
        threading.Thread(target=read_events, daemon=True).start()

        # From here the client runs on this thread (paho's own loop thread stopped): a
        # publish from another thread than paho's loop now and then never left (paho 1.6.1).
        sub.client.loop_stop()

        def wait(what, predicate):
            end = time.monotonic() + DEADLINE
            while True:
                with got:
                    if predicate():
                        return
                if time.monotonic() > end:
                    raise AssertionError(f"timed out waiting for {what}")
                # Returns as soon as the broker's socket is readable (the state's receipt is
                # stamped in on_message, within this call); the timeout bounds how late
                # actiond's `performed`, read by the other thread, is noticed.
                sub.client.loop(timeout=0.005)

        samples = {"total": [], "toActiond": [], "actiond": [], "fromActiond": []}
        for i in range(n):
            payload = b"ON" if i % 2 == 0 else b"OFF"
            with got:
                s0, e0 = len(states), len(events)
            sent = now_us()
            sub.client.publish(command, payload, qos=1)
            wait("the state", lambda: any(p == payload for _, p in states[s0:])
                 and any(e == "performed" for _, e in events[e0:]))
            with got:
                received = next(t for t, p in states[s0:] if p == payload)
                performing = next(t for t, e in events[e0:] if e == "performing")
                performed = next(t for t, e in events[e0:] if e == "performed")
            samples["total"].append(received - sent)
            samples["toActiond"].append(performing - sent)
            samples["actiond"].append(performed - performing)
            samples["fromActiond"].append(received - performed)
        link.close()
        samples["tmpfs"] = shm is not None
        return samples
    finally:
        for p in reversed(procs):
            if isinstance(p, Subscriber):
                p.stop()
            else:
                p.kill()
        shutil.rmtree(work, ignore_errors=True)


def round_trips(bin_dir, n):
    """`round_trip` in each of ROUND_TRIP_SETUPS: {name: samples}."""
    return {name: round_trip(bin_dir, n, conf, nodelay, tmpfs) for name, conf, nodelay, tmpfs in ROUND_TRIP_SETUPS}


def quantile(samples, percent):
    """Nearest-rank percentile (`percent` an integer), as bench.py's."""
    v = sorted(samples)
    return v[max(1, min(len(v), -(-percent * len(v) // 100))) - 1]


def describe(name, s):
    """One printed line per setup, milliseconds."""
    f = lambda k, p: f"{quantile(s[k], p) / 1000:.2f}"  # noqa: E731
    what = SETUP_LABELS[name] + ("" if s["tmpfs"] or name == "disk" else " (no /dev/shm: on the disk)")
    return (f"bench-mqtt: MQTT round trip, publish → state ({what}; {len(s['total'])} commands): "
            f"p50 {f('total', 50)} ms, p99 {f('total', 99)} ms, max {max(s['total']) / 1000:.2f} ms; "
            f"→ actiond p50 {f('toActiond', 50)}, actiond's perform p50 {f('actiond', 50)}, "
            f"→ client p50 {f('fromActiond', 50)}")


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("-n", type=int, default=300)
    parser.add_argument("--idle", type=int, default=60, help="idle window, seconds")
    args = parser.parse_args()
    for name, samples in round_trips(args.bin, args.n).items():
        print(describe(name, samples), flush=True)
    work = tempfile.mkdtemp(prefix="actiond-mqtt-bench-")
    broker = Broker(work)
    broker.start()
    config, _, _ = actiond_config(work)
    config["assignments"] = {"action": {"hold": "org.test.timer"}}  # no double press: `released` at once
    daemon = Actiond(args.bin, work, config).start()
    bridge = Bridge(args.bin, work, "bridge", ["--host", "127.0.0.1", "--port", str(broker.port), "--socket",
                                               daemon.socket, "--node-id", "b", "--device-id", "b",
                                               "--log-level", "warning"]).start()
    sub = Subscriber(broker.port, topics=("actiond/b/#",))
    received = []
    sub.client.on_message = lambda c, u, m: received.append((now_us(), m.topic, m.payload))
    try:
        wait_for("the bridge's states", lambda: any(t == "actiond/b/daemon" and p == b"online" for _, t, p in received))
        s = socket.socket(socket.AF_UNIX)
        s.connect(daemon.socket)
        f = s.makefile("rwb")
        f.readline()
        samples = []
        for i in range(args.n):
            before = len(received)
            f.write(json.dumps({"id": i, "request": "press", "button": "action"}).encode() + b"\n")
            f.flush()
            got = wait_for("the event", lambda: [r for r in received[before:] if r[1] == "actiond/b/button/action/event"])
            samples.append(got[0][0] - json.loads(got[0][2])["time_us"])
            f.readline()  # the reply
        s.close()
        print(f"bench-mqtt: released → MQTT subscriber ({len(samples)} short presses): "
              f"p50 {quantile(samples, 50) / 1000:.2f} ms, p99 {quantile(samples, 99) / 1000:.2f} ms, "
              f"max {max(samples) / 1000:.2f} ms")
        pid = bridge.process.proc.pid
        a = proc_status(pid)
        start = time.monotonic()
        time.sleep(args.idle)  # the idle window itself is what is measured
        z = proc_status(pid)
        elapsed = time.monotonic() - start
        wakeups = int(z["voluntary_ctxt_switches"]) - int(a["voluntary_ctxt_switches"])
        print(f"bench-mqtt: idle bridge over {elapsed:.0f} s (keepalive 60 s): {wakeups} wake-ups "
              f"({wakeups * 60 / elapsed:.1f}/min), RSS {z['VmRSS'].strip()}, peak {z['VmHWM'].strip()}")
    finally:
        sub.stop()
        bridge.kill()
        daemon.kill()
        broker.kill()
    return 0


if __name__ == "__main__":
    sys.exit(main())
