#!/usr/bin/python3
# SPDX-License-Identifier: Apache-2.0
"""The checker's own test (run by `make test-mqtt`): the payload docs/home-assistant.md
documents (the bridge's real output, Tests/ActiondMQTTTests/Docs/HomeAssistantDocTests.swift
checks that) passes, and every payload Home Assistant would reject or misread fails, each with
the problem that says why."""

import copy
import json
import os
import re
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from homeassistant import check_device_discovery, ha_problems  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TOPIC = "homeassistant/device/pi/config"


def documented():
    text = open(os.path.join(ROOT, "docs", "home-assistant.md"), encoding="utf-8").read()
    m = re.search(r"<!-- example: discovery -->\s*```json\n(.*?)\n```", text, re.S)
    assert m, "docs/home-assistant.md has no discovery example"
    return json.loads(m.group(1))


BASE = documented()
SWITCH = "control_org_actiond_work-timer"


def variant(change):
    doc = copy.deepcopy(BASE)
    change(doc)
    return json.dumps(doc)


def setter(path, value):
    def change(doc):
        *parents, last = path
        target = doc
        for p in parents:
            target = target[p]
        if value is DELETE:
            del target[last]
        else:
            target[last] = value
    return change


DELETE = object()
C = "cmps"

# (what, change, a word the problem must contain)
REJECTED = [
    ("no origin", setter(["o"], DELETE), "origin"),
    ("origin without a name", setter(["o", "name"], DELETE), "origin needs a name"),
    ("an unknown origin key", setter(["o", "version"], "1"), "origin key 'version'"),
    ("no device", setter(["dev"], DELETE), "device (dev) is required"),
    ("a device without identifiers", setter(["dev", "ids"], DELETE), "identifiers"),
    ("an unknown device key", setter(["dev", "firmware"], "1"), "device key 'firmware'"),
    ("a device identifier that is a list", setter(["dev", "ids"], [["a"]]), "identifiers must be strings"),
    ("a device without a name", setter(["dev", "name"], DELETE), "name"),
    ("an unknown root key", setter(["~"], "actiond/pi"), "root key '~'"),
    ("no components", setter([C], DELETE), "components"),
    ("a root qos of 3", setter(["qos"], 3), "qos"),
    ("an unsupported platform", setter([C, "action_event", "p"], "gesture"), "not supported"),
    ("an entity without unique_id", setter([C, "action_event", "unique_id"], DELETE), "unique_id is required"),
    ("two switches with one unique_id",
     lambda d: d[C].__setitem__("copy", dict(d[C][SWITCH])), "already used"),
    ("a trigger whose automation_type is not trigger",
     setter([C, "action_short_press", "automation_type"], "action"), "automation_type"),
    ("a trigger without subtype", setter([C, "action_short_press", "subtype"], DELETE), "subtype is required"),
    ("a trigger without topic", setter([C, "action_short_press", "topic"], DELETE), "topic is required"),
    ("a trigger on a topic with a # inside",
     setter([C, "action_short_press", "topic"], "actiond/#/event"), "not a valid topic"),
    ("two triggers with one type and subtype",
     setter([C, "action_long_press", "type"], "button_short_press"), "already exists"),
    ("an event without event_types", setter([C, "action_event", "event_types"], DELETE), "event_types is required"),
    ("an event whose event_types hold a mapping",
     setter([C, "action_event", "event_types"], [{"a": 1}]), "list of strings"),
    ("an event of an unknown device class", setter([C, "action_event", "device_class"], "press"), "device_class"),
    ("an event without state_topic", setter([C, "action_event", "state_topic"], DELETE), "state_topic is required"),
    ("an availability entry without topic",
     setter([C, "action_event", "availability"], [{"payload_available": "online"}]), "needs a topic"),
    ("availability and availability_topic",
     setter([C, "action_event", "availability_topic"], "actiond/pi/bridge"), "exclude each other"),
    ("an unknown availability_mode", setter([C, "action_event", "availability_mode"], "every"), "availability_mode"),
    ("a select without options", setter([C, "action_assignment", "options"], DELETE), "options is required"),
    ("a select option of 256 characters",
     setter([C, "action_assignment", "options"], ["x" * 256]), "255"),
    ("a select option that reads as none", setter([C, "action_assignment", "options"], ["none"]), "no option"),
    ("a blank select option", setter([C, "action_assignment", "options"], [" "]), "blank"),
    ("an unknown entity_category", setter([C, "action_assignment", "entity_category"], "settings"),
     "entity_category"),
    ("a command topic with a wildcard", setter([C, SWITCH, "command_topic"], "actiond/pi/+/set"), "wildcard"),
    ("a switch without command_topic", setter([C, SWITCH, "command_topic"], DELETE), "command_topic is required"),
    ("a misspelled key", setter([C, SWITCH, "stat_topic"], "actiond/pi/x"), "'stat_topic' is ignored"),
    ("an abbreviation HA does not know", setter([C, SWITCH, "pl_o"], "ON"), "'pl_o' is ignored"),
    ("a qos of 3", setter([C, SWITCH, "qos"], 3), "qos"),
    ("retain that is no boolean", setter([C, SWITCH, "retain"], "sometimes"), "boolean"),
    ("a control character in a topic", setter([C, SWITCH, "state_topic"], "a\u0007b"), "control character"),
    ("a topic base that leaves a wildcard", lambda d: d[C][SWITCH].update({"~": "actiond/+", "command_topic": "~/set"}),
     "wildcard"),
    ("a button without command_topic",
     lambda d: d[C].__setitem__("b", {"p": "button", "unique_id": "b"}), "command_topic is required"),
]

