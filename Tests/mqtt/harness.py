"""Processes for the MQTT tier: Debian's mosquitto on loopback, a real actiond, the bridge,
and a subscriber that records what a Home Assistant would see. Every wait has a deadline."""

import json
import os
import pwd
import signal
import socket
import subprocess
import threading
import time

import paho.mqtt.client as mqtt

DEADLINE = float(os.environ.get("MQTT_TEST_DEADLINE", "20"))


def wait_for(what, predicate, timeout=DEADLINE):
    """Polls `predicate` (cheap, in-process state) until it returns a truthy value."""
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > end:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(0.02)


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Broker:
    """mosquitto with a generated configuration (no system service, no persistence)."""

    def __init__(self, workdir, port=None, extra=""):
        self.workdir = workdir
        self.port = port or free_port()
        self.extra = extra
        self.proc = None
        self.log = os.path.join(workdir, "mosquitto.log")

    def start(self):
        conf = os.path.join(self.workdir, "mosquitto.conf")
        with open(conf, "w") as f:
            # `user`: run as whoever runs the tests (as root, mosquitto would otherwise switch
            # to the user mosquitto, who cannot read this private temporary directory).
            f.write(f"user {pwd.getpwuid(os.getuid()).pw_name}\n"
                    f"listener {self.port} 127.0.0.1\npersistence false\nlog_dest file {self.log}\n"
                    "log_type all\n" + (self.extra or "allow_anonymous true\n"))
        self.proc = subprocess.Popen(["/usr/sbin/mosquitto", "-c", conf], stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL)

        def listening():
            if self.proc.poll() is not None:
                raise AssertionError(f"mosquitto exited: {open(self.log).read() if os.path.exists(self.log) else ''}")
            with socket.socket() as s:
                return s.connect_ex(("127.0.0.1", self.port)) == 0
        wait_for("mosquitto to listen", listening)

    def kill(self):
        if self.proc and self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()


class Process:
    def __init__(self, name, argv, workdir, env=None):
        self.name = name
        self.argv = argv
        self.log = os.path.join(workdir, f"{name}.log")
        self.env = env
        self.proc = None

    def start(self):
        self.out = open(self.log, "a")
        self.proc = subprocess.Popen(self.argv, stdout=self.out, stderr=subprocess.STDOUT, env=self.env)
        return self

    def kill(self, sig=signal.SIGKILL):
        if self.proc and self.proc.poll() is None:
            self.proc.send_signal(sig)
            try:
                self.proc.wait(timeout=DEADLINE)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()

    def text(self):
        with open(self.log) as f:
            return f.read()

    def lines(self, word):
        return [l for l in self.text().splitlines() if word in l]


def actiond_config(workdir):
    lamp = os.path.join(workdir, "lamp")
    lamp_log = os.path.join(workdir, "lamp.log")
    bell_log = os.path.join(workdir, "bell.log")
    with open(lamp, "w") as f:
        f.write("0\n")
    config = {
        "socket": {"path": os.path.join(workdir, "actiond.sock")},
        "stateDirectory": os.path.join(workdir, "state"),
        "controlsDirectory": os.path.join(workdir, "controls.d"),
        "buttons": [{"name": "action", "key": "KEY_PROG1", "match": {"tag": "actiond"}, "holdThresholdMs": 600}],
        "controls": [
            {"kind": "org.test.timer", "type": "toggle", "displayName": "Timer", "actionHint": {"on": "Stop", "off": "Start"},
             "intent": {"type": "state"}, "value": {"type": "store", "initial": False}},
            {"kind": "org.test.lamp", "type": "toggle", "displayName": "Lamp", "actionHint": {"on": "Turn Off", "off": "Turn On"},
             "intent": {"type": "exec", "argv": ["/bin/sh", "-c", f'echo "$ACTIOND_VALUE" > {lamp}; echo "$ACTIOND_VALUE" >> {lamp_log}']},
             "value": {"type": "file", "path": lamp}},
            {"kind": "org.test.bell", "type": "button", "displayName": "Bell", "actionHint": "Ring",
             "intent": {"type": "exec", "argv": ["/bin/sh", "-c", f"echo ring >> {bell_log}"]}},
        ],
        "assignments": {"action": {"hold": "org.test.timer", "doublePress": "org.test.bell"}},
    }
    return config, lamp_log, bell_log


def count_lines(path):
    if not os.path.exists(path):
        return 0
    with open(path) as f:
        return len(f.read().splitlines())


