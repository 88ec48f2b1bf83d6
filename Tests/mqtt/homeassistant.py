"""What Home Assistant requires of a device discovery payload, written from its documentation.

Each rule cites the page it comes from. The checker returns every problem it finds (an
empty list: Home Assistant would accept the payload), so a test can print them all.
"""

import json
import re

ID = re.compile(r"^[a-zA-Z0-9_-]+$")

# https://www.home-assistant.io/integrations/mqtt/#device-discovery-payload
#   "The shared options at the root level of the JSON message must include: device (dev),
#   origin (o)"; components under "components" (cmps), each with "platform" (p); "Also
#   required is a unique_id for entity-based components."
# https://www.home-assistant.io/integrations/mqtt/#adding-information-about-the-origin-of-a-discovery-message
#   origin: "name" is required.
# https://www.home-assistant.io/integrations/mqtt/#discovery-topic
#   node_id and object_id: [a-zA-Z0-9_-].
# Per platform, the options the page marks "Required" (and those the bridge relies on):
REQUIRED = {
    # https://www.home-assistant.io/integrations/device_trigger.mqtt/
    #   automation_type (must be 'trigger'), platform, topic, type, subtype required;
    #   device required (shared here).
    "device_automation": ["automation_type", "topic", "type", "subtype"],
    # https://www.home-assistant.io/integrations/event.mqtt/
    #   event_types and state_topic required.
    "event": ["unique_id", "event_types", "state_topic"],
    # https://www.home-assistant.io/integrations/switch.mqtt/
    #   command_topic (to be controllable), state_topic (not optimistic), payload_on/off.
    "switch": ["unique_id", "command_topic", "state_topic"],
    # https://www.home-assistant.io/integrations/button.mqtt/
    "button": ["unique_id", "command_topic"],
    # https://www.home-assistant.io/integrations/select.mqtt/
    #   command_topic and options required.
    "select": ["unique_id", "command_topic", "options"],
}

# Device trigger types the frontend knows (the page's list); others are allowed and shown as written.
TRIGGER_TYPES = {
    "button_short_press", "button_short_release", "button_long_press", "button_long_release",
    "button_double_press", "button_triple_press", "button_quadruple_press", "button_quintuple_press",
}


def check_availability(where, availability, problems):
    # https://www.home-assistant.io/integrations/mqtt/#using-availability-topics
    #   availability: a list of mappings, each with a required "topic".
    if not isinstance(availability, list) or not availability:
        problems.append(f"{where}: availability must be a non-empty list")
        return
    for i, a in enumerate(availability):
        if not isinstance(a, dict) or not isinstance(a.get("topic"), str) or not a["topic"]:
            problems.append(f"{where}: availability[{i}] needs a topic")


def check_device_discovery(topic, payload, prefix="homeassistant"):
    """Problems with one `<prefix>/device/<node>/config` message (payload: bytes or str)."""
    problems = []
    parts = topic.split("/")
    if len(parts) != 4 or parts[0] != prefix or parts[1] != "device" or parts[3] != "config":
        problems.append(f"topic {topic} is not {prefix}/device/<node_id>/config")
    elif not ID.match(parts[2]):
        problems.append(f"node id {parts[2]!r} is not [a-zA-Z0-9_-]+")
    try:
        doc = json.loads(payload)
    except ValueError as e:
        return problems + [f"payload is not JSON: {e}"]
    if not isinstance(doc, dict):
        return problems + ["payload is not a JSON object"]
    dev = doc.get("dev", doc.get("device"))
    if not isinstance(dev, dict):
        problems.append("dev (device) mapping is missing")
    else:
        # https://www.home-assistant.io/integrations/mqtt/#device-discovery-payload: the device
        # needs identifiers (ids) or connections to be a device at all.
        ids = dev.get("ids", dev.get("identifiers"))
        if not ids and not dev.get("cns", dev.get("connections")):
            problems.append("dev needs ids (identifiers) or cns (connections)")
        if not dev.get("name"):
            problems.append("dev needs a name")
    origin = doc.get("o", doc.get("origin"))
    if not isinstance(origin, dict) or not origin.get("name"):
        problems.append("o (origin) with a name is missing")
    cmps = doc.get("cmps", doc.get("components"))
    if not isinstance(cmps, dict) or not cmps:
        return problems + ["cmps (components) mapping is missing or empty"]
    unique_ids = set()
    trigger_keys = set()
    for cid, c in cmps.items():
        where = f"cmps.{cid}"
        if not ID.match(cid):
            problems.append(f"{where}: component id is not [a-zA-Z0-9_-]+")
        if not isinstance(c, dict):
            problems.append(f"{where}: not a mapping")
            continue
        platform = c.get("p", c.get("platform"))
        if platform not in REQUIRED:
            problems.append(f"{where}: platform {platform!r} is not one the bridge publishes")
            continue
        if len(c) == 1:
            continue  # only "p": the documented way to remove a component
        for key in REQUIRED[platform]:
            if c.get(key) in (None, "", []):
                problems.append(f"{where} ({platform}): {key} is required")
        if "unique_id" in c:
            if c["unique_id"] in unique_ids:
                problems.append(f"{where}: unique_id {c['unique_id']} is not unique")
            unique_ids.add(c["unique_id"])
        if platform == "device_automation":
            if c.get("automation_type") != "trigger":
                problems.append(f"{where}: automation_type must be 'trigger'")
            # "the combination of type and subtype should be unique for a device"
            key = (c.get("type"), c.get("subtype"))
            if key in trigger_keys:
                problems.append(f"{where}: type/subtype {key} is not unique")
            trigger_keys.add(key)
        else:
            check_availability(where, c.get("availability"), problems)
        if platform == "event":
            if not isinstance(c.get("event_types"), list) or not all(isinstance(t, str) for t in c["event_types"]):
                problems.append(f"{where}: event_types must be a list of strings")
        if platform == "select":
            opts = c.get("options")
            if not isinstance(opts, list) or not all(isinstance(o, str) for o in opts) or len(set(opts)) != len(opts):
                problems.append(f"{where}: options must be a list of distinct strings")
        for key in ("qos",):
            if key in c and c[key] not in (0, 1, 2):
                problems.append(f"{where}: qos must be 0, 1 or 2")
    return problems