# Payloads Home Assistant takes as meant, which a checker too strict would refuse.
ACCEPTED = [
    ("the documented payload", lambda d: None),
    ("a component with only its platform (a removal)", setter([C, "gone"], {"p": "switch"})),
    ("abbreviated keys", lambda d: d[C].__setitem__(SWITCH, {
        ("stat_t" if k == "state_topic" else "cmd_t" if k == "command_topic" else "uniq_id" if k == "unique_id"
         else "avty" if k == "availability" else "avty_mode" if k == "availability_mode" else k): v
        for k, v in d[C][SWITCH].items()})),
    ("full root keys", lambda d: d.update({"device": d.pop("dev"), "origin": d.pop("o"), "components": d.pop(C)})),
    ("one availability mapping instead of a list",
     setter([C, "action_event", "availability"], {"topic": "actiond/pi/bridge"})),
    ("a null entity name", setter([C, "action_event", "name"], None)),
    ("a qos given as a string", setter([C, SWITCH, "qos"], "1")),
    ("an upper-case device class", setter([C, "action_event", "device_class"], "Button")),
    ("a trigger type the frontend does not translate", setter([C, "action_long_press", "type"], "button_long_hold")),
    ("a component's topic base", lambda d: d[C][SWITCH].update({
        "~": "actiond/pi/control/org_actiond_work-timer", "command_topic": "~/set", "state_topic": "~/state",
        "availability": [{"topic": "actiond/pi/bridge"}, {"topic": "actiond/pi/daemon"}, {"t": "~/availability"}]})),
]


def main():
    failures = []
    for what, change in ACCEPTED:
        found = ha_problems(TOPIC, variant(change))
        if found:
            failures.append(f"accepted by Home Assistant but flagged: {what}: {found}")
    if problems := check_device_discovery(TOPIC, json.dumps(BASE)):
        failures.append(f"the documented payload: {problems}")
    for what, change, word in REJECTED:
        found = check_device_discovery(TOPIC, variant(change))
        if not any(word in p for p in found):
            failures.append(f"not caught: {what} (wanted a problem with {word!r}, got {found})")
    for topic, word in (("homeassistant/device/pi.local/config", "[a-zA-Z0-9_-]"),
                        ("homeassistant/switch/pi/config", "not a device discovery topic"),
                        ("other/device/pi/config", "is not homeassistant/")):
        found = check_device_discovery(topic, json.dumps(BASE))
        if not any(word in p for p in found):
            failures.append(f"not caught: topic {topic} (wanted {word!r}, got {found})")
    for payload, word in (("not json", "not JSON"), ("[]", "not a JSON object"),
                          ('{"migrate_discovery": true}', "migration")):
        if not any(word in p for p in check_device_discovery(TOPIC, payload)):
            failures.append(f"not caught: payload {payload!r}")
    for f in failures:
        print("FAIL", f)
    total = len(ACCEPTED) + 1 + len(REJECTED) + 6
    print(f"homeassistant checker: {total - len(failures)} passed, {len(failures)} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
