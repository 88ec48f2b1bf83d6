# SPDX-License-Identifier: Apache-2.0
"""What Home Assistant does with a device discovery payload, written from its source code.

No Home Assistant can run here (its releases with device-based discovery need Python 3.12+),
so the rules below were read from HA's own source: the PyPI wheels
homeassistant-2026.11.0-py3-none-any.whl (sha256 7ca5fbde9dea879ac7723949fc84347aac5182e6309c357b2e4973fd391b00f7)
and homeassistant-2024.11.0-py3-none-any.whl, the first release with device-based discovery
(2024.10.4 subscribes to no `<prefix>/device/+/config`). A rule cites "file:lines" of the
2026.11.0 wheel, under homeassistant/components/mqtt/ unless the path says otherwise;
where 2024.11.0 differs the rule takes the stricter of the two and says so.

How HA reads the payload (discovery.py:596-706, 2026.11.0):
1. the topic must match `<component>/[<node_id>/]<object_id>/config` with ids in
   [a-zA-Z0-9_-] (discovery.py:75-78, 604-614), or the message is dropped;
2. abbreviations are expanded (discovery.py:194-263): at the root and in each component
   with ABBREVIATIONS (abbreviations.py:3-), in `device` with DEVICE_ABBREVIATIONS, in
   `origin` with ORIGIN_ABBREVIATIONS; an abbreviation HA does not know stays as written;
3. the whole payload goes through DEVICE_DISCOVERY_SCHEMA (schemas.py:268-282 and
   290-321; discovery.py:361-374): a root, `device` or `origin` key it does not know, a
   missing `device` or `origin`, a component whose platform is not supported, or an entity
   component without `unique_id` makes HA drop the **whole** payload (a warning in its log);
4. each component is then one discovery message of its platform (discovery.py:652-697),
   with the payload's device and origin added: a component with only its platform is
   empty once the platform is taken out, which removes that component (discovery.py:665-669,
   entity.py:1343-1351); components simply left out are not removed; a component's `~`
   is the base of its topics (discovery.py:735-736), a `~` at the root is an unknown key;
5. each component goes through its platform's DISCOVERY_SCHEMA (entity.py:348-389): an
   invalid one is dropped alone (logged, a repair issue); keys the schema does not know are
   silently removed (extra=REMOVE_EXTRA), so a misspelled key is a problem here.

``check_device_discovery`` returns every problem it finds (an empty list: HA would take
the whole payload as meant), HA's rules first, then the bridge's own promises
(``bridge_problems``), each marked so a reader knows which is which.
"""

import json
import re

ID = re.compile(r"^[a-zA-Z0-9_-]+$")

# discovery.py:75-78: the ids of a discovery topic.
TOPIC = re.compile(r"^(?P<component>\w+)/(?:(?P<node_id>[a-zA-Z0-9_-]+)/)?(?P<object_id>[a-zA-Z0-9_-]+)/config$")

# Abbreviations of the keys below (abbreviations.py, same in 2024.11.0 and 2026.11.0 for
# these keys); an abbreviation not listed is none of the keys the bridge's platforms know,
# and shows up below as an unknown key.
ABBREVIATIONS = {
    "atype": "automation_type", "avty": "availability", "avty_mode": "availability_mode",
    "avty_t": "availability_topic", "avty_tpl": "availability_template", "cmd_t": "command_topic",
    "cmd_tpl": "command_template", "cmps": "components", "dev": "device", "dev_cla": "device_class",
    "e": "encoding", "en": "enabled_by_default", "ent_cat": "entity_category", "ent_pic": "entity_picture",
    "evt_typ": "event_types", "ic": "icon", "json_attr_t": "json_attributes_topic",
    "json_attr_tpl": "json_attributes_template", "migr_discvry": "migrate_discovery", "o": "origin",
    "ops": "options", "opt": "optimistic", "p": "platform", "pl": "payload",
    "pl_avail": "payload_available", "pl_not_avail": "payload_not_available", "pl_off": "payload_off",
    "pl_on": "payload_on", "pl_prs": "payload_press", "ret": "retain", "stat_off": "state_off",
    "stat_on": "state_on", "stat_t": "state_topic", "stype": "subtype", "t": "topic",
    "uniq_id": "unique_id", "val_tpl": "value_template",
}
DEVICE_ABBREVIATIONS = {
    "cns": "connections", "cu": "configuration_url", "ids": "identifiers", "mf": "manufacturer",
    "mdl": "model", "mdl_id": "model_id", "hw": "hw_version", "sw": "sw_version", "sa": "suggested_area",
    "sn": "serial_number",
}
ORIGIN_ABBREVIATIONS = {"sw": "sw_version", "url": "support_url"}