class Actiond:
    def __init__(self, bin_dir, workdir, config):
        self.bin_dir = bin_dir
        self.workdir = workdir
        self.socket = config["socket"]["path"]
        os.makedirs(config["controlsDirectory"], exist_ok=True)
        self.config_path = os.path.join(workdir, "actiond.json")
        with open(self.config_path, "w") as f:
            json.dump(config, f)
        self.process = None

    def start(self):
        self.process = Process("actiond", [os.path.join(self.bin_dir, "actiond"), "--config", self.config_path,
                                           "--log-level", "debug"], self.workdir).start()
        wait_for("actiond's socket", lambda: self.try_request({"request": "ping"}) is not None)
        return self

    def try_request(self, request):
        try:
            return self.request(request)
        except OSError:
            return None

    def request(self, request):
        """One request on a fresh connection; returns the reply or error object."""
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
            s.settimeout(DEADLINE)
            s.connect(self.socket)
            f = s.makefile("rwb")
            json.loads(f.readline())  # hello
            request = dict(request, id=1)
            f.write((json.dumps(request) + "\n").encode())
            f.flush()
            while True:
                line = f.readline()
                if not line:
                    raise OSError("actiond closed the connection")
                m = json.loads(line)
                if m.get("type") in ("reply", "error") and m.get("id") == 1:
                    return m

    def kill(self, sig=signal.SIGKILL):
        self.process.kill(sig)


class Bridge:
    def __init__(self, bin_dir, workdir, name, args):
        self.argv = [os.path.join(bin_dir, "actiond-mqtt"), "--log-level", "debug"] + args
        self.workdir = workdir
        self.name = name
        self.process = Process(name, self.argv, workdir)

    def start(self):
        self.process.start()
        return self

    def kill(self, sig=signal.SIGKILL):
        self.process.kill(sig)


class Subscriber:
    """A Home Assistant stand-in: records every message (topic, payload, retain) with its time."""

    def __init__(self, port, topics=("homeassistant/#", "actiond/#"), client_id="test-ha", tls=None, auth=None):
        self.messages = []
        self.lock = threading.Lock()
        self.connected = threading.Event()
        self.client = mqtt.Client(client_id=client_id, protocol=mqtt.MQTTv311, clean_session=True)
        self.client.on_connect = lambda c, u, f, rc: ([c.subscribe(t, qos=1) for t in topics], self.connected.set())
        self.client.on_message = self._message
        if tls:
            self.client.tls_set(ca_certs=tls["ca"], certfile=tls.get("cert"), keyfile=tls.get("key"))
        if auth:
            self.client.username_pw_set(*auth)
        self.client.connect("127.0.0.1", port, keepalive=30)
        self.client.loop_start()
        wait_for("the subscriber to connect", self.connected.is_set)

    def _message(self, client, userdata, m):
        with self.lock:
            self.messages.append((m.topic, m.payload.decode("utf-8", "replace"), bool(m.retain), time.monotonic()))

    def all(self, topic=None):
        with self.lock:
            return [m for m in self.messages if topic is None or m[0] == topic]

    def last(self, topic):
        got = self.all(topic)
        return got[-1][1] if got else None

    def mark(self):
        with self.lock:
            return len(self.messages)

    def since(self, mark, topic=None):
        with self.lock:
            return [m for m in self.messages[mark:] if topic is None or m[0] == topic]

    def wait_payload(self, topic, payload, since=0, timeout=DEADLINE):
        return wait_for(f"{payload!r} on {topic}",
                        lambda: any(m[1] == payload for m in self.since(since, topic)), timeout)

    def publish(self, topic, payload, qos=1, retain=False):
        info = self.client.publish(topic, payload, qos=qos, retain=retain)
        info.wait_for_publish()

    def stop(self):
        self.client.loop_stop()
        self.client.disconnect()


def make_pki(workdir):
    """A CA, a server certificate for 127.0.0.1 and a client certificate, made with openssl."""
    def run(*argv):
        subprocess.run(argv, check=True, cwd=workdir, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    ec = ["-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes"]
    run("openssl", "req", "-x509", *ec, "-keyout", "ca.key", "-out", "ca.pem", "-days", "2", "-subj", "/CN=actiond test CA")
    with open(os.path.join(workdir, "san.ext"), "w") as f:
        f.write("subjectAltName=IP:127.0.0.1\n")
    for name, ext in (("server", ["-extfile", "san.ext"]), ("client", [])):
        run("openssl", "req", *ec, "-keyout", f"{name}.key", "-out", f"{name}.csr", "-subj", f"/CN={name}")
        run("openssl", "x509", "-req", "-in", f"{name}.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
            "-out", f"{name}.pem", "-days", "2", *ext)
    return {k: os.path.join(workdir, v) for k, v in
            (("ca", "ca.pem"), ("server_cert", "server.pem"), ("server_key", "server.key"),
             ("cert", "client.pem"), ("key", "client.key"))}
