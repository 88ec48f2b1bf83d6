# SPDX-License-Identifier: Apache-2.0
"""The device page of a live Home Assistant (Tests/ha/test_ha.py --screenshot), captured by
Debian's headless Chromium over its DevTools protocol.

Signing in is the frontend's own: tokens from Home Assistant's login flow (what its login
page does with the user's name and password: an auth code, exchanged at /auth/token) are
put where the frontend keeps them after a login (localStorage `hassTokens`, with the Home
Assistant URL and client id), on a page of Home Assistant's origin that is not the app,
before the device page is opened. The page is captured once the device and each of its
entities is drawn and two captures in a row are
the same (icons and fonts loaded)."""

import base64
import json
import os
import tempfile
import time
import urllib.request

import websocket

from test_ha import CLIENT_ID, DEADLINE, DEVICE_NAME, URL, Process, say, wait_for

DEVTOOLS_PORT = 9222
WIDTH, HEIGHT = 1200, 760

# Every text of the page, shadow roots included (the frontend is web components).
PAGE_TEXT = """(() => {
  const out = [];
  const walk = (n) => {
    if (n.nodeType === Node.TEXT_NODE) out.push(n.textContent);
    if (n.shadowRoot) walk(n.shadowRoot);
    for (const c of n.childNodes) walk(c);
  };
  walk(document);
  return out.join(" ");
})()"""


class DevTools:
    def __init__(self, url):
        self.ws = websocket.create_connection(url, timeout=DEADLINE, suppress_origin=True)
        self.next_id = 1
        self.console = []  # the page's console messages and uncaught exceptions

    def call(self, method, **params):
        i = self.next_id
        self.next_id += 1
        self.ws.send(json.dumps({"id": i, "method": method, "params": params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("method") == "Runtime.consoleAPICalled":
                self.console.append(" ".join(str(a.get("value", a.get("description", ""))) for a in m["params"]["args"]))
            elif m.get("method") == "Runtime.exceptionThrown":
                d = m["params"]["exceptionDetails"]
                x = d.get("exception", {})
                self.console.append(f"exception: {x.get('description')} {json.dumps(x.get('preview', {}).get('properties', ''))[:300]}")
            elif m.get("method") == "Log.entryAdded":
                self.console.append(f"{m['params']['entry'].get('level')}: {m['params']['entry'].get('text')} {m['params']['entry'].get('url', '')}")
            if m.get("id") == i:
                if "error" in m:
                    raise AssertionError(f"{method}: {m['error']}")
                return m["result"]


def auth_code(ha):
    flow = ha.http("POST", "/auth/login_flow", {"client_id": CLIENT_ID, "handler": ["homeassistant", None],
                   "redirect_uri": URL + "/?auth_callback=1"}, auth=False)
    result = ha.http("POST", f"/auth/login_flow/{flow['flow_id']}", {"client_id": CLIENT_ID, "username": "test",
                     "password": "test-password"}, auth=False)
    if result.get("type") != "create_entry":
        raise AssertionError(f"login flow: {result}")
    return result["result"]


def capture(case, out):
    ha = case.ha
    # Something to show: the lamp on, the hold's control chosen, a press in the logbook.
    case.actiond.actionctl("perform", "org.test.lamp")
    case.actiond.actionctl("press", "action", "--hold", "900")
    case.wait_consistent("the states before the screenshot")
    tokens = ha.http("POST", "/auth/token", form={"grant_type": "authorization_code", "code": auth_code(ha),
                     "client_id": CLIENT_ID}, auth=False)
    # home-assistant-js-websocket's saveTokens: the token response with hassUrl, clientId and
    # `expires` (milliseconds since the epoch).
    stored = dict(tokens, hassUrl=URL, clientId=CLIENT_ID, expires=int(time.time() * 1000) + tokens["expires_in"] * 1000)
    page = f"{URL}/config/devices/device/{case.device['id']}"
    profile = tempfile.mkdtemp(prefix="chromium.", dir=case.work)
    chromium = Process("chromium", [
        "chromium", "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--no-first-run",
        f"--remote-debugging-port={DEVTOOLS_PORT}", f"--user-data-dir={profile}", f"--window-size={WIDTH},{HEIGHT}",
        "--lang=en-US", "about:blank"], case.work).start()

    def target():
        with urllib.request.urlopen(f"http://127.0.0.1:{DEVTOOLS_PORT}/json/list", timeout=5) as r:
            pages = [t for t in json.load(r) if t.get("type") == "page"]
        return pages and pages[0]["webSocketDebuggerUrl"]
    tools = DevTools(wait_for("Chromium's DevTools", target))
    tools.call("Emulation.setDeviceMetricsOverride", width=WIDTH, height=HEIGHT, deviceScaleFactor=1, mobile=False)
    tools.call("Page.enable")
    tools.call("Runtime.enable")
    tools.call("Log.enable")
    # An origin page without the app (a JSON answer), to hold the tokens before the app looks.
    tools.call("Page.navigate", url=f"{URL}/auth/providers")
    wait_for("Home Assistant's origin in Chromium", lambda: tools.call(
        "Runtime.evaluate", expression="location.origin", returnByValue=True)["result"].get("value") == URL)
    tools.call("Runtime.evaluate", expression=f"localStorage.setItem('hassTokens', {json.dumps(json.dumps(stored))})")
    tools.call("Page.navigate", url=page)
    names = [DEVICE_NAME, "Timer", "Lamp", "Bell", "action hold"]

    text = ""

    def drawn():
        nonlocal text
        text = tools.call("Runtime.evaluate", expression=PAGE_TEXT, returnByValue=True)["result"].get("value", "")
        return all(n in text for n in names)
    try:
        wait_for("the device page with its entities", drawn, timeout=120, every=0.5)
    except AssertionError as e:
        # What the page was instead (a login form, an error), for the log.
        failed = os.path.join(case.work, "page.png")
        with open(failed, "wb") as f:
            f.write(base64.b64decode(tools.call("Page.captureScreenshot", format="png")["data"]))
        url = tools.call("Runtime.evaluate", expression="location.href", returnByValue=True)["result"].get("value")
        raise AssertionError(f"{e}: the page ({url}, {failed}) says: {' '.join(text.split())[-300:]}; "
                             f"its console: {tools.console[-8:]}") from None
    shots = []

    def stable():
        shots.append(tools.call("Page.captureScreenshot", format="png")["data"])
        return len(shots) > 1 and shots[-1] == shots[-2]
    wait_for("the page to stop changing", stable, timeout=60, every=1)
    png = base64.b64decode(shots[-1])
    with open(out + ".tmp", "wb") as f:
        f.write(png)
    os.replace(out + ".tmp", out)
    say(f"[{case.version}] the device page: {out} ({len(png) // 1024} KiB, {WIDTH}x{HEIGHT})")
    chromium.stop()