# schemas.py:82-123 (the availability options, also allowed at the root) and 268-282: the
# root keys DEVICE_DISCOVERY_SCHEMA allows (PREVENT_EXTRA: any other key rejects the payload).
# 2026.11.0 adds child_devices and message_expiry_interval; 2024.11.0 (schemas.py:208-218)
# has neither, so they count as unknown here.
AVAILABILITY_KEYS = {"availability", "availability_mode", "availability_topic", "availability_template",
                     "payload_available", "payload_not_available"}
ROOT_KEYS = AVAILABILITY_KEYS | {"device", "components", "origin", "state_topic", "command_topic", "qos", "encoding"}
# schemas.py:145-164 (MQTT_DEVICE_INFO_SCHEMA, PREVENT_EXTRA) and 126-133 (an identifier).
DEVICE_KEYS = {"identifiers", "connections", "manufacturer", "model", "model_id", "name", "hw_version",
               "serial_number", "sw_version", "via_device", "suggested_area", "configuration_url"}
# schemas.py:184-192 (MQTT_ORIGIN_INFO_SCHEMA, PREVENT_EXTRA).
ORIGIN_KEYS = {"name", "sw_version", "support_url"}

# const.py:430-463 (SUPPORTED_COMPONENTS, 2024.11.0 const.py:194-223 has fewer: these are
# in both) and const.py:395-426 (ENTITY_PLATFORMS: those need a unique_id, schemas.py:237-250).
SUPPORTED_COMPONENTS = {
    "alarm_control_panel", "binary_sensor", "button", "camera", "climate", "cover", "device_automation",
    "device_tracker", "event", "fan", "humidifier", "image", "lawn_mower", "light", "lock", "notify",
    "number", "scene", "siren", "select", "sensor", "switch", "tag", "text", "update", "vacuum", "valve",
    "water_heater",
}
NOT_ENTITIES = {"device_automation", "tag"}

# Validators, as HA's (helpers/config_validation.py:663-678 string, 217-230 boolean;
# util.py:251-337 topics, 57 and 355-358 qos).


def is_string(v):
    return v is not None and not isinstance(v, (list, dict))


def is_boolean(v):
    if isinstance(v, (bool, int, float)):
        return True
    return isinstance(v, str) and v.lower().strip() in ("1", "true", "yes", "on", "enable", "0", "false", "no",
                                                         "off", "disable")


def topic_problem(v, subscribe):
    """What util.py:251-337 says of a topic (None: valid)."""
    if not is_string(v):
        return "is not a string"
    t = str(v)
    if not t:
        return "is empty"
    if len(t.encode("utf-8", "surrogatepass")) > 65535:
        return "is longer than 65535 bytes"
    for ch in t:
        if ch <= "\u001f" or "\u007f" <= ch <= "\u009f":
            return "has a control character"
        if "\ufdd0" <= ch <= "\ufdef" or (ord(ch) & 0xFFFF) in (0xFFFE, 0xFFFF):
            return "has a non-character"
    if not subscribe:
        return "has a wildcard" if "+" in t or "#" in t else None
    for i, ch in enumerate(t):
        if ch == "+" and ((i > 0 and t[i - 1] != "/") or (i < len(t) - 1 and t[i + 1] != "/")):
            return "has a + that is not a whole level"
    i = t.find("#")
    if i != -1 and (i != len(t) - 1 or (len(t) > 1 and t[i - 1] != "/")):
        return "has a # that is not the last level"
    return None


def qos_problem(v):
    # util.py:57: Coerce(int), then In([0, 1, 2]).
    try:
        ok = not isinstance(v, (list, dict)) and int(v) in (0, 1, 2) and (not isinstance(v, float) or v.is_integer())
    except (TypeError, ValueError, OverflowError):
        ok = False
    return None if ok else "must be 0, 1 or 2"


STRING, NULLABLE, BOOLEAN, SUBSCRIBE, PUBLISH, QOS, TEMPLATE, ANY = (
    "string", "string or null", "boolean", "sub", "pub", "qos", "template", "any")


def one_of(*values, lower=False):
    """In(values); lower: the value is lower-cased first (a device class, probatio.Lower)."""
    return ("in", set(values), lower)


