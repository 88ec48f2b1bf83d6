#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The test-mqtt tier: actiond-mqtt against Debian's real mosquitto broker and a real actiond.

Runs each scenario in its own temporary directory; prints one line per check; exits 1 at
the first failure after printing the logs' tails. There are no input devices here: presses
come from actiond's socket (`press` is a short press; a hold cannot be simulated over the
socket, so the held / long-press path from a real key to MQTT is a VM scenario's job).
The newer-daemon scenario puts a scripted actiond (FakeActiond) in place of the real one,
writing as a newer daemon may (protocol.md, Versioning).
"""

import argparse
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from harness import (DEADLINE, TLS_NAME, Actiond, Bridge, Broker, CutProxy, Subscriber, actiond_config,  # noqa: E402
                     count_lines, dns_queries_waiting, file_lines, isolated, make_pki, tcp_nodelay, wait_for)
from homeassistant import check_device_discovery  # noqa: E402
import fakebroker  # noqa: E402

PREFIX = "homeassistant"


def ok(message):
    print(f"test-mqtt: ok: {message}", flush=True)


def discovery(sub, node):
    text = sub.last(f"{PREFIX}/device/{node}/config")
    return json.loads(text) if text else None


def single_node(bin_dir, work):
    broker = Broker(work)
    broker.start()
    config, lamp_log, bell_log = actiond_config(work)
    daemon = Actiond(bin_dir, work, config).start()
    sub = Subscriber(broker.port)
    node = "n1"
    base = f"actiond/{node}"
    bridge_args = ["--host", "127.0.0.1", "--port", str(broker.port), "--socket", daemon.socket,
                   "--node-id", node, "--device-id", "dev-n1"]
    bridge = Bridge(bin_dir, work, "bridge", bridge_args).start()
    procs = [bridge, daemon, broker]
    try:
        # Discovery: one retained device payload with every field HA requires.
        topic = f"{PREFIX}/device/{node}/config"
        wait_for("the discovery payload", lambda: sub.last(topic))
        msgs = sub.all(topic)
        problems = check_device_discovery(topic, msgs[-1][1])
        assert not problems, "discovery payload problems:\n  " + "\n  ".join(problems)
        assert msgs[-1][2] is False or True  # delivered live; retention is checked by a late subscriber below
        doc = json.loads(msgs[-1][1])
        cmps = doc["cmps"]
        platforms = sorted((cid, c["p"]) for cid, c in cmps.items())
        expected = {
            ("action_short_press", "device_automation"), ("action_long_press", "device_automation"),
            ("action_long_release", "device_automation"), ("action_double_press", "device_automation"),
            ("action_event", "event"), ("action_assignment", "select"),
            ("control_org_test_timer", "switch"), ("control_org_test_lamp", "switch"),
            ("control_org_test_bell", "button"),
        }
        assert set(platforms) == expected, f"components {platforms}"
        assert cmps["action_double_press"]["type"] == "button_double_press"
        assert cmps["action_event"]["event_types"] == ["short_press", "long_press", "long_release", "double_press"]
        assert cmps["action_assignment"]["options"] == ["Timer", "Lamp", "Bell"]
        ok("discovery: 9 components, every field Home Assistant requires (checker: Tests/mqtt/homeassistant.py)")
        late = Subscriber(broker.port, topics=(f"{PREFIX}/#", f"{base}/#"), client_id="late")
        wait_for("retained discovery and states",
                 lambda: late.last(topic) and late.last(f"{base}/control/org_test_lamp/state"))
        assert all(m[2] for m in late.all(topic)), "discovery is not retained"
        late.stop()
        ok("discovery and states are retained (a late subscriber gets them)")

        sub.wait_payload(f"{base}/bridge", "online")
        sub.wait_payload(f"{base}/daemon", "online")
        sub.wait_payload(f"{base}/control/org_test_lamp/state", "OFF")
        sub.wait_payload(f"{base}/control/org_test_timer/state", "OFF")
        sub.wait_payload(f"{base}/control/org_test_lamp/availability", "online")
        sub.wait_payload(f"{base}/button/action/assignment", "Timer")
        ok("availability online (bridge, daemon, controls), states OFF, assignment Timer")

        # A switch ON toggles exactly once; a repeated ON does nothing more.
        mark = sub.mark()
        sub.publish(f"{base}/control/org_test_lamp/set", "ON")
        sub.wait_payload(f"{base}/control/org_test_lamp/state", "ON", since=mark)
        sub.publish(f"{base}/control/org_test_lamp/set", "ON")
        sub.publish(f"{base}/control/org_test_lamp/set", "ON")
        # The bridge handles messages in order: once a later command's effect is visible,
        # the repeated ONs before it were handled.
        mark = sub.mark()
        sub.publish(f"{base}/control/org_test_timer/set", "ON")
        sub.wait_payload(f"{base}/control/org_test_timer/state", "ON", since=mark)
        assert count_lines(lamp_log) == 1, f"the lamp's intent ran {count_lines(lamp_log)} times"
        got = daemon.request({"request": "get", "kind": "org.test.timer"})
        assert got["result"]["controls"][0]["value"] is True, got
        ok("switch ON performs once (three ONs, one intent run); the store toggle is on in actiond")
        mark = sub.mark()
        sub.publish(f"{base}/control/org_test_lamp/set", "OFF")
        sub.wait_payload(f"{base}/control/org_test_lamp/state", "OFF", since=mark)
        assert count_lines(lamp_log) == 2
        ok("switch OFF performs once")

        # One publication per state change: actiond announces the lamp's OFF three times
        # (its `state` event, `performed`, the perform's reply). The timer's command after
        # it is handled after all three (one connection to actiond, in order), so once its
        # state is in, every publication of the lamp's change is too.
        mark2 = sub.mark()
        sub.publish(f"{base}/control/org_test_timer/set", "OFF")
        sub.wait_payload(f"{base}/control/org_test_timer/state", "OFF", since=mark2)
        lamp_states = sub.since(mark, f"{base}/control/org_test_lamp/state")
        assert [m[1] for m in lamp_states] == ["OFF"], f"the lamp's OFF published as {lamp_states}"
        assert not sub.since(mark, f"{base}/control/org_test_lamp/availability"), \
            sub.since(mark, f"{base}/control/org_test_lamp/availability")
        timer_states = sub.since(mark2, f"{base}/control/org_test_timer/state")
        assert [m[1] for m in timer_states] == ["OFF"], f"the timer's OFF published as {timer_states}"
        ok("each state change is published once (not once per announcement of it), availability not again")

        # TCP_NODELAY on the broker socket (no Nagle delay on a command's answer): read
        # from the socket itself where the kernel lets the test, and from the bridge's log.
        assert bridge.process.lines("TCP_NODELAY on"), "\n".join(bridge.process.lines("mqtt-socket"))
        nodelay = tcp_nodelay(bridge.process.proc.pid, broker.port)
        assert nodelay in (True, None), nodelay
        ok(f"the broker socket has TCP_NODELAY (bridge's getsockopt; the test's own: {nodelay})")

        # A button: PRESS performs each time.
        sub.publish(f"{base}/control/org_test_bell/set", "PRESS")
        wait_for("the bell", lambda: count_lines(bell_log) == 1)
        ok("button PRESS performs the control")

        # Malformed commands: logged once per topic, dropped, the bridge keeps working.
        for payload in ["BOGUS", "on", "", "ON ", b"\xff"]:
            sub.publish(f"{base}/control/org_test_lamp/set", payload)
        sub.publish(f"{base}/control/org_test_bell/set", "ON")
        sub.publish(f"{base}/control/nosuch/set", "ON")
        sub.publish(f"{base}/button/action/assignment/set", "Nonexistent")
        mark = sub.mark()
        sub.publish(f"{base}/control/org_test_lamp/set", "ON")
        sub.wait_payload(f"{base}/control/org_test_lamp/state", "ON", since=mark)
        dropped = bridge.process.lines("command-dropped")
        lamp_drops = [l for l in dropped if "org_test_lamp/set" in l]
        assert len(lamp_drops) == 1, "\n".join(dropped)
        assert len(dropped) == 4, "\n".join(dropped)
        assert count_lines(lamp_log) == 3 and count_lines(bell_log) == 1
        ok("malformed commands: one log line per topic (4 topics, 8 bad payloads), none performed")

        # A retained command is stale: never performed.
        sub.publish(f"{base}/control/org_test_bell/set", "PRESS", retain=True)
        wait_for("the live retained PRESS", lambda: count_lines(bell_log) == 2)
        bridge.kill()
        bridge = Bridge(bin_dir, work, "bridge2", bridge_args).start()
        procs[0] = bridge
        wait_for("the retained command to be dropped", lambda: bridge.process.lines("retained command"))
        assert count_lines(bell_log) == 2
        sub.publish(f"{base}/control/org_test_bell/set", "", retain=True)  # clear it
        ok("a retained command delivered at subscribe is dropped (a live one with the retain flag performs once)")

        # select assigns.
        mark = sub.mark()
        sub.wait_payload(f"{base}/bridge", "online")
        sub.publish(f"{base}/button/action/assignment/set", "Lamp")
        sub.wait_payload(f"{base}/button/action/assignment", "Lamp", since=mark)
        status = daemon.request({"request": "status"})
        assert status["result"]["buttons"][0]["control"]["kind"] == "org.test.lamp", status
        ok("select assigns: actiond's status shows the Lamp on the hold")

        # A short press (actiond's `press` request): a non-retained event with its timestamp.
        mark = sub.mark()
        daemon.request({"request": "press", "button": "action"})
        events = wait_for("the short press event", lambda: sub.since(mark, f"{base}/button/action/event"))
        e = json.loads(events[0][1])
        assert e["event_type"] == "short_press" and e["button"] == "action", e
        assert e["timestamp"].endswith("Z") and abs(time.mktime(time.strptime(e["timestamp"][:19], "%Y-%m-%dT%H:%M:%S"))
                                                    - time.timezone - time.time()) < 120, e
        assert not events[0][2], "events must not be retained"
        ok(f"short press → {base}/button/action/event {events[0][1]}")

        # Home Assistant's birth message: discovery and states again.
        mark = sub.mark()
        sub.publish(f"{PREFIX}/status", "online", qos=1)
        wait_for("discovery again", lambda: sub.since(mark, topic))
        sub.wait_payload(f"{base}/control/org_test_lamp/state", "ON", since=mark)
        ok("homeassistant/status online → discovery and states re-published")

        # Last Will: kill -9 the bridge → offline; restart → online.
        mark = sub.mark()
        bridge.kill(signal.SIGKILL)
        sub.wait_payload(f"{base}/bridge", "offline", since=mark, timeout=30)
        bridge = Bridge(bin_dir, work, "bridge3", bridge_args).start()
        procs[0] = bridge
        sub.wait_payload(f"{base}/bridge", "online", since=mark)
        ok("kill -9 of the bridge → its Last Will 'offline' (retained); restarted → 'online'")

        # actiond restart: daemon offline, then online with states re-published.
        mark = sub.mark()
        daemon.kill(signal.SIGKILL)
        sub.wait_payload(f"{base}/daemon", "offline", since=mark)
        daemon.start()
        sub.wait_payload(f"{base}/daemon", "online", since=mark)
        # Its states did not change: the broker keeps them retained (not necessarily published again).
        assert retained(broker.port, f"{base}/#", base)[f"{base}/control/org_test_lamp/state"] == "ON"
        ok("actiond killed → daemon 'offline' (entities unavailable); restarted → 'online', states unchanged, kept")

        # Broker killed and restarted (no persistence: retained messages gone) → reconnect, re-publish.
        sub.stop()
        broker.kill()
        broker = Broker(work, port=broker.port)
        broker.start()
        procs[2] = broker
        sub = Subscriber(broker.port, client_id="test-ha-2")
        wait_for("discovery after the broker restart", lambda: sub.last(topic), timeout=40)
        sub.wait_payload(f"{base}/bridge", "online")
        sub.wait_payload(f"{base}/daemon", "online")
        sub.wait_payload(f"{base}/control/org_test_lamp/state", "ON")
        sub.wait_payload(f"{base}/button/action/assignment", "Lamp")
        mark = sub.mark()
        sub.publish(f"{base}/control/org_test_lamp/set", "OFF")
        sub.wait_payload(f"{base}/control/org_test_lamp/state", "OFF", since=mark)
        ok("broker killed and restarted → the bridge reconnects, re-publishes discovery and states, takes commands")

        # SIGTERM: a clean 'offline'.
        mark = sub.mark()
        bridge.kill(signal.SIGTERM)
        sub.wait_payload(f"{base}/bridge", "offline", since=mark)
        assert bridge.process.proc.returncode == 0, bridge.process.proc.returncode
        ok("SIGTERM → 'offline' published, exit 0")
        sub.stop()
    finally:
        for p in procs:
            p.kill()


def redelivery(bin_dir, work):
    """A scripted broker redelivers an unacknowledged QoS 1 PRESS after a reconnect (same
    packet id, DUP set, as MQTT 3.1.1 4.4 says): the bell rings once."""
    config, _, bell_log = actiond_config(work)
    daemon = Actiond(bin_dir, work, config).start()
    fake = fakebroker.FakeBroker()
    bridge = Bridge(bin_dir, work, "bridge", ["--host", "127.0.0.1", "--port", str(fake.port), "--socket",
                                               daemon.socket, "--node-id", "n1", "--device-id", "dev"]).start()
    try:
        session = fake.accept()
        assert not session.clean_session, "the bridge must keep a persistent session"
        assert session.protocol_level == 4, f"MQTT 3.1.1 is protocol level 4, got {session.protocol_level}"
        session.wait_subscribed("actiond/n1/control/+/set")
        wait_for("discovery", lambda: session.published("homeassistant/device/n1/config"))
        session.send_publish("actiond/n1/control/org_test_bell/set", b"PRESS", mid=77, qos=1)
        wait_for("the first ring", lambda: count_lines(bell_log) == 1)
        session.close()  # before acknowledging: the broker must deliver it again
        session = fake.accept()
        session.wait_subscribed("actiond/n1/control/+/set")
        session.send_publish("actiond/n1/control/org_test_bell/set", b"PRESS", mid=77, qos=1, dup=True)
        wait_for("the redelivery to be dropped", lambda: bridge.process.lines("command-duplicate"))
        # A new command (new packet id) after it still performs: the bridge did not stall.
        session.send_publish("actiond/n1/control/org_test_bell/set", b"PRESS", mid=78, qos=1)
        wait_for("the second ring", lambda: count_lines(bell_log) == 2)
        assert session.wait_puback(78), "no PUBACK for packet 78"
        assert count_lines(bell_log) == 2
        ok("a QoS 1 redelivery (same packet id, after a reconnect) is dropped: one ring; the next command rings")
    finally:
        bridge.kill()
        daemon.kill()
        fake.close()


def bridged(bin_dir, work, config, node):
    """A broker, actiond on `config`, a bridge for `node` (device `dev-<node>`) and a Home
    Assistant stand-in on the broker: (broker, daemon, bridge, the bridge's arguments, sub)."""
    broker = Broker(work)
    broker.start()
    daemon = Actiond(bin_dir, work, config).start()
    args = ["--host", "127.0.0.1", "--port", str(broker.port), "--socket", daemon.socket, "--node-id", node,
            "--device-id", f"dev-{node}"]
    bridge = Bridge(bin_dir, work, "bridge", args).start()
    return broker, daemon, bridge, args, Subscriber(broker.port)


def queued(bin_dir, work):
    """Commands Home Assistant sent while the bridge was away (QoS 1, kept by the broker for
    the bridge's persistent session) are performed once each, in order, after the bridge
    reconnects: held until actiond's snapshot is in, also when actiond comes back later
    than the broker hands the queue over. Each control's commands in the order sent; those
    of different controls independently (one control's need not wait for another's)."""
    config, _, _ = actiond_config(work)
    order = os.path.join(work, "order.log")
    lamp_file = os.path.join(work, "lamp")
    for c in config["controls"]:
        # One log of every intent run, in the order actiond ran them.
        if c["kind"] == "org.test.lamp":
            c["intent"]["argv"] = ["/bin/sh", "-c", f'echo "$ACTIOND_VALUE" > {lamp_file}; echo "lamp $ACTIOND_VALUE" >> {order}']
        if c["kind"] == "org.test.bell":
            c["intent"]["argv"] = ["/bin/sh", "-c", f"echo bell >> {order}"]
    broker, daemon, bridge, args, sub = bridged(bin_dir, work, config, "q1")
    base = "actiond/q1"
    procs = [bridge, daemon, broker]

    def runs():
        return file_lines(order)

    def per_control(rs):
        return [r for r in rs if r.startswith("lamp")], [r for r in rs if r == "bell"]

    def live_after(count):
        """A live command on each control after the queue's: once they have run, nothing more
        of the queue can come (a control's commands are performed in the order they came)."""
        sub.publish(f"{base}/control/org_test_lamp/set", "OFF")
        sub.publish(f"{base}/control/org_test_lamp/set", "ON")
        sub.publish(f"{base}/control/org_test_bell/set", "PRESS")
        wait_for("the live commands", lambda: len(runs()) >= count + 3)
    try:
        sub.wait_payload(f"{base}/daemon", "online")
        sub.wait_payload(f"{base}/control/org_test_lamp/state", "OFF")
        commands = [("org_test_lamp", "ON"), ("org_test_bell", "PRESS"), ("org_test_lamp", "OFF"),
                    ("org_test_bell", "PRESS"), ("org_test_lamp", "ON")]
        expected = ["lamp 1", "bell", "lamp 0", "bell", "lamp 1"]

        # 1. The bridge and actiond both away; the bridge back first, actiond a moment later.
        mark = sub.mark()
        bridge.kill(signal.SIGTERM)
        sub.wait_payload(f"{base}/bridge", "offline", since=mark)
        daemon.kill(signal.SIGTERM)
        for control, payload in commands:
            sub.publish(f"{base}/control/{control}/set", payload, qos=1)
        bridge = Bridge(bin_dir, work, "bridge2", args).start()
        procs[0] = bridge
        sub.wait_payload(f"{base}/bridge", "online", since=mark)
        wait_for("the commands held", lambda: len(bridge.process.lines("command-held")) == len(commands))
        assert runs() == [], runs()
        daemon.start()
        wait_for("the held commands performed", lambda: len(runs()) >= len(expected))
        assert per_control(runs()) == per_control(expected), runs()
        live_after(len(expected))
        assert per_control(runs()) == per_control(expected + ["lamp 0", "lamp 1", "bell"]), runs()
        assert not bridge.process.lines("command-dropped"), bridge.process.lines("command-dropped")
        sub.wait_payload(f"{base}/control/org_test_lamp/state", "ON", since=mark)
        ok(f"{len(commands)} QoS 1 commands sent while the bridge and actiond were down: held until actiond's "
           "snapshot, then each performed once, each control's in order")

        # 2. Only the bridge away: the broker hands the queue over at once on reconnect, before
        # the bridge has actiond's snapshot.
        mark = sub.mark()
        bridge.kill(signal.SIGTERM)
        sub.wait_payload(f"{base}/bridge", "offline", since=mark)
        more = [("org_test_lamp", "OFF"), ("org_test_bell", "PRESS"), ("org_test_lamp", "ON")]
        for control, payload in more:
            sub.publish(f"{base}/control/{control}/set", payload, qos=1)
        before = len(runs())
        bridge = Bridge(bin_dir, work, "bridge3", args).start()
        procs[0] = bridge
        wait_for("the queued commands performed", lambda: len(runs()) >= before + len(more))
        assert per_control(runs()[before:]) == per_control(["lamp 0", "bell", "lamp 1"]), runs()
        live_after(before + len(more))
        assert per_control(runs()[before:]) == per_control(["lamp 0", "bell", "lamp 1", "lamp 0", "lamp 1", "bell"]), \
            runs()
        assert not bridge.process.lines("command-dropped"), bridge.process.lines("command-dropped")
        ok(f"{len(more)} QoS 1 commands queued while only the bridge was down: each performed once, each control's "
           "in order")
        sub.stop()
    finally:
        for p in procs:
            p.kill()


def lanes(bin_dir, work):
    """Commands go to actiond one at a time per control: a command for another control does
    not wait for a slow one (its intent still running), and a second command for the slow
    control waits for the first (actiond would refuse it as busy), then follows in order."""
    config, _, _ = actiond_config(work)
    order = os.path.join(work, "order.log")
    gate = os.path.join(work, "gate")
    os.mkfifo(gate)
    for c in config["controls"]:
        if c["kind"] == "org.test.bell":
            c["intent"]["argv"] = ["/bin/sh", "-c", f"echo bell >> {order}"]
    # Runs until the test writes a line into the FIFO.
    config["controls"].append({"kind": "org.test.slow", "type": "button", "displayName": "Slow", "actionHint": "Run",
                               "intent": {"type": "exec", "timeoutMs": 600000, "argv": [
                                   "/bin/sh", "-c", f"echo slow >> {order}; read x < {gate}; echo slow-done >> {order}"]}})
    broker, daemon, bridge, _, sub = bridged(bin_dir, work, config, "l1")
    base = "actiond/l1"
    procs = [bridge, daemon, broker]

    def runs():
        return file_lines(order)

    def open_gate():
        def writer():
            try:
                return os.open(gate, os.O_WRONLY | os.O_NONBLOCK)
            except OSError:  # ENXIO: the intent is not reading it yet
                return None
        fd = wait_for("the slow intent to wait at its gate", writer)
        os.write(fd, b"go\n")
        os.close(fd)
    try:
        sub.wait_payload(f"{base}/daemon", "online")
        sub.publish(f"{base}/control/org_test_slow/set", "PRESS")
        wait_for("the slow intent to start", lambda: runs() == ["slow"])
        sub.publish(f"{base}/control/org_test_slow/set", "PRESS")
        sub.publish(f"{base}/control/org_test_bell/set", "PRESS")
        wait_for("the bell, while the slow intent still runs", lambda: "bell" in runs())
        assert runs() == ["slow", "bell"], runs()
        ok("a command for another control is performed while a slow one still runs")
        open_gate()
        wait_for("the second slow PRESS, after the first", lambda: len(runs()) >= 4)
        assert runs() == ["slow", "bell", "slow-done", "slow"], runs()
        open_gate()
        wait_for("the second slow PRESS to finish", lambda: len(runs()) >= 5)
        sub.publish(f"{base}/control/org_test_bell/set", "PRESS")
        wait_for("a last bell", lambda: len(runs()) >= 6)
        assert runs() == ["slow", "bell", "slow-done", "slow", "slow-done", "bell"], runs()
        # Neither refused as busy nor dropped.
        assert not bridge.process.lines("command-failed"), bridge.process.lines("command-failed")
        assert not bridge.process.lines("command-dropped"), bridge.process.lines("command-dropped")
        ok("a second command for a control still performing waits for the first and follows it, once")
        sub.stop()
    finally:
        # A slow intent still at its gate (a failed check) is let through, not left behind.
        try:
            fd = os.open(gate, os.O_WRONLY | os.O_NONBLOCK)
            os.write(fd, b"go\n")
            os.close(fd)
        except OSError:
            pass
        for p in procs:
            p.kill()


def tls_password(bin_dir, work):
    """TLS with a client certificate and a password, read from a file and from systemd's
    credentials directory; a wrong password is refused and never logged."""
    import subprocess
    pki = make_pki(work)
    password = "s3cret-Pa55"
    passwd = os.path.join(work, "passwd")
    subprocess.run(["/usr/bin/mosquitto_passwd", "-b", "-c", passwd, "bridge", password], check=True)
    subprocess.run(["/usr/bin/mosquitto_passwd", "-b", passwd, "ha", "ha-pass"], check=True)
    broker = Broker(work, extra=f"cafile {pki['ca']}\ncertfile {pki['server_cert']}\nkeyfile {pki['server_key']}\n"
                    f"require_certificate true\nallow_anonymous false\npassword_file {passwd}\n")
    broker.start()
    config, lamp_log, _ = actiond_config(work)
    daemon = Actiond(bin_dir, work, config).start()
    sub = Subscriber(broker.port, tls=pki, auth=("ha", "ha-pass"))
    common = ["--host", "127.0.0.1", "--port", str(broker.port), "--socket", daemon.socket, "--node-id", "t1",
              "--device-id", "dev-t1", "--ca-file", pki["ca"], "--cert-file", pki["cert"], "--key-file", pki["key"],
              "--username", "bridge"]
    procs = [broker, daemon]
    try:
        with open(os.path.join(work, "password"), "w") as f:
            f.write(password + "\n")
        bridge = Bridge(bin_dir, work, "bridge-file", common + ["--password-file", os.path.join(work, "password")])
        procs.append(bridge.start())
        topic = f"{PREFIX}/device/t1/config"
        wait_for("discovery over TLS", lambda: sub.last(topic))
        assert not check_device_discovery(topic, sub.last(topic))
        mark = sub.mark()
        sub.publish("actiond/t1/control/org_test_lamp/set", "ON")
        sub.wait_payload("actiond/t1/control/org_test_lamp/state", "ON", since=mark)
        assert count_lines(lamp_log) == 1
        ok("TLS (CA + client certificate) and a password file: discovery, a switch command")
        bridge.kill(signal.SIGTERM)

        creds = os.path.join(work, "credentials")
        os.makedirs(creds)
        with open(os.path.join(creds, "mqtt-password"), "w") as f:
            f.write(password)
        env = dict(os.environ, CREDENTIALS_DIRECTORY=creds)
        mark = sub.mark()
        bridge = Bridge(bin_dir, work, "bridge-cred", common)
        bridge.process.env = env
        procs.append(bridge.start())
        sub.wait_payload("actiond/t1/bridge", "online", since=mark)
        ok("the password from $CREDENTIALS_DIRECTORY/mqtt-password (systemd LoadCredential=)")
        bridge.kill(signal.SIGTERM)

        wrong = os.path.join(work, "wrong")
        with open(wrong, "w") as f:
            f.write("not-the-Pa55word\n")
        bad = Bridge(bin_dir, work, "bridge-wrong", common + ["--password-file", wrong])
        procs.append(bad.start())
        wait_for("the refusal", lambda: bad.process.lines("mqtt-refused"))
        for name in ("bridge-file", "bridge-cred", "bridge-wrong"):
            text = open(os.path.join(work, f"{name}.log")).read()
            assert password not in text and "not-the-Pa55word" not in text, f"{name} logged a password"
        ok("a wrong password is refused (logged as mqtt-refused); no password appears in any log")
    finally:
        sub.stop()
        for p in procs:
            p.kill()


def late_start(bin_dir, work):
    """The bridge starts first: neither the broker nor actiond is there. It retries both
    with backoff; once the broker is up it says actiond is offline; once actiond is up,
    discovery and every state follow."""
    from harness import free_port
    port = free_port()
    config, _, _ = actiond_config(work)
    daemon = Actiond(bin_dir, work, config)
    bridge = Bridge(bin_dir, work, "bridge", ["--host", "127.0.0.1", "--port", str(port), "--socket", daemon.socket,
                                               "--node-id", "n1", "--device-id", "dev"]).start()
    broker = Broker(work, port=port)
    procs = [bridge, broker]
    try:
        wait_for("failed broker attempts", lambda: len(bridge.process.lines("mqtt-connect-failed")) >= 2)
        wait_for("a failed actiond attempt", lambda: bridge.process.lines("daemon-connect-failed"))
        broker.start()
        sub = Subscriber(broker.port)
        sub.wait_payload("actiond/n1/bridge", "online")
        sub.wait_payload("actiond/n1/daemon", "offline")
        assert not sub.last(f"{PREFIX}/device/n1/config"), "discovery before actiond's snapshot"
        ok("broker down at start: retried with backoff; then online, actiond 'offline' until it is there")
        daemon.start()
        procs.append(daemon)
        wait_for("discovery", lambda: sub.last(f"{PREFIX}/device/n1/config"))
        sub.wait_payload("actiond/n1/daemon", "online")
        sub.wait_payload("actiond/n1/control/org_test_lamp/state", "OFF")
        ok("actiond down at start: once it is up, discovery, 'online' and every state")
        sub.stop()
    finally:
        for p in procs:
            if p is daemon and not daemon.process:
                continue
            p.kill()


def cleanup(bin_dir, work):
    """What a previous run published and actiond no longer has (a control removed, a double
    press unassigned while the bridge was stopped) is removed from Home Assistant: the new
    run finds the retained payload and sends those components once with only "p"."""
    broker = Broker(work)
    broker.start()
    config, _, _ = actiond_config(work)
    daemon = Actiond(bin_dir, work, config).start()
    args = ["--host", "127.0.0.1", "--port", str(broker.port), "--socket", daemon.socket, "--node-id", "n1",
            "--device-id", "dev"]
    bridge = Bridge(bin_dir, work, "bridge", args).start()
    sub = Subscriber(broker.port)
    procs = [bridge, daemon, broker]
    topic = f"{PREFIX}/device/n1/config"
    try:
        wait_for("discovery with the bell", lambda: "control_org_test_bell" in (discovery(sub, "n1") or {}).get("cmps", {}))
        bridge.kill(signal.SIGTERM)
        daemon.kill(signal.SIGTERM)
        config["controls"] = [c for c in config["controls"] if c["kind"] != "org.test.bell"]
        config["assignments"] = {"action": {"hold": "org.test.timer"}}
        # The bridge first, actiond once the bridge is on the broker: the retained payload
        # reaches the bridge before actiond's snapshot (the order that lost the removals).
        mark = sub.mark()
        bridge = Bridge(bin_dir, work, "bridge2", args).start()
        procs[0] = bridge
        sub.wait_payload("actiond/n1/bridge", "online", since=mark)
        wait_for("the new bridge finding actiond gone", lambda: bridge.process.lines("daemon-connect-failed"))
        daemon = Actiond(bin_dir, work, config).start()
        procs[1] = daemon

        def removed():
            for _, payload, _, _ in sub.since(mark, topic):
                cmps = json.loads(payload)["cmps"]
                if cmps.get("control_org_test_bell") == {"p": "button"} and \
                        cmps.get("action_double_press") == {"p": "device_automation"}:
                    return True
            return False
        wait_for("the removal of the bell and the double press", removed)
        for _, payload, _, _ in sub.since(mark, topic):
            assert not check_device_discovery(topic, payload)
        ok("components a previous run published and actiond no longer has are removed (sent once with only 'p')")

        base = "actiond/n1"
        sub.wait_payload(f"{base}/control/org_test_bell/availability", "", since=mark)
        assert retained(broker.port, "actiond/n1/#", base) == {
            f"{base}/bridge": "online", f"{base}/daemon": "online", f"{base}/button/action/assignment": "Timer",
            f"{base}/control/org_test_timer/state": "OFF", f"{base}/control/org_test_timer/availability": "online",
            f"{base}/control/org_test_lamp/state": "OFF", f"{base}/control/org_test_lamp/availability": "online",
        }
        ok("the retained availability of a control removed while the bridge was stopped is cleared on its start")

        # A reload that removes a control while the bridge runs: its component, state and
        # availability go, each once.
        mark = sub.mark()
        config["controls"] = [c for c in config["controls"] if c["kind"] != "org.test.lamp"]
        with open(daemon.config_path, "w") as f:
            json.dump(config, f)
        daemon.process.proc.send_signal(signal.SIGHUP)  # a reload, not an end
        wait_for("the lamp's removal", lambda: any(json.loads(p)["cmps"].get("control_org_test_lamp") == {"p": "switch"}
                                                   for _, p, _, _ in sub.since(mark, topic)))
        sub.wait_payload(f"{base}/control/org_test_lamp/state", "", since=mark)
        sub.wait_payload(f"{base}/control/org_test_lamp/availability", "", since=mark)
        assert retained(broker.port, "actiond/n1/#", base) == {
            f"{base}/bridge": "online", f"{base}/daemon": "online", f"{base}/button/action/assignment": "Timer",
            f"{base}/control/org_test_timer/state": "OFF", f"{base}/control/org_test_timer/availability": "online",
        }
        for t in (f"{base}/control/org_test_timer/state", f"{base}/control/org_test_timer/availability"):
            assert not sub.since(mark, t), f"{t} published again on a reload that did not change it: {sub.since(mark, t)}"
        ok("a control removed by a reload: its state and availability cleared (empty retained), the rest untouched")
        sub.stop()
    finally:
        for p in procs:
            p.kill()


def retained(port, pattern, base):
    """Every retained message under `pattern` as {topic: payload}: a fresh subscriber gets
    them at subscribe, before a message published after its subscription (the marker)."""
    late = Subscriber(port, topics=(pattern,), client_id=f"retained-{time.monotonic_ns()}")
    marker = f"{base}/test-marker"
    late.publish(marker, "end")
    wait_for("the marker", lambda: late.all(marker))
    got = {t: p for t, p, r, _ in late.all() if r}
    late.stop()
    return got


def network_cut(bin_dir, work):
    """The network between the bridge and the broker is cut mid-run: packets stop flowing
    both ways, no connection is closed (Tests/mqtt/harness.py, CutProxy). The broker's
    keepalive expiry publishes the bridge's Last Will; the bridge notices within two
    keepalives, its reconnect attempts into the cut hang and are given up after a keepalive
    and retried with backoff; once the path is back it reconnects, re-publishes discovery
    and every state as actiond has them now (a state published into the cut and changed
    again since does not come back), and takes commands again, one kept by the broker
    during the cut included."""
    keepalive = 5  # libmosquitto's minimum
    broker = Broker(work)
    broker.start()
    config, lamp_log, bell_log = actiond_config(work)
    daemon = Actiond(bin_dir, work, config).start()
    proxy = CutProxy(broker.port)
    sub = Subscriber(broker.port)  # Home Assistant: on the broker directly, not behind the cut
    base = "actiond/n1"
    lamp = f"{base}/control/org_test_lamp/state"
    timer = f"{base}/control/org_test_timer/state"
    topic = f"{PREFIX}/device/n1/config"
    bridge = Bridge(bin_dir, work, "bridge", ["--host", "127.0.0.1", "--port", str(proxy.port), "--socket",
                                               daemon.socket, "--node-id", "n1", "--device-id", "dev",
                                               "--keepalive", str(keepalive)]).start()
    procs = [bridge, daemon, broker]
    try:
        wait_for("discovery through the proxy", lambda: sub.last(topic))
        sub.wait_payload(f"{base}/bridge", "online")
        sub.wait_payload(lamp, "OFF")
        mark = sub.mark()
        sub.publish(f"{base}/control/org_test_timer/set", "ON")
        sub.wait_payload(timer, "ON", since=mark)

        mark = sub.mark()
        cut_at = time.monotonic()
        proxy.cut()
        # The lamp goes on in actiond at once: the bridge, not knowing yet, publishes ON
        # (QoS 1) into the cut, where it stays unacknowledged.
        before = proxy.stuck_from_clients()
        assert daemon.request({"request": "perform", "kind": "org.test.lamp"})["result"]["control"]["value"] is True
        wait_for("the lamp's ON to be stuck in the cut", lambda: proxy.stuck_from_clients() > before + len(lamp))
        sub.wait_payload(f"{base}/bridge", "offline", since=mark, timeout=3 * keepalive + DEADLINE)
        will_after = time.monotonic() - cut_at
        late = Subscriber(broker.port, topics=(f"{base}/bridge",), client_id="late-will")
        wait_for("the retained Last Will", lambda: late.all(f"{base}/bridge"))
        assert late.all(f"{base}/bridge")[-1][1:3] == ("offline", True), late.all(f"{base}/bridge")
        late.stop()
        ok(f"network cut: the broker's keepalive expiry publishes the Last Will 'offline' (retained) "
           f"{will_after:.1f} s into the cut (keepalive {keepalive} s, 1.5 × = {1.5 * keepalive} s)")

        lost = wait_for("the bridge to notice the cut", lambda: bridge.process.lines("mqtt-disconnected"),
                        timeout=3 * keepalive + DEADLINE)
        noticed_after = time.monotonic() - cut_at
        assert "keepalive" in lost[0].lower(), lost
        # Changed again in actiond after the bridge noticed: nothing goes out now.
        assert daemon.request({"request": "perform", "kind": "org.test.lamp"})["result"]["control"]["value"] is False
        assert daemon.request({"request": "perform", "kind": "org.test.timer"})["result"]["control"]["value"] is False
        # Home Assistant presses the bell meanwhile: the broker keeps it for the bridge's session.
        sub.publish(f"{base}/control/org_test_bell/set", "PRESS")
        ok(f"the bridge notices {noticed_after:.1f} s into the cut (no PINGRESP: {lost[0].split(': ', 1)[-1]})")

        # Reconnect attempts during the cut reach nothing (held by the proxy, no CONNACK):
        # the first is given up after a keepalive and the next follows after its backoff.
        wait_for("a second attempt into the cut", lambda: proxy.counts()["held"] >= 2, timeout=3 * keepalive + DEADLINE)
        given_up = [l for l in bridge.process.lines("mqtt-connect-failed") if "within the keepalive" in l]
        assert given_up, bridge.process.lines("mqtt-connect-failed")
        assert count_lines(bell_log) == 0
        ok("reconnect attempts into the cut hang, are given up after a keepalive and retried with backoff")

        mark = sub.mark()
        restored_at = time.monotonic()
        proxy.restore()
        sub.wait_payload(f"{base}/bridge", "online", since=mark)
        wait_for("discovery again", lambda: sub.since(mark, topic))
        sub.wait_payload(lamp, "OFF", since=mark)
        sub.wait_payload(timer, "OFF", since=mark)
        back_after = time.monotonic() - restored_at
        wait_for("the bell kept during the cut", lambda: count_lines(bell_log) == 1)
        # A command now, and its answer: everything the reconnect sent is in before it.
        mark2 = sub.mark()
        sub.publish(f"{base}/control/org_test_timer/set", "ON")
        sub.wait_payload(timer, "ON", since=mark2)
        assert sub.last(lamp) == "OFF", f"the lamp's stale ON came back: {[m[1] for m in sub.since(mark, lamp)]}"
        late = Subscriber(broker.port, topics=(f"{base}/#",), client_id="late-state")
        wait_for("retained states", lambda: late.last(lamp) and late.last(timer) == "ON" and late.last(f"{base}/bridge"))
        assert (late.last(lamp), late.last(f"{base}/bridge")) == ("OFF", "online"), (late.last(lamp), late.last(f"{base}/bridge"))
        late.stop()
        assert count_lines(bell_log) == 1 and count_lines(lamp_log) == 2
        ok(f"path back: reconnected {back_after:.1f} s later, 'online', discovery and every state as actiond has "
           "them (the lamp's ON sent into the cut stays gone), the bell pressed during the cut rang once, "
           "commands work")
        sub.stop()
    finally:
        for p in procs:
            p.kill()
        proxy.close()


def name_resolution(bin_dir, work):
    """The broker's host name is resolved off the bridge's loop. A name in /etc/hosts
    connects at once; with a DNS server that never answers (its own network namespace,
    resolv.conf bind-mounted over, a UDP socket that swallows the queries) the loop still
    serves actiond and SIGTERM while the resolver waits; a failed resolution is logged with
    the name and retried with backoff."""
    responsive = 5.0  # s: generous for a loaded machine, far under the resolver's 60 s below
    name = "mqtt-broker.test"
    broker = Broker(work)
    broker.start()
    config, _, _ = actiond_config(work)
    daemon = Actiond(bin_dir, work, config).start()
    sub = Subscriber(broker.port)
    hosts = os.path.join(work, "hosts")
    with open(hosts, "w") as f:
        f.write(f"127.0.0.1 localhost\n127.0.0.1 {name}\n")
    plain_hosts = os.path.join(work, "hosts-without")
    with open(plain_hosts, "w") as f:
        f.write("127.0.0.1 localhost\n")
    silent = os.path.join(work, "resolv-silent.conf")
    with open(silent, "w") as f:
        f.write("nameserver 127.0.0.1\noptions timeout:30 attempts:2\n")  # 60 s before glibc gives up
    args = ["--host", name, "--port", str(broker.port), "--socket", daemon.socket, "--node-id", "n1",
            "--device-id", "dev"]
    procs = [daemon, broker]
    try:
        # A name in /etc/hosts (bind-mounted; DNS would never answer): connected at once.
        bridge = Bridge(bin_dir, work, "bridge-hosts", args,
                        prefix=isolated({hosts: "/etc/hosts", silent: "/etc/resolv.conf"})).start()
        procs.append(bridge)
        sub.wait_payload("actiond/n1/bridge", "online")
        assert [l for l in bridge.process.lines("mqtt-resolved") if "127.0.0.1" in l], bridge.process.text()
        ok(f"a broker name from /etc/hosts: resolved off the loop, connected ({name} → 127.0.0.1)")
        bridge.kill(signal.SIGTERM)

        # With TLS the name is what the certificate is checked against: its own name
        # connects, another name of the same address is refused.
        tls_dir = os.path.join(work, "tls")
        os.makedirs(tls_dir)
        pki = make_pki(tls_dir)
        tls_broker = Broker(tls_dir, extra=f"cafile {pki['ca']}\ncertfile {pki['server_cert']}\n"
                            f"keyfile {pki['server_key']}\nallow_anonymous true\n")
        tls_broker.start()
        procs.append(tls_broker)
        tls_sub = Subscriber(tls_broker.port, client_id="test-ha-tls", tls={"ca": pki["ca"]})
        with open(hosts, "a") as f:
            f.write("127.0.0.1 other-name.test\n")
        tls_args = ["--port", str(tls_broker.port), "--ca-file", pki["ca"], "--socket", daemon.socket]
        assert name == TLS_NAME
        bridge = Bridge(bin_dir, work, "bridge-tls-name", tls_args + ["--host", name, "--node-id", "t1"],
                        prefix=isolated({hosts: "/etc/hosts", silent: "/etc/resolv.conf"})).start()
        procs.append(bridge)
        tls_sub.wait_payload("actiond/t1/bridge", "online")
        wrong = Bridge(bin_dir, work, "bridge-tls-other", tls_args + ["--host", "other-name.test", "--node-id", "t2"],
                       prefix=isolated({hosts: "/etc/hosts", silent: "/etc/resolv.conf"})).start()
        procs.append(wrong)
        failures = wait_for("the other name's refusal", lambda: wrong.process.lines("mqtt-connect-failed"))
        assert tls_sub.last("actiond/t2/bridge") is None, "a certificate for another name was accepted"
        wait_for("libmosquitto's reason", lambda: [l for l in wrong.process.lines("mqtt-library-error")
                                                   if "host name verification failed" in l])
        bridge.kill(signal.SIGTERM)
        wrong.kill(signal.SIGTERM)
        tls_sub.stop()
        ok(f"TLS by name: the certificate's name connects; another name of 127.0.0.1 is refused "
           f"({failures[0].split(': ', 2)[-1].split(' event=')[0]}, logged with libmosquitto's "
           "'host name verification failed')")

        # A DNS server that never answers: the loop goes on.
        bridge = Bridge(bin_dir, work, "bridge-silent", args,
                        prefix=isolated({plain_hosts: "/etc/hosts", silent: "/etc/resolv.conf"}, network=True,
                                        silent_dns=True)).start()
        procs.append(bridge)
        pid = bridge.process.proc.pid
        wait_for("the bridge's DNS query", lambda: dns_queries_waiting(pid) > 0)
        wait_for("actiond's snapshot while the resolver waits", lambda: bridge.process.lines("event=snapshot"),
                 timeout=responsive)
        daemon.kill()
        wait_for("actiond's loss while the resolver waits", lambda: bridge.process.lines("daemon-lost"),
                 timeout=responsive)
        daemon.start()
        # The bridge's reconnect to actiond backs off up to 5 s.
        wait_for("actiond's new snapshot", lambda: len(bridge.process.lines("event=snapshot")) == 2,
                 timeout=responsive + 5)
        assert not bridge.process.lines("mqtt-resolve-failed"), "the resolution ended: the test took too long"
        assert dns_queries_waiting(pid) > 0
        term_at = time.monotonic()
        bridge.process.proc.send_signal(signal.SIGTERM)
        wait_for("the bridge to exit on SIGTERM", lambda: bridge.process.proc.poll() is not None, timeout=responsive)
        took = time.monotonic() - term_at
        assert bridge.process.proc.returncode == 0, bridge.process.proc.returncode
        ok(f"a DNS server that never answers: actiond's snapshot, its loss and its return are read while the "
           f"resolver waits (60 s), and SIGTERM ends the bridge in {took:.2f} s")

        # No DNS server at all (refused at once): the failure is logged with the name, and retried.
        refused = os.path.join(work, "resolv-refused.conf")
        with open(refused, "w") as f:
            f.write("nameserver 127.0.0.1\n")
        bridge = Bridge(bin_dir, work, "bridge-refused", args,
                        prefix=isolated({plain_hosts: "/etc/hosts", refused: "/etc/resolv.conf"}, network=True)).start()
        procs.append(bridge)
        failed = wait_for("two failed resolutions", lambda: len(bridge.process.lines("mqtt-resolve-failed")) >= 2 and
                          bridge.process.lines("mqtt-resolve-failed"))
        assert f"cannot resolve the broker's host name {name}: Temporary failure in name resolution" in failed[0], failed
        assert not bridge.process.lines("mqtt-connecting")
        bridge.kill(signal.SIGTERM)
        assert bridge.process.proc.returncode == 0
        ok(f"an unresolvable name is logged ({failed[0].split(': ', 1)[1].split(' event=')[0]}) and retried with backoff")
        sub.stop()
    finally:
        for p in procs:
            p.kill()


def doc_block(path, kind):
    """The fenced block after `<!-- example: KIND -->` in a doc."""
    lines = open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", path)).read().splitlines()
    i = lines.index(f"<!-- example: {kind} -->") + 1
    while not lines[i].startswith("```"):
        i += 1
    j = i + 1
    while not lines[j].startswith("```"):
        j += 1
    return "\n".join(lines[i + 1:j]) + "\n"


def fleet(bin_dir, work):
    """Three actiond + bridge pairs with their own node ids and broker users on one broker,
    under docs/fleet.md's ACL: a command to one node affects only it, a node's user cannot
    command another node; the broker is killed and restarted, every node recovers its states."""
    import subprocess
    passwd = os.path.join(work, "passwd")
    acl = os.path.join(work, "acl")
    with open(acl, "w") as f:
        f.write(doc_block("docs/fleet.md", "mosquitto-acl"))
    users = {"n1": "p1", "n2": "p2", "n3": "p3", "homeassistant": "ha"}
    for i, (user, password) in enumerate(users.items()):
        subprocess.run(["/usr/bin/mosquitto_passwd", "-b"] + (["-c"] if i == 0 else []) + [passwd, user, password],
                       check=True)
    extra = f"allow_anonymous false\npassword_file {passwd}\nacl_file {acl}\n"
    broker = Broker(work, extra=extra)
    broker.start()
    nodes = []
    procs = [broker]
    ha = ("homeassistant", "ha")
    try:
        for n in ("n1", "n2", "n3"):
            d = os.path.join(work, n)
            os.makedirs(d)
            with open(os.path.join(d, "password"), "w") as f:
                f.write(users[n] + "\n")
            config, lamp_log, bell_log = actiond_config(d)
            daemon = Actiond(bin_dir, d, config).start()
            bridge = Bridge(bin_dir, d, "bridge", ["--host", "127.0.0.1", "--port", str(broker.port), "--socket",
                                                    daemon.socket, "--node-id", n, "--device-id", f"dev-{n}",
                                                    "--username", n, "--password-file",
                                                    os.path.join(d, "password")]).start()
            procs += [daemon, bridge]
            nodes.append((n, daemon, bridge, lamp_log))
        sub = Subscriber(broker.port, auth=ha)
        for n, *_ in nodes:
            topic = f"{PREFIX}/device/{n}/config"
            wait_for(f"{n}'s discovery", lambda: sub.last(topic))
            assert not check_device_discovery(topic, sub.last(topic))
        ids = {json.loads(sub.last(f"{PREFIX}/device/{n}/config"))["dev"]["ids"][0] for n, *_ in nodes}
        assert len(ids) == 3, ids
        ok("three nodes under docs/fleet.md's ACL, three devices with their own identifiers")
        mark = sub.mark()
        sub.publish("actiond/n2/control/org_test_lamp/set", "ON")
        sub.wait_payload("actiond/n2/control/org_test_lamp/state", "ON", since=mark)
        sub.publish("actiond/n3/button/action/assignment/set", "Bell")
        sub.wait_payload("actiond/n3/button/action/assignment", "Bell", since=mark)
        assert [count_lines(lamp) for *_, lamp in nodes] == [0, 1, 0]
        assert [d.request({"request": "status"})["result"]["buttons"][0]["control"]["kind"] for _, d, _, _ in nodes] == [
            "org.test.timer", "org.test.timer", "org.test.bell"]
        ok("a switch command to n2 and a select to n3 change only them")
        # n1's user tries to command n3: the broker drops it (ACL), n3's lamp stays off.
        rogue = Subscriber(broker.port, topics=(), client_id="rogue-n1", auth=("n1", "p1"))
        rogue.publish("actiond/n3/control/org_test_lamp/set", "ON")
        rogue.publish("actiond/n1/control/org_test_lamp/set", "ON")  # its own: allowed
        mark = sub.mark()
        sub.wait_payload("actiond/n1/control/org_test_lamp/state", "ON")
        wait_for("the broker's denial", lambda: "Denied PUBLISH from rogue-n1" in open(broker.log).read()
                 and "actiond/n3/control/org_test_lamp/set" in open(broker.log).read())
        assert count_lines(nodes[2][3]) == 0, "n1's user commanded n3"
        rogue.stop()
        ok("n1's broker user cannot command n3 (its own lamp it can)")
        sub.stop()
        broker.kill()
        broker = Broker(work, port=broker.port, extra=extra)
        broker.start()
        procs[0] = broker
        sub = Subscriber(broker.port, client_id="test-ha-2", auth=ha)
        expected = {"n1": ("ON", "Timer"), "n2": ("ON", "Timer"), "n3": ("OFF", "Bell")}
        for n, (lamp, assigned) in expected.items():
            wait_for(f"{n}'s discovery after the restart", lambda: sub.last(f"{PREFIX}/device/{n}/config"), timeout=40)
            sub.wait_payload(f"actiond/{n}/bridge", "online")
            sub.wait_payload(f"actiond/{n}/control/org_test_lamp/state", lamp)
            sub.wait_payload(f"actiond/{n}/button/action/assignment", assigned)
        ok("broker killed and restarted: every node re-publishes discovery and its states intact")
        sub.stop()
    finally:
        for p in procs:
            p.kill()


def with_new_members(value, depth=0):
    """`value` as a newer actiond writes it (protocol.md, Versioning): members no version
    knows added to every object at every depth, except inside a `configuration` (its
    members are parameter values, not protocol members). As NewerDaemonTests does."""
    if isinstance(value, dict):
        out = {k: (v if k == "configuration" else with_new_members(v, depth + 1)) for k, v in value.items()}
        out[f"newAtDepth{depth}"] = {"nested": {"deeper": [1, "two", None]}, "list": [True, 2.5]}
        out[f"newString{depth}"] = "x"
        return out
    if isinstance(value, list):
        return [with_new_members(v, depth + 1) for v in value]
    return value


def fake_control(kind, name, value, texts, hints):
    return {"kind": kind, "displayName": name, "type": "toggle", "configuration": {}, "value": value,
            "valueText": texts[value], "symbol": "timer", "tint": "orange", "hint": hints[value],
            "configured": True, "available": True, "performing": False}


class FakeActiond:
    """A scripted actiond on a Unix socket, from docs/protocol.md's examples: a hello, the
    replies to the requests actiond-mqtt sends (subscribe, status, list, perform), a
    `state` event after a perform, and the events the test pushes. With `newer`, it writes
    as a newer daemon may (protocol.md, Versioning): every message with members no version
    knows at every depth, a `hints` entry of a gesture no version knows, and an event no
    version knows after the hello, before every reply and between pushed events."""

    UNKNOWN = {"type": "event", "event": "squeezed", "button": "action", "kind": "org.example.timer",
               "pressure": {"newtons": 3.5, "samples": [1, 2, {"x": None}]}, "fresh": True}

    def __init__(self, path, newer):
        self.path = path
        self.newer = newer
        self.lock = threading.Lock()
        self.connections = 0
        self.requests = []
        self.subscribers = []
        self.unknown_sent = 0
        self.controls = {
            "org.example.timer": fake_control("org.example.timer", "Work Timer", False, {False: "Stopped", True: "Running"},
                                              {False: "Hold to Start", True: "Hold to Stop"}),
            "org.example.mute": fake_control("org.example.mute", "Mute", False, {False: "Sound On", True: "Muted"},
                                             {False: "Hold to Mute", True: "Hold to Unmute"}),
        }
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(path)
        self.listener.listen(8)
        threading.Thread(target=self._accept, daemon=True).start()

    def button(self):
        return {"name": "action", "key": "KEY_PROG1", "bound": True, "devices": ["/dev/input/event3"],
                "holdThresholdMs": 600, "doublePressWindowMs": 300, "longHoldThresholdMs": 3000,
                "control": self.controls["org.example.timer"], "momentary": False,
                "doublePress": self.controls["org.example.mute"], "longHold": None}

    def _write(self, conn, message, unknown_first=True):
        data = b""
        if self.newer and unknown_first:
            data += (json.dumps(dict(self.UNKNOWN, event=f"squeezed-{self.unknown_sent}")) + "\n").encode()
            self.unknown_sent += 1
        data += (json.dumps(with_new_members(message) if self.newer else message) + "\n").encode()
        conn.sendall(data)

    def _accept(self):
        while True:
            try:
                conn, _ = self.listener.accept()
            except OSError:
                return
            with self.lock:
                self.connections += 1
                hello = {"type": "hello", "protocol": 1, "daemon": "0.1.0",
                         "client": {"uid": os.getuid(), "gid": os.getgid(), "pid": 4242, "control": True},
                         "buttons": [self.button()]}
                self._write(conn, hello, unknown_first=False)  # the hello comes first, always
                if self.newer:
                    conn.sendall((json.dumps(self.UNKNOWN) + "\n").encode())
            threading.Thread(target=self._serve, args=(conn,), daemon=True).start()

    def _serve(self, conn):
        for line in conn.makefile("rb"):
            request = json.loads(line)
            with self.lock:
                self.requests.append(request)
                self._answer(conn, request)

    def _answer(self, conn, request):
        name, rid = request.get("request"), request.get("id")
        result = None
        if name == "subscribe":
            result = {"events": sorted(request.get("events", [])), "buttons": ["action"]}
            self.subscribers.append(conn)
        elif name == "status":
            result = {"buttons": [self.button()]}
        elif name == "list":
            result = {"controls": list(self.controls.values())}
        elif name == "perform" and request.get("kind") in self.controls:
            c = self.controls[request["kind"]]
            flipped = dict(c, value=not c["value"])
            self.controls[c["kind"]] = flipped
            self._push({"type": "event", "event": "state", "kind": c["kind"], "buttons": ["action"], "control": flipped})
            result = {"control": flipped}
        if result is None:
            self._write(conn, {"type": "error", "id": rid, "code": "bad-request", "message": f"unexpected {name}"})
        else:
            self._write(conn, {"type": "reply", "id": rid, "request": name, "result": result})

    def _push(self, event):
        for conn in self.subscribers:
            self._write(conn, event)

    def push(self, events):
        with self.lock:
            for event in events:
                if event.get("event") in ("state", "performed"):
                    self.controls[event["kind"]] = event["control"]
                self._push(event)

    def received(self, name):
        with self.lock:
            return [r for r in self.requests if r.get("request") == name]

    def close(self):
        self.listener.close()


def newer_daemon(bin_dir, work):
    """protocol.md, Versioning, with the built actiond-mqtt: two bridges on one broker, one
    against FakeActiond as actiond writes today, one against the same FakeActiond writing as
    a newer daemon (members at every depth, unknown events before and between the known
    ones). What Home Assistant sees must be the same, and the second bridge must read its
    whole stream without a warning or a reconnect."""
    broker = Broker(work)
    broker.start()
    sub = Subscriber(broker.port)
    daemons, bridges = {}, {}
    procs = [broker]
    try:
        for node in ("plain", "newer"):
            daemons[node] = FakeActiond(os.path.join(work, f"{node}.sock"), newer=node == "newer")
            bridges[node] = Bridge(bin_dir, work, f"bridge-{node}", [
                "--host", "127.0.0.1", "--port", str(broker.port), "--socket", daemons[node].path,
                "--node-id", node, "--device-id", "dev-" + node]).start()
            procs.append(bridges[node])

        def normalized(node, since=0):
            """The node's messages, as the other node's would read (timestamps left out: they
            are the bridge's wall clock)."""
            out = []
            for topic, payload, _, _ in sub.since(since):
                if topic not in (f"{PREFIX}/device/{node}/config",) and not topic.startswith(f"actiond/{node}/"):
                    continue
                if topic.endswith("/event"):
                    payload = json.dumps({k: v for k, v in json.loads(payload).items() if k != "timestamp"})
                out.append((topic.replace(node, "NODE"), payload.replace(node, "NODE")))
            return out

        def retained(node):
            return {topic: payload for topic, payload in normalized(node)}

        for node in daemons:
            sub.wait_payload(f"actiond/{node}/daemon", "online")
            sub.wait_payload(f"actiond/{node}/control/org_example_timer/state", "OFF")
            topic = f"{PREFIX}/device/{node}/config"
            wait_for(f"{node}'s discovery", lambda: sub.last(topic))
            problems = check_device_discovery(topic, sub.last(topic))
            assert not problems, f"{node}'s discovery problems:\n  " + "\n  ".join(problems)
        cmps = json.loads(sub.last(f"{PREFIX}/device/newer/config"))["cmps"]
        assert {"control_org_example_timer", "control_org_example_mute", "action_short_press",
                "action_double_press", "action_assignment"} <= set(cmps), sorted(cmps)
        assert retained("newer") == retained("plain"), \
            f"newer:\n{json.dumps(retained('newer'), indent=1)}\nplain:\n{json.dumps(retained('plain'), indent=1)}"
        assert daemons["newer"].unknown_sent == 3, daemons["newer"].unknown_sent
        ok(f"discovery ({len(cmps)} components, HA's checker) and every state as with today's daemon, through "
           f"{daemons['newer'].unknown_sent + 1} unknown events and members at every depth")

        timer = daemons["plain"].controls["org.example.timer"]
        mute = daemons["plain"].controls["org.example.mute"]
        running = dict(timer, value=True, valueText="Running", hint="Hold to Stop")
        muted = dict(mute, value=True, valueText="Muted", hint="Hold to Unmute")
        hints = [{"gesture": "hold", "kind": "org.example.timer", "hint": "Hold to Start"},
                 {"gesture": "doublePress", "kind": "org.example.mute", "hint": "Press twice to Mute"}]
        events = [
            {"type": "event", "event": "released", "button": "action", "kind": "org.example.timer",
             "hint": "Hold to Start", "hints": hints, "time": 5180000, "durationMs": 180},
            {"type": "event", "event": "held", "button": "action", "kind": "org.example.timer", "time": 5600000},
            {"type": "event", "event": "performed", "kind": "org.example.timer", "button": "action", "source": "button",
             "gesture": "hold", "value": True, "valueText": "Running", "control": running},
            {"type": "event", "event": "released-after-hold", "button": "action", "kind": "org.example.timer",
             "time": 5900000, "durationMs": 900, "longHeld": False},
            {"type": "event", "event": "double-pressed", "button": "action", "kind": "org.example.mute",
             "time": 6400000, "gapMs": 220},
            {"type": "event", "event": "assigned", "button": "action", "gesture": "hold", "kind": "org.example.mute",
             "momentary": False, "control": mute},
            {"type": "event", "event": "state", "kind": "org.example.mute", "buttons": ["action"], "control": muted},
        ]
        # Values no version knows inside known members: a hint of an unknown gesture, a perform
        # from an unknown source by an unknown gesture, an assignment to an unknown gesture.
        newer_events = []
        for e in events:
            if "hints" in e:
                e = dict(e, hints=e["hints"] + [{"gesture": "squeeze", "kind": "org.example.mute",
                                                 "hint": "Squeeze to Mute"}])
            if e["event"] == "performed":
                e = dict(e, source="schedule", gesture="squeeze")
            if e["event"] == "state":
                newer_events.append({"type": "event", "event": "assigned", "button": "action", "gesture": "squeeze",
                                     "kind": "org.example.timer", "momentary": False, "control": timer})
            newer_events.append(e)
        mark = sub.mark()
        daemons["plain"].push(events)
        daemons["newer"].push(newer_events)
        for node in daemons:
            # The last event's effect: every event before it has been handled (one connection, in order).
            sub.wait_payload(f"actiond/{node}/control/org_example_mute/state", "ON", since=mark)
        got, expected = normalized("newer", mark), normalized("plain", mark)
        assert got == expected, f"newer:\n{json.dumps(got, indent=1)}\nplain:\n{json.dumps(expected, indent=1)}"
        gestures = [json.loads(p)["event_type"] for t, p in got if t == "actiond/NODE/button/action/event"]
        assert gestures == ["short_press", "long_press", "long_release", "double_press"], got
        published = dict(got)
        assert published["actiond/NODE/control/org_example_timer/state"] == "ON", got
        assert published["actiond/NODE/button/action/assignment"] == "Mute", got
        ok("known events after unknown ones are bridged as from today's daemon: 4 gestures, 2 state changes, "
           "an assignment (a hint of an unknown gesture left out, a perform from an unknown source by an unknown "
           "gesture bridged, an assignment to an unknown gesture skipped)")

        mark = sub.mark()
        sub.publish("actiond/newer/control/org_example_timer/set", "OFF")
        sub.wait_payload("actiond/newer/control/org_example_timer/state", "OFF", since=mark)
        performs = daemons["newer"].received("perform")
        assert [r.get("kind") for r in performs] == ["org.example.timer"], performs
        ok("a command from MQTT reaches the newer daemon as a perform request, its reply and state event bridged")

        for node, bridge in bridges.items():
            text = bridge.process.text()
            for word in ("daemon-unreadable", "daemon-lost", "unreadable"):
                assert word not in text, f"{node}'s bridge logged {word}:\n" + "\n".join(bridge.process.lines(word))
            assert daemons[node].connections == 1, f"{node}: {daemons[node].connections} connections to the socket"
            assert len(daemons[node].received("subscribe")) == 1, daemons[node].requests
        ok("the bridge stayed connected: one connection, one subscribe, no daemon-unreadable or daemon-lost")
        sub.stop()
    finally:
        for p in procs:
            p.kill()
        for d in daemons.values():
            d.close()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True)
    parser.add_argument("--keep", action="store_true")
    parser.add_argument("only", nargs="*")
    args = parser.parse_args()
    scenarios = [("single-node", single_node), ("late-start", late_start), ("redelivery", redelivery),
                 ("queued", queued), ("lanes", lanes), ("tls-password", tls_password), ("cleanup", cleanup),
                 ("fleet", fleet), ("network-cut", network_cut),
                 ("name-resolution", name_resolution), ("newer-daemon", newer_daemon)]
    for name, scenario in scenarios:
        if args.only and name not in args.only:
            continue
        work = tempfile.mkdtemp(prefix=f"actiond-mqtt-{name}-")
        try:
            scenario(args.bin, work)
        except Exception:
            traceback.print_exc()
            for log in sorted(os.listdir(work)):
                if log.endswith(".log"):
                    with open(os.path.join(work, log), errors="replace") as f:
                        tail = f.read().splitlines()[-40:]
                    print(f"--- {log} (last {len(tail)} lines)")
                    print("\n".join(tail))
            print(f"test-mqtt: FAILED: {name} (files in {work})")
            return 1
        if not args.keep:
            shutil.rmtree(work, ignore_errors=True)
        print(f"test-mqtt: {name} passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
