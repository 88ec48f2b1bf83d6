#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""`make test-ha`: actiond-mqtt against a real Home Assistant (mk/ha.mk).

For each Home Assistant given (--ha VERSION=ROOT, ROOT made by Tests/ha/root.sh), in a network
namespace of its own (only the loopback: ports are private, nothing reaches the internet) and
a PID namespace (every process dies with it, however the test ends): Debian's mosquitto, a
real actiond (deviceless: its socket's `press`, through actionctl), the bridge, and Home
Assistant in its Debian root (chroot, read-only, its configuration in a temporary
directory), onboarded through its HTTP API with MQTT added through its config flow. Then,
asked of Home Assistant (REST and websocket APIs) and, for what was performed, of actiond
(its socket, the files its exec intents write); never of the broker:

  device    the device's name, manufacturer, model, sw_version; every entity (switch, button,
            select, event) with its state, matching actiond's
  triggers  the device triggers Home Assistant lists per gesture, with the labels its
            automation editor shows (its own translations, as the frontend combines them),
            which must be those of docs/home-assistant.md's table
  commands  a switch and a button from Home Assistant performed exactly once (exec intents
            that append to a file); the select assigns, and follows `actionctl assign`
  gestures  a hold, a double press and a long hold each fire their device-trigger automation
            exactly once (a later short press's automation is the fence)
  lwt       the bridge killed: every entity unavailable; restarted: all back
  restarts  Home Assistant restarted and the broker restarted, each with a change in actiond
            meanwhile: entities and states as actiond has them, nothing lost; a command Home
            Assistant publishes while the bridge is stopped is performed once when it is back

`--screenshot PNG` instead: set the same up, then capture the device page with headless
Chromium (scripts/ha-screenshot). Every wait has a deadline; nothing sleeps to test timing.
"""

import argparse
import fcntl
import json
import os
import re
import shutil
import signal
import socket
import struct
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.error
import urllib.parse
import urllib.request

import websocket  # python3-websocket (websocket-client)

# actiond's socket as the MQTT tier asks it (Tests/mqtt/harness.py; no paho needed for these).
sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "mqtt"))
from harness import actiond_exchange, file_lines as lines  # noqa: E402

# Tests/ha/screenshot.py imports this file as test_ha: the same module, not a second copy
# with its own list of processes to end.
sys.modules.setdefault("test_ha", sys.modules[__name__])

DEADLINE = float(os.environ.get("HA_TEST_DEADLINE", "60"))
# Home Assistant's start on a loaded two-core machine: several minutes for the first one.
START_DEADLINE = float(os.environ.get("HA_START_DEADLINE", "600"))
HA_PORT = 8123
BROKER_PORT = 1883
URL = f"http://127.0.0.1:{HA_PORT}"
CLIENT_ID = URL + "/"
NODE = "pi"
BASE = f"actiond/{NODE}"
DEVICE_ID = "0123456789abcdef0123456789abcdef"
DEVICE_NAME = "Kitchen Pi"
TOP = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
GESTURES = ["button_short_press", "button_long_press", "button_long_release", "button_double_press",
            "button_long_hold"]


def say(message):
    print(f"test-ha: {message}", flush=True)


def wait_for(what, predicate, timeout=DEADLINE, every=0.1):
    """Polls `predicate` until it returns a truthy value, which is returned."""
    end = time.monotonic() + timeout
    last = None
    while True:
        try:
            value = predicate()
        except (OSError, urllib.error.URLError, websocket.WebSocketException, ValueError) as e:
            value, last = None, e
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}" + (f" (last error: {last})" if last else ""))
        time.sleep(every)


def check(condition, message):
    if not condition:
        raise AssertionError(message)


# --- processes ----------------------------------------------------------------------------

PROCESSES = []


class Process:
    def __init__(self, name, argv, work, env=None):
        self.name, self.argv, self.env = name, argv, env
        self.log = os.path.join(work, f"{name}.log")
        self.proc = None

    def start(self):
        out = open(self.log, "a")
        out.write(f"--- start: {' '.join(self.argv)}\n")
        out.flush()
        self.proc = subprocess.Popen(self.argv, stdout=out, stderr=subprocess.STDOUT, env=self.env,
                                     stdin=subprocess.DEVNULL)
        out.close()
        PROCESSES.append(self)
        return self

    def running(self):
        return self.proc is not None and self.proc.poll() is None

    def stop(self, sig=signal.SIGTERM, timeout=None):
        """Signals the process and waits for it to exit (SIGKILL when it outlives the deadline)."""
        if not self.running():
            return
        self.proc.send_signal(sig)
        try:
            self.proc.wait(timeout=timeout or DEADLINE)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def tail(self, n=40):
        try:
            with open(self.log, errors="replace") as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""


def stop_all():
    for p in reversed(PROCESSES):
        p.stop(signal.SIGKILL)


def loopback_up():
    """The network namespace's loopback up (it starts down), by ioctl: no `ip` needed."""
    SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        request = struct.pack("16sh", b"lo", 0).ljust(40, b"\0")
        flags = struct.unpack("16sh", fcntl.ioctl(s, SIOCGIFFLAGS, request)[:18])[1]
        fcntl.ioctl(s, SIOCSIFFLAGS, struct.pack("16sh", b"lo", flags | IFF_UP).ljust(40, b"\0"))


def listening(port):
    with socket.socket() as s:
        return s.connect_ex(("127.0.0.1", port)) == 0


class Broker:
    """Debian's mosquitto with persistence (as Debian's own configuration has it), so that a
    restart keeps retained messages and the bridge's persistent session, and with
    set_tcp_nodelay as docs/home-assistant.md's step 1 sets it up."""

    def __init__(self, work):
        self.dir = os.path.join(work, "mosquitto")
        os.makedirs(self.dir, exist_ok=True)
        conf = os.path.join(self.dir, "mosquitto.conf")
        with open(conf, "w") as f:
            f.write(f"user root\nlistener {BROKER_PORT} 127.0.0.1\nallow_anonymous true\n"
                    f"persistence true\npersistence_location {self.dir}/\nautosave_interval 1\nset_tcp_nodelay true\n"
                    "log_dest stdout\nlog_type error\nlog_type warning\nlog_type notice\n"
                    "log_type information\nconnection_messages true\n")
        self.process = Process("mosquitto", ["/usr/sbin/mosquitto", "-c", conf], work)

    def start(self):
        self.process.start()

        def up():
            if not self.process.running():
                raise AssertionError(f"mosquitto exited:\n{self.process.tail()}")
            return listening(BROKER_PORT)
        wait_for("mosquitto to listen", up)

    def stop(self):
        self.process.stop()


# --- actiond --------------------------------------------------------------------------------

class Actiond:
    def __init__(self, bin_dir, work):
        self.bin_dir = bin_dir
        self.work = work
        self.socket = os.path.join(work, "actiond.sock")
        self.lamp = os.path.join(work, "lamp")
        self.lamp_log = os.path.join(work, "lamp.log")
        self.bell_log = os.path.join(work, "bell.log")
        with open(self.lamp, "w") as f:
            f.write("0\n")
        config = {
            "socket": {"path": self.socket},
            "stateDirectory": os.path.join(work, "state"),
            "controlsDirectory": os.path.join(work, "controls.d"),
            "buttons": [{"name": "action", "key": "KEY_PROG1", "match": {"tag": "actiond"},
                         "holdThresholdMs": 600, "longHoldThresholdMs": 1600}],
            "controls": [
                {"kind": "org.test.timer", "type": "toggle", "displayName": "Timer",
                 "actionHint": {"on": "Stop", "off": "Start"}, "intent": {"type": "state"},
                 "value": {"type": "store", "initial": False}},
                {"kind": "org.test.lamp", "type": "toggle", "displayName": "Lamp",
                 "actionHint": {"on": "Turn Off", "off": "Turn On"},
                 "intent": {"type": "exec", "argv": ["/bin/sh", "-c",
                            f'echo "$ACTIOND_VALUE" > {self.lamp}; echo "$ACTIOND_VALUE" >> {self.lamp_log}']},
                 "value": {"type": "file", "path": self.lamp}},
                {"kind": "org.test.bell", "type": "button", "displayName": "Bell", "actionHint": "Ring",
                 "intent": {"type": "exec", "argv": ["/bin/sh", "-c", f"echo ring >> {self.bell_log}"]}},
            ],
            "assignments": {"action": {"hold": "org.test.timer", "doublePress": "org.test.bell",
                                       "longHold": "org.test.lamp"}},
        }
        os.makedirs(config["controlsDirectory"], exist_ok=True)
        self.config_path = os.path.join(work, "actiond.json")
        with open(self.config_path, "w") as f:
            json.dump(config, f)
        self.process = Process("actiond", [os.path.join(bin_dir, "actiond"), "--config", self.config_path,
                                           "--log-level", "debug"], work)

    def start(self):
        self.process.start()
        wait_for("actiond's socket", lambda: self.request({"request": "ping"}))
        return self

    def request(self, request):
        """One request on a fresh connection: (hello, reply)."""
        return actiond_exchange(self.socket, request, timeout=DEADLINE)

    def actionctl(self, *args):
        r = subprocess.run([os.path.join(self.bin_dir, "actionctl"), "--socket", self.socket, *args],
                           capture_output=True, text=True, timeout=DEADLINE)
        check(r.returncode == 0, f"actionctl {' '.join(args)}: exit {r.returncode}: {r.stdout}{r.stderr}")
        return r.stdout

    def values(self):
        """{kind: value} of every control, from actiond."""
        _, reply = self.request({"request": "list"})
        return {c["kind"]: c.get("value") for c in reply["result"]["controls"]}

    def hold_assignment(self):
        hello, _ = self.request({"request": "ping"})
        control = hello["buttons"][0].get("control")
        return control and control["kind"]

    def version(self):
        hello, _ = self.request({"request": "ping"})
        return hello["daemon"]


class Bridge:
    def __init__(self, bin_dir, work, actiond):
        config = os.path.join(work, "mqtt.json5")
        with open(config, "w") as f:
            json.dump({"broker": {"host": "127.0.0.1", "port": BROKER_PORT}, "socket": actiond.socket,
                       "homeAssistant": {"nodeId": NODE, "deviceId": DEVICE_ID, "deviceName": DEVICE_NAME}}, f)
        self.process = Process("actiond-mqtt", [os.path.join(bin_dir, "actiond-mqtt"), "--config", config,
                                                "--log-level", "debug"], work)

    def start(self):
        self.process.start()

    def stop(self, sig=signal.SIGTERM):
        self.process.stop(sig)


# --- Home Assistant ---------------------------------------------------------------------------

class HomeAssistant:
    """Home Assistant VERSION from its Debian root, read-only, with /tmp a tmpfs and its
    configuration directory (kept for the logs) bound at /tmp/config."""

    def __init__(self, version, root, work):
        self.version = version
        self.work = work
        self.mnt = os.path.join(work, "root")
        self.config = os.path.join(work, "config")
        os.makedirs(self.mnt)
        os.makedirs(self.config)
        # No http: section: the defaults (port 8123, every address, which in this network
        # namespace is the loopback alone). 2026's frontend asks to confirm a server_host set
        # in YAML, in a dialog over every page.
        with open(os.path.join(self.config, "configuration.yaml"), "w") as f:
            f.write("homeassistant:\n  name: actiond test\n  time_zone: UTC\n  unit_system: metric\n"
                    "  latitude: 52.52\n  longitude: 13.40\n  elevation: 34\n  country: DE\n  currency: EUR\n"
                    "automation: !include automations.yaml\n"
                    "logger:\n  default: warning\n  logs:\n    homeassistant.components.mqtt: debug\n")
        with open(os.path.join(self.config, "automations.yaml"), "w") as f:
            f.write("[]\n")
        for argv in (["mount", "--bind", root, self.mnt], ["mount", "-o", "remount,bind,ro", self.mnt],
                     ["mount", "-t", "proc", "proc", f"{self.mnt}/proc"],
                     ["mount", "--bind", "/dev", f"{self.mnt}/dev"],
                     ["mount", "-t", "tmpfs", "-o", "mode=1777", "shm", f"{self.mnt}/dev/shm"],
                     ["mount", "--bind", "/sys", f"{self.mnt}/sys"],
                     ["mount", "-t", "tmpfs", "-o", "mode=1777", "tmp", f"{self.mnt}/tmp"]):
            subprocess.run(argv, check=True)
        os.makedirs(f"{self.mnt}/tmp/config")
        subprocess.run(["mount", "--bind", self.config, f"{self.mnt}/tmp/config"], check=True)
        self.process = Process(f"home-assistant", [
            "chroot", self.mnt, "/usr/bin/env", "-i", "HOME=/tmp", "LANG=C.UTF-8", "PATH=/opt/ha/bin:/usr/bin:/bin",
            "/opt/ha/bin/hass", "-c", "/tmp/config", "--skip-pip", "--log-no-color"], work)
        self.token = None
        self.ws = None

    # HTTP
    def http(self, method, path, body=None, form=None, auth=True, timeout=None):
        data, headers = None, {}
        if form is not None:
            data = urllib.parse.urlencode(form).encode()
            headers["Content-Type"] = "application/x-www-form-urlencoded"
        elif body is not None:
            data = json.dumps(body).encode()
            headers["Content-Type"] = "application/json"
        if auth:
            headers["Authorization"] = f"Bearer {self.token}"
        request = urllib.request.Request(URL + path, data=data, method=method, headers=headers)
        try:
            with urllib.request.urlopen(request, timeout=timeout or DEADLINE) as r:
                text = r.read().decode()
        except urllib.error.HTTPError as e:
            raise AssertionError(f"{method} {path}: HTTP {e.code}: {e.read().decode(errors='replace')[:2000]}") from None
        return json.loads(text) if text else None

    def start(self):
        self.process.start()
        started = time.monotonic()

        def up():
            if not self.process.running():
                raise AssertionError(f"Home Assistant exited:\n{self.process.tail()}")
            if self.token is None:
                return self.http("GET", "/api/onboarding", auth=False, timeout=5) is not None
            self.connect()
            return self.call("get_config").get("state") == "RUNNING"
        wait_for(f"Home Assistant {self.version} to start", up, timeout=START_DEADLINE, every=0.5)
        say(f"Home Assistant {self.version} up after {time.monotonic() - started:.0f} s")

    def stop(self):
        if self.ws:
            self.ws.close()
            self.ws = None
        self.process.stop(timeout=START_DEADLINE)

    def onboard(self):
        """Onboarding through its API, as the frontend does it: the user (an auth code, then
        tokens), the location, analytics (nothing sent) and the integration step."""
        r = self.http("POST", "/api/onboarding/users", {"client_id": CLIENT_ID, "name": "Test",
                      "username": "test", "password": "test-password", "language": "en"}, auth=False)
        tokens = self.http("POST", "/auth/token", form={"grant_type": "authorization_code", "code": r["auth_code"],
                           "client_id": CLIENT_ID}, auth=False)
        self.token = tokens["access_token"]
        self.http("POST", "/api/onboarding/core_config", {})
        self.http("POST", "/api/onboarding/analytics", {})
        self.http("POST", "/api/onboarding/integration", {"client_id": CLIENT_ID, "redirect_uri": URL + "/?auth_callback=1"})
        # A long-lived token: the test outlives the 30 minutes of an access token, and it
        # survives Home Assistant's restarts.
        self.connect()
        self.token = self.call("auth/long_lived_access_token", client_name="actiond test", lifespan=30)
        self.ws.close()
        self.ws = None
        self.connect()
        status = self.http("GET", "/api/onboarding", auth=False)
        check(all(step["done"] for step in status), f"onboarding not done: {status}")

    def add_mqtt(self):
        flow = self.http("POST", "/api/config/config_entries/flow", {"handler": "mqtt", "show_advanced_options": False})
        if flow.get("type") == "menu":  # under the Supervisor only; not here
            flow = self.http("POST", f"/api/config/config_entries/flow/{flow['flow_id']}", {"next_step_id": "broker"})
        check(flow.get("type") == "form" and flow.get("step_id") == "broker", f"MQTT's config flow: {flow}")
        say(f"MQTT's config flow asks: {[f['name'] for f in flow.get('data_schema', [])]}")
        answer = {"broker": "127.0.0.1", "port": BROKER_PORT}
        # A collapsed section of the form (2025 and later: "other_settings") is sent as the
        # frontend fills it in when it is left closed (computeInitialHaFormData: a field's
        # default; a required boolean false, a required select its first option).
        def initial(field):
            if "default" in field:
                return field["default"]
            selector = field.get("selector") or {}
            if "boolean" in selector:
                return False
            if "select" in selector:
                option = selector["select"]["options"][0]
                return option["value"] if isinstance(option, dict) else option
            return None
        for field in flow.get("data_schema", []):
            if field.get("type") == "expandable":
                answer[field["name"]] = {f["name"]: initial(f) for f in field.get("schema", [])
                                         if "default" in f or f.get("required")}
        result = self.http("POST", f"/api/config/config_entries/flow/{flow['flow_id']}", answer)
        check(result.get("type") == "create_entry", f"MQTT's config flow did not create an entry: {result}")

    # websocket
    def connect(self):
        if self.ws:
            return
        ws = websocket.create_connection(URL.replace("http", "ws") + "/api/websocket", timeout=DEADLINE)
        check(json.loads(ws.recv())["type"] == "auth_required", "websocket: no auth_required")
        ws.send(json.dumps({"type": "auth", "access_token": self.token}))
        m = json.loads(ws.recv())
        check(m["type"] == "auth_ok", f"websocket auth: {m}")
        self.ws, self.next_id, self.events = ws, 1, []

    def call(self, kind, **payload):
        self.connect()
        i = self.next_id
        self.next_id += 1
        self.ws.send(json.dumps(dict(payload, id=i, type=kind)))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("type") == "event":
                self.events.append(m["event"])
            elif m.get("id") == i:
                check(m.get("success"), f"{kind}: {m.get('error')}")
                return m.get("result")

    def pump(self, timeout):
        """Reads websocket events for at most `timeout` seconds."""
        self.ws.settimeout(timeout)
        try:
            m = json.loads(self.ws.recv())
            if m.get("type") == "event":
                self.events.append(m["event"])
        except websocket.WebSocketTimeoutException:
            pass
        finally:
            self.ws.settimeout(DEADLINE)

    def states(self):
        return {s["entity_id"]: s for s in self.http("GET", "/api/states")}

    def service(self, domain, service, **data):
        return self.http("POST", f"/api/services/{domain}/{service}", data)

    def errors(self):
        """The log's ERROR lines of its MQTT integration (a discovery payload it refused, a
        failed subscription...)."""
        path = os.path.join(self.config, "home-assistant.log")
        return [l for l in lines(path) if " ERROR " in l and "[homeassistant.components.mqtt" in l]


# --- the test --------------------------------------------------------------------------------

def doc_labels():
    """{trigger type: label} from docs/home-assistant.md's table (step 4)."""
    labels = {}
    for line in open(os.path.join(TOP, "docs", "home-assistant.md")):
        m = re.match(r"\s*\|[^|]*\|\s*`(button_[a-z_]+)`\s*\|\s*`(.*)`\s*\|\s*$", line)
        if m:
            labels[m.group(1)] = m.group(2)
    return labels


def editor_label(trigger, resources):
    """The label Home Assistant's automation editor shows for a device trigger: frontend
    src/data/device_automation.ts, localizeDeviceAutomationTrigger: the integration's
    trigger_type string with {subtype} (itself translated through trigger_subtype when there
    is one), else `"subtype" type`."""
    domain, kind, subtype = trigger["domain"], trigger["type"], trigger.get("subtype")
    sub = resources.get(f"component.{domain}.device_automation.trigger_subtype.{subtype}") or subtype
    template = resources.get(f"component.{domain}.device_automation.trigger_type.{kind}")
    if template:
        return template.replace("{subtype}", sub or "")
    return f'"{subtype}" {kind}' if subtype else kind


class Case:
    def __init__(self, version, root, bin_dir, work):
        self.version = version
        self.work = work
        self.broker = Broker(work)
        self.actiond = Actiond(bin_dir, work)
        self.bridge = Bridge(bin_dir, work, self.actiond)
        self.ha = HomeAssistant(version, root, work)
        self.fired = []

    def ok(self, message):
        say(f"[{self.version}] ok: {message}")

    def setup(self):
        self.broker.start()
        self.actiond.start()
        self.bridge.start()
        self.ha.start()
        self.ha.onboard()
        self.ha.add_mqtt()
        self.ok("onboarded through the API, MQTT added through its config flow")
        self.device = wait_for("the device in Home Assistant's registry", self.find_device)
        self.entities = wait_for("the device's 5 entities", self.find_entities)

    def find_device(self):
        for d in self.ha.call("config/device_registry/list"):
            if ["mqtt", f"actiond_{DEVICE_ID}"] in d["identifiers"]:
                return d
        return None

    def find_entities(self):
        """{unique_id suffix: entity registry entry} once all five are there."""
        prefix = f"actiond_{DEVICE_ID}_"
        found = {e["unique_id"][len(prefix):]: e for e in self.ha.call("config/entity_registry/list")
                 if e.get("unique_id", "").startswith(prefix) and e.get("platform") == "mqtt"}
        return found if len(found) >= 5 else None

    def entity(self, suffix):
        return self.entities[suffix]["entity_id"]

    def state(self, suffix):
        return self.ha.states()[self.entity(suffix)]

    def wait_state(self, suffix, want, what=None):
        return wait_for(what or f"{self.entity(suffix)} to be {want!r}", lambda: self.state(suffix)["state"] == want)

    def expected_states(self):
        """Every entity's state as actiond has it now (the event and button entities: not
        unavailable)."""
        v = self.actiond.values()
        names = {"org.test.timer": "Timer", "org.test.lamp": "Lamp"}
        return {
            "control_org_test_timer": "on" if v["org.test.timer"] else "off",
            "control_org_test_lamp": "on" if v["org.test.lamp"] else "off",
            "action_assignment": names.get(self.actiond.hold_assignment(), "unknown"),
        }

    def wait_consistent(self, what):
        def consistent():
            states = self.ha.states()
            for suffix, want in self.expected_states().items():
                if states[self.entity(suffix)]["state"] != want:
                    return False
            return all(states[e["entity_id"]]["state"] != "unavailable" for e in self.entities.values())
        try:
            wait_for(what, consistent)
        except AssertionError:
            states = self.ha.states()
            raise AssertionError(f"{what}: Home Assistant has "
                                 f"{ {s: states[e['entity_id']]['state'] for s, e in self.entities.items()} }, "
                                 f"actiond {self.expected_states()}")

    # -- the checks
    def device_and_entities(self):
        d = self.device
        want = {"name": DEVICE_NAME, "manufacturer": "actiond", "model": "actiond", "sw_version": self.actiond.version()}
        got = {k: d.get(k) for k in want}
        check(got == want, f"device: {got}, expected {want}")
        domains = {s: e["entity_id"].split(".")[0] for s, e in self.entities.items()}
        want_domains = {"action_event": "event", "action_assignment": "select", "control_org_test_timer": "switch",
                        "control_org_test_lamp": "switch", "control_org_test_bell": "button"}
        check(domains == want_domains, f"entities: {domains}, expected {want_domains}")
        for s, e in self.entities.items():
            check(e["device_id"] == d["id"], f"{e['entity_id']} is not on the device")
        names = {s: e.get("original_name") for s, e in self.entities.items()}
        want_names = {"action_event": "action", "action_assignment": "action hold", "control_org_test_timer": "Timer",
                      "control_org_test_lamp": "Lamp", "control_org_test_bell": "Bell"}
        check(names == want_names, f"entity names: {names}, expected {want_names}")
        self.wait_consistent("the entities' states to be actiond's")
        states = self.ha.states()
        select = states[self.entity("action_assignment")]
        check(select["attributes"].get("options") == ["Timer", "Lamp", "Bell"],
              f"the select's options: {select['attributes'].get('options')}")
        event = states[self.entity("action_event")]
        check(event["attributes"].get("event_types") == ["short_press", "long_press", "long_release", "double_press", "long_hold"],
              f"the event entity's event types: {event['attributes'].get('event_types')}")
        check(event["state"] == "unknown", f"the event entity before any press: {event['state']}")
        check(states[self.entity("control_org_test_bell")]["state"] == "unknown", "the button before any press")
        self.ok(f"device {got}; entities {sorted(domains.values())} with actiond's states")

    def triggers(self):
        listed = self.ha.call("device_automation/trigger/list", device_id=self.device["id"])
        mine = [t for t in listed if t.get("domain") == "mqtt"]
        types = sorted((t["type"], t["subtype"]) for t in mine)
        check(types == sorted((g, "action") for g in GESTURES), f"device triggers: {types}")
        resources = self.ha.call("frontend/get_translations", language="en", category="device_automation",
                                 integration=["mqtt"])["resources"]
        labels = {t["type"]: editor_label(t, resources) for t in mine}
        documented = doc_labels()
        check(labels == documented, f"the editor's labels {labels} differ from docs/home-assistant.md's {documented}")
        self.triggers_listed = {t["type"]: t for t in mine}
        self.ok(f"device triggers with the editor's labels, as documented: {labels}")

    def automations(self):
        """One automation per gesture, on its device trigger as Home Assistant listed it,
        firing the event actiond_test with the gesture."""
        self.ha.call("subscribe_events", event_type="actiond_test")
        for kind, trigger in self.triggers_listed.items():
            self.ha.http("POST", f"/api/config/automation/config/actiond_{kind}", {
                "id": f"actiond_{kind}", "alias": f"actiond {kind}", "description": "",
                "triggers": [trigger], "conditions": [],
                "actions": [{"event": "actiond_test", "event_data": {"gesture": kind}}], "mode": "queued"})
        wait_for("the 5 automations to be on", lambda: sum(
            1 for e, s in self.ha.states().items() if e.startswith("automation.actiond_") and s["state"] == "on") == 5)

    def fired_since(self, mark):
        return [e["data"]["gesture"] for e in self.ha.events[mark:] if e["event_type"] == "actiond_test"]

    def gesture(self, what, args, expected):
        """Presses, waits for the automations it should fire, then a short press as the fence:
        once the fence's automation has fired, what fired before it must be exactly
        `expected`. (The fence is pressed only then: a second press within the double-press
        window of the first would make one double press of the two.)"""
        mark = len(self.ha.events)
        self.actiond.actionctl("press", "action", *args)

        def fired(want):
            def seen():
                self.ha.pump(0.5)
                got = self.fired_since(mark)
                return all(got.count(g) >= want.count(g) for g in want)
            return seen
        wait_for(f"the automations of {what}", fired(expected))
        self.actiond.actionctl("press", "action")
        wait_for(f"the fence's automation after {what}", fired(expected + ["button_short_press"]))
        got = self.fired_since(mark)
        check(got[-1] == "button_short_press" and sorted(got[:-1]) == sorted(expected),
              f"{what}: automations fired {got}, expected {expected} then the fence")
        self.ok(f"{what}: automations fired {got[:-1]}, each once")

    def gestures(self):
        self.automations()
        self.gesture("a short press", [], ["button_short_press"])
        self.gesture("a hold", ["--hold", "900"], ["button_long_press", "button_long_release"])
        event = self.state("action_event")
        check(event["attributes"].get("event_type") == "short_press" and event["state"] not in ("unknown", "unavailable"),
              f"the event entity after the fence: {event}")
        self.gesture("a double press", ["--double"], ["button_double_press"])
        self.gesture("a long hold", ["--hold", "2000"], ["button_long_press", "button_long_hold", "button_long_release"])
        self.wait_consistent("the switches after the holds")

    def commands(self):
        lamp0, bell0 = len(lines(self.actiond.lamp_log)), len(lines(self.actiond.bell_log))
        lamp = self.entity("control_org_test_lamp")
        want = "off" if self.state("control_org_test_lamp")["state"] == "on" else "on"
        self.ha.service("switch", f"turn_{want}", entity_id=lamp)
        self.wait_state("control_org_test_lamp", want)
        self.ha.service("button", "press", entity_id=self.entity("control_org_test_bell"))
        wait_for("the bell to ring", lambda: len(lines(self.actiond.bell_log)) > bell0)
        # The bell rang after the switch's command: a second perform of the lamp would be in.
        check(len(lines(self.actiond.lamp_log)) == lamp0 + 1, f"the switch performed {len(lines(self.actiond.lamp_log)) - lamp0} times")
        self.wait_consistent("the states after the switch's command")
        check(len(lines(self.actiond.bell_log)) == bell0 + 1, f"the button performed {len(lines(self.actiond.bell_log)) - bell0} times")
        self.ok("a switch's and a button's command from Home Assistant performed once each")

        self.ha.service("select", "select_option", entity_id=self.entity("action_assignment"), option="Lamp")
        wait_for("actiond's hold to be Lamp", lambda: self.actiond.hold_assignment() == "org.test.lamp")
        self.wait_state("action_assignment", "Lamp")
        self.actiond.actionctl("assign", "action", "org.test.timer")
        self.wait_state("action_assignment", "Timer", "the select to follow actionctl assign")
        self.ok("the select assigns, and follows actionctl assign")

    def last_will(self):
        self.bridge.stop(signal.SIGKILL)
        wait_for("every entity unavailable after the bridge's death", lambda: all(
            self.ha.states()[e["entity_id"]]["state"] == "unavailable" for e in self.entities.values()))
        self.bridge.start()
        self.wait_consistent("every entity back with the bridge")
        self.ok("the Last Will makes every entity unavailable; the bridge's restart restores them")

    def queued_command(self):
        """A command Home Assistant sends while the bridge is away (an mqtt.publish, QoS 1:
        its entities are unavailable, so no switch service would send one) is performed
        once when the bridge is back."""
        lamp0 = len(lines(self.actiond.lamp_log))
        self.bridge.stop()
        wait_for("the entities unavailable", lambda: self.state("control_org_test_lamp")["state"] == "unavailable")
        want = "OFF" if self.actiond.values()["org.test.lamp"] else "ON"
        self.ha.service("mqtt", "publish", topic=f"{BASE}/control/org_test_lamp/set", payload=want, qos=1, retain=False)
        self.bridge.start()
        self.wait_state("control_org_test_lamp", want.lower(), "the command sent while the bridge was away to be performed")
        bell0 = len(lines(self.actiond.bell_log))
        self.ha.service("button", "press", entity_id=self.entity("control_org_test_bell"))
        wait_for("the bell to ring", lambda: len(lines(self.actiond.bell_log)) > bell0)
        check(len(lines(self.actiond.lamp_log)) == lamp0 + 1,
              f"the command sent while the bridge was away performed {len(lines(self.actiond.lamp_log)) - lamp0} times")
        self.ok("a command Home Assistant sent while the bridge was away performed once on its return")

    def ha_restart(self):
        entities = sorted(self.entities)
        self.ha.stop()
        self.actiond.actionctl("perform", "org.test.timer")  # a change while Home Assistant is away
        self.ha.start()
        self.entities = wait_for("the device's 5 entities after the restart", self.find_entities)
        check(sorted(self.entities) == entities, f"entities after Home Assistant's restart: {sorted(self.entities)}")
        self.wait_consistent("the states after Home Assistant's restart")
        self.ha.call("subscribe_events", event_type="actiond_test")
        wait_for("the automations back", lambda: sum(
            1 for e, s in self.ha.states().items() if e.startswith("automation.actiond_") and s["state"] == "on") == 5)
        self.gesture("a double press after Home Assistant's restart", ["--double"], ["button_double_press"])
        self.ok("Home Assistant's restart lost nothing (entities, states, a change made meanwhile, triggers)")

    def broker_restart(self):
        self.broker.stop()
        wait_for("the entities unavailable without the broker",
                 lambda: self.state("control_org_test_timer")["state"] == "unavailable")
        self.actiond.actionctl("perform", "org.test.timer")  # a change while the broker is away
        self.broker.start()
        self.wait_consistent("the states after the broker's restart")
        lamp0 = len(lines(self.actiond.lamp_log))
        want = "off" if self.state("control_org_test_lamp")["state"] == "on" else "on"
        self.ha.service("switch", f"turn_{want}", entity_id=self.entity("control_org_test_lamp"))
        self.wait_state("control_org_test_lamp", want)
        check(len(lines(self.actiond.lamp_log)) == lamp0 + 1, "a command after the broker's restart")
        self.ok("the broker's restart lost nothing (states, a change made meanwhile, commands)")

    def run(self):
        self.setup()
        self.device_and_entities()
        self.triggers()
        self.commands()
        self.gestures()
        self.last_will()
        self.queued_command()
        self.ha_restart()
        self.broker_restart()
        errors = self.ha.errors()
        check(not errors, "Home Assistant logged errors about MQTT:\n" + "\n".join(errors[:10]))

    def logs(self):
        return [p.log for p in (self.broker.process, self.actiond.process, self.bridge.process, self.ha.process)] + \
            [os.path.join(self.ha.config, "home-assistant.log")]


def inside(args):
    loopback_up()
    failed = []
    for spec in args.ha:
        version, root = spec.split("=", 1)
        work = os.path.join(args.work, version)
        os.makedirs(work)
        case = Case(version, root, args.bin, work)
        started = time.monotonic()
        try:
            if args.screenshot:
                case.setup()
                screenshot(case, args.screenshot)
            else:
                case.run()
            say(f"[{version}] passed in {time.monotonic() - started:.0f} s")
        except Exception as e:  # every failure is reported with its logs, then the next version runs
            failed.append(version)
            say(f"FAIL [{version}]: {e}")
            traceback.print_exc()
            for log in case.logs():
                say(f"[{version}] {log} (last lines):")
                try:
                    print("".join(open(log, errors="replace").readlines()[-30:]), flush=True)
                except OSError:
                    pass
        finally:
            stop_all()
            PROCESSES.clear()
    if failed:
        say(f"FAILED: Home Assistant {', '.join(failed)} (logs in {args.work})")
        return 1
    say(f"passed: Home Assistant {', '.join(s.split('=')[0] for s in args.ha)}")
    return 0


def screenshot(case, out):
    """The device page, as a signed-in user sees it, by headless Chromium driven over its
    DevTools protocol: the frontend signs in with an auth code in its URL (the OAuth callback
    it handles itself), opens the device page, and is captured once the device's entities
    are drawn."""
    from screenshot import capture  # Tests/ha/screenshot.py
    capture(case, out)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--bin", required=True, help="where actiond, actionctl and actiond-mqtt are")
    parser.add_argument("--ha", action="append", required=True, help="VERSION=ROOT (Tests/ha/root.sh)")
    parser.add_argument("--work", help="a directory for the logs (default: a new temporary one)")
    parser.add_argument("--screenshot", help="write the device page's screenshot here instead of testing")
    parser.add_argument("--inside", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    args.bin = os.path.abspath(args.bin)
    if args.screenshot:
        args.screenshot = os.path.abspath(args.screenshot)
    if args.inside:
        sys.exit(inside(args))
    if os.geteuid() != 0:
        sys.exit("test-ha: needs root (namespaces, mounts, chroot)")
    args.work = args.work or tempfile.mkdtemp(prefix="actiond-test-ha.")
    # Private network (loopback only), PID (every process dies with the namespace's first
    # one, however the test ends) and mount namespaces. In a chroot (fresh-root, CI) "/" is no
    # mount point and cannot be made private: the chroot's mounts are private already there.
    with open("/proc/self/mountinfo") as f:
        root_mounted = any(line.split()[4] == "/" for line in f)
    argv = ["unshare", "--net", "--pid", "--fork", "--kill-child", "--mount-proc", "--mount",
            "--propagation", "private" if root_mounted else "unchanged",
            sys.executable, os.path.abspath(__file__), "--inside", "--bin", args.bin, "--work", args.work]
    for spec in args.ha:
        argv += ["--ha", spec]
    if args.screenshot:
        argv += ["--screenshot", args.screenshot]
    # unshare dies with this process (PR_SET_PDEATHSIG), and with it, through --kill-child
    # and the PID namespace, everything the test started: even a SIGKILL of the test leaves
    # no Home Assistant, broker, actiond or bridge behind.
    def die_with_parent():
        import ctypes
        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    rc = subprocess.call(argv, preexec_fn=die_with_parent)
    if rc == 0 and not os.environ.get("KEEP"):
        shutil.rmtree(args.work, ignore_errors=True)
    elif rc != 0:
        say(f"logs kept in {args.work}")
    sys.exit(rc)


if __name__ == "__main__":
    main()
