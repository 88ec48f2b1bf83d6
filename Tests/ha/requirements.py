# SPDX-License-Identifier: Apache-2.0
"""Prints the PyPI requirements of the integrations a Home Assistant set up by Tests/ha sets up,
one a line, read from the installed homeassistant package itself: those its bootstrap always
sets up (homeassistant/bootstrap.py: CORE_INTEGRATIONS, DEFAULT_INTEGRATIONS, the frontend's,
logging's, the recorder), those onboarding starts, MQTT and the device automations, and
everything those depend on
(`dependencies` and `after_dependencies` of each manifest.json, transitively: an
after-dependency is imported by the integration's code, e.g. mqtt's config flow imports hassio).
The root is then made with these installed, so that Home Assistant runs with --skip-pip.

Read with `ast`, not by importing homeassistant: the sets are literals, and a name that is no
longer there in some release is just not found (2024.11 has no STAGE_0 substages, for one).

Usage: python requirements.py [HOMEASSISTANT_PACKAGE_DIR]  (default: the importable one)"""

import ast
import importlib.util
import json
import os
import sys

# What the tests use beyond what Home Assistant always loads.
WANTED = {"mqtt", "device_automation", "automation", "recorder", "frontend", "config", "api", "websocket_api"}
# Sets in bootstrap.py that are not always set up (only when configured, or under the Supervisor).
NOT_ALWAYS = {"DISCOVERY_INTEGRATIONS", "STAGE_1_INTEGRATIONS", "DEFAULT_INTEGRATIONS_SUPERVISOR",
              "DEFAULT_INTEGRATIONS_RECOVERY_MODE", "DEBUGGER_INTEGRATIONS"}
# Members of the always-read sets that are set up only when configured (a debugger, Sentry).
ONLY_CONFIGURED = {"debugpy", "sentry"}
# Requirements left out where numpy is pinned below 2 (2024.x: 1.26, which has no wheel for
# Python 3.13, so pip would compile it: 10 minutes on two busy cores): PyTurboJPEG, which
# needs it and which 2024.11's camera imports only to scale snapshots, in a try (its
# img_util logs an error and goes on, as it does without libturbojpeg). Later releases
# pin a numpy with wheels, and their camera does not start without it.
LEFT_OUT_WITH_OLD_NUMPY = {"pyturbojpeg"}


def literal_names(node, names):
    """The strings of a set/tuple/list literal (nested ones too); `*NAME` and `NAME - {...}`
    parts are resolved against the names already read where possible."""
    out = set()
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        out.add(node.value)
    elif isinstance(node, (ast.Set, ast.Tuple, ast.List)):
        for e in node.elts:
            out |= literal_names(e, names)
    elif isinstance(node, ast.Starred):
        out |= literal_names(node.value, names)
    elif isinstance(node, ast.Name):
        out |= names.get(node.id, set())
    elif isinstance(node, ast.BinOp):
        left, right = literal_names(node.left, names), literal_names(node.right, names)
        out |= (left - right) if isinstance(node.op, ast.Sub) else (left | right)
    return out


def main():
    if len(sys.argv) > 1:
        package = sys.argv[1]
    else:
        package = os.path.dirname(importlib.util.find_spec("homeassistant").origin)
    components = os.path.join(package, "components")
    # BASE_PLATFORMS (const.py) is every member of the Platform enum, which is in const.py
    # (2024.11) or generated/entity_platforms.py as EntityPlatforms (later releases).
    platforms = set()
    for source in ("const.py", os.path.join("generated", "entity_platforms.py")):
        if not os.path.exists(os.path.join(package, source)):
            continue
        for stmt in ast.parse(open(os.path.join(package, source)).read()).body:
            if isinstance(stmt, ast.ClassDef) and stmt.name in ("Platform", "EntityPlatforms"):
                for a in stmt.body:
                    if isinstance(a, ast.Assign) and isinstance(a.value, ast.Constant):
                        platforms.add(a.value.value)
    if not platforms:
        sys.exit("requirements.py: no Platform enum found (BASE_PLATFORMS)")
    names = {"BASE_PLATFORMS": platforms}
    for stmt in ast.parse(open(os.path.join(package, "bootstrap.py")).read()).body:
        if isinstance(stmt, (ast.Assign, ast.AnnAssign)) and stmt.value is not None:
            target = stmt.targets[0] if isinstance(stmt, ast.Assign) else stmt.target
            if isinstance(target, ast.Name):
                names[target.id] = literal_names(stmt.value, names)

    # Every entity platform (tts, camera, ...): an integration that provides one imports it
    # without naming it in its manifest (2024.11's google_translate and tts), and
    # DEFAULT_INTEGRATIONS has most of them anyway.
    todo = set(WANTED) | platforms
    # The integrations onboarding's core_config step starts config flows for (met,
    # google_translate, ...: `onboard_integrations` in onboarding/views.py). Without their
    # requirements the step itself fails in 2024.11 (it awaits the flows) and logs errors
    # in later releases (they are tasks there).
    views = os.path.join(components, "onboarding", "views.py")
    for node in ast.walk(ast.parse(open(views).read())):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == "onboard_integrations"
                                                for t in node.targets):
            todo |= literal_names(node.value, {})
    for name, value in names.items():
        if name.endswith("_INTEGRATIONS") and name not in NOT_ALWAYS:
            todo |= value - ONLY_CONFIGURED
    seen, requirements = set(), set()
    while todo:
        domain = todo.pop()
        if domain in seen:
            continue
        seen.add(domain)
        path = os.path.join(components, domain, "manifest.json")
        if not os.path.exists(path):
            continue  # a name in a set that is not an integration of this release
        manifest = json.load(open(path))
        requirements |= set(manifest.get("requirements", []))
        todo |= set(manifest.get("dependencies", [])) | set(manifest.get("after_dependencies", []))
    left_out = set()
    with open(os.path.join(package, "package_constraints.txt")) as f:
        for line in f:
            if line.startswith("numpy==") and int(line.split("==")[1].split(".")[0]) < 2:
                left_out = LEFT_OUT_WITH_OLD_NUMPY
    for r in sorted(requirements):
        if r.split("=")[0].split("<")[0].split(">")[0].strip().lower() not in left_out:
            print(r)
    print(f"requirements.py: {len(seen)} integrations, {len(requirements)} requirements", file=sys.stderr)


main()