# Per platform: every key its DISCOVERY_SCHEMA knows (what is not here HA removes), with its
# validator; REQUIRED: what it cannot be without.
# config.py:22-46: MQTT_BASE_SCHEMA (qos, encoding; 2026.11.0 adds group), MQTT_RO_SCHEMA,
# MQTT_RW_SCHEMA. schemas.py:202-217 (2024.11.0 schemas.py:173-186): MQTT_ENTITY_COMMON_SCHEMA,
# with schemas.py:82-123 availability; object_id (2024.11.0 only) and default_entity_id,
# message_expiry_interval, visible_by_default (2026.11.0 only) are left out: not in both.
BASE = {"qos": QOS, "encoding": STRING}
ENTITY = {
    **BASE, "availability": ANY, "availability_mode": one_of("all", "any", "latest"),  # const.py:21-25
    "availability_topic": SUBSCRIBE, "availability_template": TEMPLATE, "payload_available": STRING,
    "payload_not_available": STRING, "device": ANY, "origin": ANY, "entity_picture": STRING,
    "enabled_by_default": BOOLEAN,
    # helpers/entity.py:247: Coerce(EntityCategory), const.py (homeassistant/const.py) EntityCategory.
    "entity_category": one_of("config", "diagnostic"),
    "icon": STRING, "json_attributes_topic": SUBSCRIBE, "json_attributes_template": TEMPLATE,
    "unique_id": STRING,
}
RW = {**ENTITY, "command_topic": PUBLISH, "optimistic": BOOLEAN, "retain": BOOLEAN, "state_topic": SUBSCRIBE}
PLATFORMS = {
    # device_automation.py:15-23 (automation_type must be "trigger"), then device_trigger.py:63-76
    # (TRIGGER_DISCOVERY_SCHEMA: payload and value_template strings, topic, type, subtype;
    # the topic must also be a valid subscription when a trigger attaches, trigger.py:83-85).
    # `type` is any string; the frontend translates button_short_press, button_short_release,
    # button_long_press, button_long_release, button_double_press, button_triple_press,
    # button_quadruple_press, button_quintuple_press (strings.json, device_automation.trigger_type)
    # and shows any other as written.
    "device_automation": (
        {**BASE, "automation_type": one_of("trigger"), "device": ANY, "payload": NULLABLE, "subtype": STRING,
         "topic": SUBSCRIBE, "type": STRING, "value_template": NULLABLE},
        ["automation_type", "subtype", "topic", "type"]),
    # event.py:56-72: MQTT_RO_SCHEMA + device_class (event/const.py:46-51), name, event_types.
    "event": (
        {**ENTITY, "state_topic": SUBSCRIBE, "value_template": TEMPLATE,
         "device_class": one_of("doorbell", "button", "motion", lower=True), "name": NULLABLE, "event_types": "strings"},
        ["state_topic", "event_types"]),
    # switch.py:52-65: MQTT_RW_SCHEMA + these; device_class switch/const.py:22-23.
    "switch": (
        {**RW, "command_template": TEMPLATE, "name": NULLABLE, "payload_off": STRING, "payload_on": STRING,
         "state_off": STRING, "state_on": STRING, "value_template": TEMPLATE,
         "device_class": one_of("outlet", "switch", lower=True)},
        ["command_topic"]),
    # button.py:34-45: MQTT_BASE_SCHEMA + these; device_class button/const.py:24-26.
    "button": (
        {**ENTITY, "command_template": TEMPLATE, "command_topic": PUBLISH,
         "device_class": one_of("identify", "restart", "update", lower=True), "name": NULLABLE, "payload_press": STRING,
         "retain": BOOLEAN},
        ["command_topic"]),
    # select.py:53-64: MQTT_RW_SCHEMA + these (options: EnsureList, so one value is a list of one).
    "select": (
        {**RW, "command_template": TEMPLATE, "name": NULLABLE, "options": "list", "value_template": TEMPLATE},
        ["command_topic", "options"]),
}
# core.py:2567-2575 (homeassistant/core.py): a state longer than this is written as "unknown".
MAX_STATE_LENGTH = 255


def expand(mapping, abbreviations):
    """discovery.py:194-204: an abbreviated key becomes its full name (a copy)."""
    out = dict(mapping)
    for short, full in abbreviations.items():
        if short in out:
            out[full] = out.pop(short)
    return out


