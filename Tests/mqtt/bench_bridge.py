#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""`make bench-mqtt`: actiond-mqtt's figures on the host, printed, never asserted.

- relay latency: actiond's `released` event time (CLOCK_MONOTONIC, from the daemon) to a
  paho subscriber's receipt of the bridge's `short_press` event through mosquitto on the
  loopback, over N short presses from actiond's `press` request (p50, p99, max). The same
  clock on both ends; the key-down → MQTT figure on a real key is the VM's to measure.
- publish → state: a switch command (`ON`/`OFF` in turn, a store toggle) published by the
  paho client (QoS 1) to its receipt of the new retained state through the bridge,
  actiond and mosquitto: the round trip Home Assistant sees (p50, p99, max). Nagle on
  the bridge's socket (before TCP_NODELAY) made it about 40 ms.
- the idle bridge over a window: its voluntary context switches (each one a wake-up of
  its single thread: the keepalive timer and the ping's answer) and its RSS.
"""

import argparse
import json
import os
import socket
import sys
import tempfile
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import Actiond, Bridge, Broker, Subscriber, actiond_config, wait_for  # noqa: E402


def proc_status(pid):
    with open(f"/proc/{pid}/status") as f:
        return dict(line.split(":", 1) for line in f.read().splitlines())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("-n", type=int, default=300)
    parser.add_argument("--idle", type=int, default=60, help="idle window, seconds")
    args = parser.parse_args()
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
    sub.client.on_message = lambda c, u, m: received.append(
        (time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000, m.topic, m.payload))
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
        samples.sort()
        q = lambda p: samples[min(len(samples) - 1, int(len(samples) * p))]  # noqa: E731
        print(f"bench-mqtt: released → MQTT subscriber ({len(samples)} short presses): p50 {q(0.5) / 1000:.2f} ms, "
              f"p99 {q(0.99) / 1000:.2f} ms, max {samples[-1] / 1000:.2f} ms")
        state = "actiond/b/control/org_test_timer/state"
        trips = []
        for i in range(args.n):
            payload = b"ON" if i % 2 == 0 else b"OFF"
            before = len(received)
            sent = time.clock_gettime_ns(time.CLOCK_MONOTONIC) // 1000
            sub.client.publish("actiond/b/control/org_test_timer/set", payload, qos=1)
            got = wait_for("the state", lambda: [r for r in received[before:] if r[1] == state and r[2] == payload])
            trips.append(got[0][0] - sent)
        trips.sort()
        t = lambda p: trips[min(len(trips) - 1, int(len(trips) * p))]  # noqa: E731
        print(f"bench-mqtt: publish → state (switch command → its state, {len(trips)} commands): "
              f"p50 {t(0.5) / 1000:.2f} ms, p99 {t(0.99) / 1000:.2f} ms, max {trips[-1] / 1000:.2f} ms")
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