def replace_topic_base(c):
    """discovery.py:266-286, applied to each component (735-736): a leading or trailing `~`
    of a `*topic` value, and of an availability topic, is the component's `~`."""
    c = dict(c)
    base = c.pop("~")
    for key, value in list(c.items()):
        if isinstance(value, str) and value and key.endswith("topic"):
            if value[0] == "~":
                value = f"{base}{value[1:]}"
            if value[-1] == "~":
                value = f"{value[:-1]}{base}"
            c[key] = value
    if c.get("availability"):
        items = c["availability"] if isinstance(c["availability"], list) else [c["availability"]]
        fixed = []
        for a in items:
            if isinstance(a, dict):
                a = expand(a, ABBREVIATIONS)
                if isinstance(a.get("topic"), str) and a["topic"]:
                    t = a["topic"]
                    t = f"{base}{t[1:]}" if t[0] == "~" else t
                    t = f"{t[:-1]}{base}" if t[-1] == "~" else t
                    a["topic"] = t
            fixed.append(a)
        c["availability"] = fixed
    return c


def value_problem(kind, v):
    if kind == ANY:
        return None
    if kind in (STRING, TEMPLATE):
        return None if is_string(v) else "must be a string"
    if kind == NULLABLE:
        return None if v is None or is_string(v) else "must be a string or null"
    if kind == BOOLEAN:
        return None if is_boolean(v) else "must be a boolean"
    if kind in (SUBSCRIBE, PUBLISH):
        problem = topic_problem(v, kind == SUBSCRIBE)
        return None if problem is None else "is not a valid topic: " + problem
    if kind == QOS:
        return qos_problem(v)
    if kind == "strings":
        items = v if isinstance(v, list) else [v]
        return None if all(is_string(i) for i in items) else "must be a list of strings"
    if kind == "list":
        return None if v is not None else "must be a list"
    if isinstance(kind, tuple) and kind[0] == "in":
        text = str(v).lower() if kind[2] and is_string(v) else v
        return None if is_string(v) and text in kind[1] else f"must be one of {sorted(kind[1])}"
    raise AssertionError(kind)


def availability_problems(where, c, problems):
    # schemas.py:82-123: availability_topic and availability are exclusive; availability is a
    # list (or one mapping) of mappings with a topic (a valid subscription) and optional
    # payload_available, payload_not_available, value_template.
    if "availability" not in c:
        return
    if "availability_topic" in c:
        problems.append(f"{where}: availability and availability_topic exclude each other")
    items = c["availability"] if isinstance(c["availability"], list) else [c["availability"]]
    known = {"topic", "payload_available", "payload_not_available", "value_template"}
    for i, a in enumerate(items):
        if not isinstance(a, dict):
            problems.append(f"{where}: availability[{i}] is not a mapping")
            continue
        a = expand(a, ABBREVIATIONS)  # discovery.py:215-219
        if "topic" not in a:
            problems.append(f"{where}: availability[{i}] needs a topic")
        for key in sorted(set(a) - known):
            problems.append(f"{where}: availability[{i}].{key} is ignored by Home Assistant")
        for key, kind in (("topic", SUBSCRIBE), ("payload_available", STRING), ("payload_not_available", STRING),
                          ("value_template", TEMPLATE)):
            if key in a and (p := value_problem(kind, a[key])):
                problems.append(f"{where}: availability[{i}].{key} {p}")


def required_mapping(doc, key, short, abbreviations, allowed, source, problems):
    """`doc[key]` (abbreviated `short`), a mapping Home Assistant requires, its keys expanded; a
    key it does not allow is a problem. None, and a problem, when it is missing or no mapping."""
    value = doc.get(key)
    if not isinstance(value, dict):
        problems.append(f"{key} ({short}) is required and must be a mapping ({source})")
        return None
    value = expand(value, abbreviations)
    for k in sorted(set(value) - allowed):
        problems.append(f"{key} key {k!r} is not allowed: Home Assistant rejects the whole payload")
    return value


def ha_problems(topic, payload, prefix="homeassistant"):
    """Home Assistant's rules (2024.11.0 and 2026.11.0) for one `<prefix>/device/<id>/config` message."""
    problems = []
    trimmed = topic[len(prefix) + 1:] if topic.startswith(prefix + "/") else None
    match = TOPIC.match(trimmed) if trimmed is not None else None
    if not match:
        problems.append(f"topic {topic} is not {prefix}/<component>/[<node_id>/]<object_id>/config with ids "
                        "in [a-zA-Z0-9_-] (discovery.py:75-78)")
    elif match["component"] != "device":
        problems.append(f"topic {topic} is not a device discovery topic ({prefix}/device/...)")
    if isinstance(payload, bytes):
        try:
            payload = payload.decode("utf-8")
        except UnicodeDecodeError:
            return problems + ["payload is not UTF-8"]
    if payload == "":
        return problems  # discovery.py:344-351: removes every component of the device
    try:
        doc = json.loads(payload)
    except ValueError as e:
        return problems + [f"payload is not JSON: {e}"]
    if not isinstance(doc, dict):
        return problems + ["payload is not a JSON object"]
    if "migrate_discovery" in doc or "migr_discvry" in doc:
        return problems + ["payload is a discovery migration request, not a configuration (discovery.py:124-139)"]
    doc = expand(doc, ABBREVIATIONS)
    # The whole payload: DEVICE_DISCOVERY_SCHEMA.
    for key in sorted(set(doc) - ROOT_KEYS):
        problems.append(f"root key {key!r} is not allowed: Home Assistant rejects the whole payload")
    for key, kind in (("state_topic", SUBSCRIBE), ("command_topic", PUBLISH), ("qos", QOS), ("encoding", STRING),
                      ("availability_mode", one_of("all", "any", "latest")), ("availability_topic", SUBSCRIBE),
                      ("availability_template", TEMPLATE), ("payload_available", STRING),
                      ("payload_not_available", STRING)):
        if key in doc and (p := value_problem(kind, doc[key])):
            problems.append(f"root {key} {p}")
    availability_problems("root", doc, problems)
    dev = required_mapping(doc, "device", "dev", DEVICE_ABBREVIATIONS, DEVICE_KEYS, "schemas.py:270", problems)
    if dev is not None:
        ids = dev.get("identifiers", [])
        ids = ids if isinstance(ids, list) else [ids]
        cns = dev.get("connections", [])
        cns = cns if isinstance(cns, list) else [cns]
        if not all(is_string(i) for i in ids):
            problems.append("device identifiers must be strings")
        if not all(isinstance(c, list) and len(c) == 2 and all(is_string(x) for x in c) for c in cns):
            problems.append("device connections must be [type, value] pairs of strings")
        if not ids and not cns:
            problems.append("device needs identifiers (ids) or connections (cns) (schemas.py:126-133)")
        for key in sorted(DEVICE_KEYS - {"identifiers", "connections"}):
            if key in dev and not is_string(dev[key]):
                problems.append(f"device {key} must be a string")
        # entity.py:2044-2050: logged for every entity of a device without one.
        if "name" not in dev:
            problems.append("device has no name: \"MQTT device information always needs to include a name\" "
                            "(entity.py:2044-2050)")
    origin = required_mapping(doc, "origin", "o", ORIGIN_ABBREVIATIONS, ORIGIN_KEYS, "schemas.py:275", problems)
    if origin is not None:
        if not is_string(origin.get("name")):
            problems.append("origin needs a name (schemas.py:184-192)")
        if "sw_version" in origin and not is_string(origin["sw_version"]):
            problems.append("origin sw_version must be a string")
    # 2024.11.0 requires components (schemas.py:211); 2026.11.0 components or child devices.
    cmps = doc.get("components")
    if not isinstance(cmps, dict):
        return problems + ["components (cmps) is required and must be a mapping (2024.11.0 schemas.py:211)"]
    unique_ids = set()
    triggers = set()
    for cid, c in cmps.items():
        where = f"cmps.{cid}"
        if not isinstance(c, dict):
            problems.append(f"{where}: not a mapping: Home Assistant rejects the whole payload")
            continue
        c = expand(c, ABBREVIATIONS)
        platform = c.pop("platform", None)
        if platform not in SUPPORTED_COMPONENTS:
            problems.append(f"{where}: platform {platform!r} is not supported: Home Assistant rejects the whole "
                            "payload (schemas.py:245-250)")
            continue
        if not c:
            continue  # only the platform: removes the component (discovery.py:665-669)
        if "~" in c:
            c = replace_topic_base(c)
        if platform not in NOT_ENTITIES and "unique_id" not in c:
            problems.append(f"{where} ({platform}): unique_id is required: Home Assistant rejects the whole payload "
                            "(schemas.py:237-242)")
        if platform not in PLATFORMS:
            problems.append(f"{where}: platform {platform!r} is not one this checker knows")
            continue
        # The component alone: its platform's DISCOVERY_SCHEMA.
        known, required = PLATFORMS[platform]
        for key in required:
            if key not in c:
                problems.append(f"{where} ({platform}): {key} is required")
        for key in sorted(set(c) - set(known)):
            problems.append(f"{where} ({platform}): {key!r} is ignored by Home Assistant (not in its schema)")
        for key, v in c.items():
            if key in known and (p := value_problem(known[key], v)):
                problems.append(f"{where} ({platform}): {key} {p}")
        availability_problems(where, c, problems)
        if "unique_id" in c:
            # The entity registry keeps one entity per (platform, "mqtt", unique_id).
            key = (platform, str(c["unique_id"]))
            if key in unique_ids:
                problems.append(f"{where}: unique_id {c['unique_id']} is already used by another {platform}")
            unique_ids.add(key)
        if platform == "device_automation":
            # device_trigger.py:308-325: a second trigger of one device with the same type
            # and subtype is not set up.
            key = (str(c.get("type")), str(c.get("subtype")))
            if key in triggers:
                problems.append(f"{where}: a trigger with type/subtype {key} already exists on this device")
            triggers.add(key)
        if platform == "select" and isinstance(c.get("options"), list):
            for o in c["options"]:
                label = str(o)
                # select.py:115-138: an empty (or blank) state is ignored, "none" in any case
                # means no option; core.py:2567-2575: a state over 255 characters is "unknown".
                if not label.strip():
                    problems.append(f"{where}: option {o!r} is blank: Home Assistant ignores it as a state")
                elif label.lower() == "none":
                    problems.append(f"{where}: option {o!r} reads as no option in Home Assistant")
                if len(label) > MAX_STATE_LENGTH:
                    problems.append(f"{where}: option {label[:40]!r}… is {len(label)} characters, over Home "
                                    f"Assistant's {MAX_STATE_LENGTH} for a state")
    return problems


# What actiond-mqtt promises beyond Home Assistant's rules (docs/home-assistant.md).
BRIDGE_PLATFORMS = {"device_automation", "event", "select", "switch", "button"}


def bridge_problems(topic, payload):
    """The bridge's own promises: only its five platforms, safe component ids, every entity
    unavailable with the bridge or actiond (availability, mode all), a switch with its state
    topic (never optimistic), select options that name one control each, QoS 1."""
    try:
        doc = json.loads(payload)
    except ValueError:
        return []  # ha_problems says so
    problems = []
    cmps = doc.get("cmps") if isinstance(doc, dict) else None
    if not isinstance(cmps, dict) or not cmps:
        return ["bridge: cmps is missing or empty"]
    for cid, c in cmps.items():
        where = f"bridge: cmps.{cid}"
        if not ID.match(cid):
            problems.append(f"{where}: component id is not [a-zA-Z0-9_-]+")
        if not isinstance(c, dict):
            continue
        platform = c.get("p")
        if platform not in BRIDGE_PLATFORMS:
            problems.append(f"{where}: platform {platform!r} is not one the bridge publishes")
            continue
        if len(c) == 1:
            continue
        if c.get("qos") != 1:
            problems.append(f"{where}: qos is not 1")
        if platform != "device_automation":
            avty = c.get("availability")
            if not isinstance(avty, list) or len(avty) < 2 or c.get("availability_mode") != "all":
                problems.append(f"{where}: needs availability on the bridge and actiond, mode all")
        if platform == "switch" and not c.get("state_topic"):
            problems.append(f"{where}: a switch without state_topic is optimistic")
        if platform == "select":
            opts = c.get("options")
            if not isinstance(opts, list) or not all(isinstance(o, str) for o in opts) or len(set(opts)) != len(opts):
                problems.append(f"{where}: options must be distinct strings")
        if platform == "event" and c.get("device_class") != "button":
            problems.append(f"{where}: device_class is not button")
    return problems


def check_device_discovery(topic, payload, prefix="homeassistant"):
    """Every problem with one `<prefix>/device/<node>/config` message (payload: bytes or str):
    Home Assistant's rules, then the bridge's (marked `bridge:`)."""
    problems = ha_problems(topic, payload, prefix)
    text = payload.decode("utf-8", "replace") if isinstance(payload, bytes) else payload
    return problems + (bridge_problems(topic, text) if text else [])


if __name__ == "__main__":  # a payload on stdin: python3 homeassistant.py TOPIC < payload.json
    import sys

    found = check_device_discovery(sys.argv[1], sys.stdin.read())
    print("\n".join(found) or "no problems")
    sys.exit(1 if found else 0)
